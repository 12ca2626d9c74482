// native_handle(): the CUstream, CUdeviceptr and CUcontext behind dotcompute's objects, as the
// driver double handed them to the plugin (cuBLAS/cuFFT would be given exactly these).
#include <cstdint>
#include <cstring>

#include "plugin_fixture.hpp"

namespace dctest {
namespace {

using NativeHandleTest = CudaPlugin;

TEST_F(NativeHandleTest, TheTableHasTheEntry) { ASSERT_TRUE(DC_BACKEND_HAS(&b, native_handle)); }

TEST_F(NativeHandleTest, StreamsBuffersAndContextsAreTheDriversObjects) {
  dc_stream s1 = nullptr, s2 = nullptr;
  ASSERT_EQ(b.stream_create(0, &s1), DC_OK) << error();
  ASSERT_EQ(b.stream_create(0, &s2), DC_OK) << error();
  uint64_t q1 = 0, q2 = 0;
  ASSERT_EQ(b.native_handle(DC_NATIVE_STREAM, reinterpret_cast<uintptr_t>(s1), &q1), DC_OK) << error();
  ASSERT_EQ(b.native_handle(DC_NATIVE_STREAM, reinterpret_cast<uintptr_t>(s2), &q2), DC_OK) << error();
  EXPECT_NE(q1, q2);
  // the double knows its own streams: the handles are the CUstreams it created
  EXPECT_NE(dbl.stream_id(reinterpret_cast<void*>(q1)), dbl.stream_id(reinterpret_cast<void*>(q2)));

  dc_devptr p = 0;
  ASSERT_EQ(b.mem_alloc(0, 256, &p), DC_OK) << error();
  uint64_t mem = 0;
  ASSERT_EQ(b.native_handle(DC_NATIVE_BUFFER, p, &mem), DC_OK) << error();
  EXPECT_EQ(mem, p);  // a dc_devptr is the CUdeviceptr

  uint64_t ctx = 0;
  ASSERT_EQ(b.native_handle(DC_NATIVE_CONTEXT, 0, &ctx), DC_OK) << error();
  EXPECT_NE(ctx, 0u);

  EXPECT_EQ(b.mem_free(0, p), DC_OK);
  EXPECT_EQ(b.stream_destroy(s1), DC_OK);
  EXPECT_EQ(b.stream_destroy(s2), DC_OK);
}

TEST_F(NativeHandleTest, BadArgumentsAreRefused) {
  uint64_t out = 0;
  EXPECT_EQ(b.native_handle(DC_NATIVE_STREAM, 0, &out), DC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(b.native_handle(DC_NATIVE_BUFFER, 0, &out), DC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(b.native_handle(DC_NATIVE_CONTEXT, 4096, &out), DC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(b.native_handle(42, 1, &out), DC_ERROR_UNSUPPORTED);
  EXPECT_NE(std::strstr(b.last_error(), "kind 42"), nullptr) << b.last_error();
  EXPECT_EQ(b.native_handle(DC_NATIVE_CONTEXT, 0, nullptr), DC_ERROR_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace dctest

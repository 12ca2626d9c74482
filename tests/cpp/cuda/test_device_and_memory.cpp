#include <cstring>
#include <vector>

#include "plugin_fixture.hpp"

namespace dctest {
namespace {

using DeviceTest = CudaPlugin;
using MemoryTest = CudaPlugin;

TEST_F(DeviceTest, MapsDriverAttributesToDeviceInfo) {
  int32_t count = 0;
  ASSERT_EQ(b.device_count(&count), DC_OK);
  EXPECT_EQ(count, 1);
  dc_device_info info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(b.device_info(0, &info), DC_OK) << error();
  EXPECT_STREQ(info.name, "dotcompute driver double 0 (sm_90)");
  EXPECT_STREQ(info.vendor, "NVIDIA");
  EXPECT_STREQ(info.arch, "sm_90");
  EXPECT_STREQ(info.type, "gpu");
  EXPECT_EQ(info.global_memory_bytes, 80ull << 30);
  EXPECT_EQ(info.local_memory_bytes, 48u * 1024);
  EXPECT_EQ(info.compute_units, 132u);
  EXPECT_EQ(info.max_work_group_size, 1024u);
  EXPECT_EQ(info.max_work_item_sizes[2], 64u);
  EXPECT_EQ(info.simd_width, 32u);
  EXPECT_TRUE(info.features & DC_FEATURE_FP64);
  EXPECT_TRUE(info.features & DC_FEATURE_FP16);
  EXPECT_TRUE(info.features & DC_FEATURE_COOPERATIVE_LAUNCH);
  EXPECT_TRUE(info.features & DC_FEATURE_MANAGED_MEMORY);
  EXPECT_FALSE(info.features & DC_FEATURE_UNIFIED_MEMORY);  // device pointers are not host pointers
  const std::string json = info.extra_json;
  EXPECT_NE(json.find("\"compute_capability\": [9, 0]"), std::string::npos) << json;
  EXPECT_NE(json.find("\"multiprocessors\": 132"), std::string::npos) << json;
  EXPECT_NE(json.find("\"max_shared_memory_per_block_optin\": 232448"), std::string::npos) << json;
  EXPECT_NE(json.find("\"unified_addressing\": true"), std::string::npos) << json;
  EXPECT_NE(json.find("\"peer_access\": [true]"), std::string::npos) << json;
  EXPECT_NE(json.find("\"driver_version\": 12090"), std::string::npos) << json;
}

TEST_F(DeviceTest, PeerAccessMatrixCoversEveryDevice) {
  dbl.set_device_count(3);
  restart();
  int32_t count = 0;
  ASSERT_EQ(b.device_count(&count), DC_OK);
  ASSERT_EQ(count, 3);
  const char* expected[3] = {"[true, true, false]", "[true, true, false]", "[false, false, true]"};
  for (int d = 0; d < 3; ++d) {
    dc_device_info info{};
    info.struct_size = sizeof info;
    ASSERT_EQ(b.device_info(d, &info), DC_OK);
    EXPECT_NE(std::string(info.extra_json).find(std::string("\"peer_access\": ") + expected[d]), std::string::npos)
        << "device " << d << ": " << info.extra_json;
  }
}

TEST_F(DeviceTest, RetainsOnePrimaryContextPerDeviceAndReleasesThem) {
  dbl.set_device_count(2);
  restart();
  EXPECT_EQ(dbl.retained_contexts(), 2);
  b.shutdown();
  EXPECT_EQ(dbl.retained_contexts(), 0);
}

TEST_F(DeviceTest, RejectsUnknownDeviceIndex) {
  dc_device_info info{};
  info.struct_size = sizeof info;
  EXPECT_EQ(b.device_info(1, &info), DC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(error().find("no CUDA device 1"), std::string::npos) << error();
  dc_devptr p = 0;
  EXPECT_EQ(b.mem_alloc(-1, 16, &p), DC_ERROR_INVALID_ARGUMENT);
}

TEST_F(MemoryTest, AllocCopySetAndFreeRoundTrip) {
  dc_stream s = nullptr;
  ASSERT_EQ(b.stream_create(0, &s), DC_OK);
  dc_devptr p = 0;
  ASSERT_EQ(b.mem_alloc(0, 64, &p), DC_OK) << error();
  uint64_t live_bytes = 0;
  EXPECT_EQ(dbl.live_allocations(&live_bytes), 1);
  EXPECT_EQ(live_bytes, 64u);

  std::vector<uint8_t> src(16);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i + 1);
  ASSERT_EQ(b.memset_d8(s, p, 0, 0xAB, 64), DC_OK) << error();
  ASSERT_EQ(b.memcpy_h2d(s, p, 8, src.data(), src.size()), DC_OK) << error();
  dc_devptr q = 0;
  ASSERT_EQ(b.mem_alloc(0, 32, &q), DC_OK);
  ASSERT_EQ(b.memcpy_d2d(s, q, 0, p, 4, 32), DC_OK) << error();
  std::vector<uint8_t> out(32);
  ASSERT_EQ(b.memcpy_d2h(s, out.data(), q, 0, 32), DC_OK) << error();
  ASSERT_EQ(b.stream_synchronize(s), DC_OK);
  for (size_t i = 0; i < 32; ++i) {
    // q[i] = p[4 + i]: 4 bytes of the memset, the 16 copied bytes, then memset again.
    const size_t at = 4 + i;
    const uint8_t want = (at >= 8 && at < 24) ? static_cast<uint8_t>(at - 8 + 1) : 0xAB;
    EXPECT_EQ(out[i], want) << "byte " << i;
  }
  ASSERT_EQ(b.mem_free(0, p), DC_OK);
  ASSERT_EQ(b.mem_free(0, q), DC_OK);
  EXPECT_EQ(dbl.live_allocations(nullptr), 0);
  ASSERT_EQ(b.stream_destroy(s), DC_OK);
}

TEST_F(MemoryTest, OffsetsAreAppliedToTheDevicePointer) {
  dc_devptr p = 0;
  ASSERT_EQ(b.mem_alloc(0, 16, &p), DC_OK);
  const uint8_t byte = 7;
  // Inside: the last byte. Outside: one past it, which the driver rejects.
  EXPECT_EQ(b.memcpy_h2d(nullptr, p, 15, &byte, 1), DC_OK) << error();
  EXPECT_EQ(b.memcpy_h2d(nullptr, p, 16, &byte, 1), DC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(error().find("cuMemcpyHtoDAsync failed: CUDA_ERROR_INVALID_VALUE"), std::string::npos) << error();
  EXPECT_EQ(b.mem_free(0, p), DC_OK);
}

TEST_F(MemoryTest, ZeroByteAllocationIsAValidHandle) {
  dc_devptr p = 0;
  ASSERT_EQ(b.mem_alloc(0, 0, &p), DC_OK) << error();
  EXPECT_NE(p, 0u);
  EXPECT_EQ(b.mem_free(0, p), DC_OK);
}

TEST_F(MemoryTest, DriverOutOfMemoryBecomesOutOfMemoryStatus) {
  dbl.fail_next("cuMemAlloc", CUDA_ERROR_OUT_OF_MEMORY);
  dc_devptr p = 0;
  EXPECT_EQ(b.mem_alloc(0, 1 << 20, &p), DC_ERROR_OUT_OF_MEMORY);
  EXPECT_NE(error().find("out of memory allocating 1048576 bytes"), std::string::npos) << error();
  EXPECT_NE(error().find("cuda:0"), std::string::npos) << error();
  // The failure was transient: the retry the core's pool makes after trimming succeeds.
  ASSERT_EQ(b.mem_alloc(0, 1 << 20, &p), DC_OK) << error();
  EXPECT_EQ(b.mem_free(0, p), DC_OK);
}

TEST_F(MemoryTest, RequestBeyondDeviceMemoryIsOutOfMemory) {
  dc_devptr p = 0;
  EXPECT_EQ(b.mem_alloc(0, (80ull << 30) + 1, &p), DC_ERROR_OUT_OF_MEMORY);
}

TEST_F(MemoryTest, FreeingAnUnknownPointerIsAnArgumentError) {
  EXPECT_EQ(b.mem_free(0, 0x1234), DC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(error().find("cuMemFree failed: CUDA_ERROR_INVALID_VALUE"), std::string::npos) << error();
}

TEST_F(MemoryTest, OtherDriverErrorsAreInternal) {
  dbl.fail_next("cuMemAlloc", CUDA_ERROR_UNKNOWN);
  dc_devptr p = 0;
  EXPECT_EQ(b.mem_alloc(0, 8, &p), DC_ERROR_INTERNAL);
  EXPECT_NE(error().find("CUresult 999"), std::string::npos) << error();
}

}  // namespace
}  // namespace dctest

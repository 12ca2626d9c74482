// Accelerator::native_handle over a plugin without the entry (the fake plugin's table has it NULL,
// as an older plugin's table ends before it): a clear error ("not supported by this backend"), never
// a call through a missing slot.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>

#include "test_helpers.hpp"

using namespace dotcompute;

// The entry is appended after the optional entries that came before it (backend_abi.h's rule).
static_assert(offsetof(dc_backend, native_handle) > offsetof(dc_backend, set_cache_dir),
              "native_handle must stay appended at the end of dc_backend");

TEST(NativeHandle, APluginWithoutTheEntryIsUnsupported) {
  auto rt = dctest::fake_runtime();
  auto acc = rt->accelerator("fake:0");
  ASSERT_FALSE(DC_BACKEND_HAS(acc->api(), native_handle));
  auto b = acc->allocate({4}, DType::Float32);
  for (uint32_t kind : {DC_NATIVE_STREAM, DC_NATIVE_BUFFER, DC_NATIVE_CONTEXT}) {
    try {
      acc->native_handle(kind, kind == DC_NATIVE_BUFFER ? b->device_ptr() : 0);
      FAIL() << "kind " << kind << " gave a handle";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("not supported"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("native_handle"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("fake:0"), std::string::npos) << e.what();
    }
  }
}

TEST(NativeHandle, AShortTableDoesNotHaveTheEntry) {
  // A table whose struct_size ends before the entry has no entry, whatever the bytes beyond say.
  dc_backend table{};
  table.native_handle = [](uint32_t, uint64_t, uint64_t*) { return DC_OK; };
  table.struct_size = static_cast<uint32_t>(offsetof(dc_backend, native_handle));
  EXPECT_FALSE(DC_BACKEND_HAS(&table, native_handle));
  table.struct_size = static_cast<uint32_t>(sizeof(dc_backend));
  EXPECT_TRUE(DC_BACKEND_HAS(&table, native_handle));
}

// Devices and their capabilities, as the core reads them through the ABI.
#include <cstddef>
#include <cstring>
#include <string>

#include "test_support.h"

namespace dctest {
namespace {

dc_device_info info_of(int32_t device) {
  dc_device_info info{};
  info.struct_size = sizeof(info);
  dc_status st = plugin()->device_info(device, &info);
  EXPECT_EQ(st, DC_OK) << describe(st);
  return info;
}

bool has_feature(const dc_device_info& info, uint64_t bit) { return (info.features & bit) != 0; }

TEST(OpenCLCapabilities, TableDescribesTheOpenCLBackend) {
  const dc_backend* b = plugin();
  EXPECT_STREQ(b->name, "opencl");
  EXPECT_EQ(b->abi_version, DC_BACKEND_ABI_VERSION);
  EXPECT_EQ(b->struct_size, sizeof(dc_backend));
  EXPECT_NE(b->launch, nullptr);
}

TEST(OpenCLCapabilities, EveryDeviceReportsItsLimits) {
  int32_t count = 0;
  DC_ASSERT_OK(plugin()->device_count(&count));
  ASSERT_GE(count, 1);
  for (int32_t d = 0; d < count; ++d) {
    dc_device_info info = info_of(d);
    SCOPED_TRACE(info.name);
    EXPECT_GT(std::strlen(info.name), 0u);
    EXPECT_GT(std::strlen(info.vendor), 0u);
    EXPECT_NE(std::string(info.arch).find(info.name), std::string::npos) << info.arch;
    EXPECT_TRUE(std::string(info.type) == "cpu" || std::string(info.type) == "gpu" ||
                std::string(info.type) == "accelerator");
    EXPECT_GE(info.compute_units, 1u);
    EXPECT_GT(info.global_memory_bytes, 0u);
    EXPECT_GT(info.local_memory_bytes, 0u);
    EXPECT_GE(info.max_work_group_size, 1u);
    EXPECT_GE(info.max_work_item_sizes[0], 1u);
    EXPECT_GE(info.simd_width, 1u);
    EXPECT_LE(info.simd_width, info.max_work_group_size);
    EXPECT_FALSE(has_feature(info, DC_FEATURE_UNIFIED_MEMORY));
  }
}

TEST(OpenCLCapabilities, ExtraJsonCarriesEveryCapability) {
  dc_device_info info = info_of(0);
  std::string json = info.extra_json;
  ASSERT_EQ(json.front(), '{');
  ASSERT_EQ(json.back(), '}');
  for (const char* key : {"platform", "name", "vendor", "version", "driver_version", "opencl_c_version",
                          "compute_units", "global_memory_bytes", "local_memory_bytes", "max_work_group_size",
                          "preferred_work_group_multiple", "fp64", "fp16", "int64_atomics"}) {
    EXPECT_NE(json.find("\"" + std::string(key) + "\": "), std::string::npos) << key << " missing from " << json;
  }
  // The feature bits and the JSON say the same thing.
  auto flag = [&](const char* key) { return json.find("\"" + std::string(key) + "\": true") != std::string::npos; };
  EXPECT_EQ(flag("fp64"), has_feature(info, DC_FEATURE_FP64));
  EXPECT_EQ(flag("fp16"), has_feature(info, DC_FEATURE_FP16));
  EXPECT_EQ(flag("int64_atomics"), has_feature(info, DC_FEATURE_INT64_ATOMICS));
  EXPECT_NE(json.find("\"preferred_work_group_multiple\": " + std::to_string(info.simd_width)), std::string::npos);
  EXPECT_NE(json.find("\"compute_units\": " + std::to_string(info.compute_units)), std::string::npos);
}

TEST(OpenCLCapabilities, ExtensionsDecideTheFeatureBits) {
  dc_device_info info = info_of(0);
  std::string json = info.extra_json;
  if (json.find("\"extensions\": ") == std::string::npos) GTEST_SKIP() << "extension list too long for extra_json";
  EXPECT_EQ(json.find(" cl_khr_int64_base_atomics") != std::string::npos ||
                json.find("\"cl_khr_int64_base_atomics") != std::string::npos,
            has_feature(info, DC_FEATURE_INT64_ATOMICS));
}

TEST(OpenCLCapabilities, ArchAndCompilerIdentityNameTheDriver) {
  dc_device_info info = info_of(0);
  std::string json = info.extra_json;
  char id[512];
  DC_ASSERT_OK(plugin()->compiler_identity(0, id, sizeof(id)));
  EXPECT_NE(std::string(id).find("OpenCL"), std::string::npos) << id;
  // The driver version is cache-key material in both.
  size_t at = json.find("\"driver_version\": \"");
  ASSERT_NE(at, std::string::npos);
  at += std::strlen("\"driver_version\": \"");
  std::string driver = json.substr(at, json.find('"', at) - at);
  ASSERT_FALSE(driver.empty());
  EXPECT_NE(std::string(info.arch).find(driver), std::string::npos) << info.arch;
  EXPECT_NE(std::string(id).find(driver), std::string::npos) << id;
}

TEST(OpenCLCapabilities, CompilerIdentityRefusesToBeCut) {
  char tiny[4];
  EXPECT_EQ(plugin()->compiler_identity(0, tiny, sizeof(tiny)), DC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(plugin()->last_error()).find("needed"), std::string::npos);
}

TEST(OpenCLCapabilities, AnOlderCoreGetsOnlyTheFieldsItKnows) {
  // A core built before extra_json existed passes a shorter struct.
  struct Padded {
    dc_device_info info;
    char guard[8];
  } p;
  std::memset(&p, 0x5a, sizeof(p));
  p.info.struct_size = offsetof(dc_device_info, extra_json);
  DC_ASSERT_OK(plugin()->device_info(0, &p.info));
  EXPECT_EQ(p.info.struct_size, offsetof(dc_device_info, extra_json));
  EXPECT_GT(std::strlen(p.info.name), 0u);
  EXPECT_EQ(static_cast<unsigned char>(p.info.extra_json[0]), 0x5a);
  EXPECT_EQ(static_cast<unsigned char>(p.guard[0]), 0x5a);
}

TEST(OpenCLCapabilities, BadDeviceIndexIsAnError) {
  dc_device_info info{};
  info.struct_size = sizeof(info);
  EXPECT_EQ(plugin()->device_info(99, &info), DC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(plugin()->last_error()).find("99"), std::string::npos);
  dc_devptr p = 0;
  EXPECT_EQ(plugin()->mem_alloc(-1, 16, &p), DC_ERROR_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace dctest

// The struct_size rule of backend_abi.h, checked the same way for every plugin: an older caller
// struct (only the fields every core has had), a newer one (bytes the plugin does not know),
// and one too small to be valid.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <functional>

#include "dotcompute/backend_abi.h"

namespace abitest {

inline void check_device_info_rule(const dc_backend& api, int32_t device) {
  struct Newer {
    dc_device_info info;
    unsigned char future[64];  // fields a later header appends
  };
  // newer caller: the plugin writes its own sizeof and leaves the rest alone
  Newer newer;
  std::memset(&newer, 0x5a, sizeof newer);
  newer.info.struct_size = sizeof newer;
  ASSERT_EQ(api.device_info(device, &newer.info), DC_OK) << api.last_error();
  EXPECT_EQ(newer.info.struct_size, sizeof(dc_device_info));
  EXPECT_GT(std::strlen(newer.info.name), 0u);
  for (unsigned char c : newer.future) ASSERT_EQ(c, 0x5a) << "wrote past its own struct";

  // older caller: exactly DC_DEVICE_INFO_MIN_SIZE bytes, nothing written beyond
  Newer older;
  std::memset(&older, 0x5a, sizeof older);
  older.info.struct_size = DC_DEVICE_INFO_MIN_SIZE;
  ASSERT_EQ(api.device_info(device, &older.info), DC_OK) << api.last_error();
  EXPECT_EQ(older.info.struct_size, DC_DEVICE_INFO_MIN_SIZE);
  EXPECT_STREQ(older.info.name, newer.info.name);
  EXPECT_EQ(older.info.global_memory_bytes, newer.info.global_memory_bytes);
  EXPECT_EQ(older.info.features, newer.info.features);
  const auto* raw = reinterpret_cast<const unsigned char*>(&older);
  for (size_t i = DC_DEVICE_INFO_MIN_SIZE; i < sizeof older; ++i) ASSERT_EQ(raw[i], 0x5a) << "byte " << i;

  // too small: refused, nothing written
  for (uint32_t size : {0u, 4u, DC_DEVICE_INFO_MIN_SIZE - 1}) {
    Newer tiny;
    std::memset(&tiny, 0x5a, sizeof tiny);
    tiny.info.struct_size = size;
    EXPECT_EQ(api.device_info(device, &tiny.info), DC_ERROR_INVALID_ARGUMENT) << "struct_size " << size;
    const auto* t = reinterpret_cast<const unsigned char*>(&tiny);
    for (size_t i = sizeof(uint32_t); i < sizeof tiny; ++i) ASSERT_EQ(t[i], 0x5a) << "byte " << i;
  }
}

// `launch(config)` launches a kernel whose result the caller checks with `verify()`.
inline void check_launch_config_rule(const dc_launch_config& base,
                                     const std::function<dc_status(const dc_launch_config*)>& launch,
                                     const std::function<void()>& verify) {
  struct Newer {
    dc_launch_config cfg;
    unsigned char future[32];
  };
  Newer newer;
  std::memset(&newer, 0, sizeof newer);
  newer.cfg = base;
  newer.cfg.struct_size = sizeof newer;
  std::memset(newer.future, 0x7f, sizeof newer.future);  // unknown to the plugin: ignored
  ASSERT_EQ(launch(&newer.cfg), DC_OK) << "newer caller struct";
  verify();

  Newer older;
  std::memset(&older, 0x7f, sizeof older);  // garbage where an older caller has no fields
  std::memcpy(&older.cfg, &base, DC_LAUNCH_CONFIG_MIN_SIZE);
  older.cfg.struct_size = DC_LAUNCH_CONFIG_MIN_SIZE;
  ASSERT_EQ(launch(&older.cfg), DC_OK) << "older caller struct (flags absent, read as 0)";
  verify();

  dc_launch_config tiny = base;
  tiny.struct_size = DC_LAUNCH_CONFIG_MIN_SIZE - 1;
  EXPECT_EQ(launch(&tiny), DC_ERROR_INVALID_ARGUMENT);
  tiny.struct_size = 0;
  EXPECT_EQ(launch(&tiny), DC_ERROR_INVALID_ARGUMENT);
}

}  // namespace abitest

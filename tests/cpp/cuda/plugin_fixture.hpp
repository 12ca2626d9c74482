// Loads the CUDA plugin and the driver double once per process and gives each
// test an initialized backend (pointed at the double) plus the double's controls.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "cuda_double.h"
#include "cuda_ext.h"
#include "driver_api.h"
#include "dotcompute/backend_abi.h"

namespace dctest {

struct DoubleControls {
  decltype(&double_reset) reset;
  decltype(&double_set_device_count) set_device_count;
  decltype(&double_set_driver_version) set_driver_version;
  decltype(&double_fail_next) fail_next;
  decltype(&double_set_param_sizes) set_param_sizes;
  decltype(&double_set_occupancy_block) set_occupancy_block;
  decltype(&double_launch_log) launch_log;
  decltype(&double_op_log) op_log;
  decltype(&double_live_allocations) live_allocations;
  decltype(&double_last_image_kind) last_image_kind;
  decltype(&double_retained_contexts) retained_contexts;
  decltype(&double_stream_id) stream_id;
};

// The plugin's table (the library stays loaded for the whole process).
const dc_backend& backend();
DoubleControls& controls();
// The plugin's CUDA extension table (cuda_ext.h).
const dc_cuda_ext& extension();
// The NVRTC library the compile tests use, or "" when none is installed.
std::string nvrtc_path();

class CudaPlugin : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  // Re-initializes the backend, e.g. after changing the double's configuration.
  void restart();
  const dc_backend& b = backend();
  DoubleControls& dbl = controls();
  std::string error() const { return b.last_error(); }
};

// A PTX image the double accepts, defining `entry` (for launch tests that need no NVRTC).
std::string fake_ptx(const std::string& entry);

}  // namespace dctest

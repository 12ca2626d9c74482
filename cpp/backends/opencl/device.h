// One OpenCL device as the plugin sees it: its identity, its capabilities and
// the context every object of that device lives in.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cl_handles.h"
#include "dotcompute/backend_abi.h"

namespace dcl {

struct Device {
  cl_platform_id platform = nullptr;
  cl_device_id id = nullptr;
  Context context;

  std::string platform_name;
  std::string platform_vendor;
  std::string platform_version;
  std::string name;
  std::string vendor;
  std::string version;         // "OpenCL 3.0 PoCL ..."
  std::string driver_version;  // "3.1+debian"
  std::string opencl_c_version;
  std::string extensions;
  cl_device_type type = 0;

  uint32_t compute_units = 0;
  uint32_t max_work_group_size = 0;
  uint32_t max_work_item_sizes[3] = {1, 1, 1};
  uint32_t preferred_work_group_multiple = 1;
  uint32_t clock_mhz = 0;
  uint64_t global_memory = 0;
  uint64_t local_memory = 0;
  uint64_t max_alloc = 0;
  uint32_t base_addr_align_bytes = 0;  // CL_DEVICE_MEM_BASE_ADDR_ALIGN / 8: sub-buffer origins' multiple
  bool fp64 = false;
  bool fp16 = false;
  bool int64_atomics = false;
  // PoCL with work-group specialization on (the user set POCL_WORK_GROUP_SPECIALIZATION to other than
  // 0; discover_devices turns it off otherwise) builds a work-group function, with its machine code,
  // for each local size a kernel is launched with (0.1-0.4 s each here): automatic local sizes are
  // then powers of two (work_size.h), so a kernel gets a handful of builds rather than one per size.
  bool builds_per_local_size = false;

  // Everything that changes the code the driver generates (kernel-cache key).
  std::string arch() const;
  std::string compiler_identity() const;
  void fill_info(dc_device_info* info) const;
  std::string capabilities_json() const;
};

// Enumerates every usable device of every platform, each with its own context.
// Returns DC_OK, or DC_ERROR_UNAVAILABLE with last_error() saying why.
dc_status discover_devices(std::vector<std::unique_ptr<Device>>* out);

}  // namespace dcl

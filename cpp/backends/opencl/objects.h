// The plugin's definitions of the ABI's opaque handle types.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "cl_handles.h"
#include "device.h"

// A stream is an in-order command queue with profiling enabled.
struct dc_stream_s {
  dcl::Device* device = nullptr;
  dcl::Queue queue;
};

// An event holds the marker of its latest record(); none before the first.
struct dc_event_s {
  dcl::Device* device = nullptr;
  std::mutex mutex;
  dcl::Event marker;
};

// A kernel of a loaded module. Setting arguments and enqueueing must happen
// together (cl_kernel argument state is shared), hence the launch mutex.
struct dc_kernel_s {
  dcl::Device* device = nullptr;
  dcl::Kernel kernel;
  std::string name;
  uint64_t work_group_limit = 1;    // CL_KERNEL_WORK_GROUP_SIZE
  uint64_t preferred_multiple = 1;  // CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE
  uint64_t static_local_bytes = 0;  // CL_KERNEL_LOCAL_MEM_SIZE
  uint32_t num_args = 0;            // CL_KERNEL_NUM_ARGS
  std::mutex launch_mutex;
};

// A built program; it owns the kernels handed out for it (the ABI has no kernel release).
struct dc_module_s {
  dcl::Device* device = nullptr;
  dcl::Program program;
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<dc_kernel_s>> kernels;
};

namespace dcl {

// The device of that index, or an error status (with last_error set).
dc_status get_device(int32_t index, Device** out);

}  // namespace dcl

// Global and local sizes of an NDRange launch. OpenCL 1.2 needs the global
// size to be a whole number of work-groups, so it is rounded up here; the
// kernels themselves skip the extra items (docs/design.md, "Kernel parameter ABI").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "dotcompute/backend_abi.h"

namespace dcl {

struct WorkLimits {
  uint64_t kernel_limit = 1;        // CL_KERNEL_WORK_GROUP_SIZE
  uint64_t preferred_multiple = 1;  // CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE
  uint32_t max_item_sizes[3] = {1, 1, 1};
  // Automatic extents are powers of two: for a driver that builds code per local size (PoCL),
  // a kernel then meets a handful of local sizes over every array size, not one per multiple
  // of the preferred multiple. The extra items (at most as many as the real ones) skip at once.
  bool pow2_groups = false;
};

struct WorkSizes {
  uint32_t dims = 1;
  size_t global[3] = {1, 1, 1};  // rounded up to multiples of local
  size_t local[3] = {1, 1, 1};
  bool empty = false;  // some global extent is 0: nothing to run
};

// Automatic groups stay at or below this many items: large enough to amortise
// per-group costs, small enough for every GPU's limits and for occupancy.
constexpr uint64_t kAutoGroupCap = 256;

// Fills `out`; on an impossible request returns false with `why` naming the sizes and the limit.
bool choose_work_sizes(const dc_launch_config& config, const WorkLimits& limits, WorkSizes* out, std::string* why);

}  // namespace dcl

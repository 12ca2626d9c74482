#include "work_size.h"

#include <algorithm>

namespace dcl {
namespace {

std::string tuple(const uint32_t* v, uint32_t dims) {
  std::string s = "(";
  for (uint32_t d = 0; d < dims; ++d) s += (d ? ", " : "") + std::to_string(v[d]);
  return s + ")";
}

uint64_t round_up(uint64_t value, uint64_t multiple) { return (value + multiple - 1) / multiple * multiple; }

uint64_t floor_pow2(uint64_t v) {
  uint64_t p = 1;
  while (p * 2 <= v) p *= 2;
  return p;
}

uint64_t ceil_pow2(uint64_t v) {
  uint64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

// Dimension 0 gets the largest multiple of the preferred multiple within every
// limit, but no more than the (rounded-up) global extent needs; an extent
// smaller than the multiple is taken whole, so nothing is wasted. What is left
// of the item budget goes to the next dimensions (tall, narrow launches).
void auto_local(const dc_launch_config& config, const WorkLimits& limits, WorkSizes* out) {
  uint64_t cap = std::min<uint64_t>({limits.kernel_limit, limits.max_item_sizes[0], kAutoGroupCap});
  cap = std::max<uint64_t>(cap, 1);
  uint64_t m = std::max<uint64_t>(limits.preferred_multiple, 1);
  uint64_t g0 = std::max<uint64_t>(config.global_size[0], 1);
  uint64_t local0 = 0;
  if (limits.pow2_groups) {
    local0 = std::min(floor_pow2(cap), ceil_pow2(g0));
  } else if (m >= cap) {
    local0 = std::min(cap, g0);
  } else if (g0 < m) {
    local0 = g0;
  } else {
    local0 = std::min(cap / m * m, round_up(g0, m));
  }
  out->local[0] = local0;
  uint64_t budget = std::min<uint64_t>(limits.kernel_limit, kAutoGroupCap) / local0;
  for (uint32_t d = 1; d < config.dims; ++d) {
    uint64_t want = std::min<uint64_t>({std::max<uint64_t>(budget, 1), limits.max_item_sizes[d],
                                        std::max<uint64_t>(config.global_size[d], 1)});
    out->local[d] = floor_pow2(want);
    budget = std::max<uint64_t>(budget / out->local[d], 1);
  }
}

}  // namespace

bool choose_work_sizes(const dc_launch_config& config, const WorkLimits& limits, WorkSizes* out, std::string* why) {
  if (config.dims < 1 || config.dims > 3) {
    *why = "launch dims must be 1, 2 or 3, got " + std::to_string(config.dims);
    return false;
  }
  out->dims = config.dims;
  bool given = false;
  for (uint32_t d = 0; d < config.dims; ++d) {
    if (config.global_size[d] == 0) out->empty = true;
    if (config.local_size[d] != 0) given = true;
  }

  if (given) {
    uint64_t items = 1;
    for (uint32_t d = 0; d < config.dims; ++d) {
      uint32_t l = config.local_size[d];
      if (l == 0) {
        *why = "local size " + tuple(config.local_size, config.dims) + " has a zero extent in dimension " +
               std::to_string(d);
        return false;
      }
      if (l > limits.max_item_sizes[d]) {
        *why = "local size " + tuple(config.local_size, config.dims) + ": extent " + std::to_string(l) +
               " in dimension " + std::to_string(d) + " exceeds the device's maximum of " +
               std::to_string(limits.max_item_sizes[d]) + " (CL_DEVICE_MAX_WORK_ITEM_SIZES)";
        return false;
      }
      items *= l;
      out->local[d] = l;
    }
    if (items > limits.kernel_limit) {
      *why = "local size " + tuple(config.local_size, config.dims) + " has " + std::to_string(items) +
             " work-items per group; this kernel allows at most " + std::to_string(limits.kernel_limit) +
             " on this device (CL_KERNEL_WORK_GROUP_SIZE)";
      return false;
    }
  } else {
    auto_local(config, limits, out);
  }
  for (uint32_t d = 0; d < config.dims; ++d) {
    out->global[d] = round_up(std::max<uint64_t>(config.global_size[d], 1), out->local[d]);
  }
  return true;
}

}  // namespace dcl

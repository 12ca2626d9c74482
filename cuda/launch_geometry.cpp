#include "launch_geometry.hpp"

#include <algorithm>

namespace dotcompute::cuda {

bool pack_params(const dc_kernel_arg* args, uint32_t nargs, const std::vector<size_t>* expected_sizes,
                 const std::string& kernel_name, PackedParams& out, std::string& error) {
  if (nargs && !args) {
    error = "launch of " + kernel_name + ": args is null but nargs is " + std::to_string(nargs);
    return false;
  }
  if (expected_sizes && expected_sizes->size() != nargs) {
    error = "launch of " + kernel_name + ": the kernel takes " + std::to_string(expected_sizes->size()) +
            " parameters but " + std::to_string(nargs) + " arguments were given";
    return false;
  }
  out.pointers.assign(nargs, 0);
  out.slots.assign(nargs, nullptr);
  for (uint32_t i = 0; i < nargs; ++i) {
    const dc_kernel_arg& a = args[i];
    const std::string which = "argument " + std::to_string(i) + " of " + kernel_name;
    size_t size = 0;
    switch (a.kind) {
      case DC_ARG_BUFFER:
        out.pointers[i] = static_cast<CUdeviceptr>(a.value.buffer);
        out.slots[i] = &out.pointers[i];
        size = sizeof(CUdeviceptr);
        break;
      case DC_ARG_BUFFER_REGION:  // a view: CUdeviceptr is an address, so the view starts at it + offset
        if (!a.value.region) {
          error = which + ": a buffer region needs its dc_buffer_region";
          return false;
        }
        out.pointers[i] = static_cast<CUdeviceptr>(a.value.region->buffer + a.value.region->offset);
        out.slots[i] = &out.pointers[i];
        size = sizeof(CUdeviceptr);
        break;
      case DC_ARG_SCALAR:
        if (!a.value.scalar || a.size == 0) {
          error = which + ": a scalar needs a value pointer and a non-zero size";
          return false;
        }
        out.slots[i] = const_cast<void*>(a.value.scalar);
        size = a.size;
        break;
      case DC_ARG_LOCAL:
        error = which + ": CUDA kernels take no __local arguments; use dynamic_shared_bytes";
        return false;
      default:
        error = which + ": unknown argument kind " + std::to_string(a.kind);
        return false;
    }
    if (expected_sizes && (*expected_sizes)[i] != size) {
      error = which + " is " + std::to_string(size) + " bytes but the kernel's parameter " + std::to_string(i) +
              " is " + std::to_string((*expected_sizes)[i]) + " bytes";
      return false;
    }
  }
  return true;
}

void choose_block(uint32_t dims, const uint64_t global[3], int threads, int warp, unsigned block[3]) {
  const uint64_t total = static_cast<uint64_t>(std::max(threads, 1));
  const uint64_t w = static_cast<uint64_t>(std::max(warp, 1));
  block[0] = block[1] = block[2] = 1;
  // x: a whole number of warps, no wider than the (warp-rounded) global size.
  const uint64_t need_x = (global[0] + w - 1) / w * w;
  uint64_t x = std::min(total, need_x);
  if (dims > 1) x = std::min<uint64_t>(x, std::max<uint64_t>(w, 32));
  block[0] = static_cast<unsigned>(std::max<uint64_t>(x, 1));
  uint64_t left = total / block[0];
  if (dims > 1) {
    const uint64_t y = std::max<uint64_t>(1, std::min(left, global[1]));
    block[1] = static_cast<unsigned>(y);
    left /= y;
  }
  if (dims > 2) block[2] = static_cast<unsigned>(std::max<uint64_t>(1, std::min(left, global[2])));
}

bool grid_for(const uint64_t global[3], const unsigned block[3], const int max_grid[3], unsigned grid[3],
              std::string& error) {
  for (int d = 0; d < 3; ++d) {
    const uint64_t g = (global[d] + block[d] - 1) / block[d];
    if (g > static_cast<uint64_t>(max_grid[d])) {
      error = "global size " + std::to_string(global[d]) + " in dimension " + std::to_string(d) + " needs " +
              std::to_string(g) + " blocks of " + std::to_string(block[d]) + " but the device allows at most " +
              std::to_string(max_grid[d]);
      return false;
    }
    grid[d] = static_cast<unsigned>(g);
  }
  return true;
}

}  // namespace dotcompute::cuda

// Pure launch arithmetic: the argument array cuLaunchKernel takes, the block
// shape when the caller leaves it to us, and the grid that covers the global size.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dotcompute/backend_abi.h"
#include "driver_api.h"

namespace dotcompute::cuda {

// cuLaunchKernel's `void** kernelParams`: one pointer per parameter to its value.
// Buffers become CUdeviceptr values owned here; scalars point at the caller's bytes
// (the driver copies them before cuLaunchKernel returns).
struct PackedParams {
  std::vector<CUdeviceptr> pointers;
  std::vector<void*> slots;
};

// Checks every argument (and, when `expected_sizes` is known, its count and each
// size against the kernel's) and packs them. Returns false with `error` set.
bool pack_params(const dc_kernel_arg* args, uint32_t nargs, const std::vector<size_t>* expected_sizes,
                 const std::string& kernel_name, PackedParams& out, std::string& error);

// Shapes `threads` (the occupancy API's suggestion) into a block for `dims`
// dimensions: whole warps along x, never more threads along a dimension than
// the global size needs (rounded up to a warp along x).
void choose_block(uint32_t dims, const uint64_t global[3], int threads, int warp, unsigned block[3]);

// ceil(global / block) per dimension; false with `error` when a dimension
// exceeds the device's grid limit.
bool grid_for(const uint64_t global[3], const unsigned block[3], const int max_grid[3], unsigned grid[3],
              std::string& error);

}  // namespace dotcompute::cuda

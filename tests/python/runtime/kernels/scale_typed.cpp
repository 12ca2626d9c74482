// x[i] *= a, with the kernel-language parameter ABI: x's pointer, x's extent, then a.
#include <stdint.h>

#include "dotcompute/cpu_kernel_abi.h"

extern "C" void scale_typed(const dc_cpu_launch* launch, uint64_t group_begin, uint64_t group_end, void*) {
  float* x = *(float* const*)launch->args[0];
  const int64_t n = *(const int64_t*)launch->args[1];
  const float a = *(const float*)launch->args[2];
  const uint64_t local = launch->local_size[0];
  for (uint64_t g = group_begin; g < group_end; ++g)
    for (uint64_t i = g * local; i < (g + 1) * local && (int64_t)i < n && i < launch->global_size[0]; ++i)
      x[i] *= a;
}

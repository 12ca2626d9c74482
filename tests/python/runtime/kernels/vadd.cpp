// out[i] = a[i] * s + b[i], by hand against the CPU kernel ABI.
#include <stdint.h>

#include "dotcompute/cpu_kernel_abi.h"

extern "C" void vadd_scaled(const dc_cpu_launch* launch, uint64_t group_begin, uint64_t group_end, void*) {
  const float* a = *(const float* const*)launch->args[0];
  const float* b = *(const float* const*)launch->args[1];
  float* out = *(float* const*)launch->args[2];
  const double s = *(const double*)launch->args[3];
  const uint64_t n = launch->global_size[0];
  const uint64_t local = launch->local_size[0];
  for (uint64_t g = group_begin; g < group_end; ++g) {
    const uint64_t begin = g * local;
    const uint64_t end = begin + local < n ? begin + local : n;
    for (uint64_t i = begin; i < end; ++i) out[i] = (float)(a[i] * s) + b[i];
  }
}

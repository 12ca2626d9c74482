// Writes back every scalar argument, so a test can see how each was passed.
#include <stdint.h>
#include <string.h>

#include "dotcompute/cpu_kernel_abi.h"

extern "C" void echo_scalars(const dc_cpu_launch* launch, uint64_t group_begin, uint64_t, void*) {
  if (group_begin != 0) return;
  int64_t* i64 = *(int64_t* const*)launch->args[0];
  double* f64 = *(double* const*)launch->args[1];
  i64[0] = *(const int64_t*)launch->args[2];          // Python int -> int64
  f64[0] = *(const double*)launch->args[3];           // Python float -> float64
  i64[1] = *(const bool*)launch->args[4] ? 1 : 0;     // Python bool -> bool
  f64[1] = *(const float*)launch->args[5];            // np.float32 -> float
  i64[2] = *(const int32_t*)launch->args[6];          // np.int32 -> int32
  i64[3] = (int64_t)*(const uint8_t*)launch->args[7];  // np.uint8 -> uint8
  i64[4] = (int64_t)launch->nargs;
}

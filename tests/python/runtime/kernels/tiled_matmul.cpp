// C[M,N] = A[M,K] @ B[K,N] with TILE x TILE work-groups and work-group memory,
// written the way the CPU ABI runs groups: the code between two barriers is a
// loop over the group's items (loop fission), values living across a barrier
// are per-item arrays. Dimension 0 is the column, dimension 1 the row.
#include <stdint.h>

#include "dotcompute/cpu_kernel_abi.h"

#define TILE 8

extern "C" void tiled_matmul(const dc_cpu_launch* launch, uint64_t group_begin, uint64_t group_end, void*) {
  const float* A = *(const float* const*)launch->args[0];
  const float* B = *(const float* const*)launch->args[1];
  float* C = *(float* const*)launch->args[2];
  const int64_t M = *(const int64_t*)launch->args[3];
  const int64_t N = *(const int64_t*)launch->args[4];
  const int64_t K = *(const int64_t*)launch->args[5];
  if (launch->local_size[0] != TILE || launch->local_size[1] != TILE) return;  // the test launches 8x8 groups

  float a_tile[TILE][TILE];  // work-group ("shared") memory
  float b_tile[TILE][TILE];
  float acc[TILE][TILE];     // per-item values that live across barriers
  for (uint64_t g = group_begin; g < group_end; ++g) {
    const int64_t gx = (int64_t)(g % launch->num_groups[0]);
    const int64_t gy = (int64_t)(g / launch->num_groups[0]);
    for (int ly = 0; ly < TILE; ++ly)
      for (int lx = 0; lx < TILE; ++lx) acc[ly][lx] = 0.0f;
    for (int64_t t = 0; t < K; t += TILE) {
      for (int ly = 0; ly < TILE; ++ly)
        for (int lx = 0; lx < TILE; ++lx) {
          const int64_t row = gy * TILE + ly, col = gx * TILE + lx;
          a_tile[ly][lx] = (row < M && t + lx < K) ? A[row * K + t + lx] : 0.0f;
          b_tile[ly][lx] = (t + ly < K && col < N) ? B[(t + ly) * N + col] : 0.0f;
        }
      // barrier()
      for (int ly = 0; ly < TILE; ++ly)
        for (int lx = 0; lx < TILE; ++lx)
          for (int k = 0; k < TILE; ++k) acc[ly][lx] += a_tile[ly][k] * b_tile[k][lx];
      // barrier()
    }
    for (int ly = 0; ly < TILE; ++ly)
      for (int lx = 0; lx < TILE; ++lx) {
        const int64_t row = gy * TILE + ly, col = gx * TILE + lx;
        if (row < M && col < N) C[row * N + col] = acc[ly][lx];
      }
  }
}

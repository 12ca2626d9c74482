// Hand-written CPU kernel (dotcompute CPU kernel ABI, see
// <dotcompute/cpu_kernel_abi.h>): C = A @ B for row-major float32 matrices,
// in 16x16 tiles staged through work-group memory, two barriers per tile.
//
//   extern "C" tiled_matmul(A: float32[M*K], B: float32[K*N], C: float32[M*N],
//                           M: int64, N: int64, K: int64)
//   global size (N, M) rounded up to multiples of 16, local size (16, 16).
//
// Work-item (x, y) of the launch computes C[y][x]. On the CPU a work-group is
// run by one thread, so each barrier becomes the boundary between two loops
// over the group's local ids, and the per-item accumulator that lives across
// barriers is an array indexed by local id.
#include <dotcompute/cpu_kernel_abi.h>
#include <stdint.h>

namespace {
constexpr uint64_t kTile = 16;
}

extern "C" void tiled_matmul(const dc_cpu_launch* launch, uint64_t group_begin, uint64_t group_end, void*) {
  const float* A = *static_cast<const float* const*>(launch->args[0]);
  const float* B = *static_cast<const float* const*>(launch->args[1]);
  float* C = *static_cast<float* const*>(launch->args[2]);
  const int64_t M = *static_cast<const int64_t*>(launch->args[3]);
  const int64_t N = *static_cast<const int64_t*>(launch->args[4]);
  const int64_t K = *static_cast<const int64_t*>(launch->args[5]);
  // The tiles below are sized for 16x16 groups; any other shape computes nothing.
  if (launch->local_size[0] != kTile || launch->local_size[1] != kTile) return;

  for (uint64_t group = group_begin; group < group_end; ++group) {
    const uint64_t gx = group % launch->num_groups[0];
    const uint64_t gy = group / launch->num_groups[0] % launch->num_groups[1];
    float As[kTile][kTile];  // work-group (shared) memory
    float Bs[kTile][kTile];
    float acc[kTile][kTile];  // private per work-item, lives across barriers
    for (uint64_t ly = 0; ly < kTile; ++ly)
      for (uint64_t lx = 0; lx < kTile; ++lx) acc[ly][lx] = 0.0f;

    const int64_t tiles = (K + static_cast<int64_t>(kTile) - 1) / static_cast<int64_t>(kTile);
    for (int64_t t = 0; t < tiles; ++t) {
      // Phase 1: every work-item loads one element of each tile.
      for (uint64_t ly = 0; ly < kTile; ++ly) {
        for (uint64_t lx = 0; lx < kTile; ++lx) {
          const int64_t row = static_cast<int64_t>(gy * kTile + ly);
          const int64_t col = static_cast<int64_t>(gx * kTile + lx);
          const int64_t ka = t * static_cast<int64_t>(kTile) + static_cast<int64_t>(lx);
          const int64_t kb = t * static_cast<int64_t>(kTile) + static_cast<int64_t>(ly);
          As[ly][lx] = (row < M && ka < K) ? A[row * K + ka] : 0.0f;
          Bs[ly][lx] = (kb < K && col < N) ? B[kb * N + col] : 0.0f;
        }
      }
      // barrier(): the loop above finished for the whole group.
      // Phase 2: every work-item accumulates its dot product over the tile.
      for (uint64_t ly = 0; ly < kTile; ++ly)
        for (uint64_t lx = 0; lx < kTile; ++lx) {
          float sum = acc[ly][lx];
          for (uint64_t k = 0; k < kTile; ++k) sum += As[ly][k] * Bs[k][lx];
          acc[ly][lx] = sum;
        }
      // barrier(): nobody overwrites the tiles before everyone used them.
    }
    for (uint64_t ly = 0; ly < kTile; ++ly) {
      for (uint64_t lx = 0; lx < kTile; ++lx) {
        const uint64_t x = gx * kTile + lx;
        const uint64_t y = gy * kTile + ly;
        if (x >= launch->global_size[0] || y >= launch->global_size[1]) continue;  // missing work-items
        if (static_cast<int64_t>(y) < M && static_cast<int64_t>(x) < N) C[y * N + x] = acc[ly][lx];
      }
    }
  }
}

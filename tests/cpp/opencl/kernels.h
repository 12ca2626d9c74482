// The OpenCL C the tests run. One program keeps PoCL's (slow) compiles to one per process.
#pragma once

namespace dctest {

inline const char* kTestKernels = R"CLC(
__kernel void vadd(__global const float* a, __global const float* b, __global float* out, long n) {
  size_t i = get_global_id(0);
  if (i < n) out[i] = a[i] + b[i];
}

/* Records which work-items ran: a rounded-up global size must not write past n. */
__kernel void mark(__global int* hits, long n) {
  size_t i = get_global_id(0);
  if (i < n) atomic_inc(&hits[i]);
}

#define TILE 8
/* C = A * B, A is M x K, B is K x N. The A tile is static __local memory,
   the B tile a __local argument, so both kinds are exercised. */
__kernel void matmul_tiled(__global const float* A, __global const float* B, __global float* C,
                           int M, int N, int K, __local float* tileB) {
  __local float tileA[TILE][TILE];
  int col = get_global_id(0);
  int row = get_global_id(1);
  int lc = get_local_id(0);
  int lr = get_local_id(1);
  float acc = 0.0f;
  for (int t = 0; t < (K + TILE - 1) / TILE; ++t) {
    int ak = t * TILE + lc;
    int bk = t * TILE + lr;
    tileA[lr][lc] = (row < M && ak < K) ? A[row * K + ak] : 0.0f;
    tileB[lr * TILE + lc] = (bk < K && col < N) ? B[bk * N + col] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < TILE; ++k) acc += tileA[lr][k] * tileB[k * TILE + lc];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (row < M && col < N) C[row * N + col] = acc;
}

/* Busy work of a tunable length, for ordering and timing. */
__kernel void spin(__global float* x, int iters) {
  size_t i = get_global_id(0);
  float v = x[i];
  for (int k = 0; k < iters; ++k) v = v * 0.999f + 1.0f;
  x[i] = v;
}
)CLC";

}  // namespace dctest

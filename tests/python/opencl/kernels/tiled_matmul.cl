/* C = A * B with 8x8 tiles in work-group memory; A is M x K, B is K x N. */
#define TILE 8
__kernel void tiled_matmul(__global const float* A, __global const float* B, __global float* C,
                           long M, long N, long K) {
  __local float ta[TILE][TILE];
  __local float tb[TILE][TILE];
  long col = get_global_id(0);
  long row = get_global_id(1);
  int lc = get_local_id(0);
  int lr = get_local_id(1);
  float acc = 0.0f;
  for (long t = 0; t < (K + TILE - 1) / TILE; ++t) {
    long ak = t * TILE + lc;
    long bk = t * TILE + lr;
    ta[lr][lc] = (row < M && ak < K) ? A[row * K + ak] : 0.0f;
    tb[lr][lc] = (bk < K && col < N) ? B[bk * N + col] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < TILE; ++k) acc += ta[lr][k] * tb[k][lc];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (row < M && col < N) C[row * N + col] = acc;
}

// PolyBench/GPU-style GEMM with shared-memory tiling: C = alpha * A @ B + beta * C.
// A is ni x nk, B is nk x nj, C is ni x nj, row-major; x runs along j, y along i.
#define TILE 16

extern "C" __global__ void gemm_tiled(const float* A, const float* B, float* C, int ni, int nj, int nk,
                                      float alpha, float beta) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  float acc = 0.0f;
  for (int t = 0; t < (nk + TILE - 1) / TILE; ++t) {
    int ka = t * TILE + threadIdx.x;
    int kb = t * TILE + threadIdx.y;
    As[threadIdx.y][threadIdx.x] = (i < ni && ka < nk) ? A[i * nk + ka] : 0.0f;
    Bs[threadIdx.y][threadIdx.x] = (kb < nk && j < nj) ? B[kb * nj + j] : 0.0f;
    __syncthreads();
    for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  if (i < ni && j < nj) C[i * nj + j] = alpha * acc + beta * C[i * nj + j];
}

// Block reductions the way CUDA code writes them: a shared-memory tree, then warp shuffles,
// one atomicAdd per block; a ballot count; a shared-memory histogram.

__device__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

extern "C" __global__ void block_sum(const float* x, float* out, int n) {
  __shared__ float partial[256];
  int tid = threadIdx.x;
  int i = blockIdx.x * blockDim.x + tid;
  partial[tid] = i < n ? x[i] : 0.0f;
  __syncthreads();
  for (int s = blockDim.x / 2; s >= 32; s >>= 1) {
    if (tid < s) partial[tid] += partial[tid + s];
    __syncthreads();
  }
  if (tid < 32) {
    float v = warp_sum(partial[tid]);
    if (tid == 0) atomicAdd(out, v);
  }
}

extern "C" __global__ void count_odd(const int* x, unsigned int* count, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int odd = i < n && (x[i] & 1);
  unsigned int mask = __ballot_sync(0xffffffffu, odd);
  if ((threadIdx.x & 31) == 0) atomicAdd(count, (unsigned int)__popc(mask));
}

extern "C" __global__ void histogram(const int* x, int* bins, int n, int nbins) {
  __shared__ int local[64];
  for (int b = threadIdx.x; b < nbins; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    atomicAdd(&local[x[i] % nbins], 1);
  __syncthreads();
  for (int b = threadIdx.x; b < nbins; b += blockDim.x) atomicAdd(&bins[b], local[b]);
}

extern "C" __global__ void prefix_in_warp(const int* x, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int lane = threadIdx.x & 31;
  int v = i < n ? x[i] : 0;
  for (int d = 1; d < 32; d <<= 1) {
    int up = __shfl_up_sync(0xffffffffu, v, d);
    if (lane >= d) v += up;
  }
  if (i < n) out[i] = v;
}

// Device-side assert, and a kernel whose pointer parameter can be handed a non-device address.
// NVRTC has no <assert.h>: device code asserts through the driver's __assertfail hook.
#ifndef assert
extern "C" __device__ void __assertfail(const char* expr, const char* file, unsigned line, const char* fn,
                                        size_t size);
#define assert(e) ((e) ? (void)0 : __assertfail(#e, __FILE__, __LINE__, __func__, 1))
#endif

extern "C" __global__ void checked_copy(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    assert(x[i] >= 0.0f);
    y[i] = x[i];
  }
}

// Reads far past the end of its input: on a GPU an illegal address, here too (not a crash).
extern "C" __global__ void read_far(const float* x, float* y, long long stride) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  y[i] = x[(long long)i * stride];
}

// Dynamic shared memory: each block reverses its slice through extern __shared__.
extern "C" __global__ void reverse_blocks(const float* x, float* y) {
  extern __shared__ float tile[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = x[i];
  __syncthreads();
  y[i] = tile[blockDim.x - 1 - threadIdx.x];
}

// Broken on purpose: lane 0 waits in a warp shuffle that lanes 1..31 never reach (they wait at
// __syncthreads). A GPU hangs or misbehaves; the simulator reports a deadlock.
extern "C" __global__ void divergent_barriers(float* y) {
  float v = threadIdx.x;
  if (threadIdx.x == 0) {
    v = __shfl_sync(0xffffffffu, v, 1);
  } else {
    __syncthreads();
  }
  y[threadIdx.x] = v;
}

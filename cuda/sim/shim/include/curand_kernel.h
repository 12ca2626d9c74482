// The simulator's <curand_kernel.h>: NVIDIA's own cuRAND device headers (the nvidia-curand-cu12 wheel
// or a toolkit, on the include path the kernel's NVRTC options name) compiled by the host compiler
// against the shim, so that XORWOW, Philox4_32_10 and MRG32k3a give NVIDIA's sequences bit for bit
// (integer generators, exact conversions; docs/cuda-simulator.md says where floats may differ).
//
// The headers are read as for an sm_60 device: from sm_61 on, MRG32k3a's step is written with inline
// PTX (mad.wide.u32), which a host compiler cannot assemble; NVIDIA's sm_60 path computes the same
// recurrence exactly in double precision. curand_poisson's device path is inline PTX at every
// architecture: calling it fails the host build (documented refusal).
#pragma once
#if __has_include_next(<curand_kernel.h>)
#include "dcsim_cuda.h"
#pragma push_macro("__CUDA_ARCH__")
#undef __CUDA_ARCH__
#define __CUDA_ARCH__ 600
#include_next <curand_kernel.h>
#pragma pop_macro("__CUDA_ARCH__")
#else
#error "cuRAND's device API (curand_kernel.h) needs NVIDIA's cuRAND headers: pip install nvidia-curand-cu12 (or dotcompute[cuda-libs]) or a CUDA toolkit ($CUDA_HOME); the CUDA simulator compiles NVIDIA's headers (docs/cuda-simulator.md)"
#endif

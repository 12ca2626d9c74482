// The simulator's <curand_kernel.h>: cuRAND's device API is refused with this message.
#pragma once
#error "cuRAND's device API (curand_kernel.h: curand_init, curand_uniform, curand_normal) is not provided by the CUDA simulator: its generators (XORWOW, Philox4_32_10, MRG32k3a, Sobol) would have to reproduce NVIDIA's sequences bit for bit, which is not done (docs/cuda-simulator.md)"

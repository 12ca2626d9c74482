// The CUDA simulator's device atomics, included by dcsim_cuda.h.
//
// CUDA declares its atomics as plain (non-template) overloads per type, so a call converts its
// value arguments the way C++ does: atomicAdd(unsigned*, 1), atomicAdd(float*, 1.0) and
// atomicExch(int*, threadIdx.x) compile on nvcc. A template `T atomicAdd(T*, T)` would deduce T
// twice and refuse them, so the same overload set is declared here:
//   atomicAdd   int, unsigned, unsigned long long, float, double, float2, float4 (sm_90)
//               (__half, __half2, __nv_bfloat16, __nv_bfloat162: their headers)
//   atomicSub   int, unsigned
//   atomicExch  int, unsigned, unsigned long long, float
//   atomicMin/Max  int, unsigned, unsigned long long, long long
//   atomicInc/Dec  unsigned
//   atomicCAS   int, unsigned, unsigned long long, unsigned short
//   atomicAnd/Or/Xor  int, unsigned, unsigned long long
// each also as name_block and name_system (one memory here, so the scope changes nothing).
//
// The host's <stdint.h> spells CUDA's 64-bit types as long / unsigned long (int64_t, uint64_t),
// which NVRTC's headers spell long long: a kernel NVRTC accepted with `atomicAdd((uint64_t*)p, 1)`
// must compile here too, so every 64-bit overload is repeated for the host's spelling.
//
// Blocks run on several worker threads at once, so each operation is one atomic read-modify-write
// of the host memory (the __atomic builtins, sequentially consistent like a GPU's device-scope
// atomics are with respect to each other); the ones without a builtin are compare-and-swap loops.
#pragma once

namespace dcsim {
DCSIM_LOCAL_BEGIN

// Replaces *p by f(*p) atomically; returns the old value.
template <class T, class F>
inline T atomic_update(T* p, F f) {
  trace::Mute mute;  // atomics are ordered among themselves: not traced as plain accesses
  T old;
  __atomic_load(p, &old, __ATOMIC_RELAXED);
  T want = f(old);
  while (!__atomic_compare_exchange(p, &old, &want, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) want = f(old);
  return old;
}

template <class T>
inline T atomic_exchange(T* p, T v) {
  T old;
  __atomic_exchange(p, &v, &old, __ATOMIC_SEQ_CST);
  return old;
}

template <class T>
inline T atomic_cas(T* p, T compare, T v) {
  __atomic_compare_exchange(p, &compare, &v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return compare;  // holds the old value whether or not the swap happened
}

template <class T>
inline T atomic_min(T* p, T v) {
  return atomic_update(p, [v](T old) { return v < old ? v : old; });
}

template <class T>
inline T atomic_max(T* p, T v) {
  return atomic_update(p, [v](T old) { return v > old ? v : old; });
}

DCSIM_LOCAL_END
}  // namespace dcsim

// One overload of `name` for type T with the body `expr` (p and v in scope), plus its scoped forms.
#define DCSIM_ATOMIC2(name, T, expr)                   \
  inline T name(T* p, T v) { return expr; }            \
  inline T name##_block(T* p, T v) { return expr; }    \
  inline T name##_system(T* p, T v) { return expr; }

#define DCSIM_ATOMIC_INTS(T)                                                       \
  DCSIM_ATOMIC2(atomicAnd, T, __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST))                 \
  DCSIM_ATOMIC2(atomicOr, T, __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST))                   \
  DCSIM_ATOMIC2(atomicXor, T, __atomic_fetch_xor(p, v, __ATOMIC_SEQ_CST))                 \
  DCSIM_ATOMIC2(atomicMin, T, ::dcsim::atomic_min(p, v))                                  \
  DCSIM_ATOMIC2(atomicMax, T, ::dcsim::atomic_max(p, v))                                  \
  inline T atomicCAS(T* p, T c, T v) { return ::dcsim::atomic_cas(p, c, v); }            \
  inline T atomicCAS_block(T* p, T c, T v) { return ::dcsim::atomic_cas(p, c, v); }      \
  inline T atomicCAS_system(T* p, T c, T v) { return ::dcsim::atomic_cas(p, c, v); }

// int, unsigned, unsigned long long (and the host's unsigned long): add, exch, and/or/xor, min/max, CAS
#define DCSIM_ATOMIC_FULL(T)                                                   \
  DCSIM_ATOMIC2(atomicAdd, T, __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST))      \
  DCSIM_ATOMIC2(atomicExch, T, ::dcsim::atomic_exchange(p, v))                 \
  DCSIM_ATOMIC_INTS(T)

DCSIM_ATOMIC_FULL(int)
DCSIM_ATOMIC_FULL(unsigned int)
DCSIM_ATOMIC_FULL(unsigned long long)
DCSIM_ATOMIC_FULL(unsigned long)

DCSIM_ATOMIC2(atomicSub, int, __atomic_fetch_sub(p, v, __ATOMIC_SEQ_CST))
DCSIM_ATOMIC2(atomicSub, unsigned int, __atomic_fetch_sub(p, v, __ATOMIC_SEQ_CST))

// long long has only min and max in CUDA (sm_35+); long is the host's int64_t
DCSIM_ATOMIC2(atomicMin, long long, ::dcsim::atomic_min(p, v))
DCSIM_ATOMIC2(atomicMax, long long, ::dcsim::atomic_max(p, v))
DCSIM_ATOMIC2(atomicMin, long, ::dcsim::atomic_min(p, v))
DCSIM_ATOMIC2(atomicMax, long, ::dcsim::atomic_max(p, v))

// floating point: add by compare-and-swap of the value (exact IEEE addition, as the GPU's), exch of float
DCSIM_ATOMIC2(atomicAdd, float, ::dcsim::atomic_update(p, [v](float old) { return old + v; }))
DCSIM_ATOMIC2(atomicAdd, double, ::dcsim::atomic_update(p, [v](double old) { return old + v; }))
DCSIM_ATOMIC2(atomicExch, float, ::dcsim::atomic_exchange(p, v))

// float2 and float4 (sm_90+): each element is one atomic add; the vector as a whole is not (as CUDA
// documents: atomicity is guaranteed separately for each element)
inline float2 atomicAdd(float2* p, float2 v) {
  return float2{atomicAdd(&p->x, v.x), atomicAdd(&p->y, v.y)};
}
inline float4 atomicAdd(float4* p, float4 v) {
  return float4{atomicAdd(&p->x, v.x), atomicAdd(&p->y, v.y), atomicAdd(&p->z, v.z), atomicAdd(&p->w, v.w)};
}
inline float2 atomicAdd_block(float2* p, float2 v) { return atomicAdd(p, v); }
inline float2 atomicAdd_system(float2* p, float2 v) { return atomicAdd(p, v); }
inline float4 atomicAdd_block(float4* p, float4 v) { return atomicAdd(p, v); }
inline float4 atomicAdd_system(float4* p, float4 v) { return atomicAdd(p, v); }

// 16-bit compare-and-swap (sm_70+)
inline unsigned short atomicCAS(unsigned short* p, unsigned short c, unsigned short v) {
  return ::dcsim::atomic_cas(p, c, v);
}
inline unsigned short atomicCAS_block(unsigned short* p, unsigned short c, unsigned short v) {
  return ::dcsim::atomic_cas(p, c, v);
}
inline unsigned short atomicCAS_system(unsigned short* p, unsigned short c, unsigned short v) {
  return ::dcsim::atomic_cas(p, c, v);
}

// wrap-around increment and decrement of unsigned (CUDA's exact definitions)
DCSIM_ATOMIC2(atomicInc, unsigned int,
              ::dcsim::atomic_update(p, [v](unsigned old) { return old >= v ? 0u : old + 1u; }))
DCSIM_ATOMIC2(atomicDec, unsigned int,
              ::dcsim::atomic_update(p, [v](unsigned old) { return (old == 0 || old > v) ? v : old - 1u; }))

#undef DCSIM_ATOMIC_FULL
#undef DCSIM_ATOMIC_INTS
#undef DCSIM_ATOMIC2

// the rest of the device API kept apart from the scheduler (clock, textures)
#include "dcsim_device.h"

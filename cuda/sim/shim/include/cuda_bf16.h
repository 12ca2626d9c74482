// The simulator's <cuda_bf16.h>: __nv_bfloat16 and __nv_bfloat162 for kernels run on the CPU.
//
// A bfloat16 is the top half of a float32's bits (8 exponent bits, 7 stored mantissa bits), so a
// conversion from float keeps the top 16 bits after rounding the dropped 16 (_rn: nearest-even);
// every operation computes in float and rounds once, as a GPU's bf16 arithmetic gives for + - * /
// and fma. The arithmetic intrinsics share their names with the half ones (__hadd, __hmul...) and
// are told apart by overloading, as in CUDA.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace dcsim_bf16 {

inline float bits_to_float(uint16_t b) {
  const uint32_t x = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

// mode: 0 nearest-even, 1 toward zero, 2 down (-inf), 3 up (+inf)
inline uint16_t float_to_bits(float f, int mode = 0) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // NaN stays quiet
  const uint32_t rest = x & 0xffffu;
  uint32_t top = x >> 16;
  const bool neg = (x >> 31) != 0;
  if (rest != 0) {
    bool up = false;
    if (mode == 0) up = rest > 0x8000u || (rest == 0x8000u && (top & 1u));
    else if (mode == 2) up = neg;
    else if (mode == 3) up = !neg;
    top += up ? 1u : 0u;  // a carry into the exponent is right, up to infinity
  }
  return static_cast<uint16_t>(top);
}

}  // namespace dcsim_bf16

struct __nv_bfloat16_raw {
  unsigned short x;
};

struct __nv_bfloat16 {
  unsigned short __x;
  __nv_bfloat16() = default;
  __nv_bfloat16(const __nv_bfloat16_raw& r) : __x(r.x) {}
  __nv_bfloat16(float f) : __x(dcsim_bf16::float_to_bits(f)) {}
  __nv_bfloat16(double d) : __x(dcsim_bf16::float_to_bits(static_cast<float>(d))) {}
  __nv_bfloat16(int i) : __x(dcsim_bf16::float_to_bits(static_cast<float>(i))) {}
  __nv_bfloat16(unsigned i) : __x(dcsim_bf16::float_to_bits(static_cast<float>(i))) {}
  __nv_bfloat16(long long i) : __x(dcsim_bf16::float_to_bits(static_cast<float>(i))) {}
  __nv_bfloat16(short i) : __x(dcsim_bf16::float_to_bits(static_cast<float>(i))) {}
  operator float() const { return dcsim_bf16::bits_to_float(__x); }
  operator __nv_bfloat16_raw() const { return __nv_bfloat16_raw{__x}; }
  __nv_bfloat16& operator=(float f) { __x = dcsim_bf16::float_to_bits(f); return *this; }
  __nv_bfloat16& operator=(double d) { __x = dcsim_bf16::float_to_bits(static_cast<float>(d)); return *this; }
};
typedef __nv_bfloat16 nv_bfloat16;

struct __nv_bfloat162 {
  __nv_bfloat16 x, y;
  __nv_bfloat162() = default;
  __nv_bfloat162(__nv_bfloat16 a, __nv_bfloat16 b) : x(a), y(b) {}
};
typedef __nv_bfloat162 nv_bfloat162;

inline __nv_bfloat16 dcsim_bf(float f, int mode = 0) {
  __nv_bfloat16 h;
  h.__x = dcsim_bf16::float_to_bits(f, mode);
  return h;
}

// conversions
inline float __bfloat162float(__nv_bfloat16 h) { return dcsim_bf16::bits_to_float(h.__x); }
inline __nv_bfloat16 __float2bfloat16(float f) { return dcsim_bf(f); }
inline __nv_bfloat16 __float2bfloat16_rn(float f) { return dcsim_bf(f); }
inline __nv_bfloat16 __float2bfloat16_rz(float f) { return dcsim_bf(f, 1); }
inline __nv_bfloat16 __float2bfloat16_rd(float f) { return dcsim_bf(f, 2); }
inline __nv_bfloat16 __float2bfloat16_ru(float f) { return dcsim_bf(f, 3); }
inline __nv_bfloat16 __double2bfloat16(double d) { return dcsim_bf(static_cast<float>(d)); }
inline __nv_bfloat16 __int2bfloat16_rn(int i) { return dcsim_bf(static_cast<float>(i)); }
inline int __bfloat162int_rz(__nv_bfloat16 h) { return static_cast<int>(std::trunc(__bfloat162float(h))); }
inline int __bfloat162int_rn(__nv_bfloat16 h) { return static_cast<int>(std::nearbyint(__bfloat162float(h))); }
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { return h.__x; }
inline short __bfloat16_as_short(__nv_bfloat16 h) { return static_cast<short>(h.__x); }
inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short u) { __nv_bfloat16 h; h.__x = u; return h; }
inline __nv_bfloat16 __short_as_bfloat16(short s) {
  __nv_bfloat16 h;
  h.__x = static_cast<unsigned short>(s);
  return h;
}

// arithmetic (overloads of the half intrinsics' names)
inline float dcsim_f(__nv_bfloat16 h) { return __bfloat162float(h); }
inline __nv_bfloat16 __hadd(__nv_bfloat16 a, __nv_bfloat16 b) { return dcsim_bf(dcsim_f(a) + dcsim_f(b)); }
inline __nv_bfloat16 __hsub(__nv_bfloat16 a, __nv_bfloat16 b) { return dcsim_bf(dcsim_f(a) - dcsim_f(b)); }
inline __nv_bfloat16 __hmul(__nv_bfloat16 a, __nv_bfloat16 b) { return dcsim_bf(dcsim_f(a) * dcsim_f(b)); }
inline __nv_bfloat16 __hdiv(__nv_bfloat16 a, __nv_bfloat16 b) { return dcsim_bf(dcsim_f(a) / dcsim_f(b)); }
inline __nv_bfloat16 __hfma(__nv_bfloat16 a, __nv_bfloat16 b, __nv_bfloat16 c) {
  return dcsim_bf(static_cast<float>(std::fma(static_cast<double>(dcsim_f(a)), dcsim_f(b), dcsim_f(c))));
}
inline __nv_bfloat16 __hneg(__nv_bfloat16 a) { return __ushort_as_bfloat16(static_cast<unsigned short>(a.__x ^ 0x8000u)); }
inline __nv_bfloat16 __habs(__nv_bfloat16 a) { return __ushort_as_bfloat16(static_cast<unsigned short>(a.__x & 0x7fffu)); }
inline __nv_bfloat16 __hmax(__nv_bfloat16 a, __nv_bfloat16 b) { return dcsim_bf(std::fmax(dcsim_f(a), dcsim_f(b))); }
inline __nv_bfloat16 __hmin(__nv_bfloat16 a, __nv_bfloat16 b) { return dcsim_bf(std::fmin(dcsim_f(a), dcsim_f(b))); }
inline bool __heq(__nv_bfloat16 a, __nv_bfloat16 b) { return dcsim_f(a) == dcsim_f(b); }
inline bool __hlt(__nv_bfloat16 a, __nv_bfloat16 b) { return dcsim_f(a) < dcsim_f(b); }
inline bool __hle(__nv_bfloat16 a, __nv_bfloat16 b) { return dcsim_f(a) <= dcsim_f(b); }
inline bool __hgt(__nv_bfloat16 a, __nv_bfloat16 b) { return dcsim_f(a) > dcsim_f(b); }
inline bool __hge(__nv_bfloat16 a, __nv_bfloat16 b) { return dcsim_f(a) >= dcsim_f(b); }
inline bool __hisnan(__nv_bfloat16 a) { return (a.__x & 0x7fffu) > 0x7f80u; }
inline __nv_bfloat16 hsqrt(__nv_bfloat16 a) { return dcsim_bf(std::sqrt(dcsim_f(a))); }
inline __nv_bfloat16 hexp(__nv_bfloat16 a) { return dcsim_bf(std::exp(dcsim_f(a))); }
inline __nv_bfloat16 hlog(__nv_bfloat16 a) { return dcsim_bf(std::log(dcsim_f(a))); }
inline __nv_bfloat16 htanh(__nv_bfloat16 a) { return dcsim_bf(std::tanh(dcsim_f(a))); }
inline __nv_bfloat16 hrcp(__nv_bfloat16 a) { return dcsim_bf(1.0f / dcsim_f(a)); }
inline __nv_bfloat16 hrsqrt(__nv_bfloat16 a) { return dcsim_bf(1.0f / std::sqrt(dcsim_f(a))); }

inline __nv_bfloat16 operator+(__nv_bfloat16 a, __nv_bfloat16 b) { return __hadd(a, b); }
inline __nv_bfloat16 operator-(__nv_bfloat16 a, __nv_bfloat16 b) { return __hsub(a, b); }
inline __nv_bfloat16 operator*(__nv_bfloat16 a, __nv_bfloat16 b) { return __hmul(a, b); }
inline __nv_bfloat16 operator/(__nv_bfloat16 a, __nv_bfloat16 b) { return __hdiv(a, b); }
inline __nv_bfloat16 operator-(__nv_bfloat16 a) { return __hneg(a); }
inline __nv_bfloat16& operator+=(__nv_bfloat16& a, __nv_bfloat16 b) { return a = __hadd(a, b); }
inline __nv_bfloat16& operator-=(__nv_bfloat16& a, __nv_bfloat16 b) { return a = __hsub(a, b); }
inline __nv_bfloat16& operator*=(__nv_bfloat16& a, __nv_bfloat16 b) { return a = __hmul(a, b); }
inline __nv_bfloat16& operator/=(__nv_bfloat16& a, __nv_bfloat16 b) { return a = __hdiv(a, b); }
inline bool operator==(__nv_bfloat16 a, __nv_bfloat16 b) { return __heq(a, b); }
inline bool operator!=(__nv_bfloat16 a, __nv_bfloat16 b) { return !__heq(a, b); }
inline bool operator<(__nv_bfloat16 a, __nv_bfloat16 b) { return __hlt(a, b); }
inline bool operator<=(__nv_bfloat16 a, __nv_bfloat16 b) { return __hle(a, b); }
inline bool operator>(__nv_bfloat16 a, __nv_bfloat16 b) { return __hgt(a, b); }
inline bool operator>=(__nv_bfloat16 a, __nv_bfloat16 b) { return __hge(a, b); }

// pairs
inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) { return __nv_bfloat162(dcsim_bf(a), dcsim_bf(b)); }
inline __nv_bfloat162 __float2bfloat162_rn(float a) { return __nv_bfloat162(dcsim_bf(a), dcsim_bf(a)); }
inline __nv_bfloat162 __halves2bfloat162(__nv_bfloat16 a, __nv_bfloat16 b) { return __nv_bfloat162(a, b); }
inline float __low2float(__nv_bfloat162 h) { return dcsim_f(h.x); }
inline float __high2float(__nv_bfloat162 h) { return dcsim_f(h.y); }
inline __nv_bfloat16 __low2bfloat16(__nv_bfloat162 h) { return h.x; }
inline __nv_bfloat16 __high2bfloat16(__nv_bfloat162 h) { return h.y; }
inline __nv_bfloat162 __hadd2(__nv_bfloat162 a, __nv_bfloat162 b) {
  return __nv_bfloat162(__hadd(a.x, b.x), __hadd(a.y, b.y));
}
inline __nv_bfloat162 __hmul2(__nv_bfloat162 a, __nv_bfloat162 b) {
  return __nv_bfloat162(__hmul(a.x, b.x), __hmul(a.y, b.y));
}
inline __nv_bfloat162 __hfma2(__nv_bfloat162 a, __nv_bfloat162 b, __nv_bfloat162 c) {
  return __nv_bfloat162(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y));
}
inline __nv_bfloat162 operator+(__nv_bfloat162 a, __nv_bfloat162 b) { return __hadd2(a, b); }
inline __nv_bfloat162 operator*(__nv_bfloat162 a, __nv_bfloat162 b) { return __hmul2(a, b); }

// atomicAdd of bfloat16 values (sm_80+): a compare-and-swap loop (dcsim_atomics.h), rounded once.
inline __nv_bfloat16 atomicAdd(__nv_bfloat16* p, __nv_bfloat16 v) {
  return ::dcsim::atomic_update(p, [v](__nv_bfloat16 old) { return __hadd(old, v); });
}
inline __nv_bfloat162 atomicAdd(__nv_bfloat162* p, __nv_bfloat162 v) {
  return ::dcsim::atomic_update(p, [v](__nv_bfloat162 old) { return __hadd2(old, v); });
}
inline __nv_bfloat16 atomicAdd_block(__nv_bfloat16* p, __nv_bfloat16 v) { return atomicAdd(p, v); }
inline __nv_bfloat16 atomicAdd_system(__nv_bfloat16* p, __nv_bfloat16 v) { return atomicAdd(p, v); }
inline __nv_bfloat162 atomicAdd_block(__nv_bfloat162* p, __nv_bfloat162 v) { return atomicAdd(p, v); }
inline __nv_bfloat162 atomicAdd_system(__nv_bfloat162* p, __nv_bfloat162 v) { return atomicAdd(p, v); }

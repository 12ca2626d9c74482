// The simulator's <cuda_fp16.h>: __half and __half2 for kernels run on the CPU.
//
// A __half holds IEEE binary16 bits; every operation converts to float, computes there and rounds
// back to nearest-even, which is what a GPU's half arithmetic gives for + - * / and fma of one
// rounding (float has more than twice half's precision, so the double rounding is exact for
// these). Conversions follow the CUDA names (_rn nearest-even, _rz toward zero, _rd/_ru down/up).
// Only the device API kernels use is provided; host-side helpers of the real header are not.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace dcsim_half {

inline float bits_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (man << 13);  // inf, nan (payload kept)
  } else if (exp != 0) {
    bits = sign | ((exp + 112u) << 23) | (man << 13);
  } else if (man == 0) {
    bits = sign;  // +-0
  } else {  // subnormal: normalise
    int e = -1;
    do {
      ++e;
      man <<= 1;
    } while ((man & 0x400u) == 0);
    bits = sign | ((112u - static_cast<uint32_t>(e)) << 23) | ((man & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// mode: 0 nearest-even, 1 toward zero, 2 down (-inf), 3 up (+inf)
inline uint16_t float_to_bits(float f, int mode = 0) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const bool neg = sign != 0;
  const uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u)  // inf, or nan (quiet, top payload bits kept)
    return static_cast<uint16_t>(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u | ((ax >> 13) & 0x3ffu) : 0u));
  if (ax == 0) return static_cast<uint16_t>(sign);
  // |f| = man * 2^(e - 23)
  const bool normal = (ax >> 23) != 0;
  const int e = normal ? static_cast<int>(ax >> 23) - 127 : -126;
  const uint64_t man = normal ? ((ax & 0x7fffffu) | 0x800000u) : (ax & 0x7fffffu);
  // half's unit in the last place at this magnitude: 2^-24 below 2^-14 (subnormals), else 2^(e-10)
  const int shift = (e < -14 ? -24 : e - 10) - (e - 23);  // bits dropped: at least 13
  uint64_t q = 0;
  int cmp = -1;         // the dropped part against half a unit: -1 below, 0 equal, 1 above
  bool inexact = true;
  if (shift <= 40) {
    q = man >> shift;
    const uint64_t rest = man & ((uint64_t{1} << shift) - 1);
    const uint64_t halfway = uint64_t{1} << (shift - 1);
    cmp = rest < halfway ? -1 : rest == halfway ? 0 : 1;
    inexact = rest != 0;
  }
  uint32_t result = e >= -14 ? (static_cast<uint32_t>(e + 15) << 10) + static_cast<uint32_t>(q - 0x400u)
                             : static_cast<uint32_t>(q);
  bool up = false;
  if (inexact) {
    if (mode == 0) up = cmp > 0 || (cmp == 0 && (result & 1u));
    else if (mode == 2) up = neg;
    else if (mode == 3) up = !neg;
  }
  if (up) ++result;  // may carry into the exponent, up to infinity: right
  if (result >= 0x7c00u) {  // overflow: infinity, or the largest finite when rounding toward zero
    const bool to_inf = mode == 0 || (mode == 2 && neg) || (mode == 3 && !neg);
    result = to_inf ? 0x7c00u : 0x7bffu;
  }
  return static_cast<uint16_t>(sign | result);
}

}  // namespace dcsim_half

struct __half_raw {
  unsigned short x;
};

struct __half {
  unsigned short __x;
  __half() = default;
  __half(const __half_raw& r) : __x(r.x) {}
  __half(float f) : __x(dcsim_half::float_to_bits(f)) {}
  __half(double d) : __x(dcsim_half::float_to_bits(static_cast<float>(d))) {}
  __half(int i) : __x(dcsim_half::float_to_bits(static_cast<float>(i))) {}
  __half(unsigned i) : __x(dcsim_half::float_to_bits(static_cast<float>(i))) {}
  __half(long long i) : __x(dcsim_half::float_to_bits(static_cast<float>(i))) {}
  __half(unsigned long long i) : __x(dcsim_half::float_to_bits(static_cast<float>(i))) {}
  __half(short i) : __x(dcsim_half::float_to_bits(static_cast<float>(i))) {}
  __half(unsigned short i) : __x(dcsim_half::float_to_bits(static_cast<float>(i))) {}
  operator float() const { return dcsim_half::bits_to_float(__x); }
  operator __half_raw() const { return __half_raw{__x}; }
  __half& operator=(float f) { __x = dcsim_half::float_to_bits(f); return *this; }
  __half& operator=(double d) { __x = dcsim_half::float_to_bits(static_cast<float>(d)); return *this; }
  __half& operator=(const __half_raw& r) { __x = r.x; return *this; }
};
typedef __half half;

struct __half2 {
  __half x, y;
  __half2() = default;
  __half2(__half a, __half b) : x(a), y(b) {}
};
typedef __half2 half2;

inline __half dcsim_h(float f) { __half h; h.__x = dcsim_half::float_to_bits(f); return h; }

// conversions
inline float __half2float(__half h) { return dcsim_half::bits_to_float(h.__x); }
inline __half __float2half(float f) { return dcsim_h(f); }
inline __half __float2half_rn(float f) { return dcsim_h(f); }
inline __half __float2half_rz(float f) { __half h; h.__x = dcsim_half::float_to_bits(f, 1); return h; }
inline __half __float2half_rd(float f) { __half h; h.__x = dcsim_half::float_to_bits(f, 2); return h; }
inline __half __float2half_ru(float f) { __half h; h.__x = dcsim_half::float_to_bits(f, 3); return h; }
inline __half __double2half(double d) { return dcsim_h(static_cast<float>(d)); }
inline __half __int2half_rn(int i) { return dcsim_h(static_cast<float>(i)); }
inline __half __uint2half_rn(unsigned i) { return dcsim_h(static_cast<float>(i)); }
inline __half __ll2half_rn(long long i) { return dcsim_h(static_cast<float>(i)); }
inline __half __short2half_rn(short i) { return dcsim_h(static_cast<float>(i)); }
inline int __half2int_rz(__half h) { return static_cast<int>(std::trunc(__half2float(h))); }
inline int __half2int_rn(__half h) { return static_cast<int>(std::nearbyint(__half2float(h))); }
inline int __half2int_rd(__half h) { return static_cast<int>(std::floor(__half2float(h))); }
inline int __half2int_ru(__half h) { return static_cast<int>(std::ceil(__half2float(h))); }
inline unsigned __half2uint_rz(__half h) { return static_cast<unsigned>(std::trunc(__half2float(h))); }
inline short __half2short_rz(__half h) { return static_cast<short>(std::trunc(__half2float(h))); }
inline long long __half2ll_rz(__half h) { return static_cast<long long>(std::trunc(__half2float(h))); }
inline unsigned short __half_as_ushort(__half h) { return h.__x; }
inline short __half_as_short(__half h) { return static_cast<short>(h.__x); }
inline __half __ushort_as_half(unsigned short u) { __half h; h.__x = u; return h; }
inline __half __short_as_half(short s) { __half h; h.__x = static_cast<unsigned short>(s); return h; }

// arithmetic: one rounding of the exact float result
inline __half __hadd(__half a, __half b) { return dcsim_h(__half2float(a) + __half2float(b)); }
inline __half __hsub(__half a, __half b) { return dcsim_h(__half2float(a) - __half2float(b)); }
inline __half __hmul(__half a, __half b) { return dcsim_h(__half2float(a) * __half2float(b)); }
inline __half __hdiv(__half a, __half b) { return dcsim_h(__half2float(a) / __half2float(b)); }
inline __half __hfma(__half a, __half b, __half c) {
  return dcsim_h(static_cast<float>(std::fma(static_cast<double>(__half2float(a)), __half2float(b), __half2float(c))));
}
inline __half __hneg(__half a) { __half h; h.__x = static_cast<unsigned short>(a.__x ^ 0x8000u); return h; }
inline __half __habs(__half a) { __half h; h.__x = static_cast<unsigned short>(a.__x & 0x7fffu); return h; }
inline __half __hadd_sat(__half a, __half b) {
  const float r = __half2float(a) + __half2float(b);
  return dcsim_h(r != r ? 0.0f : r < 0.0f ? 0.0f : r > 1.0f ? 1.0f : r);
}
inline __half __hmul_sat(__half a, __half b) {
  const float r = __half2float(a) * __half2float(b);
  return dcsim_h(r != r ? 0.0f : r < 0.0f ? 0.0f : r > 1.0f ? 1.0f : r);
}
inline __half __hmax(__half a, __half b) { return dcsim_h(std::fmax(__half2float(a), __half2float(b))); }
inline __half __hmin(__half a, __half b) { return dcsim_h(std::fmin(__half2float(a), __half2float(b))); }

// comparisons (ordered: false with a NaN; the "u" forms are true with a NaN)
inline bool __heq(__half a, __half b) { return __half2float(a) == __half2float(b); }
inline bool __hne(__half a, __half b) { const float x = __half2float(a), y = __half2float(b); return x < y || x > y; }
inline bool __hlt(__half a, __half b) { return __half2float(a) < __half2float(b); }
inline bool __hle(__half a, __half b) { return __half2float(a) <= __half2float(b); }
inline bool __hgt(__half a, __half b) { return __half2float(a) > __half2float(b); }
inline bool __hge(__half a, __half b) { return __half2float(a) >= __half2float(b); }
inline bool __hequ(__half a, __half b) { return !__hne(a, b); }
inline bool __hltu(__half a, __half b) { return !__hge(a, b); }
inline bool __hgtu(__half a, __half b) { return !__hle(a, b); }
inline bool __hisnan(__half a) { return (a.__x & 0x7fffu) > 0x7c00u; }
inline int __hisinf(__half a) { return (a.__x & 0x7fffu) == 0x7c00u ? ((a.__x & 0x8000u) ? -1 : 1) : 0; }

// math (computed in float, rounded once)
inline __half hsqrt(__half a) { return dcsim_h(std::sqrt(__half2float(a))); }
inline __half hrsqrt(__half a) { return dcsim_h(1.0f / std::sqrt(__half2float(a))); }
inline __half hrcp(__half a) { return dcsim_h(1.0f / __half2float(a)); }
inline __half hexp(__half a) { return dcsim_h(std::exp(__half2float(a))); }
inline __half hexp2(__half a) { return dcsim_h(std::exp2(__half2float(a))); }
inline __half hlog(__half a) { return dcsim_h(std::log(__half2float(a))); }
inline __half hlog2(__half a) { return dcsim_h(std::log2(__half2float(a))); }
inline __half hsin(__half a) { return dcsim_h(std::sin(__half2float(a))); }
inline __half hcos(__half a) { return dcsim_h(std::cos(__half2float(a))); }
inline __half htanh(__half a) { return dcsim_h(std::tanh(__half2float(a))); }
inline __half hfloor(__half a) { return dcsim_h(std::floor(__half2float(a))); }
inline __half hceil(__half a) { return dcsim_h(std::ceil(__half2float(a))); }
inline __half htrunc(__half a) { return dcsim_h(std::trunc(__half2float(a))); }
inline __half hrint(__half a) { return dcsim_h(std::nearbyint(__half2float(a))); }

// operators (cuda_fp16.hpp gives them to device code)
inline __half operator+(__half a, __half b) { return __hadd(a, b); }
inline __half operator-(__half a, __half b) { return __hsub(a, b); }
inline __half operator*(__half a, __half b) { return __hmul(a, b); }
inline __half operator/(__half a, __half b) { return __hdiv(a, b); }
inline __half operator-(__half a) { return __hneg(a); }
inline __half operator+(__half a) { return a; }
inline __half& operator+=(__half& a, __half b) { return a = __hadd(a, b); }
inline __half& operator-=(__half& a, __half b) { return a = __hsub(a, b); }
inline __half& operator*=(__half& a, __half b) { return a = __hmul(a, b); }
inline __half& operator/=(__half& a, __half b) { return a = __hdiv(a, b); }
inline bool operator==(__half a, __half b) { return __heq(a, b); }
inline bool operator!=(__half a, __half b) { return !__heq(a, b); }
inline bool operator<(__half a, __half b) { return __hlt(a, b); }
inline bool operator<=(__half a, __half b) { return __hle(a, b); }
inline bool operator>(__half a, __half b) { return __hgt(a, b); }
inline bool operator>=(__half a, __half b) { return __hge(a, b); }

// __half2: two halves, element by element
inline __half2 __halves2half2(__half a, __half b) { return __half2(a, b); }
inline __half2 __half2half2(__half a) { return __half2(a, a); }
inline __half2 __float2half2_rn(float f) { return __half2(dcsim_h(f), dcsim_h(f)); }
inline __half2 __floats2half2_rn(float a, float b) { return __half2(dcsim_h(a), dcsim_h(b)); }
inline float __low2float(__half2 h) { return __half2float(h.x); }
inline float __high2float(__half2 h) { return __half2float(h.y); }
inline __half __low2half(__half2 h) { return h.x; }
inline __half __high2half(__half2 h) { return h.y; }
inline __half2 __lows2half2(__half2 a, __half2 b) { return __half2(a.x, b.x); }
inline __half2 __highs2half2(__half2 a, __half2 b) { return __half2(a.y, b.y); }
inline __half2 __lowhigh2highlow(__half2 a) { return __half2(a.y, a.x); }
inline __half2 __hadd2(__half2 a, __half2 b) { return __half2(__hadd(a.x, b.x), __hadd(a.y, b.y)); }
inline __half2 __hsub2(__half2 a, __half2 b) { return __half2(__hsub(a.x, b.x), __hsub(a.y, b.y)); }
inline __half2 __hmul2(__half2 a, __half2 b) { return __half2(__hmul(a.x, b.x), __hmul(a.y, b.y)); }
inline __half2 __h2div(__half2 a, __half2 b) { return __half2(__hdiv(a.x, b.x), __hdiv(a.y, b.y)); }
inline __half2 __hfma2(__half2 a, __half2 b, __half2 c) {
  return __half2(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y));
}
inline __half2 __hneg2(__half2 a) { return __half2(__hneg(a.x), __hneg(a.y)); }
inline __half2 __habs2(__half2 a) { return __half2(__habs(a.x), __habs(a.y)); }
inline __half2 __hmax2(__half2 a, __half2 b) { return __half2(__hmax(a.x, b.x), __hmax(a.y, b.y)); }
inline __half2 __hmin2(__half2 a, __half2 b) { return __half2(__hmin(a.x, b.x), __hmin(a.y, b.y)); }
inline __half2 h2sqrt(__half2 a) { return __half2(hsqrt(a.x), hsqrt(a.y)); }
inline __half2 h2exp(__half2 a) { return __half2(hexp(a.x), hexp(a.y)); }
inline __half2 operator+(__half2 a, __half2 b) { return __hadd2(a, b); }
inline __half2 operator-(__half2 a, __half2 b) { return __hsub2(a, b); }
inline __half2 operator*(__half2 a, __half2 b) { return __hmul2(a, b); }
inline __half2 operator/(__half2 a, __half2 b) { return __h2div(a, b); }
inline __half2& operator+=(__half2& a, __half2 b) { return a = __hadd2(a, b); }
inline __half2& operator*=(__half2& a, __half2 b) { return a = __hmul2(a, b); }

// atomicAdd of half values (sm_70+): a compare-and-swap loop on the 2 or 4 bytes (dcsim_atomics.h),
// each element rounded once as the GPU's half add is; the pair's halves are one atomic update.
inline __half atomicAdd(__half* p, __half v) {
  return ::dcsim::atomic_update(p, [v](__half old) { return __hadd(old, v); });
}
inline __half2 atomicAdd(__half2* p, __half2 v) {
  return ::dcsim::atomic_update(p, [v](__half2 old) { return __hadd2(old, v); });
}
inline __half atomicAdd_block(__half* p, __half v) { return atomicAdd(p, v); }
inline __half atomicAdd_system(__half* p, __half v) { return atomicAdd(p, v); }
inline __half2 atomicAdd_block(__half2* p, __half2 v) { return atomicAdd(p, v); }
inline __half2 atomicAdd_system(__half2* p, __half2 v) { return atomicAdd(p, v); }

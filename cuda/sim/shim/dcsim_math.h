// The CUDA simulator's math and bit intrinsics (min/max, the CUDA math extras, rounding and
// reinterpretation intrinsics, __popc/__brev/__byte_perm ...). Included by dcsim_cuda.h, after the
// execution model (it uses dcsim::to_bits/from_bits); kept apart so that the scheduler's header
// stays readable.
#pragma once

// ---- math and bit intrinsics ---------------------------------------------------------------------
template <class A, class B>
inline std::common_type_t<A, B> min(A a, B b) {
  return b < a ? b : a;
}
template <class A, class B>
inline std::common_type_t<A, B> max(A a, B b) {
  return a < b ? b : a;
}
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
inline float rcbrtf(float x) { return 1.0f / cbrtf(x); }
inline double rcbrt(double x) { return 1.0 / cbrt(x); }
inline float sinpif(float x) { return sinf(static_cast<float>(M_PI) * x); }
inline float cospif(float x) { return cosf(static_cast<float>(M_PI) * x); }
inline double sinpi(double x) { return sin(M_PI * x); }
inline double cospi(double x) { return cos(M_PI * x); }
inline void sincospif(float x, float* s, float* c) { *s = sinpif(x); *c = cospif(x); }
inline void sincospi(double x, double* s, double* c) { *s = sinpi(x); *c = cospi(x); }
inline float normcdff(float x) { return 0.5f * erfcf(-x * static_cast<float>(M_SQRT1_2)); }
inline double normcdf(double x) { return 0.5 * erfc(-x * M_SQRT1_2); }
// erfcinv/erfinv (CUDA math API; cuRAND's inverse-CDF normals use them): Newton's method on
// log(erfc(x)) = log(z), which is concave and decreasing, so from any start the iterates approach the
// root from above after at most one overshoot; the tail estimate sqrt(-log z) starts it near.
inline double erfcinv(double z) {
  if (!(z >= 0.0 && z <= 2.0)) return NAN;
  if (z == 0.0) return INFINITY;
  if (z == 2.0) return -INFINITY;
  if (z > 1.0) return -erfcinv(2.0 - z);
  double x = z > 0.5 ? (1.0 - z) * 0.886226925452758 : sqrt(-log(z));
  for (int i = 0; i < 64; ++i) {
    const double e = erfc(x), slope = M_2_SQRTPI * exp(-x * x);
    if (slope == 0.0) break;  // erfc's tail beyond double range: x is as close as doubles get
    const double step = (log(e) - log(z)) * e / slope;
    x += step;
    if (fabs(step) <= 1e-16 * fabs(x)) break;
  }
  return x;
}
inline double erfinv(double y) {
  if (!(y >= -1.0 && y <= 1.0)) return NAN;
  if (fabs(y) >= 0.5) return y > 0 ? erfcinv(1.0 - y) : -erfcinv(1.0 + y);  // 1 -/+ y exact here
  double x = y * 0.886226925452758;  // small |y|: Newton on erf itself keeps the relative precision
  for (int i = 0; i < 64; ++i) {
    const double step = (erf(x) - y) / (M_2_SQRTPI * exp(-x * x));
    x -= step;
    if (fabs(step) <= 1e-16 * fabs(x)) break;
  }
  return x;
}
inline float erfcinvf(float z) { return static_cast<float>(erfcinv(z)); }
inline float erfinvf(float y) { return static_cast<float>(erfinv(y)); }
inline double normcdfinv(double p) { return -M_SQRT2 * erfcinv(2.0 * p); }
inline float normcdfinvf(float p) { return static_cast<float>(normcdfinv(p)); }
inline float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }
inline float __expf(float x) { return expf(x); }
inline float __exp10f(float x) { return exp10f(x); }
inline float __logf(float x) { return logf(x); }
inline float __log2f(float x) { return log2f(x); }
inline float __log10f(float x) { return log10f(x); }
inline float __sinf(float x) { return sinf(x); }
inline float __cosf(float x) { return cosf(x); }
inline float __tanf(float x) { return tanf(x); }
inline void __sincosf(float x, float* s, float* c) { *s = sinf(x); *c = cosf(x); }
inline float __powf(float x, float y) { return powf(x, y); }
inline float __fdividef(float x, float y) { return x / y; }
inline double __ddiv_rn(double x, double y) { return x / y; }
inline float __fadd_rn(float x, float y) { return x + y; }
inline float __fsub_rn(float x, float y) { return x - y; }
inline float __fmul_rn(float x, float y) { return x * y; }
inline float __fdiv_rn(float x, float y) { return x / y; }
inline float __fmaf_rn(float x, float y, float z) { return fmaf(x, y, z); }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline float __fsqrt_rn(float x) { return sqrtf(x); }
inline float __frsqrt_rn(float x) { return 1.0f / sqrtf(x); }
inline double __dadd_rn(double x, double y) { return x + y; }
inline double __dsub_rn(double x, double y) { return x - y; }
inline double __dmul_rn(double x, double y) { return x * y; }
inline double __fma_rn(double x, double y, double z) { return fma(x, y, z); }
inline double __drcp_rn(double x) { return 1.0 / x; }
inline double __dsqrt_rn(double x) { return sqrt(x); }

inline float __int_as_float(int v) { return ::dcsim::from_bits<float>(static_cast<unsigned>(v)); }
inline int __float_as_int(float v) { return static_cast<int>(static_cast<unsigned>(::dcsim::to_bits(v))); }
inline float __uint_as_float(unsigned v) { return ::dcsim::from_bits<float>(v); }
inline unsigned __float_as_uint(float v) { return static_cast<unsigned>(::dcsim::to_bits(v)); }
inline double __longlong_as_double(long long v) { return ::dcsim::from_bits<double>(static_cast<unsigned long long>(v)); }
inline long long __double_as_longlong(double v) { return static_cast<long long>(::dcsim::to_bits(v)); }
inline int __double2hiint(double v) { return static_cast<int>(::dcsim::to_bits(v) >> 32); }
inline int __double2loint(double v) { return static_cast<int>(::dcsim::to_bits(v) & 0xffffffffu); }
inline double __hiloint2double(int hi, int lo) {
  return ::dcsim::from_bits<double>((static_cast<unsigned long long>(static_cast<unsigned>(hi)) << 32) |
                                    static_cast<unsigned>(lo));
}
inline int __float2int_rn(float x) { return static_cast<int>(rintf(x)); }
inline int __float2int_rz(float x) { return static_cast<int>(x); }
inline int __float2int_rd(float x) { return static_cast<int>(floorf(x)); }
inline int __float2int_ru(float x) { return static_cast<int>(ceilf(x)); }
inline unsigned __float2uint_rn(float x) { return static_cast<unsigned>(rintf(x)); }
inline unsigned __float2uint_rz(float x) { return static_cast<unsigned>(x); }
inline long long __float2ll_rn(float x) { return static_cast<long long>(rintf(x)); }
inline long long __float2ll_rz(float x) { return static_cast<long long>(x); }
inline int __double2int_rn(double x) { return static_cast<int>(rint(x)); }
inline int __double2int_rz(double x) { return static_cast<int>(x); }
inline long long __double2ll_rn(double x) { return static_cast<long long>(rint(x)); }
inline long long __double2ll_rz(double x) { return static_cast<long long>(x); }
inline float __double2float_rn(double x) { return static_cast<float>(x); }
inline float __int2float_rn(int x) { return static_cast<float>(x); }
inline float __uint2float_rn(unsigned x) { return static_cast<float>(x); }
inline float __ll2float_rn(long long x) { return static_cast<float>(x); }
inline double __int2double_rn(int x) { return static_cast<double>(x); }
inline double __ll2double_rn(long long x) { return static_cast<double>(x); }

inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(static_cast<unsigned>(x)); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(x)); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned __brev(unsigned x) {
  unsigned r = 0;
  for (int i = 0; i < 32; ++i) r |= ((x >> i) & 1u) << (31 - i);
  return r;
}
inline unsigned long long __brevll(unsigned long long x) {
  unsigned long long r = 0;
  for (int i = 0; i < 64; ++i) r |= ((x >> i) & 1ull) << (63 - i);
  return r;
}
inline int __mulhi(int a, int b) { return static_cast<int>((static_cast<long long>(a) * b) >> 32); }
inline unsigned __umulhi(unsigned a, unsigned b) {
  return static_cast<unsigned>((static_cast<unsigned long long>(a) * b) >> 32);
}
inline long long __mul64hi(long long a, long long b) { return static_cast<long long>((static_cast<__int128>(a) * b) >> 64); }
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
  return static_cast<unsigned long long>((static_cast<unsigned __int128>(a) * b) >> 64);
}
inline int __mul24(int a, int b) { return ((a << 8) >> 8) * ((b << 8) >> 8); }
inline unsigned __umul24(unsigned a, unsigned b) { return (a & 0xffffffu) * (b & 0xffffffu); }
inline unsigned __sad(int a, int b, unsigned c) { return (a > b ? a - b : b - a) + c; }
inline unsigned __usad(unsigned a, unsigned b, unsigned c) { return (a > b ? a - b : b - a) + c; }
inline int __hadd(int a, int b) { return static_cast<int>((static_cast<long long>(a) + b) >> 1); }
inline int __rhadd(int a, int b) { return static_cast<int>((static_cast<long long>(a) + b + 1) >> 1); }
inline unsigned __uhadd(unsigned a, unsigned b) { return static_cast<unsigned>((static_cast<unsigned long long>(a) + b) >> 1); }
inline unsigned __urhadd(unsigned a, unsigned b) {
  return static_cast<unsigned>((static_cast<unsigned long long>(a) + b + 1) >> 1);
}
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  const unsigned long long v = (static_cast<unsigned long long>(y) << 32) | x;
  unsigned r = 0;
  for (int i = 0; i < 4; ++i) r |= static_cast<unsigned>((v >> (((s >> (4 * i)) & 7u) * 8)) & 0xffu) << (8 * i);
  return r;
}
inline unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned shift) {
  const unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
  return static_cast<unsigned>((v << (shift & 31u)) >> 32);
}
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned shift) {
  const unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
  return static_cast<unsigned>(v >> (shift & 31u));
}

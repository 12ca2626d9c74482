// The CUDA simulator's device API beside the scheduler: the device clock and the refused texture
// fetches. Included by dcsim_atomics.h (itself included by dcsim_cuda.h), after the barriers.
#pragma once

// clock() in device code reads the SM's cycle counter, the same counter as clock64(); the host's
// clock(3) is the process's CPU time in other units. Kernels time sections with clock() and
// compare with clock64() or with each other, so both read the simulator's one clock (monotonic
// nanoseconds, dcsim_cuda.h's clock64). A function-like macro: <time.h>'s declaration (already
// included) and <ctime>'s `using ::clock;` are left as they are.
#define clock() (static_cast<clock_t>(clock64()))

// Texture objects (cuTexObjectCreate in the simulator library; the handle is the address of its
// dcsim_texture, dcsim_abi.h): tex1Dfetch on linear memory, tex2D on pitch2D memory, with CUDA's
// address modes, point and linear filtering, normalised coordinates and read modes. What a GPU's
// texture unit does, as CUDA's programming guide describes it (appendix "Texture Fetching"):
//  - normalised coordinates are scaled by the size; wrap and mirror apply only to them (with
//    unnormalised coordinates a GPU clamps), and each texel index the filter reads is wrapped,
//    mirrored, clamped or replaced by the border colour;
//  - linear filtering reads the texels around x - 0.5 and weighs them with the fraction held in
//    9-bit fixed point (8 fractional bits), so weights are multiples of 1/256;
//  - 8- and 16-bit integers read as normalised float unless CU_TRSF_READ_AS_INTEGER
//    (cudaReadModeElementType) is set: unsigned v / (2^n - 1), signed max(v / (2^(n-1) - 1), -1).
// The blend is float arithmetic here; a GPU's filter hardware may round its last bits differently.
typedef unsigned long long cudaTextureObject_t;
typedef unsigned long long cudaSurfaceObject_t;

namespace dcsim {
DCSIM_LOCAL_BEGIN
inline const dcsim_texture& texture_of(cudaTextureObject_t handle, const char* what) {
  const auto* d = reinterpret_cast<const dcsim_texture*>(static_cast<uintptr_t>(handle));
  // a handle that is no live texture object of this process: on a GPU an invalid descriptor fault
  if (d == nullptr || d->magic != DCSIM_TEXTURE_MAGIC)
    fail(700, "%s: the handle is not a live texture object%s (made by cuTexObjectCreate, not yet destroyed)", what, "");
  return *d;
}

struct Texel {
  double v[4];  // exact for 32-bit integers and floats
};

inline float half_bits_to_float(unsigned short h) {
  const unsigned sign = (h >> 15) & 1u, exp = (h >> 10) & 31u, man = h & 1023u;
  float m = exp == 0 ? ldexpf(static_cast<float>(man), -24)
                     : (exp == 31 ? (man ? NAN : INFINITY) : ldexpf(static_cast<float>(man | 1024u), static_cast<int>(exp) - 25));
  return sign ? -m : m;
}

// The element at (i, j) as the read mode gives it (integers as themselves, or normalised).
inline Texel load(const dcsim_texture& d, long long i, long long j) {
  Texel out{{0.0f, 0.0f, 0.0f, 0.0f}};
  const bool integer = (d.flags & 1u) != 0;
  const unsigned char* row = d.data + static_cast<uint64_t>(j) * d.pitch;
  for (uint32_t c = 0; c < d.channels; ++c) {
    double v = 0.0;
    switch (d.format) {
      case 0x01: {  // unsigned int8
        const unsigned char x = row[i * d.channels + c];
        v = integer ? x : x / 255.0f;
        break;
      }
      case 0x08: {  // signed int8
        const signed char x = reinterpret_cast<const signed char*>(row)[i * d.channels + c];
        v = integer ? x : fmaxf(x / 127.0f, -1.0f);
        break;
      }
      case 0x02: {
        const unsigned short x = reinterpret_cast<const unsigned short*>(row)[i * d.channels + c];
        v = integer ? x : x / 65535.0f;
        break;
      }
      case 0x09: {
        const short x = reinterpret_cast<const short*>(row)[i * d.channels + c];
        v = integer ? x : fmaxf(x / 32767.0f, -1.0f);
        break;
      }
      case 0x10: v = half_bits_to_float(reinterpret_cast<const unsigned short*>(row)[i * d.channels + c]); break;
      case 0x03: v = reinterpret_cast<const uint32_t*>(row)[i * d.channels + c]; break;
      case 0x0a: v = reinterpret_cast<const int32_t*>(row)[i * d.channels + c]; break;
      default: v = reinterpret_cast<const float*>(row)[i * d.channels + c]; break;  // float
    }
    out.v[c] = v;
  }
  return out;
}

// A texel index under an address mode: the index, or -1 for the border colour.
inline long long address(long long i, long long n, uint32_t mode, bool normalized) {
  if (!normalized && (mode == 0 || mode == 2)) mode = 1;  // wrap and mirror need normalised coordinates
  switch (mode) {
    case 0: return ((i % n) + n) % n;
    case 2: {
      const long long m = ((i % (2 * n)) + 2 * n) % (2 * n);
      return m < n ? m : 2 * n - 1 - m;
    }
    case 3: return i < 0 || i >= n ? -1 : i;
    default: return i < 0 ? 0 : (i >= n ? n - 1 : i);
  }
}

inline Texel texel(const dcsim_texture& d, long long i, long long j) {
  const bool normalized = (d.flags & 2u) != 0;
  const long long x = address(i, static_cast<long long>(d.width), d.address[0], normalized);
  const long long y = address(j, static_cast<long long>(d.height), d.address[1], normalized);
  if (x < 0 || y < 0) return Texel{{d.border[0], d.border[1], d.border[2], d.border[3]}};
  return load(d, x, y);
}

inline float fixed_weight(float fraction) { return rintf(fraction * 256.0f) / 256.0f; }

inline Texel sample(const dcsim_texture& d, float x, float y) {
  if (d.flags & 2u) {
    x *= static_cast<float>(d.width);
    y *= static_cast<float>(d.height);
  }
  if (d.filter == 0) return texel(d, static_cast<long long>(floorf(x)), static_cast<long long>(floorf(y)));
  const float xb = x - 0.5f, yb = y - 0.5f;
  const long long i = static_cast<long long>(floorf(xb)), j = static_cast<long long>(floorf(yb));
  const float a = fixed_weight(xb - floorf(xb));
  const float b = d.height == 1 ? 0.0f : fixed_weight(yb - floorf(yb));
  const Texel t00 = texel(d, i, j), t10 = texel(d, i + 1, j), t01 = texel(d, i, j + 1), t11 = texel(d, i + 1, j + 1);
  Texel out;
  for (int c = 0; c < 4; ++c)  // float values (linear filtering reads floats only)
    out.v[c] = (1.0f - a) * (1.0f - b) * static_cast<float>(t00.v[c]) + a * (1.0f - b) * static_cast<float>(t10.v[c]) +
               (1.0f - a) * b * static_cast<float>(t01.v[c]) + a * b * static_cast<float>(t11.v[c]);
  return out;
}

// The texel as the kernel's return type: a scalar takes the first channel, a vector type x, y (z, w).
template <class T, class = void>
struct has_y : std::false_type {};
template <class T>
struct has_y<T, std::void_t<decltype(std::declval<T&>().y)>> : std::true_type {};
template <class T, class = void>
struct has_w : std::false_type {};
template <class T>
struct has_w<T, std::void_t<decltype(std::declval<T&>().w)>> : std::true_type {};
template <class T>
inline T texel_as(const Texel& t) {
  if constexpr (has_w<T>::value) {
    T r{};
    r.x = static_cast<decltype(r.x)>(t.v[0]);
    r.y = static_cast<decltype(r.y)>(t.v[1]);
    r.z = static_cast<decltype(r.z)>(t.v[2]);
    r.w = static_cast<decltype(r.w)>(t.v[3]);
    return r;
  } else if constexpr (has_y<T>::value) {
    T r{};
    r.x = static_cast<decltype(r.x)>(t.v[0]);
    r.y = static_cast<decltype(r.y)>(t.v[1]);
    return r;
  } else {
    return static_cast<T>(t.v[0]);
  }
}

template <class T>
T texture_refused(const char* what) {
  fail(719, "%s: textures backed by CUDA arrays are not simulated%s (linear and pitch2D memory are; docs/cuda-simulator.md)",
       what, "");
  __builtin_unreachable();
}
DCSIM_LOCAL_END
}  // namespace dcsim

template <class T>
T tex1Dfetch(cudaTextureObject_t obj, int x) {
  const dcsim_texture& d = ::dcsim::texture_of(obj, "tex1Dfetch");
  if (d.kind != 2) ::dcsim::fail(719, "tex1Dfetch: the texture object is not linear memory%s%s");
  // no addressing or filtering: outside the texture a fetch returns zeros
  if (x < 0 || static_cast<uint64_t>(x) >= d.width) return ::dcsim::texel_as<T>(::dcsim::Texel{{0, 0, 0, 0}});
  return ::dcsim::texel_as<T>(::dcsim::load(d, x, 0));
}
template <class T>
T tex2D(cudaTextureObject_t obj, float x, float y) {
  const dcsim_texture& d = ::dcsim::texture_of(obj, "tex2D");
  if (d.kind != 3) ::dcsim::fail(719, "tex2D: the texture object is not pitch2D memory%s%s");
  return ::dcsim::texel_as<T>(::dcsim::sample(d, x, y));
}
template <class T>
T tex1D(cudaTextureObject_t, float) { return ::dcsim::texture_refused<T>("tex1D"); }
template <class T>
T tex3D(cudaTextureObject_t, float, float, float) { return ::dcsim::texture_refused<T>("tex3D"); }
template <class T>
T tex1DLod(cudaTextureObject_t, float, float) { return ::dcsim::texture_refused<T>("tex1DLod"); }
template <class T>
T tex2DLod(cudaTextureObject_t, float, float, float) { return ::dcsim::texture_refused<T>("tex2DLod"); }

"""What NVRTC is given for the C library headers a ``.cu`` file includes: ``<string.h>``, ``<time.h>``.

NVRTC has no C library headers: a kernel copied from a ``.cu`` file that includes ``<string.h>`` or
``<time.h>`` stops at "cannot open source file". Device code can call only a few of their functions:
``memcpy``/``memset`` and ``clock()`` (returning ``clock_t``) are NVRTC built-ins; the string functions
CUDA kernels write for themselves (``strlen``, ``strcmp``, ``memcmp``...) are given here as device
functions, so the include line can be replaced by this text (raw_kernel._without_host_headers).

The CUDA simulator compiles the same text with the host compiler, whose own ``<string.h>`` and
``<time.h>`` the shim has already included: there these definitions would clash with the C
library's, so they are skipped where the shim's ``DCSIM_ABI_VERSION`` is defined (the host's
functions do the same on the CPU).
"""

from __future__ import annotations

STRING_H = """#if !defined(DCSIM_ABI_VERSION) && !defined(DOTCOMPUTE_NVRTC_STRING_H)
#define DOTCOMPUTE_NVRTC_STRING_H
__device__ __forceinline__ size_t strlen(const char* s) {
  size_t n = 0;
  while (s[n]) ++n;
  return n;
}
__device__ __forceinline__ int strncmp(const char* a, const char* b, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];
    if (x != y) return x < y ? -1 : 1;
    if (!x) return 0;
  }
  return 0;
}
__device__ __forceinline__ int strcmp(const char* a, const char* b) { return strncmp(a, b, (size_t)-1); }
__device__ __forceinline__ char* strcpy(char* d, const char* s) {
  size_t i = 0;
  for (; s[i]; ++i) d[i] = s[i];
  d[i] = 0;
  return d;
}
__device__ __forceinline__ char* strncpy(char* d, const char* s, size_t n) {
  size_t i = 0;
  for (; i < n && s[i]; ++i) d[i] = s[i];
  for (; i < n; ++i) d[i] = 0;
  return d;
}
__device__ __forceinline__ char* strcat(char* d, const char* s) {
  strcpy(d + strlen(d), s);
  return d;
}
__device__ __forceinline__ char* strchr(const char* s, int c) {
  for (;; ++s) {
    if (*s == (char)c) return (char*)s;
    if (!*s) return 0;
  }
}
__device__ __forceinline__ int memcmp(const void* a, const void* b, size_t n) {
  const unsigned char* x = (const unsigned char*)a;
  const unsigned char* y = (const unsigned char*)b;
  for (size_t i = 0; i < n; ++i)
    if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
  return 0;
}
__device__ __forceinline__ void* memchr(const void* s, int c, size_t n) {
  const unsigned char* p = (const unsigned char*)s;
  for (size_t i = 0; i < n; ++i)
    if (p[i] == (unsigned char)c) return (void*)(p + i);
  return 0;
}
__device__ __forceinline__ void* memmove(void* d, const void* s, size_t n) {
  unsigned char* to = (unsigned char*)d;
  const unsigned char* from = (const unsigned char*)s;
  if (to < from) {
    for (size_t i = 0; i < n; ++i) to[i] = from[i];
  } else {
    for (size_t i = n; i-- > 0;) to[i] = from[i];
  }
  return d;
}
#endif
"""

# <cstring> also declares the functions in std (std::memcpy): NVRTC gets using-declarations, the
# simulator's host build the C++ header itself.
CSTRING = STRING_H + """#if defined(DCSIM_ABI_VERSION)
#include <cstring>
#elif !defined(DOTCOMPUTE_NVRTC_CSTRING)
#define DOTCOMPUTE_NVRTC_CSTRING
namespace std {
using ::memchr; using ::memcmp; using ::memcpy; using ::memmove; using ::memset; using ::strcat; using ::strchr;
using ::strcmp; using ::strcpy; using ::strlen; using ::strncmp; using ::strncpy;
}
#endif
"""

# clock() and clock_t are NVRTC built-ins; time_t is the type a copied kernel may still name.
TIME_H = """#if !defined(DCSIM_ABI_VERSION) && !defined(DOTCOMPUTE_NVRTC_TIME_H)
#define DOTCOMPUTE_NVRTC_TIME_H
typedef long long time_t;
#endif
"""

C_LIBRARY_HEADERS = {"string.h": STRING_H, "cstring": CSTRING,
                     "time.h": TIME_H, "ctime": TIME_H}

# Headers of CUDA libraries that dotcompute[cuda] does not install, with what a user needs to know
# when NVRTC cannot open them (raw_kernel's missing-header message).
LIBRARY_HEADER_HINTS = {
    "curand_kernel.h": "cuRAND's device API: its headers come with `pip install nvidia-curand-cu12` (or "
                       "dotcompute[cuda-libs]) or a CUDA toolkit, not with dotcompute[cuda]; the CUDA simulator "
                       "compiles those same headers (docs/cuda-simulator.md, cuRAND)",
}
LIBRARY_HEADER_HINTS["curand.h"] = LIBRARY_HEADER_HINTS["curand_kernel.h"]
LIBRARY_HEADER_HINTS["curand_philox4x32_x.h"] = LIBRARY_HEADER_HINTS["curand_kernel.h"]

// Kernels for the CPU backend tests, written by hand against
// <dotcompute/cpu_kernel_abi.h>. Raw-kernel argument convention: buffers are
// pointers, integer scalars int64.
#include <chrono>
#include <dotcompute/cpu_kernel_abi.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace {

template <typename T>
T arg(const dc_cpu_launch* launch, uint32_t i) {
  return *static_cast<const T*>(launch->args[i]);
}

uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

// Compare-and-swap addition for floating point (no fetch_add for floats in C++17).
template <typename T>
void atomic_add_fp(T* p, T v) {
  T old;
  __atomic_load(p, &old, __ATOMIC_RELAXED);
  T desired = old + v;
  while (!__atomic_compare_exchange(p, &old, &desired, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) desired = old + v;
}

void atomic_max_i32(int32_t* p, int32_t v) {
  int32_t old = __atomic_load_n(p, __ATOMIC_RELAXED);
  while (old < v && !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
}

}  // namespace

// out[i] = a[i] + b[i] for i < n.  (a, b, out: float32*, n: int64)
extern "C" void vector_add(const dc_cpu_launch* launch, uint64_t gb, uint64_t ge, void*) {
  const float* a = arg<const float*>(launch, 0);
  const float* b = arg<const float*>(launch, 1);
  float* out = arg<float*>(launch, 2);
  const uint64_t n = static_cast<uint64_t>(arg<int64_t>(launch, 3));
  const uint64_t lsz = launch->local_size[0];
  for (uint64_t g = gb; g < ge; ++g) {
    const uint64_t end = min_u64(min_u64((g + 1) * lsz, launch->global_size[0]), n);
    for (uint64_t i = g * lsz; i < end; ++i) out[i] = a[i] + b[i];
  }
}

// For every work-item (x, y): pos[y*W + x] = x * 100000 + y,
// local[y*W + x] = lx + 1000 * ly.  (pos, local: int64*, W = global_size[0])
extern "C" void index_2d(const dc_cpu_launch* launch, uint64_t gb, uint64_t ge, void*) {
  int64_t* pos = arg<int64_t*>(launch, 0);
  int64_t* local = arg<int64_t*>(launch, 1);
  const uint64_t W = launch->global_size[0];
  for (uint64_t g = gb; g < ge; ++g) {
    const uint64_t gx = g % launch->num_groups[0];
    const uint64_t gy = g / launch->num_groups[0] % launch->num_groups[1];
    for (uint64_t ly = 0; ly < launch->local_size[1]; ++ly) {
      const uint64_t y = gy * launch->local_size[1] + ly;
      if (y >= launch->global_size[1]) break;
      for (uint64_t lx = 0; lx < launch->local_size[0]; ++lx) {
        const uint64_t x = gx * launch->local_size[0] + lx;
        if (x >= W) break;
        pos[y * W + x] = static_cast<int64_t>(x * 100000 + y);
        local[y * W + x] = static_cast<int64_t>(lx + 1000 * ly);
      }
    }
  }
}

// Every work-item adds to shared counters.  (i32: int32*, i64: int64*,
// f32: float*, f64: double*, max: int32*)
extern "C" void atomics(const dc_cpu_launch* launch, uint64_t gb, uint64_t ge, void*) {
  int32_t* i32 = arg<int32_t*>(launch, 0);
  int64_t* i64 = arg<int64_t*>(launch, 1);
  float* f32 = arg<float*>(launch, 2);
  double* f64 = arg<double*>(launch, 3);
  int32_t* mx = arg<int32_t*>(launch, 4);
  const uint64_t lsz = launch->local_size[0];
  for (uint64_t g = gb; g < ge; ++g) {
    const uint64_t end = min_u64((g + 1) * lsz, launch->global_size[0]);
    for (uint64_t i = g * lsz; i < end; ++i) {
      __atomic_fetch_add(i32, 1, __ATOMIC_RELAXED);
      __atomic_fetch_add(i64, 3, __ATOMIC_RELAXED);
      atomic_add_fp(f32, 0.5f);
      atomic_add_fp(f64, 0.25);
      atomic_max_i32(mx, static_cast<int32_t>(i));
    }
  }
}

// Reverses each work-group's slice through dynamic work-group memory:
// out[g*L + l] = in[g*L + L-1-l]. bad[0] is set when the scratch is missing
// or not 64-byte aligned.  (in, out, bad: int32*)
extern "C" void reverse_groups(const dc_cpu_launch* launch, uint64_t gb, uint64_t ge, void* shared) {
  const int32_t* in = arg<const int32_t*>(launch, 0);
  int32_t* out = arg<int32_t*>(launch, 1);
  int32_t* bad = arg<int32_t*>(launch, 2);
  int32_t* tile = static_cast<int32_t*>(shared);
  if (tile == nullptr || reinterpret_cast<uintptr_t>(tile) % 64 != 0) {
    __atomic_store_n(bad, 1, __ATOMIC_RELAXED);
    return;
  }
  const uint64_t L = launch->local_size[0];
  for (uint64_t g = gb; g < ge; ++g) {
    for (uint64_t l = 0; l < L; ++l) tile[l] = in[g * L + l];
    // barrier()
    for (uint64_t l = 0; l < L; ++l) out[g * L + l] = tile[L - 1 - l];
  }
}

// x[i] = x[i] * mul + add (wrapping).  (x: uint64*, mul: int64, add: int64)
extern "C" void affine(const dc_cpu_launch* launch, uint64_t gb, uint64_t ge, void*) {
  uint64_t* x = arg<uint64_t*>(launch, 0);
  const uint64_t mul = static_cast<uint64_t>(arg<int64_t>(launch, 1));
  const uint64_t add = static_cast<uint64_t>(arg<int64_t>(launch, 2));
  const uint64_t lsz = launch->local_size[0];
  for (uint64_t g = gb; g < ge; ++g) {
    const uint64_t end = min_u64((g + 1) * lsz, launch->global_size[0]);
    for (uint64_t i = g * lsz; i < end; ++i) x[i] = x[i] * mul + add;
  }
}

// Sleeps `ms` milliseconds once per launch.  (ms: int64)
extern "C" void sleep_ms(const dc_cpu_launch* launch, uint64_t gb, uint64_t, void*) {
  if (gb == 0) usleep(static_cast<useconds_t>(arg<int64_t>(launch, 0) * 1000));
}

// Blocks until *flag != 0 (set by the host).  (flag: int32*)
extern "C" void wait_flag(const dc_cpu_launch* launch, uint64_t, uint64_t, void*) {
  const int32_t* flag = arg<const int32_t*>(launch, 0);
  while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) == 0) usleep(100);
}

// out[0] = value.  (out: int32*, value: int32)
extern "C" void set_value(const dc_cpu_launch* launch, uint64_t, uint64_t, void*) {
  __atomic_store_n(arg<int32_t*>(launch, 0), arg<int32_t>(launch, 1), __ATOMIC_RELEASE);
}

// out[0] = the Linux thread id of the thread that ran the (last) group.  (out: int64*)
extern "C" void record_thread(const dc_cpu_launch* launch, uint64_t, uint64_t, void*) {
  __atomic_store_n(arg<int64_t*>(launch, 0), static_cast<int64_t>(syscall(SYS_gettid)), __ATOMIC_RELEASE);
}

// The cheapest possible kernel: counts its launches.  (counter: int64*)
extern "C" void count_launch(const dc_cpu_launch* launch, uint64_t, uint64_t, void*) {
  ++*arg<int64_t*>(launch, 0);
}

// Reports `reason` through the launch's error channel from every group when it is non-zero.  (reason: int32)
extern "C" void fail_with(const dc_cpu_launch* launch, uint64_t, uint64_t, void*) {
  const int32_t reason = arg<int32_t>(launch, 0);
  if (reason != 0) DC_CPU_FAIL(launch, reason, "fail_with was asked to fail");
}

// Heavy items: each busy-waits `us` microseconds, then out[item] = the Linux thread id that ran it.
// (out: int64*, us: int64; 1-D)
extern "C" void busy_items(const dc_cpu_launch* launch, uint64_t gb, uint64_t ge, void*) {
  int64_t* out = arg<int64_t*>(launch, 0);
  const int64_t us = arg<int64_t>(launch, 1);
  const uint64_t ls = launch->local_size[0];
  const auto tid = static_cast<int64_t>(syscall(SYS_gettid));
  for (uint64_t g = gb; g < ge; ++g) {
    for (uint64_t i = g * ls; i < (g + 1) * ls && i < launch->global_size[0]; ++i) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
      while (std::chrono::steady_clock::now() < until) {
      }
      out[i] = tid;
    }
  }
}

// Busy-waiting helpers: a short spin before sleeping on a condition variable
// saves the futex round trip when work arrives back to back.
#pragma once

#include <chrono>
#include <cstdint>

namespace dccpu {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// Spins until `ready()` is true or `spin_us` microseconds passed; returns ready().
template <typename Ready>
bool spin_until(Ready&& ready, uint32_t spin_us) {
  if (ready()) return true;
  if (spin_us == 0) return false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(spin_us);
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (ready()) return true;
      cpu_relax();
    }
    if (std::chrono::steady_clock::now() >= deadline) return ready();
  }
}

}  // namespace dccpu

// What the host CPU is: its name, thread count and the SIMD instruction sets
// that run-time compiled kernels are built for.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dccpu {

struct HostInfo {
  std::string name;    // /proc/cpuinfo "model name" (or the best substitute)
  std::string vendor;  // /proc/cpuinfo "vendor_id" / "CPU implementer"
  std::string machine; // uname machine, e.g. "x86_64"
  std::string isa;     // widest SIMD level: "avx512", "avx2", "avx", "sse4.2", "sse2", "neon", "generic"
  std::vector<std::string> isa_flags;  // every relevant extension the CPU has
  std::vector<std::string> march_flags;  // compiler flags that target this CPU
  uint32_t simd_width = 1;  // float32 lanes of the widest vector unit
  uint32_t hardware_threads = 1;
  uint64_t memory_bytes = 0;
  // Everything that changes the generated machine code; part of cache keys.
  std::string arch() const;
};

HostInfo detect_host();

// Threads usable by this process (affinity mask), at least 1.
uint32_t usable_hardware_threads();

}  // namespace dccpu

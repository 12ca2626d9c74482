#include "host_info.h"

#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <thread>

namespace dccpu {

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

// First value of `key` in /proc/cpuinfo, or "".
std::string cpuinfo_field(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    if (trim(line.substr(0, colon)) == key) return trim(line.substr(colon + 1));
  }
  return "";
}

void detect_isa(HostInfo& h) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  struct Feature {
    const char* name;
    bool present;
  };
  // Only extensions that change what the vectoriser emits; the list is part
  // of the cache key, so it must be stable for one machine.
  const Feature features[] = {
      {"sse4.2", __builtin_cpu_supports("sse4.2") != 0},
      {"avx", __builtin_cpu_supports("avx") != 0},
      {"avx2", __builtin_cpu_supports("avx2") != 0},
      {"fma", __builtin_cpu_supports("fma") != 0},
      {"bmi2", __builtin_cpu_supports("bmi2") != 0},
      {"avx512f", __builtin_cpu_supports("avx512f") != 0},
      {"avx512dq", __builtin_cpu_supports("avx512dq") != 0},
      {"avx512bw", __builtin_cpu_supports("avx512bw") != 0},
      {"avx512vl", __builtin_cpu_supports("avx512vl") != 0},
  };
  for (const auto& f : features)
    if (f.present) h.isa_flags.emplace_back(f.name);
  auto has = [&](const char* n) {
    for (const auto& f : h.isa_flags)
      if (f == n) return true;
    return false;
  };
  if (has("avx512f")) {
    h.isa = "avx512";
    h.simd_width = 16;
  } else if (has("avx2")) {
    h.isa = "avx2";
    h.simd_width = 8;
  } else if (has("avx")) {
    h.isa = "avx";
    h.simd_width = 8;
  } else if (has("sse4.2")) {
    h.isa = "sse4.2";
    h.simd_width = 4;
  } else {
    h.isa = "sse2";
    h.simd_width = 4;
  }
  h.march_flags = {"-march=native"};
#elif defined(__aarch64__)
  h.isa = "neon";
  h.isa_flags = {"neon"};
  h.simd_width = 4;
  // GCC and Clang both accept -mcpu=native on AArch64; -march=native is newer.
  h.march_flags = {"-mcpu=native"};
#else
  h.isa = "generic";
  h.simd_width = 1;
#endif
}

}  // namespace

uint32_t usable_hardware_threads() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return static_cast<uint32_t>(n);
  }
  const unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? n : 1;
}

std::string HostInfo::arch() const {
  std::string s = machine;
  for (const auto& f : isa_flags) s += " " + f;
  for (const auto& f : march_flags) s += " " + f;
  // -march=native also picks extensions and tuning from the exact model.
  if (!march_flags.empty()) s += " (" + name + ")";
  return s;
}

HostInfo detect_host() {
  HostInfo h;
  struct utsname u {};
  h.machine = uname(&u) == 0 ? u.machine : "unknown";
  h.name = cpuinfo_field("model name");
  if (h.name.empty()) h.name = cpuinfo_field("Model");
  if (h.name.empty()) h.name = cpuinfo_field("Hardware");
  if (h.name.empty()) h.name = h.machine + " CPU";
  h.vendor = cpuinfo_field("vendor_id");
  if (h.vendor.empty()) h.vendor = cpuinfo_field("CPU implementer");
  if (h.vendor.empty()) h.vendor = "unknown";
  detect_isa(h);
  h.hardware_threads = usable_hardware_threads();
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) h.memory_bytes = static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
  return h;
}

}  // namespace dccpu

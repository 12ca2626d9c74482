// The module image the simulator builds and loads: a fixed header, then the
// CUDA C++ source, the device code NVRTC produced and the host shared object.
#pragma once

#include <cstdint>
#include <string>

namespace dcsim_lib {

constexpr char kImageMagic[8] = {'D', 'C', 'S', 'I', 'M', 'I', 'M', 'G'};
constexpr uint32_t kImageVersion = 1;

struct ImageHeader {
  char magic[8];
  uint32_t version;
  uint32_t flags;  // kImageFibers
  uint64_t source_bytes, device_code_bytes, host_bytes;
};
constexpr uint32_t kImageFibers = 1;  // some kernel needs barriers or warp intrinsics

// Static shared memory of `symbol` in a CUBIN (the size of its .nv.shared.<symbol> section), 0 if none.
uint64_t cubin_static_shared(const void* cubin, uint64_t size, const std::string& symbol);
// Registers per thread of `symbol` in a CUBIN (its EIATTR_REGCOUNT attribute), 0 if none (cubin.cpp).
int cubin_registers(const void* cubin, uint64_t size, const std::string& symbol);

}  // namespace dcsim_lib

// What NVRTC is asked to produce for a device: CUBIN for the exact SM when it
// can be loaded, PTX (which the driver JIT-compiles) otherwise.
#pragma once

#include <string>
#include <vector>

namespace dotcompute::cuda {

struct CompileTarget {
  bool ptx = false;
  std::string arch;    // "sm_90" or "compute_90": the --gpu-architecture value
  std::string reason;  // why PTX was chosen (empty for CUBIN)
};

// `sm` is the device's SM number (90), `driver_version` cuDriverGetVersion's
// value (12040), `nvrtc_version` in the same form, `supported` NVRTC's SM list.
// PTX when the driver is older than NVRTC (as the backend's spec asks) or when
// NVRTC cannot target the device (a GPU newer than NVRTC: PTX for the newest SM it knows).
CompileTarget choose_target(int sm, int driver_version, int nvrtc_version, const std::vector<int>& supported);

// Splits a compile-options string at whitespace (options never contain spaces themselves).
std::vector<std::string> split_options(const char* options);

}  // namespace dotcompute::cuda

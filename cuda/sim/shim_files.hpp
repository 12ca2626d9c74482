// The shim headers (shim/), embedded in the simulator library at build time so
// that a kernel's host build needs no file from the installation.
#pragma once

namespace dcsim_lib {

struct ShimFile {
  const char* name;  // relative path, e.g. "dcsim_cuda.h" or "include/assert.h"
  const char* text;
};
extern const ShimFile kShimFiles[];  // ends with {nullptr, nullptr}

}  // namespace dcsim_lib

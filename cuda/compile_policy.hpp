// What NVRTC is asked to produce for a device: CUBIN for the exact SM when it
// can be loaded, PTX (which the driver JIT-compiles) otherwise.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
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

// Kernel names with template arguments ("MatrixMul<32>", "reduce<float, 256>") reach the plugin as
// lines `//!dotcompute-name-expression <expr>` that dotcompute.RawKernel appends to the source (the
// compile entry point of the backend ABI carries no kernel name). Returns each <expr>, in order.
inline constexpr const char kNameExpressionMarker[] = "//!dotcompute-name-expression ";
std::vector<std::string> name_expressions_in(const std::string& source);

// A compiled module that needs name expressions is the driver's image behind a small header mapping
// each expression to its lowered (mangled) name, so that kernel_get("MatrixMul<32>") asks the driver
// for the kernel NVRTC instantiated. Images without expressions stay the driver's bytes as they are.
using NameMap = std::vector<std::pair<std::string, std::string>>;  // (expression, lowered name)
std::string wrap_with_names(const NameMap& names, const std::string& image);
// True when `data` is a wrapped image: fills `names` and points `image`/`image_size` at the inner bytes.
// False (and `names` empty) for an unwrapped image; `error` is set when the header is damaged.
bool unwrap_names(const void* data, size_t size, NameMap& names, const void*& image, size_t& image_size,
                  std::string& error);

}  // namespace dotcompute::cuda

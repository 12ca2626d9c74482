// Element types of buffers and scalar kernel parameters. Names are numpy's
// (np.dtype(x).name), so the bindings translate by name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "dotcompute/export.hpp"

namespace dotcompute {

enum class DType : uint8_t {
  Bool,
  Int8,
  UInt8,
  Int16,
  UInt16,
  Int32,
  UInt32,
  Int64,
  UInt64,
  Float16,
  Float32,
  Float64,
  // Storage only (host round-trips, asarray, empty): the FFTs and complex matmul need it.
  Complex64,
  Complex128,
};

inline constexpr int kNumDTypes = 14;

// Size of one element in bytes.
DOTCOMPUTE_API size_t itemsize(DType t) noexcept;
// numpy's name: "bool", "int8", ..., "float64".
DOTCOMPUTE_API const char* dtype_name(DType t) noexcept;
// The inverse of dtype_name; also accepts "bool_". Throws InvalidArgumentError.
DOTCOMPUTE_API DType dtype_from_name(const std::string& name);

DOTCOMPUTE_API bool is_integer(DType t) noexcept;  // bool excluded
DOTCOMPUTE_API bool is_signed(DType t) noexcept;
DOTCOMPUTE_API bool is_floating(DType t) noexcept;

}  // namespace dotcompute

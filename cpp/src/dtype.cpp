#include "dotcompute/dtype.hpp"

#include <cstring>

#include "dotcompute/errors.hpp"

namespace dotcompute {

namespace {
struct DTypeRow {
  const char* name;
  size_t size;
  bool integer;
  bool is_signed;
  bool floating;
};
// Indexed by DType.
constexpr DTypeRow kRows[kNumDTypes] = {
    {"bool", 1, false, false, false},    {"int8", 1, true, true, false},     {"uint8", 1, true, false, false},
    {"int16", 2, true, true, false},     {"uint16", 2, true, false, false},  {"int32", 4, true, true, false},
    {"uint32", 4, true, false, false},   {"int64", 8, true, true, false},    {"uint64", 8, true, false, false},
    {"float16", 2, false, true, true},   {"float32", 4, false, true, true},  {"float64", 8, false, true, true},
    {"complex64", 8, false, true, false}, {"complex128", 16, false, true, false},
};
const DTypeRow& row(DType t) { return kRows[static_cast<int>(t)]; }
}  // namespace

size_t itemsize(DType t) noexcept { return row(t).size; }
const char* dtype_name(DType t) noexcept { return row(t).name; }
bool is_integer(DType t) noexcept { return row(t).integer; }
bool is_signed(DType t) noexcept { return row(t).is_signed; }
bool is_floating(DType t) noexcept { return row(t).floating; }

DType dtype_from_name(const std::string& name) {
  if (name == "bool_") return DType::Bool;
  for (int i = 0; i < kNumDTypes; ++i) {
    if (name == kRows[i].name) return static_cast<DType>(i);
  }
  throw InvalidArgumentError("unsupported dtype '" + name +
                                 "' (expected bool, int8..int64, uint8..uint64, float16, float32, float64, complex64 or complex128)",
                             "dtype");
}

}  // namespace dotcompute

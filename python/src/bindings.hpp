// Shared helpers of the two translation units of dotcompute._native.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "dotcompute/dotcompute.hpp"

namespace dcpy {

namespace py = pybind11;

// numpy dtype -> core DType by kind and item size (numpy's type numbers are
// ambiguous for 64-bit ints across platforms; kind + size are not).
dotcompute::DType to_dtype(const py::dtype& dt, const char* what);
dotcompute::DType to_dtype_any(py::handle obj, const char* what);
py::dtype to_numpy(dotcompute::DType t);

// A core Buffer from a native Buffer or an object exposing one as `_native` (the Python runtime's
// Buffer); nullptr when `obj` is neither. When the wrapper's `_native` is made on access (a view's
// temporary copy), `keep` receives it: the caller holds it for as long as it uses the pointer.
dotcompute::Buffer* as_buffer(py::handle obj, py::object* keep = nullptr);
// A core Stream from None (nullptr), a native Stream or a wrapper's `_native`.
dotcompute::Stream* as_stream(py::handle obj);

// Work-item counts from an int or a sequence of 1..3 ints (local: None -> empty).
std::vector<int64_t> to_sizes(py::handle obj, const char* what);

void bind_launch(py::module_& m);
// LaunchPlan.fast and the FastLaunch type (fast_launch.cpp)
void bind_fast_launch(py::module_& m, py::class_<dotcompute::LaunchPlan, std::shared_ptr<dotcompute::LaunchPlan>>& plan);
void bind_dlpack(py::module_& m);

}  // namespace dcpy

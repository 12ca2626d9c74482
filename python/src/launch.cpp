// Kernels and launch plans: the per-call path from Python arguments to
// LaunchPlan::launch. It runs on every launch, so it touches each argument
// once with the cheapest checks first and allocates nothing for typical
// argument counts.
#include <pybind11/stl.h>

#include <array>
#include <string>
#include <vector>

#include "bindings.hpp"

namespace dc = dotcompute;

namespace dcpy {
namespace {

static_assert(sizeof(py::ssize_t) == sizeof(int64_t), "numpy shapes are handed to the core as int64");

std::string type_name(py::handle obj) { return py::str(py::type::of(obj).attr("__name__")).cast<std::string>(); }

std::string param_label(const dc::LaunchPlan& plan, size_t i) {
  const auto& params = plan.params();
  if (i < params.size() && !params[i].name.empty()) return "argument '" + params[i].name + "'";
  return "argument " + std::to_string(i);
}

dc::ParamSpec to_param(py::handle spec) {
  dc::ParamSpec p;
  const auto kind = py::getattr(spec, "kind").cast<std::string>();
  if (kind == "buffer") {
    p.kind = dc::ParamKind::Buffer;
  } else if (kind == "scalar") {
    p.kind = dc::ParamKind::Scalar;
  } else {
    throw py::value_error("ParamSpec.kind must be 'buffer' or 'scalar', got '" + kind + "'");
  }
  p.name = py::getattr(spec, "name").cast<std::string>();
  p.dtype = to_dtype_any(py::getattr(spec, "dtype"), p.name.c_str());
  p.ndim = py::getattr(spec, "ndim", py::int_(0)).cast<int>();
  p.written = py::getattr(spec, "written", py::bool_(false)).cast<bool>();
  return p;
}

// A Python or numpy integer for argument i. Integers travel to the core as int64; for a uint64 scalar
// parameter the int64 holds the value's 64 bits, so 2**63 .. 2**64-1 (hash seeds, masks) can be passed:
// the sign is checked here, where the Python value is known (the core takes any bits for uint64).
// Failures are InvalidArgumentErrors (dc.KernelTypeError naming the parameter), like every other
// argument that does not fit; they used to be a plain ValueError.
int64_t to_int64(py::handle obj, const dc::LaunchPlan& plan, size_t i) {
  py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(obj.ptr()));
  if (!index) throw py::error_already_set();
  const auto& params = plan.params();
  const bool u64 = i < params.size() && params[i].kind == dc::ParamKind::Scalar &&
                   params[i].dtype == dc::DType::UInt64;
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow == 0 && !(u64 && v < 0)) return static_cast<int64_t>(v);
  if (u64 && overflow > 0) {
    const unsigned long long u = PyLong_AsUnsignedLongLong(index.ptr());
    if (!(u == static_cast<unsigned long long>(-1) && PyErr_Occurred())) return static_cast<int64_t>(u);
    PyErr_Clear();
  }
  throw dc::InvalidArgumentError(param_label(plan, i) + ": the value " + py::str(index).cast<std::string>() +
                                     " does not fit in " + (u64 ? "uint64" : "64 bits"),
                                 i < params.size() ? params[i].name : std::string());
}

// numpy.generic, the base of every numpy scalar type (looked up once, with the GIL held; kept for
// the process's life, as numpy itself stays imported).
PyTypeObject* numpy_generic() {
  static PyTypeObject* generic = [] {
    py::object t = py::module_::import("numpy").attr("generic");
    return reinterpret_cast<PyTypeObject*>(t.release().ptr());
  }();
  return generic;
}

// A numpy scalar (np.float32(2.5), np.int64(3), np.bool_(True)) as an ArgValue.
dc::ArgValue numpy_scalar_arg(py::handle obj, const dc::LaunchPlan& plan, size_t i, bool* ok) {
  PyObject* p = obj.ptr();
  *ok = true;
  const char kind = py::dtype::from_args(py::getattr(obj, "dtype")).kind();
  if (kind == 'b') return PyObject_IsTrue(p) == 1;
  if (kind == 'i' || kind == 'u') return to_int64(obj, plan, i);
  if (kind == 'f') {
    const double v = PyFloat_AsDouble(p);
    if (v == -1.0 && PyErr_Occurred()) throw py::error_already_set();
    return v;
  }
  *ok = false;
  return dc::ArgValue{};
}

// One Python argument as a core ArgValue. Numbers first: they are cheapest to
// recognise; numpy scalars (which carry a dtype) next -- before the Buffer lookup, whose
// failed `_native` attribute lookup on a numpy scalar raised and cleared an AttributeError
// (4 us of a 5 us launch with a np.float32 argument, issue 24) -- then arrays and Buffers.
dc::ArgValue to_arg(py::handle obj, const dc::LaunchPlan& plan, size_t i, py::object& keep) {
  PyObject* p = obj.ptr();
  if (PyBool_Check(p)) return p == Py_True;
  if (PyLong_Check(p)) return to_int64(obj, plan, i);
  if (PyFloat_Check(p)) return PyFloat_AS_DOUBLE(p);
  if (PyObject_TypeCheck(p, numpy_generic())) {
    bool ok = false;
    dc::ArgValue v = numpy_scalar_arg(obj, plan, i, &ok);
    if (ok) return v;  // other numpy scalars (complex, strings...) fall through to the message below
  }
  if (py::isinstance<py::array>(obj)) {
    auto arr = py::reinterpret_borrow<py::array>(obj);
    dc::HostArray host;
    host.data = const_cast<void*>(arr.data());
    try {
      host.dtype = to_dtype(arr.dtype(), "");
    } catch (const dc::InvalidArgumentError&) {
      // Labelled only on failure: building the label costs more than the whole check.
      const std::string label = param_label(plan, i);
      host.dtype = to_dtype(arr.dtype(), label.c_str());
    }
    host.ndim = static_cast<int>(arr.ndim());
    host.shape = reinterpret_cast<const int64_t*>(arr.shape());
    host.contiguous = (arr.flags() & py::array::c_style) != 0;
    host.writable = arr.writeable();
    return host;
  }
  if (dc::Buffer* buf = as_buffer(obj, &keep)) return buf;
  if (py::hasattr(obj, "dtype")) {  // another object with a numpy dtype (as numpy scalars have)
    bool ok = false;
    dc::ArgValue v = numpy_scalar_arg(obj, plan, i, &ok);
    if (ok) return v;
  }
  throw dc::InvalidArgumentError(param_label(plan, i) + ": expected a dotcompute Buffer, a numpy array or a "
                                     "scalar, got " + type_name(obj),
                                 i < plan.params().size() ? plan.params()[i].name : std::string());
}

void launch(dc::LaunchPlan& plan, py::handle global_size, py::handle local_size, py::handle args,
            py::handle stream, uint32_t shared_bytes, bool cooperative) {
  dc::LaunchConfig config =
      dc::LaunchConfig::make(to_sizes(global_size, "global_size"), to_sizes(local_size, "local_size"), shared_bytes);
  // every block resident at once (CUDA's cuLaunchCooperativeKernel, for grid-wide synchronisation):
  // the backend refuses a grid that cannot be, with the driver's own error
  if (cooperative) config.flags |= DC_LAUNCH_COOPERATIVE;
  dc::Stream* s = as_stream(stream);

  py::object seq = py::reinterpret_steal<py::object>(PySequence_Fast(args.ptr(), "args must be a sequence"));
  if (!seq) throw py::error_already_set();
  const auto n = static_cast<size_t>(PySequence_Fast_GET_SIZE(seq.ptr()));
  PyObject** items = PySequence_Fast_ITEMS(seq.ptr());

  std::array<dc::ArgValue, 32> inline_args;
  std::vector<dc::ArgValue> heap_args;
  dc::ArgValue* values = inline_args.data();
  // native buffers made on access by an argument's `_native` (views): alive until the launch returns
  std::array<py::object, 32> inline_keep;
  std::vector<py::object> heap_keep;
  py::object* keep = inline_keep.data();
  if (n > inline_args.size()) {
    heap_args.resize(n);
    values = heap_args.data();
    heap_keep.resize(n);
    keep = heap_keep.data();
  }
  for (size_t i = 0; i < n; ++i) values[i] = to_arg(items[i], plan, i, keep[i]);

  // `seq` and `keep` hold every argument (and so its memory) until the launch returns; a queued
  // launch holds its buffers itself from then on.
  {
    py::gil_scoped_release release;
    plan.launch(config, values, n, s);
  }
}

py::dict param_dict(const dc::ParamSpec& p) {
  py::dict d;
  d["kind"] = p.kind == dc::ParamKind::Buffer ? "buffer" : "scalar";
  d["name"] = p.name;
  d["dtype"] = to_numpy(p.dtype);
  d["ndim"] = p.ndim;
  d["written"] = p.written;
  return d;
}

}  // namespace

void bind_launch(py::module_& m) {
  py::class_<dc::Kernel, std::shared_ptr<dc::Kernel>>(m, "Kernel")
      .def_property_readonly("name", &dc::Kernel::name)
      .def_property_readonly("accelerator", [](const dc::Kernel& k) { return k.accelerator().shared_from_this(); })
      // The plugin's dc_module (as an integer) for backend extensions such as cuda_ext.h's module_global.
      .def_property_readonly("module_handle",
                             [](const dc::Kernel& k) { return reinterpret_cast<uintptr_t>(k.module()->handle()); })
      .def(
          "plan",
          [](dc::Kernel& k, py::handle params, bool raw) {
            std::vector<dc::ParamSpec> specs;
            for (py::handle spec : py::iter(params)) specs.push_back(to_param(spec));
            py::gil_scoped_release release;
            return k.plan(std::move(specs), raw);
          },
          py::arg("params"), py::arg("raw") = false);

  py::class_<dc::LaunchPlan, std::shared_ptr<dc::LaunchPlan>> plan(m, "LaunchPlan");
  plan.def("launch", &launch, py::arg("global_size"), py::arg("local_size") = py::none(),
           py::arg("args") = py::tuple(), py::arg("stream") = py::none(), py::arg("shared_bytes") = 0,
           py::arg("cooperative") = false)
      .def_property_readonly("params",
                             [](const dc::LaunchPlan& p) {
                               py::list out;
                               for (const auto& spec : p.params()) out.append(param_dict(spec));
                               return out;
                             })
      .def_property_readonly("raw", &dc::LaunchPlan::raw)
      .def_property_readonly("expanded_count", &dc::LaunchPlan::expanded_count)
      .def_property_readonly("kernel", [](const dc::LaunchPlan& p) { return p.kernel().shared_from_this(); });
  bind_fast_launch(m, plan);
}

}  // namespace dcpy

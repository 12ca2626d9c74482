// The launch fast path: `LaunchPlan.fast(...)` makes a callable, once per launch entry, that the
// Python layers call as `fast(global_size, args)` for a launch with nothing but plain arguments.
//
// It is a C type with vectorcall (no pybind11 dispatcher, no keyword handling, no temporary
// vectors: about a third of the pybind11 call's cost). It only translates: exact Python ints,
// floats, bools and numpy scalars to ArgValues, exact `dc.Buffer`s to their core Buffer, the global
// size to a LaunchConfig; the checks (signature, index facts) and the launch are the core
// LaunchPlan's. Anything it does not recognise, and every argument error the core reports before
// running, returns False: the caller then takes its normal path, which words the error (naming the
// kernel the user wrote) or handles the case (numpy arrays, views, lazy arrays, staging). So the fast
// path changes no behaviour; a launch it takes returns True.
#include <Python.h>
#include <structmember.h>

#include <array>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <vector>

#include "bindings.hpp"

namespace dc = dotcompute;

namespace dcpy {
namespace {

constexpr size_t kFastParams = 16;  // longer signatures keep the normal path

// The exact numpy scalar types whose value is read in place (numpy's PyArrayScalar_VAL: the value
// follows the object header), looked up once with the GIL held and kept for the process's life.
struct NumpyScalars {
  PyTypeObject *f32, *f64, *i8, *i16, *i32, *i64, *u8, *u16, *u32, *u64, *b;
};

const NumpyScalars& numpy_scalars() {
  static const NumpyScalars types = [] {
    py::module_ np = py::module_::import("numpy");
    auto t = [&](const char* name) { return reinterpret_cast<PyTypeObject*>(py::object(np.attr(name)).release().ptr()); };
    return NumpyScalars{t("float32"), t("float64"), t("int8"),   t("int16"),  t("int32"), t("int64"),
                        t("uint8"),   t("uint16"),  t("uint32"), t("uint64"), t("bool_")};
  }();
  return types;
}

template <typename T>
T scalar_value(PyObject* obj) {
  T v;
  std::memcpy(&v, reinterpret_cast<const char*>(obj) + sizeof(PyObject), sizeof v);
  return v;
}

// An integer for a parameter of dtype `t`, as the normal path's to_int64 takes it: values outside
// int64 reach only a uint64 parameter (as their 64 bits), negative ones never do. False: not here.
bool int_arg(int64_t v, bool past_int64, dc::DType t, dc::ArgValue& out) {
  const bool u64 = t == dc::DType::UInt64;
  if (past_int64 ? !u64 : (u64 && v < 0)) return false;
  out = v;
  return true;
}

bool scalar_arg(PyObject* a, dc::DType t, dc::ArgValue& out) {
  PyTypeObject* type = Py_TYPE(a);
  if (type == &PyFloat_Type) {
    out = PyFloat_AS_DOUBLE(a);
    return true;
  }
  if (type == &PyLong_Type) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(a, &overflow);
    if (overflow != 0) return false;  // the normal path handles (or refuses) values past int64
    return int_arg(v, false, t, out);
  }
  if (type == &PyBool_Type) {
    out = a == Py_True;
    return true;
  }
  const NumpyScalars& np = numpy_scalars();
  if (type == np.f32) {
    out = static_cast<double>(scalar_value<float>(a));
  } else if (type == np.f64) {
    out = scalar_value<double>(a);
  } else if (type == np.i32) {
    return int_arg(scalar_value<int32_t>(a), false, t, out);
  } else if (type == np.i64) {
    return int_arg(scalar_value<int64_t>(a), false, t, out);
  } else if (type == np.u32) {
    return int_arg(scalar_value<uint32_t>(a), false, t, out);
  } else if (type == np.u64) {
    const uint64_t u = scalar_value<uint64_t>(a);
    return int_arg(static_cast<int64_t>(u), u > uint64_t(std::numeric_limits<int64_t>::max()), t, out);
  } else if (type == np.i8) {
    return int_arg(scalar_value<int8_t>(a), false, t, out);
  } else if (type == np.i16) {
    return int_arg(scalar_value<int16_t>(a), false, t, out);
  } else if (type == np.u8) {
    return int_arg(scalar_value<uint8_t>(a), false, t, out);
  } else if (type == np.u16) {
    return int_arg(scalar_value<uint16_t>(a), false, t, out);
  } else if (type == np.b) {
    out = scalar_value<uint8_t>(a) != 0;
  } else {
    return false;
  }
  return true;
}

// An exact int or a tuple of 1 to 3 exact ints, each positive, with fewer than 2**64 items in all
// (the checks of dotcompute/launch.py's _sizes, which words the failures).
bool read_sizes(PyObject* g, dc::LaunchConfig& c) {
  auto one = [](PyObject* v, uint64_t* out) {
    if (!PyLong_CheckExact(v)) return false;
    int overflow = 0;
    const long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow != 0 || x <= 0) return false;
    *out = static_cast<uint64_t>(x);
    return true;
  };
  if (PyLong_CheckExact(g)) {
    c.dims = 1;
    return one(g, &c.global_size[0]);
  }
  if (!PyTuple_CheckExact(g)) return false;
  const Py_ssize_t n = PyTuple_GET_SIZE(g);
  if (n < 1 || n > 3) return false;
  uint64_t items = 1;
  for (Py_ssize_t d = 0; d < n; ++d) {
    if (!one(PyTuple_GET_ITEM(g, d), &c.global_size[d])) return false;
    if (__builtin_mul_overflow(items, c.global_size[d], &items)) return false;
  }
  c.dims = static_cast<uint32_t>(n);
  return true;
}

struct Payload {
  std::shared_ptr<dc::LaunchPlan> plan;
  py::object buffer_type;                // the Python dc.Buffer class: only its exact instances
  py::object scalar_types;               // the tuple `want` points into (kept alive here)
  std::vector<PyTypeObject*> want;       // per parameter: the exact type a scalar must have, or null
  std::vector<uint8_t> is_buffer;
  std::vector<dc::DType> dtype;
};

struct FastLaunch {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  Payload* payload;
};

PyObject* fast_call(PyObject* self_obj, PyObject* const* argv, size_t nargsf, PyObject* kwnames) {
  if (PyVectorcall_NARGS(nargsf) != 2 || kwnames != nullptr) {
    PyErr_SetString(PyExc_TypeError, "FastLaunch takes (global_size, args)");
    return nullptr;
  }
  const Payload& p = *reinterpret_cast<FastLaunch*>(self_obj)->payload;
  dc::LaunchConfig config;
  if (!read_sizes(argv[0], config)) Py_RETURN_FALSE;
  PyObject* args = argv[1];
  if (!PyTuple_CheckExact(args) || static_cast<size_t>(PyTuple_GET_SIZE(args)) != p.is_buffer.size()) {
    Py_RETURN_FALSE;
  }
  const size_t n = p.is_buffer.size();
  std::array<dc::ArgValue, kFastParams> values;
  // a `_native` made on access stays alive until the launch returns (as_buffer's rule)
  std::array<py::object, kFastParams> keep;
  PyTypeObject* buffer_type = reinterpret_cast<PyTypeObject*>(p.buffer_type.ptr());
  for (size_t i = 0; i < n; ++i) {
    PyObject* a = PyTuple_GET_ITEM(args, i);
    if (p.is_buffer[i]) {
      if (Py_TYPE(a) != buffer_type) Py_RETURN_FALSE;
      dc::Buffer* b = as_buffer(a, &keep[i]);
      if (b == nullptr) Py_RETURN_FALSE;
      values[i] = b;
    } else {
      if (p.want[i] != nullptr && Py_TYPE(a) != p.want[i]) Py_RETURN_FALSE;
      if (!scalar_arg(a, p.dtype[i], values[i])) Py_RETURN_FALSE;
    }
  }
  if (!p.plan->indices_fit(config, values.data(), n)) Py_RETURN_FALSE;
  try {
    py::gil_scoped_release release;
    p.plan->launch(config, values.data(), n, nullptr);
  } catch (const dc::InvalidArgumentError&) {
    Py_RETURN_FALSE;  // checked before anything ran: the normal path raises it, worded for the user
  } catch (const dc::NeedsStaging&) {
    Py_RETURN_FALSE;
  } catch (...) {
    py::detail::try_translate_exceptions();
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "dotcompute: unknown C++ exception in a launch");
    return nullptr;
  }
  Py_RETURN_TRUE;
}

void fast_dealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  delete reinterpret_cast<FastLaunch*>(self)->payload;
  type->tp_free(self);
  Py_DECREF(type);
}

PyMemberDef fast_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, static_cast<Py_ssize_t>(offsetof(FastLaunch, vectorcall)), READONLY,
     nullptr},
    {nullptr, 0, 0, 0, nullptr}};

PyType_Slot fast_slots[] = {{Py_tp_dealloc, reinterpret_cast<void*>(fast_dealloc)},
                            {Py_tp_call, reinterpret_cast<void*>(PyVectorcall_Call)},
                            {Py_tp_members, fast_members},
                            {Py_tp_doc, const_cast<char*>("A launch entry's fast path: fast(global_size, args) "
                                                          "-> True if it launched, False for the normal path")},
                            {0, nullptr}};

PyType_Spec fast_spec = {"dotcompute._native.FastLaunch", sizeof(FastLaunch), 0,
                         Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_DISALLOW_INSTANTIATION, fast_slots};

PyTypeObject* g_fast_type = nullptr;

py::object make_fast(const std::shared_ptr<dc::LaunchPlan>& plan, py::object buffer_type, py::tuple scalar_types,
                     py::iterable facts) {
  if (plan->raw()) throw py::value_error("a raw launch plan has no fast path");
  const auto& params = plan->params();
  if (params.size() > kFastParams) return py::none();
  if (scalar_types.size() != params.size()) {
    throw py::value_error("scalar_types needs one entry per parameter (" + std::to_string(params.size()) + ")");
  }
  if (!PyType_Check(buffer_type.ptr())) throw py::type_error("buffer_type must be a class");
  std::vector<dc::IndexFact> found;
  for (py::handle f : facts) {
    auto t = py::reinterpret_borrow<py::tuple>(f);
    if (t.size() != 5) throw py::value_error("an index fact is (arg, dim, gid, scale, offset)");
    found.push_back(dc::IndexFact{t[0].cast<uint32_t>(), t[1].cast<uint32_t>(), t[2].cast<uint32_t>(),
                                  t[3].cast<int64_t>(), t[4].cast<int64_t>()});
  }
  auto payload = std::make_unique<Payload>();
  payload->plan = plan;
  payload->buffer_type = std::move(buffer_type);
  payload->scalar_types = scalar_types;
  for (size_t i = 0; i < params.size(); ++i) {
    py::handle want = scalar_types[i];
    if (!want.is_none() && !PyType_Check(want.ptr())) throw py::type_error("scalar_types holds classes or None");
    payload->want.push_back(want.is_none() ? nullptr : reinterpret_cast<PyTypeObject*>(want.ptr()));
    payload->is_buffer.push_back(params[i].kind == dc::ParamKind::Buffer);
    payload->dtype.push_back(params[i].dtype);
  }
  numpy_scalars();  // looked up now, with the GIL held, not on the first launch
  plan->set_index_facts(std::move(found));
  PyObject* obj = PyType_GenericAlloc(g_fast_type, 0);
  if (obj == nullptr) throw py::error_already_set();
  auto* fast = reinterpret_cast<FastLaunch*>(obj);
  fast->vectorcall = fast_call;
  fast->payload = payload.release();
  return py::reinterpret_steal<py::object>(obj);
}

}  // namespace

void bind_fast_launch(py::module_& m, py::class_<dc::LaunchPlan, std::shared_ptr<dc::LaunchPlan>>& plan) {
  g_fast_type = reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&fast_spec));
  if (g_fast_type == nullptr) throw py::error_already_set();
  m.attr("FastLaunch") = py::handle(reinterpret_cast<PyObject*>(g_fast_type));
  plan.def("fast", &make_fast, py::arg("buffer_type"), py::arg("scalar_types"), py::arg("facts") = py::tuple(),
           "The fast path of this plan (see python/src/fast_launch.cpp), or None for more than 16 parameters. "
           "buffer_type: the Python Buffer class whose exact instances it takes; scalar_types: per parameter, "
           "the exact type a scalar argument must have (None: any int, float, bool or numpy scalar); facts: "
           "(arg, dim, gid, scale, offset) unguarded indexings checked against the buffers' extents");
}

}  // namespace dcpy

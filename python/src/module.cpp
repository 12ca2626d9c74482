// dotcompute._native: the runtime objects of the C++ core, translated for Python.
//
// Only translation lives here: Python objects to core types and back, the GIL
// released around everything that may block (compiles, copies, waits,
// launches, plugin loading), and core exceptions raised as the classes of
// dotcompute.errors. Behaviour belongs in the core or in dotcompute.runtime.
#include <pybind11/stl.h>

#include <cstring>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "dotcompute/blocking.hpp"

namespace dc = dotcompute;

namespace dcpy {

// Set once at import: the exact native Buffer type and the interned "_native"
// name, so the per-argument checks on the launch path are pointer compares.
static PyTypeObject* g_buffer_type = nullptr;
static PyObject* g_native_name = nullptr;

namespace {

// The Python exception classes, looked up once at import and kept for the
// life of the process (translators run after module teardown has begun too,
// so they must not depend on objects that could be collected).
struct ErrorClasses {
  py::handle base, compilation, unavailable, oom, launch, plugin, type_error;
};
ErrorClasses* g_errors = nullptr;

void raise_instance(const py::object& exc) { PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr()); }

// Builds and raises `cls(*args)`; if building it fails, that error is raised instead.
template <typename... Args>
void raise(py::handle cls, Args&&... args) {
  try {
    raise_instance(cls(std::forward<Args>(args)...));
  } catch (py::error_already_set& e) {
    e.restore();
  }
}

void translate(std::exception_ptr p) {
  try {
    if (p) std::rethrow_exception(p);
  } catch (const dc::CompilationError& e) {
    raise(g_errors->compilation, e.what(), e.log(), e.source());
  } catch (const dc::BackendUnavailableError& e) {
    raise(g_errors->unavailable, e.what(), e.reason());
  } catch (const dc::OutOfMemoryError& e) {
    try {
      py::object exc = g_errors->oom(e.what());
      exc.attr("requested") = e.requested();
      exc.attr("in_use") = e.in_use();
      exc.attr("reserved") = e.reserved();
      raise_instance(exc);
    } catch (py::error_already_set& err) {
      err.restore();
    }
  } catch (const dc::LaunchError& e) {
    raise(g_errors->launch, e.what());
  } catch (const dc::PluginError& e) {
    raise(g_errors->plugin, e.what());
  } catch (const dc::InvalidArgumentError& e) {
    try {
      py::object exc = g_errors->type_error(e.what());
      exc.attr("param") = e.param();
      raise_instance(exc);
    } catch (py::error_already_set& err) {
      err.restore();
    }
  } catch (const dc::NeedsStaging& e) {
    // Imported on use: dotcompute.runtime imports this module, not the reverse.
    try {
      py::object cls = py::module_::import("dotcompute.runtime.staging").attr("NeedsStaging");
      raise(cls, e.what(), e.param(), e.index());
    } catch (py::error_already_set& err) {
      err.restore();
    }
  } catch (const dc::Error& e) {
    raise(g_errors->base, e.what());
  }
}

void register_errors() {
  py::module_ errors = py::module_::import("dotcompute.errors");
  auto cls = [&](const char* name) { return py::object(errors.attr(name)).release(); };
  g_errors = new ErrorClasses{cls("DotComputeError"),         cls("CompilationError"), cls("BackendUnavailableError"),
                              cls("OutOfMemoryError"),        cls("LaunchError"),      cls("PluginError"),
                              cls("KernelTypeError")};
  py::register_exception_translator(&translate);
}

py::tuple shape_tuple(const dc::Shape& shape) {
  py::tuple t(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) t[i] = py::int_(shape[i]);
  return t;
}

dc::Shape to_shape(py::handle obj) {
  dc::Shape shape;
  if (PyLong_Check(obj.ptr()) || PyIndex_Check(obj.ptr())) {
    shape.push_back(py::cast<int64_t>(py::reinterpret_steal<py::object>(PyNumber_Index(obj.ptr()))));
    return shape;
  }
  for (py::handle item : py::iter(obj)) shape.push_back(py::cast<int64_t>(item));
  return shape;
}

py::dict info_dict(const dc::DeviceInfo& info) {
  py::dict d;
  d["name"] = info.name;
  d["vendor"] = info.vendor;
  d["arch"] = info.arch;
  d["type"] = info.type;
  d["global_memory_bytes"] = info.global_memory_bytes;
  d["local_memory_bytes"] = info.local_memory_bytes;
  d["compute_units"] = info.compute_units;
  d["max_work_group_size"] = info.max_work_group_size;
  d["max_work_item_sizes"] =
      py::make_tuple(info.max_work_item_sizes[0], info.max_work_item_sizes[1], info.max_work_item_sizes[2]);
  d["simd_width"] = info.simd_width;
  d["features"] = info.features;
  d["extra_json"] = info.extra_json;
  return d;
}

py::dict memory_stats(const dc::MemoryStats& s) {
  py::dict d;
  d["in_use"] = s.in_use;
  d["reserved"] = s.reserved;
  d["peak"] = s.peak;
  d["peak_reserved"] = s.peak_reserved;
  d["hits"] = s.hits;
  d["misses"] = s.misses;
  d["allocations"] = s.allocations;
  d["frees"] = s.frees;
  d["limit"] = s.limit;
  return d;
}

// A view of the buffer's host data; the array keeps the buffer alive.
py::array host_view(const std::shared_ptr<dc::Buffer>& self, bool writable) {
  void* data = nullptr;
  {
    py::gil_scoped_release release;
    data = self->host_data();
  }
  std::vector<py::ssize_t> shape(self->shape().begin(), self->shape().end());
  py::array arr(to_numpy(self->dtype()), shape, data, py::cast(self));
  if (!writable) arr.attr("flags").attr("writeable") = false;
  return arr;
}

// What to add to a buffer's root handle for the buffer itself: 0, or a view's offset where handles
// are addresses.
uint64_t view_shift(const dc::Buffer& b, const char* what) {
  const uint64_t offset = b.byte_offset();
  if (offset == 0) return 0;
  const std::string& backend = b.accelerator().backend();
  if (backend == "cpu" || backend == "cuda") return offset;
  throw dc::InvalidArgumentError(std::string(what) + ": a view " + std::to_string(offset) +
                                     " bytes into its buffer has no handle of its own on " + b.accelerator().id() +
                                     " (launches pass it as a region of the buffer)",
                                 "buffer");
}

// Host memory of `arr` for a whole-buffer copy: C-contiguous and exactly nbytes long.
void check_host_array(const dc::Buffer& buf, const py::array& arr, const char* what) {
  if (!(arr.flags() & py::array::c_style))
    throw py::value_error(std::string(what) + ": the numpy array must be C-contiguous");
  const auto bytes = static_cast<uint64_t>(arr.nbytes());
  if (bytes != buf.nbytes())
    throw py::value_error(std::string(what) + ": the numpy array has " + std::to_string(bytes) +
                          " bytes, the buffer " + std::to_string(buf.nbytes()));
}

void bind_runtime(py::module_& m) {
  py::class_<dc::BackendStatus>(m, "BackendStatus")
      .def_readonly("name", &dc::BackendStatus::name)
      .def_readonly("version", &dc::BackendStatus::version)
      .def_readonly("library", &dc::BackendStatus::library)
      .def_readonly("manifest", &dc::BackendStatus::manifest)
      .def_readonly("available", &dc::BackendStatus::available)
      .def_readonly("reason", &dc::BackendStatus::reason)
      .def_readonly("abi_version", &dc::BackendStatus::abi_version)
      .def_readonly("device_count", &dc::BackendStatus::device_count);

  m.def("version", [] { return std::string(dc::version()); });
  m.def("backends", [] { return dc::Runtime::instance().backends(); }, py::call_guard<py::gil_scoped_release>());
  m.def("devices", [] { return dc::Runtime::instance().devices(); }, py::call_guard<py::gil_scoped_release>());
  m.def("accelerator", [](const std::string& spec) { return dc::Runtime::instance().accelerator(spec); },
        py::arg("spec"), py::call_guard<py::gil_scoped_release>());
  m.def("load_plugin", [](const std::string& path) { return dc::Runtime::instance().load_plugin(path); },
        py::arg("path"), py::call_guard<py::gil_scoped_release>());
  m.def("unload_plugin", [](const std::string& name) { dc::Runtime::instance().unload_plugin(name); },
        py::arg("name"), py::call_guard<py::gil_scoped_release>());

  m.def(
      "plugin_symbol",
      [](const std::string& backend, const std::string& symbol) {
        return reinterpret_cast<uintptr_t>(dc::Runtime::instance().plugin_symbol(backend, symbol));
      },
      py::arg("backend"), py::arg("symbol"), py::call_guard<py::gil_scoped_release>());
  m.def("cache_dir", [] { return dc::Runtime::instance().cache().dir(); });
  m.def("cache_max_bytes", [] { return dc::Runtime::instance().cache().max_bytes(); });
  m.def("cache_warning", [] { return dc::Runtime::instance().cache().warning(); });
  m.def("set_cache_max_bytes", [](uint64_t bytes) { dc::Runtime::instance().cache().set_max_bytes(bytes); },
        py::arg("bytes"), py::call_guard<py::gil_scoped_release>());
  m.def("cache_stats", [] {
    dc::CacheStats s;
    {
      py::gil_scoped_release release;
      s = dc::Runtime::instance().cache().stats();
    }
    py::dict d;
    d["memory_hits"] = s.memory_hits;
    d["disk_hits"] = s.disk_hits;
    d["misses"] = s.misses;
    d["entries"] = s.entries;
    d["bytes"] = s.bytes;
    return d;
  });
  m.def("cache_clear", [] { dc::Runtime::instance().cache().clear(); }, py::call_guard<py::gil_scoped_release>());
  m.def("cache_evict", [] { dc::Runtime::instance().cache().evict(); }, py::call_guard<py::gil_scoped_release>());

  py::dict features;
  features["fp64"] = DC_FEATURE_FP64;
  features["fp16"] = DC_FEATURE_FP16;
  features["int64_atomics"] = DC_FEATURE_INT64_ATOMICS;
  features["float_atomics"] = DC_FEATURE_FLOAT_ATOMICS;
  features["unified_memory"] = DC_FEATURE_UNIFIED_MEMORY;
  features["cooperative_launch"] = DC_FEATURE_COOPERATIVE_LAUNCH;
  features["managed_memory"] = DC_FEATURE_MANAGED_MEMORY;
  features["host_visible_memory"] = DC_FEATURE_HOST_VISIBLE_MEMORY;
  m.attr("FEATURES") = features;
  m.attr("BACKEND_ABI_VERSION") = DC_BACKEND_ABI_VERSION;
}

void bind_objects(py::module_& m) {
  py::class_<dc::Accelerator, std::shared_ptr<dc::Accelerator>>(m, "Accelerator")
      .def_property_readonly("id", &dc::Accelerator::id)
      .def_property_readonly("backend", &dc::Accelerator::backend)
      .def_property_readonly("index", &dc::Accelerator::index)
      .def_property_readonly("name", &dc::Accelerator::name)
      .def_property_readonly("type", &dc::Accelerator::type)
      .def_property_readonly("unified_memory", &dc::Accelerator::unified_memory)
      .def_property_readonly("host_visible_memory", &dc::Accelerator::host_visible_memory)
      .def_property_readonly("compiler_identity", &dc::Accelerator::compiler_identity)
      .def_property_readonly("info", [](const dc::Accelerator& a) { return info_dict(a.info()); })
      // The accelerator owns its default stream through a unique_ptr, so no shared_ptr owns it and
      // shared_from_this() fails: a shared_ptr return (even default_stream_ptr's aliasing one, whose
      // holder pybind11 discards for enable_shared_from_this types) would make pybind11 build an
      // owning holder of its own and delete the stream with the Python object. Return a reference
      // that keeps the accelerator alive instead.
      .def_property_readonly(
          "default_stream", [](dc::Accelerator& a) { return &a.default_stream(); },
          py::return_value_policy::reference_internal)
      .def("create_stream", &dc::Accelerator::create_stream, py::call_guard<py::gil_scoped_release>())
      .def("create_event", &dc::Accelerator::create_event, py::call_guard<py::gil_scoped_release>())
      .def(
          "allocate",
          [](dc::Accelerator& a, py::handle shape, py::handle dtype) {
            dc::Shape s = to_shape(shape);
            dc::DType t = to_dtype_any(dtype, "dtype");
            py::gil_scoped_release release;
            return a.allocate(s, t);
          },
          py::arg("shape"), py::arg("dtype"))
      .def("compile", &dc::Accelerator::compile, py::arg("source"), py::arg("entry"), py::arg("options") = "",
           py::call_guard<py::gil_scoped_release>())
      .def("synchronize", &dc::Accelerator::synchronize, py::call_guard<py::gil_scoped_release>())
      // The cl_context / CUcontext of the device (native_handle in backend_abi.h), for vendor libraries.
      .def("native_context", [](const dc::Accelerator& a) { return a.native_handle(DC_NATIVE_CONTEXT, 0); },
           py::call_guard<py::gil_scoped_release>())
      .def("memory_stats", [](dc::Accelerator& a) { return memory_stats(a.memory().stats()); })
      .def("memory_trim", [](dc::Accelerator& a) { a.memory().trim(); }, py::call_guard<py::gil_scoped_release>())
      .def_property(
          "memory_limit", [](dc::Accelerator& a) { return a.memory().limit(); },
          [](dc::Accelerator& a, uint64_t bytes) {
            py::gil_scoped_release release;
            a.memory().set_limit(bytes);
          });

  py::class_<dc::Buffer, std::shared_ptr<dc::Buffer>> buffer(m, "Buffer");
  g_buffer_type = reinterpret_cast<PyTypeObject*>(buffer.ptr());
  g_native_name = PyUnicode_InternFromString("_native");
  buffer
      .def_property_readonly("shape", [](const dc::Buffer& b) { return shape_tuple(b.shape()); })
      .def_property_readonly("ndim", &dc::Buffer::ndim)
      .def_property_readonly("dtype", [](const dc::Buffer& b) { return to_numpy(b.dtype()); })
      .def_property_readonly("size", &dc::Buffer::size)
      .def_property_readonly("nbytes", &dc::Buffer::nbytes)
      .def_property_readonly("state", [](const dc::Buffer& b) { return std::string(dc::transfer_state_name(b.state())); })
      .def_property_readonly("accelerator", &dc::Buffer::accelerator_ptr)
      // A view's handle is its root's plus its offset where handles are addresses (cpu, cuda);
      // elsewhere (a cl_mem, an MTLBuffer) a view at an offset has none of its own: refused.
      .def("device_ptr", [](dc::Buffer& b) { return b.device_ptr() + view_shift(b, "device_ptr"); },
           py::call_guard<py::gil_scoped_release>())
      // The cl_mem / CUdeviceptr, current for work on the default stream (a newer host copy is uploaded).
      .def("native_handle",
           [](dc::Buffer& b) {
             const uint64_t shift = view_shift(b, "native_handle");
             return b.accelerator().native_handle(DC_NATIVE_BUFFER, b.device_ptr()) + shift;
           },
           py::call_guard<py::gil_scoped_release>())
      .def("host_view", &host_view, py::arg("writable") = true)
      .def_property_readonly("host_visible", &dc::Buffer::host_visible)
      .def("mark_host_dirty", &dc::Buffer::mark_host_dirty)
      .def("mark_aliased", &dc::Buffer::mark_aliased)
      .def_property_readonly("aliased", &dc::Buffer::aliased)
      .def("mark_device_dirty", &dc::Buffer::mark_device_dirty, py::arg("stream"))
      // None for the default stream: pybind11 gives an enable_shared_from_this object that no
      // shared_ptr owns (the accelerator owns its default stream) an owning holder of its own,
      // which would delete it; Python reaches it through accelerator.default_stream instead.
      .def_property_readonly("last_stream",
                             [](const dc::Buffer& b) -> std::shared_ptr<dc::Stream> {
                               auto s = b.last_stream();
                               return s && !s->is_default() ? s : nullptr;
                             })
      .def(
          "copy_from_host",
          [](dc::Buffer& b, const py::array& arr) {
            check_host_array(b, arr, "copy_from_host");
            const void* src = arr.data();
            const auto bytes = static_cast<uint64_t>(arr.nbytes());
            py::gil_scoped_release release;
            b.copy_from_host(src, bytes);
          },
          py::arg("array"))
      .def(
          "copy_to_host",
          [](dc::Buffer& b, py::array& arr) {
            check_host_array(b, arr, "copy_to_host");
            if (!arr.writeable()) throw py::value_error("copy_to_host: the numpy array is read-only");
            void* dst = arr.mutable_data();
            const auto bytes = static_cast<uint64_t>(arr.nbytes());
            py::gil_scoped_release release;
            b.copy_to_host(dst, bytes);
          },
          py::arg("array"))
      .def("fill_bytes", &dc::Buffer::fill_bytes, py::arg("value"), py::call_guard<py::gil_scoped_release>())
      // A view: `shape` C-contiguous elements of this buffer's memory from `byte_offset` on (no copy;
      // launches pass it as an offset into the same allocation, writes land here).
      .def(
          "view",
          [](const std::shared_ptr<dc::Buffer>& self, uint64_t byte_offset, py::handle shape) {
            return dc::Buffer::view(self, byte_offset, to_shape(shape));
          },
          py::arg("byte_offset"), py::arg("shape"))
      .def_property_readonly("byte_offset", &dc::Buffer::byte_offset)
      .def_property_readonly("is_view", [](const dc::Buffer& b) { return b.view_root() != nullptr; });

  // A buffer over `kernel`'s module memory at device address `ptr` (a __constant__/__device__
  // variable that the CUDA extension's module_global found); it keeps the kernel, hence its
  // module, alive. The caller has checked that shape x dtype fits the variable.
  m.def(
      "borrow_buffer",
      [](const std::shared_ptr<dc::Kernel>& kernel, uint64_t ptr, py::handle shape, py::handle dtype) {
        if (!kernel) throw py::value_error("borrow_buffer: kernel is None");
        dc::Shape s = to_shape(shape);
        dc::DType t = to_dtype_any(dtype, "dtype");
        return dc::Buffer::borrow(kernel->accelerator().shared_from_this(), ptr, s, t, kernel);
      },
      py::arg("kernel"), py::arg("ptr"), py::arg("shape"), py::arg("dtype"));

  py::class_<dc::Stream, std::shared_ptr<dc::Stream>>(m, "Stream")
      .def("synchronize", &dc::Stream::synchronize, py::call_guard<py::gil_scoped_release>())
      .def("record", &dc::Stream::record, py::call_guard<py::gil_scoped_release>())
      .def("wait", &dc::Stream::wait, py::arg("event"), py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("is_default", &dc::Stream::is_default)
      .def_property_readonly("handle", [](const dc::Stream& s) { return reinterpret_cast<uintptr_t>(s.handle()); })
      // The cl_command_queue / CUstream behind the stream, for vendor libraries enqueuing in order with it.
      .def("native_handle",
           [](const dc::Stream& s) {
             return s.accelerator().native_handle(DC_NATIVE_STREAM,
                                                  static_cast<uint64_t>(reinterpret_cast<uintptr_t>(s.handle())));
           },
           py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("accelerator",
                             [](const dc::Stream& s) { return s.accelerator().shared_from_this(); });

  py::class_<dc::Event, std::shared_ptr<dc::Event>>(m, "Event")
      .def("synchronize", &dc::Event::synchronize, py::call_guard<py::gil_scoped_release>())
      .def("query", &dc::Event::query, py::call_guard<py::gil_scoped_release>())
      .def("elapsed_ms", &dc::Event::elapsed_ms, py::arg("end"), py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("accelerator",
                             [](const dc::Event& e) { return e.accelerator().shared_from_this(); });
}

}  // namespace

dc::DType to_dtype(const py::dtype& dt, const char* what) {
  const char kind = dt.kind();
  const char order = dt.byteorder();
  const auto size = dt.itemsize();
  const bool native_order = order == '=' || order == '|' || (order == '<') == (PY_LITTLE_ENDIAN != 0);
  if (native_order) {
    switch (kind) {
      case 'b':
        if (size == 1) return dc::DType::Bool;
        break;
      case 'i':
        if (size == 1) return dc::DType::Int8;
        if (size == 2) return dc::DType::Int16;
        if (size == 4) return dc::DType::Int32;
        if (size == 8) return dc::DType::Int64;
        break;
      case 'u':
        if (size == 1) return dc::DType::UInt8;
        if (size == 2) return dc::DType::UInt16;
        if (size == 4) return dc::DType::UInt32;
        if (size == 8) return dc::DType::UInt64;
        break;
      case 'f':
        if (size == 2) return dc::DType::Float16;
        if (size == 4) return dc::DType::Float32;
        if (size == 8) return dc::DType::Float64;
        break;
      case 'c':
        if (size == 8) return dc::DType::Complex64;
        if (size == 16) return dc::DType::Complex128;
        break;
      default:
        break;
    }
  }
  throw dc::InvalidArgumentError(std::string(what) + ": dtype " + py::str(dt).cast<std::string>() +
                                     " is not supported (bool, int8..int64, uint8..uint64, float16/32/64, complex64/128 "
                                     "in native byte order)",
                                 what);
}

dc::DType to_dtype_any(py::handle obj, const char* what) {
  if (py::isinstance<py::dtype>(obj)) return to_dtype(py::reinterpret_borrow<py::dtype>(obj), what);
  return to_dtype(py::dtype::from_args(py::reinterpret_borrow<py::object>(obj)), what);
}

py::dtype to_numpy(dc::DType t) {
  // Cached: building a dtype from its name is slow next to a property read.
  static py::handle cache[dc::kNumDTypes] = {};
  auto i = static_cast<size_t>(t);
  if (!cache[i]) cache[i] = py::dtype(std::string(dc::dtype_name(t))).release();
  return py::reinterpret_borrow<py::dtype>(cache[i]);
}

static dc::Buffer* native_buffer(PyObject* obj) {
  if (Py_TYPE(obj) == g_buffer_type) return py::handle(obj).cast<dc::Buffer*>();
  return nullptr;
}

dc::Buffer* as_buffer(py::handle obj, py::object* keep) {
  if (dc::Buffer* b = native_buffer(obj.ptr())) return b;
  PyObject* inner = PyObject_GetAttr(obj.ptr(), g_native_name);
  if (inner == nullptr) {
    PyErr_Clear();
    return nullptr;
  }
  py::object holder = py::reinterpret_steal<py::object>(inner);
  dc::Buffer* b = native_buffer(holder.ptr());
  // Usually the wrapper keeps its native object alive; a `_native` made on access (a view's copy)
  // lives only in `holder`, so it goes to the caller's `keep` rather than dying here.
  if (b != nullptr && keep != nullptr) *keep = std::move(holder);
  return b;
}

dc::Stream* as_stream(py::handle obj) {
  if (obj.is_none()) return nullptr;
  if (py::isinstance<dc::Stream>(obj)) return obj.cast<dc::Stream*>();
  py::object inner = py::getattr(obj, "_native", py::none());
  if (py::isinstance<dc::Stream>(inner)) return inner.cast<dc::Stream*>();
  throw py::type_error("stream: expected a dotcompute Stream or None, got " +
                       py::str(py::type::of(obj)).cast<std::string>());
}

std::vector<int64_t> to_sizes(py::handle obj, const char* what) {
  std::vector<int64_t> sizes;
  if (obj.is_none()) return sizes;
  if (PyLong_Check(obj.ptr()) || PyIndex_Check(obj.ptr())) {
    sizes.push_back(py::cast<int64_t>(py::reinterpret_steal<py::object>(PyNumber_Index(obj.ptr()))));
    return sizes;
  }
  if (!PySequence_Check(obj.ptr()))
    throw py::type_error(std::string(what) + ": expected an int or a tuple of 1 to 3 ints, got " +
                         py::str(py::type::of(obj)).cast<std::string>());
  for (py::handle item : py::iter(obj)) {
    if (!PyIndex_Check(item.ptr()))
      throw py::type_error(std::string(what) + ": sizes must be ints, got " +
                           py::str(py::type::of(item)).cast<std::string>());
    sizes.push_back(py::cast<int64_t>(py::reinterpret_steal<py::object>(PyNumber_Index(item.ptr()))));
  }
  return sizes;
}

}  // namespace dcpy

namespace {
// The core's blocking sections (dotcompute/blocking.hpp) release the GIL when the calling thread
// holds it, e.g. a Stream destructor run by Python's garbage collector, so other threads go on.
void* release_gil_for_blocking() {
#if PY_VERSION_HEX >= 0x030D0000
  const bool finalizing = Py_IsFinalizing();
#else
  const bool finalizing = _Py_IsFinalizing();
#endif
  if (!Py_IsInitialized() || finalizing || !PyGILState_Check()) return nullptr;
  return PyEval_SaveThread();
}
void reacquire_gil_after_blocking(void* state) { PyEval_RestoreThread(static_cast<PyThreadState*>(state)); }
}  // namespace

PYBIND11_MODULE(_native, m) {
  m.doc() = "The dotcompute native runtime (use dotcompute.runtime, not this module).";
  dc::set_blocking_hooks(release_gil_for_blocking, reacquire_gil_after_blocking);
  dcpy::register_errors();
  dcpy::bind_runtime(m);
  dcpy::bind_objects(m);
  dcpy::bind_launch(m);
  dcpy::bind_dlpack(m);
}

// DLPack capsules for Buffer.__dlpack__: the C structs of the DLPack ABI and their two destructors.
//
// Python decides what to export (device, pointer, stream order: dotcompute/runtime/cuda_interop.py);
// this file only lays it out as DLManagedTensor[Versioned] and owns the reference to the producer.
// The import side (dc.from_dlpack) consumes a producer's capsule into a DLPackImport: it owns the
// DLManagedTensor[Versioned] and calls its deleter exactly once, when the last Buffer borrowing the
// memory (or the import itself, when nothing borrowed it) goes away.
//
// Both destructors are C because of when they run: a consumer may drop a capsule it refused while
// its own exception is set (numpy's from_dlpack of a CUDA buffer raises BufferError, then releases
// the capsule), and a DLPack deleter may be called from any thread, with or without the GIL. A
// Python (ctypes) callback cannot run with an exception set -- it failed with SystemError and the
// export leaked its buffer. Here the pending exception is saved and restored around the release.
#include <Python.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "bindings.hpp"

namespace dc = dotcompute;

namespace dcpy {

namespace {

// The DLPack 1.0 ABI (dlpack.h), spelled out: the header is not a build dependency.
struct DLDevice {
  int32_t device_type;
  int32_t device_id;
};
struct DLDataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor*);
};
struct DLPackVersion {
  uint32_t major;
  uint32_t minor;
};
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned*);
  uint64_t flags;
  DLTensor dl_tensor;
};

constexpr uint64_t kFlagReadOnly = 1;  // DLPACK_FLAG_BITMASK_READ_ONLY
constexpr const char* kName = "dltensor";
constexpr const char* kNameVersioned = "dltensor_versioned";

// One export: the struct handed out (legacy or versioned), its shape, and the producer object that
// keeps the memory alive. manager_ctx points here.
struct Export {
  DLManagedTensor legacy{};
  DLManagedTensorVersioned versioned{};
  std::vector<int64_t> shape;
  PyObject* owner = nullptr;  // a strong reference
};

void release(Export* e) {
  // Without a running interpreter the reference cannot be dropped (the process is exiting).
  if (Py_IsInitialized()) {
    PyGILState_STATE gil = PyGILState_Ensure();
    PyObject *type, *value, *trace;
    PyErr_Fetch(&type, &value, &trace);  // a deleter must not disturb (or be disturbed by) one
    Py_CLEAR(e->owner);
    PyErr_Restore(type, value, trace);
    PyGILState_Release(gil);
  }
  delete e;
}

void delete_legacy(DLManagedTensor* m) { release(static_cast<Export*>(m->manager_ctx)); }
void delete_versioned(DLManagedTensorVersioned* m) { release(static_cast<Export*>(m->manager_ctx)); }

// A capsule still carrying its first name was never consumed: the producer deletes the tensor.
// (A consumer renames it "used_dltensor[_versioned]" and calls the deleter itself later.)
void capsule_destructor(PyObject* capsule) {
  PyObject *type, *value, *trace;
  PyErr_Fetch(&type, &value, &trace);
  if (PyCapsule_IsValid(capsule, kName)) {
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kName));
    m->deleter(m);
  } else if (PyCapsule_IsValid(capsule, kNameVersioned)) {
    auto* m = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(capsule, kNameVersioned));
    m->deleter(m);
  }
  PyErr_Clear();  // PyCapsule_IsValid never sets one; nothing of ours may leak out of a destructor
  PyErr_Restore(type, value, trace);
}

py::object make_capsule(py::object owner, uint64_t data, int32_t device_type, int32_t device_id,
                        const std::vector<int64_t>& shape, uint8_t code, uint8_t bits, bool versioned,
                        bool read_only, uint64_t byte_offset) {
  auto* e = new Export();
  e->shape = shape.empty() ? std::vector<int64_t>{1} : shape;  // a 0-d tensor still gets a valid pointer
  DLTensor t{};
  t.data = reinterpret_cast<void*>(static_cast<uintptr_t>(data));
  t.device = {device_type, device_id};
  t.ndim = static_cast<int32_t>(shape.size());
  t.dtype = {code, bits, 1};
  t.shape = e->shape.data();
  t.strides = nullptr;  // C-contiguous
  t.byte_offset = byte_offset;  // an OpenCL view: its cl_mem is the whole allocation's
  void* pointer;
  const char* name;
  if (versioned) {
    e->versioned.version = {1, 0};
    e->versioned.manager_ctx = e;
    e->versioned.deleter = delete_versioned;
    e->versioned.flags = read_only ? kFlagReadOnly : 0;
    e->versioned.dl_tensor = t;
    pointer = &e->versioned;
    name = kNameVersioned;
  } else {
    e->legacy.dl_tensor = t;
    e->legacy.manager_ctx = e;
    e->legacy.deleter = delete_legacy;
    pointer = &e->legacy;
    name = kName;
  }
  e->owner = owner.release().ptr();
  PyObject* capsule = PyCapsule_New(pointer, name, capsule_destructor);
  if (capsule == nullptr) {
    Py_CLEAR(e->owner);
    delete e;
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::object>(capsule);
}

// -- import -------------------------------------------------------------------------------------
constexpr const char* kUsedName = "used_dltensor";
constexpr const char* kUsedNameVersioned = "used_dltensor_versioned";

// One consumed capsule. The DLTensor's fields are copied out at once (a producer may free its shape
// array with the tensor); the deleter runs in the destructor, with the GIL held as a Python
// producer's deleter expects (numpy's takes it itself; ours would too) and any exception saved.
struct DLPackImport {
  void* managed = nullptr;
  bool versioned = false;
  int32_t device_type = 0;
  int32_t device_id = 0;
  uint64_t data = 0;
  uint64_t byte_offset = 0;
  std::vector<int64_t> shape;
  std::optional<std::vector<int64_t>> strides;
  uint8_t code = 0;
  uint8_t bits = 0;
  uint16_t lanes = 0;
  bool read_only = false;

  DLPackImport() = default;
  DLPackImport(const DLPackImport&) = delete;
  DLPackImport& operator=(const DLPackImport&) = delete;
  ~DLPackImport() {
    if (managed == nullptr) return;
    void* m = managed;
    managed = nullptr;
    // Without a running interpreter a Python producer's deleter cannot run (the process is exiting).
    if (!Py_IsInitialized()) return;
    PyGILState_STATE gil = PyGILState_Ensure();
    PyObject *type, *value, *trace;
    PyErr_Fetch(&type, &value, &trace);
    if (versioned) {
      auto* t = static_cast<DLManagedTensorVersioned*>(m);
      if (t->deleter != nullptr) t->deleter(t);
    } else {
      auto* t = static_cast<DLManagedTensor*>(m);
      if (t->deleter != nullptr) t->deleter(t);
    }
    PyErr_Clear();
    PyErr_Restore(type, value, trace);
    PyGILState_Release(gil);
  }
};

// Takes the tensor out of a producer's capsule: the capsule is renamed "used_..." (its destructor then
// leaves the tensor alone) and the returned import calls the deleter when it dies.
std::shared_ptr<DLPackImport> import_capsule(py::object capsule) {
  PyObject* c = capsule.ptr();
  auto imp = std::make_shared<DLPackImport>();
  DLTensor* t = nullptr;
  if (PyCapsule_IsValid(c, kNameVersioned)) {
    auto* m = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(c, kNameVersioned));
    if (m == nullptr) throw py::error_already_set();
    if (m->version.major != 1) {
      // an unknown ABI: the capsule stays unconsumed, so the producer's destructor frees it
      throw py::buffer_error("dc.from_dlpack: the producer exported DLPack " + std::to_string(m->version.major) + "." +
                             std::to_string(m->version.minor) + "; this consumer reads major version 1");
    }
    imp->versioned = true;
    imp->read_only = (m->flags & kFlagReadOnly) != 0;
    t = &m->dl_tensor;
    if (PyCapsule_SetName(c, kUsedNameVersioned) != 0) throw py::error_already_set();
    imp->managed = m;
  } else if (PyCapsule_IsValid(c, kName)) {
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(c, kName));
    if (m == nullptr) throw py::error_already_set();
    t = &m->dl_tensor;
    if (PyCapsule_SetName(c, kUsedName) != 0) throw py::error_already_set();
    imp->managed = m;
  } else {
    throw py::type_error("dc.from_dlpack: __dlpack__ returned no unconsumed 'dltensor' or 'dltensor_versioned' capsule");
  }
  imp->device_type = t->device.device_type;
  imp->device_id = t->device.device_id;
  imp->data = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(t->data));
  imp->byte_offset = t->byte_offset;
  imp->code = t->dtype.code;
  imp->bits = t->dtype.bits;
  imp->lanes = t->dtype.lanes;
  if (t->ndim < 0) throw py::value_error("dc.from_dlpack: the DLTensor has ndim < 0");
  imp->shape.assign(t->shape, t->shape + t->ndim);
  if (t->strides != nullptr) imp->strides = std::vector<int64_t>(t->strides, t->strides + t->ndim);
  return imp;
}

// A Buffer over the imported memory on `acc`: `ptr` is a device handle of `acc` (an address on the
// CPU and CUDA, with the offset already added; a cl_mem on OpenCL, where `byte_offset` then makes a
// view of it). The buffer keeps the import, hence the producer's memory, alive.
std::shared_ptr<dc::Buffer> borrow_import(const std::shared_ptr<DLPackImport>& imp,
                                          const std::shared_ptr<dc::Accelerator>& acc, uint64_t ptr,
                                          uint64_t byte_offset, const std::vector<int64_t>& shape,
                                          py::handle dtype) {
  if (!acc) throw py::value_error("dc.from_dlpack: no accelerator");
  dc::DType t = to_dtype_any(dtype, "dtype");
  if (byte_offset == 0) return dc::Buffer::borrow(acc, ptr, shape, t, imp);
  const uint64_t item = dc::itemsize(t);
  if (byte_offset % item != 0) throw py::value_error("dc.from_dlpack: byte_offset is not a multiple of the item size");
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  auto whole = dc::Buffer::borrow(acc, ptr, {static_cast<int64_t>(byte_offset / item) + n}, t, imp);
  return dc::Buffer::view(whole, byte_offset, shape);
}

// (root handle, byte offset) of a native buffer for an export: the cl_mem of the whole allocation and
// where a view starts in it (DLPack's convention for handles that are not addresses).
py::tuple export_handle(dc::Buffer& b) {
  uint64_t offset = b.byte_offset();
  uint64_t handle;
  {
    py::gil_scoped_release release;
    handle = b.accelerator().native_handle(DC_NATIVE_BUFFER, b.device_ptr());
  }
  return py::make_tuple(handle, offset);
}

// The dc_devptr of the allocation whose native buffer handle (an MTLBuffer) a DLPack producer gave.
uint64_t buffer_address(const std::shared_ptr<dc::Accelerator>& acc, uint64_t handle) {
  if (!acc) throw py::value_error("dc.from_dlpack: no accelerator");
  py::gil_scoped_release release;
  return acc->native_handle(DC_NATIVE_BUFFER_ADDRESS, handle);
}

}  // namespace

void bind_dlpack(py::module_& m) {
  m.def("dlpack_capsule", &make_capsule, py::arg("owner"), py::arg("data"), py::arg("device_type"),
        py::arg("device_id"), py::arg("shape"), py::arg("code"), py::arg("bits"), py::arg("versioned"),
        py::arg("read_only") = false, py::arg("byte_offset") = 0,
        "A DLPack capsule ('dltensor' or 'dltensor_versioned') for memory kept alive by `owner`, "
        "which the capsule holds until the consumer's deleter runs or the unconsumed capsule dies.");

  py::class_<DLPackImport, std::shared_ptr<DLPackImport>>(m, "DLPackImport")
      .def_readonly("device_type", &DLPackImport::device_type)
      .def_readonly("device_id", &DLPackImport::device_id)
      .def_readonly("data", &DLPackImport::data)
      .def_readonly("byte_offset", &DLPackImport::byte_offset)
      .def_readonly("shape", &DLPackImport::shape)
      .def_readonly("strides", &DLPackImport::strides)
      .def_readonly("code", &DLPackImport::code)
      .def_readonly("bits", &DLPackImport::bits)
      .def_readonly("lanes", &DLPackImport::lanes)
      .def_readonly("read_only", &DLPackImport::read_only)
      .def_readonly("versioned", &DLPackImport::versioned)
      .def("borrow", &borrow_import, py::arg("accelerator"), py::arg("ptr"), py::arg("byte_offset"),
           py::arg("shape"), py::arg("dtype"),
           "A native Buffer over the imported memory, keeping the import (and the producer) alive.");
  m.def("dlpack_import", &import_capsule, py::arg("capsule"),
        "Consumes a DLPack capsule: a DLPackImport that calls the producer's deleter when the last "
        "Buffer borrowing its memory (or the import itself) dies.");
  m.def("dlpack_buffer_address", &buffer_address, py::arg("accelerator"), py::arg("handle"),
        "The device handle (dc_devptr) of the allocation behind a native buffer handle (Metal's MTLBuffer).");
  m.def("dlpack_export_handle", &export_handle, py::arg("buffer"),
        "(native handle of the buffer's whole allocation, the buffer's byte offset in it) for DLPack exports "
        "of devices whose handles are not addresses (OpenCL's cl_mem).");
}

}  // namespace dcpy

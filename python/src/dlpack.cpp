// DLPack capsules for Buffer.__dlpack__: the C structs of the DLPack ABI and their two destructors.
//
// Python decides what to export (device, pointer, stream order: dotcompute/runtime/cuda_interop.py);
// this file only lays it out as DLManagedTensor[Versioned] and owns the reference to the producer.
// Both destructors are C because of when they run: a consumer may drop a capsule it refused while
// its own exception is set (numpy's from_dlpack of a CUDA buffer raises BufferError, then releases
// the capsule), and a DLPack deleter may be called from any thread, with or without the GIL. A
// Python (ctypes) callback cannot run with an exception set -- it failed with SystemError and the
// export leaked its buffer. Here the pending exception is saved and restored around the release.
#include <Python.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <vector>

#include "bindings.hpp"

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
                        bool read_only) {
  auto* e = new Export();
  e->shape = shape.empty() ? std::vector<int64_t>{1} : shape;  // a 0-d tensor still gets a valid pointer
  DLTensor t{};
  t.data = reinterpret_cast<void*>(static_cast<uintptr_t>(data));
  t.device = {device_type, device_id};
  t.ndim = static_cast<int32_t>(shape.size());
  t.dtype = {code, bits, 1};
  t.shape = e->shape.data();
  t.strides = nullptr;  // C-contiguous
  t.byte_offset = 0;
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

}  // namespace

void bind_dlpack(py::module_& m) {
  m.def("dlpack_capsule", &make_capsule, py::arg("owner"), py::arg("data"), py::arg("device_type"),
        py::arg("device_id"), py::arg("shape"), py::arg("code"), py::arg("bits"), py::arg("versioned"),
        py::arg("read_only") = false,
        "A DLPack capsule ('dltensor' or 'dltensor_versioned') for memory kept alive by `owner`, "
        "which the capsule holds until the consumer's deleter runs or the unconsumed capsule dies.");
}

}  // namespace dcpy

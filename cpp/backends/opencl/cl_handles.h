// Owning wrappers for OpenCL objects: each releases its reference exactly once.
#pragma once

#include <utility>

#include "cl_loader.h"

namespace dcl {

template <typename T, typename Traits>
class Handle {
 public:
  Handle() = default;
  explicit Handle(T h) noexcept : h_(h) {}
  ~Handle() { reset(); }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& other) noexcept : h_(std::exchange(other.h_, nullptr)) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      reset();
      h_ = std::exchange(other.h_, nullptr);
    }
    return *this;
  }

  T get() const noexcept { return h_; }
  explicit operator bool() const noexcept { return h_ != nullptr; }
  // Gives up ownership without releasing.
  T release() noexcept { return std::exchange(h_, nullptr); }
  void reset(T h = nullptr) noexcept {
    if (h_ != nullptr) Traits::release(h_);
    h_ = h;
  }

 private:
  T h_ = nullptr;
};

struct ContextTraits {
  static void release(cl_context h) noexcept { api().clReleaseContext(h); }
};
struct QueueTraits {
  static void release(cl_command_queue h) noexcept { api().clReleaseCommandQueue(h); }
};
struct ProgramTraits {
  static void release(cl_program h) noexcept { api().clReleaseProgram(h); }
};
struct KernelTraits {
  static void release(cl_kernel h) noexcept { api().clReleaseKernel(h); }
};
struct MemTraits {
  static void release(cl_mem h) noexcept { api().clReleaseMemObject(h); }
};
struct EventTraits {
  static void release(cl_event h) noexcept { api().clReleaseEvent(h); }
};

using Context = Handle<cl_context, ContextTraits>;
using Queue = Handle<cl_command_queue, QueueTraits>;
using Program = Handle<cl_program, ProgramTraits>;
using Kernel = Handle<cl_kernel, KernelTraits>;
using Mem = Handle<cl_mem, MemTraits>;
using Event = Handle<cl_event, EventTraits>;

}  // namespace dcl

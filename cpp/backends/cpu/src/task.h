// One unit of work queued on a stream. Launch tasks own copies of their
// argument values, because the caller's arguments die when launch() returns.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "dotcompute/cpu_kernel_abi.h"
#include "event.h"
#include "kernel_failure.h"
#include "module.h"

namespace dccpu {

// A counted reference to a module (Module::retain/release), released when the task is destroyed,
// run or not.
class ModuleRef {
 public:
  ModuleRef() = default;
  explicit ModuleRef(Module* m) : m_(m) {
    if (m_ != nullptr) m_->retain();
  }
  ModuleRef(const ModuleRef&) = delete;
  ModuleRef& operator=(const ModuleRef&) = delete;
  ModuleRef& operator=(ModuleRef&& o) noexcept {
    if (this != &o) {
      if (m_ != nullptr) m_->release();
      m_ = o.m_;
      o.m_ = nullptr;
    }
    return *this;
  }
  ~ModuleRef() {
    if (m_ != nullptr) m_->release();
  }

 private:
  Module* m_ = nullptr;
};

struct Task {
  enum class Kind { Launch, Copy, Memset, Record, Wait };
  Kind kind = Kind::Launch;

  // Launch
  dc_cpu_kernel_fn fn = nullptr;
  dc_cpu_launch desc{};  // desc.args points into argv
  uint32_t shared_bytes = 0;
  std::vector<void*> argv;
  std::vector<unsigned char> arg_bytes;
  KernelFailure failure;  // desc.fail reports here
  std::atomic<uint64_t>* item_ps = nullptr;  // the kernel's cost per item, updated after the run
  ModuleRef module;  // keeps the kernel's code loaded until the task is gone

  // Copy / Memset
  void* dst = nullptr;
  const void* src = nullptr;
  uint64_t bytes = 0;
  uint8_t value = 0;
  bool drop_pages = false;  // Memset of 0 inside one of the plugin's own mappings (launch.h, zero_fill)

  // Record / Wait
  std::shared_ptr<EventState> event;
  uint64_t seq = 0;
};

}  // namespace dccpu

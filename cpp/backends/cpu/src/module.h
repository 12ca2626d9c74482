// A compiled kernel module: a shared object loaded from memory.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "dotcompute/backend_abi.h"
#include "dotcompute/cpu_kernel_abi.h"

namespace dccpu {

class Module;

struct Kernel {
  dc_cpu_kernel_fn fn = nullptr;
  std::string name;
  Module* module = nullptr;  // the module whose code `fn` is (queued launches keep it loaded)
  // What one work-item of this kernel costs when run serially, in picoseconds, as last measured
  // (0: never run). Launches read it to decide whether a small launch runs inline on the caller
  // or goes to the thread pool (launch.h, worth_the_pool): the item count alone says nothing
  // about the work of each item (an n-body step over 4,096 bodies is 4,096 items of 4,096
  // interactions each).
  std::atomic<uint64_t> item_ps{0};
};

class Module {
 public:
  // Loads the shared-object bytes without leaving a file behind.
  static dc_status load(const void* binary, uint64_t size, std::unique_ptr<Module>& out, std::string& error);
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  ~Module();

  // The kernel named `name` (same object for repeated look-ups).
  dc_status kernel(const std::string& name, Kernel*& out, std::string& error);

  // References: the core's handle holds one (module_unload drops it), and each queued launch of
  // one of its kernels holds one until the launch ran, so the code is never unloaded under a task
  // that is still waiting (the core may release a kernel as soon as its launch is queued). The
  // last release deletes the module, on whichever thread that is.
  void retain() { refs_.fetch_add(1, std::memory_order_relaxed); }
  void release() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

 private:
  Module() = default;
  std::atomic<int64_t> refs_{1};
  void* handle_ = nullptr;
  int fd_ = -1;  // memfd backing the mapping; its /proc path is the library's name
  std::mutex mutex_;
  std::unordered_map<std::string, std::unique_ptr<Kernel>> kernels_;
};

}  // namespace dccpu

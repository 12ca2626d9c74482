// A compiled kernel module: a shared object loaded from memory.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "dotcompute/backend_abi.h"
#include "dotcompute/cpu_kernel_abi.h"

namespace dccpu {

struct Kernel {
  dc_cpu_kernel_fn fn = nullptr;
  std::string name;
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

 private:
  Module() = default;
  void* handle_ = nullptr;
  int fd_ = -1;  // memfd backing the mapping; its /proc path is the library's name
  std::mutex mutex_;
  std::unordered_map<std::string, std::unique_ptr<Kernel>> kernels_;
};

}  // namespace dccpu

// Compiled code on one accelerator: a Module (one loaded binary) and the
// Kernels (entry points) taken from it.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "dotcompute/backend_abi.h"
#include "dotcompute/export.hpp"

namespace dotcompute {

class Accelerator;
class LaunchPlan;
class Stream;
struct ParamSpec;

// Launch geometry; converts to dc_launch_config.
struct DOTCOMPUTE_API LaunchConfig {
  uint32_t dims = 1;
  uint64_t global_size[3] = {1, 1, 1};
  uint32_t local_size[3] = {0, 0, 0};  // all 0: the backend chooses
  uint32_t dynamic_shared_bytes = 0;
  uint32_t flags = 0;

  // `global` has 1 to 3 entries; `local` is empty or has as many entries.
  // Throws LaunchError for a bad count or a zero/negative size.
  static LaunchConfig make(const std::vector<int64_t>& global, const std::vector<int64_t>& local = {},
                           uint32_t dynamic_shared_bytes = 0);
  dc_launch_config to_abi() const noexcept;
};

// A loaded binary; unloaded when the last kernel taken from it goes.
class DOTCOMPUTE_API Module {
 public:
  Module(std::shared_ptr<Accelerator> accelerator, dc_module handle);
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  dc_module handle() const noexcept { return handle_; }
  Accelerator& accelerator() const noexcept { return *accelerator_; }

 private:
  std::shared_ptr<Accelerator> accelerator_;
  dc_module handle_;
};

class DOTCOMPUTE_API Kernel : public std::enable_shared_from_this<Kernel> {
 public:
  // Use Accelerator::compile(). Throws CompilationError when `entry` is missing.
  Kernel(std::shared_ptr<Module> module, std::string name);

  const std::string& name() const noexcept { return name_; }
  Accelerator& accelerator() const noexcept { return module_->accelerator(); }
  dc_kernel handle() const noexcept { return handle_; }
  const std::shared_ptr<Module>& module() const noexcept { return module_; }

  // Enqueues the kernel with fully expanded arguments (see "Kernel parameter
  // ABI" in docs/design.md). Throws LaunchError (or OutOfMemoryError).
  void launch(const LaunchConfig& config, const dc_kernel_arg* args, uint32_t nargs, Stream& stream);
  void launch(const LaunchConfig& config, const std::vector<dc_kernel_arg>& args, Stream& stream);

  // A reusable validating/packing launch path for a fixed signature.
  // `raw`: arguments are passed as given (no extents after buffers); with
  // raw and no params, any arguments are accepted untyped.
  std::shared_ptr<LaunchPlan> plan(std::vector<ParamSpec> params, bool raw = false);

 private:
  std::shared_ptr<Module> module_;
  std::string name_;
  dc_kernel handle_ = nullptr;
  const dc_backend* api_;
};

}  // namespace dotcompute

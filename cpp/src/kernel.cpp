#include "dotcompute/kernel.hpp"

#include "backend_plugin.hpp"
#include "dotcompute/accelerator.hpp"
#include "dotcompute/errors.hpp"
#include "dotcompute/launch_plan.hpp"
#include "dotcompute/stream.hpp"

namespace dotcompute {

LaunchConfig LaunchConfig::make(const std::vector<int64_t>& global, const std::vector<int64_t>& local,
                                uint32_t dynamic_shared_bytes) {
  if (global.empty() || global.size() > 3) {
    throw LaunchError("global_size must have 1 to 3 dimensions, got " + std::to_string(global.size()));
  }
  if (!local.empty() && local.size() != global.size()) {
    throw LaunchError("local_size has " + std::to_string(local.size()) + " dimensions but global_size has " +
                      std::to_string(global.size()));
  }
  LaunchConfig c;
  c.dims = static_cast<uint32_t>(global.size());
  for (size_t d = 0; d < global.size(); ++d) {
    if (global[d] <= 0) {
      throw LaunchError("global_size[" + std::to_string(d) + "] must be positive, got " + std::to_string(global[d]));
    }
    c.global_size[d] = static_cast<uint64_t>(global[d]);
  }
  for (size_t d = 0; d < local.size(); ++d) {
    if (local[d] <= 0 || local[d] > int64_t(UINT32_MAX)) {
      throw LaunchError("local_size[" + std::to_string(d) + "] must be positive, got " + std::to_string(local[d]));
    }
    c.local_size[d] = static_cast<uint32_t>(local[d]);
  }
  c.dynamic_shared_bytes = dynamic_shared_bytes;
  return c;
}

dc_launch_config LaunchConfig::to_abi() const noexcept {
  dc_launch_config c;
  c.struct_size = sizeof c;
  c.dims = dims;
  for (int d = 0; d < 3; ++d) {
    c.global_size[d] = global_size[d];
    c.local_size[d] = local_size[d];
  }
  c.dynamic_shared_bytes = dynamic_shared_bytes;
  c.flags = flags;
  return c;
}

Module::Module(std::shared_ptr<Accelerator> accelerator, dc_module handle)
    : accelerator_(std::move(accelerator)), handle_(handle) {}

Module::~Module() { accelerator_->api()->module_unload(handle_); }

Kernel::Kernel(std::shared_ptr<Module> module, std::string name)
    : module_(std::move(module)), name_(std::move(name)), api_(module_->accelerator().api()) {
  dc_status st = api_->kernel_get(module_->handle(), name_.c_str(), &handle_);
  if (st != DC_OK) {
    std::string log = plugin_error(api_);
    throw CompilationError("the compiled module has no kernel named '" + name_ + "'" + (log.empty() ? "" : ": " + log),
                           log, "");
  }
}

void Kernel::launch(const LaunchConfig& config, const dc_kernel_arg* args, uint32_t nargs, Stream& stream) {
  if (stream.accelerator().api() != api_ || &stream.accelerator() != &module_->accelerator()) {
    throw LaunchError("kernel '" + name_ + "' was compiled for " + module_->accelerator().id() +
                      " but the stream belongs to " + stream.accelerator().id());
  }
  const dc_launch_config c = config.to_abi();
  dc_status st = api_->launch(stream.handle(), handle_, &c, args, nargs);
  if (st != DC_OK) {
    std::string detail = plugin_error(api_);
    throw_status(st, "launching kernel '" + name_ + "' on " + module_->accelerator().id() + " failed", detail, "",
                 CallSite::Launch);
  }
}

void Kernel::launch(const LaunchConfig& config, const std::vector<dc_kernel_arg>& args, Stream& stream) {
  launch(config, args.data(), static_cast<uint32_t>(args.size()), stream);
}

std::shared_ptr<LaunchPlan> Kernel::plan(std::vector<ParamSpec> params, bool raw) {
  return std::make_shared<LaunchPlan>(shared_from_this(), std::move(params), raw);
}

}  // namespace dotcompute

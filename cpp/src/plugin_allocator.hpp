// The RawAllocator of a real accelerator: the plugin's mem_alloc/mem_free,
// with events as fences.
#pragma once

#include <memory>

#include "dotcompute/memory_pool.hpp"

namespace dotcompute {

class BackendPlugin;

class PluginAllocator final : public RawAllocator {
 public:
  PluginAllocator(std::shared_ptr<BackendPlugin> plugin, int32_t device);
  bool allocate(uint64_t bytes, dc_devptr* out) override;
  void free(dc_devptr ptr) noexcept override;
  // `stream` is a dotcompute::Stream*.
  std::shared_ptr<Fence> fence(StreamKey stream) override;

 private:
  std::shared_ptr<BackendPlugin> plugin_;
  const dc_backend* api_;
  int32_t device_;
};

}  // namespace dotcompute

#include "plugin_allocator.hpp"

#include "backend_plugin.hpp"
#include "dotcompute/errors.hpp"
#include "dotcompute/stream.hpp"

namespace dotcompute {

namespace {
// A raw plugin event, not an Event: an Event would hold its Accelerator, and
// the Accelerator owns the pool that holds this fence.
class EventFence final : public Fence {
 public:
  EventFence(std::shared_ptr<BackendPlugin> plugin, dc_event e) : plugin_(std::move(plugin)), e_(e) {}
  ~EventFence() override { plugin_->api()->event_destroy(e_); }
  bool done() override {
    int32_t d = 0;
    return plugin_->api()->event_query(e_, &d) == DC_OK && d != 0;
  }
  void wait() override { plugin_->api()->event_synchronize(e_); }

 private:
  std::shared_ptr<BackendPlugin> plugin_;
  dc_event e_;
};
}  // namespace

PluginAllocator::PluginAllocator(std::shared_ptr<BackendPlugin> plugin, int32_t device)
    : plugin_(std::move(plugin)), api_(plugin_->api()), device_(device) {}

bool PluginAllocator::allocate(uint64_t bytes, dc_devptr* out) {
  dc_status st = api_->mem_alloc(device_, bytes, out);
  if (st == DC_OK) return true;
  if (st == DC_ERROR_OUT_OF_MEMORY) return false;
  throw_status(st, "mem_alloc of " + std::to_string(bytes) + " bytes failed", plugin_error(api_));
}

void PluginAllocator::free(dc_devptr ptr) noexcept { api_->mem_free(device_, ptr); }

std::shared_ptr<Fence> PluginAllocator::fence(StreamKey stream) {
  const Stream* s = static_cast<const Stream*>(stream);
  dc_event e = nullptr;
  dc_status st = api_->event_create(device_, &e);
  if (st != DC_OK) throw_status(st, "event_create failed", plugin_error(api_));
  st = api_->event_record(e, s->handle());
  if (st != DC_OK) {
    api_->event_destroy(e);
    throw_status(st, "event_record failed", plugin_error(api_));
  }
  return std::make_shared<EventFence>(plugin_, e);
}

}  // namespace dotcompute

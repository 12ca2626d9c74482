#include "kernel_failure.h"

namespace dccpu {

void KernelFailure::report(const dc_cpu_launch* launch, int32_t reason, const char* message) {
  if (launch == nullptr || launch->fail_state == nullptr) return;
  auto* self = static_cast<KernelFailure*>(launch->fail_state);
  std::lock_guard<std::mutex> lock(self->mutex_);
  if (self->failed_.load(std::memory_order_relaxed)) return;  // the first report wins
  self->reason_ = reason;
  self->message_ = message != nullptr ? message : "the kernel reported a failure without a message";
  self->failed_.store(true, std::memory_order_release);
}

dc_status KernelFailure::status() const {
  if (!failed()) return DC_OK;
  std::lock_guard<std::mutex> lock(mutex_);
  return reason_ == DC_CPU_FAIL_OUT_OF_MEMORY ? DC_ERROR_OUT_OF_MEMORY : DC_ERROR_LAUNCH;
}

std::string KernelFailure::message() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return "cpu: " + message_;
}

}  // namespace dccpu

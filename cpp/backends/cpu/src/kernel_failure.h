// The backend's side of the kernel error channel (dc_cpu_launch::fail in
// cpu_kernel_abi.h): kernels have no return value, so a kernel that cannot go
// on reports through the launch descriptor, and the launch turns the first
// report into its status.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "dotcompute/backend_abi.h"
#include "dotcompute/cpu_kernel_abi.h"

namespace dccpu {

class KernelFailure {
 public:
  KernelFailure() = default;
  KernelFailure(const KernelFailure&) = delete;
  KernelFailure& operator=(const KernelFailure&) = delete;

  // Points the descriptor's error channel at this object; it must outlive every call of the kernel.
  void attach(dc_cpu_launch& desc) {
    desc.fail = &KernelFailure::report;
    desc.fail_state = this;
  }
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  // The dc_status for the first reported reason (DC_OK when none was reported).
  dc_status status() const;
  // The first report's message, prefixed with "cpu: ".
  std::string message() const;

 private:
  static void report(const dc_cpu_launch* launch, int32_t reason, const char* message);

  std::atomic<bool> failed_{false};
  mutable std::mutex mutex_;
  int32_t reason_ = 0;
  std::string message_;
};

// What queued work throws so that the stream can report the kernel's status, not only a message.
struct KernelFailureError {
  dc_status status;
  std::string message;
};

}  // namespace dccpu

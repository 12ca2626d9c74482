// One CUDA device: its primary context (retained for the plugin's lifetime,
// released by the destructor) and its capabilities mapped to dc_device_info.
#pragma once

#include <string>
#include <vector>

#include "dotcompute/backend_abi.h"
#include "driver.hpp"

namespace dotcompute::cuda {

class Device {
 public:
  // Retains the primary context and reads every attribute; on failure returns
  // a non-OK status (last error set) and leaves `out` empty.
  static dc_status open(const Driver& driver, int ordinal, std::unique_ptr<Device>& out);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  // Makes this device's primary context current on the calling thread.
  dc_status make_current() const;

  int ordinal() const { return ordinal_; }
  CUdevice handle() const { return device_; }
  CUcontext context() const { return context_; }
  int cc_major() const { return cc_major_; }
  int cc_minor() const { return cc_minor_; }
  int sm() const { return cc_major_ * 10 + cc_minor_; }
  int max_grid(int d) const { return max_grid_[d]; }
  int warp_size() const { return warp_size_; }
  int shared_optin_bytes() const { return shared_optin_; }
  bool cooperative_launch() const { return cooperative_; }
  const dc_device_info& info() const { return info_; }
  // Fills the parts of the info that need every device (the peer matrix row).
  void finish_info(const std::vector<int>& peer_row, int driver_version);

 private:
  Device(const Driver& driver, int ordinal) : driver_(driver), ordinal_(ordinal) {}
  const Driver& driver_;
  int ordinal_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  int cc_major_ = 0, cc_minor_ = 0, warp_size_ = 32, shared_optin_ = 0;
  int max_grid_[3] = {0, 0, 0};
  bool cooperative_ = false;
  std::string capabilities_json_;  // without the peer row, which needs the other devices
  dc_device_info info_{};
};

}  // namespace dotcompute::cuda

// The plugin's process-wide state between initialize() and shutdown(), and
// the objects behind the ABI's opaque handles.
#pragma once

#include <map>
#include <set>
#include <utility>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "device.hpp"
#include "driver.hpp"
#include "nvrtc.hpp"

struct dc_stream_s {
  int device;
  CUstream stream;
};

struct dc_event_s {
  int device;
  CUevent event;
};

struct dc_kernel_s {
  CUfunction function;
  std::string name;
  bool sizes_known;
  std::vector<size_t> param_sizes;  // from cuFuncGetParamInfo when the driver has it
  int max_threads;                  // the most threads per block this kernel can launch with
};

struct dc_module_s {
  int device;
  CUmodule module;
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<dc_kernel_s>> kernels;  // owned: the ABI has no kernel release
  std::map<std::string, std::string> lowered;  // name expression ("MatrixMul<32>") -> the exported symbol
};

struct dc_cuda_graph_s {
  int device;
  CUgraph graph;
  CUgraphExec exec;
};

namespace dotcompute::cuda {

struct State {
  std::unique_ptr<Driver> driver;  // declared first: destroyed last, after the devices
  std::vector<std::unique_ptr<Device>> devices;
  int driver_version = 0;

  std::mutex peer_mutex;
  std::set<std::pair<int, int>> peers_enabled;  // (device, peer): device can read peer's memory

  std::once_flag nvrtc_once;
  std::unique_ptr<Nvrtc> nvrtc;
  std::string nvrtc_error;

  // NVRTC, loaded on first use, which is the core's compiler_identity() call when the
  // accelerator is created (the identity is part of every kernel-cache key).
  const Nvrtc* compiler() {
    std::call_once(nvrtc_once, [this] { nvrtc = Nvrtc::load(nvrtc_error); });
    return nvrtc.get();
  }
};


}  // namespace dotcompute::cuda

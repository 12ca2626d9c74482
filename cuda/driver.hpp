// The CUDA driver library, loaded at run time, with every entry point the
// backend calls resolved up front so a missing one is reported once, clearly.
#pragma once

#include <memory>
#include <string>

#include "driver_api.h"
#include "dynlib.hpp"
#include "sim/sim_api.h"

namespace dotcompute::cuda {

class Driver {
 public:
  // Loads the CUDA simulator shipped beside the plugin when DOTCOMPUTE_CUDA_SIM is on (a real
  // driver is then never opened), else DOTCOMPUTE_CUDA_DRIVER when set, else libcuda.so.1. On
  // failure returns null and sets `error` to the reason the user will see.
  static std::unique_ptr<Driver> load(std::string& error);

  // True when this is the CUDA simulator (DOTCOMPUTE_CUDA_SIM=1).
  bool simulated() const { return dcsimBuildImage != nullptr; }
  // Simulator only: the module image for `source` (device code from NVRTC plus the host build).
  bool sim_image(const std::string& source, const char* options, int sm, const std::string& device_code,
                 std::string& image, std::string& error) const;
  // Simulator only: what the host build depends on, appended to the compiler identity (cache key).
  std::string sim_identity() const;

  // "CUDA_ERROR_OUT_OF_MEMORY (out of memory)", or the number when the driver cannot name it.
  std::string describe(CUresult result) const;
  const std::string& path() const { return lib_.path(); }

  PFN_cuInit cuInit = nullptr;
  PFN_cuDriverGetVersion cuDriverGetVersion = nullptr;
  PFN_cuGetErrorName cuGetErrorName = nullptr;
  PFN_cuGetErrorString cuGetErrorString = nullptr;
  PFN_cuDeviceGetCount cuDeviceGetCount = nullptr;
  PFN_cuDeviceGet cuDeviceGet = nullptr;
  PFN_cuDeviceGetName cuDeviceGetName = nullptr;
  PFN_cuDeviceGetAttribute cuDeviceGetAttribute = nullptr;
  PFN_cuDeviceTotalMem cuDeviceTotalMem = nullptr;
  PFN_cuDeviceCanAccessPeer cuDeviceCanAccessPeer = nullptr;
  PFN_cuDevicePrimaryCtxRetain cuDevicePrimaryCtxRetain = nullptr;
  PFN_cuDevicePrimaryCtxRelease cuDevicePrimaryCtxRelease = nullptr;
  PFN_cuCtxSetCurrent cuCtxSetCurrent = nullptr;
  PFN_cuMemAlloc cuMemAlloc = nullptr;
  PFN_cuMemFree cuMemFree = nullptr;
  PFN_cuMemcpyHtoDAsync cuMemcpyHtoDAsync = nullptr;
  PFN_cuMemcpyDtoHAsync cuMemcpyDtoHAsync = nullptr;
  PFN_cuMemcpyDtoDAsync cuMemcpyDtoDAsync = nullptr;
  PFN_cuMemsetD8Async cuMemsetD8Async = nullptr;
  PFN_cuStreamCreate cuStreamCreate = nullptr;
  PFN_cuStreamDestroy cuStreamDestroy = nullptr;
  PFN_cuStreamSynchronize cuStreamSynchronize = nullptr;
  PFN_cuStreamWaitEvent cuStreamWaitEvent = nullptr;
  PFN_cuEventCreate cuEventCreate = nullptr;
  PFN_cuEventDestroy cuEventDestroy = nullptr;
  PFN_cuEventRecord cuEventRecord = nullptr;
  PFN_cuEventSynchronize cuEventSynchronize = nullptr;
  PFN_cuEventQuery cuEventQuery = nullptr;
  PFN_cuEventElapsedTime cuEventElapsedTime = nullptr;
  PFN_cuModuleLoadData cuModuleLoadData = nullptr;
  PFN_cuModuleUnload cuModuleUnload = nullptr;
  PFN_cuModuleGetFunction cuModuleGetFunction = nullptr;
  PFN_cuFuncGetAttribute cuFuncGetAttribute = nullptr;
  PFN_cuFuncSetAttribute cuFuncSetAttribute = nullptr;
  PFN_cuOccupancyMaxPotentialBlockSize cuOccupancyMaxPotentialBlockSize = nullptr;
  PFN_cuLaunchKernel cuLaunchKernel = nullptr;
  PFN_cuLaunchCooperativeKernel cuLaunchCooperativeKernel = nullptr;
  // Optional, null when the driver lacks them: cuFuncGetParamInfo (CUDA 12.4+; null means
  // "argument sizes unknown") and the entry points of the extension table (cuda_ext.h).
  PFN_cuFuncGetParamInfo cuFuncGetParamInfo = nullptr;
  PFN_cuMemHostAlloc cuMemHostAlloc = nullptr;
  PFN_cuMemFreeHost cuMemFreeHost = nullptr;
  PFN_cuMemAllocManaged cuMemAllocManaged = nullptr;
  PFN_cuCtxEnablePeerAccess cuCtxEnablePeerAccess = nullptr;
  PFN_cuMemcpyPeerAsync cuMemcpyPeerAsync = nullptr;
  PFN_cuStreamBeginCapture cuStreamBeginCapture = nullptr;
  PFN_cuModuleGetGlobal cuModuleGetGlobal = nullptr;
  PFN_cuStreamEndCapture cuStreamEndCapture = nullptr;
  PFN_cuGraphInstantiateWithFlags cuGraphInstantiateWithFlags = nullptr;
  PFN_cuGraphLaunch cuGraphLaunch = nullptr;
  PFN_cuGraphExecDestroy cuGraphExecDestroy = nullptr;
  PFN_cuGraphDestroy cuGraphDestroy = nullptr;
  // The simulator's own entry points (sim/sim_api.h); null for a real driver.
  PFN_dcsimBuildImage dcsimBuildImage = nullptr;
  PFN_dcsimFree dcsimFree = nullptr;
  PFN_dcsimIdentity dcsimIdentity = nullptr;

 private:
  DynLib lib_;
};

}  // namespace dotcompute::cuda

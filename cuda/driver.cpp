#include "driver.hpp"

#include <cstdlib>

namespace dotcompute::cuda {

namespace {

template <typename Fn>
bool resolve(const DynLib& lib, Fn& fn, const char* name, std::string& missing) {
  fn = reinterpret_cast<Fn>(lib.symbol(name));
  if (!fn) {
    if (!missing.empty()) missing += ", ";
    missing += name;
  }
  return fn != nullptr;
}

}  // namespace

std::unique_ptr<Driver> Driver::load(std::string& error) {
  const char* explicit_path = std::getenv("DOTCOMPUTE_CUDA_DRIVER");
  const bool is_explicit = explicit_path && *explicit_path;
  const std::string path = is_explicit ? explicit_path : "libcuda.so.1";
  std::string dl_error;
  DynLib lib = DynLib::open(path, RTLD_NOW | RTLD_LOCAL, &dl_error);
  if (!lib) {
    if (is_explicit)
      error = "DOTCOMPUTE_CUDA_DRIVER=" + path + " could not be loaded: " + dl_error;
    else
      error = "libcuda.so.1 not found (NVIDIA driver not installed): " + dl_error;
    return nullptr;
  }

  auto d = std::unique_ptr<Driver>(new Driver());
  std::string missing;
  // The `_v2` names are the 64-bit entry points cuda.h maps the plain names to.
  resolve(lib, d->cuInit, "cuInit", missing);
  resolve(lib, d->cuDriverGetVersion, "cuDriverGetVersion", missing);
  resolve(lib, d->cuGetErrorName, "cuGetErrorName", missing);
  resolve(lib, d->cuGetErrorString, "cuGetErrorString", missing);
  resolve(lib, d->cuDeviceGetCount, "cuDeviceGetCount", missing);
  resolve(lib, d->cuDeviceGet, "cuDeviceGet", missing);
  resolve(lib, d->cuDeviceGetName, "cuDeviceGetName", missing);
  resolve(lib, d->cuDeviceGetAttribute, "cuDeviceGetAttribute", missing);
  resolve(lib, d->cuDeviceTotalMem, "cuDeviceTotalMem_v2", missing);
  resolve(lib, d->cuDeviceCanAccessPeer, "cuDeviceCanAccessPeer", missing);
  resolve(lib, d->cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", missing);
  resolve(lib, d->cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", missing);
  resolve(lib, d->cuCtxSetCurrent, "cuCtxSetCurrent", missing);
  resolve(lib, d->cuMemAlloc, "cuMemAlloc_v2", missing);
  resolve(lib, d->cuMemFree, "cuMemFree_v2", missing);
  resolve(lib, d->cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", missing);
  resolve(lib, d->cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", missing);
  resolve(lib, d->cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", missing);
  resolve(lib, d->cuMemsetD8Async, "cuMemsetD8Async", missing);
  resolve(lib, d->cuStreamCreate, "cuStreamCreate", missing);
  resolve(lib, d->cuStreamDestroy, "cuStreamDestroy_v2", missing);
  resolve(lib, d->cuStreamSynchronize, "cuStreamSynchronize", missing);
  resolve(lib, d->cuStreamWaitEvent, "cuStreamWaitEvent", missing);
  resolve(lib, d->cuEventCreate, "cuEventCreate", missing);
  resolve(lib, d->cuEventDestroy, "cuEventDestroy_v2", missing);
  resolve(lib, d->cuEventRecord, "cuEventRecord", missing);
  resolve(lib, d->cuEventSynchronize, "cuEventSynchronize", missing);
  resolve(lib, d->cuEventQuery, "cuEventQuery", missing);
  resolve(lib, d->cuEventElapsedTime, "cuEventElapsedTime", missing);
  resolve(lib, d->cuModuleLoadData, "cuModuleLoadData", missing);
  resolve(lib, d->cuModuleUnload, "cuModuleUnload", missing);
  resolve(lib, d->cuModuleGetFunction, "cuModuleGetFunction", missing);
  resolve(lib, d->cuFuncGetAttribute, "cuFuncGetAttribute", missing);
  resolve(lib, d->cuFuncSetAttribute, "cuFuncSetAttribute", missing);
  resolve(lib, d->cuOccupancyMaxPotentialBlockSize, "cuOccupancyMaxPotentialBlockSize", missing);
  resolve(lib, d->cuLaunchKernel, "cuLaunchKernel", missing);
  resolve(lib, d->cuLaunchCooperativeKernel, "cuLaunchCooperativeKernel", missing);
  if (!missing.empty()) {
    error = path + " is too old for dotcompute: it lacks " + missing + " (update the NVIDIA driver)";
    return nullptr;
  }
  std::string optional_missing;
  resolve(lib, d->cuFuncGetParamInfo, "cuFuncGetParamInfo", optional_missing);
  resolve(lib, d->cuMemHostAlloc, "cuMemHostAlloc", optional_missing);
  resolve(lib, d->cuMemFreeHost, "cuMemFreeHost", optional_missing);
  resolve(lib, d->cuMemAllocManaged, "cuMemAllocManaged", optional_missing);
  resolve(lib, d->cuCtxEnablePeerAccess, "cuCtxEnablePeerAccess", optional_missing);
  resolve(lib, d->cuMemcpyPeerAsync, "cuMemcpyPeerAsync", optional_missing);
  resolve(lib, d->cuStreamBeginCapture, "cuStreamBeginCapture_v2", optional_missing);
  resolve(lib, d->cuStreamEndCapture, "cuStreamEndCapture", optional_missing);
  resolve(lib, d->cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags", optional_missing);
  resolve(lib, d->cuGraphLaunch, "cuGraphLaunch", optional_missing);
  resolve(lib, d->cuGraphExecDestroy, "cuGraphExecDestroy", optional_missing);
  resolve(lib, d->cuGraphDestroy, "cuGraphDestroy", optional_missing);
  d->lib_ = std::move(lib);
  return d;
}

std::string Driver::describe(CUresult result) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (cuGetErrorName) cuGetErrorName(result, &name);
  if (cuGetErrorString) cuGetErrorString(result, &text);
  std::string out = name ? name : ("CUresult " + std::to_string(result));
  if (text) out += std::string(" (") + text + ")";
  return out;
}

}  // namespace dotcompute::cuda

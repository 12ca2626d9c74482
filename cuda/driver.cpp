#include "driver.hpp"

#include <cstdlib>
#include <cstring>
#include <strings.h>

namespace dotcompute::cuda {

namespace {

// DOTCOMPUTE_CUDA_SIM: on for 1/true/yes/on.
bool simulator_requested() {
  const char* v = std::getenv("DOTCOMPUTE_CUDA_SIM");
  if (!v) return false;
  for (const char* on : {"1", "true", "yes", "on"})
    if (strcasecmp(v, on) == 0) return true;
  return false;
}

// The simulator ships beside the plugin (the wheel's plugins/ folder, or the build tree's).
std::string simulator_path() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&simulator_path), &info) || !info.dli_fname) return "libdotcompute_cuda_sim.so";
  std::string file = info.dli_fname;
  const auto slash = file.rfind('/');
  return (slash == std::string::npos ? std::string(".") : file.substr(0, slash)) + "/libdotcompute_cuda_sim.so";
}

}  // namespace

std::unique_ptr<Driver> Driver::load(std::string& error) {
  const bool simulate = simulator_requested();
  const char* explicit_path = std::getenv("DOTCOMPUTE_CUDA_DRIVER");
  const bool is_explicit = !simulate && explicit_path && *explicit_path;
  const std::string path = simulate ? simulator_path() : is_explicit ? explicit_path : "libcuda.so.1";
  std::string dl_error;
  DynLib lib = DynLib::open(path, RTLD_NOW | RTLD_LOCAL, &dl_error);
  if (!lib) {
    if (simulate)
      error = "DOTCOMPUTE_CUDA_SIM=1 but the CUDA simulator " + path + " could not be loaded: " + dl_error;
    else if (is_explicit)
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
  resolve(lib, d->cuModuleGetGlobal, "cuModuleGetGlobal_v2", optional_missing);
  if (simulate) {
    std::string sim_missing;
    resolve(lib, d->dcsimBuildImage, "dcsimBuildImage", sim_missing);
    resolve(lib, d->dcsimFree, "dcsimFree", sim_missing);
    resolve(lib, d->dcsimIdentity, "dcsimIdentity", sim_missing);
    if (!sim_missing.empty()) {
      error = path + " is not a dotcompute CUDA simulator: it lacks " + sim_missing;
      return nullptr;
    }
  }
  d->lib_ = std::move(lib);
  return d;
}

bool Driver::sim_image(const std::string& source, const char* options, int sm, const std::string& device_code,
                       std::string& image, std::string& error) const {
  void* blob = nullptr;
  size_t size = 0;
  char* log = nullptr;
  const CUresult r = dcsimBuildImage(source.c_str(), options ? options : "", sm, device_code.data(),
                                     device_code.size(), &blob, &size, &log);
  if (r != CUDA_SUCCESS) {
    error = "the CUDA simulator could not build the kernel for the host: " + describe(r);
    if (log && *log && error.find(log) == std::string::npos) error += std::string("\n") + log;
  } else {
    image.assign(static_cast<const char*>(blob), size);
  }
  dcsimFree(log);
  dcsimFree(blob);
  return r == CUDA_SUCCESS;
}

std::string Driver::sim_identity() const {
  char buf[1024] = {};
  if (!dcsimIdentity || dcsimIdentity(buf, sizeof buf) != CUDA_SUCCESS) return " | simulator (no host compiler)";
  return std::string(" | simulated by ") + buf;
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

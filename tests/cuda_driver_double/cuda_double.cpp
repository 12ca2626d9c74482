// A test double of libcuda.so.1 on host memory. It keeps the same contracts
// the real driver enforces where a plugin bug would show (a current context
// for every call, copies inside live allocations, launch limits, known kernel
// names) and records what it was asked to do, so tests can check the plugin's
// translation of the dotcompute ABI into driver calls.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "double_state.hpp"
#include "elf_symbols.hpp"

using namespace cudadouble;

// ---------------------------------------------------------------- test control

EXPORT void double_reset(void) {
  Double& d = g();
  Lock lock(d.mutex);
  d.failures.clear();
  d.param_sizes.clear();
  d.launches.clear();
  d.ops.clear();
  d.device_count = 1;
  d.driver_version = 12090;
  d.occupancy_block = 768;
  d.last_image_kind.clear();
  d.last_image_size = 0;
}

EXPORT void double_set_device_count(int count) {
  Lock lock(g().mutex);
  g().device_count = count < 0 ? 0 : (count > 8 ? 8 : count);
}

EXPORT void double_set_driver_version(int version) {
  Lock lock(g().mutex);
  g().driver_version = version;
}

EXPORT void double_fail_next(const char* function, int result) {
  Lock lock(g().mutex);
  g().failures[function] = result;
}

EXPORT void double_set_param_sizes(const char* name, const size_t* sizes, int count) {
  Lock lock(g().mutex);
  g().param_sizes[name] = std::vector<size_t>(sizes, sizes + count);
}

EXPORT void double_set_occupancy_block(int threads) {
  Lock lock(g().mutex);
  g().occupancy_block = threads;
}

EXPORT const double_launch* double_launch_log(int* count) {
  Lock lock(g().mutex);
  *count = static_cast<int>(g().launches.size());
  return g().launches.data();
}

EXPORT const char* double_op_log(void) {
  Lock lock(g().mutex);
  g().ops_snapshot = g().ops;
  return g().ops_snapshot.c_str();
}

EXPORT int double_live_allocations(uint64_t* total_bytes) {
  Lock lock(g().mutex);
  if (total_bytes) *total_bytes = g().allocated;
  return static_cast<int>(g().allocations.size());
}

EXPORT const char* double_last_image_kind(size_t* size) {
  Lock lock(g().mutex);
  if (size) *size = g().last_image_size;
  return g().last_image_kind.c_str();
}

EXPORT int double_retained_contexts(void) {
  Lock lock(g().mutex);
  int n = 0;
  for (const auto& c : g().contexts) n += c.retained;
  return n;
}

EXPORT uint64_t double_stream_id(void* stream) { return stream_id(static_cast<CUstream>(stream)); }

// ---------------------------------------------------------------- driver API

EXPORT CUresult cuInit(unsigned int flags) {
  Double& d = g();
  Lock lock(d.mutex);
  if (CUresult r = injected(d, "cuInit"); r != CUDA_SUCCESS) return r;
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  d.initialized = true;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuDriverGetVersion(int* version) {
  Double& d = g();
  Lock lock(d.mutex);
  if (CUresult r = injected(d, "cuDriverGetVersion"); r != CUDA_SUCCESS) return r;
  if (!version) return CUDA_ERROR_INVALID_VALUE;
  *version = d.driver_version;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuGetErrorName(CUresult error, const char** name) {
  static const std::map<int, const char*> names = {
      {CUDA_SUCCESS, "CUDA_SUCCESS"},
      {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE"},
      {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY"},
      {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED"},
      {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE"},
      {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE"},
      {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE"},
      {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT"},
      {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE"},
      {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND"},
      {CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY"},
      {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS"},
      {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"},
      {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED"},
      {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED"},
      {CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"},
  };
  auto it = names.find(error);
  if (it == names.end()) return CUDA_ERROR_INVALID_VALUE;
  *name = it->second;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuGetErrorString(CUresult error, const char** text) {
  switch (error) {
    case CUDA_ERROR_OUT_OF_MEMORY: *text = "out of memory"; return CUDA_SUCCESS;
    case CUDA_ERROR_LAUNCH_FAILED: *text = "unspecified launch failure"; return CUDA_SUCCESS;
    case CUDA_ERROR_ILLEGAL_ADDRESS: *text = "an illegal memory access was encountered"; return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_VALUE: *text = "invalid argument"; return CUDA_SUCCESS;
    case CUDA_ERROR_NO_DEVICE: *text = "no CUDA-capable device is detected"; return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}

EXPORT CUresult cuDeviceGetCount(int* count) {
  ENTER("cuDeviceGetCount");
  *count = d.device_count;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  ENTER("cuDeviceGet");
  if (!valid_device(d, ordinal)) return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetName(char* name, int len, CUdevice device) {
  ENTER("cuDeviceGetName");
  if (!valid_device(d, device) || len <= 0) return CUDA_ERROR_INVALID_VALUE;
  std::snprintf(name, static_cast<size_t>(len), "dotcompute driver double %d (sm_90)", device);
  return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetAttribute(int* value, CUdevice_attribute attrib, CUdevice device) {
  ENTER("cuDeviceGetAttribute");
  if (!valid_device(d, device)) return CUDA_ERROR_INVALID_DEVICE;
  static const std::map<int, int> attrs = {
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1024},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, 1024},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, 1024},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, 64},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, 2147483647},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, 65535},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, 65535},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, kMaxSharedDefault},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, kMaxSharedOptin},
      {CU_DEVICE_ATTRIBUTE_WARP_SIZE, 32},
      {CU_DEVICE_ATTRIBUTE_CLOCK_RATE, 1980000},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 132},
      {CU_DEVICE_ATTRIBUTE_INTEGRATED, 0},
      {CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS, 1},
      {CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, 0x41},
      {CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, 0},
      {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, 50 << 20},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, 2048},
      {CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT, 3},
      {CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, 1},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 9},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0},
      {CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, 1},
      {CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, 1},
      {CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, 1},
  };
  auto it = attrs.find(attrib);
  if (it == attrs.end()) return CUDA_ERROR_INVALID_VALUE;
  *value = attrib == CU_DEVICE_ATTRIBUTE_PCI_BUS_ID ? it->second + device : it->second;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice device) {
  ENTER("cuDeviceTotalMem");
  if (!valid_device(d, device)) return CUDA_ERROR_INVALID_DEVICE;
  *bytes = kMemory;
  return CUDA_SUCCESS;
}

// Devices 0 and 1 share a switch (peers); any others do not.
EXPORT CUresult cuDeviceCanAccessPeer(int* can, CUdevice device, CUdevice peer) {
  ENTER("cuDeviceCanAccessPeer");
  if (!valid_device(d, device) || !valid_device(d, peer)) return CUDA_ERROR_INVALID_DEVICE;
  *can = device != peer && device < 2 && peer < 2;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext* ctx, CUdevice device) {
  ENTER("cuDevicePrimaryCtxRetain");
  if (!valid_device(d, device)) return CUDA_ERROR_INVALID_DEVICE;
  d.contexts[device].retained++;
  *ctx = reinterpret_cast<CUcontext>(&d.contexts[device]);
  return CUDA_SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice device) {
  ENTER("cuDevicePrimaryCtxRelease");
  if (!valid_device(d, device)) return CUDA_ERROR_INVALID_DEVICE;
  if (d.contexts[device].retained == 0) return CUDA_ERROR_INVALID_CONTEXT;
  d.contexts[device].retained--;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxSetCurrent(CUcontext ctx) {
  ENTER("cuCtxSetCurrent");
  auto* c = reinterpret_cast<Context*>(ctx);
  if (c && (c < d.contexts || c >= d.contexts + 8)) return CUDA_ERROR_INVALID_CONTEXT;
  t_current = c;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr* ptr, size_t bytes) {
  ENTER("cuMemAlloc");
  NEED_CONTEXT();
  if (!ptr || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  if (d.allocated + bytes > kMemory) return CUDA_ERROR_OUT_OF_MEMORY;
  std::unique_ptr<unsigned char[]> block(new (std::nothrow) unsigned char[bytes]);
  if (!block) return CUDA_ERROR_OUT_OF_MEMORY;
  const auto p = reinterpret_cast<CUdeviceptr>(block.get());
  d.allocations[p] = std::move(block);
  d.allocation_sizes[p] = bytes;
  d.allocated += bytes;
  *ptr = p;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr ptr) {
  ENTER("cuMemFree");
  NEED_CONTEXT();
  auto it = d.allocation_sizes.find(ptr);
  if (it == d.allocation_sizes.end()) return CUDA_ERROR_INVALID_VALUE;
  d.allocated -= it->second;
  d.allocation_sizes.erase(it);
  d.allocations.erase(ptr);
  return CUDA_SUCCESS;
}

EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, size_t bytes, CUstream s) {
  ENTER("cuMemcpyHtoDAsync");
  NEED_CONTEXT();
  if (!valid_stream(d, s)) return CUDA_ERROR_INVALID_HANDLE;
  if (!src || !inside_allocation(d, dst, bytes)) return CUDA_ERROR_INVALID_VALUE;
  return issue(d, s, "htod", [&d, dst, src, bytes, s] {
    std::memcpy(reinterpret_cast<void*>(dst), src, bytes);
    tick(d, bytes);
    op(d, "htod stream=" + std::to_string(stream_id(s)) + " bytes=" + std::to_string(bytes));
    return CUDA_SUCCESS;
  });
}

EXPORT CUresult cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, size_t bytes, CUstream s) {
  ENTER("cuMemcpyDtoHAsync");
  NEED_CONTEXT();
  if (!valid_stream(d, s)) return CUDA_ERROR_INVALID_HANDLE;
  if (!dst || !inside_allocation(d, src, bytes)) return CUDA_ERROR_INVALID_VALUE;
  return issue(d, s, "dtoh", [&d, dst, src, bytes, s] {
    std::memcpy(dst, reinterpret_cast<const void*>(src), bytes);
    tick(d, bytes);
    op(d, "dtoh stream=" + std::to_string(stream_id(s)) + " bytes=" + std::to_string(bytes));
    return CUDA_SUCCESS;
  });
}

EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s) {
  ENTER("cuMemcpyDtoDAsync");
  NEED_CONTEXT();
  if (!valid_stream(d, s)) return CUDA_ERROR_INVALID_HANDLE;
  if (!inside_allocation(d, dst, bytes) || !inside_allocation(d, src, bytes)) return CUDA_ERROR_INVALID_VALUE;
  return issue(d, s, "dtod", [&d, dst, src, bytes, s] {
    std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), bytes);
    tick(d, bytes);
    op(d, "dtod stream=" + std::to_string(stream_id(s)) + " bytes=" + std::to_string(bytes));
    return CUDA_SUCCESS;
  });
}

EXPORT CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t count, CUstream s) {
  ENTER("cuMemsetD8Async");
  NEED_CONTEXT();
  if (!valid_stream(d, s)) return CUDA_ERROR_INVALID_HANDLE;
  if (!inside_allocation(d, dst, count)) return CUDA_ERROR_INVALID_VALUE;
  return issue(d, s, "memset", [&d, dst, value, count, s] {
    std::memset(reinterpret_cast<void*>(dst), value, count);
    tick(d, count);
    op(d, "memset stream=" + std::to_string(stream_id(s)) + " bytes=" + std::to_string(count) +
              " value=" + std::to_string(value));
    return CUDA_SUCCESS;
  });
}

EXPORT CUresult cuModuleLoadData(CUmodule* module, const void* image) {
  ENTER("cuModuleLoadData");
  NEED_CONTEXT();
  if (!module || !image) return CUDA_ERROR_INVALID_VALUE;
  auto m = std::make_unique<Module>();
  size_t size = 0;
  if (cuda_double::is_elf(image, &size)) {
    m->functions = cuda_double::elf_function_names(image, size);
    m->objects = cuda_double::elf_object_symbols(image, size);
    d.last_image_kind = "cubin";
  } else {
    const char* text = static_cast<const char*>(image);
    if (!std::strstr(text, ".version") || !std::strstr(text, ".target")) return CUDA_ERROR_INVALID_IMAGE;
    m->functions = cuda_double::ptx_entry_names(text);
    size = std::strlen(text) + 1;
    d.last_image_kind = "ptx";
  }
  d.last_image_size = size;
  *module = reinterpret_cast<CUmodule>(m.get());
  d.modules[m.get()] = std::move(m);
  return CUDA_SUCCESS;
}

EXPORT CUresult cuModuleUnload(CUmodule module) {
  ENTER("cuModuleUnload");
  auto it = d.modules.find(reinterpret_cast<Module*>(module));
  if (it == d.modules.end()) return CUDA_ERROR_INVALID_HANDLE;
  for (const auto& [name, p] : it->second->globals) {  // a module's variables go with it
    d.allocated -= d.allocation_sizes[p];
    d.allocation_sizes.erase(p);
    d.allocations.erase(p);
  }
  d.modules.erase(it);
  return CUDA_SUCCESS;
}

// A variable's memory is an allocation of its own (zeroed, as a module's .bss is), so that the
// double's copy checks treat it like any device memory.
EXPORT CUresult cuModuleGetGlobal_v2(CUdeviceptr* ptr, size_t* bytes, CUmodule module, const char* name) {
  ENTER("cuModuleGetGlobal");
  NEED_CONTEXT();
  auto it = d.modules.find(reinterpret_cast<Module*>(module));
  if (it == d.modules.end()) return CUDA_ERROR_INVALID_HANDLE;
  if (!name) return CUDA_ERROR_INVALID_VALUE;
  Module& m = *it->second;
  size_t size = 0;
  for (const auto& [n, s] : m.objects)
    if (n == name) size = s;
  if (size == 0) return CUDA_ERROR_NOT_FOUND;
  auto g = m.globals.find(name);
  if (g == m.globals.end()) {
    std::unique_ptr<unsigned char[]> block(new (std::nothrow) unsigned char[size]());
    if (!block) return CUDA_ERROR_OUT_OF_MEMORY;
    const auto p = reinterpret_cast<CUdeviceptr>(block.get());
    d.allocations[p] = std::move(block);
    d.allocation_sizes[p] = size;
    d.allocated += size;
    g = m.globals.emplace(name, p).first;
  }
  if (ptr) *ptr = g->second;
  if (bytes) *bytes = size;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuModuleGetFunction(CUfunction* function, CUmodule module, const char* name) {
  ENTER("cuModuleGetFunction");
  NEED_CONTEXT();
  auto it = d.modules.find(reinterpret_cast<Module*>(module));
  if (it == d.modules.end()) return CUDA_ERROR_INVALID_HANDLE;
  bool found = false;
  for (const auto& f : it->second->functions) found = found || f == name;
  if (!found) return CUDA_ERROR_NOT_FOUND;
  d.functions.push_back(std::make_unique<Function>(Function{it->second.get(), name}));
  *function = reinterpret_cast<CUfunction>(d.functions.back().get());
  return CUDA_SUCCESS;
}

EXPORT CUresult cuFuncGetAttribute(int* value, CUfunction_attribute attrib, CUfunction function) {
  ENTER("cuFuncGetAttribute");
  if (!function) return CUDA_ERROR_INVALID_HANDLE;
  const auto* f = reinterpret_cast<Function*>(function);
  switch (attrib) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = 1024; return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *value = f->max_dynamic_shared; return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}

EXPORT CUresult cuFuncSetAttribute(CUfunction function, CUfunction_attribute attrib, int value) {
  ENTER("cuFuncSetAttribute");
  if (!function) return CUDA_ERROR_INVALID_HANDLE;
  if (attrib != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES || value < 0 || value > kMaxSharedOptin)
    return CUDA_ERROR_INVALID_VALUE;
  reinterpret_cast<Function*>(function)->max_dynamic_shared = value;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuFuncGetParamInfo(CUfunction function, size_t index, size_t* offset, size_t* size) {
  ENTER("cuFuncGetParamInfo");
  if (!function) return CUDA_ERROR_INVALID_HANDLE;
  auto it = d.param_sizes.find(reinterpret_cast<Function*>(function)->name);
  if (it == d.param_sizes.end()) return CUDA_ERROR_NOT_SUPPORTED;
  if (index >= it->second.size()) return CUDA_ERROR_INVALID_VALUE;
  size_t at = 0;
  for (size_t i = 0; i <= index; ++i) {
    const size_t s = it->second[i];
    at = (at + s - 1) / s * s;  // each parameter aligned to its own size, as in the C ABI
    if (i < index) at += s;
  }
  *offset = at;
  *size = it->second[index];
  return CUDA_SUCCESS;
}

EXPORT CUresult cuOccupancyMaxPotentialBlockSize(int* min_grid, int* block, CUfunction function,
                                                 CUoccupancyB2DSize, size_t dynamic_smem, int limit) {
  ENTER("cuOccupancyMaxPotentialBlockSize");
  if (!function || !min_grid || !block) return CUDA_ERROR_INVALID_VALUE;
  if (dynamic_smem > static_cast<size_t>(reinterpret_cast<Function*>(function)->max_dynamic_shared))
    return CUDA_ERROR_INVALID_VALUE;
  *block = limit > 0 && limit < d.occupancy_block ? limit : d.occupancy_block;
  *min_grid = 132 * (2048 / *block);
  return CUDA_SUCCESS;
}

namespace {

CUresult record_launch(Double& d, CUfunction function, const unsigned grid[3], const unsigned block[3],
                       unsigned shared, CUstream s, void** params, bool cooperative) {
  if (!function) return CUDA_ERROR_INVALID_HANDLE;
  if (!valid_stream(d, s)) return CUDA_ERROR_INVALID_HANDLE;
  const auto* f = reinterpret_cast<Function*>(function);
  const unsigned max_block[3] = {1024, 1024, 64};
  const unsigned max_grid[3] = {2147483647u, 65535u, 65535u};
  uint64_t threads = 1;
  for (int i = 0; i < 3; ++i) {
    if (grid[i] == 0 || block[i] == 0 || grid[i] > max_grid[i] || block[i] > max_block[i])
      return CUDA_ERROR_INVALID_VALUE;
    threads *= block[i];
  }
  if (threads > 1024) return CUDA_ERROR_INVALID_VALUE;
  if (shared > static_cast<unsigned>(f->max_dynamic_shared)) return CUDA_ERROR_INVALID_VALUE;
  if (cooperative && static_cast<uint64_t>(grid[0]) * grid[1] * grid[2] > 132u * (2048 / threads))
    return CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;

  double_launch l{};
  std::snprintf(l.name, sizeof l.name, "%s", f->name.c_str());
  for (int i = 0; i < 3; ++i) {
    l.grid[i] = grid[i];
    l.block[i] = block[i];
  }
  l.shared_bytes = shared;
  l.stream = stream_id(s);
  l.cooperative = cooperative;
  auto it = d.param_sizes.find(f->name);
  if (it == d.param_sizes.end()) {
    l.param_count = -1;
  } else {
    const auto& sizes = it->second;
    if (!sizes.empty() && !params) return CUDA_ERROR_INVALID_VALUE;
    l.param_count = static_cast<int>(sizes.size());
    for (size_t i = 0; i < sizes.size() && i < 64; ++i) {
      if (!params[i]) return CUDA_ERROR_INVALID_VALUE;
      l.param_sizes[i] = sizes[i];
      std::memcpy(l.param_bytes[i], params[i], sizes[i] < 16 ? sizes[i] : 16);
    }
  }
  const std::string line = std::string(cooperative ? "cooperative " : "") + "launch " + f->name + " stream=" +
                           std::to_string(stream_id(s));
  // The parameter values are copied now, at launch (or capture) time, as the driver does.
  return issue(d, s, "launch " + f->name, [&d, l, line] {
    d.launches.push_back(l);
    tick(d, 0);
    op(d, line);
    return CUDA_SUCCESS;
  });
}

}  // namespace

EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                               unsigned bz, unsigned shared, CUstream s, void** params, void** extra) {
  ENTER("cuLaunchKernel");
  NEED_CONTEXT();
  if (extra) return CUDA_ERROR_INVALID_VALUE;
  const unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
  return record_launch(d, f, grid, block, shared, s, params, false);
}

EXPORT CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                          unsigned by, unsigned bz, unsigned shared, CUstream s, void** params) {
  ENTER("cuLaunchCooperativeKernel");
  NEED_CONTEXT();
  const unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
  return record_launch(d, f, grid, block, shared, s, params, true);
}

// ---------------------------------------------------------------- optional entry points

EXPORT CUresult cuMemHostAlloc(void** ptr, size_t bytes, unsigned int flags) {
  ENTER("cuMemHostAlloc");
  NEED_CONTEXT();
  if (!ptr || bytes == 0 || (flags & ~0xFu)) return CUDA_ERROR_INVALID_VALUE;
  void* p = std::malloc(bytes);
  if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
  d.host_allocations.insert(p);
  *ptr = p;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuMemFreeHost(void* ptr) {
  ENTER("cuMemFreeHost");
  if (!d.host_allocations.erase(ptr)) return CUDA_ERROR_INVALID_VALUE;
  std::free(ptr);
  return CUDA_SUCCESS;
}

EXPORT CUresult cuMemAllocManaged(CUdeviceptr* ptr, size_t bytes, unsigned int flags) {
  if (flags != CU_MEM_ATTACH_GLOBAL && flags != 2u) return CUDA_ERROR_INVALID_VALUE;
  {
    Double& d = g();
    Lock lock(d.mutex);
    if (CUresult r = injected(d, "cuMemAllocManaged"); r != CUDA_SUCCESS) return r;
    op(d, "managed bytes=" + std::to_string(bytes));
  }
  // Host memory already is what managed memory looks like from the host.
  return cuMemAlloc_v2(ptr, bytes);
}

EXPORT CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned int flags) {
  ENTER("cuCtxEnablePeerAccess");
  NEED_CONTEXT();
  auto* p = reinterpret_cast<Context*>(peer);
  if (flags != 0 || !p || p < d.contexts || p >= d.contexts + 8 || p->retained == 0)
    return CUDA_ERROR_INVALID_VALUE;
  const int from = t_current->device, to = p->device;
  if (from == to || from >= 2 || to >= 2) return CUDA_ERROR_PEER_ACCESS_UNSUPPORTED;
  if (!d.peers_enabled.emplace(from, to).second) return CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
  op(d, "peer enable " + std::to_string(from) + "->" + std::to_string(to));
  return CUDA_SUCCESS;
}

EXPORT CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx,
                                  size_t bytes, CUstream s) {
  ENTER("cuMemcpyPeerAsync");
  NEED_CONTEXT();
  if (!dst_ctx || !src_ctx || !valid_stream(d, s)) return CUDA_ERROR_INVALID_HANDLE;
  if (!inside_allocation(d, dst, bytes) || !inside_allocation(d, src, bytes)) return CUDA_ERROR_INVALID_VALUE;
  const int to = reinterpret_cast<Context*>(dst_ctx)->device, from = reinterpret_cast<Context*>(src_ctx)->device;
  return issue(d, s, "peer", [&d, dst, src, bytes, s, to, from] {
    std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), bytes);
    tick(d, bytes);
    op(d, "peer " + std::to_string(from) + "->" + std::to_string(to) + " stream=" + std::to_string(stream_id(s)) +
              " bytes=" + std::to_string(bytes));
    return CUDA_SUCCESS;
  });
}

// The dc_backend table of the CUDA plugin: every ABI entry point, each
// translating its arguments into driver calls and driver errors into dc_status.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <vector>

#include "compile_policy.hpp"
#include "entry.hpp"
#include "dotcompute/backend_abi.h"
#include "launch_geometry.hpp"
#include "state.hpp"
#include "status.hpp"

namespace dotcompute::cuda {

namespace {
std::unique_ptr<State> g_state;
}  // namespace

dc_status need_state(State*& s) {
  s = g_state.get();
  if (!s) return fail(DC_ERROR_UNAVAILABLE, "the CUDA backend is not initialized");
  return DC_OK;
}

dc_status need_device(int32_t device, State*& s, Device*& dev) {
  DC_TRY(need_state(s));
  if (device < 0 || static_cast<size_t>(device) >= s->devices.size())
    return fail(DC_ERROR_INVALID_ARGUMENT, "no CUDA device " + std::to_string(device) + " (there are " +
                                               std::to_string(s->devices.size()) + ")");
  dev = s->devices[static_cast<size_t>(device)].get();
  return dev->make_current();
}

dc_status enter_stream(dc_stream st, State*& s, CUstream& cu) {
  Device* dev = nullptr;
  DC_TRY(need_device(st ? st->device : 0, s, dev));
  cu = st ? st->stream : nullptr;
  return DC_OK;
}

const Driver& drv() { return *g_state->driver; }

namespace {

// ---- lifecycle ----

dc_status cu_initialize() {
  clear_last_error();
  if (g_state) return DC_OK;
  auto s = std::make_unique<State>();
  std::string error;
  s->driver = Driver::load(error);
  if (!s->driver) return fail(DC_ERROR_UNAVAILABLE, error);
  const Driver& d = *s->driver;
  const CUresult init = d.cuInit(0);
  if (init != CUDA_SUCCESS)
    return fail(DC_ERROR_UNAVAILABLE, "cuInit failed: " + d.describe(init) + " (driver " + d.path() + ")");
  DC_TRY(check(d, d.cuDriverGetVersion(&s->driver_version), "cuDriverGetVersion"));
  int count = 0;
  DC_TRY(check(d, d.cuDeviceGetCount(&count), "cuDeviceGetCount"));
  if (count == 0) return fail(DC_ERROR_UNAVAILABLE, "the NVIDIA driver reports no CUDA device");
  for (int i = 0; i < count; ++i) {
    std::unique_ptr<Device> dev;
    DC_TRY(Device::open(d, i, dev));
    s->devices.push_back(std::move(dev));
  }
  for (auto& dev : s->devices) {
    std::vector<int> row;
    for (auto& peer : s->devices) {
      int can = 0;
      if (peer.get() != dev.get()) d.cuDeviceCanAccessPeer(&can, dev->handle(), peer->handle());
      row.push_back(peer.get() == dev.get() ? 1 : can);
    }
    dev->finish_info(row, s->driver_version);
  }
  g_state = std::move(s);
  return DC_OK;
}

void cu_shutdown() { g_state.reset(); }

const char* cu_last_error() { return last_error_message(); }

// ---- devices ----

dc_status cu_device_count(int32_t* count) {
  State* s = nullptr;
  DC_TRY(need_state(s));
  if (!count) return fail(DC_ERROR_INVALID_ARGUMENT, "device_count: count is null");
  *count = static_cast<int32_t>(s->devices.size());
  return DC_OK;
}

dc_status cu_device_info(int32_t device, dc_device_info* info) {
  State* s = nullptr;
  Device* dev = nullptr;
  DC_TRY(need_device(device, s, dev));
  // The struct_size rule (backend_abi.h): older callers get what they have room for.
  if (!dc_write_device_info(info, &dev->info()))
    return fail(DC_ERROR_INVALID_ARGUMENT, "device_info: info is null or its struct_size is smaller than "
                                           "DC_DEVICE_INFO_MIN_SIZE");
  return DC_OK;
}

dc_status cu_compiler_identity(int32_t device, char* buf, size_t cap) {
  State* s = nullptr;
  Device* dev = nullptr;
  DC_TRY(need_device(device, s, dev));
  const Nvrtc* n = s->compiler();
  if (!n) return fail(DC_ERROR_UNAVAILABLE, s->nvrtc_error);
  const CompileTarget t = choose_target(dev->sm(), s->driver_version, n->version_number(), n->supported_archs());
  const std::string id = "nvrtc " + std::to_string(n->major()) + "." + std::to_string(n->minor()) + " " + t.arch +
                         (t.ptx ? " ptx driver " + std::to_string(s->driver_version) : " cubin") +
                         (drv().simulated() ? drv().sim_identity() : std::string());
  if (!buf || cap <= id.size()) return fail(DC_ERROR_INVALID_ARGUMENT, "compiler_identity: buffer too small");
  std::memcpy(buf, id.c_str(), id.size() + 1);
  return DC_OK;
}

// ---- memory ----

dc_status cu_mem_alloc(int32_t device, uint64_t bytes, dc_devptr* out) {
  State* s = nullptr;
  Device* dev = nullptr;
  DC_TRY(need_device(device, s, dev));
  if (!out) return fail(DC_ERROR_INVALID_ARGUMENT, "mem_alloc: out is null");
  CUdeviceptr p = 0;
  // cuMemAlloc rejects 0 bytes; one byte keeps empty buffers valid handles.
  const CUresult r = drv().cuMemAlloc(&p, bytes ? bytes : 1);
  if (r == CUDA_ERROR_OUT_OF_MEMORY)
    return fail(DC_ERROR_OUT_OF_MEMORY, "cuda:" + std::to_string(device) + ": out of memory allocating " +
                                            std::to_string(bytes) + " bytes");
  DC_TRY(check(drv(), r, "cuMemAlloc"));
  *out = p;
  return DC_OK;
}

dc_status cu_mem_free(int32_t device, dc_devptr ptr) {
  State* s = nullptr;
  Device* dev = nullptr;
  DC_TRY(need_device(device, s, dev));
  return check(drv(), drv().cuMemFree(ptr), "cuMemFree");
}

dc_status cu_memcpy_h2d(dc_stream st, dc_devptr dst, uint64_t dst_offset, const void* src, uint64_t bytes) {
  State* s = nullptr;
  CUstream cu = nullptr;
  DC_TRY(enter_stream(st, s, cu));
  if (bytes == 0) return DC_OK;
  if (!src) return fail(DC_ERROR_INVALID_ARGUMENT, "memcpy_h2d: src is null");
  return check(drv(), drv().cuMemcpyHtoDAsync(dst + dst_offset, src, bytes, cu), "cuMemcpyHtoDAsync");
}

dc_status cu_memcpy_d2h(dc_stream st, void* dst, dc_devptr src, uint64_t src_offset, uint64_t bytes) {
  State* s = nullptr;
  CUstream cu = nullptr;
  DC_TRY(enter_stream(st, s, cu));
  if (bytes == 0) return DC_OK;
  if (!dst) return fail(DC_ERROR_INVALID_ARGUMENT, "memcpy_d2h: dst is null");
  return check(drv(), drv().cuMemcpyDtoHAsync(dst, src + src_offset, bytes, cu), "cuMemcpyDtoHAsync");
}

dc_status cu_memcpy_d2d(dc_stream st, dc_devptr dst, uint64_t dst_offset, dc_devptr src, uint64_t src_offset,
                        uint64_t bytes) {
  State* s = nullptr;
  CUstream cu = nullptr;
  DC_TRY(enter_stream(st, s, cu));
  if (bytes == 0) return DC_OK;
  return check(drv(), drv().cuMemcpyDtoDAsync(dst + dst_offset, src + src_offset, bytes, cu), "cuMemcpyDtoDAsync");
}

dc_status cu_memset_d8(dc_stream st, dc_devptr dst, uint64_t offset, uint8_t value, uint64_t bytes) {
  State* s = nullptr;
  CUstream cu = nullptr;
  DC_TRY(enter_stream(st, s, cu));
  if (bytes == 0) return DC_OK;
  return check(drv(), drv().cuMemsetD8Async(dst + offset, value, bytes, cu), "cuMemsetD8Async");
}

// ---- streams and events ----

dc_status cu_stream_create(int32_t device, dc_stream* out) {
  State* s = nullptr;
  Device* dev = nullptr;
  DC_TRY(need_device(device, s, dev));
  if (!out) return fail(DC_ERROR_INVALID_ARGUMENT, "stream_create: out is null");
  CUstream cu = nullptr;
  // Non-blocking: our streams never serialise against the legacy default stream other libraries use.
  DC_TRY(check(drv(), drv().cuStreamCreate(&cu, CU_STREAM_NON_BLOCKING), "cuStreamCreate"));
  *out = new dc_stream_s{device, cu};
  return DC_OK;
}

dc_status cu_stream_destroy(dc_stream st) {
  State* s = nullptr;
  CUstream cu = nullptr;
  if (!st) return fail(DC_ERROR_INVALID_ARGUMENT, "stream_destroy: stream is null");
  std::unique_ptr<dc_stream_s> owned(st);
  DC_TRY(enter_stream(st, s, cu));
  return check(drv(), drv().cuStreamDestroy(cu), "cuStreamDestroy");
}

dc_status cu_stream_synchronize(dc_stream st) {
  State* s = nullptr;
  CUstream cu = nullptr;
  DC_TRY(enter_stream(st, s, cu));
  return check(drv(), drv().cuStreamSynchronize(cu), "cuStreamSynchronize");
}

dc_status cu_stream_wait_event(dc_stream st, dc_event e) {
  State* s = nullptr;
  CUstream cu = nullptr;
  if (!e) return fail(DC_ERROR_INVALID_ARGUMENT, "stream_wait_event: event is null");
  DC_TRY(enter_stream(st, s, cu));
  return check(drv(), drv().cuStreamWaitEvent(cu, e->event, 0), "cuStreamWaitEvent");
}

dc_status cu_event_create(int32_t device, dc_event* out) {
  State* s = nullptr;
  Device* dev = nullptr;
  DC_TRY(need_device(device, s, dev));
  if (!out) return fail(DC_ERROR_INVALID_ARGUMENT, "event_create: out is null");
  CUevent cu = nullptr;
  DC_TRY(check(drv(), drv().cuEventCreate(&cu, CU_EVENT_DEFAULT), "cuEventCreate"));
  *out = new dc_event_s{device, cu};
  return DC_OK;
}

dc_status cu_event_destroy(dc_event e) {
  State* s = nullptr;
  Device* dev = nullptr;
  if (!e) return fail(DC_ERROR_INVALID_ARGUMENT, "event_destroy: event is null");
  std::unique_ptr<dc_event_s> owned(e);
  DC_TRY(need_device(e->device, s, dev));
  return check(drv(), drv().cuEventDestroy(e->event), "cuEventDestroy");
}

dc_status cu_event_record(dc_event e, dc_stream st) {
  State* s = nullptr;
  CUstream cu = nullptr;
  if (!e) return fail(DC_ERROR_INVALID_ARGUMENT, "event_record: event is null");
  DC_TRY(enter_stream(st, s, cu));
  return check(drv(), drv().cuEventRecord(e->event, cu), "cuEventRecord");
}

dc_status cu_event_synchronize(dc_event e) {
  State* s = nullptr;
  Device* dev = nullptr;
  if (!e) return fail(DC_ERROR_INVALID_ARGUMENT, "event_synchronize: event is null");
  DC_TRY(need_device(e->device, s, dev));
  return check(drv(), drv().cuEventSynchronize(e->event), "cuEventSynchronize");
}

dc_status cu_event_query(dc_event e, int32_t* done) {
  State* s = nullptr;
  Device* dev = nullptr;
  if (!e || !done) return fail(DC_ERROR_INVALID_ARGUMENT, "event_query: event or done is null");
  DC_TRY(need_device(e->device, s, dev));
  const CUresult r = drv().cuEventQuery(e->event);
  if (r == CUDA_ERROR_NOT_READY) {
    *done = 0;
    return DC_OK;
  }
  DC_TRY(check(drv(), r, "cuEventQuery"));
  *done = 1;
  return DC_OK;
}

dc_status cu_event_elapsed_ms(dc_event start, dc_event end, double* ms) {
  State* s = nullptr;
  Device* dev = nullptr;
  if (!start || !end || !ms) return fail(DC_ERROR_INVALID_ARGUMENT, "event_elapsed_ms: null argument");
  DC_TRY(need_device(start->device, s, dev));
  float value = 0.0f;
  const CUresult r = drv().cuEventElapsedTime(&value, start->event, end->event);
  if (r == CUDA_ERROR_NOT_READY)
    return fail(DC_ERROR_INVALID_ARGUMENT, "event_elapsed_ms: an event has not completed yet (synchronize first)");
  DC_TRY(check(drv(), r, "cuEventElapsedTime"));
  *ms = value;
  return DC_OK;
}

// ---- compilation and modules ----

dc_status cu_compile(int32_t device, const char* source, const char* options, void** binary, uint64_t* size) {
  State* s = nullptr;
  Device* dev = nullptr;
  DC_TRY(need_device(device, s, dev));
  if (!source || !binary || !size) return fail(DC_ERROR_INVALID_ARGUMENT, "compile: null source or output");
  const Nvrtc* n = s->compiler();
  if (!n) return fail(DC_ERROR_UNAVAILABLE, s->nvrtc_error);
  const CompileTarget t = choose_target(dev->sm(), s->driver_version, n->version_number(), n->supported_archs());
  const std::vector<std::string> exprs = name_expressions_in(source);
  const Nvrtc::Result r = n->compile(source, t.arch, split_options(options), "dotcompute_kernel.cu", exprs);
  if (!r.ok)
    return fail(DC_ERROR_COMPILATION, "NVRTC " + std::to_string(n->major()) + "." + std::to_string(n->minor()) +
                                          " failed to compile for " + t.arch + ":\n" + r.log);
  // The CUDA simulator runs the same source compiled for the host; its image carries both builds.
  std::string sim_image, sim_error;
  if (drv().simulated() && !drv().sim_image(source, options, dev->sm(), r.output, sim_image, sim_error))
    return fail(DC_ERROR_COMPILATION, sim_error);
  std::string out = drv().simulated() ? std::move(sim_image) : r.output;
  if (!exprs.empty()) {
    // The lowered names travel with the image (and through the kernel cache): kernel_get maps the
    // expression to the symbol on a GPU and on the simulator alike.
    NameMap names;
    for (size_t i = 0; i < exprs.size(); ++i) names.emplace_back(exprs[i], r.lowered[i]);
    out = wrap_with_names(names, out);
  }
  void* blob = std::malloc(out.size());
  if (!blob) return fail(DC_ERROR_OUT_OF_MEMORY, "compile: out of host memory for the binary");
  std::memcpy(blob, out.data(), out.size());
  *binary = blob;
  *size = out.size();
  return DC_OK;
}

void cu_free_binary(void* binary) { std::free(binary); }

dc_status cu_module_load(int32_t device, const void* binary, uint64_t size, dc_module* out) {
  State* s = nullptr;
  Device* dev = nullptr;
  DC_TRY(need_device(device, s, dev));
  if (!binary || size == 0 || !out) return fail(DC_ERROR_INVALID_ARGUMENT, "module_load: empty binary");
  NameMap names;
  const void* image = binary;
  size_t image_size = static_cast<size_t>(size);
  std::string error;
  if (!unwrap_names(binary, image_size, names, image, image_size, error) && !error.empty())
    return fail(DC_ERROR_INVALID_ARGUMENT, "module_load: " + error);
  // An image behind a name table starts wherever the table ends; the driver reads the ELF/PTX
  // headers in place, so hand it a copy at an aligned address when the image is not aligned.
  std::vector<uint64_t> aligned;
  if (reinterpret_cast<uintptr_t>(image) % alignof(uint64_t) != 0) {
    aligned.resize(image_size / sizeof(uint64_t) + 2, 0);  // +2: the rest, and a NUL after PTX text
    std::memcpy(aligned.data(), image, image_size);
    image = aligned.data();
  }
  CUmodule m = nullptr;
  DC_TRY(check(drv(), drv().cuModuleLoadData(&m, image), "cuModuleLoadData"));
  auto mod = std::make_unique<dc_module_s>();
  mod->device = device;
  mod->module = m;
  for (auto& [expr, lowered] : names) mod->lowered.emplace(std::move(expr), std::move(lowered));
  *out = mod.release();
  return DC_OK;
}

dc_status cu_module_unload(dc_module m) {
  State* s = nullptr;
  Device* dev = nullptr;
  if (!m) return fail(DC_ERROR_INVALID_ARGUMENT, "module_unload: module is null");
  std::unique_ptr<dc_module_s> owned(m);
  DC_TRY(need_device(m->device, s, dev));
  return check(drv(), drv().cuModuleUnload(m->module), "cuModuleUnload");
}

dc_status cu_kernel_get(dc_module m, const char* name, dc_kernel* out) {
  State* s = nullptr;
  Device* dev = nullptr;
  if (!m || !name || !out) return fail(DC_ERROR_INVALID_ARGUMENT, "kernel_get: null argument");
  DC_TRY(need_device(m->device, s, dev));
  std::lock_guard<std::mutex> lock(m->mutex);
  if (auto it = m->kernels.find(name); it != m->kernels.end()) {
    *out = it->second.get();
    return DC_OK;
  }
  CUfunction f = nullptr;
  const auto lowered = m->lowered.find(name);
  const char* symbol = lowered != m->lowered.end() ? lowered->second.c_str() : name;
  const CUresult r = drv().cuModuleGetFunction(&f, m->module, symbol);
  if (r == CUDA_ERROR_NOT_FOUND)
    return fail(DC_ERROR_INVALID_ARGUMENT,
                std::string("no kernel named '") + name + "' in the module" +
                    (symbol != name ? std::string(" (NVRTC lowered it to '") + symbol + "', which the module lacks)"
                                    : std::string(" (is it declared extern \"C\" __global__?)")));
  DC_TRY(check(drv(), r, "cuModuleGetFunction"));
  auto k = std::make_unique<dc_kernel_s>();
  k->function = f;
  k->name = name;
  k->sizes_known = false;
  if (drv().cuFuncGetParamInfo) {
    // Ask for parameters until the driver says the index is past the end.
    k->sizes_known = true;
    for (size_t i = 0;; ++i) {
      size_t offset = 0, bytes = 0;
      const CUresult pr = drv().cuFuncGetParamInfo(f, i, &offset, &bytes);
      if (pr == CUDA_ERROR_INVALID_VALUE) break;
      if (pr != CUDA_SUCCESS) {
        k->sizes_known = false;
        k->param_sizes.clear();
        break;
      }
      k->param_sizes.push_back(bytes);
    }
  }
  DC_TRY(check(drv(), drv().cuFuncGetAttribute(&k->max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f),
               "cuFuncGetAttribute"));
  *out = k.get();
  m->kernels.emplace(name, std::move(k));
  return DC_OK;
}

dc_status cu_launch(dc_stream st, dc_kernel k, const dc_launch_config* given, const dc_kernel_arg* args,
                    uint32_t nargs) {
  State* s = nullptr;
  CUstream cu = nullptr;
  if (!k || !given) return fail(DC_ERROR_INVALID_ARGUMENT, "launch: kernel or config is null");
  dc_launch_config normalized;  // the struct_size rule (backend_abi.h): absent fields are 0
  if (!dc_read_launch_config(given, &normalized))
    return fail(DC_ERROR_INVALID_ARGUMENT, "launch: dc_launch_config.struct_size is smaller than "
                                           "DC_LAUNCH_CONFIG_MIN_SIZE");
  const dc_launch_config* cfg = &normalized;
  DC_TRY(enter_stream(st, s, cu));
  const Device& dev = *s->devices[static_cast<size_t>(st ? st->device : 0)];
  if (cfg->dims < 1 || cfg->dims > 3)
    return fail(DC_ERROR_INVALID_ARGUMENT, "launch of " + k->name + ": dims must be 1, 2 or 3");
  uint64_t global[3] = {1, 1, 1};
  for (uint32_t d = 0; d < cfg->dims; ++d) {
    if (cfg->global_size[d] == 0) return DC_OK;  // nothing to run
    global[d] = cfg->global_size[d];
  }

  PackedParams packed;
  std::string error;
  if (!pack_params(args, nargs, k->sizes_known ? &k->param_sizes : nullptr, k->name, packed, error))
    return fail(DC_ERROR_INVALID_ARGUMENT, error);

  const unsigned shared = cfg->dynamic_shared_bytes;
  if (shared > 48 * 1024) {
    if (shared > static_cast<unsigned>(dev.shared_optin_bytes()))
      return fail(DC_ERROR_LAUNCH, "launch of " + k->name + ": " + std::to_string(shared) +
                                       " bytes of dynamic shared memory exceed the device's " +
                                       std::to_string(dev.shared_optin_bytes()));
    // Above 48 KiB a kernel must opt in to the larger carve-out.
    DC_TRY(check(drv(), drv().cuFuncSetAttribute(k->function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                 static_cast<int>(shared)),
                 "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)"));
  }

  unsigned block[3] = {1, 1, 1};
  bool chosen = true;
  for (uint32_t d = 0; d < cfg->dims; ++d) chosen = chosen && cfg->local_size[d] == 0;
  if (chosen) {
    int min_grid = 0, threads = 0;
    DC_TRY(check(drv(), drv().cuOccupancyMaxPotentialBlockSize(&min_grid, &threads, k->function, nullptr, shared, 0),
                 "cuOccupancyMaxPotentialBlockSize"));
    choose_block(cfg->dims, global, threads, dev.warp_size(), block);
  } else {
    uint64_t product = 1;
    for (uint32_t d = 0; d < cfg->dims; ++d) {
      if (cfg->local_size[d] == 0)
        return fail(DC_ERROR_INVALID_ARGUMENT, "launch of " + k->name + ": local size " + std::to_string(d) +
                                                   " is 0 while others are set");
      block[d] = cfg->local_size[d];
      product *= block[d];
    }
    if (product > static_cast<uint64_t>(k->max_threads))
      return fail(DC_ERROR_LAUNCH, "launch of " + k->name + ": a block of " + std::to_string(product) +
                                       " threads exceeds the kernel's limit of " + std::to_string(k->max_threads));
  }
  unsigned grid[3];
  const int max_grid[3] = {dev.max_grid(0), dev.max_grid(1), dev.max_grid(2)};
  if (!grid_for(global, block, max_grid, grid, error))
    return fail(DC_ERROR_LAUNCH, "launch of " + k->name + ": " + error);

  void** params = packed.slots.empty() ? nullptr : packed.slots.data();
  if (cfg->flags & DC_LAUNCH_COOPERATIVE) {
    if (!dev.cooperative_launch())
      return fail(DC_ERROR_UNSUPPORTED, "cuda:" + std::to_string(dev.ordinal()) + " has no cooperative launch");
    return check(drv(), drv().cuLaunchCooperativeKernel(k->function, grid[0], grid[1], grid[2], block[0], block[1],
                                                        block[2], shared, cu, params),
                 ("cuLaunchCooperativeKernel(" + k->name + ")").c_str());
  }
  return check(drv(), drv().cuLaunchKernel(k->function, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                                           shared, cu, params, nullptr),
               ("cuLaunchKernel(" + k->name + ")").c_str());
}

// The CUDA objects behind dotcompute's, for vendor libraries (cuBLAS, cuFFT) on the same stream
// and memory. Refused on the simulator: its streams and device addresses are its own, and a real
// CUDA library given them would fault.
dc_status cu_native_handle(uint32_t kind, uint64_t object, uint64_t* out) {
  State* s = nullptr;
  DC_TRY(need_state(s));
  if (!out) return fail(DC_ERROR_INVALID_ARGUMENT, "native_handle: out is null");
  if (s->driver->simulated())
    return fail(DC_ERROR_UNSUPPORTED,
                "native_handle: cuda devices are simulated (DOTCOMPUTE_CUDA_SIM); their streams and addresses "
                "are not CUDA's, so no vendor library can use them");
  switch (kind) {
    case DC_NATIVE_STREAM: {
      const auto* st = reinterpret_cast<const dc_stream_s*>(static_cast<uintptr_t>(object));
      if (!st) return fail(DC_ERROR_INVALID_ARGUMENT, "native_handle: the stream is null");
      *out = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(st->stream));
      return DC_OK;
    }
    case DC_NATIVE_BUFFER:  // a dc_devptr is the CUdeviceptr (cu_mem_alloc)
      if (object == 0) return fail(DC_ERROR_INVALID_ARGUMENT, "native_handle: the buffer handle is null");
      *out = object;
      return DC_OK;
    case DC_NATIVE_CONTEXT: {
      if (object > static_cast<uint64_t>(INT32_MAX))
        return fail(DC_ERROR_INVALID_ARGUMENT, "native_handle: device index " + std::to_string(object));
      Device* dev = nullptr;
      DC_TRY(need_device(static_cast<int32_t>(object), s, dev));
      *out = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(dev->context()));
      return DC_OK;
    }
    default:
      return fail(DC_ERROR_UNSUPPORTED, "native_handle: unknown kind " + std::to_string(kind));
  }
}

const dc_backend kBackend = {
    sizeof(dc_backend),
    DC_BACKEND_ABI_VERSION,
    "cuda",
    "0.1.0",
    Guard<cu_initialize>::call,
    cu_shutdown,
    cu_last_error,
    Guard<cu_device_count>::call,
    Guard<cu_device_info>::call,
    Guard<cu_compiler_identity>::call,
    Guard<cu_mem_alloc>::call,
    Guard<cu_mem_free>::call,
    Guard<cu_memcpy_h2d>::call,
    Guard<cu_memcpy_d2h>::call,
    Guard<cu_memcpy_d2d>::call,
    Guard<cu_memset_d8>::call,
    Guard<cu_stream_create>::call,
    Guard<cu_stream_destroy>::call,
    Guard<cu_stream_synchronize>::call,
    Guard<cu_stream_wait_event>::call,
    Guard<cu_event_create>::call,
    Guard<cu_event_destroy>::call,
    Guard<cu_event_record>::call,
    Guard<cu_event_synchronize>::call,
    Guard<cu_event_query>::call,
    Guard<cu_event_elapsed_ms>::call,
    Guard<cu_compile>::call,
    cu_free_binary,
    Guard<cu_module_load>::call,
    Guard<cu_module_unload>::call,
    Guard<cu_kernel_get>::call,
    Guard<cu_launch>::call,
    nullptr,  // mem_host_pointer: device memory is not host-visible
    nullptr,  // set_cache_dir: NVRTC output goes through the core's cache
    Guard<cu_native_handle>::call,
};

}  // namespace

}  // namespace dotcompute::cuda

extern "C" __attribute__((visibility("default"))) const dc_backend* dotcompute_backend_entry(void) {
  return &dotcompute::cuda::kBackend;
}

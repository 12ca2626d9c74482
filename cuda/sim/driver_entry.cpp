// The driver-API entry points of the CUDA simulator, exported under the names
// (and `_v2` versions) the CUDA plugin resolves from libcuda.so.1.
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <cxxabi.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>

#include "image.hpp"
#include "sim.hpp"
#include "sim_api.h"

namespace dcsim_lib {

namespace {

Sim* g_sim = nullptr;  // never freed: worker threads may still run while the process exits
std::mutex g_init_mutex;
thread_local Context* t_context = nullptr;

constexpr int kDriverVersion = 12090;  // CUDA 12.9: the newest NVRTC 12 wheels target it
constexpr uint64_t kStackBytes = 128 * 1024;

bool is_fake(uint64_t p) { return (p & 0xffff000000000000ull) == kDeviceBase; }

Context* context_of_device(int d) { return g_sim->devices[static_cast<size_t>(d)]->primary.get(); }

}  // namespace

// The stream a call names: the context device's legacy default stream for null.
CUresult stream_of(CUstream h, Stream*& out) {
  if (!g_sim) return CUDA_ERROR_NOT_INITIALIZED;
  if (h) {
    out = reinterpret_cast<Stream*>(h);
    std::lock_guard<std::mutex> lock(g_sim->mutex);
    if (!g_sim->streams.count(out)) return fail(CUDA_ERROR_INVALID_HANDLE, "not a live stream");
    return CUDA_SUCCESS;
  }
  Context* c = current();
  if (!c) return fail(CUDA_ERROR_INVALID_CONTEXT, "no current context (cuCtxSetCurrent first)");
  out = g_sim->devices[static_cast<size_t>(c->device)]->null_stream.get();
  return CUDA_SUCCESS;
}

// Legacy default-stream semantics: work on the null stream waits for all blocking streams of the
// device, and work on a blocking stream waits for the null stream. Non-blocking streams (all of
// dotcompute's) are independent.
void enqueue(Stream* s, Task task) {
  if (!s->capture && !(s->flags & CU_STREAM_NON_BLOCKING)) {
    Stream* null = g_sim->devices[static_cast<size_t>(s->device)]->null_stream.get();
    std::vector<std::pair<Stream*, uint64_t>> waits;
    {
      std::lock_guard<std::mutex> lock(g_sim->mutex);
      if (s == null) {
        for (Stream* o : g_sim->streams)
          if (o != s && o->device == s->device && !(o->flags & CU_STREAM_NON_BLOCKING))
            waits.emplace_back(o, o->ticket());
      } else {
        waits.emplace_back(null, null->ticket());
      }
    }
    for (auto& w : waits) {
      if (w.second == 0) continue;
      s->enqueue([o = w.first, t = w.second](Stream&) { o->wait_for(t); });
    }
  }
  s->enqueue(std::move(task));
}

std::shared_ptr<Event> event_ref(CUevent h) {
  std::lock_guard<std::mutex> lock(g_sim->mutex);
  auto it = g_sim->events.find(reinterpret_cast<Event*>(h));
  return it == g_sim->events.end() ? nullptr : it->second;
}

Sim* sim() { return g_sim; }
Context* current() { return t_context; }
Device* device_of(int ordinal) {
  if (!g_sim || ordinal < 0 || static_cast<size_t>(ordinal) >= g_sim->devices.size()) return nullptr;
  return g_sim->devices[static_cast<size_t>(ordinal)].get();
}

namespace {

// ---- kernel launches ----

struct PackedLaunch {
  std::shared_ptr<Module> module;
  Function* function;
  std::vector<std::max_align_t> storage;
  std::vector<void*> params;
  unsigned grid[3], block[3];
  unsigned shared;
  uint64_t shared_window;  // the device's shared memory per block (the static window's size)
  ExecConfig exec;         // schedule and watchdog, as the environment said when the launch was made
  bool cooperative = false;  // cuLaunchCooperativeKernel: every block resident at once (dcsim_grid.h)
};

void execute(Stream& s, const PackedLaunch& p) {
  if (p.cooperative) {  // every block resident at once (cooperative.cpp)
    if (!s.cancelled())
      run_resident(s, *p.function, p.params.data(), p.grid, p.block, p.shared, p.shared_window, p.exec, kStackBytes);
    return;
  }
  const dcsim_kernel_entry* k = p.function->entry;
  const uint64_t blocks = static_cast<uint64_t>(p.grid[0]) * p.grid[1] * p.grid[2];
  const unsigned threads = p.block[0] * p.block[1] * p.block[2];
  // Several blocks per task amortise the hand-off; many tasks keep the pool's threads busy.
  const uint64_t per_task = std::max<uint64_t>(1, blocks / 64);
  const uint64_t tasks = (blocks + per_task - 1) / per_task;
  std::mutex error_mutex;
  int error_code = 0;
  std::string error;
  std::atomic<bool> failed{false};
  const bool fibers = p.function->module->fibers;
  if (s.cancelled()) return;  // dropped by Ctrl-C in synchronize() before it started
  auto watch = std::make_unique<Watch>(p.exec.timeout_s);
  s.set_running(watch.get());
  parallel_for(tasks, [&](uint64_t t) {
    if (failed.load(std::memory_order_relaxed)) return;
    dcsim_launch L{};
    L.kernel = k;
    L.params = p.params.data();
    std::memcpy(L.grid, p.grid, sizeof L.grid);
    std::memcpy(L.block, p.block, sizeof L.block);
    L.block_begin = t * per_task;
    L.block_end = std::min(blocks, L.block_begin + per_task);
    L.dynamic_shared_bytes = p.shared;
    L.use_fibers = fibers && threads > 1;
    L.warp_size = 32;
    L.schedule = p.exec.schedule;
    L.seed = p.exec.seed;
    char* dynamic = nullptr;
    L.static_shared_bytes = p.shared_window;
    // a plain block runs on a guarded stack of its own too (one), fibers on one each
    L.stacks = thread_stacks(L.use_fibers ? threads : 1, kStackBytes);
    L.stack_bytes = kStackBytes;
    if (!L.stacks || !thread_shared(p.shared, p.shared_window, &L.static_shared_top, &dynamic)) {
      L.error_code = CUDA_ERROR_OUT_OF_MEMORY;
      std::snprintf(L.error, sizeof L.error, "no host memory for %u stacks and the block's shared memory", threads);
    }
    L.dynamic_shared = dynamic;
    if (L.error_code == 0) run_guarded(p.function->module->run, &L, watch.get());
    if (L.error_code) {
      failed = true;
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error_code) {
        error_code = L.error_code;
        error = L.error;
      }
    }
  });
  s.set_running(nullptr);
  if (watch->interrupted()) return;  // the KeyboardInterrupt that follows is the report
  if (error_code) s.record_error(error_code, "kernel " + p.function->symbol + ": " + error);
}

CUresult launch(CUfunction f, const unsigned grid[3], const unsigned block[3], unsigned shared, CUstream hstream,
                void** params, void** extra, bool cooperative) {
  if (!g_sim) return CUDA_ERROR_NOT_INITIALIZED;
  Context* ctx = current();
  if (!ctx) return fail(CUDA_ERROR_INVALID_CONTEXT, "no current context");
  if (!f) return fail(CUDA_ERROR_INVALID_HANDLE, "null function");
  Function* fn = reinterpret_cast<Function*>(f);
  Stream* s = nullptr;
  if (CUresult r = stream_of(hstream, s); r != CUDA_SUCCESS) return r;
  const Device& dev = *g_sim->devices[static_cast<size_t>(s->device)];
  if (fn->module->device != s->device)
    return fail(CUDA_ERROR_INVALID_HANDLE, "the function's module was loaded on another device");
  const int max_block[3] = {dev.cfg.threads_per_block, dev.cfg.threads_per_block, 64};
  const unsigned max_grid[3] = {2147483647u, 65535u, 65535u};
  uint64_t threads = 1;
  for (int d = 0; d < 3; ++d) {
    if (grid[d] == 0 || grid[d] > max_grid[d] || block[d] == 0 || block[d] > static_cast<unsigned>(max_block[d]))
      return fail(CUDA_ERROR_INVALID_VALUE, "grid (" + std::to_string(grid[0]) + ", " + std::to_string(grid[1]) +
                                                ", " + std::to_string(grid[2]) + ") or block (" +
                                                std::to_string(block[0]) + ", " + std::to_string(block[1]) + ", " +
                                                std::to_string(block[2]) + ") outside the device's limits");
    threads *= block[d];
  }
  if (threads > static_cast<uint64_t>(dev.cfg.threads_per_block))
    return fail(CUDA_ERROR_INVALID_VALUE, "a block of " + std::to_string(threads) + " threads exceeds the limit of " +
                                              std::to_string(dev.cfg.threads_per_block));
  if (static_cast<int64_t>(shared) > fn->max_dynamic_shared)
    return fail(CUDA_ERROR_INVALID_VALUE, std::to_string(shared) + " bytes of dynamic shared memory exceed the " +
                                              std::to_string(fn->max_dynamic_shared) +
                                              " the function allows (raise CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)");
  const uint64_t blocks = static_cast<uint64_t>(grid[0]) * grid[1] * grid[2];
  if (cooperative) {
    // the driver's rule: multiprocessors x the blocks of this size one of them holds at once
    const int per_sm = max_active_blocks(dev.cfg, fn->static_shared, static_cast<unsigned>(threads), shared);
    const uint64_t resident = static_cast<uint64_t>(dev.cfg.sms) * static_cast<uint64_t>(per_sm);
    if (blocks > resident)
      return fail(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
                  std::to_string(blocks) + " blocks cannot all be resident (at most " + std::to_string(resident) +
                      ": " + std::to_string(dev.cfg.sms) + " multiprocessors x " + std::to_string(per_sm) +
                      " blocks of " + std::to_string(threads) + " threads, cuOccupancyMaxActiveBlocksPerMultiprocessor)");
    // The simulator's own limit: every thread of a resident grid keeps a guarded stack (two memory
    // mappings), and a process may hold only vm.max_map_count mappings.
    const uint64_t need = resident_grid_mappings(blocks, static_cast<unsigned>(threads));
    const uint64_t have = mappings_available();
    if (need > have)
      return fail(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
                  "the CUDA simulator runs every block of a cooperative launch at once, each CUDA thread on a "
                  "guarded stack: " + std::to_string(blocks) + " blocks of " + std::to_string(threads) +
                      " threads need " + std::to_string(need) + " memory mappings, and this process may add " +
                      std::to_string(have) + " (vm.max_map_count). Simulate a smaller GPU "
                      "(DOTCOMPUTE_CUDA_SIM_DEVICES=\"sms=4\") so that a grid sized from the occupancy fits");
  }
  if (extra && !params)
    return fail(CUDA_ERROR_NOT_SUPPORTED, "kernel arguments through `extra` (CU_LAUNCH_PARAM_BUFFER_POINTER)");
  const dcsim_kernel_entry* k = fn->entry;
  if (k->nparams && !params) return fail(CUDA_ERROR_INVALID_VALUE, "the kernel takes parameters; params is null");

  auto p = std::make_shared<PackedLaunch>();
  if (std::string why; !parse_exec_config(p->exec, why)) return fail(CUDA_ERROR_INVALID_VALUE, why);
  p->shared_window = static_cast<uint64_t>(std::max(dev.cfg.shared_optin, dev.cfg.shared_per_block));
  p->module = fn->module->shared_from_this();
  p->function = fn;
  std::memcpy(p->grid, grid, sizeof p->grid);
  std::memcpy(p->block, block, sizeof p->block);
  p->shared = shared;
  p->cooperative = cooperative;
  p->storage.resize(fn->params_bytes / sizeof(std::max_align_t) + 1);
  char* base = reinterpret_cast<char*>(p->storage.data());
  for (uint32_t i = 0; i < k->nparams; ++i) {
    char* slot = base + fn->offsets[i];
    if (!params[i]) return fail(CUDA_ERROR_INVALID_VALUE, "params[" + std::to_string(i) + "] is null");
    std::memcpy(slot, params[i], k->sizes[i]);
    if (k->is_pointer[i]) {
      uint64_t v = 0;
      std::memcpy(&v, slot, sizeof v);
      if (v == 0) {
      } else if (is_fake(v)) {
        int owner = -1;
        char* host = resolve(v, 0, &owner);
        if (!host)
          return fail(CUDA_ERROR_INVALID_VALUE, "argument " + std::to_string(i) + " of " + fn->symbol +
                                                    " points outside every live allocation");
        if (owner != s->device) {
          std::lock_guard<std::mutex> lock(ctx->mutex);
          if (!context_of_device(s->device)->peers.count(owner))
            return fail(CUDA_ERROR_INVALID_VALUE, "argument " + std::to_string(i) + " of " + fn->symbol +
                                                      " is memory of device " + std::to_string(owner) +
                                                      " and peer access is not enabled");
        }
        std::memcpy(slot, &host, sizeof host);
      } else if (!resolve(v, 0)) {  // pinned or managed host memory, or a module's variable
        return fail(CUDA_ERROR_INVALID_VALUE,
                    "argument " + std::to_string(i) + " of " + fn->symbol +
                        " is a host address that is neither pinned nor managed memory nor a module's variable; a GPU "
                        "cannot read it");
      }
    }
    p->params.push_back(slot);
  }
  enqueue(s, [p](Stream& st) { execute(st, *p); });
  return CUDA_SUCCESS;
}

// ---- copies ----

char* device_range(CUdeviceptr p, size_t bytes, const char* what, CUresult& r) {
  char* host = resolve(p, bytes);
  if (!host)
    r = fail(CUDA_ERROR_INVALID_VALUE, std::string(what) + ": [0x" + [&] {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(p));
      return std::string(buf);
    }() + ", +" + std::to_string(bytes) + ") is not inside one device allocation");
  else
    r = CUDA_SUCCESS;
  return host;
}

}  // namespace

}  // namespace dcsim_lib

using namespace dcsim_lib;

DCSIM_EXPORT CUresult cuInit(unsigned int flags) {
  if (flags != 0) return fail(CUDA_ERROR_INVALID_VALUE, "cuInit flags must be 0");
  std::lock_guard<std::mutex> lock(g_init_mutex);
  if (g_sim) return CUDA_SUCCESS;
  std::vector<DeviceConfig> configs;
  std::string error;
  if (!parse_devices(std::getenv("DOTCOMPUTE_CUDA_SIM_DEVICES"), configs, error))
    return fail(CUDA_ERROR_INVALID_VALUE, "DOTCOMPUTE_CUDA_SIM_DEVICES: " + error);
  // One descriptor per loaded module (module.cpp): allow as many as the hard limit permits.
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = std::min<rlim_t>(files.rlim_max, 1 << 16);
    setrlimit(RLIMIT_NOFILE, &files);
  }
  auto s = new Sim();
  for (size_t i = 0; i < configs.size(); ++i) {
    auto d = std::make_unique<Device>();
    d->ordinal = static_cast<int>(i);
    d->cfg = configs[i];
    d->arena = std::make_unique<Arena>(d->ordinal, d->cfg.memory);
    d->primary = std::make_unique<Context>();
    d->primary->device = d->ordinal;
    d->null_stream = std::make_unique<Stream>(d->ordinal, 0);
    s->devices.push_back(std::move(d));
  }
  for (auto& d : s->devices) s->streams.insert(d->null_stream.get());
  g_sim = s;
  return CUDA_SUCCESS;
}

DCSIM_EXPORT CUresult cuDriverGetVersion(int* v) {
  if (!v) return CUDA_ERROR_INVALID_VALUE;
  *v = kDriverVersion;
  return CUDA_SUCCESS;
}

DCSIM_EXPORT CUresult cuGetErrorName(CUresult e, const char** name) {
  if (!name) return CUDA_ERROR_INVALID_VALUE;
  *name = error_name(e);
  return *name ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

DCSIM_EXPORT CUresult cuGetErrorString(CUresult e, const char** text) {
  if (!text) return CUDA_ERROR_INVALID_VALUE;
  *text = error_text(e);
  return *text ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

DCSIM_EXPORT CUresult cuDeviceGetCount(int* n) {
  NEED_INIT;
  if (!n) return CUDA_ERROR_INVALID_VALUE;
  *n = static_cast<int>(g_sim->devices.size());
  return CUDA_SUCCESS;
}

DCSIM_EXPORT CUresult cuDeviceGet(CUdevice* d, int ordinal) {
  NEED_INIT;
  if (!d) return CUDA_ERROR_INVALID_VALUE;
  if (!device_of(ordinal)) return CUDA_ERROR_INVALID_DEVICE;
  *d = ordinal;
  return CUDA_SUCCESS;
}

DCSIM_EXPORT CUresult cuDeviceGetName(char* name, int len, CUdevice d) {
  NEED_INIT;
  const Device* dev = device_of(d);
  if (!dev) return CUDA_ERROR_INVALID_DEVICE;
  if (!name || len <= 0) return CUDA_ERROR_INVALID_VALUE;
  std::snprintf(name, static_cast<size_t>(len), "%s", dev->cfg.name.c_str());
  return CUDA_SUCCESS;
}

DCSIM_EXPORT CUresult cuDeviceGetAttribute(int* value, CUdevice_attribute a, CUdevice d) {
  NEED_INIT;
  const Device* dev = device_of(d);
  if (!dev) return CUDA_ERROR_INVALID_DEVICE;
  if (!value) return CUDA_ERROR_INVALID_VALUE;
  const DeviceConfig& c = dev->cfg;
  switch (a) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = c.threads_per_block; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: *value = c.threads_per_block; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: *value = c.threads_per_block; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: *value = 64; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *value = 2147483647; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: *value = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: *value = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *value = c.shared_per_block; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *value = c.shared_optin; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *value = c.warp; break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *value = 1980000; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *value = c.sms; break;
    case CU_DEVICE_ATTRIBUTE_INTEGRATED: *value = 0; break;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: *value = 1; break;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: *value = 0x10 + d; break;
    case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: *value = 0; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *value = 50 * 1024 * 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: *value = c.threads_per_sm; break;
    case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: *value = 2; break;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: *value = 1; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = c.cc_major; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = c.cc_minor; break;
    case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: *value = 1; break;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS: *value = 1; break;
    case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH: *value = 1; break;
    default: return fail(CUDA_ERROR_INVALID_VALUE, "attribute " + std::to_string(a) + " is not simulated");
  }
  return CUDA_SUCCESS;
}

DCSIM_EXPORT CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice d) {
  NEED_INIT;
  const Device* dev = device_of(d);
  if (!dev) return CUDA_ERROR_INVALID_DEVICE;
  if (!bytes) return CUDA_ERROR_INVALID_VALUE;
  *bytes = dev->cfg.memory;
  return CUDA_SUCCESS;
}

DCSIM_EXPORT CUresult cuDeviceCanAccessPeer(int* can, CUdevice d, CUdevice peer) {
  NEED_INIT;
  if (!device_of(d) || !device_of(peer)) return CUDA_ERROR_INVALID_DEVICE;
  if (!can) return CUDA_ERROR_INVALID_VALUE;
  *can = d != peer;
  return CUDA_SUCCESS;
}

DCSIM_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext* ctx, CUdevice d) {
  NEED_INIT;
  if (!device_of(d)) return CUDA_ERROR_INVALID_DEVICE;
  if (!ctx) return CUDA_ERROR_INVALID_VALUE;
  *ctx = reinterpret_cast<CUcontext>(context_of_device(d));
  return CUDA_SUCCESS;
}

DCSIM_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) {
  NEED_INIT;
  return device_of(d) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

DCSIM_EXPORT CUresult cuCtxSetCurrent(CUcontext ctx) {
  NEED_INIT;
  t_context = reinterpret_cast<Context*>(ctx);
  return CUDA_SUCCESS;
}

DCSIM_EXPORT CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned int flags) {
  NEED_INIT;
  Context* c = current();
  if (!c) return fail(CUDA_ERROR_INVALID_CONTEXT, "no current context");
  if (!peer || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  const int other = reinterpret_cast<Context*>(peer)->device;
  if (other == c->device) return fail(CUDA_ERROR_INVALID_DEVICE, "a device is not its own peer");
  std::lock_guard<std::mutex> lock(c->mutex);
  if (!c->peers.insert(other).second) return CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
  return CUDA_SUCCESS;
}

// ---- memory ----

DCSIM_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t bytes) {
  NEED_INIT;
  Context* c = current();
  if (!c) return fail(CUDA_ERROR_INVALID_CONTEXT, "no current context");
  return g_sim->devices[static_cast<size_t>(c->device)]->arena->alloc(bytes, p);
}

DCSIM_EXPORT CUresult cuMemFree_v2(CUdeviceptr p) {
  NEED_INIT;
  if (p == 0) return CUDA_SUCCESS;
  if (is_fake(p)) {
    const uint64_t d = (p - kDeviceBase) >> kDeviceShift;
    if (d >= g_sim->devices.size()) return fail(CUDA_ERROR_INVALID_VALUE, "not a device address");
    // Frees are ordered after the device's pending work, as the real cuMemFree synchronises.
    for (Stream* s : [&] {
           std::lock_guard<std::mutex> lock(g_sim->mutex);
           return std::vector<Stream*>(g_sim->streams.begin(), g_sim->streams.end());
         }())
      if (s->device == static_cast<int>(d)) s->wait_for(s->ticket());
    return g_sim->devices[d]->arena->free(p);
  }
  // Managed memory is a host mapping.
  std::lock_guard<std::mutex> lock(g_sim->mutex);
  auto it = g_sim->host_ranges.find(static_cast<uintptr_t>(p));
  if (it == g_sim->host_ranges.end()) return fail(CUDA_ERROR_INVALID_VALUE, "cuMemFree of an unknown address");
  std::free(reinterpret_cast<void*>(p));
  g_sim->host_ranges.erase(it);
  return CUDA_SUCCESS;
}

static CUresult host_alloc(void** out, size_t bytes) {
  if (!out || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  void* p = std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
  if (!p) return fail(CUDA_ERROR_OUT_OF_MEMORY, "host allocation of " + std::to_string(bytes) + " bytes");
  std::lock_guard<std::mutex> lock(g_sim->mutex);
  g_sim->host_ranges[reinterpret_cast<uintptr_t>(p)] = bytes;
  *out = p;
  return CUDA_SUCCESS;
}

DCSIM_EXPORT CUresult cuMemHostAlloc(void** p, size_t bytes, unsigned int) {
  NEED_INIT;
  return host_alloc(p, bytes);
}

DCSIM_EXPORT CUresult cuMemFreeHost(void* p) {
  NEED_INIT;
  std::lock_guard<std::mutex> lock(g_sim->mutex);
  auto it = g_sim->host_ranges.find(reinterpret_cast<uintptr_t>(p));
  if (it == g_sim->host_ranges.end()) return fail(CUDA_ERROR_INVALID_VALUE, "cuMemFreeHost of an unknown pointer");
  std::free(p);
  g_sim->host_ranges.erase(it);
  return CUDA_SUCCESS;
}

// Managed memory is host memory that kernels may use directly (the simulator's "device" is the host).
DCSIM_EXPORT CUresult cuMemAllocManaged(CUdeviceptr* p, size_t bytes, unsigned int) {
  NEED_INIT;
  if (!current()) return fail(CUDA_ERROR_INVALID_CONTEXT, "no current context");
  void* host = nullptr;
  CUresult r = host_alloc(&host, bytes);
  if (r == CUDA_SUCCESS) *p = reinterpret_cast<CUdeviceptr>(host);
  return r;
}

DCSIM_EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, size_t bytes, CUstream h) {
  NEED_INIT;
  Stream* s = nullptr;
  if (CUresult r = stream_of(h, s); r != CUDA_SUCCESS) return r;
  if (!src || is_fake(reinterpret_cast<uint64_t>(src)))
    return fail(CUDA_ERROR_INVALID_VALUE, "cuMemcpyHtoD: the source is not a host address");
  CUresult r;
  char* d = device_range(dst, bytes, "cuMemcpyHtoD destination", r);
  if (!d) return r;
  if (is_pinned(src, bytes)) {
    enqueue(s, [d, src, bytes](Stream&) { std::memcpy(d, src, bytes); });
  } else {
    // Pageable memory: as with the real driver the data is staged before the call returns,
    // so the caller may reuse its buffer at once.
    auto staged = std::make_shared<std::vector<char>>(static_cast<const char*>(src), static_cast<const char*>(src) + bytes);
    enqueue(s, [d, staged](Stream&) { std::memcpy(d, staged->data(), staged->size()); });
  }
  return CUDA_SUCCESS;
}

DCSIM_EXPORT CUresult cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, size_t bytes, CUstream h) {
  NEED_INIT;
  Stream* s = nullptr;
  if (CUresult r = stream_of(h, s); r != CUDA_SUCCESS) return r;
  if (!dst || is_fake(reinterpret_cast<uint64_t>(dst)))
    return fail(CUDA_ERROR_INVALID_VALUE, "cuMemcpyDtoH: the destination is not a host address");
  CUresult r;
  const char* from = device_range(src, bytes, "cuMemcpyDtoH source", r);
  if (!from) return r;
  enqueue(s, [dst, from, bytes](Stream&) { std::memcpy(dst, from, bytes); });
  // Into pageable memory the real driver returns only once the copy is done.
  if (!is_pinned(dst, bytes) && !s->capture) s->wait_for(s->ticket());
  return CUDA_SUCCESS;
}

DCSIM_EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream h) {
  NEED_INIT;
  Stream* s = nullptr;
  if (CUresult r = stream_of(h, s); r != CUDA_SUCCESS) return r;
  CUresult r;
  char* d = device_range(dst, bytes, "cuMemcpyDtoD destination", r);
  if (!d) return r;
  const char* from = device_range(src, bytes, "cuMemcpyDtoD source", r);
  if (!from) return r;
  enqueue(s, [d, from, bytes](Stream&) { std::memmove(d, from, bytes); });
  return CUDA_SUCCESS;
}

DCSIM_EXPORT CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext, CUdeviceptr src, CUcontext, size_t bytes,
                                        CUstream h) {
  return cuMemcpyDtoDAsync_v2(dst, src, bytes, h);
}

DCSIM_EXPORT CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t count, CUstream h) {
  NEED_INIT;
  Stream* s = nullptr;
  if (CUresult r = stream_of(h, s); r != CUDA_SUCCESS) return r;
  CUresult r;
  char* d = device_range(dst, count, "cuMemsetD8", r);
  if (!d) return r;
  enqueue(s, [d, value, count](Stream&) { std::memset(d, value, count); });
  return CUDA_SUCCESS;
}

// ---- modules and functions ----

DCSIM_EXPORT CUresult cuModuleLoadData(CUmodule* out, const void* image) {
  NEED_INIT;
  Context* c = current();
  if (!c) return fail(CUDA_ERROR_INVALID_CONTEXT, "no current context");
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  std::shared_ptr<Module> m;
  if (CUresult r = load_module(image, c->device, m); r != CUDA_SUCCESS) return r;
  std::lock_guard<std::mutex> lock(g_sim->mutex);
  g_sim->modules[m.get()] = m;
  *out = reinterpret_cast<CUmodule>(m.get());
  return CUDA_SUCCESS;
}

DCSIM_EXPORT CUresult cuModuleUnload(CUmodule h) {
  NEED_INIT;
  std::lock_guard<std::mutex> lock(g_sim->mutex);
  // Launches still queued hold the module; it is closed after the last one ran.
  auto it = g_sim->modules.find(reinterpret_cast<Module*>(h));
  if (it == g_sim->modules.end()) return CUDA_ERROR_INVALID_HANDLE;
  for (uintptr_t a : it->second->globals) g_sim->global_ranges.erase(a);
  g_sim->modules.erase(it);
  return CUDA_SUCCESS;
}

// A module's __device__/__constant__ variables are plain globals of its host object (the shim
// defines both qualifiers away), so the loader's symbol table gives their address and size.
DCSIM_EXPORT CUresult cuModuleGetGlobal_v2(CUdeviceptr* ptr, size_t* bytes, CUmodule h, const char* name) {
  NEED_INIT;
  if (!h || !name) return CUDA_ERROR_INVALID_VALUE;
  Module* m = reinterpret_cast<Module*>(h);
  std::lock_guard<std::mutex> lock(g_sim->mutex);
  if (!g_sim->modules.count(m)) return CUDA_ERROR_INVALID_HANDLE;
  dlerror();
  void* address = dlsym(m->handle, name);
  Dl_info info{}, own{};
  void* entry = nullptr;
  const bool found = address && dladdr1(address, &info, &entry, RTLD_DL_SYMENT) && entry;
  const auto* sym = static_cast<const ElfW(Sym)*>(entry);
  // dlsym also finds symbols of the libraries the object links (libc's `environ`): only the
  // module's own data objects count, as on a GPU where a module holds nothing else.
  const bool own_object = dladdr(reinterpret_cast<const void*>(m->run), &own) && own.dli_fbase == info.dli_fbase;
  if (!found || !own_object || info.dli_saddr != address || ELF64_ST_TYPE(sym->st_info) != STT_OBJECT ||
      sym->st_size == 0)
    return fail(CUDA_ERROR_NOT_FOUND, std::string("no __device__ or __constant__ variable exported as '") + name + "'");
  const uintptr_t a = reinterpret_cast<uintptr_t>(address);
  if (g_sim->global_ranges.emplace(a, sym->st_size).second) m->globals.push_back(a);
  if (ptr) *ptr = static_cast<CUdeviceptr>(a);
  if (bytes) *bytes = static_cast<size_t>(sym->st_size);
  return CUDA_SUCCESS;
}

DCSIM_EXPORT CUresult cuModuleGetGlobal(CUdeviceptr* ptr, unsigned int* bytes, CUmodule h, const char* name) {
  size_t n = 0;
  const CUresult r = cuModuleGetGlobal_v2(ptr, &n, h, name);
  if (r == CUDA_SUCCESS && bytes) *bytes = static_cast<unsigned int>(n);
  return r;
}

DCSIM_EXPORT CUresult cuModuleGetFunction(CUfunction* out, CUmodule h, const char* name) {
  NEED_INIT;
  if (!out || !h || !name) return CUDA_ERROR_INVALID_VALUE;
  Module* m = reinterpret_cast<Module*>(h);
  for (auto& f : m->functions)
    if (f->symbol == name) {
      *out = reinterpret_cast<CUfunction>(f.get());
      return CUDA_SUCCESS;
    }
  // A `static __global__` kernel (cuda-samples' MonteCarlo) has internal linkage in the host object, so
  // it is registered under its plain name; NVRTC's lowered name for it is mangled: match the
  // demangled function name when exactly one such kernel has it.
  int status = -1;
  char* demangled = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status == 0 && demangled) {
    const std::string plain(demangled, std::strcspn(demangled, "(<"));
    std::free(demangled);
    Function* found = nullptr;
    bool unique = true;  // (a kernel registered twice, scanned and named, is one function)
    for (auto& f : m->functions)
      if (f->symbol == plain && f->symbol == f->entry->name) {
        if (found && found->entry->fn != f->entry->fn) unique = false;
        if (!found) found = f.get();
      }
    if (found && unique) {
      *out = reinterpret_cast<CUfunction>(found);
      return CUDA_SUCCESS;
    }
  } else {
    std::free(demangled);
  }
  return fail(CUDA_ERROR_NOT_FOUND, std::string("no __global__ function exported as '") + name + "'");
}

DCSIM_EXPORT CUresult cuFuncGetAttribute(int* value, CUfunction_attribute a, CUfunction h) {
  NEED_INIT;
  if (!value || !h) return CUDA_ERROR_INVALID_VALUE;
  Function* f = reinterpret_cast<Function*>(h);
  const Device* dev = device_of(f->module->device);
  switch (a) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = dev->cfg.threads_per_block; break;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *value = f->static_shared; break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *value = 32; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *value = f->max_dynamic_shared; break;
    default: return fail(CUDA_ERROR_INVALID_VALUE, "function attribute " + std::to_string(a) + " is not simulated");
  }
  return CUDA_SUCCESS;
}

DCSIM_EXPORT CUresult cuFuncSetAttribute(CUfunction h, CUfunction_attribute a, int value) {
  NEED_INIT;
  if (!h) return CUDA_ERROR_INVALID_HANDLE;
  Function* f = reinterpret_cast<Function*>(h);
  const Device* dev = device_of(f->module->device);
  if (a != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
    return fail(CUDA_ERROR_INVALID_VALUE, "only CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES can be set");
  if (value < 0 || value + f->static_shared > dev->cfg.shared_optin)
    return fail(CUDA_ERROR_INVALID_VALUE, std::to_string(value) + " bytes of dynamic shared memory plus " +
                                              std::to_string(f->static_shared) + " static exceed the device's " +
                                              std::to_string(dev->cfg.shared_optin));
  f->max_dynamic_shared = value;
  return CUDA_SUCCESS;
}

DCSIM_EXPORT CUresult cuFuncGetParamInfo(CUfunction h, size_t index, size_t* offset, size_t* size) {
  NEED_INIT;
  if (!h) return CUDA_ERROR_INVALID_HANDLE;
  Function* f = reinterpret_cast<Function*>(h);
  if (index >= f->entry->nparams) return CUDA_ERROR_INVALID_VALUE;
  if (offset) *offset = f->offsets[index];
  if (size) *size = f->entry->sizes[index];
  return CUDA_SUCCESS;
}

DCSIM_EXPORT CUresult cuOccupancyMaxPotentialBlockSize(int* min_grid, int* block, CUfunction h, CUoccupancyB2DSize,
                                                       size_t, int limit) {
  NEED_INIT;
  if (!min_grid || !block || !h) return CUDA_ERROR_INVALID_VALUE;
  const Device* dev = device_of(reinterpret_cast<Function*>(h)->module->device);
  int b = dev->cfg.threads_per_block;
  if (limit > 0 && limit < b) b = limit;
  *block = b;
  const Function* f = reinterpret_cast<Function*>(h);
  *min_grid = dev->cfg.sms * std::max(1, max_active_blocks(dev->cfg, f->static_shared, static_cast<unsigned>(b), 0));
  return CUDA_SUCCESS;
}

// The bound cuLaunchCooperativeKernel checks: a cooperative grid may have sms x this many blocks.
DCSIM_EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* blocks, CUfunction h, int block_size,
                                                                           size_t dynamic_shared, unsigned int) {
  NEED_INIT;
  if (!blocks || !h) return CUDA_ERROR_INVALID_VALUE;
  const Function* f = reinterpret_cast<Function*>(h);
  const Device* dev = device_of(f->module->device);
  if (block_size <= 0) return fail(CUDA_ERROR_INVALID_VALUE, "block size must be positive");
  *blocks = max_active_blocks(dev->cfg, f->static_shared, static_cast<unsigned>(block_size), dynamic_shared);
  return CUDA_SUCCESS;
}

DCSIM_EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, CUfunction h, int block_size,
                                                                  size_t dynamic_shared) {
  return cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(blocks, h, block_size, dynamic_shared, 0);
}

DCSIM_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                     unsigned bz, unsigned shared, CUstream s, void** params, void** extra) {
  const unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
  return launch(f, grid, block, shared, s, params, extra, false);
}

DCSIM_EXPORT CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                                unsigned by, unsigned bz, unsigned shared, CUstream s, void** params) {
  const unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
  return launch(f, grid, block, shared, s, params, nullptr, true);
}

// ---- the simulator's own entry points (sim_api.h) ----

DCSIM_EXPORT CUresult dcsimBuildImage(const char* source, const char* options, int sm, const void* device_code,
                                      size_t device_code_size, void** image, size_t* image_size, char** log) {
  if (!source || !image || !image_size) return CUDA_ERROR_INVALID_VALUE;
  std::string out, text;
  const CUresult r = build_image(source, options ? options : "", sm, device_code, device_code_size, out, text);
  if (log) {
    *log = static_cast<char*>(std::malloc(text.size() + 1));
    if (*log) std::memcpy(*log, text.c_str(), text.size() + 1);
  }
  if (r != CUDA_SUCCESS) return r;
  void* blob = std::malloc(out.size());
  if (!blob) return CUDA_ERROR_OUT_OF_MEMORY;
  std::memcpy(blob, out.data(), out.size());
  *image = blob;
  *image_size = out.size();
  return CUDA_SUCCESS;
}

DCSIM_EXPORT void dcsimFree(void* p) { std::free(p); }

DCSIM_EXPORT CUresult dcsimIdentity(char* buf, size_t cap) {
  std::string id;
  if (CUresult r = build_identity(id); r != CUDA_SUCCESS) return r;
  if (!buf || cap <= id.size()) return CUDA_ERROR_INVALID_VALUE;
  std::memcpy(buf, id.c_str(), id.size() + 1);
  return CUDA_SUCCESS;
}

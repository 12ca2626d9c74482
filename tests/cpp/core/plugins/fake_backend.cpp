// A complete in-memory backend for testing the core without hardware.
//
// Devices: "fake:0" has unified memory, "fake:1" does not (the core must copy
// through memcpy_h2d/d2h there, although both are host memory underneath).
// With FAKE_HOST_VISIBLE=1 (read by initialize) "fake:1" claims host-visible
// memory instead, as Metal does: allocations under kHostVisibleMax bytes are
// host-addressable (mem_host_pointer), larger ones are not.
// Streams are real worker threads, so asynchrony and ordering are real.
// "Compiling" accepts any source without "#error"; a module's kernels are the
// names on its "kernel NAME" lines; their behaviour is built in (see run()).
//
// Build variants (compile definitions) make the broken plugins the loader
// tests need: FAKE_NAME, FAKE_ABI_VERSION, FAKE_INIT_FAILS, FAKE_NO_ENTRY,
// FAKE_NEEDS_DEP (links a library that is not on the search path).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "dotcompute/backend_abi.h"

#ifndef FAKE_NAME
#define FAKE_NAME "fake"
#endif
#ifndef FAKE_ABI_VERSION
#define FAKE_ABI_VERSION DC_BACKEND_ABI_VERSION
#endif

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

#ifdef FAKE_NEEDS_DEP
extern "C" int dc_test_dep_value(void);
#endif

namespace {

constexpr int kDevices = 2;
// Trivially destructible on purpose: a thread_local with a destructor makes
// glibc keep the library loaded after dlclose(), and the tests check unloading.
thread_local char g_error[1024];

dc_status fail(dc_status s, const std::string& msg) {
  std::snprintf(g_error, sizeof g_error, "%s", msg.c_str());
  return s;
}

// Fault injection (tests call fake_inject through dlsym): the nth next call of a named entry point
// fails with the given status, e.g. ("mem_alloc", 3, DC_ERROR_OUT_OF_MEMORY). "device_lost" makes
// every call of the listed entry points fail with DC_ERROR_UNAVAILABLE until cleared.
struct Injection {
  std::string call;
  int64_t countdown;  // fails when it reaches 0
  dc_status status;
  bool sticky;
};
std::mutex g_inject_mutex;
std::vector<Injection> g_injections;

dc_status injected(const char* call) {
  std::lock_guard<std::mutex> lock(g_inject_mutex);
  for (size_t i = 0; i < g_injections.size(); ++i) {
    Injection& in = g_injections[i];
    if (in.call != call) continue;
    if (in.sticky) return fail(in.status, std::string("fake: ") + call + " failed (injected: device lost)");
    if (--in.countdown > 0) continue;
    const dc_status st = in.status;
    g_injections.erase(g_injections.begin() + static_cast<std::ptrdiff_t>(i));
    return fail(st, std::string("fake: ") + call + " failed (injected status " + std::to_string(int(st)) + ")");
  }
  return DC_OK;
}
#define FAKE_INJECT(call)                       \
  do {                                          \
    const dc_status inj_ = injected(#call);     \
    if (inj_ != DC_OK) return inj_;             \
  } while (0)

struct Counters {
  std::atomic<int64_t> allocations{0};  // live
  std::atomic<int64_t> streams{0};
  std::atomic<int64_t> events{0};
  std::atomic<int64_t> modules{0};
  std::atomic<int64_t> compiles{0};  // total
  std::atomic<int64_t> launches{0};  // total
  std::atomic<int64_t> h2d{0}, d2h{0};  // total memcpy_h2d / memcpy_d2h calls
};
Counters g_count;
uint64_t g_capacity = 64ull << 20;
std::mutex g_mem_mutex;
std::unordered_map<uintptr_t, uint64_t> g_sizes;
uint64_t g_used[kDevices] = {0, 0};
bool g_host_visible = false;  // FAKE_HOST_VISIBLE
constexpr uint64_t kHostVisibleMax = 1u << 20;
std::mutex g_cache_dir_mutex;
std::string g_cache_dir = "(never set)";

}  // namespace

struct dc_stream_s {
  std::mutex mutex;
  std::condition_variable cv;
  std::deque<std::function<void()>> queue;
  bool busy = false;
  bool stop = false;
  std::thread worker;

  dc_stream_s() {
    worker = std::thread([this] {
      std::unique_lock<std::mutex> lock(mutex);
      for (;;) {
        cv.wait(lock, [this] { return stop || !queue.empty(); });
        if (queue.empty()) return;  // stop requested and drained
        auto task = std::move(queue.front());
        queue.pop_front();
        busy = true;
        lock.unlock();
        task();
        lock.lock();
        busy = false;
        cv.notify_all();
      }
    });
  }
  ~dc_stream_s() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stop = true;
    }
    cv.notify_all();
    worker.join();
  }
  void push(std::function<void()> f) {
    std::lock_guard<std::mutex> lock(mutex);
    queue.push_back(std::move(f));
    cv.notify_all();
  }
  void drain() {
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait(lock, [this] { return queue.empty() && !busy; });
  }
};

// Queued tasks hold the event's state, not the event: like CUDA, an event may
// be destroyed while a stream still waits for the point it marked.
struct EventState {
  std::mutex mutex;
  std::condition_variable cv;
  uint64_t recorded = 0;   // generations recorded
  uint64_t completed = 0;  // generations reached
  std::chrono::steady_clock::time_point when{};
  void wait_for(uint64_t gen) {
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait(lock, [this, gen] { return completed >= gen; });
  }
};

struct dc_event_s {
  std::shared_ptr<EventState> st = std::make_shared<EventState>();
  uint64_t recorded() {
    std::lock_guard<std::mutex> lock(st->mutex);
    return st->recorded;
  }
  void wait() { st->wait_for(recorded()); }
};

struct dc_kernel_s {
  std::string name;
};

struct dc_module_s {
  std::vector<dc_kernel_s> kernels;
};

namespace {

dc_status initialize() {
#ifdef FAKE_INIT_FAILS
  return fail(DC_ERROR_UNAVAILABLE, "fake driver libfakedriver.so.1 not found");
#else
#ifdef FAKE_NEEDS_DEP
  if (dc_test_dep_value() != 42) return fail(DC_ERROR_INTERNAL, "dependency misbehaves");
#endif
  const char* c = std::getenv("FAKE_DEVICE_BYTES");
  g_capacity = c ? std::strtoull(c, nullptr, 10) : (64ull << 20);
  const char* hv = std::getenv("FAKE_HOST_VISIBLE");
  g_host_visible = hv != nullptr && std::strcmp(hv, "1") == 0;
  return DC_OK;
#endif
}

void shutdown() {}
const char* last_error() { return g_error; }

dc_status device_count(int32_t* n) {
  *n = kDevices;
  return DC_OK;
}

dc_status device_info(int32_t d, dc_device_info* info) {
  if (d < 0 || d >= kDevices) return fail(DC_ERROR_INVALID_ARGUMENT, "no such device");
  std::snprintf(info->name, sizeof info->name, "Fake device %d", d);
  std::snprintf(info->vendor, sizeof info->vendor, "dotcompute tests");
  std::snprintf(info->arch, sizeof info->arch, "fake-arch-%d", d);
  std::snprintf(info->type, sizeof info->type, "%s", d == 0 ? "cpu" : "gpu");
  info->global_memory_bytes = g_capacity;
  info->local_memory_bytes = 32768;
  info->compute_units = 4;
  info->max_work_group_size = 256;
  info->max_work_item_sizes[0] = info->max_work_item_sizes[1] = info->max_work_item_sizes[2] = 256;
  info->simd_width = 8;
  info->features = DC_FEATURE_FP64 | (d == 0 ? DC_FEATURE_UNIFIED_MEMORY
                                             : g_host_visible ? DC_FEATURE_HOST_VISIBLE_MEMORY : 0);
  std::snprintf(info->extra_json, sizeof info->extra_json, "{\"fake\": true}");
  return DC_OK;
}

dc_status compiler_identity(int32_t, char* buf, size_t cap) {
  std::snprintf(buf, cap, "fakecc 1.0");
  return DC_OK;
}

dc_status mem_alloc(int32_t d, uint64_t bytes, dc_devptr* out) {
  FAKE_INJECT(mem_alloc);
  std::lock_guard<std::mutex> lock(g_mem_mutex);
  if (g_used[d] + bytes > g_capacity) return fail(DC_ERROR_OUT_OF_MEMORY, "fake device out of memory");
  void* p = std::malloc(bytes);
  if (p == nullptr) return fail(DC_ERROR_OUT_OF_MEMORY, "malloc failed");
  g_used[d] += bytes;
  g_sizes[reinterpret_cast<uintptr_t>(p)] = bytes;
  ++g_count.allocations;
  *out = reinterpret_cast<uintptr_t>(p);
  return DC_OK;
}

dc_status mem_free(int32_t d, dc_devptr ptr) {
  std::lock_guard<std::mutex> lock(g_mem_mutex);
  auto it = g_sizes.find(ptr);
  if (it == g_sizes.end()) return fail(DC_ERROR_INVALID_ARGUMENT, "mem_free of an unknown pointer");
  g_used[d] -= it->second;
  g_sizes.erase(it);
  --g_count.allocations;
  std::free(reinterpret_cast<void*>(ptr));
  return DC_OK;
}

void* at(dc_devptr p, uint64_t off) { return reinterpret_cast<char*>(static_cast<uintptr_t>(p)) + off; }

dc_status mem_host_pointer(int32_t d, dc_devptr ptr, void** out) {
  if (d != 1 || !g_host_visible) return fail(DC_ERROR_UNSUPPORTED, "no host-visible memory on this device");
  std::lock_guard<std::mutex> lock(g_mem_mutex);
  auto it = g_sizes.find(ptr);
  if (it == g_sizes.end()) return fail(DC_ERROR_INVALID_ARGUMENT, "mem_host_pointer of an unknown pointer");
  *out = it->second < kHostVisibleMax ? reinterpret_cast<void*>(static_cast<uintptr_t>(ptr)) : nullptr;
  return DC_OK;
}

dc_status set_cache_dir(const char* dir) {
  std::lock_guard<std::mutex> lock(g_cache_dir_mutex);
  g_cache_dir = dir != nullptr ? dir : "(null)";
  return DC_OK;
}

dc_status memcpy_h2d(dc_stream s, dc_devptr dst, uint64_t off, const void* src, uint64_t n) {
  FAKE_INJECT(memcpy_h2d);
  ++g_count.h2d;
  s->push([=] { std::memcpy(at(dst, off), src, n); });
  return DC_OK;
}
dc_status memcpy_d2h(dc_stream s, void* dst, dc_devptr src, uint64_t off, uint64_t n) {
  FAKE_INJECT(memcpy_d2h);
  ++g_count.d2h;
  s->push([=] { std::memcpy(dst, at(src, off), n); });
  return DC_OK;
}
dc_status memcpy_d2d(dc_stream s, dc_devptr dst, uint64_t doff, dc_devptr src, uint64_t soff, uint64_t n) {
  s->push([=] { std::memmove(at(dst, doff), at(src, soff), n); });
  return DC_OK;
}
dc_status memset_d8(dc_stream s, dc_devptr dst, uint64_t off, uint8_t v, uint64_t n) {
  FAKE_INJECT(memset_d8);
  s->push([=] { std::memset(at(dst, off), v, n); });
  return DC_OK;
}

dc_status stream_create(int32_t, dc_stream* out) {
  FAKE_INJECT(stream_create);
  *out = new dc_stream_s();
  ++g_count.streams;
  return DC_OK;
}
dc_status stream_destroy(dc_stream s) {
  delete s;
  --g_count.streams;
  return DC_OK;
}
dc_status stream_synchronize(dc_stream s) {
  FAKE_INJECT(stream_synchronize);
  s->drain();
  return DC_OK;
}
dc_status stream_wait_event(dc_stream s, dc_event e) {
  std::shared_ptr<EventState> st = e->st;
  uint64_t gen = e->recorded();
  s->push([st, gen] { st->wait_for(gen); });
  return DC_OK;
}

dc_status event_create(int32_t, dc_event* out) {
  FAKE_INJECT(event_create);
  *out = new dc_event_s();
  ++g_count.events;
  return DC_OK;
}
dc_status event_destroy(dc_event e) {
  delete e;
  --g_count.events;
  return DC_OK;
}
dc_status event_record(dc_event e, dc_stream s) {
  std::shared_ptr<EventState> st = e->st;
  uint64_t gen;
  {
    std::lock_guard<std::mutex> lock(st->mutex);
    gen = ++st->recorded;
  }
  s->push([st, gen] {
    std::lock_guard<std::mutex> lock(st->mutex);
    if (gen > st->completed) st->completed = gen;
    st->when = std::chrono::steady_clock::now();
    st->cv.notify_all();
  });
  return DC_OK;
}
dc_status event_synchronize(dc_event e) {
  FAKE_INJECT(event_synchronize);
  e->wait();
  return DC_OK;
}
dc_status event_query(dc_event e, int32_t* done) {
  FAKE_INJECT(event_query);
  std::lock_guard<std::mutex> lock(e->st->mutex);
  *done = e->st->completed >= e->st->recorded ? 1 : 0;
  return DC_OK;
}
dc_status event_elapsed_ms(dc_event a, dc_event b, double* ms) {
  if (a->recorded() == 0 || b->recorded() == 0) return fail(DC_ERROR_INVALID_ARGUMENT, "event was never recorded");
  auto when = [](dc_event e) {
    std::lock_guard<std::mutex> lock(e->st->mutex);
    return e->st->when;
  };
  *ms = std::chrono::duration<double, std::milli>(when(b) - when(a)).count();
  return DC_OK;
}

dc_status compile(int32_t, const char* source, const char* options, void** binary, uint64_t* size) {
  FAKE_INJECT(compile);
  ++g_count.compiles;
  std::string src = source;
  size_t pos = src.find("#error");
  if (pos != std::string::npos) {
    size_t end = src.find('\n', pos);
    return fail(DC_ERROR_COMPILATION, "fakecc: error: " + src.substr(pos, end == std::string::npos ? end : end - pos));
  }
  std::string blob = std::string("options:") + options + "\n" + src;
  *binary = std::malloc(blob.size());
  std::memcpy(*binary, blob.data(), blob.size());
  *size = blob.size();
  return DC_OK;
}
void free_binary(void* b) { std::free(b); }

dc_status module_load(int32_t, const void* binary, uint64_t size, dc_module* out) {
  FAKE_INJECT(module_load);
  std::istringstream in(std::string(static_cast<const char*>(binary), size));
  auto* m = new dc_module_s();
  std::string word;
  while (in >> word) {
    if (word == "kernel" && in >> word) m->kernels.push_back({word});
  }
  *out = m;
  ++g_count.modules;
  return DC_OK;
}
dc_status module_unload(dc_module m) {
  delete m;
  --g_count.modules;
  return DC_OK;
}
dc_status kernel_get(dc_module m, const char* name, dc_kernel* out) {
  for (auto& k : m->kernels) {
    if (k.name == name) {
      *out = &k;
      return DC_OK;
    }
  }
  return fail(DC_ERROR_INVALID_ARGUMENT, std::string("no kernel '") + name + "' in module");
}

// The built-in kernels. `v[i]` holds expanded argument i's bytes (8 at most).
struct Packed {
  std::vector<dc_kernel_arg> args;
  std::vector<uint64_t> values;
  template <typename T>
  T get(size_t i) const {
    T out;
    std::memcpy(&out, &values[i], sizeof(T));
    return out;
  }
  template <typename T>
  T* ptr(size_t i) const {
    return reinterpret_cast<T*>(static_cast<uintptr_t>(values[i]));
  }
};

dc_status launch(dc_stream s, dc_kernel k, const dc_launch_config* cfg, const dc_kernel_arg* args, uint32_t nargs) {
  FAKE_INJECT(launch);
  if (k->name == "noop") {  // any arguments, nothing enqueued: measures the core's launch path alone
    ++g_count.launches;
    return DC_OK;
  }
  Packed p;
  p.args.assign(args, args + nargs);
  p.values.assign(nargs, 0);
  for (uint32_t i = 0; i < nargs; ++i) {
    if (args[i].kind == DC_ARG_BUFFER) {
      p.values[i] = args[i].value.buffer;
    } else if (args[i].kind == DC_ARG_SCALAR) {
      if (args[i].size > 8) return fail(DC_ERROR_INVALID_ARGUMENT, "scalar larger than 8 bytes");
      std::memcpy(&p.values[i], args[i].value.scalar, args[i].size);
    }
  }
  const std::string& name = k->name;
  auto need = [&](uint32_t n) { return nargs == n ? DC_OK : fail(DC_ERROR_LAUNCH, name + ": wrong argument count " + std::to_string(nargs)); };
  const uint64_t global = cfg->global_size[0];
  std::function<void()> task;
  if (name == "fill_f32") {  // (float* x, int64 n, float value)
    if (need(3) != DC_OK) return DC_ERROR_LAUNCH;
    task = [p, global] {
      float* x = p.ptr<float>(0);
      int64_t n = p.get<int64_t>(1);
      float v = p.get<float>(2);
      for (uint64_t i = 0; i < global && int64_t(i) < n; ++i) x[i] = v;
    };
  } else if (name == "add_f32") {  // (a, n, b, n, out, n)
    if (need(6) != DC_OK) return DC_ERROR_LAUNCH;
    task = [p, global] {
      const float* a = p.ptr<float>(0);
      const float* b = p.ptr<float>(2);
      float* o = p.ptr<float>(4);
      int64_t n = p.get<int64_t>(5);
      for (uint64_t i = 0; i < global && int64_t(i) < n; ++i) o[i] = a[i] + b[i];
    };
  } else if (name == "sleep_ms") {  // (int64 ms)
    if (need(1) != DC_OK) return DC_ERROR_LAUNCH;
    task = [p] { std::this_thread::sleep_for(std::chrono::milliseconds(p.get<int64_t>(0))); };
  } else if (name == "append_i64") {  // (int64* log, int64 n, int64 value): log[0] counts, log[1..] values
    if (need(3) != DC_OK) return DC_ERROR_LAUNCH;
    task = [p] {
      int64_t* log = p.ptr<int64_t>(0);
      int64_t n = p.get<int64_t>(1);
      if (log[0] + 1 < n) log[1 + log[0]++] = p.get<int64_t>(2);
    };
  } else if (name == "scale_raw") {  // raw: (double* x, double s, int64 n)
    if (need(3) != DC_OK) return DC_ERROR_LAUNCH;
    task = [p] {
      double* x = p.ptr<double>(0);
      double sc = p.get<double>(1);
      int64_t n = p.get<int64_t>(2);
      for (int64_t i = 0; i < n; ++i) x[i] *= sc;
    };
  } else if (name == "scalars") {  // (int64* out, int32 a, uint8 b, float c, double d, bool e)
    if (need(6) != DC_OK) return DC_ERROR_LAUNCH;
    uint32_t sizes[6] = {8, 4, 1, 4, 8, 1};
    for (int i = 1; i < 6; ++i) {
      if (args[i].size != sizes[i]) return fail(DC_ERROR_LAUNCH, "scalars: argument " + std::to_string(i) + " has size " + std::to_string(args[i].size));
    }
    task = [p] {
      int64_t* o = p.ptr<int64_t>(0);
      o[0] = p.get<int32_t>(1);
      o[1] = p.get<uint8_t>(2);
      o[2] = static_cast<int64_t>(p.get<float>(3) * 1000);
      o[3] = static_cast<int64_t>(p.get<double>(4) * 1000);
      o[4] = p.get<uint8_t>(5);
    };
  } else {
    return fail(DC_ERROR_LAUNCH, "fake backend cannot run kernel '" + name + "'");
  }
  ++g_count.launches;
  s->push(std::move(task));
  return DC_OK;
}

const dc_backend kBackend = {
    sizeof(dc_backend), FAKE_ABI_VERSION, FAKE_NAME, "9.9.9",
    initialize, shutdown, last_error,
    device_count, device_info, compiler_identity,
    mem_alloc, mem_free, memcpy_h2d, memcpy_d2h, memcpy_d2d, memset_d8,
    stream_create, stream_destroy, stream_synchronize, stream_wait_event,
    event_create, event_destroy, event_record, event_synchronize, event_query, event_elapsed_ms,
    compile, free_binary, module_load, module_unload, kernel_get, launch,
    mem_host_pointer, set_cache_dir,
    nullptr,  // native_handle: absent, as in a plugin built before the entry (test_native_handle.cpp)
};

}  // namespace

#ifndef FAKE_NO_ENTRY
FAKE_EXPORT const dc_backend* dotcompute_backend_entry(void) { return &kBackend; }
#else
// Exports something else, so the library loads but has no entry point.
FAKE_EXPORT const dc_backend* dotcompute_backend_entry_v0(void) { return &kBackend; }
#endif

// Test hook: the nth next call (1 = the very next) of entry point `call` returns `status`;
// nth <= 0 makes every call fail until fake_inject_clear() (a device that is lost).
FAKE_EXPORT void fake_inject(const char* call, int64_t nth, int32_t status) {
  std::lock_guard<std::mutex> lock(g_inject_mutex);
  g_injections.push_back({call, nth, static_cast<dc_status>(status), nth <= 0});
}
FAKE_EXPORT void fake_inject_clear(void) {
  std::lock_guard<std::mutex> lock(g_inject_mutex);
  g_injections.clear();
}

// Test hooks: total memcpy_h2d and memcpy_d2h calls; the folder set_cache_dir was given.
FAKE_EXPORT void fake_copy_counts(int64_t out[2]) {
  out[0] = g_count.h2d;
  out[1] = g_count.d2h;
}
FAKE_EXPORT void fake_cache_dir(char* out, size_t cap) {
  std::lock_guard<std::mutex> lock(g_cache_dir_mutex);
  std::snprintf(out, cap, "%s", g_cache_dir.c_str());
}

// Test hooks: live allocations, streams, events, modules; total compiles, launches.
FAKE_EXPORT void fake_backend_counters(int64_t out[6]) {
  out[0] = g_count.allocations;
  out[1] = g_count.streams;
  out[2] = g_count.events;
  out[3] = g_count.modules;
  out[4] = g_count.compiles;
  out[5] = g_count.launches;
}

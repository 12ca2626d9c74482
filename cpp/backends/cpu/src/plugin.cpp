// The C ABI entry points of the CPU backend (see backend_abi.h). Each entry
// validates its arguments, runs under `guarded` so no exception escapes, and
// reports failures through last_error.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>

#include <sys/mman.h>

#include "compiler.h"
#include "dotcompute/backend_abi.h"
#include "error.h"
#include "host_info.h"
#include "launch.h"
#include "module.h"
#include "runtime.h"
#include "stream.h"
#include "thread_pool.h"

static_assert(sizeof(void*) == sizeof(dc_devptr), "device pointers are host pointers on the CPU");

namespace dccpu {

namespace {

constexpr const char* kVersion = "0.1.0";
constexpr uint32_t kDefaultSpinUs = 20;

struct State {
  HostInfo host;
  std::unique_ptr<Compiler> compiler;
  uint32_t participants = 1;
  uint32_t spin_us = kDefaultSpinUs;

  std::mutex pool_mutex;
  std::unique_ptr<ThreadPool> pool;
  std::atomic<ThreadPool*> pool_ptr{nullptr};
  bool pool_failed = false;

  std::mutex default_stream_mutex;
  std::unique_ptr<Stream> default_stream;

  std::mutex alloc_mutex;
  std::unordered_set<uintptr_t> allocations;
  // The blocks of kMappedBytes and more: anonymous private mappings of their own (start -> length), so
  // that a zero fill may hand their pages back to the kernel, which gives zero pages on the next touch.
  std::map<uintptr_t, uint64_t> mapped;
};

// Owned by initialize()/shutdown(). A process that never calls shutdown keeps
// it (and its threads) until exit, which is safe; destroying it from a static
// destructor would race with threads still using it.
std::atomic<State*> g_state{nullptr};
std::mutex g_lifecycle;

struct StreamHandle {
  Stream stream;
  explicit StreamHandle(uint32_t spin) : stream(spin) {}
};
struct EventHandle {
  std::shared_ptr<EventState> state = std::make_shared<EventState>();
};

dc_stream to_handle(StreamHandle* s) { return reinterpret_cast<dc_stream>(s); }
dc_event to_handle(EventHandle* e) { return reinterpret_cast<dc_event>(e); }
EventHandle* from(dc_event e) { return reinterpret_cast<EventHandle*>(e); }
Kernel* from(dc_kernel k) { return reinterpret_cast<Kernel*>(k); }
Module* from(dc_module m) { return reinterpret_cast<Module*>(m); }

dc_status not_initialized() { return fail(DC_ERROR_UNAVAILABLE, "cpu: the backend is not initialized"); }

dc_status check_device(int32_t device) {
  if (device != 0) return fail(DC_ERROR_INVALID_ARGUMENT, "cpu: no device " + std::to_string(device) + " (only cpu:0)");
  return DC_OK;
}

// The stream a handle names; NULL is the backend's own default stream.
Stream* resolve(State& st, dc_stream s) {
  if (s != nullptr) return &reinterpret_cast<StreamHandle*>(s)->stream;
  std::lock_guard<std::mutex> lock(st.default_stream_mutex);
  if (!st.default_stream) st.default_stream = std::make_unique<Stream>(st.spin_us);
  return st.default_stream.get();
}

bool parse_positive(const char* text, uint32_t& out) {
  char* end = nullptr;
  errno = 0;
  const unsigned long v = std::strtoul(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v == 0 || v > 4096) return false;
  out = static_cast<uint32_t>(v);
  return true;
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

void copy_text(char* dst, size_t cap, const std::string& s) {
  const size_t n = std::min(cap - 1, s.size());
  std::memcpy(dst, s.data(), n);
  dst[n] = '\0';
}

// Runs `task` inline when the stream is idle and `small`, else queues it.
dc_status submit(Stream& stream, std::unique_ptr<Task> task, bool small) {
  if (small) {
    InlineToken token(stream);
    if (token) {
      run_task(*task, stream);
      return DC_OK;
    }
  }
  stream.enqueue(std::move(task));
  return DC_OK;
}

constexpr uint64_t kInlineCopyBytes = 256 * 1024;

// ---- lifecycle -------------------------------------------------------------

dc_status cpu_initialize() {
  return guarded("initialize", [] {
    std::lock_guard<std::mutex> lock(g_lifecycle);
    if (g_state.load() != nullptr) return DC_OK;
    auto st = std::make_unique<State>();
    st->host = detect_host();
    st->participants = st->host.hardware_threads;
    // A bad value in either variable keeps the default rather than failing: cpu:0 is the one device
    // that is always present (the Python layer warns about the value, config.py).
    if (const char* t = std::getenv("DOTCOMPUTE_CPU_THREADS"); t != nullptr && *t != '\0') {
      uint32_t n = 0;
      if (parse_positive(t, n)) st->participants = n;
    }
    if (const char* s = std::getenv("DOTCOMPUTE_CPU_SPIN_US"); s != nullptr && *s != '\0') {
      char* end = nullptr;
      const unsigned long v = std::strtoul(s, &end, 10);
      if (end != s && *end == '\0' && v <= 1000000) st->spin_us = static_cast<uint32_t>(v);
    }
    // A missing compiler does not make the device unavailable: memory and
    // streams still work; compile() says what is missing. (Cached binaries do
    // not: the compiler's identity is part of every cache key.)
    st->compiler = std::make_unique<Compiler>(st->host);
    g_state.store(st.release());
    return DC_OK;
  });
}

void cpu_shutdown() {
  std::lock_guard<std::mutex> lock(g_lifecycle);
  State* st = g_state.exchange(nullptr);
  if (st == nullptr) return;
  try {
    st->default_stream.reset();
    st->pool.reset();
    for (uintptr_t p : st->allocations) {
      auto m = st->mapped.find(p);
      if (m != st->mapped.end()) {
        (void)munmap(reinterpret_cast<void*>(p), m->second);
      } else {
        std::free(reinterpret_cast<void*>(p));
      }
    }
  } catch (...) {
  }
  delete st;
}

const char* cpu_last_error() { return last_error_text(); }

// ---- devices ---------------------------------------------------------------

dc_status cpu_device_count(int32_t* count) {
  if (count == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "cpu: device_count: count is NULL");
  *count = g_state.load() != nullptr ? 1 : 0;
  return DC_OK;
}

dc_status cpu_device_info(int32_t device, dc_device_info* info) {
  return guarded("device_info", [&] {
    State* st = g_state.load();
    if (st == nullptr) return not_initialized();
    if (dc_status s = check_device(device)) return s;
    if (info == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "cpu: device_info: info is NULL");
    if (info->struct_size < DC_DEVICE_INFO_MIN_SIZE)
      return fail(DC_ERROR_INVALID_ARGUMENT, "cpu: device_info: info->struct_size (" +
                                                 std::to_string(info->struct_size) + ") is not set or too small");
    dc_device_info d;
    std::memset(&d, 0, sizeof(d));
    const HostInfo& h = st->host;
    copy_text(d.name, sizeof(d.name), h.name);
    copy_text(d.vendor, sizeof(d.vendor), h.vendor);
    copy_text(d.arch, sizeof(d.arch), h.arch());
    copy_text(d.type, sizeof(d.type), "cpu");
    d.global_memory_bytes = h.memory_bytes;
    d.local_memory_bytes = kMaxStaticShared;
    d.compute_units = h.hardware_threads;
    d.max_work_group_size = static_cast<uint32_t>(kMaxGroupItems);
    for (uint32_t& m : d.max_work_item_sizes) m = static_cast<uint32_t>(kMaxGroupItems);
    d.simd_width = h.simd_width;
    d.features = DC_FEATURE_FP64 | DC_FEATURE_INT64_ATOMICS | DC_FEATURE_FLOAT_ATOMICS | DC_FEATURE_UNIFIED_MEMORY;
    const std::string compiler =
        st->compiler->available() ? "\"" + json_escape(st->compiler->path()) + "\"" : std::string("null");
    const std::string extra = "{\"isa\": \"" + json_escape(h.isa) + "\", \"threads\": " +
                              std::to_string(st->participants) + ", \"compiler\": " + compiler + "}";
    copy_text(d.extra_json, sizeof(d.extra_json), extra);
    d.struct_size = sizeof(d);
    dc_write_device_info(info, &d);
    return DC_OK;
  });
}

dc_status cpu_compiler_identity(int32_t device, char* buf, size_t cap) {
  return guarded("compiler_identity", [&] {
    State* st = g_state.load();
    if (st == nullptr) return not_initialized();
    if (dc_status s = check_device(device)) return s;
    if (buf == nullptr || cap == 0) return fail(DC_ERROR_INVALID_ARGUMENT, "cpu: compiler_identity: empty buffer");
    std::string id, error;
    if (dc_status s = st->compiler->identity(id, error)) return fail(s, error);
    if (id.size() + 1 > cap)
      return fail(DC_ERROR_INVALID_ARGUMENT, "cpu: compiler_identity needs a buffer of " +
                                                 std::to_string(id.size() + 1) + " bytes");
    std::memcpy(buf, id.c_str(), id.size() + 1);
    return DC_OK;
  });
}

// ---- memory ----------------------------------------------------------------

constexpr uint64_t kHugePageBytes = uint64_t{2} << 20;
// Blocks from this size on get a mapping of their own (glibc's malloc would mmap them too, but its
// threshold moves and it says nothing about where memory came from).
constexpr uint64_t kMappedBytes = uint64_t{1} << 20;

// `bytes` (a multiple of `align`, itself a multiple of the page size) of fresh anonymous memory aligned
// to `align`, or NULL. Fresh pages read as zero and take physical memory only when first touched.
void* map_block(uint64_t bytes, uint64_t align) {
  const uint64_t page = 4096;
  const uint64_t extra = align > page ? align : 0;
  void* raw = mmap(nullptr, bytes + extra, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + align - 1) / align * align;
  // give back the unaligned head and the tail beyond the block
  if (aligned > start) (void)munmap(raw, aligned - start);
  const uintptr_t end = start + bytes + extra;
  if (end > aligned + bytes) (void)munmap(reinterpret_cast<void*>(aligned + bytes), end - aligned - bytes);
  return reinterpret_cast<void*>(aligned);
}

dc_status cpu_mem_alloc(int32_t device, uint64_t bytes, dc_devptr* out) {
  return guarded("mem_alloc", [&] {
    State* st = g_state.load();
    if (st == nullptr) return not_initialized();
    if (dc_status s = check_device(device)) return s;
    if (out == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "cpu: mem_alloc: out is NULL");
    // Large blocks are streamed through by bandwidth-bound kernels: aligning them
    // to 2 MiB and asking for transparent huge pages cuts TLB misses; mid-sized
    // blocks get page alignment, small ones a cache line.
    const uint64_t align = bytes >= kHugePageBytes ? kHugePageBytes : bytes >= kMappedBytes ? 4096 : 64;
    const uint64_t rounded = (std::max<uint64_t>(bytes, 1) + align - 1) / align * align;
    if (rounded < bytes || rounded > (uint64_t{1} << 62))
      return fail(DC_ERROR_OUT_OF_MEMORY, "cpu: cannot allocate " + std::to_string(bytes) + " bytes");
    const bool mapped = bytes >= kMappedBytes;
    void* p = mapped ? map_block(rounded, align) : std::aligned_alloc(align, rounded);
    if (p == nullptr)
      return fail(DC_ERROR_OUT_OF_MEMORY, "cpu: cannot allocate " + std::to_string(bytes) + " bytes of host memory");
    // Advice only: where THP is off or refused the memory simply stays in small pages.
    if (align == kHugePageBytes) (void)madvise(p, rounded, MADV_HUGEPAGE);
    try {
      std::lock_guard<std::mutex> lock(st->alloc_mutex);
      st->allocations.insert(reinterpret_cast<uintptr_t>(p));
      if (mapped) {
        try {
          st->mapped.emplace(reinterpret_cast<uintptr_t>(p), rounded);
        } catch (...) {
          st->allocations.erase(reinterpret_cast<uintptr_t>(p));
          throw;
        }
      }
    } catch (...) {
      if (mapped) {
        (void)munmap(p, rounded);
      } else {
        std::free(p);
      }
      throw;
    }
    *out = reinterpret_cast<uintptr_t>(p);
    return DC_OK;
  });
}

dc_status cpu_mem_free(int32_t device, dc_devptr ptr) {
  return guarded("mem_free", [&] {
    State* st = g_state.load();
    if (st == nullptr) return not_initialized();
    if (dc_status s = check_device(device)) return s;
    if (ptr == 0) return DC_OK;
    uint64_t mapped_bytes = 0;
    {
      std::lock_guard<std::mutex> lock(st->alloc_mutex);
      if (st->allocations.erase(ptr) == 0)
        return fail(DC_ERROR_INVALID_ARGUMENT, "cpu: mem_free: pointer was not allocated by this backend");
      auto m = st->mapped.find(ptr);
      if (m != st->mapped.end()) {
        mapped_bytes = m->second;
        st->mapped.erase(m);
      }
    }
    if (mapped_bytes != 0) {
      (void)munmap(reinterpret_cast<void*>(ptr), mapped_bytes);
    } else {
      std::free(reinterpret_cast<void*>(ptr));
    }
    return DC_OK;
  });
}

// Whether [p, p + bytes) lies inside one of our own mappings (never user memory: on this unified-memory
// device a numpy array's address is a valid destination, and its pages must not be dropped).
bool inside_mapping(State& st, const void* p, uint64_t bytes) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(st.alloc_mutex);
  auto it = st.mapped.upper_bound(a);
  if (it == st.mapped.begin()) return false;
  --it;
  return a >= it->first && bytes <= it->second && a - it->first <= it->second - bytes;
}

dc_status enqueue_copy(const char* what, dc_stream s, void* dst, const void* src, uint64_t bytes) {
  return guarded(what, [&] {
    State* st = g_state.load();
    if (st == nullptr) return not_initialized();
    if (bytes == 0) return DC_OK;
    if (dst == nullptr || src == nullptr)
      return fail(DC_ERROR_INVALID_ARGUMENT, std::string("cpu: ") + what + ": NULL source or destination");
    auto task = std::make_unique<Task>();
    task->kind = Task::Kind::Copy;
    task->dst = dst;
    task->src = src;
    task->bytes = bytes;
    return submit(*resolve(*st, s), std::move(task), bytes <= kInlineCopyBytes);
  });
}

void* at(dc_devptr p, uint64_t offset) { return reinterpret_cast<unsigned char*>(p) + offset; }

dc_status cpu_memcpy_h2d(dc_stream s, dc_devptr dst, uint64_t dst_offset, const void* src, uint64_t bytes) {
  return enqueue_copy("memcpy_h2d", s, dst ? at(dst, dst_offset) : nullptr, src, bytes);
}

dc_status cpu_memcpy_d2h(dc_stream s, void* dst, dc_devptr src, uint64_t src_offset, uint64_t bytes) {
  return enqueue_copy("memcpy_d2h", s, dst, src ? at(src, src_offset) : nullptr, bytes);
}

dc_status cpu_memcpy_d2d(dc_stream s, dc_devptr dst, uint64_t dst_offset, dc_devptr src, uint64_t src_offset,
                         uint64_t bytes) {
  return enqueue_copy("memcpy_d2d", s, dst ? at(dst, dst_offset) : nullptr, src ? at(src, src_offset) : nullptr,
                      bytes);
}

dc_status cpu_memset_d8(dc_stream s, dc_devptr dst, uint64_t offset, uint8_t value, uint64_t bytes) {
  return guarded("memset_d8", [&] {
    State* st = g_state.load();
    if (st == nullptr) return not_initialized();
    if (bytes == 0) return DC_OK;
    if (dst == 0) return fail(DC_ERROR_INVALID_ARGUMENT, "cpu: memset_d8: NULL destination");
    auto task = std::make_unique<Task>();
    task->kind = Task::Kind::Memset;
    task->dst = at(dst, offset);
    task->value = value;
    task->bytes = bytes;
    // A large zero fill of our own mapping drops its whole pages instead of writing them (zero_fill,
    // launch.cpp): a system call rather than a pass over the memory, so it runs inline like a small fill.
    task->drop_pages = value == 0 && bytes >= kDropPagesMin && inside_mapping(*st, task->dst, bytes);
    const bool inline_ok = bytes <= kInlineCopyBytes || task->drop_pages;
    return submit(*resolve(*st, s), std::move(task), inline_ok);
  });
}

// ---- streams and events ----------------------------------------------------

dc_status cpu_stream_create(int32_t device, dc_stream* out) {
  return guarded("stream_create", [&] {
    State* st = g_state.load();
    if (st == nullptr) return not_initialized();
    if (dc_status s = check_device(device)) return s;
    if (out == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "cpu: stream_create: out is NULL");
    *out = to_handle(new StreamHandle(st->spin_us));
    return DC_OK;
  });
}

dc_status cpu_stream_destroy(dc_stream s) {
  return guarded("stream_destroy", [&] {
    if (s == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "cpu: stream_destroy: NULL stream");
    delete reinterpret_cast<StreamHandle*>(s);
    return DC_OK;
  });
}

dc_status cpu_stream_synchronize(dc_stream s) {
  return guarded("stream_synchronize", [&] {
    State* st = g_state.load();
    if (st == nullptr) return not_initialized();
    std::string error;
    dc_status status = DC_ERROR_LAUNCH;
    if (!resolve(*st, s)->synchronize(&error, &status)) return fail(status, error);
    return DC_OK;
  });
}

dc_status cpu_event_create(int32_t device, dc_event* out) {
  return guarded("event_create", [&] {
    if (dc_status s = check_device(device)) return s;
    if (out == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "cpu: event_create: out is NULL");
    *out = to_handle(new EventHandle());
    return DC_OK;
  });
}

dc_status cpu_event_destroy(dc_event e) {
  if (e == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "cpu: event_destroy: NULL event");
  delete from(e);  // queued records/waits share the state, so they stay valid
  return DC_OK;
}

dc_status cpu_event_record(dc_event e, dc_stream s) {
  return guarded("event_record", [&] {
    State* st = g_state.load();
    if (st == nullptr) return not_initialized();
    if (e == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "cpu: event_record: NULL event");
    auto task = std::make_unique<Task>();
    task->kind = Task::Kind::Record;
    task->event = from(e)->state;
    task->seq = task->event->begin_record();
    return submit(*resolve(*st, s), std::move(task), true);
  });
}

dc_status cpu_stream_wait_event(dc_stream s, dc_event e) {
  return guarded("stream_wait_event", [&] {
    State* st = g_state.load();
    if (st == nullptr) return not_initialized();
    if (e == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "cpu: stream_wait_event: NULL event");
    const auto& state = from(e)->state;
    const uint64_t seq = state->latest();
    if (seq == 0 || state->reached(seq)) return DC_OK;  // nothing to wait for
    auto task = std::make_unique<Task>();
    task->kind = Task::Kind::Wait;
    task->event = state;
    task->seq = seq;
    resolve(*st, s)->enqueue(std::move(task));  // never inline: it may block
    return DC_OK;
  });
}

dc_status cpu_event_synchronize(dc_event e) {
  return guarded("event_synchronize", [&] {
    if (e == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "cpu: event_synchronize: NULL event");
    from(e)->state->wait_latest(nullptr);
    return DC_OK;
  });
}

dc_status cpu_event_query(dc_event e, int32_t* done) {
  if (e == nullptr || done == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "cpu: event_query: NULL argument");
  *done = from(e)->state->done() ? 1 : 0;
  return DC_OK;
}

dc_status cpu_event_elapsed_ms(dc_event start, dc_event end, double* ms) {
  return guarded("event_elapsed_ms", [&] {
    if (start == nullptr || end == nullptr || ms == nullptr)
      return fail(DC_ERROR_INVALID_ARGUMENT, "cpu: event_elapsed_ms: NULL argument");
    EventState::Clock::time_point t0, t1;
    if (!from(start)->state->wait_latest(&t0))
      return fail(DC_ERROR_INVALID_ARGUMENT, "cpu: event_elapsed_ms: the start event was never recorded");
    if (!from(end)->state->wait_latest(&t1))
      return fail(DC_ERROR_INVALID_ARGUMENT, "cpu: event_elapsed_ms: the end event was never recorded");
    *ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    return DC_OK;
  });
}

// ---- compilation and modules -------------------------------------------------

dc_status cpu_compile(int32_t device, const char* source, const char* options, void** binary, uint64_t* size) {
  return guarded("compile", [&] {
    State* st = g_state.load();
    if (st == nullptr) return not_initialized();
    if (dc_status s = check_device(device)) return s;
    if (source == nullptr || binary == nullptr || size == nullptr)
      return fail(DC_ERROR_INVALID_ARGUMENT, "cpu: compile: NULL source, binary or size");
    std::string blob, error;
    if (dc_status s = st->compiler->compile(source, options != nullptr ? options : "", blob, error))
      return fail(s, error);
    void* out = std::malloc(blob.size());
    if (out == nullptr) return fail(DC_ERROR_OUT_OF_MEMORY, "cpu: compile: no memory for the binary");
    std::memcpy(out, blob.data(), blob.size());
    *binary = out;
    *size = blob.size();
    return DC_OK;
  });
}

void cpu_free_binary(void* binary) { std::free(binary); }

dc_status cpu_module_load(int32_t device, const void* binary, uint64_t size, dc_module* out) {
  return guarded("module_load", [&] {
    if (dc_status s = check_device(device)) return s;
    if (out == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "cpu: module_load: out is NULL");
    std::unique_ptr<Module> m;
    std::string error;
    if (dc_status s = Module::load(binary, size, m, error)) return fail(s, error);
    *out = reinterpret_cast<dc_module>(m.release());
    return DC_OK;
  });
}

dc_status cpu_module_unload(dc_module m) {
  return guarded("module_unload", [&] {
    if (m == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "cpu: module_unload: NULL module");
    from(m)->release();  // deleted now, or when the last queued launch of its kernels has run
    return DC_OK;
  });
}

dc_status cpu_kernel_get(dc_module m, const char* name, dc_kernel* out) {
  return guarded("kernel_get", [&] {
    if (m == nullptr || name == nullptr || out == nullptr)
      return fail(DC_ERROR_INVALID_ARGUMENT, "cpu: kernel_get: NULL module, name or out");
    Kernel* k = nullptr;
    std::string error;
    if (dc_status s = from(m)->kernel(name, k, error)) return fail(s, error);
    *out = reinterpret_cast<dc_kernel>(k);
    return DC_OK;
  });
}

dc_status cpu_launch(dc_stream s, dc_kernel k, const dc_launch_config* config, const dc_kernel_arg* args,
                     uint32_t nargs) {
  return guarded("launch", [&] {
    State* st = g_state.load();
    if (st == nullptr) return not_initialized();
    if (k == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "cpu: launch: NULL kernel");
    if (nargs > 0 && args == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "cpu: launch: NULL args");
    Geometry geo;
    std::string error;
    if (dc_status status = plan_geometry(config, st->participants, geo, error)) return fail(status, error);
    uint64_t slot_bytes = 0;  // argument values in 16-byte aligned slots
    for (uint32_t i = 0; i < nargs; ++i) {
      const dc_kernel_arg& a = args[i];
      if (a.kind == DC_ARG_BUFFER) {
        slot_bytes += 16;
      } else if (a.kind == DC_ARG_BUFFER_REGION) {
        if (a.value.region == nullptr)
          return fail(DC_ERROR_INVALID_ARGUMENT, "cpu: launch: buffer region argument " + std::to_string(i) +
                                                     " has no region");
        slot_bytes += 16;
      } else if (a.kind == DC_ARG_SCALAR) {
        if (a.size == 0 || a.value.scalar == nullptr)
          return fail(DC_ERROR_INVALID_ARGUMENT, "cpu: launch: scalar argument " + std::to_string(i) +
                                                     " has no value (size 0 or NULL pointer)");
        slot_bytes += (uint64_t{a.size} + 15) / 16 * 16;
      } else if (a.kind == DC_ARG_LOCAL) {
        return fail(DC_ERROR_UNSUPPORTED, "cpu: launch: argument " + std::to_string(i) +
                                              " is DC_ARG_LOCAL; the CPU backend takes work-group memory "
                                              "through dynamic_shared_bytes");
      } else {
        return fail(DC_ERROR_INVALID_ARGUMENT,
                    "cpu: launch: argument " + std::to_string(i) + " has unknown kind " + std::to_string(a.kind));
      }
    }
    if (geo.total_items == 0) return DC_OK;
    Stream& stream = *resolve(*st, s);
    Kernel* kernel = from(k);
    const uint32_t shared = config->dynamic_shared_bytes;
    const bool pooled = worth_the_pool(geo.total_items, kernel->item_ps.load(std::memory_order_relaxed));
    if (pooled && geo.total_items <= kInlineItems && geo.total_groups < uint64_t{st->participants} * 4) {
      // Few heavy items: plan again with groups small enough for every thread (same check, same result otherwise).
      if (dc_status status = plan_geometry(config, st->participants, geo, error, /*fine=*/true)) return fail(status, error);
    }

    // Few items, pooled only for their measured cost, and a few milliseconds of work at most (n-body at 1,024
    // bodies): on an idle stream the calling thread runs them itself with the pool's helpers, as Numba's
    // parallel loops do, which saves two thread hand-offs per launch (to the stream's worker, and back to the
    // caller at synchronize; process CPU time per 1,024-body launch 0.61 -> 0.57 ms in one loaded A/B run).
    // Larger or longer launches stay asynchronous on the worker.
    const bool few_heavy =
        pooled && run_on_caller(geo.total_items, kernel->item_ps.load(std::memory_order_relaxed));
    if (!pooled || few_heavy) {
      InlineToken token(stream);
      if (token) {
        // The caller's argument array lives until we return: point at it directly.
        constexpr uint32_t kStackArgs = 32;
        void* stack_argv[kStackArgs];
        std::unique_ptr<void*[]> heap_argv;
        void** argv = stack_argv;
        if (nargs > kStackArgs) {
          heap_argv.reset(new void*[nargs]);
          argv = heap_argv.get();
        }
        // A view's pointer (the block's address plus the offset: CPU handles are addresses) needs a home.
        dc_devptr stack_shifted[kStackArgs];
        std::unique_ptr<dc_devptr[]> heap_shifted;
        dc_devptr* shifted = stack_shifted;
        if (nargs > kStackArgs) {
          heap_shifted.reset(new dc_devptr[nargs]);
          shifted = heap_shifted.get();
        }
        for (uint32_t i = 0; i < nargs; ++i) {
          if (args[i].kind == DC_ARG_BUFFER) {
            argv[i] = const_cast<dc_devptr*>(&args[i].value.buffer);
          } else if (args[i].kind == DC_ARG_BUFFER_REGION) {
            shifted[i] = args[i].value.region->buffer + args[i].value.region->offset;
            argv[i] = &shifted[i];
          } else {
            argv[i] = const_cast<void*>(args[i].value.scalar);
          }
        }
        geo.desc.args = argv;
        geo.desc.nargs = nargs;
        KernelFailure failure;
        failure.attach(geo.desc);
        note_item_cost(kernel->item_ps, geo.total_items,
                       run_groups(kernel->fn, geo.desc, geo.total_groups, shared, stream.scratch(), few_heavy));
        if (failure.failed()) return fail(failure.status(), failure.message());
        return DC_OK;
      }
    }

    auto task = std::make_unique<Task>();
    task->kind = Task::Kind::Launch;
    task->fn = kernel->fn;
    task->shared_bytes = shared;
    task->argv.resize(nargs);
    task->arg_bytes.resize(slot_bytes);
    // 16-byte aligned slots inside the (malloc-aligned) byte store.
    unsigned char* base = task->arg_bytes.data();
    uint64_t off = 0;
    for (uint32_t i = 0; i < nargs; ++i) {
      const dc_kernel_arg& a = args[i];
      uint64_t n = a.size;
      if (a.kind == DC_ARG_BUFFER) {
        n = sizeof(void*);
        std::memcpy(base + off, &a.value.buffer, n);
      } else if (a.kind == DC_ARG_BUFFER_REGION) {
        n = sizeof(void*);
        const dc_devptr at = a.value.region->buffer + a.value.region->offset;
        std::memcpy(base + off, &at, n);
      } else {
        std::memcpy(base + off, a.value.scalar, n);
      }
      task->argv[i] = base + off;
      off += (n + 15) / 16 * 16;
    }
    task->desc = geo.desc;
    task->desc.args = task->argv.data();
    task->desc.nargs = nargs;
    task->failure.attach(task->desc);
    task->item_ps = &kernel->item_ps;
    task->module = ModuleRef(kernel->module);
    stream.enqueue(std::move(task));
    return DC_OK;
  });
}

const dc_backend kTable = {
    sizeof(dc_backend),
    DC_BACKEND_ABI_VERSION,
    "cpu",
    kVersion,
    cpu_initialize,
    cpu_shutdown,
    cpu_last_error,
    cpu_device_count,
    cpu_device_info,
    cpu_compiler_identity,
    cpu_mem_alloc,
    cpu_mem_free,
    cpu_memcpy_h2d,
    cpu_memcpy_d2h,
    cpu_memcpy_d2d,
    cpu_memset_d8,
    cpu_stream_create,
    cpu_stream_destroy,
    cpu_stream_synchronize,
    cpu_stream_wait_event,
    cpu_event_create,
    cpu_event_destroy,
    cpu_event_record,
    cpu_event_synchronize,
    cpu_event_query,
    cpu_event_elapsed_ms,
    cpu_compile,
    cpu_free_binary,
    cpu_module_load,
    cpu_module_unload,
    cpu_kernel_get,
    cpu_launch,
    // Optional entries (appended to the ABI): host memory needs no host-pointer mapping, the
    // binaries are dlopened from the core's cache, and there are no vendor handles to lend.
    nullptr,  // mem_host_pointer
    nullptr,  // set_cache_dir
    nullptr,  // native_handle
};

}  // namespace

// ---- runtime.h ---------------------------------------------------------------

ThreadPool* shared_pool() {
  State* st = g_state.load();
  if (st == nullptr) return nullptr;
  if (ThreadPool* p = st->pool_ptr.load(std::memory_order_acquire)) return p;
  std::lock_guard<std::mutex> lock(st->pool_mutex);
  if (st->pool_failed) return nullptr;
  if (!st->pool) {
    try {
      st->pool = std::make_unique<ThreadPool>(st->participants, st->spin_us);
    } catch (...) {
      st->pool_failed = true;  // launches still run, serially on the stream's thread
      return nullptr;
    }
    st->pool_ptr.store(st->pool.get(), std::memory_order_release);
  }
  return st->pool.get();
}

uint32_t pool_participants() {
  State* st = g_state.load();
  return st != nullptr ? st->participants : 1;
}

uint32_t spin_microseconds() {
  State* st = g_state.load();
  return st != nullptr ? st->spin_us : kDefaultSpinUs;
}

}  // namespace dccpu

extern "C" __attribute__((visibility("default"))) const dc_backend* dotcompute_backend_entry(void) {
  return &dccpu::kTable;
}

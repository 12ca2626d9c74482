// The CUDA simulator's objects: devices and their memory, contexts, streams
// (in-order worker queues), events, graphs, modules and functions. Every
// CUcontext/CUstream/... handle the driver API hands out points at one of these.
#pragma once

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "../driver_api.h"
#include "shim/dcsim_abi.h"

namespace dcsim_lib {

// The host's memory page size (sysconf, read once): arenas and block stacks are laid out in pages.
inline uint64_t page_size() {
  static const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  return page;
}

// Driver error codes the plugin's header does not name (values from the driver API's documentation).
constexpr CUresult kErrorInvalidSource = 300;
constexpr CUresult kErrorOperatingSystem = 304;
constexpr CUresult kErrorAssert = 710;
constexpr CUresult kErrorStreamCaptureUnmatched = 903;
constexpr CUresult kErrorStreamCaptureWrongThread = 908;

// ---- configuration ----
struct DeviceConfig {
  std::string name;
  int cc_major = 9, cc_minor = 0;
  uint64_t memory = 80ull << 30;
  int sms = 132;
  int shared_per_block = 48 * 1024;
  int shared_optin = 227 * 1024;
  int threads_per_block = 1024;
  int threads_per_sm = 2048;
  int warp = 32;
};
// Parses DOTCOMPUTE_CUDA_SIM_DEVICES; false with `error` set when it is malformed.
bool parse_devices(const char* text, std::vector<DeviceConfig>& out, std::string& error);

// How a launch runs (read from the environment at every launch, so a program may change it
// between launches): DOTCOMPUTE_CUDA_SIM_SCHEDULE and DOTCOMPUTE_CUDA_SIM_TIMEOUT_S.
struct ExecConfig {
  int schedule = DCSIM_SCHEDULE_FORWARD;
  uint64_t seed = 0;
  double timeout_s = 0;  // 0: no watchdog
};
bool parse_exec_config(ExecConfig& out, std::string& error);

// The reason behind the last failing call on this thread, appended to cuGetErrorString's text.
CUresult fail(CUresult code, const std::string& detail);
const char* error_name(CUresult code);
const char* error_text(CUresult code);

// ---- memory ----
// Device addresses are fake: kDeviceBase + (device << 44) + offset. Bits 48..55 set make them
// non-canonical on x86-64 and untranslatable on AArch64, so a host dereference faults instead of
// reading some host memory by luck; the simulator translates them for copies and kernel arguments.
constexpr uint64_t kDeviceBase = 0x00dc000000000000ull;
constexpr int kDeviceShift = 44;

class Arena {
 public:
  Arena(int device, uint64_t capacity) : device_(device), capacity_(capacity) {}
  ~Arena();
  CUresult alloc(uint64_t bytes, CUdeviceptr* out);
  CUresult free(CUdeviceptr p);
  // The host address of [p, p+bytes) when it lies inside one live allocation (one-past-the-end allowed
  // for bytes == 0), else null.
  char* translate(CUdeviceptr p, uint64_t bytes) const;
  uint64_t in_use() const;
  // For a trace build's kernel checks (dcsim_abi.h, dcsim_host_services): the arena's host range, and
  // the live allocation whose span (bytes rounded up, then the red zone) holds host address `p`.
  bool host_range(uintptr_t* lo, uintptr_t* hi) const;
  bool find(uintptr_t p, uintptr_t* host, uint64_t* bytes, uint64_t* span, uint64_t* device) const;

 private:
  bool reserve();
  int device_;
  uint64_t capacity_;
  char* host_ = nullptr;
  mutable std::mutex mutex_;
  std::map<uint64_t, uint64_t> used_;   // offset -> size (with the red zone, when it had one)
  std::map<uint64_t, uint64_t> asked_;  // offset -> the bytes cuMemAlloc asked for
  std::map<uint64_t, uint64_t> free_;   // offset -> size, coalesced
  uint64_t in_use_ = 0;
};

// ---- devices and contexts ----
struct Context;
struct Stream;

struct Device {
  int ordinal;
  DeviceConfig cfg;
  std::unique_ptr<Arena> arena;
  std::unique_ptr<Context> primary;
  std::unique_ptr<Stream> null_stream;  // the legacy default stream
};

struct Context {
  int device;
  std::mutex mutex;
  std::set<int> peers;  // devices whose memory this context may access
};

// ---- streams, events, graphs ----
using Task = std::function<void(Stream&)>;
class Watch;

struct Graph {
  int device = 0;
  std::vector<Task> nodes;
};

struct Stream {
  Stream(int device, unsigned flags);
  ~Stream();
  // Appends work; while the stream is being captured the work becomes a graph node instead.
  void enqueue(Task task);
  // Waits for everything enqueued so far; returns (and clears) the first asynchronous error.
  CUresult synchronize();
  void wait_for(uint64_t ticket);
  uint64_t ticket() const;  // the number of tasks enqueued so far
  void record_error(CUresult code, const std::string& message);
  // The launch running on the stream's worker now (execute() sets it), so that Ctrl-C during
  // synchronize() can stop it; and whether the running task was dropped by such an interrupt.
  void set_running(Watch* w);
  bool cancelled() const;

  const int device;
  const unsigned flags;
  std::unique_ptr<Graph> capture;  // non-null while capturing

 private:
  void worker();
  void interrupt(uint64_t through);
  std::mutex run_mutex_;
  Watch* running_ = nullptr;
  std::atomic<uint64_t> current_{0}, cancel_through_{0};
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Task> queue_;
  uint64_t enqueued_ = 0, done_ = 0;
  bool stop_ = false;
  CUresult error_ = CUDA_SUCCESS;
  std::string error_message_;
  std::thread thread_;
};

struct Event {
  unsigned flags = 0;
  std::mutex mutex;
  std::condition_variable cv;
  uint64_t recorded = 0, completed = 0;
  std::chrono::steady_clock::time_point when;
};

// ---- modules ----
struct Module;

struct Function {
  Module* module;
  const dcsim_kernel_entry* entry;
  std::string symbol;
  int static_shared = 0;
  int max_dynamic_shared = 0;
  int registers = 0;  // per thread, as ptxas allocated them (the CUBIN's EIATTR_REGCOUNT; counters.cpp)
  std::vector<size_t> offsets;  // parameter offsets in the packed argument buffer
  size_t params_bytes = 0;
};

struct Module : std::enable_shared_from_this<Module> {
  ~Module();
  void* handle = nullptr;
  int memfd = -1;
  int device = 0;
  bool fibers = false;
  dcsim_run_fn run = nullptr;
  std::vector<std::unique_ptr<Function>> functions;
  std::vector<uintptr_t> globals;  // addresses cuModuleGetGlobal handed out (registered in Sim::global_ranges)
};

// Loads a simulator image (see builder.hpp); CUDA_ERROR_INVALID_IMAGE with a reason otherwise.
CUresult load_module(const void* image, int device, std::shared_ptr<Module>& out);

class Watch;
// A launch's watchdog (DOTCOMPUTE_CUDA_SIM_TIMEOUT_S): while it lives, the threads running the
// launch's blocks are interrupted once `seconds` have passed, and their blocks fail with
// CUDA_ERROR_LAUNCH_TIMEOUT (guard.cpp).
class Watch {
 public:
  explicit Watch(double seconds);  // 0: no deadline (the launch can still be interrupted)
  ~Watch();
  Watch(const Watch&) = delete;
  Watch& operator=(const Watch&) = delete;
  bool expired() const { return expired_.load(); }
  double seconds() const { return seconds_; }
  // Stops the launch now (Ctrl-C in synchronize): its blocks end as on a timeout.
  void interrupt();
  void expire();  // marks it expired and signals the threads running its blocks
  bool interrupted() const { return interrupted_.load(); }

 private:
  friend class Watchdog;
  friend bool run_guarded(dcsim_run_fn, dcsim_launch*, Watch*);
  double seconds_;
  std::chrono::steady_clock::time_point deadline_;
  std::atomic<bool> expired_{false}, interrupted_{false};
  bool watched_ = false;
  std::mutex mutex_;
  std::vector<pthread_t> threads_;  // the threads running its blocks now
};

// Runs blocks with faults (memory, illegal instruction, integer division by zero) and the watchdog
// turned into a failed launch (guard.cpp); false after one.
bool run_guarded(dcsim_run_fn run, dcsim_launch* launch, Watch* watch = nullptr);

// ---- the block thread pool ----
// Runs fn(0..count-1) on the pool's threads and the calling one; returns when all are done.
void parallel_for(uint64_t count, const std::function<void(uint64_t)>& fn);
// This thread's stacks (n of `bytes` each, guarded) and shared memory windows (static: below
// *static_top, static_bytes; dynamic: dynamic_bytes at *dynamic; each followed by a guard page),
// kept between launches.
char* thread_stacks(unsigned n, uint64_t bytes);
bool thread_shared(uint64_t dynamic_bytes, uint64_t static_bytes, char** static_top, char** dynamic);
// What a faulting address of this thread hit (a shared memory or stack guard page), or "".
std::string describe_fault(const void* address);
// The memory of a cooperative launch whose blocks are all resident at once (dcsim_grid.h): each
// block its own guarded stacks and shared memory windows, `stride` bytes apart (streams.cpp).
// map() also makes describe_fault of this thread know it, until it is destroyed.
struct ResidentGrid {
  ResidentGrid() = default;
  ResidentGrid(const ResidentGrid&) = delete;
  ResidentGrid& operator=(const ResidentGrid&) = delete;
  ~ResidentGrid();
  bool map(uint64_t blocks, unsigned threads, uint64_t stack_bytes, uint64_t static_bytes, uint64_t dynamic_bytes);
  char* static_top(uint64_t block) const;
  char* dynamic(uint64_t block) const;
  char* base = nullptr;
  size_t bytes = 0;
  uint64_t blocks = 0, stride = 0, stack_bytes = 0, static_window = 0, dynamic_window = 0, dynamic_asked = 0;
  unsigned threads = 0;
};
// The memory mappings a cooperative launch of `blocks` blocks of `threads` threads needs, and how
// many more this process may create (vm.max_map_count less those in use), for the simulator's own limit.
uint64_t resident_grid_mappings(uint64_t blocks, unsigned threads);
uint64_t mappings_available();
// Cooperative launches (cooperative.cpp): the blocks of `threads` threads with `dynamic` bytes of
// shared memory a multiprocessor holds at once (the occupancy rule), and running a launch with every
// block resident on the calling thread (failures recorded on the stream).
int max_active_blocks(const DeviceConfig& c, int static_shared, unsigned threads, uint64_t dynamic);
void run_resident(Stream& s, const Function& f, void* const* params, const unsigned grid[3], const unsigned block[3],
                  unsigned shared, uint64_t shared_window, const ExecConfig& exec, uint64_t stack_bytes);

// ---- GPU-model counters (counters.cpp, DOTCOMPUTE_CUDA_SIM_COUNTERS=1) ----
// Hands a counters-mode host object (shim/dcsim_counters.h) the sink its counts go to; others are left alone.
void counters_attach(Module& m);

// ---- building images (builder.cpp) ----
CUresult build_identity(std::string& out);
CUresult build_image(const std::string& source, const std::string& options, int sm, const void* device_code,
                     size_t device_code_size, std::string& image, std::string& log);

// ---- the process-wide state ----
struct Sim {
  std::vector<std::unique_ptr<Device>> devices;
  std::mutex mutex;
  std::map<uintptr_t, uint64_t> host_ranges;  // pinned and managed host allocations: start -> size
  // __device__/__constant__ variables of loaded modules (host globals of their objects) that
  // cuModuleGetGlobal handed out, so that copies accept their addresses: start -> size
  std::map<uintptr_t, uint64_t> global_ranges;
  std::map<Module*, std::shared_ptr<Module>> modules;
  std::set<Stream*> streams;
  // Events are shared with the records and waits queued on streams: destroying one that a stream
  // still waits on is legal, and the queued work keeps it alive.
  std::map<Event*, std::shared_ptr<Event>> events;
};

Sim* sim();              // null before a successful cuInit
Context* current();      // this thread's context, or null
Device* device_of(int ordinal);

// The stream and event plumbing the entry points share (driver_entry.cpp; driver_streams.cpp uses them).
// The stream a call names: the context device's legacy default stream for null.
CUresult stream_of(CUstream h, Stream*& out);
// Queues `task` on `s` with the legacy default stream's ordering against the device's blocking streams.
void enqueue(Stream* s, Task task);
// The live event behind a handle (null when it was destroyed or never made).
std::shared_ptr<Event> event_ref(CUevent h);

// Resolves a device address for copies: the host address of [p, p+bytes) in device memory or
// a pinned/managed host range; null when the range is not allocated.
// The services a trace build of a module gets (module.cpp stores their address in it).
const dcsim_host_services* host_services();
char* resolve(CUdeviceptr p, uint64_t bytes, int* device = nullptr);
bool is_pinned(const void* host, uint64_t bytes);

}  // namespace dcsim_lib

// The driver API entry points the CUDA plugin looks up (driver_entry.cpp, driver_streams.cpp, textures.cpp).
#define DCSIM_EXPORT extern "C" __attribute__((visibility("default")))
// Every entry point but cuInit fails until cuInit has succeeded, as the driver's do.
#define NEED_INIT \
  if (!::dcsim_lib::sim()) return CUDA_ERROR_NOT_INITIALIZED

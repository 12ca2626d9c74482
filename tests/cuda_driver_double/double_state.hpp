// The driver double's state and the helpers every entry point uses (cuda_double.cpp: devices,
// memory, modules and launches; double_streams.cpp: streams, events and graphs). One Double per
// process, behind g(); every entry point takes its lock through ENTER.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "cuda_double.h"
#include "driver_api.h"

#define EXPORT extern "C" __attribute__((visibility("default")))

namespace cudadouble {

constexpr uint64_t kMemory = 80ull << 30;
constexpr int kMaxSharedDefault = 48 * 1024;
constexpr int kMaxSharedOptin = 227 * 1024;

using Op = std::function<CUresult()>;

struct Stream {
  uint64_t id;
  unsigned flags;
  bool capturing = false;
  std::vector<Op> captured;
};
struct Graph {
  std::vector<Op> ops;
};
struct Event {
  uint64_t id;
  unsigned flags;
  bool recorded = false;
  uint64_t time_ns = 0;
};
struct Module {
  std::vector<std::string> functions;
  std::vector<std::pair<std::string, size_t>> objects;  // __device__/__constant__ variables: name, bytes
  std::map<std::string, CUdeviceptr> globals;          // their memory, made on first cuModuleGetGlobal
};
struct Function {
  Module* module;
  std::string name;
  int max_dynamic_shared = kMaxSharedDefault;
};
// A primary context is identified by its device; the handle is a pointer to this slot.
struct Context {
  int device;
  int retained = 0;
};

struct Double {
  std::mutex mutex;
  int device_count = 1;
  int driver_version = 12090;
  int occupancy_block = 768;
  bool initialized = false;
  std::map<std::string, int> failures;
  std::map<std::string, std::vector<size_t>> param_sizes;
  std::map<uint64_t, std::unique_ptr<unsigned char[]>> allocations;
  std::map<uint64_t, size_t> allocation_sizes;
  uint64_t allocated = 0;
  std::map<Stream*, std::unique_ptr<Stream>> streams;
  std::map<Event*, std::unique_ptr<Event>> events;
  std::map<Module*, std::unique_ptr<Module>> modules;
  std::vector<std::unique_ptr<Function>> functions;
  std::map<Graph*, std::unique_ptr<Graph>> graphs;
  std::map<Graph*, std::unique_ptr<Graph>> execs;  // instantiated graphs: their own copy of the ops
  std::set<void*> host_allocations;
  std::set<std::pair<int, int>> peers_enabled;
  Context contexts[8] = {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}};
  uint64_t next_id = 1;
  uint64_t clock_ns = 0;
  std::vector<double_launch> launches;
  std::string ops;
  std::string ops_snapshot;
  std::string last_image_kind;
  size_t last_image_size = 0;
};

inline Double& g() {
  static Double d;
  return d;
}

inline thread_local Context* t_current = nullptr;

using Lock = std::lock_guard<std::mutex>;

inline CUresult injected(Double& d, const char* function) {
  auto it = d.failures.find(function);
  if (it == d.failures.end()) return CUDA_SUCCESS;
  const int r = it->second;
  d.failures.erase(it);
  return r;
}

#define ENTER(name)                                             \
  Double& d = g();                                              \
  Lock lock(d.mutex);                                           \
  if (CUresult r_ = injected(d, name); r_ != CUDA_SUCCESS) return r_; \
  if (!d.initialized) return CUDA_ERROR_NOT_INITIALIZED

#define NEED_CONTEXT() \
  if (!t_current || t_current->retained == 0) return CUDA_ERROR_INVALID_CONTEXT

inline bool valid_device(const Double& d, CUdevice dev) { return dev >= 0 && dev < d.device_count; }

// The allocation holding [ptr, ptr + bytes), or false when the range is not inside one.
inline bool inside_allocation(const Double& d, CUdeviceptr ptr, size_t bytes) {
  auto it = d.allocation_sizes.upper_bound(ptr);
  if (it == d.allocation_sizes.begin()) return false;
  --it;
  return ptr >= it->first && ptr + bytes <= it->first + it->second;
}

inline bool valid_stream(const Double& d, CUstream s) { return !s || d.streams.count(reinterpret_cast<Stream*>(s)); }
inline uint64_t stream_id(CUstream s) { return s ? reinterpret_cast<Stream*>(s)->id : 0; }

// Time advances with every operation: 1 us each, plus the bytes at 16 GB/s.
inline void tick(Double& d, uint64_t bytes) { d.clock_ns += 1000 + bytes / 16; }

inline void op(Double& d, const std::string& line) { d.ops += line + "\n"; }

// Runs `work` now, or, while `s` is being captured, keeps it for the graph (as the driver does).
inline CUresult issue(Double& d, CUstream s, const std::string& what, Op work) {
  if (s) {
    Stream* st = reinterpret_cast<Stream*>(s);
    if (st->capturing) {
      st->captured.push_back(std::move(work));
      op(d, "capture " + what + " stream=" + std::to_string(st->id));
      return CUDA_SUCCESS;
    }
  }
  return work();
}

inline bool capturing(CUstream s) { return s && reinterpret_cast<Stream*>(s)->capturing; }

}  // namespace cudadouble

// The Metal plugin's objects behind the ABI's opaque handles, and its error reporting.
#ifndef DOTCOMPUTE_METAL_STATE_H
#define DOTCOMPUTE_METAL_STATE_H

#import <Metal/Metal.h>

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "dotcompute/backend_abi.h"
#include "objc_owned.h"

namespace dcmtl {

// ---- errors: a message per thread, kept until the next call from that thread (backend_abi.h)
dc_status fail(dc_status st, const std::string& message);
const char* last_error();
void clear_error();
std::string describe(NSError* error);  // "description (domain code)"

// Runs `body` with a fresh autorelease pool; no C++ or Objective-C exception escapes.
template <class F>
dc_status guarded(F&& body);

struct Device {
  int32_t index = 0;
  Owned<id<MTLDevice>> device;
  bool nonuniform = false;  // dispatchThreads: non-uniform threadgroups (Apple4+, Mac2)
  std::string family;       // the highest family it supports, e.g. "apple7"
  uint32_t max_threads = 0;
  // Pipeline states by (source hash, kernel name): a module loaded twice reuses them.
  std::mutex pipelines_mutex;
  std::unordered_map<std::string, Owned<id<MTLComputePipelineState>>> pipelines;
  uint64_t pipeline_hits = 0, pipeline_misses = 0;
  bool unified = false;      // hasUnifiedMemory: Apple silicon; false on a discrete GPU
  // Live buffers by their dc_devptr. A shared buffer's is its `contents` address (the host's view
  // of it: DC_FEATURE_HOST_VISIBLE_MEMORY); a private one has no host address and gets a handle
  // from a range with bit 63 set, which no user-space address has (memory.mm).
  std::mutex buffers_mutex;
  std::map<uintptr_t, Owned<id<MTLBuffer>>> buffers;
  uintptr_t next_private = 0;
  uint64_t allocated_bytes = 0;
  uint64_t private_buffers = 0;  // live private-storage allocations, for acc.info
  // The binary archive of pipeline states in the kernel-cache folder (program.mm). `id`, not
  // id<MTLBinaryArchive>: that protocol exists only from macOS 11, and every use of it is behind
  // an availability check.
  std::mutex archive_mutex;
  bool archive_full = false;    // reached kMaxArchiveBytes: nothing more is added
  Owned<id> archive;            // nil: no archive (none allowed, none possible, or it failed)
  std::string archive_path, archive_note;
  uint64_t archive_hits = 0, archive_misses = 0;
};

// Allocations at least this large are private storage on a device without unified memory (memory.mm).
constexpr uint64_t kPrivateStorageMinBytes = 1ull << 20;

// A stream: one command queue; completion is counted so that synchronisation also waits for
// the completed handlers (which run after a command buffer's status turns Completed on Apple).
struct Stream {
  Device* device = nullptr;
  Owned<id<MTLCommandQueue>> queue;
  std::mutex m;
  std::condition_variable cv;
  uint64_t committed = 0, completed = 0;
  std::string error;  // the first command-buffer error since the last synchronisation
  dc_status error_status = DC_OK;
};

struct EventState {
  std::mutex m;
  std::condition_variable cv;
  bool recorded = false, done = false;  // done: the completed handler has run
  uint64_t value = 0;                    // the shared event's value this record signals
  double gpu_time = 0;  // seconds: the GPU end time of the work before the marker
};

struct Event {
  Device* device = nullptr;
  Owned<id<MTLSharedEvent>> shared;  // what other streams wait on
  uint64_t value = 0;                // the value the latest record signals
  std::shared_ptr<EventState> state;
};

struct Module;

struct Kernel {
  Module* module = nullptr;
  std::string name;
  Owned<id<MTLComputePipelineState>> pipeline;
};

struct Module {
  Device* device = nullptr;
  Owned<id<MTLLibrary>> library;
  std::string key;  // hash of the source: the pipeline cache's key prefix
  // The ABI has no kernel release: a module owns the kernels taken from it.
  std::mutex kernels_mutex;
  std::vector<std::unique_ptr<Kernel>> kernels;
};

dc_status get_device(int32_t index, Device** out);
// The kernel-cache folder the core gave (set_cache_dir), "" for none.
std::string cache_dir();
// (Re)opens the device's binary archive in cache_dir(), or notes why there is none (program.mm).
void open_archive(Device* dev);
// The buffer containing `ptr` and the offset of `ptr` in it.
dc_status find_buffer(Device* dev, dc_devptr ptr, id<MTLBuffer>* buffer, uint64_t* offset);
// Commits `cb` on `s`, counting it so stream_synchronize also waits for its completion.
void commit(Stream* s, id<MTLCommandBuffer> cb);
dc_status wait_stream(Stream* s);

// The ABI functions implemented outside plugin.mm.
dc_status mem_alloc(int32_t device, uint64_t bytes, dc_devptr* out);
dc_status mem_free(int32_t device, dc_devptr ptr);
dc_status mem_host_pointer(int32_t device, dc_devptr ptr, void** out);
dc_status native_handle(uint32_t kind, uint64_t object, uint64_t* out);
dc_status memcpy_h2d(dc_stream s, dc_devptr dst, uint64_t dst_offset, const void* src, uint64_t bytes);
dc_status memcpy_d2h(dc_stream s, void* dst, dc_devptr src, uint64_t src_offset, uint64_t bytes);
dc_status memcpy_d2d(dc_stream s, dc_devptr dst, uint64_t dst_offset, dc_devptr src, uint64_t src_offset,
                     uint64_t bytes);
dc_status memset_d8(dc_stream s, dc_devptr dst, uint64_t offset, uint8_t value, uint64_t bytes);
dc_status stream_create(int32_t device, dc_stream* out);
dc_status stream_destroy(dc_stream s);
dc_status stream_synchronize(dc_stream s);
dc_status stream_wait_event(dc_stream s, dc_event e);
dc_status event_create(int32_t device, dc_event* out);
dc_status event_destroy(dc_event e);
dc_status event_record(dc_event e, dc_stream s);
dc_status event_synchronize(dc_event e);
dc_status event_query(dc_event e, int32_t* done);
dc_status event_elapsed_ms(dc_event start, dc_event end, double* ms);
dc_status compile(int32_t device, const char* source, const char* options, void** binary, uint64_t* size);
void free_binary(void* binary);
dc_status module_load(int32_t device, const void* binary, uint64_t size, dc_module* out);
dc_status module_unload(dc_module m);
dc_status kernel_get(dc_module m, const char* name, dc_kernel* out);
dc_status launch(dc_stream s, dc_kernel k, const dc_launch_config* config, const dc_kernel_arg* args,
                 uint32_t nargs);

template <class F>
dc_status guarded(F&& body) {
  clear_error();
  @try {
    @autoreleasepool {
      try {
        return body();
      } catch (const std::bad_alloc&) {
        return fail(DC_ERROR_OUT_OF_MEMORY, "out of host memory");
      } catch (const std::exception& e) {
        return fail(DC_ERROR_INTERNAL, std::string("internal error: ") + e.what());
      }
    }
  } @catch (NSException* e) {
    return fail(DC_ERROR_INTERNAL, std::string("Objective-C exception: ") + [[e name] UTF8String] + ": " +
                                       [[e reason] UTF8String]);
  }
}

}  // namespace dcmtl

#endif

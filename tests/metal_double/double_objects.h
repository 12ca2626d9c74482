// The Metal test double's own object classes and the helpers its two halves share: metal_double.mm
// (buffers, libraries, pipelines, events, binary archives, the device) and double_commands.mm (command
// queues, command buffers and their encoders, which run the work). Internal to the double: the plugin
// sees only Metal/Metal.h.
#pragma once

#import <Metal/Metal.h>

#include <dlfcn.h>
#include <time.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "msl_runner.h"

namespace dcdouble {

inline double now_seconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

inline NSError* make_error(NSString* domain, NSInteger code, const std::string& text) {
  NSDictionary* info = [NSDictionary dictionaryWithObject:[NSString stringWithUTF8String:text.c_str()]
                                                   forKey:NSLocalizedDescriptionKey];
  return [NSError errorWithDomain:domain code:code userInfo:info];
}

// A loaded kernel object; shared by the library, its functions and pipeline states.
struct LoadedObject {
  void* handle = nullptr;
  ~LoadedObject() {
    if (handle) dlclose(handle);
  }
};

// Threadgroup memory per threadgroup, as on Apple GPUs (variables and arguments together).
const NSUInteger kThreadgroupMemory = 32768;

// One command of a command buffer; returns "" or the reason the command buffer fails.
typedef std::function<std::string()> Command;

// Blit copies executed (dc_metal_double_count("blit_copies"), defined in metal_double.mm).
extern std::atomic<long> g_blit_copies;

}  // namespace dcdouble


@interface DCDoubleObject : NSObject
@end

@interface DCDoubleBuffer : DCDoubleObject <MTLBuffer> {
  id<MTLDevice> device_;  // not retained: the device outlives its buffers in the double
  void* data_;
  NSUInteger length_;
  MTLStorageMode mode_;
}
- (instancetype)initWithDevice:(id<MTLDevice>)device length:(NSUInteger)length mode:(MTLStorageMode)mode;
- (char*)storage;  // the bytes, for the double's own "GPU" (blits and kernels) in every storage mode
@end

// The bytes of any of the double's buffers, whatever its storage mode.
inline char* storage_of(id<MTLBuffer> b) { return [(DCDoubleBuffer*)b storage]; }

@interface DCDoubleFunction : DCDoubleObject <MTLFunction> {
 @public
  NSString* name_;
  std::shared_ptr<dcdouble::LoadedObject> object_;
  DcMslRunFn run_;
  mslrun::KernelDecl decl_;
  std::string key_;  // what binary archives file it under: library source hash + name
}
@end

@interface DCDoubleLibrary : DCDoubleObject <MTLLibrary> {
 @public
  std::shared_ptr<dcdouble::LoadedObject> object_;
  std::vector<mslrun::KernelDecl> kernels_;
  std::string source_hash_;
}
@end

@interface DCDoublePipeline : DCDoubleObject <MTLComputePipelineState> {
 @public
  DCDoubleFunction* function_;
  NSUInteger max_threads_;
}
@end

@interface DCDoubleSharedEvent : DCDoubleObject <MTLSharedEvent> {
 @public
  std::mutex m_;
  std::condition_variable cv_;
  uint64_t value_;
}
- (void)waitForValue:(uint64_t)value;
@end

@class DCDoubleQueue;

@interface DCDoubleCommandBuffer : DCDoubleObject <MTLCommandBuffer> {
 @public
  DCDoubleQueue* queue_;  // retained
  std::vector<dcdouble::Command> commands_;
  std::vector<MTLCommandBufferHandler> handlers_;  // Block_copy'd
  std::mutex m_;
  std::condition_variable cv_;
  MTLCommandBufferStatus status_;
  bool finished_;  // completed handlers have run
  NSError* error_;
  double start_, end_;
}
- (void)execute;
@end

@interface DCDoubleQueue : DCDoubleObject <MTLCommandQueue> {
 @public
  id<MTLDevice> device_;
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<DCDoubleCommandBuffer*> pending_;  // retained
  bool stop_;
  std::thread worker_;
}
- (void)enqueue:(DCDoubleCommandBuffer*)cb;
- (instancetype)initWithDevice:(id<MTLDevice>)device;
@end

@interface DCDoubleComputeEncoder : DCDoubleObject <MTLComputeCommandEncoder> {
 @public
  DCDoubleCommandBuffer* buffer_;  // not retained: encoders live inside their command buffer's use
  DCDoublePipeline* pipeline_;     // retained
  std::vector<id<MTLBuffer>> buffers_;                // retained
  std::vector<NSUInteger> offsets_;
  std::vector<std::shared_ptr<std::vector<uint64_t>>> bytes_;
  std::vector<NSUInteger> threadgroup_lengths_;  // setThreadgroupMemoryLength:atIndex:
  NSUInteger threadgroup_limit_;
  bool ended_;
}
@end

@interface DCDoubleBlitEncoder : DCDoubleObject <MTLBlitCommandEncoder> {
 @public
  DCDoubleCommandBuffer* buffer_;
}
@end

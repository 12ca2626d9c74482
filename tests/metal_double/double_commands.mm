// The Metal test double's command queues, command buffers and encoders: each queue has a worker
// thread that runs its committed command buffers in order, so work is really asynchronous, with
// status, error, GPU times and completed handlers; compute encoders run the kernel through the MSL
// runner (tests/support/metal_shim), blit encoders copy and fill bytes.
#include <string.h>

#include "double_objects.h"

using namespace dcdouble;

namespace {

// Set on a queue's worker thread when the queue is destroyed from that very thread.
thread_local bool t_queue_destroyed = false;

// Keeps Objective-C objects alive for as long as a queued command needs them.
struct Retained {
  std::vector<id> objects;
  Retained() = default;
  Retained(const Retained&) = delete;
  Retained& operator=(const Retained&) = delete;
  void add(id o) {
    if (o != nil) objects.push_back([o retain]);
  }
  ~Retained() {
    for (id o : objects) [o release];
  }
};

}  // namespace

@implementation DCDoubleComputeEncoder
- (void)dealloc {
  [pipeline_ release];
  for (id b : buffers_) [b release];
  [super dealloc];
}
- (void)slot:(NSUInteger)index {
  if (buffers_.size() <= index) {
    buffers_.resize(index + 1, nil);
    offsets_.resize(index + 1, 0);
    bytes_.resize(index + 1);
  }
}
- (void)setComputePipelineState:(id<MTLComputePipelineState>)state {
  [pipeline_ release];
  pipeline_ = (DCDoublePipeline*)[state retain];
}
- (void)setBuffer:(id<MTLBuffer>)buffer offset:(NSUInteger)offset atIndex:(NSUInteger)index {
  [self slot:index];
  [buffers_[index] release];
  buffers_[index] = [buffer retain];
  offsets_[index] = offset;
  bytes_[index].reset();
}
- (void)setBytes:(const void*)bytes length:(NSUInteger)length atIndex:(NSUInteger)index {
  [self slot:index];
  [buffers_[index] release];
  buffers_[index] = nil;
  // copied now, as Metal does; uint64_t storage keeps every scalar type aligned
  auto copy = std::make_shared<std::vector<uint64_t>>((length + 7) / 8 + 1, 0);
  memcpy(copy->data(), bytes, length);
  bytes_[index] = copy;
}
- (void)setThreadgroupMemoryLength:(NSUInteger)length atIndex:(NSUInteger)index {
  if (index >= DC_MSL_MAX_THREADGROUP_ARGS) {
    [NSException raise:NSInvalidArgumentException format:@"threadgroup memory index %lu is out of range",
                 (unsigned long)index];
  }
  if (threadgroup_lengths_.size() <= index) threadgroup_lengths_.resize(index + 1, 0);
  threadgroup_lengths_[index] = length;
}
- (void)dispatchGrid:(MTLSize)grid group:(MTLSize)group {
  if (pipeline_ == nil) {
    [NSException raise:NSInternalInconsistencyException format:@"dispatch without a compute pipeline state"];
  }
  auto keep = std::make_shared<Retained>();
  keep->add(pipeline_);
  std::vector<void*> base;
  std::vector<std::shared_ptr<std::vector<uint64_t>>> bytes = bytes_;
  int slots = pipeline_->function_->decl_.buffer_slots;
  std::string missing;
  for (int i = 0; i < slots; ++i) {
    size_t k = static_cast<size_t>(i);
    if (k < buffers_.size() && buffers_[k] != nil) {
      keep->add(buffers_[k]);
      base.push_back(storage_of(buffers_[k]) + offsets_[k]);
    } else if (k < bytes_.size() && bytes_[k]) {
      base.push_back(bytes_[k]->data());
    } else {
      base.push_back(nullptr);
      if (missing.empty()) missing = "buffer(" + std::to_string(i) + ") of the kernel is not bound";
    }
  }
  DcMslRunFn run = pipeline_->function_->run_;
  bool threaded = pipeline_->function_->decl_.threaded;
  NSUInteger limit = pipeline_->max_threads_;
  unsigned long long g[3] = {grid.width, grid.height, grid.depth};
  unsigned long long l[3] = {group.width, group.height, group.depth};
  std::vector<NSUInteger> lengths = threadgroup_lengths_;
  unsigned long long tg_limit = threadgroup_limit_;
  buffer_->commands_.push_back([=]() mutable -> std::string {
    (void)keep;
    (void)bytes;
    if (!missing.empty()) return missing;
    if (l[0] * l[1] * l[2] > limit || l[0] == 0 || l[1] == 0 || l[2] == 0) {
      return "threads per threadgroup " + std::to_string(l[0]) + "x" + std::to_string(l[1]) + "x" +
             std::to_string(l[2]) + " exceeds the pipeline's limit of " + std::to_string(limit);
    }
    if (g[0] == 0 || g[1] == 0 || g[2] == 0) return "";
    char err[512] = {0};
    std::vector<void*> args = base;
    DcMslLaunch launch;
    memset(&launch, 0, sizeof launch);
    launch.args = args.data();
    for (int d = 0; d < 3; ++d) launch.grid[d] = g[d], launch.group[d] = l[d];
    for (size_t i = 0; i < lengths.size(); ++i) launch.tg_len[i] = lengths[i];
    launch.tg_limit = tg_limit;
    launch.threaded = threaded ? 1 : 0;
    launch.host = dc_msl_host();
    launch.err = err;
    launch.errlen = sizeof err;
    if (run(&launch) != 0) return std::string(err);
    return "";
  });
}
- (void)dispatchThreads:(MTLSize)threadsPerGrid threadsPerThreadgroup:(MTLSize)threadsPerThreadgroup {
  [self dispatchGrid:threadsPerGrid group:threadsPerThreadgroup];
}
- (void)dispatchThreadgroups:(MTLSize)groups threadsPerThreadgroup:(MTLSize)group {
  [self dispatchGrid:MTLSizeMake(groups.width * group.width, groups.height * group.height,
                                 groups.depth * group.depth)
               group:group];
}
- (void)endEncoding { ended_ = true; }
@end

@implementation DCDoubleBlitEncoder
- (void)copyFromBuffer:(id<MTLBuffer>)src
          sourceOffset:(NSUInteger)srcOffset
              toBuffer:(id<MTLBuffer>)dst
     destinationOffset:(NSUInteger)dstOffset
                  size:(NSUInteger)size {
  auto keep = std::make_shared<Retained>();
  keep->add(src);
  keep->add(dst);
  buffer_->commands_.push_back([=]() -> std::string {
    if (srcOffset + size > [src length] || dstOffset + size > [dst length]) return "blit copy out of range";
    memmove(storage_of(dst) + dstOffset, storage_of(src) + srcOffset, size);
    g_blit_copies.fetch_add(1);
    (void)keep;
    return "";
  });
}
- (void)fillBuffer:(id<MTLBuffer>)buffer range:(NSRange)range value:(uint8_t)value {
  auto keep = std::make_shared<Retained>();
  keep->add(buffer);
  buffer_->commands_.push_back([=]() -> std::string {
    if (range.location + range.length > [buffer length]) return "blit fill out of range";
    memset(storage_of(buffer) + range.location, value, range.length);
    (void)keep;
    return "";
  });
}
- (void)endEncoding {}
@end

@implementation DCDoubleCommandBuffer
- (void)dealloc {
  for (MTLCommandBufferHandler h : handlers_) Block_release(h);
  [error_ release];
  [queue_ release];
  [super dealloc];
}
- (MTLCommandBufferStatus)status {
  std::lock_guard<std::mutex> lock(m_);
  return status_;
}
- (NSError*)error {
  std::lock_guard<std::mutex> lock(m_);
  return error_;
}
- (double)GPUStartTime { return start_; }
- (double)GPUEndTime { return end_; }
- (id<MTLComputeCommandEncoder>)computeCommandEncoder {
  DCDoubleComputeEncoder* e = [[[DCDoubleComputeEncoder alloc] init] autorelease];
  e->buffer_ = self;
  e->threadgroup_limit_ = kThreadgroupMemory;
  return e;
}
- (id<MTLBlitCommandEncoder>)blitCommandEncoder {
  DCDoubleBlitEncoder* e = [[[DCDoubleBlitEncoder alloc] init] autorelease];
  e->buffer_ = self;
  return e;
}
- (void)encodeSignalEvent:(id<MTLEvent>)event value:(uint64_t)value {
  DCDoubleSharedEvent* ev = (DCDoubleSharedEvent*)event;
  auto keep = std::make_shared<Retained>();
  keep->add(ev);
  commands_.push_back([=]() -> std::string {
    [ev setSignaledValue:value];
    (void)keep;
    return "";
  });
}
- (void)encodeWaitForEvent:(id<MTLEvent>)event value:(uint64_t)value {
  DCDoubleSharedEvent* ev = (DCDoubleSharedEvent*)event;
  auto keep = std::make_shared<Retained>();
  keep->add(ev);
  commands_.push_back([=]() -> std::string {
    [ev waitForValue:value];
    (void)keep;
    return "";
  });
}
- (void)addCompletedHandler:(MTLCommandBufferHandler)block {
  MTLCommandBufferHandler copy = Block_copy(block);
  // A stack block that comes back uncopied means gnustep-base's blocks runtime won the symbol
  // search over libBlocksRuntime (see build.sh): fail loudly instead of calling a dead frame.
  const int kBlockIsGlobal = 1 << 28, kBlockOnHeap = 1 << 24;  // Block_private.h's flag bits
  if (copy == block && (reinterpret_cast<const int*>(block)[2] & (kBlockIsGlobal | kBlockOnHeap)) == 0) {
    [NSException raise:NSInternalInconsistencyException
                format:@"Metal test double: Block_copy did not copy a stack block (blocks runtime mismatch)"];
  }
  handlers_.push_back(copy);
}
- (void)commit {
  {
    std::lock_guard<std::mutex> lock(m_);
    if (status_ != MTLCommandBufferStatusNotEnqueued) {
      [NSException raise:NSInternalInconsistencyException format:@"commit of a command buffer committed before"];
    }
    status_ = MTLCommandBufferStatusCommitted;
  }
  [queue_ enqueue:self];
}
- (void)waitUntilCompleted {
  std::unique_lock<std::mutex> lock(m_);
  cv_.wait(lock, [&] { return finished_; });
}
// Runs on the queue's worker thread.
- (void)execute {
  start_ = now_seconds();
  std::string failure;
  for (Command& c : commands_) {
    // after a failure Metal skips the rest of the buffer; waits and signals still run so that
    // other queues waiting on this one's events are not stranded
    std::string r = failure.empty() ? c() : std::string();
    if (failure.empty()) failure = r;
  }
  commands_.clear();
  end_ = now_seconds();
  {
    std::lock_guard<std::mutex> lock(m_);
    if (!failure.empty()) {
      error_ = [make_error(MTLCommandBufferErrorDomain, MTLCommandBufferErrorInternal,
                           "Metal test double: " + failure) retain];
    }
  }
  {
    std::lock_guard<std::mutex> lock(m_);
    status_ = failure.empty() ? MTLCommandBufferStatusCompleted : MTLCommandBufferStatusError;
  }
  // handlers see the final status and run before waiters wake
  for (MTLCommandBufferHandler h : handlers_) h(self);
  {
    std::lock_guard<std::mutex> lock(m_);
    finished_ = true;
  }
  cv_.notify_all();
}
@end

@implementation DCDoubleQueue
- (instancetype)initWithDevice:(id<MTLDevice>)device {
  if ((self = [super init])) {
    device_ = device;
    stop_ = false;
    worker_ = std::thread([self] { [self workerMain]; });
  }
  return self;
}
- (void)workerMain {
  for (;;) {
    DCDoubleCommandBuffer* cb = nil;
    {
      std::unique_lock<std::mutex> lock(m_);
      cv_.wait(lock, [&] { return stop_ || !pending_.empty(); });
      if (pending_.empty()) return;
      cb = pending_.front();
      pending_.pop_front();
    }
    @autoreleasepool {
      [cb execute];
      [cb release];  // may release the queue's last reference: dealloc then runs on this thread
    }
    if (t_queue_destroyed) return;  // self is gone: touch nothing
  }
}
- (void)enqueue:(DCDoubleCommandBuffer*)cb {
  {
    std::lock_guard<std::mutex> lock(m_);
    pending_.push_back([cb retain]);
  }
  cv_.notify_all();
}
- (void)dealloc {
  {
    std::lock_guard<std::mutex> lock(m_);
    stop_ = true;
  }
  cv_.notify_all();
  if (worker_.joinable()) {
    if (worker_.get_id() == std::this_thread::get_id()) {
      t_queue_destroyed = true;
      worker_.detach();
    } else {
      worker_.join();
    }
  }
  [super dealloc];
}
- (id<MTLCommandBuffer>)commandBuffer {
  DCDoubleCommandBuffer* cb = [[[DCDoubleCommandBuffer alloc] init] autorelease];
  cb->queue_ = [self retain];
  cb->status_ = MTLCommandBufferStatusNotEnqueued;
  return cb;
}
@end

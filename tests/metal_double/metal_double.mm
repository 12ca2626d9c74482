// The Metal test double: Apple's Metal objects (Metal/Metal.h here) implemented on GNUstep
// Foundation with manual retain/release, executing on the CPU.
//
//  - buffers are host memory (shared storage: `contents` is always valid);
//  - newLibraryWithSource compiles the MSL with the host compiler through the MSL runner
//    (tests/support/metal_shim/msl_runner.cpp, shared with the emitter tests' runner.py); a compile error gives MTLLibraryErrorDomain/CompileFailure with the
//    compiler's log as the description, as Metal does;
//  - each command queue has a worker thread that runs its committed command buffers in order,
//    so work is really asynchronous, with status, error, GPU times and completed handlers
//    (double_commands.mm; the classes both files share are declared in double_objects.h);
//  - shared events are values with waiters: encodeWaitForEvent blocks the queue's worker.
//
//  - private storage is modelled honestly: such a buffer's `contents` is NULL, so only blits and
//    kernels reach its bytes (as on Apple GPUs);
//  - binary archives hold the keys (library source hash, function name) of the pipelines added
//    to them, serialized to a small text file; a pipeline built from a descriptor whose archives
//    hold its key counts as an archive hit.
//
// Environment: DC_METAL_DOUBLE_MAX_THREADS (threads per threadgroup, default 256),
// DC_METAL_DOUBLE_NONUNIFORM=0 (a family without dispatchThreads), DC_METAL_DOUBLE_MEMORY (bytes),
// DC_METAL_DOUBLE_UNIFIED=0 (a discrete GPU: hasUnifiedMemory is NO),
// DC_METAL_DOUBLE_ARCHIVES=0 (an OS before binary archives: the device lacks the selector).
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <fstream>
#include <set>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "double_objects.h"

using namespace dcdouble;

NSString* const MTLLibraryErrorDomain = @"MTLLibraryErrorDomain";
NSString* const MTLCommandBufferErrorDomain = @"MTLCommandBufferErrorDomain";
NSString* const MTLBinaryArchiveDomain = @"MTLBinaryArchiveDomain";

namespace {

uint64_t env_u64(const char* name, uint64_t fallback) {
  const char* v = getenv(name);
  return v && *v ? strtoull(v, nullptr, 10) : fallback;
}

// FNV-1a: a content hash that is the same in every process (archives outlive the process).
std::string stable_hash(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  char out[17];
  snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h));
  return out;
}

}  // namespace

// ---------------------------------------------------------------- live-object count
// Every object of the double counts itself, so tests can check that the plugin's manual
// retain/release is balanced: after shutdown only the device singleton is left.
static std::atomic<long> g_live_objects{0};

extern "C" __attribute__((visibility("default"))) long dc_metal_double_live_objects(void) {
  return g_live_objects.load();
}

// ---------------------------------------------------------------- counters for tests
// What the plugin asked the "GPU" to do, so tests can tell a zero-copy path from a staged one and
// an archive hit from a compile: blit copies executed, pipelines served from binary archives (or
// not), live private-storage buffers.
std::atomic<long> dcdouble::g_blit_copies{0};
static std::atomic<long> g_archive_hits{0}, g_archive_misses{0};
// Live buffers by the start of their storage, with their storage mode.
static std::mutex g_buffers_mutex;
static std::map<const void*, int> g_buffer_storage;

extern "C" __attribute__((visibility("default"))) long dc_metal_double_count(const char* what) {
  std::string w = what ? what : "";
  if (w == "blit_copies") return g_blit_copies.load();
  if (w == "archive_hits") return g_archive_hits.load();
  if (w == "archive_misses") return g_archive_misses.load();
  if (w == "private_buffers") {
    std::lock_guard<std::mutex> lock(g_buffers_mutex);
    long n = 0;
    for (const auto& kv : g_buffer_storage) n += kv.second == MTLStorageModePrivate ? 1 : 0;
    return n;
  }
  return -1;
}

// Whether an address is the start of a live buffer's storage (its storage mode), or not (-1): a
// shared buffer's `contents`, which a test compares with a numpy view's address.
extern "C" __attribute__((visibility("default"))) int dc_metal_double_buffer_storage(const void* address) {
  std::lock_guard<std::mutex> lock(g_buffers_mutex);
  auto it = g_buffer_storage.find(address);
  return it == g_buffer_storage.end() ? -1 : it->second;
}


@implementation DCDoubleObject
+ (id)allocWithZone:(NSZone*)zone {
  id o = [super allocWithZone:zone];
  if (o != nil) g_live_objects.fetch_add(1);
  return o;
}
- (void)dealloc {
  g_live_objects.fetch_sub(1);
  [super dealloc];
}
@end

// ---------------------------------------------------------------- buffers

@implementation DCDoubleBuffer
- (instancetype)initWithDevice:(id<MTLDevice>)device length:(NSUInteger)length mode:(MTLStorageMode)mode {
  if ((self = [super init])) {
    device_ = device;
    length_ = length;
    mode_ = mode;
    if (posix_memalign(&data_, 256, length ? length : 1) != 0) {
      data_ = nullptr;
      [self release];
      return nil;
    }
    memset(data_, 0, length ? length : 1);
    std::lock_guard<std::mutex> lock(g_buffers_mutex);
    g_buffer_storage[data_] = static_cast<int>(mode);
  }
  return self;
}
- (void)dealloc {
  if (data_ != nullptr) {
    std::lock_guard<std::mutex> lock(g_buffers_mutex);
    g_buffer_storage.erase(data_);
  }
  free(data_);
  [super dealloc];
}
- (id<MTLDevice>)device { return device_; }
- (NSUInteger)length { return length_; }
- (MTLStorageMode)storageMode { return mode_; }
// The CPU cannot address private storage on Apple GPUs: NULL, so a plugin that reads or writes
// it by hand crashes here as it would there.
- (void*)contents { return mode_ == MTLStorageModePrivate ? nullptr : data_; }
- (char*)storage { return static_cast<char*>(data_); }
@end

// ---------------------------------------------------------------- functions and libraries

@implementation DCDoubleFunction
- (void)dealloc {
  [name_ release];
  object_.reset();
  [super dealloc];
}
- (NSString*)name { return name_; }
@end


@implementation DCDoubleLibrary
- (void)dealloc {
  object_.reset();
  [super dealloc];
}
- (NSArray<NSString*>*)functionNames {
  NSMutableArray* names = [NSMutableArray array];
  for (const auto& k : kernels_) [names addObject:[NSString stringWithUTF8String:k.name.c_str()]];
  return names;
}
- (id<MTLFunction>)newFunctionWithName:(NSString*)functionName {
  std::string want = [functionName UTF8String];
  for (const auto& k : kernels_) {
    if (k.name != want) continue;
    void* sym = dlsym(object_->handle, k.symbol.c_str());
    if (sym == nullptr) return nil;
    DCDoubleFunction* f = [[DCDoubleFunction alloc] init];
    f->name_ = [functionName copy];
    f->object_ = object_;
    f->run_ = reinterpret_cast<DcMslRunFn>(sym);
    f->decl_ = k;
    f->key_ = source_hash_ + "/" + want;
    return f;
  }
  return nil;
}
@end


@implementation DCDoublePipeline
- (void)dealloc {
  [function_ release];
  [super dealloc];
}
- (NSUInteger)maxTotalThreadsPerThreadgroup { return max_threads_; }
- (NSUInteger)threadExecutionWidth { return 32; }
- (NSUInteger)staticThreadgroupMemoryLength { return 0; }
@end

@implementation MTLCompileOptions
- (BOOL)fastMathEnabled { return fastMathEnabled_; }
- (void)setFastMathEnabled:(BOOL)v { fastMathEnabled_ = v; }
- (MTLLanguageVersion)languageVersion { return languageVersion_; }
- (void)setLanguageVersion:(MTLLanguageVersion)v { languageVersion_ = v; }
- (instancetype)init {
  if ((self = [super init])) {
    fastMathEnabled_ = YES;  // Metal's default, which the plugin turns off
    languageVersion_ = MTLLanguageVersion3_0;
  }
  return self;
}
- (id)copyWithZone:(NSZone*)zone {
  MTLCompileOptions* c = [[MTLCompileOptions allocWithZone:zone] init];
  c.fastMathEnabled = fastMathEnabled_;
  c.languageVersion = languageVersion_;
  return c;
}
@end

// ---------------------------------------------------------------- events

@implementation DCDoubleSharedEvent
- (uint64_t)signaledValue {
  std::lock_guard<std::mutex> lock(m_);
  return value_;
}
- (void)setSignaledValue:(uint64_t)v {
  {
    std::lock_guard<std::mutex> lock(m_);
    value_ = v;
  }
  cv_.notify_all();
}
- (void)waitForValue:(uint64_t)value {
  std::unique_lock<std::mutex> lock(m_);
  cv_.wait(lock, [&] { return value_ >= value; });
}
@end

// ---------------------------------------------------------------- binary archives
static const char kArchiveHeader[] = "dotcompute-metal-double-archive 1";

@implementation MTLBinaryArchiveDescriptor
+ (id)allocWithZone:(NSZone*)zone {  // counted like the double's own objects (live-object check)
  id o = [super allocWithZone:zone];
  if (o != nil) g_live_objects.fetch_add(1);
  return o;
}
- (NSURL*)url { return url_; }
- (void)setUrl:(NSURL*)url {
  NSURL* copy = [url copy];
  [url_ release];
  url_ = copy;
}
- (id)copyWithZone:(NSZone*)zone {
  MTLBinaryArchiveDescriptor* c = [[MTLBinaryArchiveDescriptor allocWithZone:zone] init];
  c.url = url_;
  return c;
}
- (void)dealloc {
  [url_ release];
  g_live_objects.fetch_sub(1);
  [super dealloc];
}
@end

@implementation MTLComputePipelineDescriptor
+ (id)allocWithZone:(NSZone*)zone {  // counted like the double's own objects (live-object check)
  id o = [super allocWithZone:zone];
  if (o != nil) g_live_objects.fetch_add(1);
  return o;
}
- (id<MTLFunction>)computeFunction { return computeFunction_; }
- (void)setComputeFunction:(id<MTLFunction>)f {
  [f retain];
  [computeFunction_ release];
  computeFunction_ = f;
}
- (NSArray<id<MTLBinaryArchive>>*)binaryArchives { return binaryArchives_; }
- (void)setBinaryArchives:(NSArray<id<MTLBinaryArchive>>*)archives {
  NSArray* copy = [archives copy];
  [binaryArchives_ release];
  binaryArchives_ = copy;
}
- (id)copyWithZone:(NSZone*)zone {
  MTLComputePipelineDescriptor* c = [[MTLComputePipelineDescriptor allocWithZone:zone] init];
  c.computeFunction = computeFunction_;
  c.binaryArchives = binaryArchives_;
  return c;
}
- (void)dealloc {
  [computeFunction_ release];
  [binaryArchives_ release];
  g_live_objects.fetch_sub(1);
  [super dealloc];
}
@end

@interface DCDoubleBinaryArchive : DCDoubleObject <MTLBinaryArchive> {
 @public
  id<MTLDevice> device_;  // not retained, as for buffers
  std::mutex m_;
  std::set<std::string> keys_;
}
- (BOOL)holds:(const std::string&)key;
@end

static DCDoubleFunction* double_function(id<MTLFunction> f) {
  return [(id)f isKindOfClass:[DCDoubleFunction class]] ? (DCDoubleFunction*)f : nil;
}

@implementation DCDoubleBinaryArchive
- (id<MTLDevice>)device { return device_; }
- (BOOL)holds:(const std::string&)key {
  std::lock_guard<std::mutex> lock(m_);
  return keys_.count(key) != 0 ? YES : NO;
}
- (BOOL)addComputePipelineFunctionsWithDescriptor:(MTLComputePipelineDescriptor*)descriptor error:(NSError**)error {
  DCDoubleFunction* f = double_function([descriptor computeFunction]);
  if (f == nil) {
    if (error) *error = make_error(MTLBinaryArchiveDomain, MTLBinaryArchiveErrorUnexpectedElement,
                                   "the descriptor has no compute function of this device");
    return NO;
  }
  std::lock_guard<std::mutex> lock(m_);
  keys_.insert(f->key_);
  return YES;
}
- (BOOL)serializeToURL:(NSURL*)url error:(NSError**)error {
  std::string path = url != nil && [url isFileURL] ? [[url path] UTF8String] : "";
  std::ofstream out;
  if (!path.empty()) out.open(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    if (error) *error = make_error(MTLBinaryArchiveDomain, MTLBinaryArchiveErrorInvalidFile,
                                   "cannot write the archive to '" + path + "'");
    return NO;
  }
  std::lock_guard<std::mutex> lock(m_);
  out << kArchiveHeader << "\n";
  for (const std::string& k : keys_) out << k << "\n";
  out.close();
  if (!out) {
    if (error) *error = make_error(MTLBinaryArchiveDomain, MTLBinaryArchiveErrorInvalidFile,
                                   "writing the archive to '" + path + "' failed");
    return NO;
  }
  return YES;
}
@end

// ---------------------------------------------------------------- the device
@interface DCDoubleDevice : DCDoubleObject <MTLDevice> {
  NSUInteger max_threads_;
  bool nonuniform_;
  uint64_t memory_;
  bool unified_;
  bool archives_;
}
@end

@implementation DCDoubleDevice
- (instancetype)init {
  if ((self = [super init])) {
    max_threads_ = env_u64("DC_METAL_DOUBLE_MAX_THREADS", 256);
    nonuniform_ = env_u64("DC_METAL_DOUBLE_NONUNIFORM", 1) != 0;
    memory_ = env_u64("DC_METAL_DOUBLE_MEMORY", 8ull << 30);
    unified_ = env_u64("DC_METAL_DOUBLE_UNIFIED", 1) != 0;
    archives_ = env_u64("DC_METAL_DOUBLE_ARCHIVES", 1) != 0;
  }
  return self;
}
// An OS without binary archives (before macOS 11) has no such selector on its devices.
- (BOOL)respondsToSelector:(SEL)selector {
  if (!archives_ && sel_isEqual(selector, @selector(newBinaryArchiveWithDescriptor:error:))) return NO;
  return [super respondsToSelector:selector];
}
- (NSString*)name { return @"Metal test double (CPU, GNUstep)"; }
- (uint64_t)registryID { return 0x0d0cull; }
- (MTLSize)maxThreadsPerThreadgroup { return MTLSizeMake(max_threads_, max_threads_, max_threads_); }
- (NSUInteger)maxThreadgroupMemoryLength { return kThreadgroupMemory; }
- (uint64_t)recommendedMaxWorkingSetSize { return memory_; }
- (NSUInteger)maxBufferLength { return memory_ / 2; }
- (BOOL)hasUnifiedMemory { return unified_ ? YES : NO; }
- (BOOL)supportsFamily:(MTLGPUFamily)family {
  // non-uniform threadgroups (dispatchThreads) arrived with Apple4 and Mac2
  if (family == MTLGPUFamilyApple4 || family == MTLGPUFamilyApple5 || family == MTLGPUFamilyApple6 ||
      family == MTLGPUFamilyApple7 || family == MTLGPUFamilyMac2)
    return nonuniform_ ? YES : NO;
  return family == MTLGPUFamilyApple1 || family == MTLGPUFamilyApple2 || family == MTLGPUFamilyApple3 ||
         family == MTLGPUFamilyCommon1 || family == MTLGPUFamilyCommon2 || family == MTLGPUFamilyCommon3;
}
- (id<MTLBuffer>)newBufferWithLength:(NSUInteger)length options:(MTLResourceOptions)options {
  MTLStorageMode mode = static_cast<MTLStorageMode>((options >> 4) & 0xf);
  if (mode != MTLStorageModeShared && mode != MTLStorageModePrivate) return nil;  // no managed/memoryless
  if (length > [self maxBufferLength]) return nil;
  return [[DCDoubleBuffer alloc] initWithDevice:self length:length mode:mode];
}
- (id<MTLBuffer>)newBufferWithBytes:(const void*)pointer length:(NSUInteger)length
                            options:(MTLResourceOptions)options {
  // The CPU cannot fill private storage: Metal refuses this (its validation layer aborts).
  if (static_cast<MTLStorageMode>((options >> 4) & 0xf) == MTLStorageModePrivate) {
    [NSException raise:NSInvalidArgumentException format:@"newBufferWithBytes: with private storage"];
  }
  id<MTLBuffer> b = [self newBufferWithLength:length options:options];
  if (b != nil && length > 0) memcpy([b contents], pointer, length);
  return b;
}
- (id<MTLCommandQueue>)newCommandQueue {
  return [[DCDoubleQueue alloc] initWithDevice:self];
}
- (id<MTLLibrary>)newLibraryWithSource:(NSString*)source
                               options:(MTLCompileOptions*)options
                                 error:(NSError**)error {
  // Fast math (Metal's default, also for nil options) is what the host compiler can show: the
  // runner compiles with contraction and reassociation allowed (see mslrun::compile_msl), so a
  // fast-math library's a*b+c rounds once where a safe one rounds twice, as on a GPU.
  const bool fast = options == nil || [options fastMathEnabled];
  std::vector<mslrun::KernelDecl> kernels;
  std::string log;
  std::string so = mslrun::compile_msl([source UTF8String], &kernels, &log, fast);
  void* handle = so.empty() ? nullptr : dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    if (!so.empty()) log = std::string("cannot load the compiled library: ") + dlerror();
    if (error) *error = make_error(MTLLibraryErrorDomain, MTLLibraryErrorCompileFailure, log);
    return nil;
  }
  DCDoubleLibrary* lib = [[DCDoubleLibrary alloc] init];
  lib->object_ = std::make_shared<LoadedObject>();
  lib->object_->handle = handle;
  lib->kernels_ = kernels;
  lib->source_hash_ = stable_hash([source UTF8String]);
  return lib;
}
- (id<MTLComputePipelineState>)newComputePipelineStateWithFunction:(id<MTLFunction>)function
                                                             error:(NSError**)error {
  if (double_function(function) == nil) {
    if (error) *error = make_error(MTLLibraryErrorDomain, MTLLibraryErrorInternal, "not a test-double function");
    return nil;
  }
  DCDoublePipeline* p = [[DCDoublePipeline alloc] init];
  p->function_ = (DCDoubleFunction*)[function retain];
  p->max_threads_ = max_threads_;
  return p;
}
- (id<MTLComputePipelineState>)newComputePipelineStateWithDescriptor:(MTLComputePipelineDescriptor*)descriptor
                                                             options:(MTLPipelineOption)options
                                                          reflection:(MTLAutoreleasedComputePipelineReflection*)reflection
                                                               error:(NSError**)error {
  if (reflection) *reflection = nil;  // the double has no reflection
  DCDoubleFunction* f = double_function([descriptor computeFunction]);
  if (f == nil) {
    if (error) *error = make_error(MTLLibraryErrorDomain, MTLLibraryErrorInternal, "not a test-double function");
    return nil;
  }
  NSArray* archives = [descriptor binaryArchives];
  if ([archives count] > 0) {
    bool found = false;
    for (id a in archives) {
      if ([a isKindOfClass:[DCDoubleBinaryArchive class]] && [(DCDoubleBinaryArchive*)a holds:f->key_]) found = true;
    }
    (found ? g_archive_hits : g_archive_misses).fetch_add(1);
    if (!found && (options & MTLPipelineOptionFailOnBinaryArchiveMiss) != 0) {
      if (error) *error = make_error(MTLBinaryArchiveDomain, MTLBinaryArchiveErrorInternalError,
                                     "the pipeline is not in the binary archives");
      return nil;
    }
  }
  return [self newComputePipelineStateWithFunction:f error:error];
}
- (id<MTLBinaryArchive>)newBinaryArchiveWithDescriptor:(MTLBinaryArchiveDescriptor*)descriptor
                                                 error:(NSError**)error {
  DCDoubleBinaryArchive* a = [[DCDoubleBinaryArchive alloc] init];
  a->device_ = self;
  NSURL* url = [descriptor url];
  if (url == nil) return a;
  std::string path = [url isFileURL] ? [[url path] UTF8String] : "";
  std::ifstream in(path, std::ios::binary);
  std::string line;
  if (path.empty() || !in || !std::getline(in, line) || line != kArchiveHeader) {
    [a release];
    if (error) *error = make_error(MTLBinaryArchiveDomain, MTLBinaryArchiveErrorInvalidFile,
                                   "'" + path + "' is not a binary archive");
    return nil;
  }
  while (std::getline(in, line)) {
    if (!line.empty()) a->keys_.insert(line);
  }
  return a;
}
- (id<MTLSharedEvent>)newSharedEvent {
  DCDoubleSharedEvent* e = [[DCDoubleSharedEvent alloc] init];
  e->value_ = 0;
  return e;
}
@end

extern "C" NSArray<id<MTLDevice>>* MTLCopyAllDevices(void) {
  id<MTLDevice> d = MTLCreateSystemDefaultDevice();
  NSArray* all = [[NSArray alloc] initWithObjects:d, nil];
  [d release];
  return all;
}

extern "C" id<MTLDevice> MTLCreateSystemDefaultDevice(void) {
  // one device per process, as on a Mac with one GPU
  static DCDoubleDevice* device = [[DCDoubleDevice alloc] init];
  return [device retain];
}

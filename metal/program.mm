// Compilation: MSL → MTLLibrary with newLibraryWithSource (explicit language version, fast
// math off), the compiler's log on failure, and pipeline states cached per (source, kernel).
//
// The blob the core caches on disk is the MSL itself behind a small header: Metal compiles
// source at run time and caches the result in the OS's own shader cache, so keeping the
// source is what makes module_load work from the core's disk cache.
#include <cstdlib>
#include <cstring>
#include <functional>

#include "state.h"

namespace dcmtl {

namespace {

const char kMagic[8] = {'D', 'C', 'M', 'T', 'L', 'S', '1', '\0'};

Owned<MTLCompileOptions*> compile_options() {
  Owned<MTLCompileOptions*> o = Owned<MTLCompileOptions*>::adopt([[MTLCompileOptions alloc] init]);
  [o.get() setLanguageVersion:MTLLanguageVersion3_0];
  // IEEE results, as the other backends give (fastMathEnabled is the pre-macOS 15 spelling).
  [o.get() setFastMathEnabled:NO];
  return o;
}

std::string source_key(const std::string& source) {
  // An in-process key (hash and length of the text): a collision would need two different
  // sources with equal 64-bit hashes and lengths in one process.
  return std::to_string(std::hash<std::string>{}(source)) + ":" + std::to_string(source.size());
}

dc_status new_library(Device* dev, const std::string& source, Owned<id<MTLLibrary>>* out) {
  NSError* error = nil;
  NSString* text = [NSString stringWithUTF8String:source.c_str()];
  if (text == nil) return fail(DC_ERROR_COMPILATION, "the MSL source is not valid UTF-8");
  Owned<MTLCompileOptions*> options = compile_options();
  id<MTLLibrary> lib = [dev->device.get() newLibraryWithSource:text options:options.get() error:&error];
  if (lib == nil) {
    std::string log = error != nil ? std::string([[error localizedDescription] UTF8String]) : "no log";
    return fail(DC_ERROR_COMPILATION, log);
  }
  *out = Owned<id<MTLLibrary>>::adopt(lib);
  return DC_OK;
}

}  // namespace

dc_status compile(int32_t device, const char* source, const char* options, void** binary, uint64_t* size) {
  return guarded([&] {
    Device* dev = nullptr;
    if (dc_status st = get_device(device, &dev); st != DC_OK) return st;
    if (source == nullptr || binary == nullptr || size == nullptr) {
      return fail(DC_ERROR_INVALID_ARGUMENT, "compile: null argument");
    }
    (void)options;  // the language version and math mode are fixed (compile_options)
    std::string src(source);
    Owned<id<MTLLibrary>> lib;
    if (dc_status st = new_library(dev, src, &lib); st != DC_OK) return st;  // errors surface here, with the log
    uint64_t n = sizeof kMagic + src.size();
    char* blob = static_cast<char*>(std::malloc(n));
    if (blob == nullptr) return fail(DC_ERROR_OUT_OF_MEMORY, "compile: out of host memory");
    std::memcpy(blob, kMagic, sizeof kMagic);
    std::memcpy(blob + sizeof kMagic, src.data(), src.size());
    *binary = blob;
    *size = n;
    return DC_OK;
  });
}

void free_binary(void* binary) { std::free(binary); }

dc_status module_load(int32_t device, const void* binary, uint64_t size, dc_module* out) {
  return guarded([&] {
    Device* dev = nullptr;
    if (dc_status st = get_device(device, &dev); st != DC_OK) return st;
    if (binary == nullptr || out == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "module_load: null argument");
    if (size < sizeof kMagic || std::memcmp(binary, kMagic, sizeof kMagic) != 0) {
      return fail(DC_ERROR_INVALID_ARGUMENT, "module_load: not a Metal plugin binary (bad header)");
    }
    std::string src(static_cast<const char*>(binary) + sizeof kMagic, size - sizeof kMagic);
    auto m = std::make_unique<Module>();
    m->device = dev;
    m->key = source_key(src);
    if (dc_status st = new_library(dev, src, &m->library); st != DC_OK) return st;
    *out = reinterpret_cast<dc_module>(m.release());
    return DC_OK;
  });
}

dc_status module_unload(dc_module m) {
  return guarded([&] {
    delete reinterpret_cast<Module*>(m);
    return DC_OK;
  });
}

dc_status kernel_get(dc_module mod, const char* name, dc_kernel* out) {
  return guarded([&] {
    Module* m = reinterpret_cast<Module*>(mod);
    if (m == nullptr || name == nullptr || out == nullptr) {
      return fail(DC_ERROR_INVALID_ARGUMENT, "kernel_get: null argument");
    }
    Device* dev = m->device;
    std::string key = m->key + "/" + name;
    auto k = std::make_unique<Kernel>();
    k->module = m;
    k->name = name;
    {
      std::lock_guard<std::mutex> lock(dev->pipelines_mutex);
      auto it = dev->pipelines.find(key);
      if (it != dev->pipelines.end()) {
        ++dev->pipeline_hits;
        k->pipeline = it->second;
      }
    }
    if (k->pipeline) {
      std::lock_guard<std::mutex> lock(m->kernels_mutex);
      *out = reinterpret_cast<dc_kernel>(k.get());
      m->kernels.push_back(std::move(k));
      return DC_OK;
    }
    Owned<id<MTLFunction>> fn = Owned<id<MTLFunction>>::adopt(
        [m->library.get() newFunctionWithName:[NSString stringWithUTF8String:name]]);
    if (!fn) {
      std::string names;
      for (NSString* n in [m->library.get() functionNames]) {
        names += (names.empty() ? "" : ", ") + std::string([n UTF8String]);
      }
      return fail(DC_ERROR_INVALID_ARGUMENT,
                  std::string("no kernel function '") + name + "' in the Metal library (it has: " + names + ")");
    }
    NSError* error = nil;
    id<MTLComputePipelineState> ps = [dev->device.get() newComputePipelineStateWithFunction:fn.get() error:&error];
    if (ps == nil) {
      return fail(DC_ERROR_COMPILATION, "Metal pipeline state for " + std::string(name) + ": " + describe(error));
    }
    k->pipeline = Owned<id<MTLComputePipelineState>>::adopt(ps);
    {
      std::lock_guard<std::mutex> lock(dev->pipelines_mutex);
      ++dev->pipeline_misses;
      dev->pipelines.emplace(key, k->pipeline);
    }
    std::lock_guard<std::mutex> lock(m->kernels_mutex);
    *out = reinterpret_cast<dc_kernel>(k.get());
    m->kernels.push_back(std::move(k));
    return DC_OK;
  });
}

}  // namespace dcmtl

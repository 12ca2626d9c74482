// Compilation: MSL → MTLLibrary with newLibraryWithSource (explicit language version, fast
// math off unless the options say -ffast-math), the compiler's log on failure, and pipeline
// states cached per (source, math mode, kernel).
//
// The blob the core caches on disk is the MSL itself behind a small header (and the math mode):
// Metal compiles source at run time and caches the result in the OS's own shader cache, so
// keeping the source is what makes module_load work from the core's disk cache.
//
// Binary archives (macOS 11+ / iOS 14+, where the device has newBinaryArchiveWithDescriptor:):
// the GPU code of every pipeline state a device builds is added to one MTLBinaryArchive per
// device and OS build, kept in the core's kernel-cache folder (set_cache_dir: already checked
// to be this user's and private), so a later process builds its pipelines from the archive
// instead of compiling them for the GPU again. A pipeline is first asked of the archive alone
// (MTLPipelineOptionFailOnBinaryArchiveMiss), which counts hits and misses honestly; a miss
// compiles, adds the pipeline and rewrites the archive (a temporary file renamed into place, so
// concurrent processes never read half an archive; the last writer wins, which only costs the
// loser's additions). An archive file that is not this user's, is writable by others or cannot
// be read is not loaded and is replaced. The file is bounded by kMaxArchiveBytes.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>

#include "state.h"

// Binary archives need macOS 11 / iOS 14: every use sits in a function marked with that
// availability and is reached only behind DC_ARCHIVES_AVAILABLE(), so the plugin still loads
// on older systems (where the double's knob DC_METAL_DOUBLE_ARCHIVES=0 is the stand-in).
#ifdef DC_METAL_TEST_DOUBLE
#define DC_ARCHIVES_AVAILABLE() true
#define DC_API_ARCHIVES
#else
#define DC_ARCHIVES_AVAILABLE() @available(macOS 11.0, iOS 14.0, *)
#define DC_API_ARCHIVES API_AVAILABLE(macos(11.0), ios(14.0))
#endif

namespace dcmtl {

namespace {

constexpr off_t kMaxArchiveBytes = off_t(256) << 20;

// A 64-bit FNV-1a hash in hex: the same in every process (it names a file that outlives us).
std::string stable_hash(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h));
  return out;
}

// Why the archive file at `path` must not be loaded ("" when it may; "absent" when there is none):
// the OS runs the GPU code in it, so it must be this user's regular file that no one else can write.
std::string untrusted_file(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return errno == ENOENT ? "absent" : std::strerror(errno);
  if (!S_ISREG(st.st_mode)) return "it is not a regular file";
  if (st.st_uid != ::geteuid()) return "it is owned by uid " + std::to_string(st.st_uid);
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) return "other users can write it";
  // never written this large (save_archive stops at the bound): a huge file is not ours to read
  if (st.st_size > kMaxArchiveBytes) return std::to_string(st.st_size) + " bytes, over the limit of " +
                                            std::to_string(kMaxArchiveBytes);
  return "";
}

DC_API_ARCHIVES void open_archive_locked(Device* dev) {
  id<MTLDevice> d = dev->device.get();
  const std::string dir = cache_dir();
  if (dir.empty()) {
    dev->archive_note = "no kernel-cache folder: pipelines are not archived";
    return;
  }
  if (![d respondsToSelector:@selector(newBinaryArchiveWithDescriptor:error:)]) {
    dev->archive_note = "this system has no Metal binary archives";
    return;
  }
  // One archive per device model and OS build: its GPU code is for exactly that pair.
  const std::string ident = std::string([[d name] UTF8String]) + "|" + dev->family + "|" +
                            [[[NSProcessInfo processInfo] operatingSystemVersionString] UTF8String];
  const std::string path = dir + "/metal-pipelines-" + stable_hash(ident) + ".mtlarchive";
  Owned<MTLBinaryArchiveDescriptor*> desc =
      Owned<MTLBinaryArchiveDescriptor*>::adopt([[MTLBinaryArchiveDescriptor alloc] init]);
  const std::string why = untrusted_file(path);
  if (why.empty()) {
    [desc.get() setUrl:[NSURL fileURLWithPath:[NSString stringWithUTF8String:path.c_str()]]];
  } else if (why != "absent") {
    dev->archive_note = "not loaded (" + why + "): " + path + " is replaced";
  }
  NSError* error = nil;
  id archive = [d newBinaryArchiveWithDescriptor:desc.get() error:&error];
  if (archive == nil && [desc.get() url] != nil) {
    // Unreadable (truncated, another OS's format): start afresh; the next save replaces it.
    dev->archive_note = "discarded an unreadable archive (" + describe(error) + ")";
    [desc.get() setUrl:nil];
    error = nil;
    archive = [d newBinaryArchiveWithDescriptor:desc.get() error:&error];
  }
  if (archive == nil) {
    dev->archive_note = "cannot create a binary archive: " + describe(error);
    return;
  }
  dev->archive = Owned<id>::adopt(archive);
  dev->archive_path = path;
}

// Writes the archive next to its file and renames it into place. Called with archive_mutex held.
DC_API_ARCHIVES void save_archive(Device* dev) {
  static std::atomic<unsigned> counter{0};
  const std::string dir = dev->archive_path.substr(0, dev->archive_path.rfind('/'));
  // ".tmp." files are the kernel cache's temporaries: it removes ones a crashed writer left.
  const std::string tmp = dir + "/.tmp.metal-archive." + std::to_string(::getpid()) + "." +
                          std::to_string(counter.fetch_add(1));
  NSError* error = nil;
  NSURL* url = [NSURL fileURLWithPath:[NSString stringWithUTF8String:tmp.c_str()]];
  if (![dev->archive.get() serializeToURL:url error:&error]) {
    ::unlink(tmp.c_str());
    dev->archive_note = "saving the binary archive failed: " + describe(error);
    return;
  }
  struct stat st;
  if (::stat(tmp.c_str(), &st) == 0 && st.st_size > kMaxArchiveBytes) {
    ::unlink(tmp.c_str());
    dev->archive_full = true;
    dev->archive_note = "the binary archive reached " + std::to_string(kMaxArchiveBytes >> 20) +
                        " MiB: new pipelines are not added";
    return;
  }
  if (::rename(tmp.c_str(), dev->archive_path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    dev->archive_note = std::string("saving the binary archive failed: ") + std::strerror(errno);
  }
}

// The pipeline state of `fn`, from the device's binary archive when it holds it; a new one is
// added to the archive. Falls back to a plain build where there is no archive.
DC_API_ARCHIVES void archived_pipeline(Device* dev, id<MTLFunction> fn, Owned<id<MTLComputePipelineState>>* out,
                                       NSError** error) {
  id<MTLDevice> d = dev->device.get();
  // The archive is read and changed under archive_mutex (Metal does not promise that an archive
  // can be read while another thread adds to it); the GPU compile of a miss runs without it.
  std::unique_lock<std::mutex> lock(dev->archive_mutex);
  Owned<id> archive = dev->archive;
  if (!archive) {
    lock.unlock();
    *out = Owned<id<MTLComputePipelineState>>::adopt([d newComputePipelineStateWithFunction:fn error:error]);
    return;
  }
  Owned<MTLComputePipelineDescriptor*> desc =
      Owned<MTLComputePipelineDescriptor*>::adopt([[MTLComputePipelineDescriptor alloc] init]);
  [desc.get() setComputeFunction:fn];
  [desc.get() setBinaryArchives:[NSArray arrayWithObject:archive.get()]];
  NSError* miss = nil;
  *out = Owned<id<MTLComputePipelineState>>::adopt([d newComputePipelineStateWithDescriptor:desc.get()
                                                                                    options:MTLPipelineOptionFailOnBinaryArchiveMiss
                                                                                 reflection:nullptr
                                                                                      error:&miss]);
  if (*out) {
    ++dev->archive_hits;
    return;
  }
  ++dev->archive_misses;
  lock.unlock();
  // Not in the archive: compile it (without asking the archive a second time), then add it.
  *out = Owned<id<MTLComputePipelineState>>::adopt([d newComputePipelineStateWithFunction:fn error:error]);
  if (!*out) return;
  lock.lock();
  // set_cache_dir may have reopened the archive meanwhile: add to the one there is now.
  if (!dev->archive || dev->archive.get() != archive.get() || dev->archive_full) return;
  NSError* add_error = nil;
  if ([archive.get() addComputePipelineFunctionsWithDescriptor:desc.get() error:&add_error]) {
    save_archive(dev);
  } else {
    dev->archive_note = "adding a pipeline to the binary archive failed: " + describe(add_error);
  }
}

// Blob: magic (8) | math mode (1 byte: 0 safe, 1 fast) | MSL source.
const char kMagic[8] = {'D', 'C', 'M', 'T', 'L', 'S', '2', '\0'};
constexpr size_t kHeader = sizeof kMagic + 1;

// The options the Python package passes (lang/compile_options.py): "-ffast-math" for
// @dc.kernel(fastmath=True), "-fno-fast-math" or nothing for IEEE. MTLCompileOptions has no
// contraction-only mode (its modes are safe, relaxed and fast), so contract=True compiles safe:
// contraction is a permission, and safe is numpy's result. Anything else is refused by name rather
// than ignored (a raw kernel's "-O3" or "-cl-fast-relaxed-math" would otherwise look accepted).
dc_status parse_options(const char* options, bool* fast) {
  *fast = false;
  if (options == nullptr) return DC_OK;
  std::string text(options);
  size_t pos = 0;
  while (pos < text.size()) {
    size_t start = text.find_first_not_of(" \t\n", pos);
    if (start == std::string::npos) break;
    size_t end = text.find_first_of(" \t\n", start);
    std::string word = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (word == "-ffast-math") {
      *fast = true;
    } else if (word == "-fno-fast-math") {
      *fast = false;
    } else {
      return fail(DC_ERROR_INVALID_ARGUMENT, "compile: the Metal plugin takes the options -ffast-math and "
                                             "-fno-fast-math only, not '" + word + "'");
    }
    pos = end == std::string::npos ? text.size() : end;
  }
  return DC_OK;
}

Owned<MTLCompileOptions*> compile_options(bool fast) {
  Owned<MTLCompileOptions*> o = Owned<MTLCompileOptions*>::adopt([[MTLCompileOptions alloc] init]);
  [o.get() setLanguageVersion:MTLLanguageVersion3_0];
  // IEEE results by default, as the other backends give (Metal's own default is fast math;
  // fastMathEnabled is the pre-macOS 15 spelling of mathMode safe/fast).
  [o.get() setFastMathEnabled:fast ? YES : NO];
  return o;
}

std::string source_key(const std::string& source, bool fast) {
  // An in-process key (hash and length of the text, and the math mode): a collision would need
  // two different sources with equal 64-bit hashes and lengths in one process.
  return std::to_string(std::hash<std::string>{}(source)) + ":" + std::to_string(source.size()) +
         (fast ? ":fast" : ":safe");
}

dc_status new_library(Device* dev, const std::string& source, bool fast, Owned<id<MTLLibrary>>* out) {
  NSError* error = nil;
  NSString* text = [NSString stringWithUTF8String:source.c_str()];
  if (text == nil) return fail(DC_ERROR_COMPILATION, "the MSL source is not valid UTF-8");
  Owned<MTLCompileOptions*> options = compile_options(fast);
  id<MTLLibrary> lib = [dev->device.get() newLibraryWithSource:text options:options.get() error:&error];
  if (lib == nil) {
    std::string log = error != nil ? std::string([[error localizedDescription] UTF8String]) : "no log";
    return fail(DC_ERROR_COMPILATION, log);
  }
  *out = Owned<id<MTLLibrary>>::adopt(lib);
  return DC_OK;
}

}  // namespace

void open_archive(Device* dev) {
  std::lock_guard<std::mutex> lock(dev->archive_mutex);
  dev->archive = Owned<id>();
  dev->archive_path.clear();
  dev->archive_note.clear();
  dev->archive_full = false;
  if (DC_ARCHIVES_AVAILABLE()) {
    open_archive_locked(dev);
  } else {
    dev->archive_note = "this system has no Metal binary archives (they need macOS 11 or iOS 14)";
  }
}

dc_status compile(int32_t device, const char* source, const char* options, void** binary, uint64_t* size) {
  return guarded([&] {
    Device* dev = nullptr;
    if (dc_status st = get_device(device, &dev); st != DC_OK) return st;
    if (source == nullptr || binary == nullptr || size == nullptr) {
      return fail(DC_ERROR_INVALID_ARGUMENT, "compile: null argument");
    }
    bool fast = false;
    if (dc_status st = parse_options(options, &fast); st != DC_OK) return st;
    std::string src(source);
    Owned<id<MTLLibrary>> lib;
    if (dc_status st = new_library(dev, src, fast, &lib); st != DC_OK) return st;  // errors surface here, with the log
    uint64_t n = kHeader + src.size();
    char* blob = static_cast<char*>(std::malloc(n));
    if (blob == nullptr) return fail(DC_ERROR_OUT_OF_MEMORY, "compile: out of host memory");
    std::memcpy(blob, kMagic, sizeof kMagic);
    blob[sizeof kMagic] = fast ? 1 : 0;
    std::memcpy(blob + kHeader, src.data(), src.size());
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
    const char* bytes = static_cast<const char*>(binary);
    if (size < kHeader || std::memcmp(bytes, kMagic, sizeof kMagic) != 0 || (bytes[sizeof kMagic] & ~1) != 0) {
      return fail(DC_ERROR_INVALID_ARGUMENT, "module_load: not a Metal plugin binary (bad header)");
    }
    const bool fast = bytes[sizeof kMagic] == 1;
    std::string src(bytes + kHeader, size - kHeader);
    auto m = std::make_unique<Module>();
    m->device = dev;
    m->key = source_key(src, fast);
    if (dc_status st = new_library(dev, src, fast, &m->library); st != DC_OK) return st;
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
    bool built = false;
    if (DC_ARCHIVES_AVAILABLE()) {
      archived_pipeline(dev, fn.get(), &k->pipeline, &error);
      built = true;
    }
    if (!built) {
      k->pipeline = Owned<id<MTLComputePipelineState>>::adopt(
          [dev->device.get() newComputePipelineStateWithFunction:fn.get() error:&error]);
    }
    if (!k->pipeline) {
      return fail(DC_ERROR_COMPILATION, "Metal pipeline state for " + std::string(name) + ": " + describe(error));
    }
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

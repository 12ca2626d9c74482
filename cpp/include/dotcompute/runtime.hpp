// The process-wide entry point: loads backend plugins, lists devices, hands
// out accelerators and owns the kernel cache.
//
// Plugins are found through `<name>.plugin.json` manifests in, in order:
//   1. the plugin dir: DOTCOMPUTE_PLUGIN_DIR, else `<dir of libdotcompute>/plugins`
//      (the Python package sets DOTCOMPUTE_PLUGIN_DIR to <package>/plugins);
//   2. each folder of DOTCOMPUTE_PLUGIN_PATH (':'-separated);
//   3. Runtime::load_plugin() calls (Python entry points end up here).
// A later manifest with an already known name is reported as shadowed.
// DOTCOMPUTE_BACKENDS (a comma list) restricts which backends are enabled.
// Every failure to load a plugin becomes an unavailable BackendStatus with the
// reason; backends() and devices() never throw because of a plugin.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "dotcompute/export.hpp"

namespace dotcompute {

class Accelerator;
class BackendPlugin;
class KernelCache;

// The library's version ("0.1.0").
DOTCOMPUTE_API const char* version() noexcept;

struct BackendStatus {
  std::string name;
  std::string version;   // the plugin's version ("" when it never loaded)
  std::string library;   // the shared library's path
  std::string manifest;  // the manifest's path ("" for a library loaded directly)
  bool available = false;
  std::string reason;  // why not, when !available
  uint32_t abi_version = 0;
  int32_t device_count = 0;
};

struct DOTCOMPUTE_API RuntimeOptions {
  // Folders searched for manifests, in order (the plugin dir first).
  std::vector<std::string> plugin_dirs;
  // Backends to enable; nullopt: all.
  std::optional<std::vector<std::string>> enabled_backends;
  // Kernel cache folder; "" keeps the cache in memory only.
  std::string cache_dir;
  uint64_t cache_max_bytes = 512ull << 20;

  // From the environment variables (see the file comment).
  static RuntimeOptions from_environment();
};

class DOTCOMPUTE_API Runtime {
 public:
  // The process-wide runtime, created from the environment on first use and
  // never destroyed (plugins may run threads that must outlive static destructors).
  static Runtime& instance();

  explicit Runtime(RuntimeOptions options);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // Every plugin found, available or not, in discovery order.
  std::vector<BackendStatus> backends();
  // Loads a plugin from a manifest file, a folder of manifests (all of them;
  // the status of the first, by file name, is returned) or a plugin library
  // (.so). Failures are returned as an unavailable status; only a path that
  // does not exist (or a folder without manifests) throws PluginError. A name
  // that is already loaded is reported as shadowed; an unavailable or unloaded
  // one is replaced (that is how a plugin is reloaded).
  BackendStatus load_plugin(const std::string& path);
  // Unloads a plugin (shutdown + dlclose); it stays listed as unavailable
  // ("unloaded") until loaded again with load_plugin(). Throws PluginError when
  // accelerators, buffers, streams, events or kernels of it are still alive,
  // or when no plugin has that name.
  void unload_plugin(const std::string& name);

  // Every device of every available backend.
  std::vector<std::shared_ptr<Accelerator>> devices();
  // "cpu", "cpu:0", "opencl", "cuda:1", "auto" (cuda, metal, an OpenCL GPU,
  // then cpu). Throws BackendUnavailableError with the reason, or
  // InvalidArgumentError for a malformed spec.
  std::shared_ptr<Accelerator> accelerator(const std::string& spec);

  // The address of `symbol` exported by the loaded plugin `backend` (e.g. the
  // CUDA plugin's "dotcompute_cuda_ext_entry"), or nullptr when the backend is
  // not loaded or has no such symbol. Lets higher layers reach a plugin's
  // optional extension table without the core knowing it. The address stays
  // valid until the plugin is unloaded; hold one of its accelerators to keep it.
  void* plugin_symbol(const std::string& backend, const std::string& symbol);

  KernelCache& cache() noexcept { return *cache_; }
  const RuntimeOptions& options() const noexcept { return options_; }

 private:
  struct Entry;
  void discover_locked();
  BackendStatus load_manifest_locked(const std::string& manifest_path);
  BackendStatus load_library_locked(const std::string& name, const std::string& library,
                                    const std::string& manifest, const std::vector<std::string>& requires_);
  bool enabled(const std::string& name) const;
  Entry* find_locked(const std::string& name);
  std::shared_ptr<Accelerator> device_locked(Entry& e, int32_t index);

  RuntimeOptions options_;
  std::shared_ptr<KernelCache> cache_;
  std::mutex mutex_;
  bool discovered_ = false;
  bool explicit_ = false;  // inside load_plugin(): a failed or unloaded entry may be replaced
  std::vector<std::unique_ptr<Entry>> entries_;
};

}  // namespace dotcompute

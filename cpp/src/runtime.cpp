#include "dotcompute/runtime.hpp"

#include <dirent.h>
#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>

#include "backend_plugin.hpp"
#include "dotcompute/accelerator.hpp"
#include "dotcompute/errors.hpp"
#include "dotcompute/kernel_cache.hpp"
#include "manifest.hpp"
#include "string_util.hpp"

#ifndef DOTCOMPUTE_VERSION_STRING
#define DOTCOMPUTE_VERSION_STRING "0.0.0"
#endif

namespace dotcompute {

using detail::ends_with;

const char* version() noexcept { return DOTCOMPUTE_VERSION_STRING; }

namespace {

constexpr const char* kManifestSuffix = ".plugin.json";

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(sep, start);
    if (end == std::string::npos) end = s.size();
    std::string part = s.substr(start, end - start);
    size_t b = part.find_first_not_of(" \t");
    size_t e = part.find_last_not_of(" \t");
    if (b != std::string::npos) out.push_back(part.substr(b, e - b + 1));
    start = end + 1;
  }
  return out;
}

// A setting's value without surrounding whitespace, as the Python package reads every setting
// (dotcompute/config.py, _get): both sides must see the same value.
std::string env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return std::string();
  const std::string s(v);
  const char* space = " \t\n\r\f\v";
  const size_t b = s.find_first_not_of(space);
  return b == std::string::npos ? std::string() : s.substr(b, s.find_last_not_of(space) - b + 1);
}

// The folder libdotcompute.so was loaded from.
std::string library_dir() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&library_dir), &info) == 0 || info.dli_fname == nullptr) return ".";
  std::string path = info.dli_fname;
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

std::vector<std::string> manifests_in(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (ends_with(name, kManifestSuffix)) out.push_back(dir + "/" + name);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());  // a stable order, whatever the file system's
  return out;
}

std::string stem(const std::string& manifest_path) {
  size_t slash = manifest_path.rfind('/');
  std::string name = slash == std::string::npos ? manifest_path : manifest_path.substr(slash + 1);
  if (ends_with(name, kManifestSuffix)) name.resize(name.size() - std::char_traits<char>::length(kManifestSuffix));
  return name;
}

}  // namespace

RuntimeOptions RuntimeOptions::from_environment() {
  RuntimeOptions o;
  std::string dir = env("DOTCOMPUTE_PLUGIN_DIR");
  o.plugin_dirs.push_back(dir.empty() ? library_dir() + "/plugins" : dir);
  for (auto& p : split(env("DOTCOMPUTE_PLUGIN_PATH"), ':')) o.plugin_dirs.push_back(p);
  std::string enabled = env("DOTCOMPUTE_BACKENDS");
  if (!enabled.empty()) o.enabled_backends = split(enabled, ',');
  o.cache_dir = KernelCache::default_dir();
  // DOTCOMPUTE_CACHE_MAX_BYTES: a whole number of bytes, surrounding whitespace allowed (env()
  // strips it, as config.cache_max_bytes does); anything else keeps the default (the Python
  // package warns about it, see dotcompute/runtime/native.py).
  const std::string max_bytes = env("DOTCOMPUTE_CACHE_MAX_BYTES");
  if (!max_bytes.empty() && max_bytes.find_first_not_of("0123456789") == std::string::npos && max_bytes.size() < 20)
    o.cache_max_bytes = std::stoull(max_bytes);
  return o;
}

struct Runtime::Entry {
  BackendStatus status;
  std::vector<std::string> requires_;
  std::shared_ptr<BackendPlugin> plugin;  // null unless available
  std::vector<std::shared_ptr<Accelerator>> devices;  // made on first use
  bool shadowed = false;
};

Runtime& Runtime::instance() {
  // Deliberately never destroyed: plugins' worker threads and objects held by
  // Python may outlive static destructors.
  static Runtime* runtime = new Runtime(RuntimeOptions::from_environment());
  return *runtime;
}

Runtime::Runtime(RuntimeOptions options)
    : options_(std::move(options)), cache_(std::make_shared<KernelCache>(options_.cache_dir, options_.cache_max_bytes)) {}

Runtime::~Runtime() {
  // Devices before their plugins (each device also holds its plugin).
  for (auto& e : entries_) e->devices.clear();
  entries_.clear();
}

bool Runtime::enabled(const std::string& name) const {
  // The CPU is the floor every program can count on ("cpu:0 always present"):
  // DOTCOMPUTE_BACKENDS narrows the other backends only.
  if (!options_.enabled_backends || name == "cpu") return true;
  const auto& list = *options_.enabled_backends;
  return std::find(list.begin(), list.end(), name) != list.end();
}

Runtime::Entry* Runtime::find_locked(const std::string& name) {
  for (auto& e : entries_) {
    if (!e->shadowed && e->status.name == name) return e.get();
  }
  return nullptr;
}

void Runtime::discover_locked() {
  if (discovered_) return;
  discovered_ = true;
  for (const auto& dir : options_.plugin_dirs) {
    for (const auto& m : manifests_in(dir)) load_manifest_locked(m);
  }
}

BackendStatus Runtime::load_library_locked(const std::string& name, const std::string& library,
                                           const std::string& manifest, const std::vector<std::string>& requires_) {
  auto entry = std::make_unique<Entry>();
  entry->status.name = name;
  entry->status.library = library;
  entry->status.manifest = manifest;
  entry->requires_ = requires_;

  Entry* existing = name.empty() ? nullptr : find_locked(name);
  if (existing != nullptr && (existing->plugin || !explicit_)) {
    entry->shadowed = true;
    entry->status.reason = "shadowed by " + (existing->status.manifest.empty() ? existing->status.library
                                                                                : existing->status.manifest);
    entries_.push_back(std::move(entry));
    return entries_.back()->status;
  }
  if (!name.empty() && !enabled(name)) {
    entry->status.reason = "disabled by DOTCOMPUTE_BACKENDS";
  } else {
    std::string reason;
    entry->plugin = BackendPlugin::load(library, requires_, name, &reason);
    if (entry->plugin) {
      // Plugins that keep caches of their own (Metal's binary archives) keep them in the checked
      // kernel-cache folder; a failure there only costs that plugin its cache.
      const dc_backend* api = entry->plugin->api();
      if (DC_BACKEND_HAS(api, set_cache_dir)) (void)api->set_cache_dir(cache_->dir().c_str());
      entry->status.name = entry->plugin->name();
      entry->status.version = entry->plugin->version();
      entry->status.abi_version = entry->plugin->api()->abi_version;
      entry->status.device_count = entry->plugin->device_count();
      entry->status.available = true;
      entry->devices.resize(static_cast<size_t>(entry->plugin->device_count()));
    } else {
      entry->status.reason = reason;
    }
  }
  if (name.empty() && entry->plugin) {
    // A library named directly: its name is only known now.
    const std::string& real = entry->plugin->name();
    Entry* dup = find_locked(real);
    if (!enabled(real)) {
      entry->plugin.reset();
      entry->devices.clear();
      entry->status.available = false;
      entry->status.reason = "disabled by DOTCOMPUTE_BACKENDS";
    } else if (dup != nullptr && dup->plugin) {
      entry->plugin.reset();
      entry->devices.clear();
      entry->status.available = false;
      entry->shadowed = true;
      entry->status.reason = "shadowed by " + (dup->status.manifest.empty() ? dup->status.library : dup->status.manifest);
    } else if (dup != nullptr) {
      dup->shadowed = true;  // the failed or unloaded one gives way
    }
  }
  if (existing != nullptr && !entry->shadowed) {
    // Reloading, or replacing an unavailable plugin: keep the list position.
    for (auto& e : entries_) {
      if (e.get() == existing) {
        e = std::move(entry);
        return e->status;
      }
    }
  }
  entries_.push_back(std::move(entry));
  return entries_.back()->status;
}

BackendStatus Runtime::load_manifest_locked(const std::string& manifest_path) {
  detail::PluginManifest m;
  try {
    m = detail::read_manifest(manifest_path);
  } catch (const std::exception& e) {
    auto entry = std::make_unique<Entry>();
    entry->status.name = stem(manifest_path);
    entry->status.manifest = manifest_path;
    entry->status.reason = e.what();
    entry->shadowed = find_locked(entry->status.name) != nullptr;
    entries_.push_back(std::move(entry));
    return entries_.back()->status;
  }
  if (m.abi_version != 0 && (m.abi_version < DC_BACKEND_ABI_MIN_SUPPORTED || m.abi_version > DC_BACKEND_ABI_VERSION)) {
    auto entry = std::make_unique<Entry>();
    entry->status.name = m.name;
    entry->status.version = m.version;
    entry->status.library = m.library;
    entry->status.manifest = manifest_path;
    entry->status.abi_version = m.abi_version;
    entry->status.reason = "manifest declares backend ABI version " + std::to_string(m.abi_version) +
                           ", this dotcompute supports versions " + std::to_string(DC_BACKEND_ABI_MIN_SUPPORTED) +
                           " to " + std::to_string(DC_BACKEND_ABI_VERSION);
    entry->shadowed = find_locked(m.name) != nullptr;
    entries_.push_back(std::move(entry));
    return entries_.back()->status;
  }
  BackendStatus s = load_library_locked(m.name, m.library, manifest_path, m.requires_);
  return s;
}

std::vector<BackendStatus> Runtime::backends() {
  std::lock_guard<std::mutex> lock(mutex_);
  discover_locked();
  std::vector<BackendStatus> out;
  out.reserve(entries_.size());
  for (const auto& e : entries_) out.push_back(e->status);
  return out;
}

BackendStatus Runtime::load_plugin(const std::string& path) {
  std::lock_guard<std::mutex> lock(mutex_);
  discover_locked();
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) throw PluginError("plugin path does not exist: " + path);
  explicit_ = true;
  struct Reset {
    bool& flag;
    ~Reset() { flag = false; }
  } reset{explicit_};
  if (S_ISDIR(st.st_mode)) {
    auto list = manifests_in(path);
    if (list.empty()) throw PluginError("no *.plugin.json manifest in " + path);
    BackendStatus first = load_manifest_locked(list.front());
    for (size_t i = 1; i < list.size(); ++i) load_manifest_locked(list[i]);
    return first;
  }
  if (ends_with(path, ".json")) return load_manifest_locked(path);
  return load_library_locked("", path, "", {});
}

void Runtime::unload_plugin(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  discover_locked();
  Entry* e = find_locked(name);
  if (e == nullptr || !e->plugin) throw PluginError("no loaded plugin named '" + name + "'");
  for (const auto& d : e->devices) {
    if (d && d.use_count() > 1) {
      throw PluginError("cannot unload plugin '" + name + "': " + d->id() +
                        " is still in use (accelerators, buffers, streams, events or kernels of it are alive)");
    }
  }
  e->devices.clear();
  e->plugin.reset();
  e->status.available = false;
  e->status.device_count = 0;
  e->status.reason = "unloaded";
}

std::shared_ptr<Accelerator> Runtime::device_locked(Entry& e, int32_t index) {
  auto& slot = e.devices[static_cast<size_t>(index)];
  if (!slot) slot = Accelerator::create(e.plugin, index, cache_);
  return slot;
}

std::vector<std::shared_ptr<Accelerator>> Runtime::devices() {
  std::lock_guard<std::mutex> lock(mutex_);
  discover_locked();
  std::vector<std::shared_ptr<Accelerator>> out;
  for (auto& e : entries_) {
    if (!e->plugin) continue;
    for (int32_t i = 0; i < static_cast<int32_t>(e->devices.size()); ++i) {
      try {
        out.push_back(device_locked(*e, i));
      } catch (const std::exception& ex) {
        // A device that cannot be opened is left out; the backend says why.
        e->status.reason = "device " + std::to_string(i) + ": " + ex.what();
      }
    }
  }
  return out;
}

void* Runtime::plugin_symbol(const std::string& backend, const std::string& symbol) {
  std::lock_guard<std::mutex> lock(mutex_);
  discover_locked();
  Entry* e = find_locked(backend);
  if (e == nullptr || !e->plugin) return nullptr;
  return e->plugin->symbol(symbol);
}

std::shared_ptr<Accelerator> Runtime::accelerator(const std::string& spec) {
  std::lock_guard<std::mutex> lock(mutex_);
  discover_locked();
  if (spec == "auto" || spec.empty()) {
    auto first_of = [&](const char* name, bool gpu_only) -> std::shared_ptr<Accelerator> {
      Entry* e = find_locked(name);
      if (e == nullptr || !e->plugin) return nullptr;
      for (int32_t i = 0; i < static_cast<int32_t>(e->devices.size()); ++i) {
        try {
          auto d = device_locked(*e, i);
          if (!gpu_only || d->type() == "gpu") return d;
        } catch (const std::exception&) {
        }
      }
      return nullptr;
    };
    if (auto d = first_of("cuda", false)) return d;
    if (auto d = first_of("metal", false)) return d;
    if (auto d = first_of("opencl", true)) return d;
    if (auto d = first_of("cpu", false)) return d;
    std::string why;
    for (const auto& e : entries_) why += (why.empty() ? "" : "; ") + e->status.name + ": " + e->status.reason;
    if (why.empty()) why = "no backend plugins found";
    throw BackendUnavailableError("no accelerator is available (" + why + ")", why);
  }
  std::string name = spec;
  int32_t index = 0;
  size_t colon = spec.find(':');
  if (colon != std::string::npos) {
    name = spec.substr(0, colon);
    std::string idx = spec.substr(colon + 1);
    if (idx.empty() || idx.size() > 6 || idx.find_first_not_of("0123456789") != std::string::npos) {
      throw InvalidArgumentError("malformed accelerator spec '" + spec +
                                     "' (expected 'auto', a backend name or 'backend:index')",
                                 "spec");
    }
    index = std::stoi(idx);
  }
  Entry* e = find_locked(name);
  if (e == nullptr) {
    std::string known;
    for (const auto& x : entries_) {
      if (!x->shadowed) known += (known.empty() ? "" : ", ") + x->status.name;
    }
    std::string reason = "no backend plugin named '" + name + "' was found" +
                         (known.empty() ? std::string(" (no plugins found)") : " (found: " + known + ")");
    throw BackendUnavailableError("accelerator '" + spec + "' is unavailable: " + reason, reason);
  }
  if (!e->plugin) {
    throw BackendUnavailableError("accelerator '" + spec + "' is unavailable: " + e->status.reason, e->status.reason);
  }
  if (index >= static_cast<int32_t>(e->devices.size())) {
    std::string reason = "backend '" + name + "' has " + std::to_string(e->devices.size()) + " device(s)";
    throw BackendUnavailableError("accelerator '" + spec + "' does not exist: " + reason, reason);
  }
  return device_locked(*e, index);
}

}  // namespace dotcompute

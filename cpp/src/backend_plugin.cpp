#include "backend_plugin.hpp"

#include <dlfcn.h>

#include <cstddef>

namespace dotcompute {

namespace {

// Every field of the version-1 table is used by the core.
constexpr size_t kRequiredTableSize = offsetof(dc_backend, launch) + sizeof(void*);

std::string dl_error_text() {
  const char* e = dlerror();
  return e ? std::string(e) : std::string("unknown dlopen error");
}

const char* missing_function(const dc_backend* b) {
#define DC_CHECK_FN(f) \
  if (b->f == nullptr) return #f;
  DC_CHECK_FN(initialize)
  DC_CHECK_FN(shutdown)
  DC_CHECK_FN(last_error)
  DC_CHECK_FN(device_count)
  DC_CHECK_FN(device_info)
  DC_CHECK_FN(compiler_identity)
  DC_CHECK_FN(mem_alloc)
  DC_CHECK_FN(mem_free)
  DC_CHECK_FN(memcpy_h2d)
  DC_CHECK_FN(memcpy_d2h)
  DC_CHECK_FN(memcpy_d2d)
  DC_CHECK_FN(memset_d8)
  DC_CHECK_FN(stream_create)
  DC_CHECK_FN(stream_destroy)
  DC_CHECK_FN(stream_synchronize)
  DC_CHECK_FN(stream_wait_event)
  DC_CHECK_FN(event_create)
  DC_CHECK_FN(event_destroy)
  DC_CHECK_FN(event_record)
  DC_CHECK_FN(event_synchronize)
  DC_CHECK_FN(event_query)
  DC_CHECK_FN(event_elapsed_ms)
  DC_CHECK_FN(compile)
  DC_CHECK_FN(free_binary)
  DC_CHECK_FN(module_load)
  DC_CHECK_FN(module_unload)
  DC_CHECK_FN(kernel_get)
  DC_CHECK_FN(launch)
#undef DC_CHECK_FN
  return nullptr;
}

}  // namespace

std::string plugin_error(const dc_backend* api) {
  if (api == nullptr || api->last_error == nullptr) return {};
  const char* e = api->last_error();
  return e ? std::string(e) : std::string();
}

std::shared_ptr<BackendPlugin> BackendPlugin::load(const std::string& library,
                                                   const std::vector<std::string>& requires_,
                                                   const std::string& expected_name, std::string* reason) {
  // A dependency the manifest names is checked first so that, if the plugin then
  // fails, the reason names the library rather than whatever the plugin tripped
  // on. The plugin stays the authority: it may find its library another way
  // (DOTCOMPUTE_CUDA_DRIVER, say), so a missing one only decides the reason.
  std::string missing_dependency;
  for (const auto& dep : requires_) {
    void* h = dlopen(dep.c_str(), RTLD_LAZY | RTLD_LOCAL);
    if (h == nullptr) {
      missing_dependency = "required library " + dep + " not found: " + dl_error_text();
      break;
    }
    dlclose(h);
  }
  std::shared_ptr<BackendPlugin> p = load_checked(library, expected_name, reason);
  if (p == nullptr && !missing_dependency.empty()) *reason = missing_dependency;
  return p;
}

std::shared_ptr<BackendPlugin> BackendPlugin::load_checked(const std::string& library,
                                                           const std::string& expected_name, std::string* reason) {
  std::shared_ptr<BackendPlugin> p(new BackendPlugin());
  p->library_ = library;
  dlerror();
  p->handle_ = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (p->handle_ == nullptr) {
    *reason = "cannot load " + library + ": " + dl_error_text();
    return nullptr;
  }
  dlerror();
  void* sym = dlsym(p->handle_, DC_BACKEND_ENTRY_SYMBOL);
  if (sym == nullptr) {
    *reason = library + " does not export " DC_BACKEND_ENTRY_SYMBOL ": " + dl_error_text();
    return nullptr;
  }
  const dc_backend* table = reinterpret_cast<dc_backend_entry_fn>(sym)();
  if (table == nullptr) {
    *reason = library + ": " DC_BACKEND_ENTRY_SYMBOL "() returned no backend table";
    return nullptr;
  }
  if (table->abi_version < DC_BACKEND_ABI_MIN_SUPPORTED || table->abi_version > DC_BACKEND_ABI_VERSION) {
    *reason = library + " uses backend ABI version " + std::to_string(table->abi_version) +
              ", this dotcompute supports versions " + std::to_string(DC_BACKEND_ABI_MIN_SUPPORTED) + " to " +
              std::to_string(DC_BACKEND_ABI_VERSION) +
              (table->abi_version > DC_BACKEND_ABI_VERSION ? " (the plugin is newer: upgrade dotcompute)"
                                                            : " (the plugin is too old: rebuild it)");
    return nullptr;
  }
  if (table->struct_size < kRequiredTableSize) {
    *reason = library + ": backend table is " + std::to_string(table->struct_size) + " bytes, ABI version " +
              std::to_string(table->abi_version) + " needs at least " + std::to_string(kRequiredTableSize);
    return nullptr;
  }
  if (const char* fn = missing_function(table)) {
    *reason = library + ": backend table has no " + fn + "()";
    return nullptr;
  }
  p->name_ = table->name ? table->name : "";
  p->version_ = table->version ? table->version : "";
  if (!expected_name.empty() && p->name_ != expected_name) {
    *reason = library + " implements backend '" + p->name_ + "', but its manifest names '" + expected_name + "'";
    return nullptr;
  }
  p->api_ = table;
  dc_status st = table->initialize();
  if (st != DC_OK) {
    std::string msg = plugin_error(table);
    *reason = msg.empty() ? "initialize() failed with status " + std::to_string(static_cast<int>(st)) : msg;
    // Plugins release what a failed initialize() acquired themselves; shutdown
    // is only for an initialised plugin.
    return nullptr;
  }
  p->initialized_ = true;
  int32_t count = 0;
  st = table->device_count(&count);
  if (st != DC_OK) {
    std::string msg = plugin_error(table);
    *reason = "device_count() failed: " + (msg.empty() ? "status " + std::to_string(static_cast<int>(st)) : msg);
    return nullptr;
  }
  if (count <= 0) {
    *reason = "no devices found";
    return nullptr;
  }
  p->device_count_ = count;
  return p;
}

BackendPlugin::~BackendPlugin() {
  if (initialized_ && api_ != nullptr) api_->shutdown();
  if (handle_ != nullptr) dlclose(handle_);
}

std::string BackendPlugin::last_error() const { return plugin_error(api_); }

void* BackendPlugin::symbol(const std::string& name) const noexcept {
  if (handle_ == nullptr || name.empty()) return nullptr;
  return dlsym(handle_, name.c_str());
}

}  // namespace dotcompute

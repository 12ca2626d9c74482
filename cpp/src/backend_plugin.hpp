// One loaded backend plugin: the dlopen handle and its checked dc_backend table.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dotcompute/backend_abi.h"

namespace dotcompute {

class BackendPlugin {
 public:
  // Loads and initialises `library`. Never throws: on failure returns nullptr
  // and sets `reason` (missing dependency or library with dlerror() text,
  // missing entry symbol, unsupported ABI with both numbers, a table too small,
  // a failed initialize() with the plugin's message).
  static std::shared_ptr<BackendPlugin> load(const std::string& library, const std::vector<std::string>& requires_,
                                             const std::string& expected_name, std::string* reason);
  ~BackendPlugin();  // shutdown() + dlclose()
  BackendPlugin(const BackendPlugin&) = delete;
  BackendPlugin& operator=(const BackendPlugin&) = delete;

  const dc_backend* api() const noexcept { return api_; }
  const std::string& name() const noexcept { return name_; }
  const std::string& version() const noexcept { return version_; }
  const std::string& library() const noexcept { return library_; }
  int32_t device_count() const noexcept { return device_count_; }
  // The plugin's message for the last failed call on this thread.
  std::string last_error() const;
  // An exported symbol of the plugin library (an optional extension table such
  // as cuda_ext.h's), or nullptr when it has none. Valid while the plugin is loaded.
  void* symbol(const std::string& name) const noexcept;

 private:
  // load() once the manifest's dependencies are diagnosed: dlopen, ABI checks, initialize().
  static std::shared_ptr<BackendPlugin> load_checked(const std::string& library, const std::string& expected_name,
                                                     std::string* reason);
  BackendPlugin() = default;
  void* handle_ = nullptr;
  const dc_backend* api_ = nullptr;
  bool initialized_ = false;
  std::string name_;
  std::string version_;
  std::string library_;
  int32_t device_count_ = 0;
};

// The plugin's last_error() text for a call that failed on this thread.
std::string plugin_error(const dc_backend* api);

}  // namespace dotcompute

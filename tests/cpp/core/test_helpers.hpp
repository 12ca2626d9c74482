// Shared helpers of the core tests: temporary folders, runtimes over the fake
// plugins, and the fake plugin's counters.
#pragma once

#include <dlfcn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "dotcompute/dotcompute.hpp"

namespace dctest {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = std::string(DC_TEST_TMP_DIR) + "/t.XXXXXX";
    ::mkdir(DC_TEST_TMP_DIR, 0755);
    char* p = ::mkdtemp(tmpl.data());
    path_ = p ? p : "";
  }
  ~TempDir() {
    if (!path_.empty()) std::system(("rm -rf '" + path_ + "'").c_str());
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline dotcompute::RuntimeOptions options_for(std::vector<std::string> dirs, std::string cache_dir = "") {
  dotcompute::RuntimeOptions o;
  o.plugin_dirs = std::move(dirs);
  o.cache_dir = std::move(cache_dir);
  return o;
}

inline std::unique_ptr<dotcompute::Runtime> fake_runtime(std::string cache_dir = "") {
  return std::make_unique<dotcompute::Runtime>(options_for({DC_TEST_GOOD_DIR}, std::move(cache_dir)));
}

struct FakeCounters {
  int64_t allocations, streams, events, modules, compiles, launches;
};

// The counters of the loaded fake plugin; `loaded` is false when it is not loaded.
inline FakeCounters fake_counters(bool* loaded = nullptr) {
  FakeCounters c{};
  void* h = dlopen(DC_TEST_FAKE_LIB, RTLD_NOW | RTLD_NOLOAD);
  if (loaded) *loaded = h != nullptr;
  if (h == nullptr) return c;
  auto fn = reinterpret_cast<void (*)(int64_t*)>(dlsym(h, "fake_backend_counters"));
  int64_t v[6] = {0};
  if (fn) fn(v);
  dlclose(h);
  c = {v[0], v[1], v[2], v[3], v[4], v[5]};
  return c;
}

// The fake backend's kernels are named on "kernel NAME" lines.
inline const char* kFakeSource =
    "kernel fill_f32\nkernel add_f32\nkernel sleep_ms\nkernel append_i64\nkernel scale_raw\nkernel scalars\nkernel noop\n";

}  // namespace dctest

// A dlopen'ed shared library that closes itself: the one RAII wrapper every
// run-time-loaded library of this backend (the driver, NVRTC, its builtins) uses.
#pragma once

#include <dlfcn.h>

#include <string>
#include <utility>

namespace dotcompute::cuda {

class DynLib {
 public:
  DynLib() = default;
  DynLib(const DynLib&) = delete;
  DynLib& operator=(const DynLib&) = delete;
  DynLib(DynLib&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)), path_(std::move(other.path_)) {}
  DynLib& operator=(DynLib&& other) noexcept {
    if (this != &other) {
      close();
      handle_ = std::exchange(other.handle_, nullptr);
      path_ = std::move(other.path_);
    }
    return *this;
  }
  ~DynLib() { close(); }

  // Opens `path` (a file path or a soname the dynamic loader searches for).
  // On failure returns an empty DynLib and puts dlerror()'s text in `error`.
  static DynLib open(const std::string& path, int flags, std::string* error) {
    DynLib lib;
    dlerror();
    lib.handle_ = dlopen(path.c_str(), flags);
    if (!lib.handle_) {
      const char* why = dlerror();
      if (error) *error = why ? why : ("cannot open " + path);
    } else {
      lib.path_ = path;
    }
    return lib;
  }

  explicit operator bool() const { return handle_ != nullptr; }
  const std::string& path() const { return path_; }
  void* symbol(const char* name) const { return handle_ ? dlsym(handle_, name) : nullptr; }

 private:
  void close() {
    if (handle_) dlclose(handle_);
    handle_ = nullptr;
  }
  void* handle_ = nullptr;
  std::string path_;
};

// Looks `name` up in `lib` into the function pointer `fn`; a missing one is appended to `missing`
// (", "-separated), so a loader can name every symbol an old library lacks at once.
template <typename Fn>
bool resolve(const DynLib& lib, Fn& fn, const char* name, std::string& missing) {
  fn = reinterpret_cast<Fn>(lib.symbol(name));
  if (!fn) missing += std::string(missing.empty() ? "" : ", ") + name;
  return fn != nullptr;
}

}  // namespace dotcompute::cuda

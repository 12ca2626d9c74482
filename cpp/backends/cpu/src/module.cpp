#include "module.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "host_process.hpp"

namespace dccpu {

namespace {

bool write_all(int fd, const void* data, uint64_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  while (size > 0) {
    const ssize_t n = write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += n;
    size -= static_cast<uint64_t>(n);
  }
  return true;
}

std::string dl_error_text() {
  const char* e = dlerror();
  return e != nullptr ? e : "unknown dlopen error";
}

// dlopen matches already-loaded libraries by path name before anything else,
// so a name that is still loaded (e.g. a reused fd number) must not be reused.
bool name_in_use(const std::string& path) {
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (h == nullptr) return false;
  dlclose(h);
  return true;
}

}  // namespace

dc_status Module::load(const void* binary, uint64_t size, std::unique_ptr<Module>& out, std::string& error) {
  if (binary == nullptr || size < 4 || std::memcmp(binary, "\x7f" "ELF", 4) != 0) {
    error = "cpu: module binary is not an ELF shared object (" + std::to_string(size) + " bytes)";
    return DC_ERROR_INVALID_ARGUMENT;
  }
  std::unique_ptr<Module> m(new Module());
  std::string how;
#ifdef MFD_CLOEXEC
  const int fd = memfd_create("dotcompute-kernel", MFD_CLOEXEC);
  if (fd >= 0) {
    const std::string path = "/proc/self/fd/" + std::to_string(fd);
    if (write_all(fd, binary, size) && !name_in_use(path)) {
      m->handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (m->handle_ != nullptr) {
        m->fd_ = fd;  // kept open while loaded, so the fd number (the name) is not reused
        out = std::move(m);
        return DC_OK;
      }
      how = "memfd: " + dl_error_text() + "; ";
    }
    close(fd);
  }
#endif
  // Fallback: a private temporary file, unlinked as soon as it is mapped.
  const std::string tmp = dcsupport::temp_root();
  std::string path = tmp + "/dotcompute-kernel-XXXXXX.so";
  const int tfd = mkstemps(path.data(), 3);
  if (tfd < 0) {
    error = "cpu: cannot create a temporary file for the module in " + tmp + ": " + std::strerror(errno);
    return DC_ERROR_INTERNAL;
  }
  const bool written = write_all(tfd, binary, size);
  close(tfd);
  if (written && !name_in_use(path)) m->handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  const std::string why = m->handle_ == nullptr ? (written ? dl_error_text() : "write failed") : "";
  unlink(path.c_str());
  if (m->handle_ == nullptr) {
    error = "cpu: cannot load the kernel module: " + how + why;
    return DC_ERROR_INVALID_ARGUMENT;
  }
  out = std::move(m);
  return DC_OK;
}

Module::~Module() {
  if (handle_ != nullptr) dlclose(handle_);
  if (fd_ >= 0) {
    // A library that cannot be unloaded (e.g. it has unique symbols) keeps its
    // name; then the fd stays open so no later module can collide with it.
    if (!name_in_use("/proc/self/fd/" + std::to_string(fd_))) close(fd_);
  }
}

dc_status Module::kernel(const std::string& name, Kernel*& out, std::string& error) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = kernels_.find(name);
  if (it != kernels_.end()) {
    out = it->second.get();
    return DC_OK;
  }
  dlerror();
  void* sym = dlsym(handle_, name.c_str());
  if (sym == nullptr) {
    error = "cpu: kernel '" + name + "' not found in the module (is it declared extern \"C\"?)";
    return DC_ERROR_INVALID_ARGUMENT;
  }
  auto k = std::make_unique<Kernel>();
  k->fn = reinterpret_cast<dc_cpu_kernel_fn>(sym);
  k->name = name;
  k->module = this;
  out = k.get();
  kernels_.emplace(name, std::move(k));
  return DC_OK;
}

}  // namespace dccpu

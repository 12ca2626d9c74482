// Loading simulator images: the host object is written to an anonymous memory
// file and dlopen'ed from there, so no file is left behind and two modules
// never share state.
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <mutex>

#include "image.hpp"
#include "sim.hpp"

namespace dcsim_lib {

Module::~Module() {
  if (handle) dlclose(handle);
  if (memfd >= 0) close(memfd);
}

CUresult load_module(const void* image, int device, std::shared_ptr<Module>& out) {
  if (!image) return fail(CUDA_ERROR_INVALID_VALUE, "cuModuleLoadData of a null image");
  ImageHeader h;
  std::memcpy(&h, image, sizeof h);
  if (std::memcmp(h.magic, kImageMagic, sizeof kImageMagic) != 0) {
    const bool elf = std::memcmp(image, ELFMAG, SELFMAG) == 0;
    return fail(CUDA_ERROR_INVALID_IMAGE,
                std::string("the CUDA simulator cannot run this ") + (elf ? "CUBIN" : "image") +
                    ": it runs modules built by the plugin in simulator mode, which carry the kernel's "
                    "CUDA C++ compiled for the host");
  }
  if (h.version != kImageVersion)
    return fail(CUDA_ERROR_INVALID_IMAGE, "simulator image version " + std::to_string(h.version) +
                                              " (this simulator reads version " + std::to_string(kImageVersion) + ")");
  const char* body = static_cast<const char*>(image) + sizeof h;
  const char* device_code = body + h.source_bytes;
  const char* host = device_code + h.device_code_bytes;

  auto m = std::make_shared<Module>();
  m->device = device;
  m->fibers = (h.flags & kImageFibers) != 0;
  m->memfd = memfd_create("dcsim-kernel", MFD_CLOEXEC);
  if (m->memfd < 0) return fail(CUDA_ERROR_INVALID_IMAGE, std::string("memfd_create: ") + std::strerror(errno));
  for (uint64_t done = 0; done < h.host_bytes;) {
    const ssize_t n = write(m->memfd, host + done, h.host_bytes - done);
    if (n <= 0) return fail(CUDA_ERROR_INVALID_IMAGE, std::string("writing the host object: ") + std::strerror(errno));
    done += static_cast<uint64_t>(n);
  }
  // The loader knows objects by path, so "/proc/self/fd/N" must never name two modules: move the
  // descriptor to a number this process has not used for a module before (numbers only grow).
  {
    static std::mutex mutex;
    static int next = 256;
    std::lock_guard<std::mutex> lock(mutex);
    const int moved = fcntl(m->memfd, F_DUPFD_CLOEXEC, std::max(next, m->memfd + 1));
    if (moved >= 0) {
      close(m->memfd);
      m->memfd = moved;
      next = moved + 1;
    }
  }
  const std::string path = "/proc/self/fd/" + std::to_string(m->memfd);
  dlerror();
  m->handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  // The descriptor stays open while the module is loaded (its number names it to the loader).
  if (!m->handle) {
    const char* why = dlerror();
    return fail(CUDA_ERROR_INVALID_IMAGE, std::string("cannot load the kernel's host object: ") + (why ? why : "?"));
  }
  // A trace build (kernel checks) asks where device memory is: dcsim_trace.h.
  if (auto* host = reinterpret_cast<const dcsim_host_services**>(dlsym(m->handle, "dcsim_host"))) *host = host_services();
  counters_attach(*m);  // a counters-mode build (DOTCOMPUTE_CUDA_SIM_COUNTERS=1) reports to counters.cpp
  auto kernels = reinterpret_cast<dcsim_kernels_fn>(dlsym(m->handle, "dcsim_kernels"));
  m->run = reinterpret_cast<dcsim_run_fn>(dlsym(m->handle, "dcsim_run"));
  if (!kernels || !m->run) return fail(CUDA_ERROR_INVALID_IMAGE, "the host object lacks dcsim_kernels/dcsim_run");
  uint32_t count = 0, abi = 0;
  const dcsim_kernel_entry* entries = kernels(&count, &abi);
  if (abi != DCSIM_ABI_VERSION)
    return fail(CUDA_ERROR_INVALID_IMAGE, "the host object was built against shim ABI " + std::to_string(abi));
  const Device* dev = device_of(device);
  for (uint32_t i = 0; i < count; ++i) {
    auto f = std::make_unique<Function>();
    f->module = m.get();
    f->entry = &entries[i];
    Dl_info info{};
    // The exported symbol is the name CUDA knows the kernel by: plain for extern "C", mangled otherwise.
    if (dladdr(entries[i].fn, &info) && info.dli_sname && info.dli_saddr == entries[i].fn)
      f->symbol = info.dli_sname;
    else
      f->symbol = entries[i].name;
    f->static_shared = static_cast<int>(cubin_static_shared(device_code, h.device_code_bytes, f->symbol));
    f->max_dynamic_shared = dev ? dev->cfg.shared_per_block - f->static_shared : 0;
    f->registers = cubin_registers(device_code, h.device_code_bytes, f->symbol);
    size_t offset = 0;
    for (uint32_t p = 0; p < entries[i].nparams; ++p) {
      const size_t a = entries[i].aligns[p] ? entries[i].aligns[p] : 1;
      offset = (offset + a - 1) / a * a;
      f->offsets.push_back(offset);
      offset += entries[i].sizes[p];
    }
    f->params_bytes = offset;
    m->functions.push_back(std::move(f));
  }
  out = std::move(m);
  return CUDA_SUCCESS;
}

}  // namespace dcsim_lib

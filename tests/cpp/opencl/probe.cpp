// Loads a backend plugin and reports what initialize() says, for tests that
// must run in a fresh process (the ICD loader reads its environment only once).
// Usage: dc_opencl_probe <plugin.so> [cycles]
// Prints "status=<n> devices=<n>" and "reason=<text>". With cycles > 1 it
// initializes and shuts down that many times and reports the last round.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

#include "dotcompute/backend_abi.h"

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    std::fprintf(stderr, "usage: %s <plugin.so> [cycles]\n", argv[0]);
    return 2;
  }
  void* handle = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    std::printf("dlopen failed: %s\n", dlerror());
    return 3;
  }
  auto entry = reinterpret_cast<dc_backend_entry_fn>(dlsym(handle, DC_BACKEND_ENTRY_SYMBOL));
  if (entry == nullptr) {
    std::printf("no %s in %s\n", DC_BACKEND_ENTRY_SYMBOL, argv[1]);
    return 3;
  }
  const dc_backend* b = entry();
  int cycles = argc == 3 ? std::atoi(argv[2]) : 1;
  dc_status st = DC_OK;
  int32_t devices = 0;
  for (int i = 0; i < cycles; ++i) {
    st = b->initialize();
    devices = 0;
    if (st == DC_OK) b->device_count(&devices);
    if (st == DC_OK && i + 1 < cycles) {
      b->shutdown();
      int32_t after = -1;
      b->device_count(&after);
      if (after != 0) {
        std::printf("shutdown left %d devices\n", after);
        return 4;
      }
    }
  }
  std::printf("status=%d devices=%d\nreason=%s\n", static_cast<int>(st), devices, st == DC_OK ? "" : b->last_error());
  if (st == DC_OK) b->shutdown();
  return 0;
}

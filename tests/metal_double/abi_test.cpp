// Calls every function of the Metal plugin's ABI table directly (no core in between), against
// the test double: the happy paths, the struct_size rule and the error paths a core relies on.
//
//   bash tests/metal_double/build.sh OUT && OUT/metal_abi_test OUT/libdotcompute_metal.so
//
// Prints one line per check and exits non-zero on the first failure.
#include <dlfcn.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "dotcompute/backend_abi.h"

namespace {

const dc_backend* api = nullptr;

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "FAIL: %s (last_error: %s)\n", what.c_str(), api && api->last_error ? api->last_error() : "");
  std::exit(1);
}

void ok(dc_status st, const char* what) {
  if (st != DC_OK) die(std::string(what) + " returned " + std::to_string(st));
  std::printf("ok   %s\n", what);
}

void expect(dc_status st, dc_status want, const char* what) {
  if (st != want) die(std::string(what) + ": expected status " + std::to_string(want) + ", got " + std::to_string(st));
  std::printf("ok   %s (status %d: %s)\n", what, st, api->last_error());
}

void check(bool cond, const char* what) {
  if (!cond) die(what);
  std::printf("ok   %s\n", what);
}

const char* kSource = R"MSL(
#include <metal_stdlib>
using namespace metal;
kernel void scale(device float* x [[buffer(0)]], constant float& s [[buffer(1)]],
                  constant long& n [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  if (i < n) x[i] = x[i] * s;
}
)MSL";

dc_module load(const char* source) {
  void* blob = nullptr;
  uint64_t size = 0;
  ok(api->compile(0, source, "", &blob, &size), "compile");
  dc_module m = nullptr;
  ok(api->module_load(0, blob, size, &m), "module_load");
  api->free_binary(blob);
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s libdotcompute_metal.so\n", argv[0]);
    return 2;
  }
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) die(std::string("dlopen: ") + dlerror());
  auto entry = reinterpret_cast<dc_backend_entry_fn>(dlsym(lib, DC_BACKEND_ENTRY_SYMBOL));
  if (entry == nullptr) die("no entry symbol");
  api = entry();
  check(api->struct_size >= sizeof(dc_backend) && api->abi_version == DC_BACKEND_ABI_VERSION, "table and version");
  check(std::strcmp(api->name, "metal") == 0, "name is metal");

  check(DC_BACKEND_HAS(api, mem_host_pointer) && DC_BACKEND_HAS(api, set_cache_dir), "the optional entries are there");
  ok(api->initialize(), "initialize");
  ok(api->initialize(), "initialize twice");
  // The core hands over its (checked) kernel-cache folder after initialize: the archive goes there.
  char cache_tmpl[] = "/tmp/dc-metal-abi-XXXXXX";
  if (::mkdtemp(cache_tmpl) == nullptr) die("mkdtemp");
  const std::string cache = cache_tmpl;
  ok(api->set_cache_dir(cache.c_str()), "set_cache_dir");
  int32_t n = 0;
  ok(api->device_count(&n), "device_count");
  check(n == 1, "one device");

  dc_device_info info;
  std::memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  ok(api->device_info(0, &info), "device_info");
  check(std::strstr(info.name, "test double") != nullptr, "the name says test double");
  check(std::strstr(info.extra_json, "\"simulated\": true") != nullptr, "extra_json says simulated");
  check((info.features & DC_FEATURE_FP64) == 0, "no fp64");
  check((info.features & DC_FEATURE_HOST_VISIBLE_MEMORY) != 0 && (info.features & DC_FEATURE_UNIFIED_MEMORY) == 0,
        "host-visible memory, not unified memory");
  check(std::strstr(info.extra_json, ("\"binary_archive\": \"" + cache + "/metal-pipelines-").c_str()) != nullptr,
        "the binary archive is in the kernel-cache folder");
  // struct_size rule: an older, smaller caller struct gets only what it has room for
  dc_device_info small;
  std::memset(&small, 0xab, sizeof small);
  small.struct_size = static_cast<uint32_t>(offsetof(dc_device_info, extra_json));
  ok(api->device_info(0, &small), "device_info into an older struct");
  check(small.struct_size == offsetof(dc_device_info, extra_json) &&
            static_cast<unsigned char>(small.extra_json[0]) == 0xab,
        "bytes past the caller's struct_size are untouched");
  small.struct_size = 8;
  expect(api->device_info(0, &small), DC_ERROR_INVALID_ARGUMENT, "device_info with a too small struct_size");
  expect(api->device_info(5, &info), DC_ERROR_INVALID_ARGUMENT, "device_info of a device that does not exist");

  char ident[512];
  ok(api->compiler_identity(0, ident, sizeof ident), "compiler_identity");
  check(std::strstr(ident, "metal") != nullptr, "identity names metal");
  expect(api->compiler_identity(0, ident, 4), DC_ERROR_INVALID_ARGUMENT, "compiler_identity into a short buffer");

  dc_stream s = nullptr, s2 = nullptr;
  ok(api->stream_create(0, &s), "stream_create");
  ok(api->stream_create(0, &s2), "stream_create (second)");

  const uint64_t count = 1000, bytes = count * sizeof(float);
  dc_devptr a = 0, b = 0;
  ok(api->mem_alloc(0, bytes, &a), "mem_alloc");
  ok(api->mem_alloc(0, bytes, &b), "mem_alloc (second)");
  expect(api->mem_alloc(0, 1ull << 62, &b), DC_ERROR_OUT_OF_MEMORY, "mem_alloc beyond the device");
  std::vector<float> host(count), back(count);
  for (uint64_t i = 0; i < count; ++i) host[i] = float(i);
  ok(api->memcpy_h2d(s, a, 0, host.data(), bytes), "memcpy_h2d");
  ok(api->memset_d8(s, b, 0, 0, bytes), "memset_d8");
  ok(api->memcpy_d2d(s, b, 4, a, 0, bytes - 4), "memcpy_d2d at an offset");
  ok(api->memcpy_d2h(s, back.data(), b, 0, bytes), "memcpy_d2h");
  check(back[0] == 0.0f && back[1] == 0.0f && back[500] == 499.0f, "copies and memset landed in order");
  // Shared storage: the host addresses the buffer itself (after the stream's work), interior too.
  void* ha = nullptr;
  ok(api->mem_host_pointer(0, a, &ha), "mem_host_pointer");
  check(ha != nullptr && reinterpret_cast<uintptr_t>(ha) == a, "a shared buffer's host address is its handle");
  void* hb = nullptr;
  ok(api->mem_host_pointer(0, b + 8, &hb), "mem_host_pointer inside a buffer");
  check(static_cast<float*>(hb)[0] == 1.0f, "the host reads device results in place");
  expect(api->mem_host_pointer(0, 12345, &hb), DC_ERROR_INVALID_ARGUMENT, "mem_host_pointer of a foreign pointer");
  expect(api->memcpy_d2h(s, back.data(), a, 8, bytes), DC_ERROR_INVALID_ARGUMENT, "memcpy_d2h past the end");
  expect(api->memcpy_h2d(s, 12345, 0, host.data(), 4), DC_ERROR_INVALID_ARGUMENT, "memcpy_h2d to a foreign pointer");

  // compilation, modules, kernels, the pipeline cache
  dc_module m = load(kSource);
  dc_kernel k = nullptr;
  ok(api->kernel_get(m, "scale", &k), "kernel_get");
  dc_module m2 = load(kSource);
  dc_kernel k2 = nullptr;
  ok(api->kernel_get(m2, "scale", &k2), "kernel_get from a second module of the same source");
  ok(api->device_info(0, &info), "device_info (after kernels)");
  check(std::strstr(info.extra_json, "\"pipeline_cache_hits\": 1") != nullptr, "the second pipeline was a cache hit");
  expect(api->kernel_get(m, "nope", &k2), DC_ERROR_INVALID_ARGUMENT, "kernel_get of a missing function");
  check(std::strstr(api->last_error(), "scale") != nullptr, "the error lists the functions there are");
  void* blob = nullptr;
  uint64_t size = 0;
  expect(api->compile(0, "kernel void broken(device float* x [[buffer(0)]]) { x[0] = nope; }", "", &blob, &size),
         DC_ERROR_COMPILATION, "compile of broken MSL");
  check(std::strstr(api->last_error(), "nope") != nullptr, "the compile log names the mistake");
  expect(api->module_load(0, "garbage", 7, &m2), DC_ERROR_INVALID_ARGUMENT, "module_load of a foreign blob");

  // launch on s, timed with events, and a second stream waiting on it
  dc_event e0 = nullptr, e1 = nullptr;
  ok(api->event_create(0, &e0), "event_create");
  ok(api->event_create(0, &e1), "event_create (second)");
  int32_t done = 0;
  ok(api->event_query(e0, &done), "event_query before any record");
  check(done == 1, "an unrecorded event counts as complete");
  ok(api->event_record(e0, s), "event_record");
  float factor = 2.0f;
  int64_t nn = int64_t(count);
  dc_kernel_arg args[3];
  args[0].kind = DC_ARG_BUFFER;
  args[0].size = sizeof(dc_devptr);
  args[0].value.buffer = a;
  args[1].kind = DC_ARG_SCALAR;
  args[1].size = sizeof factor;
  args[1].value.scalar = &factor;
  args[2].kind = DC_ARG_SCALAR;
  args[2].size = sizeof nn;
  args[2].value.scalar = &nn;
  dc_launch_config cfg;
  std::memset(&cfg, 0, sizeof cfg);
  cfg.struct_size = sizeof cfg;
  cfg.dims = 1;
  cfg.global_size[0] = count;
  cfg.global_size[1] = cfg.global_size[2] = 1;
  ok(api->launch(s, k, &cfg, args, 3), "launch (the plugin chooses the threadgroup)");
  factor = 100.0f;  // scalars were copied by launch
  ok(api->event_record(e1, s), "event_record (end)");
  ok(api->stream_wait_event(s2, e1), "stream_wait_event");
  float three = 3.0f;
  args[1].value.scalar = &three;
  cfg.local_size[0] = 64;  // does not divide 1000: a non-uniform last threadgroup
  ok(api->launch(s2, k, &cfg, args, 3), "launch on the waiting stream, local size 64");
  ok(api->stream_synchronize(s2), "stream_synchronize");
  ok(api->event_synchronize(e1), "event_synchronize");
  ok(api->event_query(e1, &done), "event_query");
  check(done == 1, "the event completed");
  double ms = -1;
  ok(api->event_elapsed_ms(e0, e1, &ms), "event_elapsed_ms");
  check(ms >= 0, "elapsed time is not negative");
  ok(api->memcpy_d2h(s2, back.data(), a, 0, bytes), "memcpy_d2h (results)");
  bool right = true;
  for (uint64_t i = 0; i < count; ++i) right = right && back[i] == float(i) * 6.0f;
  check(right, "x * 2 then * 3, in stream order across the event");
  // Written through the host pointer, seen by a kernel with no copy; the result read in place.
  for (uint64_t i = 0; i < count; ++i) static_cast<float*>(ha)[i] = 1.0f;
  ok(api->launch(s2, k, &cfg, args, 3), "launch on memory written by the host");
  ok(api->stream_synchronize(s2), "stream_synchronize (zero-copy)");
  check(static_cast<float*>(ha)[0] == 3.0f && static_cast<float*>(ha)[count - 1] == 3.0f,
        "host writes reach the kernel and its results reach the host, both in place");

  // A large allocation: private storage on a device without unified memory
  // (DC_METAL_DOUBLE_UNIFIED=0), where the host has no address for it and copies are blits.
  const char* unified_env = std::getenv("DC_METAL_DOUBLE_UNIFIED");
  const bool discrete = unified_env != nullptr && std::strcmp(unified_env, "0") == 0;
  const uint64_t big_count = (2u << 20) / sizeof(float), big_bytes = big_count * sizeof(float);
  dc_devptr big = 0, big2 = 0;
  ok(api->mem_alloc(0, big_bytes, &big), "mem_alloc (2 MiB)");
  ok(api->mem_alloc(0, big_bytes, &big2), "mem_alloc (2 MiB, second)");
  void* hbig = nullptr;
  ok(api->mem_host_pointer(0, big, &hbig), "mem_host_pointer (2 MiB)");
  check(discrete ? hbig == nullptr : hbig != nullptr,
        discrete ? "a large buffer on a discrete GPU is private: no host address"
                 : "a large buffer on unified memory is shared");
  std::vector<float> big_host(big_count), big_back(big_count, -1.0f);
  for (uint64_t i = 0; i < big_count; ++i) big_host[i] = float(i % 1000);
  ok(api->memcpy_h2d(s, big, 0, big_host.data(), big_bytes), "memcpy_h2d (large)");
  ok(api->memset_d8(s, big2, 0, 0, big_bytes), "memset_d8 (large)");
  ok(api->memcpy_d2d(s, big2, 0, big, 0, big_bytes / 2), "memcpy_d2d (large, half)");
  nn = int64_t(big_count);
  args[0].value.buffer = big2;
  args[1].value.scalar = &three;
  cfg.global_size[0] = big_count;
  cfg.local_size[0] = 0;
  ok(api->launch(s, k, &cfg, args, 3), "launch on a large buffer");
  ok(api->memcpy_d2h(s, big_back.data(), big2, 0, big_bytes), "memcpy_d2h (large)");
  bool big_right = true;
  for (uint64_t i = 0; i < big_count; ++i) {
    big_right = big_right && big_back[i] == (i < big_count / 2 ? 3.0f * float(i % 1000) : 0.0f);
  }
  check(big_right, "copies, memset, d2d and a kernel on large buffers, in stream order");
  ok(api->mem_free(0, big), "mem_free (large)");
  ok(api->mem_free(0, big2), "mem_free (large, second)");
  args[0].value.buffer = a;
  nn = int64_t(count);
  cfg.global_size[0] = count;

  cfg.local_size[0] = 4096;
  expect(api->launch(s, k, &cfg, args, 3), DC_ERROR_INVALID_ARGUMENT, "launch with a threadgroup over the limit");
  cfg.struct_size = 4;
  expect(api->launch(s, k, &cfg, args, 3), DC_ERROR_INVALID_ARGUMENT, "launch with a too small config struct_size");
  cfg.struct_size = sizeof cfg;
  cfg.local_size[0] = 0;
  args[0].value.buffer = 77;
  expect(api->launch(s, k, &cfg, args, 3), DC_ERROR_INVALID_ARGUMENT, "launch with a foreign buffer pointer");

  // a command buffer that fails: a barrier half the group never reaches
  dc_module bad = load(
      "#include <metal_stdlib>\nusing namespace metal;\n"
      "kernel void diverge(device float* x [[buffer(0)]], uint l [[thread_position_in_threadgroup]]) {\n"
      "  if (l < 2) threadgroup_barrier(mem_flags::mem_threadgroup);\n  x[l] = 1.0f;\n}\n");
  dc_kernel kb = nullptr;
  ok(api->kernel_get(bad, "diverge", &kb), "kernel_get (diverge)");
  args[0].value.buffer = b;
  cfg.global_size[0] = 4;
  cfg.local_size[0] = 4;
  ok(api->launch(s, kb, &cfg, args, 1), "launch (diverge) is enqueued");
  expect(api->stream_synchronize(s), DC_ERROR_LAUNCH, "the command buffer error surfaces at synchronize");
  check(std::strstr(api->last_error(), "barrier") != nullptr, "the error says why");
  ok(api->stream_synchronize(s), "the stream is usable again");

  // dynamic threadgroup memory: dynamic_shared_bytes is [[threadgroup(0)]] and a DC_ARG_LOCAL
  // argument the next index, both through setThreadgroupMemoryLength:atIndex:
  dc_module tgm = load(
      "#include <metal_stdlib>\nusing namespace metal;\n"
      "kernel void tg_reverse(device float* x [[buffer(0)]], threadgroup float* dyn [[threadgroup(0)]],\n"
      "    threadgroup float* ones [[threadgroup(1)]], uint l [[thread_position_in_threadgroup]],\n"
      "    uint n [[threads_per_threadgroup]], uint g [[thread_position_in_grid]]) {\n"
      "  dyn[l] = x[g];\n  ones[l] = 1.0f;\n  threadgroup_barrier(mem_flags::mem_threadgroup);\n"
      "  x[g] = dyn[n - 1 - l] + ones[n - 1 - l];\n}\n");
  dc_kernel kt = nullptr;
  ok(api->kernel_get(tgm, "tg_reverse", &kt), "kernel_get (threadgroup parameters)");
  {
    std::vector<float> vals(128), got(128);
    for (size_t i = 0; i < vals.size(); ++i) vals[i] = float(i);
    ok(api->memcpy_h2d(s, b, 0, vals.data(), vals.size() * sizeof(float)), "memcpy_h2d (threadgroup input)");
    dc_kernel_arg targs[2];
    targs[0].kind = DC_ARG_BUFFER;
    targs[0].size = sizeof(dc_devptr);
    targs[0].value.buffer = b;
    targs[1].kind = DC_ARG_LOCAL;
    targs[1].size = 64 * sizeof(float);
    targs[1].value.scalar = nullptr;
    cfg.global_size[0] = 128;
    cfg.local_size[0] = 64;
    cfg.dynamic_shared_bytes = 64 * sizeof(float);
    ok(api->launch(s, kt, &cfg, targs, 2), "launch with dynamic threadgroup memory and a local argument");
    ok(api->memcpy_d2h(s, got.data(), b, 0, got.size() * sizeof(float)), "memcpy_d2h (threadgroup result)");
    ok(api->stream_synchronize(s), "stream_synchronize (threadgroup)");
    bool right = true;
    for (size_t i = 0; i < got.size(); ++i) right = right && got[i] == vals[i / 64 * 64 + 63 - i % 64] + 1.0f;
    check(right, "each threadgroup reversed its slice through its own threadgroup memory");
    cfg.dynamic_shared_bytes = 0;
    ok(api->launch(s, kt, &cfg, targs, 2), "launch without threadgroup(1)'s length is enqueued");
    expect(api->stream_synchronize(s), DC_ERROR_LAUNCH, "a threadgroup parameter without memory fails the command buffer");
    check(std::strstr(api->last_error(), "setThreadgroupMemoryLength") != nullptr, "the error says which call is missing");
    cfg.dynamic_shared_bytes = 40000;
    // Refused when enqueued (as Metal's validation layer does), not later by the command buffer.
    expect(api->launch(s, kt, &cfg, targs, 2), DC_ERROR_LAUNCH, "a launch with more threadgroup memory than the device has is refused");
    check(std::strstr(api->last_error(), "exceed the device's") != nullptr, "the error gives the device's limit");
    ok(api->stream_synchronize(s), "the stream is usable after the refused launch");
    cfg.dynamic_shared_bytes = 0;
  }
  ok(api->module_unload(tgm), "module_unload (threadgroup)");
  ok(api->module_unload(bad), "module_unload");
  ok(api->module_unload(m), "module_unload (second)");
  ok(api->module_unload(m2), "module_unload (third)");
  ok(api->event_destroy(e0), "event_destroy");
  ok(api->event_destroy(e1), "event_destroy (second)");
  ok(api->mem_free(0, a), "mem_free");
  ok(api->mem_free(0, b), "mem_free (second)");
  expect(api->mem_free(0, a), DC_ERROR_INVALID_ARGUMENT, "mem_free twice");
  ok(api->stream_destroy(s), "stream_destroy");
  ok(api->stream_destroy(s2), "stream_destroy (second)");
  api->shutdown();
  std::printf("ok   shutdown\n");
  // Manual retain/release is balanced: of the double's objects only its device singleton is left.
  std::string dir = argv[1];
  dir = dir.substr(0, dir.find_last_of('/') + 1);
  if (void* dbl = dlopen((dir + "libdotcompute_metal_double.so").c_str(), RTLD_NOW | RTLD_NOLOAD)) {
    auto live = reinterpret_cast<long (*)(void)>(dlsym(dbl, "dc_metal_double_live_objects"));
    if (live == nullptr) die("the double has no dc_metal_double_live_objects");
    // Queue workers drop their last command buffers (and with them the queues) just after the
    // completed handlers ran, so give them a moment (generously: the CPU may be busy).
    for (int i = 0; i < 1000 && live() != 1; ++i) usleep(10000);
    std::printf("     live test-double objects after shutdown: %ld\n", live());
    check(live() == 1, "no Metal object leaked or over-released (only the device singleton is alive)");
    dlclose(dbl);
  }
  ok(api->device_count(&n), "device_count after shutdown");
  check(n == 0, "no devices after shutdown");
  ok(api->initialize(), "initialize again after shutdown");
  // A new "process": the pipeline comes from the binary archive the first run saved.
  ok(api->set_cache_dir(cache.c_str()), "set_cache_dir (again)");
  dc_module again = load(kSource);
  ok(api->kernel_get(again, "scale", &k), "kernel_get (from the archive)");
  ok(api->device_info(0, &info), "device_info (after the archive)");
  std::printf("     %s\n", info.extra_json);
  check(std::strstr(info.extra_json, "\"binary_archive_hits\": 1") != nullptr &&
            std::strstr(info.extra_json, "\"binary_archive_misses\": 0") != nullptr,
        "the pipeline came from the binary archive");
  ok(api->module_unload(again), "module_unload (archive)");
  api->shutdown();
  (void)std::system(("rm -rf '" + cache + "'").c_str());
  std::printf("all Metal plugin ABI checks passed\n");
  return 0;
}

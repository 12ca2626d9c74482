// The C interface between a compiled MSL kernel object and whoever runs it (the Metal test
// double, or runner.py through ctypes): a dispatch's description and the host's fault guard.
#ifndef DOTCOMPUTE_METAL_SHIM_MSL_LAUNCH_H
#define DOTCOMPUTE_METAL_SHIM_MSL_LAUNCH_H

#include <setjmp.h>

#ifdef __cplusplus
extern "C" {
// What the host process lends a running kernel: the fault guard (SIGSEGV/SIGBUS/SIGFPE/SIGILL
// while a dispatch runs jump back to its sigsetjmp), installed once per process by the host.
struct DcMslHost {
  int version;                        // 1
  void (*enter)(sigjmp_buf* jump);    // faults on this thread now jump to `jump`
  void (*leave)(void);                // no longer
  void (*describe)(char* out, int n); // the last fault on this thread, in words
};

enum { DC_MSL_MAX_THREADGROUP_ARGS = 16 };

// One dispatch (the generated `dc_run_<i>` takes it). Layout shared with runner.py's ctypes.
struct DcMslLaunch {
  void** args;                                        // [[buffer(i)]] bases, by index
  unsigned long long grid[3];                         // threads per grid
  unsigned long long group[3];                        // threads per threadgroup at dispatch
  unsigned long long tg_len[DC_MSL_MAX_THREADGROUP_ARGS];  // [[threadgroup(i)]] lengths in bytes
  unsigned long long tg_limit;                        // threadgroup memory of the device, bytes
  int threaded;                                       // fibers (barriers, SIMD-group functions)
  const DcMslHost* host;
  char* err;
  int errlen;
};
typedef int (*DcMslRunFn)(DcMslLaunch* launch);

// The process's fault guard (runner.py passes it back in DcMslLaunch.host).
const DcMslHost* dc_msl_host(void);
}
#endif

#endif

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
  struct DcMslCheck* check;  // a checked run (objects compiled for checks only), else null
};

// ---- a checked run (objects compiled with checks: msl_check.h). Layout shared with
// python/dotcompute/lang/check/raw_metal.py's ctypes.
enum { DC_MSL_CHECK_MAX_ARGS = 31 };
struct DcMslCheckArg {       // one [[buffer(i)]] binding
  const void* data;          // its bytes: copied for the run into memory with red zones around it
  unsigned long long bytes;
  unsigned long long elem;   // element size in bytes (reports give element indices)
  int kind;                  // 0 unbound, 1 a buffer, 2 bytes (setBytes: a scalar or a struct)
  int uninit;                // initcheck applies: `unwritten` says which elements hold nothing yet
  const unsigned char* unwritten;  // per element: 1 never written (acc.empty memory), else 0
};
struct DcMslFinding {
  int kind;                  // 1 memcheck, 2 racecheck, 3 synccheck, 4 initcheck
  int sub;                   // memcheck: 0 read, 1 write, 2 atomic; racecheck: 1 write-write, 2 write then
                             // read, 3 read then write; synccheck: 1 a thread returned, 2 different barriers
  int space;                 // 0 buffer(region), 1 threadgroup variable (region: its site), 2 threadgroup
                             // argument (region: its index), -1 none
  int region;
  long long index;           // element index (memcheck: may be negative or past the end)
  unsigned long long pc, opc;   // code offsets in the object: this access, the other one
  unsigned long long tid, otid; // linear thread ids in the grid (x fastest)
  long long count;           // accesses that showed this same problem
  int other_atomic, pad;     // racecheck: the first access was an atomic one
};
struct DcMslCheck {
  int version;               // 1
  int mask;                  // 1 memcheck, 2 racecheck, 4 synccheck, 8 initcheck
  int nargs;
  int stored;
  DcMslCheckArg* args;
  DcMslFinding* findings;
  int capacity;
  int faulted;               // the run stopped at a fault after the findings it has
  long long dropped;         // distinct findings that did not fit
  unsigned long long max_shadow;  // bytes of shadow memory the run may use
};
typedef int (*DcMslRunFn)(DcMslLaunch* launch);

// The process's fault guard (runner.py passes it back in DcMslLaunch.host).
const DcMslHost* dc_msl_host(void);
}
#endif

#endif

// The one MSL-on-CPU runner, shared by the Metal test double (tests/metal_double, linked in) and
// the emitter tests' runner.py (which builds this file into a small library and calls it through
// ctypes): the kernel signatures are parsed, a C++ driver per kernel is generated around the
// source, and the whole is compiled with the host compiler against metal_stdlib beside this file.
// Work-items run as fibers on the calling thread; faults inside a kernel come back as an error.
#ifndef DOTCOMPUTE_METAL_SHIM_MSL_RUNNER_H
#define DOTCOMPUTE_METAL_SHIM_MSL_RUNNER_H

#include <string>
#include <vector>

#include "msl_launch.h"

namespace mslrun {

struct Param {
  int position = 0;
  std::string kind;  // "buffer", "threadgroup" or "builtin"
  int index = -1;    // buffer / threadgroup index (explicit or assigned in declaration order)
  std::string type;  // the declared type, qualifiers included, without name and attributes
  std::string builtin;
  std::string name;  // the parameter's name in the source
};

struct KernelDecl {
  std::string name;    // the name Metal knows it by ([[host_name]] for template instances)
  std::string target;  // what the driver calls: ::name or ::name<args>
  int buffer_slots = 0;       // 1 + the highest buffer index
  int threadgroup_slots = 0;  // 1 + the highest threadgroup index
  bool threaded = false;      // runs its work-items as fibers (barriers, SIMD-group functions)
  std::vector<Param> params;
  std::string symbol;  // dc_run_<i> in the compiled object
};

// Parses every kernel of `msl` (plain, [[kernel]], and template instances); false with `error`
// set when a parameter is something the runner cannot bind.
bool parse_kernels(const std::string& msl, std::vector<KernelDecl>* out, std::string* error);

// The full C++ translation unit: prologue, the MSL (as "program_source"), and the drivers.
// `check`: the driver of a checked build (msl_check.h; compile_msl's `check`).
std::string driver_source(const std::string& msl, const std::vector<KernelDecl>& kernels, bool check = false);

// The `threadgroup T name[N];` declarations of `msl`, by site number (what dc_shim_tg is called with).
std::vector<std::string> threadgroup_sites(const std::string& msl);

// Compiles `msl` into a shared object in the private cache folder (cached by the hash of the
// driver source, compiler, flags and every shim header's text) and returns its path, checked to
// be this user's file in this user's private folder; on failure "" with the log in `log`.
// `fast_math`: Metal's fast math as the host compiler can give it (contraction into FMA, reassociation,
// reciprocals, no NaN or infinity assumed); off, the arithmetic is IEEE with no contraction.
// `check`: instrumented for the kernel checks (clang's SanitizerCoverage load/store tracing, -g for
// source lines; msl_check.h): such an object runs only under a DcMslLaunch with a DcMslCheck.
std::string compile_msl(const std::string& msl, std::vector<KernelDecl>* kernels, std::string* log,
                        bool fast_math = false, bool check = false);

// The private cache folder (created 0700, owner and mode checked), or "" with `error` set.
std::string cache_dir(std::string* error);

}  // namespace mslrun

#endif

// Turning MSL into a loadable CPU object for the Metal test double: the kernel signatures are
// parsed, a C++ driver per kernel is generated around the source, and the whole is compiled
// with the host compiler against tests/support/metal_shim/metal_stdlib (the same shim the
// emitter tests use; runner.py there is the Python twin of this file).
#ifndef DOTCOMPUTE_METAL_DOUBLE_MSL_DRIVER_H
#define DOTCOMPUTE_METAL_DOUBLE_MSL_DRIVER_H

#include <string>
#include <vector>

namespace mtldouble {

struct KernelDecl {
  std::string name;
  int buffer_slots = 0;   // 1 + the highest [[buffer(i)]]
  bool threaded = false;  // runs its work-items as fibers (barriers)
  std::string call_args;  // the driver's argument list for the kernel's parameters
};

// Signature of the generated per-kernel entry point `dc_run_<name>`.
typedef int (*RunFn)(void** args, const unsigned long long* grid, const unsigned long long* group, int threaded,
                     char* err, int errlen);

// Parses every `kernel void NAME(...)` of `msl`; false with `error` set when a parameter
// is something the double cannot bind.
bool parse_kernels(const std::string& msl, std::vector<KernelDecl>* out, std::string* error);

// The full C++ translation unit: prologue, the MSL (as "program_source"), and the drivers.
std::string driver_source(const std::string& msl, const std::vector<KernelDecl>& kernels);

// Compiles `msl` into a shared object (cached on disk by content hash) and returns its path;
// on failure returns "" and puts the compiler's log into `log`.
std::string compile_msl(const std::string& msl, std::vector<KernelDecl>* kernels, std::string* log);

}  // namespace mtldouble

#endif

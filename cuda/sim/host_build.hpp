// What a kernel's host build needs around the compiler: running it in a private folder
// (cpp/support's host_process.hpp, shared with the CPU backend), the shim headers written into that
// folder, and the shim's runtime object and precompiled header, made once per process.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "host_process.hpp"

namespace dcsim_lib {

using dcsupport::TempDir;
using dcsupport::write_file;

// Runs argv in `dir` with stdout and stderr going to `log_path`, read back into `log` with the
// folder's name taken out of it (diagnostics then name kernel.cu, dcsim_cuda.h); returns the exit
// status (128 + the signal when one ended it; -1: did not run, `log` says why).
int run(const std::vector<std::string>& argv, const std::string& dir, const std::string& log_path, std::string& log);

// The shim headers a build uses: the ones embedded in this library, or, for work on the shim itself,
// the same files read from $DOTCOMPUTE_CUDA_SIM_SHIM_DIR (a checkout's cuda/sim/shim) when it is set,
// so that a header edit needs no rebuild of the library. Read once; the identity hashes what is used.
const std::vector<std::pair<std::string, std::string>>& shim_files();

// Writes the shim headers into `dir` (dcsim_cuda.h at its top, the CUDA headers under include/).
void write_shim_files(const std::string& dir);

// What a process builds once per set of kernel build options (`flags`: the compiler, its options,
// -D__CUDA_ARCH__ and the user's -D/-I) and every later plain GCC build of a kernel reuses:
// - runtime_object: the runtime half of the shim (the block scheduler, fibers, dcsim_run) compiled
//   with DCSIM_SPLIT_RUNTIME, linked beside the kernel's own unit, which then defines
//   DCSIM_SPLIT_RUNTIME and DCSIM_KERNEL_ONLY (dcsim_cuda.h says what they change);
// - pch: dcsim_cuda.h precompiled (GCC's .gch) for the kernel's unit, or "".
// On our 2-core machines a kernel's plain build took ~0.9 s, 0.35 s of it parsing the shim and 0.35 s
// compiling the runtime; with both shared, ~0.2 s. The two cost about two builds, so they are made at a
// process's third build with the same flags, in a private folder the process removes when it exits.
// GCC uses a .gch only when the build's options and macros match the ones it was made with and
// otherwise reads the header, so the .gch changes how long a build takes, never what it produces.
// Both empty while not yet worth making or when the runtime object could not be built (the kernel is
// then built whole, as before).
struct SharedShim {
  std::string runtime_object;
  std::string pch;
};
SharedShim shared_shim(const std::vector<std::string>& flags);

}  // namespace dcsim_lib

// What a kernel's host build needs around the compiler: running it, a private folder, the shim
// headers written into that folder, and the shim header precompiled once per process.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace dcsim_lib {

// Runs argv in `dir` with stdout and stderr going to `log_path`; returns the exit status (-1: did not run).
int run(const std::vector<std::string>& argv, const std::string& dir, const std::string& log_path, std::string& log);

// A fresh folder under $TMPDIR (or /tmp), mode 0700, removed with everything in it when the object
// goes -- by the process that made it (a forked child leaves its parent's folder alone).
class TempDir {
 public:
  TempDir() = default;
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();
  // prefix: the folder's name before its random part ("dcsim-" unless told)
  bool create(const std::string& prefix = "dcsim-");
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  long owner_ = 0;  // the pid that made it
};

bool write_file(const std::string& path, const std::string& text);

// The shim headers a build uses: the ones embedded in this library, or, for work on the shim itself,
// the same files read from $DOTCOMPUTE_CUDA_SIM_SHIM_DIR (a checkout's cuda/sim/shim) when it is set,
// so that a header edit needs no rebuild of the library. Read once; the identity hashes what is used.
const std::vector<std::pair<std::string, std::string>>& shim_files();

// Writes the shim headers into `dir` (dcsim_cuda.h at its top, the CUDA headers under include/).
void write_shim_files(const std::string& dir);

// The shim header dcsim_cuda.h precompiled (GCC's .gch) for `flags` (the compiler, its options and
// -D__CUDA_ARCH__), or "" while none is worth building or it could not be built. Parsing the shim
// is ~0.35 s of each kernel's ~0.9 s plain build on our 2-core machines; the .gch costs about
// one build, so it is made at a process's third build for the same flags and kept in a private
// folder until the process exits. GCC looks for `dcsim_cuda.h.gch` beside the header and uses it
// only when the options and macros it was made with match the build's; otherwise it reads the
// header as before, so a mismatch costs time, never a different result.
std::string shim_pch(const std::vector<std::string>& flags);

}  // namespace dcsim_lib

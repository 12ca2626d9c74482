#include "compiler.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdlib>
#include <sstream>

#include "dotcompute/cpu_kernel_abi.h"
#include "host_process.hpp"

#ifndef DOTCOMPUTE_CPU_SOURCE_INCLUDE_DIR
#define DOTCOMPUTE_CPU_SOURCE_INCLUDE_DIR ""
#endif

namespace dccpu {

using dcsupport::ProcessResult;
using dcsupport::TempDir;

namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? v : nullptr;
}

bool has_kernel_header(const std::string& dir) {
  struct stat st {};
  return !dir.empty() && stat((dir + "/dotcompute/cpu_kernel_abi.h").c_str(), &st) == 0;
}

std::string plugin_directory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&plugin_directory), &info) == 0 || info.dli_fname == nullptr) return "";
  std::string file = info.dli_fname;
  const auto slash = file.rfind('/');
  return slash == std::string::npos ? "." : file.substr(0, slash);
}

// Where kernels find <dotcompute/cpu_kernel_abi.h>.
std::string find_include_dir() {
  if (const char* dir = env("DOTCOMPUTE_INCLUDE_DIR")) return dir;
  const std::string here = plugin_directory();
  if (!here.empty()) {
    // Wheel layout: <pkg>/plugins/ beside <pkg>/include/; CMake install
    // layout: <prefix>/lib/python/dotcompute/plugins beside <prefix>/include.
    for (const char* rel : {"/../include", "/../../../../include"}) {
      if (has_kernel_header(here + rel)) return here + rel;
    }
  }
  // A build tree: the source checkout's headers.
  if (has_kernel_header(DOTCOMPUTE_CPU_SOURCE_INCLUDE_DIR)) return DOTCOMPUTE_CPU_SOURCE_INCLUDE_DIR;
  return "";
}

std::string join(const std::vector<std::string>& words) {
  std::string s;
  for (const auto& w : words) {
    if (!s.empty()) s += ' ';
    s += w;
  }
  return s;
}

const char* kInstallHint =
    "Install a C++ compiler (e.g. `apt-get install g++`) or set DOTCOMPUTE_CXX to the path of one.";

}  // namespace

std::vector<std::string> split_words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  std::string w;
  while (in >> w) words.push_back(w);
  return words;
}

Compiler::Compiler(const HostInfo& host) {
  std::string notes;
  auto try_command = [&](const std::string& text, const char* origin) {
    std::vector<std::string> words = split_words(text);
    if (words.empty()) return false;
    const std::string exe = dcsupport::find_executable(words[0]);
    if (exe.empty()) {
      notes += std::string(origin) + "='" + text + "' is not an executable on PATH; ";
      return false;
    }
    words[0] = exe;
    command_ = words;
    path_ = exe;
    return true;
  };
  if (const char* explicit_cxx = env("DOTCOMPUTE_CXX")) {
    // An explicit choice is never replaced by a guess.
    if (!try_command(explicit_cxx, "DOTCOMPUTE_CXX"))
      reason_ = "cpu: no C++ compiler: " + notes + kInstallHint;
  } else {
    bool found = false;
    if (const char* cxx = env("CXX")) found = try_command(cxx, "CXX");
    for (const char* name : {"c++", "g++", "clang++"}) {
      if (found) break;
      found = try_command(name, name);
    }
    if (!found)
      reason_ = "cpu: no C++ compiler found (looked for $DOTCOMPUTE_CXX, $CXX, c++, g++ and clang++ on PATH). " +
                std::string(kInstallHint);
  }

  include_dir_ = find_include_dir();
  flags_ = {"-O3", "-std=c++17", "-fPIC", "-shared"};
  flags_.insert(flags_.end(), host.march_flags.begin(), host.march_flags.end());
  // IEEE results stay intact (no -ffast-math); errno and trap semantics are
  // what blocks vectorising math calls, so only those go. No contraction either:
  // with -march=native GCC fuses a*b+c into one FMA by default (one rounding where
  // numpy has two); a kernel's own options (contract=True, fastmath=True) come
  // later on the command line and turn it back on.
  flags_.insert(flags_.end(), {"-fno-math-errno", "-fno-trapping-math", "-fopenmp-simd", "-ffp-contract=off"});
}

dc_status Compiler::identity(std::string& out, std::string& error) {
  std::call_once(identity_once_, [&] {
    if (!available()) {
      identity_status_ = DC_ERROR_UNAVAILABLE;
      identity_error_ = reason_;
      return;
    }
    TempDir dir;
    std::string err;
    if (!dir.create("dotcompute-cpu-", err)) {
      identity_status_ = DC_ERROR_INTERNAL;
      identity_error_ = "cpu: " + err;
      return;
    }
    std::vector<std::string> argv = command_;
    argv.push_back("--version");
    ProcessResult result;
    if (!dcsupport::run_process(argv, dir.path(), dir.path() + "/version.txt", result, err) || result.exit_code != 0) {
      identity_status_ = DC_ERROR_UNAVAILABLE;
      identity_error_ = "cpu: the C++ compiler " + join(command_) + " does not run (`--version` failed" +
                        (err.empty() ? "" : ": " + err) + "). " + kInstallHint;
      return;
    }
    std::string first = result.output.substr(0, result.output.find('\n'));
    identity_ = join(command_) + " | " + first + " | " + join(flags_) + " | cpu kernel ABI " +
                std::to_string(DC_CPU_KERNEL_ABI_VERSION);
  });
  if (identity_status_ != DC_OK) {
    error = identity_error_;
    return identity_status_;
  }
  out = identity_;
  return DC_OK;
}

dc_status Compiler::compile(const std::string& source, const std::string& options, std::string& binary,
                            std::string& error) const {
  if (!available()) {
    error = reason_;
    return DC_ERROR_UNAVAILABLE;
  }
  TempDir dir;
  if (!dir.create("dotcompute-cpu-", error)) {
    error = "cpu: " + error;
    return DC_ERROR_INTERNAL;
  }
  const std::string src = dir.path() + "/kernel.cpp";
  const std::string out = dir.path() + "/kernel.so";
  if (!dcsupport::write_file(src, source)) {
    error = "cpu: cannot write " + src;
    return DC_ERROR_INTERNAL;
  }
  std::vector<std::string> argv = command_;
  argv.insert(argv.end(), flags_.begin(), flags_.end());
  if (!include_dir_.empty()) argv.push_back("-I" + include_dir_);
  for (auto& w : split_words(options)) argv.push_back(std::move(w));
  // Relative names keep the temp path out of diagnostics ("kernel.cpp:3:5: error").
  argv.insert(argv.end(), {"-o", "kernel.so", "kernel.cpp"});
#if !(defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 29)))
  argv[argv.size() - 2] = out;
  argv[argv.size() - 1] = src;
#endif
  ProcessResult result;
  if (!dcsupport::run_process(argv, dir.path(), dir.path() + "/compile.log", result, error)) {
    error = "cpu: " + error;
    return DC_ERROR_UNAVAILABLE;
  }
  if (result.exit_code != 0) {
    error = result.output;
    if (error.empty()) {
      error = result.signal != 0 ? "compiler killed by signal " + std::to_string(result.signal)
                                 : "compiler exited with status " + std::to_string(result.exit_code);
    }
    if (include_dir_.empty())
      error += "\n(note: the dotcompute include directory was not found; set DOTCOMPUTE_INCLUDE_DIR)\n";
    return DC_ERROR_COMPILATION;
  }
  if (!dcsupport::read_file(out, binary) || binary.empty()) {
    error = "cpu: the compiler succeeded but produced no " + out;
    return DC_ERROR_COMPILATION;
  }
  return DC_OK;
}

}  // namespace dccpu

// NVRTC, loaded at run time from the first place that has it (see
// nvrtc_search.cpp for the order), plus the one compile routine the plugin uses.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "dynlib.hpp"
#include "nvrtc_api.h"

namespace dotcompute::cuda {

class Nvrtc {
 public:
  // Tries every candidate of nvrtc_candidates(); on failure returns null and
  // `error` lists what was tried and how to install NVRTC.
  static std::unique_ptr<Nvrtc> load(std::string& error);

  int major() const { return major_; }
  int minor() const { return minor_; }
  // CUDA-style version number, comparable with cuDriverGetVersion: 12090 for 12.9.
  int version_number() const { return major_ * 1000 + minor_ * 10; }
  const std::string& path() const { return lib_.path(); }
  // The SM numbers (e.g. 90 for sm_90) this NVRTC can generate code for.
  const std::vector<int>& supported_archs() const { return archs_; }

  struct Result {
    bool ok = false;
    std::string output;  // CUBIN bytes, or PTX text including its terminating NUL
    std::string log;     // the compiler's log (errors and warnings)
    std::vector<std::string> lowered;  // per name expression: the mangled name of the kernel it names
  };
  // Compiles `source` for `arch` ("sm_90" -> CUBIN, "compute_90" -> PTX). Each of `name_expressions`
  // (e.g. "MatrixMul<32>") is registered with the program, which instantiates the template it names;
  // its lowered (mangled) name, the name the module exports the kernel under, is in Result::lowered.
  Result compile(const std::string& source, const std::string& arch, const std::vector<std::string>& options,
                 const std::string& program_name, const std::vector<std::string>& name_expressions = {}) const;

 private:
  DynLib builtins_;  // kept open: NVRTC 13 wheels need it preloaded (no RPATH)
  DynLib lib_;
  int major_ = 0;
  int minor_ = 0;
  std::vector<int> archs_;
  PFN_nvrtcGetErrorString getErrorString_ = nullptr;
  PFN_nvrtcCreateProgram createProgram_ = nullptr;
  PFN_nvrtcDestroyProgram destroyProgram_ = nullptr;
  PFN_nvrtcCompileProgram compileProgram_ = nullptr;
  PFN_nvrtcGetProgramLogSize getProgramLogSize_ = nullptr;
  PFN_nvrtcGetProgramLog getProgramLog_ = nullptr;
  PFN_nvrtcGetCUBINSize getCUBINSize_ = nullptr;
  PFN_nvrtcGetCUBIN getCUBIN_ = nullptr;
  PFN_nvrtcGetPTXSize getPTXSize_ = nullptr;
  PFN_nvrtcGetPTX getPTX_ = nullptr;
  PFN_nvrtcAddNameExpression addNameExpression_ = nullptr;
  PFN_nvrtcGetLoweredName getLoweredName_ = nullptr;
};

// Where NVRTC is looked for, in order:
//  1. DOTCOMPUTE_NVRTC (a file; when set, nothing else is tried);
//  2. the nvidia-cuda-nvrtc wheels next to this package: <site-packages>/nvidia/*/lib,
//     found relative to the plugin's own file (<site-packages>/dotcompute/plugins/);
//  3. $CUDA_PATH/lib64, $CUDA_HOME/lib64, /usr/local/cuda/lib64;
//  4. the dynamic loader's own search (libnvrtc.so.13, .so.12, .so).
std::vector<std::string> nvrtc_candidates();

// The NVRTC library files in `dir`, newest version first (builtins and "alt" variants excluded).
std::vector<std::string> nvrtc_files_in(const std::string& dir);

}  // namespace dotcompute::cuda

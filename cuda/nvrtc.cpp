#include "nvrtc.hpp"

#include <dirent.h>

#include <algorithm>

namespace dotcompute::cuda {

namespace {

std::string directory_of(const std::string& file) {
  const auto slash = file.rfind('/');
  return slash == std::string::npos ? std::string() : file.substr(0, slash);
}

// NVRTC 13 wheels ship libnvrtc without an RPATH to its builtins library, so
// it must already be loaded, globally, before libnvrtc is.
DynLib preload_builtins(const std::string& dir) {
  DynLib lib;
  if (dir.empty()) return lib;
  DIR* d = opendir(dir.c_str());
  if (!d) return lib;
  std::vector<std::string> names;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.rfind("libnvrtc-builtins.so", 0) == 0) names.push_back(name);
  }
  closedir(d);
  std::sort(names.rbegin(), names.rend());
  for (const auto& name : names) {
    lib = DynLib::open(dir + "/" + name, RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE, nullptr);
    if (lib) break;
  }
  return lib;
}

}  // namespace

std::unique_ptr<Nvrtc> Nvrtc::load(std::string& error) {
  std::string tried;
  for (const auto& candidate : nvrtc_candidates()) {
    auto n = std::unique_ptr<Nvrtc>(new Nvrtc());
    n->builtins_ = preload_builtins(directory_of(candidate));
    std::string why;
    // Never unloaded: NVRTC keeps process-wide allocations that a dlclose would strand,
    // and a re-initialized backend then finds it already loaded.
    n->lib_ = DynLib::open(candidate, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE, &why);
    if (!n->lib_) {
      tried += "\n  " + candidate + ": " + why;
      continue;
    }
    std::string missing;
    PFN_nvrtcVersion version = nullptr;
    PFN_nvrtcGetNumSupportedArchs num_archs = nullptr;
    PFN_nvrtcGetSupportedArchs archs = nullptr;
    resolve(n->lib_, version, "nvrtcVersion", missing);
    resolve(n->lib_, n->getErrorString_, "nvrtcGetErrorString", missing);
    resolve(n->lib_, n->createProgram_, "nvrtcCreateProgram", missing);
    resolve(n->lib_, n->destroyProgram_, "nvrtcDestroyProgram", missing);
    resolve(n->lib_, n->compileProgram_, "nvrtcCompileProgram", missing);
    resolve(n->lib_, n->getProgramLogSize_, "nvrtcGetProgramLogSize", missing);
    resolve(n->lib_, n->getProgramLog_, "nvrtcGetProgramLog", missing);
    resolve(n->lib_, n->getCUBINSize_, "nvrtcGetCUBINSize", missing);
    resolve(n->lib_, n->getCUBIN_, "nvrtcGetCUBIN", missing);
    resolve(n->lib_, n->getPTXSize_, "nvrtcGetPTXSize", missing);
    resolve(n->lib_, n->getPTX_, "nvrtcGetPTX", missing);
    resolve(n->lib_, n->addNameExpression_, "nvrtcAddNameExpression", missing);
    resolve(n->lib_, n->getLoweredName_, "nvrtcGetLoweredName", missing);
    resolve(n->lib_, num_archs, "nvrtcGetNumSupportedArchs", missing);
    resolve(n->lib_, archs, "nvrtcGetSupportedArchs", missing);
    if (!missing.empty()) {
      tried += "\n  " + candidate + ": lacks " + missing + " (NVRTC 11.2 or newer is required)";
      continue;
    }
    version(&n->major_, &n->minor_);
    int count = 0;
    if (num_archs(&count) == NVRTC_SUCCESS && count > 0) {
      n->archs_.resize(static_cast<size_t>(count));
      if (archs(n->archs_.data()) != NVRTC_SUCCESS) n->archs_.clear();
    }
    return n;
  }
  error = "NVRTC not found; install it with `pip install dotcompute[cuda]` (nvidia-cuda-nvrtc-cu12) "
          "or set DOTCOMPUTE_NVRTC to the path of libnvrtc.so. Tried:" + tried;
  return nullptr;
}

Nvrtc::Result Nvrtc::compile(const std::string& source, const std::string& arch,
                             const std::vector<std::string>& options, const std::string& program_name,
                             const std::vector<std::string>& name_expressions) const {
  Result result;
  nvrtcProgram prog = nullptr;
  nvrtcResult rc = createProgram_(&prog, source.c_str(), program_name.c_str(), 0, nullptr, nullptr);
  if (rc != NVRTC_SUCCESS) {
    result.log = std::string("nvrtcCreateProgram failed: ") + getErrorString_(rc);
    return result;
  }
  struct ProgramGuard {
    PFN_nvrtcDestroyProgram destroy;
    nvrtcProgram* prog;
    ~ProgramGuard() { destroy(prog); }
  } guard{destroyProgram_, &prog};

  for (const auto& expr : name_expressions) {
    rc = addNameExpression_(prog, expr.c_str());
    if (rc != NVRTC_SUCCESS) {
      result.log = "nvrtcAddNameExpression(\"" + expr + "\") failed: " + getErrorString_(rc);
      return result;
    }
  }

  std::vector<std::string> all = {"--gpu-architecture=" + arch};
  all.insert(all.end(), options.begin(), options.end());
  std::vector<const char*> argv;
  for (const auto& o : all) argv.push_back(o.c_str());
  rc = compileProgram_(prog, static_cast<int>(argv.size()), argv.data());

  size_t log_size = 0;
  if (getProgramLogSize_(prog, &log_size) == NVRTC_SUCCESS && log_size > 1) {
    result.log.resize(log_size);
    getProgramLog_(prog, result.log.data());
    result.log.resize(log_size - 1);  // drop the terminating NUL
  }
  if (rc != NVRTC_SUCCESS) {
    if (result.log.empty()) result.log = std::string("nvrtcCompileProgram failed: ") + getErrorString_(rc);
    return result;
  }

  const bool cubin = arch.rfind("sm_", 0) == 0;
  size_t size = 0;
  rc = cubin ? getCUBINSize_(prog, &size) : getPTXSize_(prog, &size);
  if (rc == NVRTC_SUCCESS) {
    result.output.resize(size);
    rc = cubin ? getCUBIN_(prog, result.output.data()) : getPTX_(prog, result.output.data());
  }
  if (rc != NVRTC_SUCCESS) {
    result.log += std::string("\nretrieving the ") + (cubin ? "CUBIN" : "PTX") + " failed: " + getErrorString_(rc);
    return result;
  }
  for (const auto& expr : name_expressions) {
    const char* lowered = nullptr;
    rc = getLoweredName_(prog, expr.c_str(), &lowered);
    if (rc != NVRTC_SUCCESS || !lowered) {
      result.log += "\nthe kernel name '" + expr + "' names no __global__ function NVRTC could instantiate (" +
                    getErrorString_(rc) + ")";
      return result;
    }
    result.lowered.emplace_back(lowered);
  }
  result.ok = true;
  return result;
}

}  // namespace dotcompute::cuda

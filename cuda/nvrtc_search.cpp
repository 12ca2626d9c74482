#include <dirent.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "nvrtc.hpp"

namespace dotcompute::cuda {

namespace {

bool is_nvrtc_file(const std::string& name) {
  const std::string prefix = "libnvrtc.so";
  if (name.compare(0, prefix.size(), prefix) != 0) return false;
  // Only "libnvrtc.so" followed by ".<digits>" groups: skips libnvrtc.alt.so and builtins.
  for (size_t i = prefix.size(); i < name.size(); ++i) {
    const char c = name[i];
    if (c != '.' && (c < '0' || c > '9')) return false;
  }
  return true;
}

std::vector<std::string> subdirs(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") out.push_back(dir + "/" + name);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

std::string plugin_directory() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&plugin_directory), &info) || !info.dli_fname) return {};
  std::string file = info.dli_fname;
  const auto slash = file.rfind('/');
  return slash == std::string::npos ? std::string(".") : file.substr(0, slash);
}

}  // namespace

std::vector<std::string> nvrtc_files_in(const std::string& dir) {
  std::vector<std::string> files;
  DIR* d = opendir(dir.c_str());
  if (!d) return files;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (is_nvrtc_file(name)) files.push_back(dir + "/" + name);
  }
  closedir(d);
  // Longer names carry more version digits; ordering by name descending puts .so.13 before .so.12.
  std::sort(files.begin(), files.end(), [](const std::string& a, const std::string& b) { return a > b; });
  return files;
}

std::vector<std::string> nvrtc_candidates() {
  if (const char* explicit_path = std::getenv("DOTCOMPUTE_NVRTC"); explicit_path && *explicit_path)
    return {explicit_path};

  std::vector<std::string> out;
  auto add_dir = [&out](const std::string& dir) {
    for (auto& f : nvrtc_files_in(dir)) out.push_back(f);
  };
  // The wheels install nvidia/cuda_nvrtc/lib (CUDA 12) or nvidia/cu13/lib (CUDA 13).
  const std::string plugins = plugin_directory();
  if (!plugins.empty()) {
    for (const auto& pkg : subdirs(plugins + "/../../nvidia")) add_dir(pkg + "/lib");
  }
  for (const char* var : {"CUDA_PATH", "CUDA_HOME"}) {
    if (const char* root = std::getenv(var); root && *root) add_dir(std::string(root) + "/lib64");
  }
  add_dir("/usr/local/cuda/lib64");
  for (const char* soname : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}) out.push_back(soname);
  return out;
}

}  // namespace dotcompute::cuda

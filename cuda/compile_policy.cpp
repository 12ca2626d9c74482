#include "compile_policy.hpp"

#include <algorithm>
#include <sstream>

namespace dotcompute::cuda {

CompileTarget choose_target(int sm, int driver_version, int nvrtc_version, const std::vector<int>& supported) {
  CompileTarget t;
  const bool known = supported.empty() || std::find(supported.begin(), supported.end(), sm) != supported.end();
  int target_sm = sm;
  if (!known) {
    int best = 0;
    for (int s : supported)
      if (s <= sm) best = std::max(best, s);
    target_sm = best ? best : sm;
    t.ptx = true;
    t.reason = "NVRTC cannot generate code for sm_" + std::to_string(sm);
  }
  if (driver_version < nvrtc_version) {
    t.ptx = true;
    t.reason = "the driver (" + std::to_string(driver_version) + ") is older than NVRTC (" +
               std::to_string(nvrtc_version) + ")";
  }
  t.arch = (t.ptx ? "compute_" : "sm_") + std::to_string(target_sm);
  return t;
}

std::vector<std::string> split_options(const char* options) {
  std::vector<std::string> out;
  if (!options) return out;
  std::istringstream in(options);
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

}  // namespace dotcompute::cuda

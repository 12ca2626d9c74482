#include "compile_policy.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
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

std::vector<std::string> name_expressions_in(const std::string& source) {
  std::vector<std::string> out;
  const std::string marker = kNameExpressionMarker;
  for (size_t at = source.find(marker); at != std::string::npos; at = source.find(marker, at + 1)) {
    if (at != 0 && source[at - 1] != '\n') continue;  // only at the start of a line
    const size_t begin = at + marker.size();
    size_t end = source.find('\n', begin);
    if (end == std::string::npos) end = source.size();
    while (end > begin && (source[end - 1] == ' ' || source[end - 1] == '\r' || source[end - 1] == '\t')) --end;
    if (end > begin) out.push_back(source.substr(begin, end - begin));
  }
  return out;
}

namespace {

constexpr char kNamesMagic[8] = {'D', 'C', 'N', 'A', 'M', 'E', 'S', '1'};

void put_u32(std::string& out, uint32_t v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); }

}  // namespace

std::string wrap_with_names(const NameMap& names, const std::string& image) {
  std::string out(kNamesMagic, sizeof kNamesMagic);
  put_u32(out, static_cast<uint32_t>(names.size()));
  for (const auto& [expr, lowered] : names) {
    put_u32(out, static_cast<uint32_t>(expr.size()));
    out += expr;
    put_u32(out, static_cast<uint32_t>(lowered.size()));
    out += lowered;
  }
  out += image;
  return out;
}

bool unwrap_names(const void* data, size_t size, NameMap& names, const void*& image, size_t& image_size,
                  std::string& error) {
  names.clear();
  const char* p = static_cast<const char*>(data);
  if (size < sizeof kNamesMagic || std::memcmp(p, kNamesMagic, sizeof kNamesMagic) != 0) return false;
  size_t at = sizeof kNamesMagic;
  auto get_u32 = [&](uint32_t& v) {
    if (size - at < sizeof v) return false;
    std::memcpy(&v, p + at, sizeof v);
    at += sizeof v;
    return true;
  };
  auto get_text = [&](std::string& s) {
    uint32_t n = 0;
    if (!get_u32(n) || size - at < n) return false;
    s.assign(p + at, n);
    at += n;
    return true;
  };
  uint32_t count = 0;
  bool ok = get_u32(count);
  for (uint32_t i = 0; ok && i < count; ++i) {
    std::string expr, lowered;
    ok = get_text(expr) && get_text(lowered);
    if (ok) names.emplace_back(std::move(expr), std::move(lowered));
  }
  if (!ok || at == size) {
    names.clear();
    error = "the compiled module's kernel-name table is damaged";
    return false;
  }
  image = p + at;
  image_size = size - at;
  return true;
}

}  // namespace dotcompute::cuda

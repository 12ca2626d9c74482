// Small string helpers shared by the runtime's sources (internal, not installed).
#pragma once

#include <string>

namespace dotcompute::detail {

inline bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace dotcompute::detail

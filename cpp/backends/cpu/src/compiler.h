// The host C++ compiler used to build kernels at run time: how it is found,
// the flags it gets, its identity (cache-key material) and the compile step.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "dotcompute/backend_abi.h"
#include "host_info.h"

namespace dccpu {

class Compiler {
 public:
  // Looks the compiler up (DOTCOMPUTE_CXX, CXX, then c++, g++, clang++ on
  // PATH) and the kernel include directory. Cheap: runs nothing.
  explicit Compiler(const HostInfo& host);

  bool available() const { return !command_.empty(); }
  // Why no compiler is available, with how to get one.
  const std::string& unavailable_reason() const { return reason_; }
  const std::string& path() const { return path_; }
  const std::string& include_dir() const { return include_dir_; }
  const std::vector<std::string>& flags() const { return flags_; }

  // "<path> | <--version first line> | <flags>", computed once.
  dc_status identity(std::string& out, std::string& error);

  // Builds `source` into a shared object. On DC_ERROR_COMPILATION `error` is
  // the compiler's log.
  dc_status compile(const std::string& source, const std::string& options, std::string& binary,
                    std::string& error) const;

 private:
  std::vector<std::string> command_;  // the compiler (plus any wrapper words from the variable)
  std::string path_;
  std::string reason_;
  std::string include_dir_;
  std::vector<std::string> flags_;
  std::once_flag identity_once_;
  dc_status identity_status_ = DC_OK;
  std::string identity_;
  std::string identity_error_;
};

// Whitespace-separated words of `text`.
std::vector<std::string> split_words(const std::string& text);

}  // namespace dccpu

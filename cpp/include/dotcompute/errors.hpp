// The exception hierarchy of the native core. It mirrors dotcompute.errors in
// Python one-to-one (the bindings translate each type):
//
//   Error                    -> DotComputeError
//   CompilationError         -> CompilationError (.log, .source)
//   BackendUnavailableError  -> BackendUnavailableError (.reason)
//   OutOfMemoryError         -> OutOfMemoryError
//   LaunchError              -> LaunchError
//   PluginError              -> PluginError
//   InvalidArgumentError     -> KernelTypeError (names the parameter)
//   NeedsStaging             -> dotcompute.runtime.NeedsStaging (not user-facing)
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "dotcompute/backend_abi.h"
#include "dotcompute/export.hpp"

namespace dotcompute {

class DOTCOMPUTE_API Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

class DOTCOMPUTE_API CompilationError : public Error {
 public:
  CompilationError(const std::string& message, std::string log, std::string source)
      : Error(message), log_(std::move(log)), source_(std::move(source)) {}
  const std::string& log() const noexcept { return log_; }
  const std::string& source() const noexcept { return source_; }

 private:
  std::string log_;
  std::string source_;
};

class DOTCOMPUTE_API BackendUnavailableError : public Error {
 public:
  BackendUnavailableError(const std::string& message, std::string reason)
      : Error(message), reason_(std::move(reason)) {}
  const std::string& reason() const noexcept { return reason_; }

 private:
  std::string reason_;
};

class DOTCOMPUTE_API OutOfMemoryError : public Error {
 public:
  OutOfMemoryError(const std::string& message, uint64_t requested, uint64_t in_use, uint64_t reserved)
      : Error(message), requested_(requested), in_use_(in_use), reserved_(reserved) {}
  uint64_t requested() const noexcept { return requested_; }
  uint64_t in_use() const noexcept { return in_use_; }
  uint64_t reserved() const noexcept { return reserved_; }

 private:
  uint64_t requested_;
  uint64_t in_use_;
  uint64_t reserved_;
};

class DOTCOMPUTE_API LaunchError : public Error {
 public:
  using Error::Error;
};

class DOTCOMPUTE_API PluginError : public Error {
 public:
  using Error::Error;
};

// A value handed to the library does not fit: a kernel argument of the wrong
// dtype/ndim/kind, a bad shape, an unknown dtype name. `param()` names it.
class DOTCOMPUTE_API InvalidArgumentError : public Error {
 public:
  InvalidArgumentError(const std::string& message, std::string param = "")
      : Error(message), param_(std::move(param)) {}
  const std::string& param() const noexcept { return param_; }

 private:
  std::string param_;
};

// LaunchPlan::launch got a host array for a device without unified memory:
// the caller must stage it through a device Buffer and launch again.
// `index()` is the position of the offending argument.
class DOTCOMPUTE_API NeedsStaging : public Error {
 public:
  NeedsStaging(const std::string& message, std::string param, size_t index)
      : Error(message), param_(std::move(param)), index_(index) {}
  const std::string& param() const noexcept { return param_; }
  size_t index() const noexcept { return index_; }

 private:
  std::string param_;
  size_t index_;
};

// Where a backend call was made: the same status means different things at different sites.
enum class CallSite { Runtime, Compile, Launch };

// Throws the exception that matches a failed backend call's status and call site.
// `what` says which call failed; `detail` is the plugin's last_error() text.
//
//   status               Compile            Launch        Runtime (memory, copies, streams, events, info)
//   OUT_OF_MEMORY        OutOfMemoryError   OutOfMemoryError  OutOfMemoryError
//   COMPILATION          CompilationError   CompilationError  CompilationError
//   LAUNCH               LaunchError        LaunchError       LaunchError (a failed kernel seen by a wait)
//   UNAVAILABLE          BackendUnavailableError everywhere (also a device lost mid-run)
//   INVALID_ARGUMENT     CompilationError   LaunchError       Error
//   UNSUPPORTED          CompilationError   LaunchError       Error
//   INTERNAL and others  Error everywhere
//
// A plugin's INVALID_ARGUMENT never becomes InvalidArgumentError (KernelTypeError in Python):
// that class is for the core's own checks of what the user passed, which name the parameter.
[[noreturn]] DOTCOMPUTE_API void throw_status(dc_status status, const std::string& what, const std::string& detail,
                                              const std::string& source = "", CallSite site = CallSite::Runtime);

}  // namespace dotcompute

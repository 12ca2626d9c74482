#include "dotcompute/errors.hpp"

namespace dotcompute {

void throw_status(dc_status status, const std::string& what, const std::string& detail, const std::string& source) {
  std::string message = what;
  if (!detail.empty()) message += ": " + detail;
  switch (status) {
    case DC_ERROR_OUT_OF_MEMORY:
      throw OutOfMemoryError(message, 0, 0, 0);
    case DC_ERROR_COMPILATION:
      throw CompilationError(message, detail, source);
    case DC_ERROR_LAUNCH:
      throw LaunchError(message);
    case DC_ERROR_UNAVAILABLE:
      throw BackendUnavailableError(message, detail.empty() ? what : detail);
    case DC_ERROR_INVALID_ARGUMENT:
      throw InvalidArgumentError(message);
    case DC_ERROR_UNSUPPORTED:
      throw Error(message + " (not supported by this backend)");
    case DC_OK:
    case DC_ERROR_INTERNAL:
    default:
      throw Error(message);
  }
}

}  // namespace dotcompute

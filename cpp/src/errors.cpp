#include "dotcompute/errors.hpp"

namespace dotcompute {

void throw_status(dc_status status, const std::string& what, const std::string& detail, const std::string& source,
                  CallSite site) {
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
    case DC_ERROR_UNSUPPORTED: {
      const std::string why = status == DC_ERROR_UNSUPPORTED ? " (not supported by this backend)"
                                                             : " (the backend rejected the request)";
      if (site == CallSite::Compile) throw CompilationError(message + why, detail, source);
      if (site == CallSite::Launch) throw LaunchError(message + why);
      throw Error(message + why);
    }
    case DC_OK:
    case DC_ERROR_INTERNAL:
    default:
      throw Error(message);
  }
}

}  // namespace dotcompute

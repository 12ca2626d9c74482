#include "status.h"

#include "cl_loader.h"

namespace dcl {
namespace {
thread_local std::string t_last_error;
}

dc_status fail(dc_status status, std::string message) {
  t_last_error = std::move(message);
  return status;
}

const char* last_error() noexcept { return t_last_error.c_str(); }

void clear_error() noexcept { t_last_error.clear(); }

dc_status status_for(cl_int code, dc_status otherwise) {
  switch (code) {
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
    case CL_OUT_OF_HOST_MEMORY:
    case CL_INVALID_BUFFER_SIZE:
      return DC_ERROR_OUT_OF_MEMORY;
    default:
      return otherwise;
  }
}

dc_status fail_cl(const char* call, cl_int code, dc_status otherwise, const std::string& what) {
  std::string message = what.empty() ? call_error(call, code) : what + ": " + call_error(call, code);
  return fail(status_for(code, otherwise), std::move(message));
}

}  // namespace dcl

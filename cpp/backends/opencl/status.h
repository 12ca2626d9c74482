// Status codes and the per-thread error message of the plugin ABI. Every ABI
// function runs its body through `guarded`, so no exception leaves the plugin.
#pragma once

#include <new>
#include <string>

#include "cl_api.h"
#include "dotcompute/backend_abi.h"

namespace dcl {

// Sets last_error() for this thread and returns `status`.
dc_status fail(dc_status status, std::string message);
// The message of the last failure on this thread ("" after a success).
const char* last_error() noexcept;
void clear_error() noexcept;

// DC_ERROR_OUT_OF_MEMORY for the codes that mean memory ran out, else `otherwise`.
dc_status status_for(cl_int code, dc_status otherwise);
// fail(status_for(code, otherwise), "<what>: <call> failed: <NAME> (<code>)").
dc_status fail_cl(const char* call, cl_int code, dc_status otherwise, const std::string& what = "");

template <typename F>
dc_status guarded(F&& body) noexcept {
  try {
    clear_error();
    return body();
  } catch (const std::bad_alloc&) {
    return fail(DC_ERROR_OUT_OF_MEMORY, "out of host memory in the OpenCL plugin");
  } catch (const std::exception& e) {
    return fail(DC_ERROR_INTERNAL, std::string("OpenCL plugin internal error: ") + e.what());
  } catch (...) {
    return fail(DC_ERROR_INTERNAL, "OpenCL plugin internal error");
  }
}

}  // namespace dcl

// Finds libOpenCL.so.1 (the ICD loader) with dlopen and resolves the entry
// points of cl_api.h. The library stays loaded for the life of the process:
// OpenCL drivers start threads that must not see their code unmapped.
#pragma once

#include <string>

#include "cl_api.h"

// Tests build a variant of the plugin with a library name that cannot exist.
#ifndef DC_OPENCL_LOADER_NAME
#define DC_OPENCL_LOADER_NAME "libOpenCL.so.1"
#endif

namespace dcl {

// Loads the library on first call; later calls return the same result.
// On failure returns nullptr and sets `why` to a message for the user.
const ClApi* load_api(std::string* why);

// The loaded table; only valid after load_api succeeded.
const ClApi& api();

// "CL_OUT_OF_RESOURCES" for -5; "CL_UNKNOWN_ERROR" for codes it does not know.
const char* error_name(cl_int code);

// "<call> failed: <NAME> (<code>)".
std::string call_error(const char* call, cl_int code);

}  // namespace dcl

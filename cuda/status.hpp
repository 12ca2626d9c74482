// The plugin's error channel: a thread-local last-error message and the
// mapping from CUresult to dc_status, so every entry point reports failures
// the same way and no exception ever crosses the C ABI.
#pragma once

#include <string>

#include "dotcompute/backend_abi.h"
#include "driver_api.h"

namespace dotcompute::cuda {

class Driver;

// Stores `message` as this thread's last error and returns `status`.
dc_status fail(dc_status status, std::string message);
const char* last_error_message();
void clear_last_error();

// Which dc_status a driver error becomes (out of memory, launch failure, ...).
dc_status map_cuda_result(CUresult result);

// DC_OK for CUDA_SUCCESS; otherwise records "<what> failed: CUDA_ERROR_X (text)".
dc_status check(const Driver& driver, CUresult result, const char* what);

}  // namespace dotcompute::cuda

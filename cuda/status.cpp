#include "status.hpp"

#include "driver.hpp"

namespace dotcompute::cuda {

namespace {
thread_local std::string t_last_error;
}

dc_status fail(dc_status status, std::string message) {
  t_last_error = std::move(message);
  return status;
}

const char* last_error_message() { return t_last_error.c_str(); }

void clear_last_error() { t_last_error.clear(); }

dc_status map_cuda_result(CUresult result) {
  switch (result) {
    case CUDA_SUCCESS:
      return DC_OK;
    case CUDA_ERROR_OUT_OF_MEMORY:
      return DC_ERROR_OUT_OF_MEMORY;
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_INVALID_HANDLE:
    case CUDA_ERROR_INVALID_DEVICE:
    case CUDA_ERROR_NOT_FOUND:
      return DC_ERROR_INVALID_ARGUMENT;
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_DEINITIALIZED:
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_STUB_LIBRARY:
      return DC_ERROR_UNAVAILABLE;
    case CUDA_ERROR_NOT_SUPPORTED:
    case CUDA_ERROR_PEER_ACCESS_UNSUPPORTED:
    case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED:
      return DC_ERROR_UNSUPPORTED;
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
      return DC_ERROR_COMPILATION;
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:  // a device-side assert() failed: the kernel's own failure
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE:
      return DC_ERROR_LAUNCH;
    default:
      return DC_ERROR_INTERNAL;
  }
}

dc_status check(const Driver& driver, CUresult result, const char* what) {
  if (result == CUDA_SUCCESS) return DC_OK;
  return fail(map_cuda_result(result), std::string(what) + " failed: " + driver.describe(result));
}

}  // namespace dotcompute::cuda

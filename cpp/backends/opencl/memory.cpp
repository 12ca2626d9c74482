// Buffers are cl_mem objects; dc_devptr carries the handle, offsets travel beside it.
#include "objects.h"
#include "ops.h"
#include "status.h"

namespace dcl {
namespace {

cl_mem as_mem(dc_devptr p) { return reinterpret_cast<cl_mem>(static_cast<uintptr_t>(p)); }

dc_status check_stream(dc_stream s, const char* op) {
  if (s == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, std::string(op) + ": stream is null");
  return DC_OK;
}

dc_status check_mem(dc_devptr p, const char* op, const char* which) {
  if (p == 0) return fail(DC_ERROR_INVALID_ARGUMENT, std::string(op) + ": " + which + " buffer is null");
  return DC_OK;
}

// Allocation failures are out-of-memory whatever code the driver picked for them.
dc_status alloc_status(cl_int code) {
  return code == CL_OUT_OF_RESOURCES ? DC_ERROR_OUT_OF_MEMORY : status_for(code, DC_ERROR_INTERNAL);
}

}  // namespace

dc_status mem_alloc(int32_t device, uint64_t bytes, dc_devptr* out) {
  return guarded([&] {
    Device* dev = nullptr;
    if (dc_status st = get_device(device, &dev); st != DC_OK) return st;
    if (out == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "mem_alloc: out is null");
    if (dev->max_alloc != 0 && bytes > dev->max_alloc) {
      return fail(DC_ERROR_OUT_OF_MEMORY, "cannot allocate " + std::to_string(bytes) + " bytes on " + dev->name +
                                              ": the largest single OpenCL allocation is " +
                                              std::to_string(dev->max_alloc) + " bytes (CL_DEVICE_MAX_MEM_ALLOC_SIZE)");
    }
    cl_int err = CL_SUCCESS;
    // OpenCL has no empty buffers; a zero-byte request still gets a distinct handle.
    size_t size = bytes == 0 ? 1 : static_cast<size_t>(bytes);
    cl_mem mem = api().clCreateBuffer(dev->context.get(), CL_MEM_READ_WRITE, size, nullptr, &err);
    if (err != CL_SUCCESS || mem == nullptr) {
      return fail(alloc_status(err), "cannot allocate " + std::to_string(bytes) + " bytes on " + dev->name + ": " +
                                         call_error("clCreateBuffer", err));
    }
    *out = static_cast<dc_devptr>(reinterpret_cast<uintptr_t>(mem));
    return DC_OK;
  });
}

dc_status mem_free(int32_t device, dc_devptr ptr) {
  return guarded([&] {
    Device* dev = nullptr;
    if (dc_status st = get_device(device, &dev); st != DC_OK) return st;
    if (ptr == 0) return DC_OK;
    // The driver defers the release until queued commands using the buffer finish.
    cl_int err = api().clReleaseMemObject(as_mem(ptr));
    if (err != CL_SUCCESS) return fail_cl("clReleaseMemObject", err, DC_ERROR_INVALID_ARGUMENT, "mem_free");
    return DC_OK;
  });
}

dc_status memcpy_h2d(dc_stream s, dc_devptr dst, uint64_t dst_offset, const void* src, uint64_t bytes) {
  return guarded([&] {
    if (dc_status st = check_stream(s, "memcpy_h2d"); st != DC_OK) return st;
    if (bytes == 0) return DC_OK;
    if (dc_status st = check_mem(dst, "memcpy_h2d", "destination"); st != DC_OK) return st;
    if (src == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "memcpy_h2d: source pointer is null");
    cl_int err = api().clEnqueueWriteBuffer(s->queue.get(), as_mem(dst), CL_FALSE, dst_offset, bytes, src, 0,
                                            nullptr, nullptr);
    if (err != CL_SUCCESS) {
      return fail_cl("clEnqueueWriteBuffer", err, DC_ERROR_INVALID_ARGUMENT,
                     "host-to-device copy of " + std::to_string(bytes) + " bytes at offset " +
                         std::to_string(dst_offset));
    }
    return DC_OK;
  });
}

dc_status memcpy_d2h(dc_stream s, void* dst, dc_devptr src, uint64_t src_offset, uint64_t bytes) {
  return guarded([&] {
    if (dc_status st = check_stream(s, "memcpy_d2h"); st != DC_OK) return st;
    if (bytes == 0) return DC_OK;
    if (dc_status st = check_mem(src, "memcpy_d2h", "source"); st != DC_OK) return st;
    if (dst == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "memcpy_d2h: destination pointer is null");
    cl_int err = api().clEnqueueReadBuffer(s->queue.get(), as_mem(src), CL_FALSE, src_offset, bytes, dst, 0,
                                           nullptr, nullptr);
    if (err != CL_SUCCESS) {
      return fail_cl("clEnqueueReadBuffer", err, DC_ERROR_INVALID_ARGUMENT,
                     "device-to-host copy of " + std::to_string(bytes) + " bytes at offset " +
                         std::to_string(src_offset));
    }
    return DC_OK;
  });
}

dc_status memcpy_d2d(dc_stream s, dc_devptr dst, uint64_t dst_offset, dc_devptr src, uint64_t src_offset,
                     uint64_t bytes) {
  return guarded([&] {
    if (dc_status st = check_stream(s, "memcpy_d2d"); st != DC_OK) return st;
    if (bytes == 0) return DC_OK;
    if (dc_status st = check_mem(dst, "memcpy_d2d", "destination"); st != DC_OK) return st;
    if (dc_status st = check_mem(src, "memcpy_d2d", "source"); st != DC_OK) return st;
    cl_int err = api().clEnqueueCopyBuffer(s->queue.get(), as_mem(src), as_mem(dst), src_offset, dst_offset, bytes,
                                           0, nullptr, nullptr);
    if (err != CL_SUCCESS) {
      return fail_cl("clEnqueueCopyBuffer", err, DC_ERROR_INVALID_ARGUMENT,
                     "device-to-device copy of " + std::to_string(bytes) + " bytes");
    }
    return DC_OK;
  });
}

dc_status memset_d8(dc_stream s, dc_devptr dst, uint64_t offset, uint8_t value, uint64_t bytes) {
  return guarded([&] {
    if (dc_status st = check_stream(s, "memset_d8"); st != DC_OK) return st;
    if (bytes == 0) return DC_OK;
    if (dc_status st = check_mem(dst, "memset_d8", "destination"); st != DC_OK) return st;
    // The pattern is copied by the driver before clEnqueueFillBuffer returns.
    cl_int err = api().clEnqueueFillBuffer(s->queue.get(), as_mem(dst), &value, 1, offset, bytes, 0, nullptr,
                                           nullptr);
    if (err != CL_SUCCESS) {
      return fail_cl("clEnqueueFillBuffer", err, DC_ERROR_INVALID_ARGUMENT,
                     "fill of " + std::to_string(bytes) + " bytes at offset " + std::to_string(offset));
    }
    return DC_OK;
  });
}

}  // namespace dcl

// native_handle(): the OpenCL objects behind dotcompute's, for vendor libraries (CLBlast, clFFT)
// that enqueue on the same in-order queue and read the same cl_mem.
#include <cstdint>
#include <string>

#include "objects.h"
#include "ops.h"
#include "status.h"

namespace dcl {

dc_status native_handle(uint32_t kind, uint64_t object, uint64_t* out) {
  return guarded([&] {
    if (out == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "native_handle: out is null");
    switch (kind) {
      case DC_NATIVE_STREAM: {
        auto* s = reinterpret_cast<dc_stream>(static_cast<uintptr_t>(object));
        if (s == nullptr) return fail(DC_ERROR_INVALID_ARGUMENT, "native_handle: the stream is null");
        *out = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(s->queue.get()));
        return DC_OK;
      }
      case DC_NATIVE_BUFFER:
        // dc_devptr already is the cl_mem (memory.cpp); kept behind the call so callers never rely on it
        if (object == 0) return fail(DC_ERROR_INVALID_ARGUMENT, "native_handle: the buffer handle is null");
        *out = object;
        return DC_OK;
      case DC_NATIVE_CONTEXT: {
        if (object > static_cast<uint64_t>(INT32_MAX))
          return fail(DC_ERROR_INVALID_ARGUMENT, "native_handle: device index " + std::to_string(object));
        Device* dev = nullptr;
        if (dc_status st = get_device(static_cast<int32_t>(object), &dev); st != DC_OK) return st;
        *out = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(dev->context.get()));
        return DC_OK;
      }
      default:
        return fail(DC_ERROR_UNSUPPORTED, "native_handle: unknown kind " + std::to_string(kind));
    }
  });
}

}  // namespace dcl

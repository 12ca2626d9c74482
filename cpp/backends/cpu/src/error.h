// Status + message reporting across the plugin C ABI: no exception may leave
// an entry point, so every failure becomes a dc_status and a thread-local text.
#pragma once

#include <exception>
#include <new>
#include <string>
#include <system_error>

#include "dotcompute/backend_abi.h"

namespace dccpu {

// Stores `message` as this thread's last error and returns `status`.
dc_status fail(dc_status status, std::string message);

const char* last_error_text();

// Runs `body` (returning dc_status) and turns any escaping C++ exception into
// DC_ERROR_INTERNAL / DC_ERROR_OUT_OF_MEMORY, so the C ABI never sees one.
template <typename Body>
dc_status guarded(const char* where, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return fail(DC_ERROR_OUT_OF_MEMORY, std::string("cpu: out of host memory in ") + where);
  } catch (const std::system_error& e) {
    // std::thread's EAGAIN: no thread could be started (RLIMIT_NPROC, or an address-space cap with no
    // room for its stack) -- a resource running out, as the caller should hear it, not an internal error
    if (e.code() == std::errc::resource_unavailable_try_again)
      return fail(DC_ERROR_OUT_OF_MEMORY, std::string("cpu: no thread could be started in ") + where +
                                              " (the process is out of threads or address space): " + e.what());
    return fail(DC_ERROR_INTERNAL, std::string("cpu: internal error in ") + where + ": " + e.what());
  } catch (const std::exception& e) {
    return fail(DC_ERROR_INTERNAL, std::string("cpu: internal error in ") + where + ": " + e.what());
  } catch (...) {
    return fail(DC_ERROR_INTERNAL, std::string("cpu: unknown internal error in ") + where);
  }
}

}  // namespace dccpu

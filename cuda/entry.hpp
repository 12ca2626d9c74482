// What every ABI entry point (plugin.cpp, extension.cpp) starts with: the
// initialized state, the device made current, and the exception guard.
#pragma once

#include <exception>
#include <string>

#include "dotcompute/backend_abi.h"
#include "state.hpp"
#include "status.hpp"

#define DC_TRY(expr)                          \
  do {                                        \
    const dc_status dc_try_s_ = (expr);       \
    if (dc_try_s_ != DC_OK) return dc_try_s_; \
  } while (0)

namespace dotcompute::cuda {

// DC_ERROR_UNAVAILABLE unless initialize() succeeded.
dc_status need_state(State*& s);
// The device, with its primary context made current on this thread.
dc_status need_device(int32_t device, State*& s, Device*& dev);
// The stream's device made current; a null stream is device 0's legacy default stream.
dc_status enter_stream(dc_stream st, State*& s, CUstream& cu);
// The loaded driver; only valid after need_state() succeeded.
const Driver& drv();

// No exception may cross the C ABI: every entry point runs inside this guard.
template <auto Fn>
struct Guard;
template <typename... A, dc_status (*Fn)(A...)>
struct Guard<Fn> {
  static dc_status call(A... a) noexcept {
    try {
      return Fn(a...);
    } catch (const std::exception& e) {
      return fail(DC_ERROR_INTERNAL, std::string("internal error in the CUDA backend: ") + e.what());
    } catch (...) {
      return fail(DC_ERROR_INTERNAL, "internal error in the CUDA backend");
    }
  }
};

}  // namespace dotcompute::cuda

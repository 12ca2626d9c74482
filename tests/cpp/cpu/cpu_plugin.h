// Test harness for the CPU backend: loads libdotcompute_cpu.so through the
// plugin C ABI only (as the core does) and wraps its handles in RAII types.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "dotcompute/backend_abi.h"

namespace cputest {

// The loaded, initialised plugin's function table.
const dc_backend& api();
std::string last_error();

// The module built from kernels/tiled_matmul.cpp + kernels/test_kernels.cpp
// (compiled once per process).
dc_module test_module();
dc_kernel kernel(const char* name);
std::string read_kernel_file(const std::string& name);

#define DC_ASSERT_OK(expr)                                                   \
  do {                                                                       \
    const dc_status dc_status_ = (expr);                                     \
    ASSERT_EQ(dc_status_, DC_OK) << #expr << ": " << ::cputest::last_error(); \
  } while (0)

class DeviceBuffer {
 public:
  explicit DeviceBuffer(uint64_t bytes);
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();
  dc_devptr handle() const { return ptr_; }
  template <typename T>
  T* as() const {
    return reinterpret_cast<T*>(ptr_);
  }

 private:
  dc_devptr ptr_ = 0;
};

class Stream {
 public:
  Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream();
  dc_stream get() const { return s_; }
  void sync() const;

 private:
  dc_stream s_ = nullptr;
};

class Event {
 public:
  Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event();
  dc_event get() const { return e_; }

 private:
  dc_event e_ = nullptr;
};

// Kernel arguments; scalar values are owned here until the launch returns.
class Args {
 public:
  Args& buffer(const DeviceBuffer& b) { return buffer(b.handle()); }
  Args& buffer(dc_devptr p) {
    dc_kernel_arg a{};
    a.kind = DC_ARG_BUFFER;
    a.size = sizeof(dc_devptr);
    a.value.buffer = p;
    args_.push_back(a);
    return *this;
  }
  template <typename T>
  Args& scalar(T value) {
    values_.emplace_back(sizeof(T));
    std::memcpy(values_.back().data(), &value, sizeof(T));
    dc_kernel_arg a{};
    a.kind = DC_ARG_SCALAR;
    a.size = sizeof(T);
    a.value.scalar = values_.back().data();
    args_.push_back(a);
    return *this;
  }
  const dc_kernel_arg* data() const { return args_.data(); }
  uint32_t size() const { return static_cast<uint32_t>(args_.size()); }

 private:
  std::vector<dc_kernel_arg> args_;
  std::deque<std::vector<unsigned char>> values_;
};

struct Dims {
  uint64_t global[3] = {1, 1, 1};
  uint32_t local[3] = {0, 0, 0};
  uint32_t dims = 1;
};

dc_status launch(dc_stream s, dc_kernel k, const Dims& d, const Args& args, uint32_t shared_bytes = 0);

}  // namespace cputest

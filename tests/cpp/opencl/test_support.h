// Loads the OpenCL plugin through the C ABI, as the core does, and owns what
// the tests create with it.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "dotcompute/backend_abi.h"

namespace dctest {

// The plugin, dlopened and initialized once per test process.
const dc_backend* plugin();

// The status, and last_error() when it is not DC_OK, for readable assertions.
std::string describe(dc_status st);

#define DC_ASSERT_OK(expr)                                  \
  do {                                                      \
    dc_status dc_st_ = (expr);                              \
    ASSERT_EQ(dc_st_, DC_OK) << ::dctest::describe(dc_st_); \
  } while (0)

class Stream {
 public:
  explicit Stream(int32_t device = 0);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  dc_stream get() const { return s_; }
  void sync() const;

 private:
  dc_stream s_ = nullptr;
};

class DeviceBuffer {
 public:
  explicit DeviceBuffer(uint64_t bytes, int32_t device = 0);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  dc_devptr get() const { return p_; }

 private:
  dc_devptr p_ = 0;
  int32_t device_;
};

class Module {
 public:
  Module() = default;
  explicit Module(dc_module m) : m_(m) {}
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  dc_module get() const { return m_; }
  dc_kernel kernel(const char* name) const;

 private:
  dc_module m_ = nullptr;
};

// compile(): the blob, or an empty vector with the failure's status in *status.
std::vector<uint8_t> compile(const std::string& source, const char* options, dc_status* status);

// The test kernels (kernels.h), compiled once per process, and a module loaded from them.
const std::vector<uint8_t>& test_program_blob();
const Module& test_module();

inline dc_kernel_arg buffer_arg(dc_devptr p) {
  dc_kernel_arg a{};
  a.kind = DC_ARG_BUFFER;
  a.size = sizeof(dc_devptr);
  a.value.buffer = p;
  return a;
}

template <typename T>
dc_kernel_arg scalar_arg(const T& v) {
  dc_kernel_arg a{};
  a.kind = DC_ARG_SCALAR;
  a.size = sizeof(T);
  a.value.scalar = &v;
  return a;
}

inline dc_kernel_arg local_arg(uint32_t bytes) {
  dc_kernel_arg a{};
  a.kind = DC_ARG_LOCAL;
  a.size = bytes;
  return a;
}

dc_launch_config launch_config(std::vector<uint64_t> global, std::vector<uint32_t> local = {});

}  // namespace dctest

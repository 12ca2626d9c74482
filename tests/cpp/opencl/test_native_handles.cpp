// native_handle(): the OpenCL objects behind dotcompute's, checked against the OpenCL API itself
// (libOpenCL.so.1 opened here, as a vendor library would see the handles).
#include <dlfcn.h>

#include <cstdint>
#include <cstring>

#include "test_support.h"

namespace dctest {
namespace {

// The few OpenCL declarations the test needs (the plugin includes no OpenCL header either).
using ClInfoFn = int32_t (*)(void* object, uint32_t param, size_t size, void* value, size_t* size_ret);
constexpr uint32_t kQueueContext = 0x1090;  // CL_QUEUE_CONTEXT
constexpr uint32_t kMemSize = 0x1102;       // CL_MEM_SIZE
constexpr uint32_t kMemContext = 0x1106;    // CL_MEM_CONTEXT

class OpenCL {
 public:
  OpenCL() : lib_(dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL)) {
    if (lib_ != nullptr) {
      queue_info = reinterpret_cast<ClInfoFn>(dlsym(lib_, "clGetCommandQueueInfo"));
      mem_info = reinterpret_cast<ClInfoFn>(dlsym(lib_, "clGetMemObjectInfo"));
    }
  }
  ~OpenCL() {
    if (lib_ != nullptr) dlclose(lib_);
  }
  OpenCL(const OpenCL&) = delete;
  OpenCL& operator=(const OpenCL&) = delete;
  ClInfoFn queue_info = nullptr;
  ClInfoFn mem_info = nullptr;

 private:
  void* lib_;
};

TEST(OpenCLNativeHandles, TheTableHasTheEntry) {
  ASSERT_TRUE(DC_BACKEND_HAS(plugin(), native_handle));
}

TEST(OpenCLNativeHandles, StreamBufferAndContextAreTheOpenCLObjects) {
  OpenCL cl;
  ASSERT_NE(cl.queue_info, nullptr);
  ASSERT_NE(cl.mem_info, nullptr);
  Stream s;
  DeviceBuffer x(4096);
  uint64_t queue = 0, mem = 0, context = 0;
  DC_ASSERT_OK(plugin()->native_handle(DC_NATIVE_STREAM, reinterpret_cast<uintptr_t>(s.get()), &queue));
  DC_ASSERT_OK(plugin()->native_handle(DC_NATIVE_BUFFER, x.get(), &mem));
  DC_ASSERT_OK(plugin()->native_handle(DC_NATIVE_CONTEXT, 0, &context));
  ASSERT_NE(queue, 0u);
  ASSERT_NE(mem, 0u);
  ASSERT_NE(context, 0u);

  void* queue_context = nullptr;
  ASSERT_EQ(cl.queue_info(reinterpret_cast<void*>(queue), kQueueContext, sizeof queue_context, &queue_context,
                          nullptr),
            0);
  EXPECT_EQ(reinterpret_cast<uint64_t>(queue_context), context);
  size_t size = 0;
  ASSERT_EQ(cl.mem_info(reinterpret_cast<void*>(mem), kMemSize, sizeof size, &size, nullptr), 0);
  EXPECT_GE(size, 4096u);
  void* mem_context = nullptr;
  ASSERT_EQ(cl.mem_info(reinterpret_cast<void*>(mem), kMemContext, sizeof mem_context, &mem_context, nullptr), 0);
  EXPECT_EQ(reinterpret_cast<uint64_t>(mem_context), context);

  // Two streams are two queues of one context.
  Stream t;
  uint64_t queue2 = 0;
  DC_ASSERT_OK(plugin()->native_handle(DC_NATIVE_STREAM, reinterpret_cast<uintptr_t>(t.get()), &queue2));
  EXPECT_NE(queue2, queue);
}

TEST(OpenCLNativeHandles, BadArgumentsAreRefused) {
  uint64_t out = 0;
  EXPECT_EQ(plugin()->native_handle(DC_NATIVE_STREAM, 0, &out), DC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(plugin()->native_handle(DC_NATIVE_BUFFER, 0, &out), DC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(plugin()->native_handle(DC_NATIVE_CONTEXT, 9999, &out), DC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(plugin()->native_handle(77, 1, &out), DC_ERROR_UNSUPPORTED);
  EXPECT_NE(std::strstr(plugin()->last_error(), "kind 77"), nullptr) << plugin()->last_error();
  EXPECT_EQ(plugin()->native_handle(DC_NATIVE_CONTEXT, 0, nullptr), DC_ERROR_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace dctest

#include "cl_loader.h"

#include <dlfcn.h>
#include <link.h>

#include <string>
#include <type_traits>

namespace dcl {
namespace {

struct LoadResult {
  ClApi table{};
  bool ok = false;
  std::string why;
};

std::string library_path(void* handle) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
      map->l_name[0] != '\0') {
    return map->l_name;
  }
  return DC_OPENCL_LOADER_NAME;
}

// Resolves every entry point; names the first one missing.
bool resolve(void* handle, ClApi& t, std::string* missing) {
  bool ok = true;
  auto get = [&](auto& field, const char* name) {
    void* sym = dlsym(handle, name);
    if (sym == nullptr && ok) {
      ok = false;
      *missing = name;
    }
    field = reinterpret_cast<std::remove_reference_t<decltype(field)>>(sym);
  };
#define DCL_RESOLVE(fn) get(t.fn, #fn)
  DCL_RESOLVE(clGetPlatformIDs);
  DCL_RESOLVE(clGetPlatformInfo);
  DCL_RESOLVE(clGetDeviceIDs);
  DCL_RESOLVE(clGetDeviceInfo);
  DCL_RESOLVE(clCreateContext);
  DCL_RESOLVE(clReleaseContext);
  DCL_RESOLVE(clCreateCommandQueue);
  DCL_RESOLVE(clReleaseCommandQueue);
  DCL_RESOLVE(clFlush);
  DCL_RESOLVE(clFinish);
  DCL_RESOLVE(clCreateBuffer);
  DCL_RESOLVE(clReleaseMemObject);
  DCL_RESOLVE(clCreateSubBuffer);
  DCL_RESOLVE(clEnqueueReadBuffer);
  DCL_RESOLVE(clEnqueueWriteBuffer);
  DCL_RESOLVE(clEnqueueCopyBuffer);
  DCL_RESOLVE(clEnqueueFillBuffer);
  DCL_RESOLVE(clEnqueueMarkerWithWaitList);
  DCL_RESOLVE(clEnqueueBarrierWithWaitList);
  DCL_RESOLVE(clWaitForEvents);
  DCL_RESOLVE(clGetEventInfo);
  DCL_RESOLVE(clGetEventProfilingInfo);
  DCL_RESOLVE(clReleaseEvent);
  DCL_RESOLVE(clCreateProgramWithSource);
  DCL_RESOLVE(clCreateProgramWithBinary);
  DCL_RESOLVE(clBuildProgram);
  DCL_RESOLVE(clGetProgramInfo);
  DCL_RESOLVE(clGetProgramBuildInfo);
  DCL_RESOLVE(clReleaseProgram);
  DCL_RESOLVE(clCreateKernel);
  DCL_RESOLVE(clReleaseKernel);
  DCL_RESOLVE(clGetKernelInfo);
  DCL_RESOLVE(clSetKernelArg);
  DCL_RESOLVE(clGetKernelWorkGroupInfo);
  DCL_RESOLVE(clEnqueueNDRangeKernel);
#undef DCL_RESOLVE
  return ok;
}

LoadResult load_once() {
  LoadResult r;
  void* handle = dlopen(DC_OPENCL_LOADER_NAME, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    r.why = std::string(DC_OPENCL_LOADER_NAME) +
            " not found (install ocl-icd-libopencl1 and an OpenCL driver, e.g. pocl-opencl-icd)";
    return r;
  }
  std::string missing;
  if (!resolve(handle, r.table, &missing)) {
    r.why = library_path(handle) + " lacks " + missing +
            ": it is not an OpenCL 1.2 ICD loader (install ocl-icd-libopencl1)";
    dlclose(handle);
    return r;
  }
  r.ok = true;
  return r;
}

// Never destroyed: drivers may still call back into the loader at exit.
LoadResult& result() {
  static LoadResult* r = new LoadResult(load_once());
  return *r;
}

}  // namespace

const ClApi* load_api(std::string* why) {
  LoadResult& r = result();
  if (!r.ok) {
    if (why != nullptr) *why = r.why;
    return nullptr;
  }
  return &r.table;
}

const ClApi& api() { return result().table; }

const char* error_name(cl_int code) {
  switch (code) {
#define DCL_NAME(name, value) \
  case value:                 \
    return #name;
    DCL_NAME(CL_SUCCESS, 0)
    DCL_NAME(CL_DEVICE_NOT_FOUND, -1)
    DCL_NAME(CL_DEVICE_NOT_AVAILABLE, -2)
    DCL_NAME(CL_COMPILER_NOT_AVAILABLE, -3)
    DCL_NAME(CL_MEM_OBJECT_ALLOCATION_FAILURE, -4)
    DCL_NAME(CL_OUT_OF_RESOURCES, -5)
    DCL_NAME(CL_OUT_OF_HOST_MEMORY, -6)
    DCL_NAME(CL_PROFILING_INFO_NOT_AVAILABLE, -7)
    DCL_NAME(CL_MEM_COPY_OVERLAP, -8)
    DCL_NAME(CL_IMAGE_FORMAT_MISMATCH, -9)
    DCL_NAME(CL_IMAGE_FORMAT_NOT_SUPPORTED, -10)
    DCL_NAME(CL_BUILD_PROGRAM_FAILURE, -11)
    DCL_NAME(CL_MAP_FAILURE, -12)
    DCL_NAME(CL_MISALIGNED_SUB_BUFFER_OFFSET, -13)
    DCL_NAME(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, -14)
    DCL_NAME(CL_COMPILE_PROGRAM_FAILURE, -15)
    DCL_NAME(CL_LINKER_NOT_AVAILABLE, -16)
    DCL_NAME(CL_LINK_PROGRAM_FAILURE, -17)
    DCL_NAME(CL_DEVICE_PARTITION_FAILED, -18)
    DCL_NAME(CL_KERNEL_ARG_INFO_NOT_AVAILABLE, -19)
    DCL_NAME(CL_INVALID_VALUE, -30)
    DCL_NAME(CL_INVALID_DEVICE_TYPE, -31)
    DCL_NAME(CL_INVALID_PLATFORM, -32)
    DCL_NAME(CL_INVALID_DEVICE, -33)
    DCL_NAME(CL_INVALID_CONTEXT, -34)
    DCL_NAME(CL_INVALID_QUEUE_PROPERTIES, -35)
    DCL_NAME(CL_INVALID_COMMAND_QUEUE, -36)
    DCL_NAME(CL_INVALID_HOST_PTR, -37)
    DCL_NAME(CL_INVALID_MEM_OBJECT, -38)
    DCL_NAME(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, -39)
    DCL_NAME(CL_INVALID_IMAGE_SIZE, -40)
    DCL_NAME(CL_INVALID_SAMPLER, -41)
    DCL_NAME(CL_INVALID_BINARY, -42)
    DCL_NAME(CL_INVALID_BUILD_OPTIONS, -43)
    DCL_NAME(CL_INVALID_PROGRAM, -44)
    DCL_NAME(CL_INVALID_PROGRAM_EXECUTABLE, -45)
    DCL_NAME(CL_INVALID_KERNEL_NAME, -46)
    DCL_NAME(CL_INVALID_KERNEL_DEFINITION, -47)
    DCL_NAME(CL_INVALID_KERNEL, -48)
    DCL_NAME(CL_INVALID_ARG_INDEX, -49)
    DCL_NAME(CL_INVALID_ARG_VALUE, -50)
    DCL_NAME(CL_INVALID_ARG_SIZE, -51)
    DCL_NAME(CL_INVALID_KERNEL_ARGS, -52)
    DCL_NAME(CL_INVALID_WORK_DIMENSION, -53)
    DCL_NAME(CL_INVALID_WORK_GROUP_SIZE, -54)
    DCL_NAME(CL_INVALID_WORK_ITEM_SIZE, -55)
    DCL_NAME(CL_INVALID_GLOBAL_OFFSET, -56)
    DCL_NAME(CL_INVALID_EVENT_WAIT_LIST, -57)
    DCL_NAME(CL_INVALID_EVENT, -58)
    DCL_NAME(CL_INVALID_OPERATION, -59)
    DCL_NAME(CL_INVALID_GL_OBJECT, -60)
    DCL_NAME(CL_INVALID_BUFFER_SIZE, -61)
    DCL_NAME(CL_INVALID_MIP_LEVEL, -62)
    DCL_NAME(CL_INVALID_GLOBAL_WORK_SIZE, -63)
    DCL_NAME(CL_INVALID_PROPERTY, -64)
    DCL_NAME(CL_INVALID_IMAGE_DESCRIPTOR, -65)
    DCL_NAME(CL_INVALID_COMPILER_OPTIONS, -66)
    DCL_NAME(CL_INVALID_LINKER_OPTIONS, -67)
    DCL_NAME(CL_INVALID_DEVICE_PARTITION_COUNT, -68)
    DCL_NAME(CL_INVALID_PIPE_SIZE, -69)
    DCL_NAME(CL_INVALID_DEVICE_QUEUE, -70)
    DCL_NAME(CL_INVALID_SPEC_ID, -71)
    DCL_NAME(CL_MAX_SIZE_RESTRICTION_EXCEEDED, -72)
    DCL_NAME(CL_PLATFORM_NOT_FOUND_KHR, -1001)
#undef DCL_NAME
    default:
      return "CL_UNKNOWN_ERROR";
  }
}

std::string call_error(const char* call, cl_int code) {
  return std::string(call) + " failed: " + error_name(code) + " (" + std::to_string(code) + ")";
}

}  // namespace dcl

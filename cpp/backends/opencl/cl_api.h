// The slice of the OpenCL 1.2 C API this plugin uses, declared here so the
// plugin builds without OpenCL headers and loads libOpenCL.so.1 at run time.
// Values are the ones fixed by the Khronos specification; names keep the
// specification's spelling so they can be looked up there.
#pragma once

#include <cstddef>
#include <cstdint>

namespace dcl {

using cl_int = int32_t;
using cl_uint = uint32_t;
using cl_ulong = uint64_t;
using cl_bool = cl_uint;
using cl_bitfield = cl_ulong;
using cl_device_type = cl_bitfield;
using cl_platform_info = cl_uint;
using cl_device_info = cl_uint;
using cl_device_fp_config = cl_bitfield;
using cl_command_queue_properties = cl_bitfield;
using cl_context_properties = intptr_t;
using cl_context_info = cl_uint;
using cl_mem_flags = cl_bitfield;
using cl_program_info = cl_uint;
using cl_program_build_info = cl_uint;
using cl_kernel_work_group_info = cl_uint;
using cl_kernel_info = cl_uint;
using cl_event_info = cl_uint;
using cl_profiling_info = cl_uint;

using cl_platform_id = struct _cl_platform_id*;
using cl_device_id = struct _cl_device_id*;
using cl_context = struct _cl_context*;
using cl_command_queue = struct _cl_command_queue*;
using cl_mem = struct _cl_mem*;
using cl_program = struct _cl_program*;
using cl_kernel = struct _cl_kernel*;
using cl_event = struct _cl_event*;

// Status codes.
constexpr cl_int CL_SUCCESS = 0;
constexpr cl_int CL_DEVICE_NOT_FOUND = -1;
constexpr cl_int CL_MEM_OBJECT_ALLOCATION_FAILURE = -4;
constexpr cl_int CL_OUT_OF_RESOURCES = -5;
constexpr cl_int CL_OUT_OF_HOST_MEMORY = -6;
constexpr cl_int CL_BUILD_PROGRAM_FAILURE = -11;
constexpr cl_int CL_INVALID_VALUE = -30;
constexpr cl_int CL_INVALID_BINARY = -42;
constexpr cl_int CL_INVALID_KERNEL_NAME = -46;
constexpr cl_int CL_MISALIGNED_SUB_BUFFER_OFFSET = -13;
constexpr cl_int CL_INVALID_BUFFER_SIZE = -61;
constexpr cl_int CL_PLATFORM_NOT_FOUND_KHR = -1001;

constexpr cl_bool CL_FALSE = 0;
constexpr cl_bool CL_TRUE = 1;

// Platform queries.
constexpr cl_platform_info CL_PLATFORM_VERSION = 0x0901;
constexpr cl_platform_info CL_PLATFORM_NAME = 0x0902;
constexpr cl_platform_info CL_PLATFORM_VENDOR = 0x0903;

// Device types and queries.
constexpr cl_device_type CL_DEVICE_TYPE_CPU = 1u << 1;
constexpr cl_device_type CL_DEVICE_TYPE_GPU = 1u << 2;
constexpr cl_device_type CL_DEVICE_TYPE_ACCELERATOR = 1u << 3;
constexpr cl_device_type CL_DEVICE_TYPE_ALL = 0xFFFFFFFFu;

constexpr cl_device_info CL_DEVICE_TYPE = 0x1000;
constexpr cl_device_info CL_DEVICE_MAX_COMPUTE_UNITS = 0x1002;
constexpr cl_device_info CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS = 0x1003;
constexpr cl_device_info CL_DEVICE_MAX_WORK_GROUP_SIZE = 0x1004;
constexpr cl_device_info CL_DEVICE_MAX_WORK_ITEM_SIZES = 0x1005;
constexpr cl_device_info CL_DEVICE_MAX_CLOCK_FREQUENCY = 0x100C;
constexpr cl_device_info CL_DEVICE_MAX_MEM_ALLOC_SIZE = 0x1010;
constexpr cl_device_info CL_DEVICE_MEM_BASE_ADDR_ALIGN = 0x1019;  // in bits
constexpr cl_device_info CL_DEVICE_GLOBAL_MEM_SIZE = 0x101F;
constexpr cl_device_info CL_DEVICE_LOCAL_MEM_SIZE = 0x1023;
constexpr cl_device_info CL_DEVICE_AVAILABLE = 0x1027;
constexpr cl_device_info CL_DEVICE_COMPILER_AVAILABLE = 0x1028;
constexpr cl_device_info CL_DEVICE_NAME = 0x102B;
constexpr cl_device_info CL_DEVICE_VENDOR = 0x102C;
constexpr cl_device_info CL_DRIVER_VERSION = 0x102D;
constexpr cl_device_info CL_DEVICE_VERSION = 0x102F;
constexpr cl_device_info CL_DEVICE_EXTENSIONS = 0x1030;
constexpr cl_device_info CL_DEVICE_DOUBLE_FP_CONFIG = 0x1032;
constexpr cl_device_info CL_DEVICE_OPENCL_C_VERSION = 0x103D;
// OpenCL 3.0; older devices answer CL_INVALID_VALUE.
constexpr cl_device_info CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE = 0x1067;
// Vendor extensions (cl_nv_device_attribute_query, cl_amd_device_attribute_query).
constexpr cl_device_info CL_DEVICE_WARP_SIZE_NV = 0x4003;
constexpr cl_device_info CL_DEVICE_WAVEFRONT_WIDTH_AMD = 0x4043;

constexpr cl_context_properties CL_CONTEXT_PLATFORM = 0x1084;
constexpr cl_command_queue_properties CL_QUEUE_PROFILING_ENABLE = 1u << 1;
constexpr cl_mem_flags CL_MEM_READ_WRITE = 1u << 0;
using cl_buffer_create_type = cl_uint;
constexpr cl_buffer_create_type CL_BUFFER_CREATE_TYPE_REGION = 0x1220;
struct cl_buffer_region {
  size_t origin;
  size_t size;
};

// Program and kernel queries.
constexpr cl_program_info CL_PROGRAM_BINARY_SIZES = 0x1165;
constexpr cl_program_info CL_PROGRAM_BINARIES = 0x1166;
constexpr cl_program_build_info CL_PROGRAM_BUILD_LOG = 0x1183;
constexpr cl_kernel_info CL_KERNEL_NUM_ARGS = 0x1191;
constexpr cl_kernel_work_group_info CL_KERNEL_WORK_GROUP_SIZE = 0x11B0;
constexpr cl_kernel_work_group_info CL_KERNEL_LOCAL_MEM_SIZE = 0x11B2;
constexpr cl_kernel_work_group_info CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE = 0x11B3;

// Events.
constexpr cl_event_info CL_EVENT_COMMAND_EXECUTION_STATUS = 0x11D3;
constexpr cl_int CL_COMPLETE = 0x0;
constexpr cl_profiling_info CL_PROFILING_COMMAND_START = 0x1282;
constexpr cl_profiling_info CL_PROFILING_COMMAND_END = 0x1283;

using BuildNotify = void (*)(cl_program, void*);
using ContextNotify = void (*)(const char*, const void*, size_t, void*);

// Entry points, as the ICD loader exports them. The loader fills one table.
struct ClApi {
  cl_int (*clGetPlatformIDs)(cl_uint, cl_platform_id*, cl_uint*);
  cl_int (*clGetPlatformInfo)(cl_platform_id, cl_platform_info, size_t, void*, size_t*);
  cl_int (*clGetDeviceIDs)(cl_platform_id, cl_device_type, cl_uint, cl_device_id*, cl_uint*);
  cl_int (*clGetDeviceInfo)(cl_device_id, cl_device_info, size_t, void*, size_t*);

  cl_context (*clCreateContext)(const cl_context_properties*, cl_uint, const cl_device_id*, ContextNotify, void*,
                                cl_int*);
  cl_int (*clReleaseContext)(cl_context);

  // Deprecated in 2.0 but exported by every ICD loader; the 1.2 form keeps
  // 1.2-only drivers working.
  cl_command_queue (*clCreateCommandQueue)(cl_context, cl_device_id, cl_command_queue_properties, cl_int*);
  cl_int (*clReleaseCommandQueue)(cl_command_queue);
  cl_int (*clFlush)(cl_command_queue);
  cl_int (*clFinish)(cl_command_queue);

  cl_mem (*clCreateBuffer)(cl_context, cl_mem_flags, size_t, void*, cl_int*);
  cl_int (*clReleaseMemObject)(cl_mem);
  // OpenCL 1.1: a view of a buffer (kernel arguments that are buffer views)
  cl_mem (*clCreateSubBuffer)(cl_mem, cl_mem_flags, cl_buffer_create_type, const void*, cl_int*);
  cl_int (*clEnqueueReadBuffer)(cl_command_queue, cl_mem, cl_bool, size_t, size_t, void*, cl_uint, const cl_event*,
                                cl_event*);
  cl_int (*clEnqueueWriteBuffer)(cl_command_queue, cl_mem, cl_bool, size_t, size_t, const void*, cl_uint,
                                 const cl_event*, cl_event*);
  cl_int (*clEnqueueCopyBuffer)(cl_command_queue, cl_mem, cl_mem, size_t, size_t, size_t, cl_uint, const cl_event*,
                                cl_event*);
  cl_int (*clEnqueueFillBuffer)(cl_command_queue, cl_mem, const void*, size_t, size_t, size_t, cl_uint,
                                const cl_event*, cl_event*);

  cl_int (*clEnqueueMarkerWithWaitList)(cl_command_queue, cl_uint, const cl_event*, cl_event*);
  cl_int (*clEnqueueBarrierWithWaitList)(cl_command_queue, cl_uint, const cl_event*, cl_event*);
  cl_int (*clWaitForEvents)(cl_uint, const cl_event*);
  cl_int (*clGetEventInfo)(cl_event, cl_event_info, size_t, void*, size_t*);
  cl_int (*clGetEventProfilingInfo)(cl_event, cl_profiling_info, size_t, void*, size_t*);
  cl_int (*clReleaseEvent)(cl_event);

  cl_program (*clCreateProgramWithSource)(cl_context, cl_uint, const char**, const size_t*, cl_int*);
  cl_program (*clCreateProgramWithBinary)(cl_context, cl_uint, const cl_device_id*, const size_t*,
                                          const unsigned char**, cl_int*, cl_int*);
  cl_int (*clBuildProgram)(cl_program, cl_uint, const cl_device_id*, const char*, BuildNotify, void*);
  cl_int (*clGetProgramInfo)(cl_program, cl_program_info, size_t, void*, size_t*);
  cl_int (*clGetProgramBuildInfo)(cl_program, cl_device_id, cl_program_build_info, size_t, void*, size_t*);
  cl_int (*clReleaseProgram)(cl_program);

  cl_kernel (*clCreateKernel)(cl_program, const char*, cl_int*);
  cl_int (*clReleaseKernel)(cl_kernel);
  cl_int (*clGetKernelInfo)(cl_kernel, cl_kernel_info, size_t, void*, size_t*);
  cl_int (*clSetKernelArg)(cl_kernel, cl_uint, size_t, const void*);
  cl_int (*clGetKernelWorkGroupInfo)(cl_kernel, cl_device_id, cl_kernel_work_group_info, size_t, void*, size_t*);
  cl_int (*clEnqueueNDRangeKernel)(cl_command_queue, cl_kernel, cl_uint, const size_t*, const size_t*,
                                   const size_t*, cl_uint, const cl_event*, cl_event*);
};

}  // namespace dcl

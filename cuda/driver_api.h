/*
 * The subset of the CUDA driver API this backend uses, declared here so that
 * nothing from a CUDA toolkit is needed to build. Values and signatures follow
 * the driver's documented, stable ABI. Functions are resolved with dlsym under
 * their versioned export names (the `_v2` suffixes: the unsuffixed exports of
 * libcuda are the legacy 32-bit variants and must never be called).
 *
 * The driver test double (tests/cuda_driver_double) implements exactly these.
 */
#ifndef DOTCOMPUTE_CUDA_DRIVER_API_H
#define DOTCOMPUTE_CUDA_DRIVER_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int CUresult;
typedef int CUdevice;
typedef uint64_t CUdeviceptr;
typedef struct CUctx_st* CUcontext;
typedef struct CUstream_st* CUstream;
typedef struct CUevent_st* CUevent;
typedef struct CUmod_st* CUmodule;
typedef struct CUfunc_st* CUfunction;
typedef size_t (*CUoccupancyB2DSize)(int block_size);
typedef struct CUgraph_st* CUgraph;
typedef struct CUgraphExec_st* CUgraphExec;

enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_DEINITIALIZED = 4,
  CUDA_ERROR_STUB_LIBRARY = 34,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_IMAGE = 200,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
  CUDA_ERROR_PEER_ACCESS_UNSUPPORTED = 217,
  CUDA_ERROR_INVALID_PTX = 218,
  CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
  CUDA_ERROR_INVALID_HANDLE = 400,
  CUDA_ERROR_ILLEGAL_STATE = 401,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_NOT_READY = 600,
  CUDA_ERROR_ILLEGAL_ADDRESS = 700,
  CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
  CUDA_ERROR_LAUNCH_TIMEOUT = 702,
  CUDA_ERROR_ASSERT = 710,
  CUDA_ERROR_HARDWARE_STACK_ERROR = 714,
  CUDA_ERROR_ILLEGAL_INSTRUCTION = 715,
  CUDA_ERROR_MISALIGNED_ADDRESS = 716,
  CUDA_ERROR_INVALID_ADDRESS_SPACE = 717,
  CUDA_ERROR_INVALID_PC = 718,
  CUDA_ERROR_LAUNCH_FAILED = 719,
  CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704,
  CUDA_ERROR_PEER_ACCESS_NOT_ENABLED = 705,
  CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE = 720,
  CUDA_ERROR_NOT_SUPPORTED = 801,
  CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
  CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901,
  CUDA_ERROR_UNKNOWN = 999
};

typedef enum CUdevice_attribute {
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y = 3,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z = 4,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,
  CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_INTEGRATED = 18,
  CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS = 31,
  CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33,
  CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34,
  CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39,
  CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT = 40,
  CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING = 41,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY = 83,
  CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS = 89,
  CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH = 95,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97
} CUdevice_attribute;

typedef enum CUfunction_attribute {
  CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
  CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
  CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
} CUfunction_attribute;

#define CU_STREAM_NON_BLOCKING 0x1u
#define CU_EVENT_DEFAULT 0x0u
#define CU_EVENT_DISABLE_TIMING 0x2u
#define CU_MEMHOSTALLOC_PORTABLE 0x1u
#define CU_MEM_ATTACH_GLOBAL 0x1u
/* Relaxed capture: other threads (and the memory pool) may allocate while a stream is captured. */
#define CU_STREAM_CAPTURE_MODE_RELAXED 2

/* Function pointer types, one per entry point, named after the function. */
typedef CUresult (*PFN_cuInit)(unsigned int flags);
typedef CUresult (*PFN_cuDriverGetVersion)(int* version);
typedef CUresult (*PFN_cuGetErrorName)(CUresult error, const char** name);
typedef CUresult (*PFN_cuGetErrorString)(CUresult error, const char** text);
typedef CUresult (*PFN_cuDeviceGetCount)(int* count);
typedef CUresult (*PFN_cuDeviceGet)(CUdevice* device, int ordinal);
typedef CUresult (*PFN_cuDeviceGetName)(char* name, int len, CUdevice device);
typedef CUresult (*PFN_cuDeviceGetAttribute)(int* value, CUdevice_attribute attrib, CUdevice device);
typedef CUresult (*PFN_cuDeviceTotalMem)(size_t* bytes, CUdevice device);
typedef CUresult (*PFN_cuDeviceCanAccessPeer)(int* can_access, CUdevice device, CUdevice peer);
typedef CUresult (*PFN_cuDevicePrimaryCtxRetain)(CUcontext* ctx, CUdevice device);
typedef CUresult (*PFN_cuDevicePrimaryCtxRelease)(CUdevice device);
typedef CUresult (*PFN_cuCtxSetCurrent)(CUcontext ctx);
typedef CUresult (*PFN_cuMemAlloc)(CUdeviceptr* ptr, size_t bytes);
typedef CUresult (*PFN_cuMemFree)(CUdeviceptr ptr);
typedef CUresult (*PFN_cuMemcpyHtoDAsync)(CUdeviceptr dst, const void* src, size_t bytes, CUstream stream);
typedef CUresult (*PFN_cuMemcpyDtoHAsync)(void* dst, CUdeviceptr src, size_t bytes, CUstream stream);
typedef CUresult (*PFN_cuMemcpyDtoDAsync)(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream);
typedef CUresult (*PFN_cuMemsetD8Async)(CUdeviceptr dst, unsigned char value, size_t count, CUstream stream);
typedef CUresult (*PFN_cuStreamCreate)(CUstream* stream, unsigned int flags);
typedef CUresult (*PFN_cuStreamDestroy)(CUstream stream);
typedef CUresult (*PFN_cuStreamSynchronize)(CUstream stream);
typedef CUresult (*PFN_cuStreamWaitEvent)(CUstream stream, CUevent event, unsigned int flags);
typedef CUresult (*PFN_cuEventCreate)(CUevent* event, unsigned int flags);
typedef CUresult (*PFN_cuEventDestroy)(CUevent event);
typedef CUresult (*PFN_cuEventRecord)(CUevent event, CUstream stream);
typedef CUresult (*PFN_cuEventSynchronize)(CUevent event);
typedef CUresult (*PFN_cuEventQuery)(CUevent event);
typedef CUresult (*PFN_cuEventElapsedTime)(float* ms, CUevent start, CUevent end);
typedef CUresult (*PFN_cuModuleLoadData)(CUmodule* module, const void* image);
typedef CUresult (*PFN_cuModuleUnload)(CUmodule module);
typedef CUresult (*PFN_cuModuleGetFunction)(CUfunction* function, CUmodule module, const char* name);
typedef CUresult (*PFN_cuFuncGetAttribute)(int* value, CUfunction_attribute attrib, CUfunction function);
typedef CUresult (*PFN_cuFuncSetAttribute)(CUfunction function, CUfunction_attribute attrib, int value);
/* CUDA 12.4+; optional: used to check argument count and sizes before a launch. */
typedef CUresult (*PFN_cuFuncGetParamInfo)(CUfunction function, size_t index, size_t* offset, size_t* size);
typedef CUresult (*PFN_cuOccupancyMaxPotentialBlockSize)(int* min_grid_size, int* block_size, CUfunction function,
                                                         CUoccupancyB2DSize dynamic_smem_for_block,
                                                         size_t dynamic_smem_bytes, int block_size_limit);
typedef CUresult (*PFN_cuLaunchKernel)(CUfunction f, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z,
                                       unsigned int block_x, unsigned int block_y, unsigned int block_z,
                                       unsigned int shared_bytes, CUstream stream, void** params, void** extra);
typedef CUresult (*PFN_cuLaunchCooperativeKernel)(CUfunction f, unsigned int grid_x, unsigned int grid_y,
                                                  unsigned int grid_z, unsigned int block_x, unsigned int block_y,
                                                  unsigned int block_z, unsigned int shared_bytes, CUstream stream,
                                                  void** params);

/* Optional entry points (cuda_ext.h): a driver without them reports DC_ERROR_UNSUPPORTED for that feature. */
typedef CUresult (*PFN_cuMemHostAlloc)(void** ptr, size_t bytes, unsigned int flags);
typedef CUresult (*PFN_cuMemFreeHost)(void* ptr);
typedef CUresult (*PFN_cuMemAllocManaged)(CUdeviceptr* ptr, size_t bytes, unsigned int flags);
typedef CUresult (*PFN_cuCtxEnablePeerAccess)(CUcontext peer, unsigned int flags);
typedef CUresult (*PFN_cuMemcpyPeerAsync)(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx,
                                          size_t bytes, CUstream stream);
typedef CUresult (*PFN_cuStreamBeginCapture)(CUstream stream, int mode);
typedef CUresult (*PFN_cuStreamEndCapture)(CUstream stream, CUgraph* graph);
typedef CUresult (*PFN_cuGraphInstantiateWithFlags)(CUgraphExec* exec, CUgraph graph, unsigned long long flags);
typedef CUresult (*PFN_cuGraphLaunch)(CUgraphExec exec, CUstream stream);
typedef CUresult (*PFN_cuGraphExecDestroy)(CUgraphExec exec);
typedef CUresult (*PFN_cuGraphDestroy)(CUgraph graph);
typedef CUresult (*PFN_cuModuleGetGlobal)(CUdeviceptr* ptr, size_t* bytes, CUmodule module, const char* name);

#ifdef __cplusplus
}
#endif

#endif /* DOTCOMPUTE_CUDA_DRIVER_API_H */

/*
 * The CUDA simulator's own entry points, exported beside the driver API's.
 * The CUDA plugin resolves them only when it loaded the simulator
 * (DOTCOMPUTE_CUDA_SIM=1): after NVRTC compiled a kernel, dcsimBuildImage
 * compiles the same CUDA C++ for the host and returns the module image the
 * simulator's cuModuleLoadData accepts (the device code and the host object),
 * so the core's kernel cache stores the host build like any other binary.
 */
#ifndef DOTCOMPUTE_CUDA_SIM_API_H
#define DOTCOMPUTE_CUDA_SIM_API_H

#include <stddef.h>

#include "../driver_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* sm: the target architecture (90 for sm_90), defines __CUDA_ARCH__. device_code: what NVRTC produced
   (CUBIN or PTX; may be empty). On failure *log holds the host compiler's messages; free with dcsimFree. */
typedef CUresult (*PFN_dcsimBuildImage)(const char* source, const char* options, int sm, const void* device_code,
                                        size_t device_code_size, void** image, size_t* image_size, char** log);
typedef void (*PFN_dcsimFree)(void* p);
/* A text naming everything the host build depends on (simulator version, host compiler), for cache keys. */
typedef CUresult (*PFN_dcsimIdentity)(char* buf, size_t cap);

#ifdef __cplusplus
}
#endif

#endif /* DOTCOMPUTE_CUDA_SIM_API_H */

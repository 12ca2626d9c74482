/*
 * The subset of NVRTC this backend uses, declared here so that no CUDA
 * toolkit is needed to build. NVRTC is loaded with dlopen at run time.
 */
#ifndef DOTCOMPUTE_CUDA_NVRTC_API_H
#define DOTCOMPUTE_CUDA_NVRTC_API_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int nvrtcResult;
typedef struct _nvrtcProgram* nvrtcProgram;

enum { NVRTC_SUCCESS = 0, NVRTC_ERROR_COMPILATION = 6 };

typedef nvrtcResult (*PFN_nvrtcVersion)(int* major, int* minor);
typedef const char* (*PFN_nvrtcGetErrorString)(nvrtcResult result);
typedef nvrtcResult (*PFN_nvrtcGetNumSupportedArchs)(int* count);
typedef nvrtcResult (*PFN_nvrtcGetSupportedArchs)(int* archs);
typedef nvrtcResult (*PFN_nvrtcCreateProgram)(nvrtcProgram* prog, const char* src, const char* name, int num_headers,
                                              const char* const* headers, const char* const* include_names);
typedef nvrtcResult (*PFN_nvrtcDestroyProgram)(nvrtcProgram* prog);
typedef nvrtcResult (*PFN_nvrtcCompileProgram)(nvrtcProgram prog, int num_options, const char* const* options);
typedef nvrtcResult (*PFN_nvrtcGetProgramLogSize)(nvrtcProgram prog, size_t* size);
typedef nvrtcResult (*PFN_nvrtcGetProgramLog)(nvrtcProgram prog, char* log);
typedef nvrtcResult (*PFN_nvrtcGetCUBINSize)(nvrtcProgram prog, size_t* size);
typedef nvrtcResult (*PFN_nvrtcGetCUBIN)(nvrtcProgram prog, char* cubin);
typedef nvrtcResult (*PFN_nvrtcGetPTXSize)(nvrtcProgram prog, size_t* size);
typedef nvrtcResult (*PFN_nvrtcGetPTX)(nvrtcProgram prog, char* ptx);
typedef nvrtcResult (*PFN_nvrtcAddNameExpression)(nvrtcProgram prog, const char* name_expression);
typedef nvrtcResult (*PFN_nvrtcGetLoweredName)(nvrtcProgram prog, const char* name_expression,
                                               const char** lowered_name);

#ifdef __cplusplus
}
#endif

#endif /* DOTCOMPUTE_CUDA_NVRTC_API_H */

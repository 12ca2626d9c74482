/*
 * CUDA-only capabilities beyond the common backend ABI, exported by
 * libdotcompute_cuda.so as a second table so that the core (or a binding) can
 * use them without the common ABI changing: pinned host memory, managed
 * memory, peer access and copies between devices, stream capture into CUDA
 * graphs, and the native stream handle (for __cuda_array_interface__ / DLPack).
 *
 * Same rules as backend_abi.h: status codes, the plugin's last_error() for the
 * message, no exceptions, fields only appended (check struct_size).
 */
#ifndef DOTCOMPUTE_CUDA_EXT_H
#define DOTCOMPUTE_CUDA_EXT_H

#include "dotcompute/backend_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DC_CUDA_EXT_SYMBOL "dotcompute_cuda_ext_entry"
#define DC_CUDA_EXT_VERSION 2u

typedef struct dc_cuda_graph_s* dc_cuda_graph;

typedef struct dc_cuda_ext {
  uint32_t struct_size;
  uint32_t version;
  /* Page-locked host memory (fast, truly asynchronous transfers), usable from every device. */
  dc_status (*host_alloc)(uint64_t bytes, void** out);
  dc_status (*host_free)(void* ptr);
  /* Managed (unified) memory of `device`, visible to the host at the same address; free with mem_free. */
  dc_status (*mem_alloc_managed)(int32_t device, uint64_t bytes, dc_devptr* out);
  /* Enables access from `device` to `peer`'s memory when the hardware allows; *enabled says if it is on. */
  dc_status (*enable_peer_access)(int32_t device, int32_t peer, int32_t* enabled);
  /* Copies between devices on `s`: a peer copy when the two can access each other, otherwise staged
   * through pinned host memory (then the call waits for the copy to finish). */
  dc_status (*memcpy_peer)(dc_stream s, int32_t dst_device, dc_devptr dst, uint64_t dst_offset, int32_t src_device,
                           dc_devptr src, uint64_t src_offset, uint64_t bytes);
  /* Work issued on `s` between graph_begin and graph_end is captured, not run; graph_launch replays it. */
  dc_status (*graph_begin)(dc_stream s);
  dc_status (*graph_end)(dc_stream s, dc_cuda_graph* out);
  dc_status (*graph_launch)(dc_cuda_graph g, dc_stream s);
  dc_status (*graph_destroy)(dc_cuda_graph g);
  /* The CUstream behind `s` as an integer (0 for the legacy default stream). */
  dc_status (*stream_native)(dc_stream s, uint64_t* handle);
  /* Version 2. The device address and size of the __device__/__constant__ variable `name` of module
   * `m` (cuModuleGetGlobal; the name as the module exports it, unmangled only for extern "C" or
   * namespace-scope C-compatible names). DC_ERROR_INVALID_ARGUMENT naming it when there is none. */
  dc_status (*module_global)(dc_module m, const char* name, dc_devptr* ptr, uint64_t* bytes);
} dc_cuda_ext;

typedef const dc_cuda_ext* (*dc_cuda_ext_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* DOTCOMPUTE_CUDA_EXT_H */

// The ABI operations, one group per source file; plugin.cpp puts them in the table.
#pragma once

#include "dotcompute/backend_abi.h"

namespace dcl {

// memory.cpp
dc_status mem_alloc(int32_t device, uint64_t bytes, dc_devptr* out);
dc_status mem_free(int32_t device, dc_devptr ptr);
dc_status memcpy_h2d(dc_stream s, dc_devptr dst, uint64_t dst_offset, const void* src, uint64_t bytes);
dc_status memcpy_d2h(dc_stream s, void* dst, dc_devptr src, uint64_t src_offset, uint64_t bytes);
dc_status memcpy_d2d(dc_stream s, dc_devptr dst, uint64_t dst_offset, dc_devptr src, uint64_t src_offset,
                     uint64_t bytes);
dc_status memset_d8(dc_stream s, dc_devptr dst, uint64_t offset, uint8_t value, uint64_t bytes);

// queue.cpp
dc_status stream_create(int32_t device, dc_stream* out);
dc_status stream_destroy(dc_stream s);
dc_status stream_synchronize(dc_stream s);
dc_status stream_wait_event(dc_stream s, dc_event e);
dc_status event_create(int32_t device, dc_event* out);
dc_status event_destroy(dc_event e);
dc_status event_record(dc_event e, dc_stream s);
dc_status event_synchronize(dc_event e);
dc_status event_query(dc_event e, int32_t* done);
dc_status event_elapsed_ms(dc_event start, dc_event end, double* ms);

// program.cpp
dc_status compile(int32_t device, const char* source, const char* options, void** binary, uint64_t* size);
void free_binary(void* binary);
dc_status module_load(int32_t device, const void* binary, uint64_t size, dc_module* out);
dc_status module_unload(dc_module m);
dc_status kernel_get(dc_module m, const char* name, dc_kernel* out);

// launch.cpp
dc_status launch(dc_stream s, dc_kernel k, const dc_launch_config* config, const dc_kernel_arg* args,
                 uint32_t nargs);

// native.cpp
dc_status native_handle(uint32_t kind, uint64_t object, uint64_t* out);

}  // namespace dcl

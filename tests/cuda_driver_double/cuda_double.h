/*
 * Test-control API of the CUDA driver double (libcuda_double.so). Tests load
 * the double with dlopen (the same file the plugin loads through
 * DOTCOMPUTE_CUDA_DRIVER, so both see one state) and call these via dlsym.
 */
#ifndef DOTCOMPUTE_CUDA_DOUBLE_H
#define DOTCOMPUTE_CUDA_DOUBLE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Forget launches, logs, failures and registered signatures; restore the
 * default configuration (one sm_90 device, 80 GiB, driver 12090). Live
 * allocations, streams and modules are kept. */
void double_reset(void);
/* Before cuInit: how many devices exist and what cuDriverGetVersion says. */
void double_set_device_count(int count);
void double_set_driver_version(int version);
/* The next call of `function` (its documented name, e.g. "cuMemAlloc") returns `result`. */
void double_fail_next(const char* function, int result);
/* Parameter sizes of the kernel `name`, as cuFuncGetParamInfo reports them and
 * cuLaunchKernel copies them. Kernels without a registration are launched with
 * their parameters unread. */
void double_set_param_sizes(const char* name, const size_t* sizes, int count);
/* What cuOccupancyMaxPotentialBlockSize suggests (default 768). */
void double_set_occupancy_block(int threads);

typedef struct double_launch {
  char name[128];
  unsigned grid[3];
  unsigned block[3];
  unsigned shared_bytes;
  uint64_t stream; /* the stream's id; 0 for the default stream */
  int cooperative;
  int param_count; /* -1: the kernel's sizes were not registered */
  size_t param_sizes[64];
  unsigned char param_bytes[64][16]; /* the first 16 bytes of each parameter's value */
} double_launch;

/* The recorded launches, oldest first; the array stays valid until the next launch or reset. */
const double_launch* double_launch_log(int* count);
/* Every stream operation so far, one per line, in the order they were issued,
 * e.g. "htod stream=1 bytes=64", "record event=2 stream=1 t=5000", "wait stream=2 event=2". */
const char* double_op_log(void);
/* Live allocations and their total size. */
int double_live_allocations(uint64_t* total_bytes);
/* Kind ("cubin" or "ptx") and size of the last image cuModuleLoadData accepted; "" when none. */
const char* double_last_image_kind(size_t* size);
/* Primary contexts currently retained (all devices). */
int double_retained_contexts(void);
/* The stream id behind a CUstream handle. */
uint64_t double_stream_id(void* stream);

#ifdef __cplusplus
}
#endif

#endif /* DOTCOMPUTE_CUDA_DOUBLE_H */

/*
 * The plugin C ABI between the dotcompute core and a backend plugin.
 *
 * A plugin is a shared library exporting one symbol, `dotcompute_backend_entry`,
 * that returns a pointer to a static `dc_backend` table. The core checks
 * `struct_size` and `abi_version` before using any field, so a core can load a
 * plugin built against an older or newer header: fields are only ever appended,
 * and a field the plugin's `struct_size` does not cover is treated as absent.
 *
 * Rules every plugin follows:
 *  - No C++ exception crosses this boundary. Every call returns a dc_status;
 *    on failure the plugin keeps a human-readable message (for compile errors:
 *    the full build log) that `last_error` returns on the same thread until the
 *    next call into the plugin from that thread.
 *  - Device memory is an opaque 64-bit handle (`dc_devptr`): a pointer on the
 *    CPU and CUDA, a `cl_mem` on OpenCL. Offsets are passed separately, so the
 *    core never does arithmetic on handles.
 *  - Copies, memsets and launches are enqueued on a stream and may return
 *    before they finish; host memory passed to them must stay valid until the
 *    stream is synchronised (the core guarantees that).
 *  - The struct_size rule, the same in every plugin, for the structs a caller
 *    hands in (dc_device_info to fill, dc_launch_config to read). The caller sets
 *    struct_size to its own sizeof (and zero-fills an output struct). Then:
 *      struct_size < DC_*_MIN_SIZE (fields every core has had): the call fails
 *        with DC_ERROR_INVALID_ARGUMENT and writes nothing;
 *      an older (smaller) caller struct: input fields it does not cover read as 0
 *        (absent), and an output struct gets only the bytes it has room for;
 *      a newer (larger) caller struct: bytes past the plugin's sizeof are neither
 *        read nor written;
 *      an output struct's struct_size is set to the bytes actually written.
 *    dc_read_launch_config() and dc_write_device_info() below implement it.
 */
#ifndef DOTCOMPUTE_BACKEND_ABI_H
#define DOTCOMPUTE_BACKEND_ABI_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DC_BACKEND_ABI_VERSION 1u
#define DC_BACKEND_ABI_MIN_SUPPORTED 1u
#define DC_BACKEND_ENTRY_SYMBOL "dotcompute_backend_entry"

typedef enum dc_status {
  DC_OK = 0,
  DC_ERROR_INVALID_ARGUMENT = 1,
  DC_ERROR_OUT_OF_MEMORY = 2,
  DC_ERROR_COMPILATION = 3,
  DC_ERROR_LAUNCH = 4,
  DC_ERROR_UNAVAILABLE = 5,
  DC_ERROR_UNSUPPORTED = 6,
  DC_ERROR_INTERNAL = 7
} dc_status;

typedef uint64_t dc_devptr;
typedef struct dc_stream_s* dc_stream;
typedef struct dc_event_s* dc_event;
typedef struct dc_module_s* dc_module;
typedef struct dc_kernel_s* dc_kernel;

/* Feature bits of dc_device_info.features. */
#define DC_FEATURE_FP64 (1ull << 0)
#define DC_FEATURE_FP16 (1ull << 1)
#define DC_FEATURE_INT64_ATOMICS (1ull << 2)
#define DC_FEATURE_FLOAT_ATOMICS (1ull << 3)
/* Device handles are host pointers and any host pointer is a device handle (the CPU): buffers need
 * no copies, numpy views are free and numpy arrays are passed to launches as they are. */
#define DC_FEATURE_UNIFIED_MEMORY (1ull << 4)
#define DC_FEATURE_COOPERATIVE_LAUNCH (1ull << 5)
#define DC_FEATURE_MANAGED_MEMORY (1ull << 6)
/* Device allocations may be host-addressable (Metal's shared storage): mem_host_pointer says, per
 * allocation, where the host sees it (NULL: not host-visible, e.g. Metal private storage). Host
 * reads there see what the device wrote once the work queued on the allocation has finished, and
 * device work enqueued after a host write sees it, so buffer views and host copies need no
 * staging. Unlike DC_FEATURE_UNIFIED_MEMORY it says nothing about host memory the device did not
 * allocate: numpy arrays are still staged. A plugin claiming it fills mem_host_pointer. */
#define DC_FEATURE_HOST_VISIBLE_MEMORY (1ull << 7)

typedef struct dc_device_info {
  uint32_t struct_size;
  char name[256];
  char vendor[128];
  /* The exact code target; part of every kernel-cache key ("x86_64 avx2 fma",
   * "sm_90", "<OpenCL device> <driver version>"). */
  char arch[256];
  char type[16]; /* "cpu", "gpu" or "accelerator" */
  uint64_t global_memory_bytes;
  uint64_t local_memory_bytes; /* work-group (shared) memory per group */
  uint32_t compute_units;
  uint32_t max_work_group_size;
  uint32_t max_work_item_sizes[3];
  uint32_t simd_width; /* warp size, preferred work-group multiple, or SIMD lanes */
  uint64_t features;   /* DC_FEATURE_* */
  /* Backend-specific capabilities as a JSON object ("{}" when none). */
  char extra_json[4096];
} dc_device_info;

#define DC_LAUNCH_COOPERATIVE (1u << 0)

typedef struct dc_launch_config {
  uint32_t struct_size;
  uint32_t dims;               /* 1..3 */
  uint64_t global_size[3];     /* work-items per dimension (unused dims are 1) */
  uint32_t local_size[3];      /* all 0: the backend chooses */
  uint32_t dynamic_shared_bytes;
  uint32_t flags;              /* DC_LAUNCH_* */
} dc_launch_config;

typedef enum dc_arg_kind {
  DC_ARG_BUFFER = 0, /* value.buffer: a dc_devptr, offset 0 */
  DC_ARG_SCALAR = 1, /* value.scalar: `size` bytes, copied by the plugin before launch returns */
  DC_ARG_LOCAL = 2,  /* `size` bytes of work-group memory (OpenCL __local argument) */
  /* value.region: part of an allocation (a view of a buffer), `size` = sizeof(dc_buffer_region).
   * The kernel's pointer starts `offset` bytes into `buffer` and the kernel may touch `bytes` bytes
   * from there; writes land in the allocation (a pointer offset on the CPU and CUDA, a sub-buffer
   * on OpenCL, setBuffer:offset: on Metal). A plugin that cannot express the region (an OpenCL
   * offset that is not a multiple of CL_DEVICE_MEM_BASE_ADDR_ALIGN) fails the launch with
   * DC_ERROR_UNSUPPORTED; it never copies. The struct is read before launch returns. Plugins older
   * than this kind refuse it as an unknown kind. */
  DC_ARG_BUFFER_REGION = 3
} dc_arg_kind;

typedef struct dc_buffer_region {
  dc_devptr buffer; /* a handle from mem_alloc */
  uint64_t offset;  /* bytes from the allocation's start */
  uint64_t bytes;   /* the region's length (> 0) */
} dc_buffer_region;

typedef struct dc_kernel_arg {
  uint32_t kind; /* dc_arg_kind */
  uint32_t size;
  union {
    dc_devptr buffer;
    const void* scalar;
    const dc_buffer_region* region;
  } value;
} dc_kernel_arg;

typedef struct dc_backend {
  uint32_t struct_size;
  uint32_t abi_version;
  const char* name;    /* "cpu", "opencl", "cuda", "metal" */
  const char* version; /* the plugin's own version */

  /* Lifecycle. initialize is called once after loading; DC_ERROR_UNAVAILABLE
   * (with last_error saying why, e.g. "libcuda.so.1 not found") marks the
   * backend unavailable without failing anything else. */
  dc_status (*initialize)(void);
  void (*shutdown)(void);
  const char* (*last_error)(void);

  /* Devices. */
  dc_status (*device_count)(int32_t* count);
  dc_status (*device_info)(int32_t device, dc_device_info* info);
  /* Compiler identity and version, part of every kernel-cache key. */
  dc_status (*compiler_identity)(int32_t device, char* buf, size_t cap);

  /* Raw memory; the core's MemoryPool sits on top. */
  dc_status (*mem_alloc)(int32_t device, uint64_t bytes, dc_devptr* out);
  dc_status (*mem_free)(int32_t device, dc_devptr ptr);
  dc_status (*memcpy_h2d)(dc_stream s, dc_devptr dst, uint64_t dst_offset, const void* src, uint64_t bytes);
  dc_status (*memcpy_d2h)(dc_stream s, void* dst, dc_devptr src, uint64_t src_offset, uint64_t bytes);
  dc_status (*memcpy_d2d)(dc_stream s, dc_devptr dst, uint64_t dst_offset, dc_devptr src, uint64_t src_offset,
                          uint64_t bytes);
  dc_status (*memset_d8)(dc_stream s, dc_devptr dst, uint64_t offset, uint8_t value, uint64_t bytes);

  /* Streams: in-order queues. Events: markers recorded in a stream. */
  dc_status (*stream_create)(int32_t device, dc_stream* out);
  dc_status (*stream_destroy)(dc_stream s);
  dc_status (*stream_synchronize)(dc_stream s);
  dc_status (*stream_wait_event)(dc_stream s, dc_event e);
  dc_status (*event_create)(int32_t device, dc_event* out);
  dc_status (*event_destroy)(dc_event e);
  dc_status (*event_record)(dc_event e, dc_stream s);
  dc_status (*event_synchronize)(dc_event e);
  dc_status (*event_query)(dc_event e, int32_t* done);
  dc_status (*event_elapsed_ms)(dc_event start, dc_event end, double* ms);

  /* Compilation. compile turns source into a binary blob (a shared object,
   * a CUBIN, an OpenCL program binary) that the core caches on disk; the
   * blob is released with free_binary. module_load turns a blob into a module. */
  dc_status (*compile)(int32_t device, const char* source, const char* options, void** binary, uint64_t* size);
  void (*free_binary)(void* binary);
  dc_status (*module_load)(int32_t device, const void* binary, uint64_t size, dc_module* out);
  dc_status (*module_unload)(dc_module m);
  dc_status (*kernel_get)(dc_module m, const char* name, dc_kernel* out);
  dc_status (*launch)(dc_stream s, dc_kernel k, const dc_launch_config* config, const dc_kernel_arg* args,
                      uint32_t nargs);

  /* Optional entries, appended after `launch`: present only when struct_size covers them and they
   * are not NULL (DC_BACKEND_HAS). */
  /* DC_FEATURE_HOST_VISIBLE_MEMORY: the host address of the allocation that mem_alloc returned as
   * `ptr`, or NULL in *out when that allocation is not host-visible. */
  dc_status (*mem_host_pointer)(int32_t device, dc_devptr ptr, void** out);
  /* The core's kernel-cache folder, called after initialize: already checked to be this user's and
   * writable by no one else, or "" when kernels are cached in memory only. A plugin may keep caches
   * of its own there (Metal: binary archives of pipeline states). */
  dc_status (*set_cache_dir)(const char* dir);
  /* The backend's own object behind a dotcompute one (kinds DC_NATIVE_*), so that a vendor library
   * (CLBlast, clFFT, cuBLAS, cuFFT) can enqueue work on the same queue and memory. The object stays
   * owned by the plugin, valid while the dotcompute object lives; the caller must not release it.
   * DC_ERROR_UNSUPPORTED for a kind the backend has no native object for, and on a device whose
   * objects no vendor library could use (the CUDA simulator's fake addresses). */
  dc_status (*native_handle)(uint32_t kind, uint64_t object, uint64_t* out);
} dc_backend;

/* Kinds of native_handle(): what `object` is, and what *out becomes. */
#define DC_NATIVE_STREAM 1u  /* a dc_stream (cast to uint64_t) → cl_command_queue, CUstream */
#define DC_NATIVE_BUFFER 2u  /* a dc_devptr from mem_alloc → cl_mem, CUdeviceptr */
#define DC_NATIVE_CONTEXT 3u /* a device index → cl_context, CUcontext (the one its streams use) */
/* the reverse of DC_NATIVE_BUFFER where handles differ from dc_devptr (Metal): a native buffer
 * (an MTLBuffer of this plugin's devices) → the dc_devptr of its allocation (DLPack imports) */
#define DC_NATIVE_BUFFER_ADDRESS 4u

/* Whether the plugin table `t` has the optional entry `field`. */
#define DC_BACKEND_HAS(t, field) \
  ((t)->struct_size >= offsetof(dc_backend, field) + sizeof((t)->field) && (t)->field != NULL)

typedef const dc_backend* (*dc_backend_entry_fn)(void);

/* The smallest struct_size a plugin accepts: every field before extra_json (device info) and
 * before flags (launch config) has been there since ABI version 1. */
#define DC_DEVICE_INFO_MIN_SIZE ((uint32_t)offsetof(dc_device_info, extra_json))
#define DC_LAUNCH_CONFIG_MIN_SIZE ((uint32_t)offsetof(dc_launch_config, flags))

/* The struct_size rule for an input config: *out is the caller's config with absent fields 0.
 * Returns 0 (and leaves *out zeroed) when `in` is NULL or too small. */
static inline int dc_read_launch_config(const dc_launch_config* in, dc_launch_config* out) {
  size_t n;
  memset(out, 0, sizeof(*out));
  if (in == NULL || in->struct_size < DC_LAUNCH_CONFIG_MIN_SIZE) return 0;
  n = in->struct_size < sizeof(*out) ? in->struct_size : sizeof(*out);
  memcpy(out, in, n);
  out->struct_size = (uint32_t)sizeof(*out);
  return 1;
}

/* The struct_size rule for the output of device_info: copies what the caller has room for from
 * the plugin's complete `full`. Returns 0 (writing nothing) when `out` is NULL or too small. */
static inline int dc_write_device_info(dc_device_info* out, const dc_device_info* full) {
  size_t n;
  if (out == NULL || out->struct_size < DC_DEVICE_INFO_MIN_SIZE) return 0;
  n = out->struct_size < sizeof(*full) ? out->struct_size : sizeof(*full);
  memcpy(out, full, n);
  out->struct_size = (uint32_t)n;
  return 1;
}

#ifdef __cplusplus
}
#endif

#endif /* DOTCOMPUTE_BACKEND_ABI_H */

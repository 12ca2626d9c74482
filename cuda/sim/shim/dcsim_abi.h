/*
 * The contract between the CUDA simulator library and the host shared objects
 * it builds from CUDA C++: each object exports dcsim_kernels() (what kernels it
 * holds, with their parameter layout) and dcsim_run() (execute a range of
 * blocks of one launch on the calling thread). Plain C so that both sides may
 * be built by different compilers; bump DCSIM_ABI_VERSION on any change.
 */
#ifndef DCSIM_ABI_H
#define DCSIM_ABI_H

#include <stddef.h>
#include <stdint.h>

#define DCSIM_ABI_VERSION 4
#define DCSIM_MAX_PARAMS 256

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dcsim_kernel_entry {
  const char* name;               /* the name as written in the source (before mangling) */
  void* fn;                       /* the host function; dladdr() gives its exported (mangled) symbol */
  uint32_t nparams;
  const uint32_t* sizes;          /* sizeof of each parameter */
  const uint32_t* aligns;         /* alignof of each parameter */
  const uint8_t* is_pointer;      /* 1 where the parameter is a pointer (translated from device addresses) */
  /* Calls fn once with the parameters stored at params[i] (each suitably aligned). */
  void (*invoke)(void* fn, void* const* params);
} dcsim_kernel_entry;

typedef struct dcsim_launch {
  const dcsim_kernel_entry* kernel;
  void* const* params;            /* translated parameter values, one pointer per parameter */
  uint32_t grid[3];
  uint32_t block[3];
  uint64_t block_begin;           /* linear block indices [begin, end) to run on this call */
  uint64_t block_end;
  uint64_t dynamic_shared_bytes;
  void* dynamic_shared;           /* dynamic shared memory (16-aligned), ending at a guard page */
  int32_t use_fibers;             /* 1: one fiber per CUDA thread (barriers, warp intrinsics) */
  int32_t warp_size;
  char* stacks;                   /* with fibers: block[0]*block[1]*block[2] stacks of stack_bytes each,
                                     else one; each above a guard page, the last one below one too */
  uint64_t stack_bytes;
  /* v2, the execution model (docs/cuda-simulator.md, "Schedules"): */
  int32_t schedule;               /* DCSIM_SCHEDULE_*: the order a block's threads run in */
  uint32_t reserved;
  uint64_t seed;                  /* DCSIM_SCHEDULE_RANDOM: the seed of the per-block permutations */
  char* static_shared_top;        /* this thread's static __shared__ window ends here (a guard page follows) */
  uint64_t static_shared_bytes;   /* ... and starts static_shared_bytes below */
  /* out: 0 on success, else a CUresult (e.g. 710 CUDA_ERROR_ASSERT) and a message */
  int32_t error_code;
  char error[512];
  /* v3, cooperative launches (cuLaunchCooperativeKernel): every block of [block_begin, block_end) is
     resident at once on the calling thread (one fiber per CUDA thread), so grid_group::sync() works.
     Block i (counted from block_begin) has its stacks at stacks + i * block_stride, and its shared
     memory windows at static_shared_top + i * block_stride and dynamic_shared + i * block_stride. */
  int32_t cooperative;
  uint32_t reserved2;
  uint64_t block_stride;
} dcsim_launch;

/* What the simulator library tells a trace build (dcsim_trace.h) of a module it loads: it stores a
   pointer to this in the module's exported `dcsim_host`, when the module has one. */
typedef struct dcsim_host_services {
  uint32_t version; /* 1 */
  /* The host address ranges [lo, hi) of device memory (one per device); returns how many (at most max). */
  uint32_t (*arenas)(uintptr_t* lo, uintptr_t* hi, uint32_t max);
  /* The live allocation whose span (its bytes rounded up, then its red zone) holds host address p:
     its host start, requested bytes, span and device address; 0 when none does. */
  int (*allocation)(uintptr_t p, uintptr_t* host, uint64_t* bytes, uint64_t* span, uint64_t* device);
} dcsim_host_services;

/* A texture object (cuTexObjectCreate): the CUtexObject handle a kernel receives is the address of
   one of these, kept by the simulator library; the shim's tex1Dfetch/tex2D read it (dcsim_device.h).
   The enumerations are the driver API's (CUresourcetype, CUarray_format, CUaddress_mode,
   CUfilter_mode, CU_TRSF_* flags). */
#define DCSIM_TEXTURE_MAGIC 0x7865746d69736364ull /* "dcsimtex" */
typedef struct dcsim_texture {
  uint64_t magic;            /* DCSIM_TEXTURE_MAGIC while the object lives, 0 once destroyed */
  const unsigned char* data; /* host address of texel (0, 0) */
  uint64_t width, height;    /* in texels; height 1 for linear memory */
  uint64_t pitch;            /* bytes from one row to the next */
  uint32_t kind;             /* 2 linear, 3 pitch2D */
  uint32_t format;           /* CUarray_format */
  uint32_t channels;         /* 1, 2 or 4 */
  uint32_t address[2];       /* CUaddress_mode of x and y */
  uint32_t filter;           /* CUfilter_mode: 0 point, 1 linear */
  uint32_t flags;            /* CU_TRSF_READ_AS_INTEGER 1, CU_TRSF_NORMALIZED_COORDINATES 2 */
  float border[4];
} dcsim_texture;

#define DCSIM_SCHEDULE_FORWARD 0
#define DCSIM_SCHEDULE_REVERSE 1
#define DCSIM_SCHEDULE_RANDOM 2
#define DCSIM_SCHEDULE_LOCKSTEP 3

typedef const dcsim_kernel_entry* (*dcsim_kernels_fn)(uint32_t* count, uint32_t* abi_version);
typedef void (*dcsim_run_fn)(dcsim_launch* launch);

#ifdef __cplusplus
}
#endif

#endif /* DCSIM_ABI_H */

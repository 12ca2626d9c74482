/*
 * GPU-model counters of the CUDA simulator (DOTCOMPUTE_CUDA_SIM_COUNTERS=1): what a host object
 * built in counters mode (dcsim_counters.h) hands the simulator library after each range of
 * blocks it ran. Plain C, shared by both sides like dcsim_abi.h. Every figure is a count of
 * warp-level events reconstructed from the threads' individual accesses (a GPU model, not a
 * measurement: docs/cuda-simulator.md, "GPU-model counters").
 */
#ifndef DCSIM_COUNTERS_ABI_H
#define DCSIM_COUNTERS_ABI_H

#include <stdint.h>

#define DCSIM_COUNTERS_VERSION 2

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dcsim_counters {
  /* [0] loads, [1] stores. A request: one warp-level instruction (the k-th execution of one
     load or store by the lanes of one warp). */
  uint64_t global_requests[2];
  uint64_t global_sectors[2];     /* distinct 32-byte sectors those requests touched */
  uint64_t global_bytes[2];       /* distinct bytes the lanes asked for */
  uint64_t shared_requests[2];
  uint64_t shared_wavefronts[2];  /* bank passes: one per request (per phase of wide accesses) without conflicts */
  uint64_t shared_ideal[2];       /* the passes a conflict-free request of the same width needs */
  uint64_t mem_instructions;      /* warp-level memory instructions (global and shared) */
  uint64_t mem_active_lanes;      /* lanes taking part in them, summed */
  uint64_t warp_collectives;      /* warp-level collectives released: __syncwarp, shuffles, votes, match */
  uint64_t warp_collective_lanes; /* lanes taking part in them, summed */
  uint64_t barrier_warps;         /* warps released from a __syncthreads (one per warp per barrier) */
  uint64_t barrier_lanes;         /* lanes of those warps waiting at it, summed (exited lanes do not) */
  uint64_t blocks;                /* blocks run */
  uint64_t threads;               /* threads that made at least one counted access */
} dcsim_counters;

/* A counters-mode host object exports dcsim_counters_bind; the library calls it when it loads the
   object with its sink, which the object calls at the end of each dcsim_run with the counts of the
   blocks that call ran (from any worker thread: the sink locks). */
typedef void (*dcsim_counters_sink_fn)(const struct dcsim_launch* launch, const dcsim_counters* counts);
typedef void (*dcsim_counters_bind_fn)(dcsim_counters_sink_fn sink);

#ifdef __cplusplus
}
#endif

#endif /* DCSIM_COUNTERS_ABI_H */

// Cooperative launches on the CUDA simulator: every block of the grid resident at once, so that
// cooperative_groups::grid_group::sync() (this_grid().sync()) has its real semantics.
//
// A GPU guarantees co-residency for cuLaunchCooperativeKernel (or refuses the launch with
// CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE); an ordinary launch runs blocks as SMs free up, which the
// simulator models by running blocks one after another on its worker threads. Here all blocks'
// threads are fibers on the calling OS thread: each block runs (in the launch's schedule, as
// schedule() always does) until every live thread of it waits in grid.sync() or has ended; when
// all blocks are parked the grid barrier is released and the next round starts. The library
// (driver_entry.cpp) maps each block its own guarded stacks and shared memory windows, block_stride
// apart, so a block's __shared__ data survives while the others run.
//
// Included by dcsim_cuda.h after the fiber scheduler; not meant to be included on its own.
#pragma once

namespace dcsim {
DCSIM_LOCAL_BEGIN

// grid_group::sync(): waits until every thread of every block of the grid has arrived (threads that
// returned do not take part, as at __syncthreads). Outside a cooperative launch a GPU has no grid
// workspace for it (this_grid().is_valid() is false) and its behaviour is undefined: the launch fails.
inline void grid_barrier(const char* file, unsigned line) {
  if (!t_launch || !t_launch->cooperative)
    fail(719,
         "cooperative_groups::grid_group::sync() (this_grid().sync()) in a launch that was not cooperative%s%s: "
         "launch the kernel with cuLaunchCooperativeKernel (dc.RawKernel(..., cooperative=True)), which keeps "
         "every block resident; without it this_grid().is_valid() is false and a GPU's grid sync is undefined",
         "", "");  // CUDA_ERROR_LAUNCH_FAILED
  Fiber* f = t_fiber;
  if (!t_block || !f) fail(719, "internal: grid_group::sync() ran outside the cooperative scheduler%s%s", "", "");
  f->site_file = file;
  f->site_line = line;
  f->state = kAtGridBarrier;
  to_scheduler(f);
}

inline bool grid_is_valid() { return t_launch && t_launch->cooperative; }

// What a resident block keeps while another one runs on this OS thread.
struct ResidentBlock {
  Block block;
  uint3 idx;
  char* dynamic_shared;
  SharedWindow shared;  // its static __shared__ variables (shared_var's table)
  bool ended;
};

inline void activate(ResidentBlock* r) {
  t_block = &r->block;
  t_fiber = nullptr;
  t_block_idx = r->idx;
  t_dynamic_shared = r->dynamic_shared;
  t_shared = r->shared;
}

inline void run_grid_fibers(dcsim_launch* L) {
  const unsigned n = L->block[0] * L->block[1] * L->block[2];
  const unsigned ws = L->warp_size > 0 && L->warp_size <= 32 ? static_cast<unsigned>(L->warp_size) : 32u;
  const unsigned nwarps = (n + ws - 1) / ws;
  const uint64_t nb = L->block_end - L->block_begin;
  auto* blocks = static_cast<ResidentBlock*>(calloc(nb, sizeof(ResidentBlock)));
  auto* fibers = static_cast<Fiber*>(calloc(nb * n, sizeof(Fiber)));
  auto* order = static_cast<unsigned*>(malloc(sizeof(unsigned) * nb * n));
  auto* warps = static_cast<WarpSync*>(calloc(nb * nwarps, sizeof(WarpSync)));
  auto* block_order = static_cast<uint64_t*>(malloc(sizeof(uint64_t) * nb));
  if (!blocks || !fibers || !order || !warps || !block_order) {
    free(blocks), free(fibers), free(order), free(warps), free(block_order);
    snprintf(L->error, sizeof L->error, "out of host memory for %llu resident blocks of %u threads",
             static_cast<unsigned long long>(nb), n);
    L->error_code = 2;  // CUDA_ERROR_OUT_OF_MEMORY
    return;
  }
  const uint64_t gx = L->grid[0], gy = L->grid[1];
  for (uint64_t i = 0; i < nb; ++i) {
    ResidentBlock& r = blocks[i];
    const uint64_t lin = L->block_begin + i;
    r.idx = uint3{static_cast<unsigned>(lin % gx), static_cast<unsigned>((lin / gx) % gy),
                  static_cast<unsigned>(lin / (gx * gy))};
    const uint64_t shift = i * L->block_stride;
    r.dynamic_shared = L->dynamic_shared ? static_cast<char*>(L->dynamic_shared) + shift : nullptr;
    r.shared.top = L->static_shared_top ? L->static_shared_top + shift : nullptr;
    r.shared.bottom = r.shared.top ? r.shared.top - L->static_shared_bytes : nullptr;
    r.shared.next = r.shared.top;
    if (r.dynamic_shared && L->dynamic_shared_bytes) memset(r.dynamic_shared, 0xFF, L->dynamic_shared_bytes);
    Block& b = r.block;
    b.fibers = fibers + i * n;
    b.n = n;
    b.warps = warps + i * nwarps;
    b.warp_size = ws;
    b.kernel = L->kernel;
    b.params = L->params;
    b.launch = L;
    b.order = order + i * n;
    b.rng = L->seed ^ (0xD1B54A32D192ED03ull * (1 + r.idx.x + 0x10000ull * r.idx.y + 0x100000000ull * r.idx.z));
    char* stacks = L->stacks + i * L->block_stride;
    unsigned t = 0;
    for (unsigned z = 0; z < L->block[2]; ++z)
      for (unsigned y = 0; y < L->block[1]; ++y)
        for (unsigned x = 0; x < L->block[0]; ++x, ++t) {
          Fiber* f = &b.fibers[t];
          f->idx = uint3{x, y, z};
          f->state = kRunnable;
          f->lane = t % ws;
          f->warp = t / ws;
          f->gen[0] = f->gen[1] = ~0ull;
          init_fiber(&b, f, stacks + static_cast<uint64_t>(t) * L->stack_bytes, L->stack_bytes);
        }
  }
  // The blocks run in the schedule's order too (forward, reverse, a fresh permutation per grid
  // round), so that a block reading another block's results without grid.sync() can be caught.
  unsigned long long grid_rng = L->seed ^ 0x6A09E667F3BCC908ull;
  for (;;) {
    for (uint64_t i = 0; i < nb; ++i) block_order[i] = L->schedule == DCSIM_SCHEDULE_REVERSE ? nb - 1 - i : i;
    if (L->schedule == DCSIM_SCHEDULE_RANDOM)
      for (uint64_t i = nb; i > 1; --i) {
        const uint64_t j = splitmix(grid_rng) % i;
        const uint64_t tmp = block_order[i - 1];
        block_order[i - 1] = block_order[j];
        block_order[j] = tmp;
      }
    uint64_t parked = 0, ended = 0;
    const ResidentBlock* first_ended = nullptr;
    for (uint64_t k = 0; k < nb && L->error_code == 0; ++k) {
      ResidentBlock* r = &blocks[block_order[k]];
      if (r->ended) continue;
      activate(r);
      schedule(&r->block);
      r->shared = t_shared;
      bool all_done = true;
      for (unsigned t = 0; t < n; ++t) all_done = all_done && r->block.fibers[t].state == kDone;
      r->ended = all_done;
    }
    if (L->error_code) break;
    for (uint64_t i = 0; i < nb; ++i) {
      if (blocks[i].ended) {
        ++ended;
        if (!first_ended) first_ended = &blocks[i];
      } else {
        ++parked;
      }
    }
    if (parked == 0) break;  // every block ran to its end
    if (ended) {
      // A block that returned never arrives: on a GPU the others wait in grid.sync() forever.
      const ResidentBlock* w = nullptr;
      for (uint64_t i = 0; i < nb && !w; ++i)
        if (!blocks[i].ended) w = &blocks[i];
      snprintf(L->error, sizeof L->error,
               "kernel %s deadlocked at grid_group::sync(): block (%u, %u, %u) ended without reaching it while %llu "
               "blocks, (%u, %u, %u) among them, wait there (a GPU would hang: every block of the grid must call "
               "grid.sync())",
               L->kernel->name, first_ended->idx.x, first_ended->idx.y, first_ended->idx.z,
               static_cast<unsigned long long>(parked), w->idx.x, w->idx.y, w->idx.z);
      L->error_code = 719;  // CUDA_ERROR_LAUNCH_FAILED
      break;
    }
    // Every live thread of the grid waits at grid.sync(): release them all.
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    for (uint64_t i = 0; i < nb * n; ++i)
      if (fibers[i].state == kAtGridBarrier) fibers[i].state = kRunnable;
  }
  t_block = nullptr;
  t_fiber = nullptr;
  free(blocks), free(fibers), free(order), free(warps), free(block_order);
}

DCSIM_LOCAL_END
}  // namespace dcsim

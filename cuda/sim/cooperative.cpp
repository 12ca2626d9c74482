// Cooperative launches (cuLaunchCooperativeKernel): the occupancy rule that bounds them, shared with
// cuOccupancyMaxActiveBlocksPerMultiprocessor, and their execution with every block resident at once
// on the stream's worker thread (the module's dcsim_grid.h schedules the blocks' fibers).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>

#include "sim.hpp"

namespace dcsim_lib {

// How many blocks of `threads` threads with `dynamic` bytes of shared memory one multiprocessor holds
// at once, by the limits the occupancy calculator uses: resident threads (whole warps), blocks per
// SM (by compute capability), and shared memory per SM (the opt-in maximum per block plus the 1 KiB
// the driver reserves per block from sm_80 on). Registers are not a limit here: the simulator reports
// 32 per thread, which never binds before the thread limit.
int max_active_blocks(const DeviceConfig& c, int static_shared, unsigned threads, uint64_t dynamic) {
  if (threads == 0 || threads > static_cast<unsigned>(c.threads_per_block)) return 0;
  const unsigned warp = static_cast<unsigned>(std::max(1, c.warp));
  const uint64_t rounded = (threads + warp - 1) / warp * warp;
  const int cc = c.cc_major * 10 + c.cc_minor;
  const uint64_t max_blocks = cc == 75 || cc == 86 || cc == 87 ? 16 : cc == 89 || cc == 120 ? 24 : 32;
  const uint64_t by_threads = static_cast<uint64_t>(c.threads_per_sm) / rounded;
  const uint64_t reserved = cc >= 80 ? 1024 : 0;
  const uint64_t per_sm = static_cast<uint64_t>(std::max(c.shared_optin, c.shared_per_block)) + reserved;
  const uint64_t per_block = static_cast<uint64_t>(static_shared) + dynamic + reserved;
  const uint64_t by_shared = per_block ? per_sm / per_block : max_blocks;
  return static_cast<int>(std::min({max_blocks, by_threads, by_shared}));
}

// All blocks at once on the calling thread (the stream's worker), each with its own stacks and shared
// memory (ResidentGrid), so grid_group::sync() can wait for every block.
void run_resident(Stream& s, const Function& f, void* const* params, const unsigned grid[3],
                  const unsigned block[3], unsigned shared, uint64_t shared_window, const ExecConfig& exec,
                  uint64_t stack_bytes) {
  const uint64_t blocks = static_cast<uint64_t>(grid[0]) * grid[1] * grid[2];
  const unsigned threads = block[0] * block[1] * block[2];
  auto watch = std::make_unique<Watch>(exec.timeout_s);
  s.set_running(watch.get());
  dcsim_launch L{};
  L.kernel = f.entry;
  L.params = params;
  std::memcpy(L.grid, grid, sizeof L.grid);
  std::memcpy(L.block, block, sizeof L.block);
  L.block_begin = 0;
  L.block_end = blocks;
  L.dynamic_shared_bytes = shared;
  L.use_fibers = 1;
  L.warp_size = 32;
  L.schedule = exec.schedule;
  L.seed = exec.seed;
  L.cooperative = 1;
  ResidentGrid memory;
  if (!memory.map(blocks, threads, stack_bytes, shared_window, shared)) {
    L.error_code = CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
    std::snprintf(L.error, sizeof L.error,
                  "the CUDA simulator could not map stacks and shared memory for %llu resident blocks of %u threads",
                  static_cast<unsigned long long>(blocks), threads);
  } else {
    L.stacks = memory.base;
    L.stack_bytes = stack_bytes;
    L.block_stride = memory.stride;
    L.static_shared_top = memory.static_top(0);
    L.static_shared_bytes = shared_window;
    L.dynamic_shared = memory.dynamic(0);
    run_guarded(f.module->run, &L, watch.get());
  }
  s.set_running(nullptr);
  if (watch->interrupted()) return;
  if (L.error_code) s.record_error(static_cast<CUresult>(L.error_code), "kernel " + f.symbol + ": " + L.error);
}

}  // namespace dcsim_lib

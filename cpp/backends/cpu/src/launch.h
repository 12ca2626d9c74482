// Launch geometry (choosing and checking work-group sizes) and the execution
// of launches, copies and event markers on the thread pool.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "dotcompute/backend_abi.h"
#include "dotcompute/cpu_kernel_abi.h"
#include "scratch.h"

namespace dccpu {

// Largest explicit work-group (items) the CPU accepts; groups are loops, so
// the bound only protects the per-item arrays of barrier kernels.
constexpr uint64_t kMaxGroupItems = 1024ull * 1024ull;
// Largest dynamic work-group memory per launch (heap scratch, allocated and checked by the backend).
constexpr uint64_t kMaxDynamicShared = 64ull * 1024ull * 1024ull;
// Work-group memory of a kernel's static arrays (dc.shared): generated code keeps them on the
// calling thread's stack, so the bound must fit any worker's stack with room to spare. It is the
// device's reported local_memory_bytes; the Python launcher refuses kernels that need more.
constexpr uint64_t kMaxStaticShared = 1024ull * 1024ull;
// Launches with at most this many work-items run inline on an idle stream, serially on the calling
// thread -- unless the kernel's measured cost says the launch takes longer than kInlineBudgetNs,
// when handing it to the pool pays for the wake-up of its threads (tens of microseconds). Such a launch
// whose predicted serial work is at most kCallerBudgetNs still runs on the calling thread when its stream
// is idle, with the pool's helpers (run_on_caller; plugin.cpp, cpu_launch); a heavier one is queued, so a
// caller such as a pipeline's coordinator is never held for long.
constexpr uint64_t kInlineItems = 16384;
// Work-groups per pool participant of a fine launch (plan_geometry's `fine`), each taken on its own.
constexpr uint64_t kFineGroupsPerThread = 16;
// Work-groups per participant of other 1-d launches with automatic local sizes (groups of 1,024 to
// 16,384 items: long vectorised loops).
constexpr uint64_t kGroupsPerThread = 16;
constexpr uint64_t kInlineBudgetNs = 200 * 1000;
constexpr uint64_t kCallerBudgetNs = 4 * 1000 * 1000;

// Whether a launch of `items` work-items of a kernel whose items cost `item_ps` picoseconds each
// (0: unknown, the first launch measures it) should run on the thread pool rather than inline.
inline bool worth_the_pool(uint64_t items, uint64_t item_ps) {
  if (items > kInlineItems) return true;
  return item_ps != 0 && items * item_ps / 1000 > kInlineBudgetNs;  // items <= 2^14: no overflow below 2^50 ps
}

// Whether a pooled launch of `items` work-items costing `item_ps` each is short enough to run on the
// calling thread (with the pool's helpers) instead of the stream's worker: two thread hand-offs fewer.
inline bool run_on_caller(uint64_t items, uint64_t item_ps) {
  return items <= kInlineItems && item_ps != 0 && items * item_ps / 1000 <= kCallerBudgetNs;
}

// Records the cost per item of a run of `items` work-items whose groups took `busy_ns` in all.
void note_item_cost(std::atomic<uint64_t>& item_ps, uint64_t items, uint64_t busy_ns);

struct Geometry {
  dc_cpu_launch desc{};  // everything but args/nargs
  uint64_t total_groups = 0;
  uint64_t total_items = 0;
};

// Checks `config` and fills the geometry; on failure returns the status and
// leaves the message in `error`. `participants` guides the automatic 1-D chunk.
// `fine`: the launch is known to be heavy per item (worth_the_pool with few items), so an
// automatic 1-D local size is made small enough for every participant to get several groups.
dc_status plan_geometry(const dc_launch_config* config, uint32_t participants, Geometry& out, std::string& error,
                        bool fine = false);

// Runs every work-group of a launch: serially for one group, else over the
// shared pool with the calling thread taking part. Returns the nanoseconds the groups took,
// summed over the threads (the launch's serial work).
uint64_t run_groups(dc_cpu_kernel_fn fn, const dc_cpu_launch& desc, uint64_t total_groups, uint32_t shared_bytes,
                    Scratch& caller_scratch, bool allow_pool);

void parallel_copy(void* dst, const void* src, uint64_t bytes);
void parallel_fill(void* dst, uint8_t value, uint64_t bytes);

// Zero fills from this size on may drop pages (zero_fill).
constexpr uint64_t kDropPagesMin = 256 * 1024;

// Zeroes [dst, dst + bytes), which lies inside a private anonymous mapping of the plugin's: the whole
// pages in it are handed back to the kernel (MADV_DONTNEED), which maps fresh zero pages on the next
// touch -- numpy's np.zeros gets the same from calloc -- and the partial pages at either end are
// written. Where the kernel refuses, everything is written.
void zero_fill(void* dst, uint64_t bytes);

}  // namespace dccpu

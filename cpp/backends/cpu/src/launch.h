// Launch geometry (choosing and checking work-group sizes) and the execution
// of launches, copies and event markers on the thread pool.
#pragma once

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
// Launches with at most this many work-items run inline on an idle stream.
constexpr uint64_t kInlineItems = 16384;

struct Geometry {
  dc_cpu_launch desc{};  // everything but args/nargs
  uint64_t total_groups = 0;
  uint64_t total_items = 0;
};

// Checks `config` and fills the geometry; on failure returns the status and
// leaves the message in `error`. `participants` guides the automatic 1-D chunk.
dc_status plan_geometry(const dc_launch_config* config, uint32_t participants, Geometry& out, std::string& error);

// Runs every work-group of a launch: serially for one group, else over the
// shared pool with the calling thread taking part.
void run_groups(dc_cpu_kernel_fn fn, const dc_cpu_launch& desc, uint64_t total_groups, uint32_t shared_bytes,
                Scratch& caller_scratch, bool allow_pool);

void parallel_copy(void* dst, const void* src, uint64_t bytes);
void parallel_fill(void* dst, uint8_t value, uint64_t bytes);

}  // namespace dccpu

#include "launch.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include <sys/mman.h>

#include "runtime.h"
#include "stream.h"
#include "thread_pool.h"

namespace dccpu {

namespace {

uint64_t ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

void auto_local(const uint64_t global[3], uint32_t dims, uint32_t participants, bool fine, uint64_t local[3]) {
  local[0] = local[1] = local[2] = 1;
  if (dims == 1 && fine) {
    // Few heavy items: groups small enough that every thread gets many of them, so the threads finish
    // within a small group of each other (a helper woken late catches up). Their loops over items are
    // not what is vectorised (each item's own loop is), so short groups cost nothing.
    local[0] = std::max<uint64_t>(1, ceil_div(global[0], uint64_t{participants} * kFineGroupsPerThread));
    return;
  }
  if (dims == 1) {
    // Several groups per thread for balance, yet long inner loops to vectorise. The threads take
    // groups as they finish them, so the last group's length is the most one thread can end up
    // waiting on the other (a helper woken late starts behind): with 4 groups per thread that was
    // 1/8 of a two-thread launch.
    const uint64_t per = ceil_div(global[0], uint64_t{participants} * kGroupsPerThread);
    local[0] = std::min(std::clamp<uint64_t>(per, 1024, 16384), global[0]);
    return;
  }
  local[0] = std::min<uint64_t>(global[0], 256);
  local[1] = std::min<uint64_t>(global[1], std::max<uint64_t>(1, 256 / local[0]));
}

struct GroupJob {
  dc_cpu_kernel_fn fn;
  const dc_cpu_launch* desc;
  std::atomic<uint64_t> busy_ns{0};  // summed over every thread's chunks: the launch's serial work
};

uint64_t since_ns(std::chrono::steady_clock::time_point start) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
}

void run_group_range(void* ctx, uint64_t begin, uint64_t end, void* scratch) {
  auto* job = static_cast<GroupJob*>(ctx);
  const auto start = std::chrono::steady_clock::now();
  job->fn(job->desc, begin, end, scratch);
  job->busy_ns.fetch_add(since_ns(start), std::memory_order_relaxed);
}

constexpr uint64_t kParallelCopyMin = 4ull << 20;
constexpr uint64_t kCopyChunk = 1ull << 20;

struct CopyJob {
  unsigned char* dst;
  const unsigned char* src;
  uint8_t value;
  uint64_t bytes;
};

void copy_range(void* ctx, uint64_t begin, uint64_t end, void*) {
  const auto* job = static_cast<const CopyJob*>(ctx);
  const uint64_t b = begin * kCopyChunk;
  const uint64_t e = std::min(end * kCopyChunk, job->bytes);
  std::memcpy(job->dst + b, job->src + b, e - b);
}

void fill_range(void* ctx, uint64_t begin, uint64_t end, void*) {
  const auto* job = static_cast<const CopyJob*>(ctx);
  const uint64_t b = begin * kCopyChunk;
  const uint64_t e = std::min(end * kCopyChunk, job->bytes);
  std::memset(job->dst + b, job->value, e - b);
}

}  // namespace

dc_status plan_geometry(const dc_launch_config* given, uint32_t participants, Geometry& out, std::string& error,
                        bool fine) {
  if (given == nullptr) {
    error = "cpu: launch config is NULL";
    return DC_ERROR_INVALID_ARGUMENT;
  }
  dc_launch_config normalized;
  if (!dc_read_launch_config(given, &normalized)) {
    error = "cpu: dc_launch_config.struct_size is " + std::to_string(given->struct_size) + ", expected at least " +
            std::to_string(DC_LAUNCH_CONFIG_MIN_SIZE);
    return DC_ERROR_INVALID_ARGUMENT;
  }
  const dc_launch_config* config = &normalized;
  if (config->flags & DC_LAUNCH_COOPERATIVE) {
    error = "cpu: cooperative launches are not supported by the CPU backend";
    return DC_ERROR_UNSUPPORTED;
  }
  const uint32_t dims = config->dims;
  if (dims < 1 || dims > 3) {
    error = "cpu: launch dims must be 1, 2 or 3 (got " + std::to_string(dims) + ")";
    return DC_ERROR_LAUNCH;
  }
  if (config->dynamic_shared_bytes > kMaxDynamicShared) {
    error = "cpu: dynamic_shared_bytes " + std::to_string(config->dynamic_shared_bytes) + " exceeds the limit of " +
            std::to_string(kMaxDynamicShared);
    return DC_ERROR_LAUNCH;
  }
  dc_cpu_launch& d = out.desc;
  d = dc_cpu_launch{};
  d.dims = dims;
  for (uint32_t i = 0; i < 3; ++i) d.global_size[i] = i < dims ? config->global_size[i] : 1;

  const bool automatic = config->local_size[0] == 0 && config->local_size[1] == 0 && config->local_size[2] == 0;
  if (automatic) {
    auto_local(d.global_size, dims, std::max<uint32_t>(participants, 1), fine, d.local_size);
    // A zero global size still needs a non-zero local size for the division.
    for (uint64_t& l : d.local_size) l = std::max<uint64_t>(l, 1);
  } else {
    uint64_t product = 1;
    for (uint32_t i = 0; i < 3; ++i) {
      const uint32_t l = config->local_size[i];
      if (i < dims && l == 0) {
        error = "cpu: local_size[" + std::to_string(i) +
                "] is 0 while other dimensions are set; give every dimension or none";
        return DC_ERROR_LAUNCH;
      }
      if (i >= dims && l > 1) {
        error = "cpu: local_size[" + std::to_string(i) + "] is " + std::to_string(l) + " but the launch has " +
                std::to_string(dims) + " dimension(s)";
        return DC_ERROR_LAUNCH;
      }
      d.local_size[i] = i < dims ? l : 1;
      product *= d.local_size[i];
    }
    if (product > kMaxGroupItems) {
      error = "cpu: work-group of " + std::to_string(product) + " items (local_size " +
              std::to_string(d.local_size[0]) + "x" + std::to_string(d.local_size[1]) + "x" +
              std::to_string(d.local_size[2]) + ") exceeds the CPU limit of " + std::to_string(kMaxGroupItems);
      return DC_ERROR_LAUNCH;
    }
  }

  uint64_t groups = 1;
  uint64_t items = 1;
  for (uint32_t i = 0; i < 3; ++i) {
    d.num_groups[i] = ceil_div(d.global_size[i], d.local_size[i]);
    if (d.num_groups[i] != 0 && groups > UINT64_MAX / d.num_groups[i]) {
      error = "cpu: the launch has more than 2^64 work-groups";
      return DC_ERROR_LAUNCH;
    }
    groups *= d.num_groups[i];
    if (d.global_size[i] != 0 && items > UINT64_MAX / d.global_size[i]) {
      error = "cpu: the launch has more than 2^64 work-items";
      return DC_ERROR_LAUNCH;
    }
    items *= d.global_size[i];
  }
  out.total_groups = groups;
  out.total_items = items;
  return DC_OK;
}

void note_item_cost(std::atomic<uint64_t>& item_ps, uint64_t items, uint64_t busy_ns) {
  if (items == 0) return;
  // At least 1 ps so that "measured" differs from "unknown". Only the work is counted, not the
  // threads' wake-up, so a slow hand-off cannot make a light kernel look heavy.
  item_ps.store(std::max<uint64_t>(1, busy_ns * 1000 / items), std::memory_order_relaxed);
}

uint64_t run_groups(dc_cpu_kernel_fn fn, const dc_cpu_launch& desc, uint64_t total_groups, uint32_t shared_bytes,
                    Scratch& caller_scratch, bool allow_pool) {
  if (total_groups == 0) return 0;
  void* scratch = caller_scratch.get(shared_bytes);
  ThreadPool* pool = (allow_pool && total_groups > 1) ? shared_pool() : nullptr;
  if (pool == nullptr || pool->participants() == 1) {
    const auto start = std::chrono::steady_clock::now();
    fn(&desc, 0, total_groups, scratch);
    return since_ns(start);
  }
  GroupJob job{fn, &desc};
  // Chunks of several groups when there are many (fewer atomic increments on a shared counter), but
  // still kGroupsPerThread chunks per thread: the last chunk bounds how long one thread waits on the
  // other; one group at a time when there are few, which are then long (a fine launch's).
  const uint64_t p = pool->participants();
  const uint64_t grain =
      total_groups <= p * kFineGroupsPerThread ? 1 : std::max<uint64_t>(1, total_groups / (p * kGroupsPerThread));
  pool->parallel_for(total_groups, grain, run_group_range, &job, shared_bytes, scratch);
  return job.busy_ns.load(std::memory_order_relaxed);
}

void parallel_copy(void* dst, const void* src, uint64_t bytes) {
  ThreadPool* pool = bytes >= kParallelCopyMin ? shared_pool() : nullptr;
  if (pool == nullptr) {
    std::memmove(dst, src, bytes);
    return;
  }
  const auto* s = static_cast<const unsigned char*>(src);
  auto* d = static_cast<unsigned char*>(dst);
  if (s < d + bytes && d < s + bytes) {  // overlapping ranges need memmove's ordering
    std::memmove(dst, src, bytes);
    return;
  }
  CopyJob job{d, s, 0, bytes};
  pool->parallel_for(ceil_div(bytes, kCopyChunk), 1, copy_range, &job, 0, nullptr);
}

void parallel_fill(void* dst, uint8_t value, uint64_t bytes) {
  ThreadPool* pool = bytes >= kParallelCopyMin ? shared_pool() : nullptr;
  if (pool == nullptr) {
    std::memset(dst, value, bytes);
    return;
  }
  CopyJob job{static_cast<unsigned char*>(dst), nullptr, value, bytes};
  pool->parallel_for(ceil_div(bytes, kCopyChunk), 1, fill_range, &job, 0, nullptr);
}

void zero_fill(void* dst, uint64_t bytes) {
  constexpr uintptr_t kPage = 4096;
  const uintptr_t a = reinterpret_cast<uintptr_t>(dst);
  const uintptr_t first = (a + kPage - 1) / kPage * kPage;
  const uintptr_t last = (a + bytes) / kPage * kPage;
  if (last <= first || madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED) != 0) {
    parallel_fill(dst, 0, bytes);
    return;
  }
  std::memset(dst, 0, first - a);
  std::memset(reinterpret_cast<void*>(last), 0, a + bytes - last);
}

void run_task(Task& task, Stream& stream) {
  switch (task.kind) {
    case Task::Kind::Launch: {
      const uint64_t total =
          task.desc.num_groups[0] * task.desc.num_groups[1] * task.desc.num_groups[2];
      const uint64_t busy_ns = run_groups(task.fn, task.desc, total, task.shared_bytes, stream.scratch(), true);
      if (task.item_ps != nullptr)
        note_item_cost(*task.item_ps, task.desc.global_size[0] * task.desc.global_size[1] * task.desc.global_size[2],
                       busy_ns);
      if (task.failure.failed()) throw KernelFailureError{task.failure.status(), task.failure.message()};
      break;
    }
    case Task::Kind::Copy:
      parallel_copy(task.dst, task.src, task.bytes);
      break;
    case Task::Kind::Memset:
      if (task.drop_pages) {
        zero_fill(task.dst, task.bytes);
      } else {
        parallel_fill(task.dst, task.value, task.bytes);
      }
      break;
    case Task::Kind::Record:
      task.event->complete(task.seq);
      break;
    case Task::Kind::Wait:
      task.event->wait(task.seq);
      break;
  }
}

}  // namespace dccpu

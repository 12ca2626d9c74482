// The CUDA simulator's fibers and block scheduler: the context switch, one fiber per CUDA thread, the
// schedule that runs them in the launch's order up to each barrier, and the block and warp barriers
// the intrinsics of dcsim_cuda.h wait at. Included by dcsim_cuda.h after the per-thread execution
// state it uses (dcsim::Block, Fiber, t_block ...); kept apart so that each header has one job.
#pragma once

// ---- fibers --------------------------------------------------------------------------------------
#if defined(__x86_64__)
// Saves the callee-saved registers and the SSE/x87 control words on the current
// stack, stores the stack pointer in *save and continues on `to`. No system
// call (unlike swapcontext), so a barrier costs a few nanoseconds per thread.
extern "C" __attribute__((visibility("hidden"))) void dcsim_switch(void** save, void* to);
extern "C" __attribute__((visibility("hidden"))) void dcsim_fiber_start();
#if !defined(DCSIM_KERNEL_ONLY)  // defined once per shared object: in the runtime's unit when split
asm(R"(
  .text
  .p2align 4
  .globl dcsim_switch
  .hidden dcsim_switch
  .type dcsim_switch,@function
dcsim_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size dcsim_switch, .-dcsim_switch
  .p2align 4
  .globl dcsim_fiber_start
  .hidden dcsim_fiber_start
  .type dcsim_fiber_start,@function
dcsim_fiber_start:
  movq %r12, %rdi
  callq *%r13
  ud2
  .size dcsim_fiber_start, .-dcsim_fiber_start
)");
#endif  // !DCSIM_KERNEL_ONLY
#endif

namespace dcsim {
DCSIM_LOCAL_BEGIN

inline void fiber_main(void* arg);

inline void to_scheduler(Fiber* f) {
  asm volatile("" ::: "memory");
#if defined(__x86_64__)
  dcsim_switch(&f->sp, t_block->sched_sp);
#else
  swapcontext(&f->ctx, &t_block->sched_ctx);
#endif
  asm volatile("" ::: "memory");
}

inline void to_fiber(Block* b, Fiber* f) {
  t_fiber = f;
  t_thread_idx = f->idx;
  asm volatile("" ::: "memory");
#if defined(__x86_64__)
  dcsim_switch(&b->sched_sp, f->sp);
#else
  swapcontext(&b->sched_ctx, &f->ctx);
#endif
  asm volatile("" ::: "memory");
}

#if !defined(__x86_64__)
inline thread_local Fiber* t_starting;
inline void fiber_entry_ucontext() { fiber_main(t_starting); }
#endif

// The initial stack of a context that calls fn(arg) when first switched to (x86-64: dcsim_switch's frame).
#if defined(__x86_64__)
inline void* prepare_stack(char* stack, uint64_t bytes, void (*fn)(void*), void* arg) {
  uintptr_t top = (reinterpret_cast<uintptr_t>(stack) + bytes) & ~uintptr_t(15);
  uint64_t* a = reinterpret_cast<uint64_t*>(top - 24);  // the return slot: 8 mod 16
  a[0] = reinterpret_cast<uint64_t>(&dcsim_fiber_start);
  a[-1] = 0;                                           // rbp
  a[-2] = 0;                                           // rbx
  a[-3] = reinterpret_cast<uint64_t>(arg);             // r12: the argument
  a[-4] = reinterpret_cast<uint64_t>(fn);              // r13: the function
  a[-5] = 0;                                           // r14
  a[-6] = 0;                                           // r15
  uint32_t* control = reinterpret_cast<uint32_t*>(reinterpret_cast<char*>(a) - 56);
  control[0] = 0x1F80;  // MXCSR: all exceptions masked, round to nearest
  control[1] = 0x037F;  // x87 control word: the same
  return control;
}
#endif

inline void init_fiber(Block* b, Fiber* f, char* stack, uint64_t bytes) {
#if defined(__x86_64__)
  (void)b;
  f->sp = prepare_stack(stack, bytes, &fiber_main, f);
#else
  getcontext(&f->ctx);
  f->ctx.uc_stack.ss_sp = stack;
  f->ctx.uc_stack.ss_size = bytes;
  f->ctx.uc_link = &b->sched_ctx;
  t_starting = f;
  makecontext(&f->ctx, fiber_entry_ucontext, 0);
#endif
}

inline void run_thread(Block* b) {
  try {
    b->kernel->invoke(b->kernel->fn, b->params);
  } catch (const Trap&) {
    // the message and code are already in the launch
  }
}

inline void fiber_main(void* arg) {
  Fiber* f = static_cast<Fiber*>(arg);
  run_thread(t_block);
  f->state = kDone;
  to_scheduler(f);  // never resumed
  __builtin_trap();
}

// The threads of `b` that can run now, in the launch's schedule order (lockstep rounds are
// run warp by warp in schedule(), and use the forward order within a warp).
inline unsigned round_order(Block* b) {
  unsigned m = 0;
  const int mode = b->launch->schedule;
  if (mode == DCSIM_SCHEDULE_REVERSE) {
    for (unsigned i = b->n; i-- > 0;)
      if (b->fibers[i].state == kRunnable) b->order[m++] = i;
    return m;
  }
  for (unsigned i = 0; i < b->n; ++i)
    if (b->fibers[i].state == kRunnable) b->order[m++] = i;
  if (mode == DCSIM_SCHEDULE_RANDOM)
    for (unsigned i = m; i > 1; --i) {  // Fisher-Yates: a fresh permutation every round
      const unsigned j = static_cast<unsigned>(splitmix(b->rng) % i);
      const unsigned t = b->order[i - 1];
      b->order[i - 1] = b->order[j];
      b->order[j] = t;
    }
  return m;
}

// Releases warp w's warp-synchronous operation when every lane of its mask has arrived or ended.
inline bool release_warp(Block* b, unsigned w) {
  WarpSync& ws = b->warps[w];
  if (ws.arrived == 0) return false;
  for (unsigned l = 0; l < b->warp_size; ++l) {
    const unsigned t = w * b->warp_size + l;
    if (t >= b->n || !(ws.mask & (1u << l))) continue;
    const int s = b->fibers[t].state;
    if (s != kAtWarpBarrier && s != kDone) return false;
  }
  trace::on_warp_release(b, w, ws.mask, trace::collective_pc());
  for (unsigned l = 0; l < b->warp_size; ++l) {
    const unsigned t = w * b->warp_size + l;
    if (t < b->n && b->fibers[t].state == kAtWarpBarrier) b->fibers[t].state = kRunnable;
  }
  ws.arrived = 0;
  return true;
}

inline void run_fiber(Block* b, Fiber* f) {
#if !defined(__x86_64__)
  t_starting = f;
#endif
  to_fiber(b, f);
}

// Runs every fiber until it waits or ends, releases the barriers that all
// their threads reached, and repeats; stops when all threads ended, on an
// error, or when no barrier can ever be released (a deadlock, reported).
// Lockstep runs one warp at a time: its lanes (in lane order) up to each
// warp-synchronous operation, released at once, until every lane waits at a
// block barrier or ended; then the next warp.
inline void schedule(Block* b) {
  const unsigned nwarps = (b->n + b->warp_size - 1) / b->warp_size;
  const bool lockstep = b->launch->schedule == DCSIM_SCHEDULE_LOCKSTEP;
  for (;;) {
    if (lockstep) {
      for (unsigned w = 0; w < nwarps; ++w) {
        do {
          for (unsigned l = 0; l < b->warp_size && w * b->warp_size + l < b->n; ++l) {
            Fiber* f = &b->fibers[w * b->warp_size + l];
            if (f->state != kRunnable) continue;
            run_fiber(b, f);
            if (b->launch->error_code) return;
          }
        } while (release_warp(b, w));
      }
    } else {
      const unsigned m = round_order(b);
      for (unsigned k = 0; k < m; ++k) {
        run_fiber(b, &b->fibers[b->order[k]]);
        if (b->launch->error_code) return;
      }
    }
    unsigned live = 0, at_block = 0, at_grid = 0;
    for (unsigned i = 0; i < b->n; ++i) {
      live += b->fibers[i].state != kDone;
      at_block += b->fibers[i].state == kAtBlockBarrier;
      at_grid += b->fibers[i].state == kAtGridBarrier;
    }
    if (live == 0) return;
    // Every live thread waits in grid.sync(): the block is parked until all blocks of the grid are
    // (run_grid_fibers releases them together).
    if (at_grid == live) return;
    bool released = false;
    for (unsigned w = 0; w < nwarps; ++w) released = release_warp(b, w) || released;
    if (!released && at_block == live) {
      // One barrier, reached at one place: threads waiting at different __syncthreads (a barrier
      // inside a branch the block does not take uniformly) is undefined on a GPU -- reported.
      const Fiber* first = nullptr;
      for (unsigned i = 0; i < b->n; ++i) {
        const Fiber* f = &b->fibers[i];
        if (f->state != kAtBlockBarrier) continue;
        if (!first) {
          first = f;
        } else if (f->site_line != first->site_line || f->site_kind != first->site_kind ||
                   (f->site_file != first->site_file && strcmp(f->site_file, first->site_file) != 0)) {
          snprintf(b->launch->error, sizeof b->launch->error,
                   "barrier divergence in block (%u, %u, %u): thread (%u, %u, %u) waits at the barrier of "
                   "%s:%u while thread (%u, %u, %u) waits at the one of %s:%u (a __syncthreads inside a branch "
                   "that not every thread of the block takes)",
                   t_block_idx.x, t_block_idx.y, t_block_idx.z, first->idx.x, first->idx.y,
                   first->idx.z, first->site_file, first->site_line, f->idx.x, f->idx.y, f->idx.z, f->site_file,
                   f->site_line);
          trace::on_barrier_divergence(b, first, f, trace::kBarrierDivergence);
          b->launch->error_code = 719;  // CUDA_ERROR_LAUNCH_FAILED
          return;
        }
      }
      trace::on_block_barrier_lanes(b);
      for (unsigned i = 0; i < b->n; ++i)
        if (b->fibers[i].state == kAtBlockBarrier) b->fibers[i].state = kRunnable;
      ++b->block_gen;
      trace::on_block_barrier(b->block_gen);
      released = true;
    }
    if (!released && at_grid) {
      snprintf(b->launch->error, sizeof b->launch->error,
               "barrier divergence in block (%u, %u, %u) of kernel %s: %u of its %u live threads wait at "
               "grid_group::sync() while the others wait at __syncthreads or a warp-synchronous operation (every "
               "thread of a block must reach grid.sync(), as it synchronises the block too)",
               t_block_idx.x, t_block_idx.y, t_block_idx.z, b->kernel->name, at_grid, live);
      b->launch->error_code = 719;  // CUDA_ERROR_LAUNCH_FAILED
      return;
    }
    if (!released) {
      snprintf(b->launch->error, sizeof b->launch->error,
               "kernel %s deadlocked in block (%u, %u, %u) (barrier divergence): %u of %u live threads wait at "
               "__syncthreads, the others at a warp-synchronous operation whose lanes never all arrive",
               b->kernel->name, t_block_idx.x, t_block_idx.y, t_block_idx.z, at_block, live);
      for (unsigned i = 0; i < b->n; ++i)
        if (b->fibers[i].state == kAtBlockBarrier) {
          trace::on_barrier_divergence(b, &b->fibers[i], nullptr, trace::kBarrierDeadlock);
          break;
        }
      b->launch->error_code = 719;  // CUDA_ERROR_LAUNCH_FAILED
      return;
    }
  }
}

// Waits at the block barrier; returns the generation it was released as.
inline unsigned long long block_barrier(int kind, const char* file, unsigned line) {
  Fiber* f = t_fiber;
  if (!t_block) {
    if (t_block_dim.x * t_block_dim.y * t_block_dim.z > 1)
      fail(719, "internal: a barrier ran in a kernel compiled without fibers%s%s", "", "");
    return 0;
  }
  const unsigned long long gen = t_block->block_gen;
  f->site_file = file;
  f->site_line = line;
  f->site_kind = kind;
  f->state = kAtBlockBarrier;
  to_scheduler(f);
  return gen;
}

// Every lane of `mask` stores `value`; returns the 32 values once all have arrived.
inline const unsigned long long* warp_exchange(unsigned long long value, unsigned mask) {
  Fiber* f = t_fiber;
  if (!t_block) {
    static thread_local unsigned long long single[32];
    single[0] = value;
    return single;
  }
  trace::on_warp_arrive();
  WarpSync& ws = t_block->warps[f->warp];
  const unsigned parity = f->warp_ops++ & 1u;
  ws.slots[parity][f->lane] = value;
  if (ws.arrived == 0) ws.mask = mask ? mask : 0xffffffffu;
  ++ws.arrived;
  f->state = kAtWarpBarrier;
  to_scheduler(f);
  return ws.slots[parity];
}

inline unsigned lane_id() { return t_fiber ? t_fiber->lane : 0; }

template <class T>
inline unsigned long long to_bits(T v) {
  static_assert(sizeof(T) <= 8, "warp shuffles move at most 8 bytes");
  unsigned long long bits = 0;
  memcpy(&bits, &v, sizeof(T));
  return bits;
}

template <class T>
inline T from_bits(unsigned long long bits) {
  T v;
  memcpy(&v, &bits, sizeof(T));
  return v;
}

template <class T>
inline T shuffle(unsigned mask, T v, unsigned src) {
  const unsigned long long* slots = warp_exchange(to_bits(v), mask);
  return from_bits<T>(slots[src & 31u]);
}

template <class T>
T* dynamic_shared() {
  return reinterpret_cast<T*>(t_dynamic_shared);
}

DCSIM_LOCAL_END
}  // namespace dcsim

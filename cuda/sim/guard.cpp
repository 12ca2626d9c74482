// Memory faults inside kernels: a raw CUDA kernel that reads or writes outside its allocations
// (or overflows a fiber stack) would otherwise kill the interpreter. While a worker thread runs
// blocks, a SIGSEGV/SIGBUS jumps back to it and the launch fails with CUDA_ERROR_ILLEGAL_ADDRESS,
// as on a GPU. Faults anywhere else go to the handler that was installed before.
#include <setjmp.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "sim.hpp"

namespace dcsim_lib {

namespace {

thread_local sigjmp_buf* t_jump = nullptr;
thread_local void* t_fault = nullptr;
struct sigaction g_previous[2];

void forward(int sig, siginfo_t* info, void* context) {
  const struct sigaction& old = g_previous[sig == SIGSEGV ? 0 : 1];
  if (old.sa_flags & SA_SIGINFO) {
    if (old.sa_sigaction) {
      old.sa_sigaction(sig, info, context);
      return;
    }
  } else if (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN) {
    old.sa_handler(sig);
    return;
  }
  // Default action: restore it and let the fault happen again on return.
  signal(sig, SIG_DFL);
}

void on_fault(int sig, siginfo_t* info, void* context) {
  if (t_jump) {
    t_fault = info ? info->si_addr : nullptr;
    sigjmp_buf* jump = t_jump;
    t_jump = nullptr;
    siglongjmp(*jump, sig);
  }
  forward(sig, info, context);
}

void install() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &g_previous[0]);
    sigaction(SIGBUS, &sa, &g_previous[1]);
  });
}

// A fiber stack overflow faults on a guard page with no stack left: the handler needs its own.
void alternate_stack() {
  thread_local std::vector<char> stack;
  if (!stack.empty()) return;
  stack.resize(64 * 1024);
  stack_t ss{};
  ss.ss_sp = stack.data();
  ss.ss_size = stack.size();
  sigaltstack(&ss, nullptr);
}

}  // namespace

bool run_guarded(dcsim_run_fn run, dcsim_launch* L) {
  install();
  alternate_stack();
  sigjmp_buf jump;
  if (sigsetjmp(jump, 1) == 0) {
    t_jump = &jump;
    run(L);
    t_jump = nullptr;
    return true;
  }
  const uint64_t addr = reinterpret_cast<uint64_t>(t_fault);
  std::snprintf(L->error, sizeof L->error,
                "illegal memory access at host address 0x%llx (out of bounds of its buffer, a freed or "
                "foreign pointer, or a stack overflow)",
                static_cast<unsigned long long>(addr));
  L->error_code = CUDA_ERROR_ILLEGAL_ADDRESS;
  return false;
}

}  // namespace dcsim_lib

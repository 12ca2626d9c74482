// Faults inside kernels: a raw CUDA kernel that reads or writes outside its allocations, overflows
// a stack, divides an integer by zero or runs into a trap the host compiler put in for undefined
// behaviour would otherwise kill the interpreter. While a worker thread runs blocks, SIGSEGV/SIGBUS
// (CUDA_ERROR_ILLEGAL_ADDRESS) and SIGFPE/SIGILL (CUDA_ERROR_ILLEGAL_INSTRUCTION) jump back to it
// and the launch fails, as on a GPU; so does the watchdog's signal once a launch has run longer
// than DOTCOMPUTE_CUDA_SIM_TIMEOUT_S (CUDA_ERROR_LAUNCH_TIMEOUT). Signals anywhere else go to the
// handler that was installed before.
#include <setjmp.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "sim.hpp"

namespace dcsim_lib {

namespace {

thread_local sigjmp_buf* t_jump = nullptr;
thread_local void* t_fault = nullptr;
thread_local Watch* t_watch = nullptr;

constexpr int kFaultSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
struct sigaction g_previous[4];

// The watchdog's signal: a real-time one, which neither Python nor the C library uses.
int timeout_signal() { return SIGRTMIN + 6; }

void forward(int sig, siginfo_t* info, void* context) {
  size_t i = 0;
  while (i < 4 && kFaultSignals[i] != sig) ++i;
  if (i == 4) return;
  const struct sigaction& old = g_previous[i];
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

void on_timeout(int sig, siginfo_t*, void*) {
  // Only a thread still inside a block of the expired launch leaves it; a late signal is ignored.
  if (t_jump && t_watch && t_watch->expired()) {
    sigjmp_buf* jump = t_jump;
    t_jump = nullptr;
    siglongjmp(*jump, sig);
  }
}

// Installs the handlers, and installs them again whenever someone replaced the SIGSEGV one: a
// library's crash handler (LLVM's, loaded by a JIT beside us, puts itself in front of SIGSEGV,
// SIGINT, ... and on any of them -- a Ctrl-C included -- puts back what it found, the default)
// must not leave the next faulting kernel to kill the process. One sigaction query per call.
void install() {
  static std::mutex mutex;
  static std::atomic<bool> timeout_installed{false};
  struct sigaction current {};
  if (sigaction(SIGSEGV, nullptr, &current) == 0 && (current.sa_flags & SA_SIGINFO) &&
      current.sa_sigaction == on_fault && timeout_installed)
    return;
  std::lock_guard<std::mutex> lock(mutex);
  struct sigaction sa {};
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < 4; ++i) {
    struct sigaction old {};
    if (sigaction(kFaultSignals[i], nullptr, &old) != 0) continue;
    if ((old.sa_flags & SA_SIGINFO) && old.sa_sigaction == on_fault) continue;  // still ours
    g_previous[i] = old;
    sigaction(kFaultSignals[i], &sa, nullptr);
  }
  if (!timeout_installed) {
    struct sigaction st {};
    st.sa_sigaction = on_timeout;
    st.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigemptyset(&st.sa_mask);
    sigaction(timeout_signal(), &st, nullptr);
    timeout_installed = true;
  }
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

// One thread for every watched launch: sleeps until the earliest deadline, then marks that launch
// expired and signals the threads running its blocks.
class Watchdog {
 public:
  static Watchdog& get() {
    static Watchdog* w = new Watchdog();  // never destroyed: launches may run while the process exits
    return *w;
  }
  void add(Watch* w) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      watches_.push_back(w);
      if (!started_) {
        started_ = true;
        std::thread([this] { loop(); }).detach();
      }
    }
    cv_.notify_all();
  }
  void remove(Watch* w) {
    std::lock_guard<std::mutex> lock(mutex_);
    watches_.erase(std::remove(watches_.begin(), watches_.end(), w), watches_.end());
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      auto next = std::chrono::steady_clock::time_point::max();
      for (Watch* w : watches_)
        if (!w->expired_) next = std::min(next, w->deadline_);
      if (next == std::chrono::steady_clock::time_point::max())
        cv_.wait(lock);
      else
        cv_.wait_until(lock, next);
      const auto now = std::chrono::steady_clock::now();
      for (Watch* w : watches_)
        if (!w->expired_ && now >= w->deadline_) w->expire();
    }
  }
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<Watch*> watches_;
  bool started_ = false;
};

Watch::Watch(double seconds)
    : seconds_(seconds),
      deadline_(std::chrono::steady_clock::now() +
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds))) {
  if (seconds > 0) {
    install();
    watched_ = true;
    Watchdog::get().add(this);
  }
}

Watch::~Watch() {
  if (watched_) Watchdog::get().remove(this);
}

void Watch::expire() {
  std::lock_guard<std::mutex> threads(mutex_);
  expired_ = true;
  for (pthread_t t : threads_) pthread_kill(t, timeout_signal());
}

void Watch::interrupt() {
  install();
  interrupted_ = true;
  expire();
}

bool run_guarded(dcsim_run_fn run, dcsim_launch* L, Watch* watch) {
  install();
  alternate_stack();
  if (watch) {
    std::lock_guard<std::mutex> lock(watch->mutex_);
    if (!watch->expired_) watch->threads_.push_back(pthread_self());
  }
  auto leave = [&] {
    if (!watch) return;
    std::lock_guard<std::mutex> lock(watch->mutex_);
    auto& ts = watch->threads_;
    const auto it = std::find(ts.begin(), ts.end(), pthread_self());
    if (it != ts.end()) ts.erase(it);
  };
  sigjmp_buf jump;
  int sig = 0;
  if (watch && watch->expired()) {
    sig = timeout_signal();
  } else if ((sig = sigsetjmp(jump, 1)) == 0) {
    t_watch = watch;
    t_jump = &jump;
    run(L);
    t_jump = nullptr;
    t_watch = nullptr;
    leave();
    return true;
  }
  t_jump = nullptr;
  t_watch = nullptr;
  leave();
  if (sig == timeout_signal() && watch && watch->interrupted()) {
    std::snprintf(L->error, sizeof L->error, "the launch was interrupted (Ctrl-C while synchronizing)");
    L->error_code = CUDA_ERROR_LAUNCH_FAILED;
    return false;
  }
  if (sig == timeout_signal()) {
    std::snprintf(L->error, sizeof L->error,
                  "the launch ran longer than DOTCOMPUTE_CUDA_SIM_TIMEOUT_S=%g seconds and was stopped (as a "
                  "GPU's watchdog stops a kernel that never ends)",
                  watch ? watch->seconds() : 0.0);
    L->error_code = CUDA_ERROR_LAUNCH_TIMEOUT;
    return false;
  }
  if (sig == SIGFPE) {
    std::snprintf(L->error, sizeof L->error,
                  "integer division by zero (or INT_MIN / -1) in device code: a GPU returns an unspecified "
                  "value there; the simulator stops the launch so that the bug is seen");
    L->error_code = CUDA_ERROR_ILLEGAL_INSTRUCTION;
    return false;
  }
  if (sig == SIGILL) {
    std::snprintf(L->error, sizeof L->error,
                  "illegal instruction at host address 0x%llx: the host compiler trapped undefined behaviour "
                  "in device code (an integer division by a constant zero, a function that does not return its "
                  "value, ...)",
                  static_cast<unsigned long long>(reinterpret_cast<uint64_t>(t_fault)));
    L->error_code = CUDA_ERROR_ILLEGAL_INSTRUCTION;
    return false;
  }
  const uint64_t addr = reinterpret_cast<uint64_t>(t_fault);
  const std::string what = describe_fault(t_fault);
  std::snprintf(L->error, sizeof L->error, "illegal memory access at host address 0x%llx (%s)",
                static_cast<unsigned long long>(addr),
                what.empty() ? "out of bounds of its buffer, a freed or foreign pointer, or a stack overflow"
                             : what.c_str());
  L->error_code = CUDA_ERROR_ILLEGAL_ADDRESS;
  return false;
}

}  // namespace dcsim_lib

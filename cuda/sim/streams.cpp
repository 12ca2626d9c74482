// Streams as in-order worker threads, and the pool that runs a launch's blocks.
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "sim.hpp"

namespace dcsim_lib {

Stream::Stream(int dev, unsigned f) : device(dev), flags(f) { thread_ = std::thread([this] { worker(); }); }

Stream::~Stream() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Stream::enqueue(Task task) {
  if (capture) {
    capture->nodes.push_back(std::move(task));
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(task));
    ++enqueued_;
  }
  cv_.notify_all();
}

uint64_t Stream::ticket() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return enqueued_;
}

void Stream::wait_for(uint64_t ticket) {
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait(lock, [&] { return done_ >= ticket; });
}

// Ctrl-C while a thread waits in synchronize(): the wait is native code that Python's signal
// handler cannot end, so while anyone waits the simulator puts a handler in front of the one that
// was there (Python's), which notes the signal and calls it (Python still raises KeyboardInterrupt
// once the call returns). Only when a handler other than the default or "ignore" was installed:
// a process that would have died of SIGINT still does.
namespace {
std::mutex g_sigint_mutex;
int g_sigint_users = 0;
struct sigaction g_sigint_previous;
std::atomic<uint64_t> g_sigint_count{0};

void on_sigint(int sig, siginfo_t* info, void* context) {
  g_sigint_count.fetch_add(1);
  const struct sigaction& old = g_sigint_previous;
  if (old.sa_flags & SA_SIGINFO) {
    if (old.sa_sigaction) old.sa_sigaction(sig, info, context);
  } else if (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN) {
    old.sa_handler(sig);
  }
}

class InterruptScope {
 public:
  InterruptScope() : start_(g_sigint_count.load()) {
    std::lock_guard<std::mutex> lock(g_sigint_mutex);
    if (g_sigint_users++ > 0) return;
    struct sigaction current {};
    if (sigaction(SIGINT, nullptr, &current) != 0) return;
    const bool has_handler = (current.sa_flags & SA_SIGINFO) ? current.sa_sigaction != nullptr
                                                             : current.sa_handler != SIG_DFL && current.sa_handler != SIG_IGN;
    if (!has_handler) return;
    g_sigint_previous = current;
    struct sigaction sa {};
    sa.sa_sigaction = on_sigint;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    g_installed = sigaction(SIGINT, &sa, nullptr) == 0;
  }
  ~InterruptScope() {
    std::lock_guard<std::mutex> lock(g_sigint_mutex);
    if (--g_sigint_users > 0 || !g_installed) return;
    g_installed = false;
    // Put the previous handler back unless someone replaced ours meanwhile (theirs stays).
    struct sigaction current {};
    if (sigaction(SIGINT, nullptr, &current) == 0 && (current.sa_flags & SA_SIGINFO) &&
        current.sa_sigaction == on_sigint)
      sigaction(SIGINT, &g_sigint_previous, nullptr);
  }
  bool fired() const { return g_sigint_count.load() != start_; }

 private:
  static inline bool g_installed = false;
  uint64_t start_;
};
}  // namespace

void Stream::set_running(Watch* w) {
  std::lock_guard<std::mutex> lock(run_mutex_);
  running_ = w;
}

bool Stream::cancelled() const { return current_.load() <= cancel_through_.load(); }

// Drops the tasks up to `through` that have not started and stops the launch running now.
void Stream::interrupt(uint64_t through) {
  cancel_through_ = through;
  std::lock_guard<std::mutex> lock(run_mutex_);
  if (running_) running_->interrupt();
}

CUresult Stream::synchronize() {
  InterruptScope interrupts;
  std::unique_lock<std::mutex> lock(mutex_);
  const uint64_t target = enqueued_;
  bool interrupted = false;
  while (!cv_.wait_for(lock, std::chrono::milliseconds(50), [&] { return done_ >= target; })) {
    if (!interrupts.fired()) continue;
    interrupted = true;
    lock.unlock();
    interrupt(target);
    lock.lock();
    cv_.wait(lock, [&] { return done_ >= target; });
    break;
  }
  if (interrupted) {
    // The stopped work's own failure is not reported: Python raises KeyboardInterrupt on return.
    error_ = CUDA_SUCCESS;
    error_message_.clear();
    return CUDA_SUCCESS;
  }
  const CUresult e = error_;
  const std::string message = error_message_;
  error_ = CUDA_SUCCESS;
  error_message_.clear();
  lock.unlock();
  return e == CUDA_SUCCESS ? e : fail(e, message);
}

void Stream::record_error(CUresult code, const std::string& message) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (error_ == CUDA_SUCCESS) {
    error_ = code;
    error_message_ = message;
  }
}

void Stream::worker() {
  for (;;) {
    Task task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and everything ran
      task = std::move(queue_.front());
      queue_.pop_front();
      current_ = done_ + 1;  // the 1-based number of the task about to run
    }
    task(*this);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++done_;
    }
    cv_.notify_all();
  }
}

// ---- the block pool ----

namespace {

struct Job {
  const std::function<void(uint64_t)>* fn;
  uint64_t count;
  std::atomic<uint64_t> next{0};
  std::atomic<uint64_t> finished{0};
};

class Pool {
 public:
  Pool() {
    unsigned n = std::thread::hardware_concurrency();
    if (const char* v = std::getenv("DOTCOMPUTE_CUDA_SIM_THREADS"); v && *v) n = static_cast<unsigned>(std::atoi(v));
    if (n == 0) n = 1;
    // The thread enqueuing a launch (a stream's worker) runs blocks too, hence one fewer here.
    for (unsigned i = 1; i < n; ++i) threads_.emplace_back([this] { work(); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
  }

  void run(uint64_t count, const std::function<void(uint64_t)>& fn) {
    if (count == 0) return;
    auto job = std::make_shared<Job>();
    job->fn = &fn;
    job->count = count;
    if (count > 1 && !threads_.empty()) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        jobs_.push_back(job);
      }
      cv_.notify_all();
    }
    drain(*job);
    std::unique_lock<std::mutex> lock(mutex_);
    done_cv_.wait(lock, [&] { return job->finished.load() == job->count; });
  }

 private:
  void drain(Job& job) {
    for (;;) {
      const uint64_t i = job.next.fetch_add(1);
      if (i >= job.count) return;
      (*job.fn)(i);
      if (job.finished.fetch_add(1) + 1 == job.count) {
        std::lock_guard<std::mutex> lock(mutex_);
        done_cv_.notify_all();
      }
    }
  }

  void work() {
    for (;;) {
      std::shared_ptr<Job> job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
        if (stop_) return;
        job = jobs_.front();
        if (job->next.load() >= job->count) {
          jobs_.pop_front();
          continue;
        }
      }
      drain(*job);
      std::lock_guard<std::mutex> lock(mutex_);
      if (!jobs_.empty() && jobs_.front() == job) jobs_.pop_front();
    }
  }

  std::mutex mutex_;
  std::condition_variable cv_, done_cv_;
  std::deque<std::shared_ptr<Job>> jobs_;
  std::vector<std::thread> threads_;
  bool stop_ = false;
};

// Never destroyed: stream workers may still run launches while the process exits.
Pool& pool() {
  static Pool* p = new Pool();
  return *p;
}

// The stacks CUDA threads run on (fibers, or the one a plain block runs on), mapped once per
// pool thread at the largest size asked for: an inaccessible guard page below each stack and one
// above the last, so an overflow (deep recursion, a large local array) or a local array written
// past its end upwards faults instead of corrupting a neighbour or the worker's own frames.
struct Stacks {
  char* base = nullptr;
  size_t bytes = 0;
  unsigned count = 0;
  uint64_t each = 0;
  ~Stacks() {
    if (base) munmap(base, bytes);
  }
};

// Shared memory of the block running on this thread: [static window][guard][dynamic window][guard].
// Static __shared__ variables are allocated downwards from the first guard, dynamic shared memory
// ends at the second (16-byte granularity), so running off the end of either faults.
struct SharedMap {
  char* base = nullptr;
  size_t bytes = 0;
  size_t static_bytes = 0, dynamic_bytes = 0;  // both page multiples
  uint64_t dynamic_asked = 0;
  ~SharedMap() {
    if (base) munmap(base, bytes);
  }
};

thread_local Stacks t_stacks;
thread_local SharedMap t_shared;

// The resident blocks of the cooperative launch this thread runs (ResidentGrid), for describe_fault.
thread_local const ResidentGrid* t_grid = nullptr;

uint64_t round_up(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }

}  // namespace

char* thread_stacks(unsigned n, uint64_t bytes) {
  Stacks& s = t_stacks;
  if (s.base && s.count >= n && s.each == bytes) return s.base;
  if (s.base) munmap(s.base, s.bytes);
  s = Stacks();
  const uint64_t page = page_size();
  const size_t total = static_cast<size_t>(n) * bytes + page;
  void* p = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  s.base = static_cast<char*>(p);
  s.bytes = total;
  s.count = n;
  s.each = bytes;
  for (unsigned i = 0; i <= n; ++i) mprotect(s.base + static_cast<size_t>(i) * bytes, page, PROT_NONE);
  return s.base;
}

bool thread_shared(uint64_t dynamic_bytes, uint64_t static_bytes, char** static_top, char** dynamic) {
  SharedMap& m = t_shared;
  const uint64_t page = page_size();
  const uint64_t want_static = round_up(std::max<uint64_t>(static_bytes, 1), page);
  const uint64_t want_dynamic = round_up(std::max<uint64_t>(dynamic_bytes, 1), page);
  if (!m.base || m.static_bytes < want_static || m.dynamic_bytes < want_dynamic) {
    const uint64_t sb = std::max<uint64_t>(want_static, m.static_bytes);
    const uint64_t db = std::max<uint64_t>(want_dynamic, m.dynamic_bytes);
    if (m.base) munmap(m.base, m.bytes);
    m = SharedMap();
    const size_t total = sb + page + db + page;
    void* p = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return false;
    m.base = static_cast<char*>(p);
    m.bytes = total;
    m.static_bytes = sb;
    m.dynamic_bytes = db;
    mprotect(m.base + sb, page, PROT_NONE);
    mprotect(m.base + sb + page + db, page, PROT_NONE);
  }
  m.dynamic_asked = dynamic_bytes;
  *static_top = m.base + m.static_bytes;
  *dynamic = m.base + m.static_bytes + page + m.dynamic_bytes - round_up(dynamic_bytes, 16);
  return true;
}

// One segment per block, block_stride apart:
//   [n stacks of stack_bytes, each starting with a guard page][guard][static window][guard][dynamic][guard]
// so every block of a cooperative grid keeps its own stacks and shared memory while the others run.
bool ResidentGrid::map(uint64_t nblocks, unsigned nthreads, uint64_t each_stack, uint64_t static_bytes,
                       uint64_t dynamic_bytes) {
  const uint64_t page = page_size();
  blocks = nblocks;
  threads = nthreads;
  stack_bytes = each_stack;
  static_window = round_up(std::max<uint64_t>(static_bytes, 1), page);
  dynamic_window = round_up(std::max<uint64_t>(dynamic_bytes, 1), page);
  dynamic_asked = dynamic_bytes;
  stride = threads * stack_bytes + page + static_window + page + dynamic_window + page;
  bytes = static_cast<size_t>(blocks * stride);
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    base = nullptr;
    return false;
  }
  base = static_cast<char*>(p);
  for (uint64_t b = 0; b < blocks; ++b) {
    char* seg = base + b * stride;
    for (unsigned t = 0; t <= threads; ++t)
      if (mprotect(seg + static_cast<uint64_t>(t) * stack_bytes, page, PROT_NONE) != 0) return false;
    if (mprotect(static_top(b), page, PROT_NONE) != 0) return false;
    if (mprotect(static_top(b) + page + dynamic_window, page, PROT_NONE) != 0) return false;
  }
  t_grid = this;
  return true;
}

char* ResidentGrid::static_top(uint64_t b) const {
  return base + b * stride + threads * stack_bytes + page_size() + static_window;
}

char* ResidentGrid::dynamic(uint64_t b) const {
  return static_top(b) + page_size() + dynamic_window - round_up(dynamic_asked, 16);
}

ResidentGrid::~ResidentGrid() {
  if (t_grid == this) t_grid = nullptr;
  if (base) munmap(base, bytes);
}

std::string describe_fault(const void* address) {
  const char* a = static_cast<const char*>(address);
  const uint64_t page = page_size();
  if (const ResidentGrid* g = t_grid; g && g->base && a >= g->base && a < g->base + g->bytes) {
    const uint64_t b = static_cast<uint64_t>(a - g->base) / g->stride;
    const char* top = g->static_top(b);
    if (a >= top && a < top + page) return "past the end of the block's static __shared__ memory";
    if (a >= top + page + g->dynamic_window && a < top + 2 * page + g->dynamic_window)
      return "past the end of the block's dynamic shared memory (" + std::to_string(g->dynamic_asked) +
             " bytes: the launch's shared_mem)";
    const uint64_t off = static_cast<uint64_t>(a - g->base) % g->stride;
    if (off < g->threads * g->stack_bytes + page && (off % g->stack_bytes < page || off >= g->threads * g->stack_bytes))
      return "a CUDA thread's stack overflowed or a local array was written past its end";
  }
  const SharedMap& m = t_shared;
  if (m.base && a >= m.base + m.static_bytes && a < m.base + m.static_bytes + page)
    return "past the end of the block's static __shared__ memory";
  if (m.base && a >= m.base + m.static_bytes + page + m.dynamic_bytes && a < m.base + m.bytes)
    return "past the end of the block's dynamic shared memory (" + std::to_string(m.dynamic_asked) +
           " bytes: the launch's shared_mem)";
  const Stacks& s = t_stacks;
  if (s.base && a >= s.base && a < s.base + s.bytes) {
    const uint64_t offset = static_cast<uint64_t>(a - s.base);
    if (offset % s.each < page || offset >= s.count * s.each)
      return "a CUDA thread's stack overflowed or a local array was written past its end";
  }
  return "";
}

uint64_t resident_grid_mappings(uint64_t blocks, unsigned threads) {
  // per block: each stack and the guard page below it, the guard above the last stack, the static
  // window and its guard, the dynamic window and its guard
  return blocks * (2ull * threads + 5);
}

uint64_t mappings_available() {
  uint64_t limit = 65530;  // Linux's default vm.max_map_count
  if (FILE* f = std::fopen("/proc/sys/vm/max_map_count", "r")) {
    unsigned long long v = 0;
    if (std::fscanf(f, "%llu", &v) == 1 && v > 0) limit = v;
    std::fclose(f);
  }
  uint64_t used = 0;
  if (FILE* f = std::fopen("/proc/self/maps", "r")) {
    char buf[1 << 16];
    size_t got;
    while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) used += static_cast<uint64_t>(std::count(buf, buf + got, '\n'));
    std::fclose(f);
  }
  // leave room for what the process maps meanwhile (other launches' stacks, Python's own arenas)
  const uint64_t reserve = 4096;
  return limit > used + reserve ? limit - used - reserve : 0;
}

void parallel_for(uint64_t count, const std::function<void(uint64_t)>& fn) { pool().run(count, fn); }



}  // namespace dcsim_lib

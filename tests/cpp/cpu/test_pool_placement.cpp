// Where the pool's helper threads run: each on a CPU of its own, never on the CPU of the thread that
// submitted the launch (thread_pool.cpp, place_helpers: on a virtual machine a helper woken onto its
// submitter's CPU takes turns with it instead of running beside it).
#include <sched.h>

#include <dirent.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cpu_plugin.h"

namespace cputest {
namespace {

std::set<int> cpus_in(const cpu_set_t& set) {
  std::set<int> out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out.insert(c);
  return out;
}

// "0-2,5" -> {0, 1, 2, 5}
std::set<int> parse_cpu_list(const std::string& list) {
  std::set<int> out;
  std::stringstream ss(list);
  std::string part;
  while (std::getline(ss, part, ',')) {
    const auto dash = part.find('-');
    const int lo = std::stoi(part.substr(0, dash));
    const int hi = dash == std::string::npos ? lo : std::stoi(part.substr(dash + 1));
    for (int c = lo; c <= hi; ++c) out.insert(c);
  }
  return out;
}

// The allowed CPUs of every thread of this process named `name`.
std::vector<std::set<int>> threads_named(const std::string& name) {
  std::vector<std::set<int>> out;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return out;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    const std::string base = std::string("/proc/self/task/") + e->d_name;
    std::string comm;
    std::getline(std::ifstream(base + "/comm"), comm);
    if (comm != name) continue;
    std::ifstream status(base + "/status");
    for (std::string line; std::getline(status, line);) {
      const std::string key = "Cpus_allowed_list:";
      if (line.compare(0, key.size(), key) == 0) {
        std::string list = line.substr(key.size());
        list.erase(0, list.find_first_not_of(" \t"));
        out.push_back(parse_cpu_list(list));
      }
    }
  }
  closedir(dir);
  return out;
}

// Restores the calling thread's CPU mask on scope exit.
class PinnedTo {
 public:
  explicit PinnedTo(int cpu) {
    CPU_ZERO(&saved_);
    if (sched_getaffinity(0, sizeof(saved_), &saved_) != 0) return;  // ok_ stays false: nothing to undo
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    ok_ = sched_setaffinity(0, sizeof(one), &one) == 0;
  }
  PinnedTo(const PinnedTo&) = delete;
  PinnedTo& operator=(const PinnedTo&) = delete;
  ~PinnedTo() {
    if (ok_) sched_setaffinity(0, sizeof(saved_), &saved_);
  }
  bool ok() const { return ok_; }

 private:
  cpu_set_t saved_;
  bool ok_ = false;
};

void vector_add_through_the_pool(dc_kernel k) {
  const uint64_t n = uint64_t{1} << 20;  // far past the inline limit: the pool runs it
  Stream s;
  DeviceBuffer a(n * 4), b(n * 4), out(n * 4);
  for (uint64_t i = 0; i < n; ++i) {
    a.as<float>()[i] = static_cast<float>(i % 4096);
    b.as<float>()[i] = 1.0f;
  }
  Dims d;
  d.global[0] = n;
  DC_ASSERT_OK(launch(s.get(), k, d, Args().buffer(a).buffer(b).buffer(out).scalar<int64_t>(n)));
  s.sync();
  for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(out.as<float>()[i], static_cast<float>(i % 4096) + 1.0f) << i;
}

struct PoolSetup {
  std::set<int> cpus;       // where this process may run
  size_t helpers = 0;       // the pool's helper threads
  std::string skip;         // why the test cannot run here, if it cannot
};

// Starts the pool (its helpers are made by the first pooled launch, here unpinned as a program's
// first launch usually is) and says what it has.
PoolSetup start_the_pool(dc_kernel k) {
  PoolSetup p;
  cpu_set_t mine;
  if (sched_getaffinity(0, sizeof(mine), &mine) != 0) {
    p.skip = "sched_getaffinity failed";
    return p;
  }
  p.cpus = cpus_in(mine);
  if (p.cpus.size() < 2) {
    p.skip = "this process may run on one CPU only: the pool has no helpers to place";
    return p;
  }
  vector_add_through_the_pool(k);
  p.helpers = threads_named("dc-cpu-pool").size();
  if (p.helpers == 0) p.skip = "the pool runs without helpers here";
  return p;
}

// ctest runs this with DOTCOMPUTE_CPU_THREADS=2 (cpu_pool_placement): one helper, bound beside
// the submitter whichever of two CPUs the submitter is held on.
TEST(CpuPool, HelpersRunBesideTheSubmitterNotOnItsCpu) {
  dc_kernel k = kernel("vector_add");
  ASSERT_NE(k, nullptr);
  const PoolSetup pool = start_the_pool(k);
  if (!pool.skip.empty()) {
    GTEST_SKIP() << pool.skip;
  }
  if (pool.helpers > pool.cpus.size() - 1) {
    GTEST_SKIP() << pool.helpers << " helpers for " << pool.cpus.size()
                 << " CPUs: an oversubscribed pool is left unbound (the AnOversubscribedPool test)";
  }
  for (int cpu : {*pool.cpus.begin(), *std::next(pool.cpus.begin())}) {
    PinnedTo pin(cpu);
    ASSERT_TRUE(pin.ok());
    vector_add_through_the_pool(k);
    const auto helpers = threads_named("dc-cpu-pool");
    ASSERT_EQ(helpers.size(), pool.helpers);
    std::set<int> used;
    for (const auto& allowed : helpers) {
      ASSERT_EQ(allowed.size(), 1u) << "a helper is not bound to one CPU";
      EXPECT_NE(*allowed.begin(), cpu) << "a helper shares the submitting thread's CPU";
      used.insert(*allowed.begin());
    }
    EXPECT_EQ(used.size(), helpers.size()) << "two helpers share a CPU";
  }
}

// More helpers than the other CPUs (this binary's default DOTCOMPUTE_CPU_THREADS=4 on a machine
// of 2 or 3 CPUs): binding would stack helpers on fixed CPUs, so they keep the process's CPUs.
TEST(CpuPool, AnOversubscribedPoolIsLeftUnbound) {
  dc_kernel k = kernel("vector_add");
  ASSERT_NE(k, nullptr);
  const PoolSetup pool = start_the_pool(k);
  if (!pool.skip.empty()) {
    GTEST_SKIP() << pool.skip;
  }
  if (pool.helpers <= pool.cpus.size() - 1) {
    GTEST_SKIP() << pool.helpers << " helpers for " << pool.cpus.size() << " CPUs: not oversubscribed";
  }
  PinnedTo pin(*pool.cpus.begin());
  ASSERT_TRUE(pin.ok());
  vector_add_through_the_pool(k);
  for (const auto& allowed : threads_named("dc-cpu-pool")) EXPECT_EQ(allowed, pool.cpus);
}

}  // namespace
}  // namespace cputest

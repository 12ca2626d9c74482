// Streams are in-order and asynchronous; events mark positions in them, time
// them and let one stream wait for another.
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "cpu_plugin.h"
#include "dotcompute/cpu_kernel_abi.h"

namespace cputest {
namespace {

// Small launches on an idle stream run inline on the caller (by design), so a
// launch that must be asynchronous is made larger than that threshold.
Dims queued_launch() {
  Dims d;
  d.global[0] = 1u << 20;
  return d;
}

// Applies x = x*mul + add with a different (mul, add) per launch; the result
// depends on the order, and the scalars die right after each launch call.
TEST(CpuStreams, LaunchesRunInOrderWithCopiedScalars) {
  dc_kernel k = kernel("affine");
  ASSERT_NE(k, nullptr);
  Stream s;
  const uint64_t big = 1u << 20;  // queued on the worker and split over the pool
  const uint64_t small = 100;     // would run inline if the stream were idle
  DeviceBuffer x(big * 8);
  std::vector<uint64_t> want(big);
  for (uint64_t i = 0; i < big; ++i) x.as<uint64_t>()[i] = want[i] = i;
  for (int step = 0; step < 40; ++step) {
    const int64_t mul = 3 + step % 5;
    const int64_t add = step * 7 + 1;
    const uint64_t n = step % 2 == 0 ? big : small;
    {
      Dims d;
      d.global[0] = n;
      Args args;
      args.buffer(x).scalar(mul).scalar(add);
      DC_ASSERT_OK(launch(s.get(), k, d, args));
    }
    for (uint64_t i = 0; i < n; ++i) want[i] = want[i] * static_cast<uint64_t>(mul) + static_cast<uint64_t>(add);
  }
  s.sync();
  for (uint64_t i = 0; i < big; ++i) ASSERT_EQ(x.as<uint64_t>()[i], want[i]) << i;
}

TEST(CpuStreams, LaunchIsAsynchronous) {
  dc_kernel wait = kernel("wait_flag");
  ASSERT_NE(wait, nullptr);
  Stream s;
  DeviceBuffer flag(4);
  *flag.as<int32_t>() = 0;
  // Returns although the kernel cannot finish before the flag is set below.
  DC_ASSERT_OK(launch(s.get(), wait, queued_launch(), Args().buffer(flag)));
  Event e;
  DC_ASSERT_OK(api().event_record(e.get(), s.get()));
  int32_t done = 1;
  DC_ASSERT_OK(api().event_query(e.get(), &done));
  EXPECT_EQ(done, 0);
  __atomic_store_n(flag.as<int32_t>(), 1, __ATOMIC_RELEASE);
  DC_ASSERT_OK(api().event_synchronize(e.get()));
  DC_ASSERT_OK(api().event_query(e.get(), &done));
  EXPECT_EQ(done, 1);
  s.sync();
}

// A queued launch that the worker has not started when the caller synchronizes
// runs on the synchronizing thread (which would only sleep otherwise). The
// worker sleeps between the rounds (the pause outlasts its spin), so it wakes
// for each launch only after the caller is already waiting: at least one of
// the rounds must have run on the caller; without the hand-over none can.
TEST(CpuStreams, SynchronizeRunsWorkTheWorkerHasNotStarted) {
  dc_kernel k = kernel("record_thread");
  ASSERT_NE(k, nullptr);
  Stream s;
  DeviceBuffer tid(8);
  const auto me = static_cast<int64_t>(syscall(SYS_gettid));
  Dims one_group;  // queued (more items than run inline), one group: one thread runs all of it
  one_group.global[0] = 1u << 15;
  one_group.local[0] = 1u << 15;
  int on_caller = 0;
  for (int round = 0; round < 20; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    *tid.as<int64_t>() = 0;
    DC_ASSERT_OK(launch(s.get(), k, one_group, Args().buffer(tid)));
    s.sync();
    const int64_t ran_on = *tid.as<int64_t>();
    ASSERT_NE(ran_on, 0);
    on_caller += ran_on == me;
  }
  EXPECT_GT(on_caller, 0);
}

// A launch of few work-items runs inline on the caller only while the kernel is cheap: once a
// run has shown that its items are heavy (64 items of 200 us here: far over the inline budget),
// later launches of it go to the pool and spread over its threads, in groups small enough for
// every thread. The first launch (cost unknown) runs inline; without the cost model every launch
// would, and each would show the caller's thread id only.
TEST(CpuStreams, HeavyLaunchesOfFewItemsUseThePool) {
  dc_kernel k = kernel("busy_items");
  ASSERT_NE(k, nullptr);
  Stream s;
  const uint64_t n = 64;
  DeviceBuffer tids(n * 8);
  const auto me = static_cast<int64_t>(syscall(SYS_gettid));
  Dims d;
  d.global[0] = n;
  DC_ASSERT_OK(launch(s.get(), k, d, Args().buffer(tids).scalar<int64_t>(200)));
  for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(tids.as<int64_t>()[i], me) << "first launch, item " << i;
  bool spread = false;
  for (int round = 0; round < 5 && !spread; ++round) {
    for (uint64_t i = 0; i < n; ++i) tids.as<int64_t>()[i] = 0;
    DC_ASSERT_OK(launch(s.get(), k, d, Args().buffer(tids).scalar<int64_t>(200)));
    s.sync();
    std::vector<int64_t> seen;
    for (uint64_t i = 0; i < n; ++i) {
      const int64_t t = tids.as<int64_t>()[i];
      ASSERT_NE(t, 0) << "item " << i << " did not run";
      if (std::find(seen.begin(), seen.end(), t) == seen.end()) seen.push_back(t);
    }
    spread = seen.size() > 1;
  }
  EXPECT_TRUE(spread) << "every later launch ran on one thread";
}

// The core may release a kernel (and unload its module) as soon as a launch of it is queued: the
// queued launch keeps the module's code loaded until it has run. Without that, the worker would
// call into unmapped code (a segfault in a native thread, seen with concurrent cold compiles).
TEST(CpuStreams, UnloadingAModuleWaitsForItsQueuedLaunches) {
  const std::string source = R"(
#include <dotcompute/cpu_kernel_abi.h>
#include <unistd.h>
extern "C" void gate_then_write(const dc_cpu_launch* launch, uint64_t, uint64_t, void*) {
  const int* flag = *(const int* const*)launch->args[0];
  int* out = *(int* const*)launch->args[1];
  while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) == 0) usleep(100);
  out[0] = 42;
}
)";
  void* binary = nullptr;
  uint64_t size = 0;
  DC_ASSERT_OK(api().compile(0, source.c_str(), "", &binary, &size));
  dc_module m = nullptr;
  const dc_status loaded = api().module_load(0, binary, size, &m);
  api().free_binary(binary);
  DC_ASSERT_OK(loaded);
  dc_kernel k = nullptr;
  DC_ASSERT_OK(api().kernel_get(m, "gate_then_write", &k));
  Stream s;
  DeviceBuffer flag(4), out(4);
  *flag.as<int32_t>() = 0;
  *out.as<int32_t>() = 0;
  DC_ASSERT_OK(launch(s.get(), k, queued_launch(), Args().buffer(flag).buffer(out)));
  DC_ASSERT_OK(api().module_unload(m));  // the launch is queued (it waits for the flag)
  __atomic_store_n(flag.as<int32_t>(), 1, __ATOMIC_RELEASE);
  s.sync();
  EXPECT_EQ(*out.as<int32_t>(), 42);
}

TEST(CpuStreams, EventsMeasureElapsedTime) {
  dc_kernel sleep = kernel("sleep_ms");
  ASSERT_NE(sleep, nullptr);
  Stream s;
  Event start, end;
  DC_ASSERT_OK(api().event_record(start.get(), s.get()));
  Dims d;
  DC_ASSERT_OK(launch(s.get(), sleep, d, Args().scalar<int64_t>(30)));
  DC_ASSERT_OK(api().event_record(end.get(), s.get()));
  double ms = -1.0;
  DC_ASSERT_OK(api().event_elapsed_ms(start.get(), end.get(), &ms));  // waits for both
  EXPECT_GE(ms, 29.0);
  EXPECT_LT(ms, 5000.0);
  Event never;
  EXPECT_EQ(api().event_elapsed_ms(start.get(), never.get(), &ms), DC_ERROR_INVALID_ARGUMENT);
  int32_t done = 0;
  DC_ASSERT_OK(api().event_query(never.get(), &done));
  EXPECT_EQ(done, 1);  // an event never recorded has nothing to wait for
}

TEST(CpuStreams, StreamWaitsForAnotherStreamsEvent) {
  dc_kernel wait = kernel("wait_flag");
  dc_kernel set = kernel("set_value");
  ASSERT_NE(wait, nullptr);
  ASSERT_NE(set, nullptr);
  Stream producer, consumer;
  DeviceBuffer flag(4), out(4);
  *flag.as<int32_t>() = 0;
  *out.as<int32_t>() = 0;
  Dims one;
  DC_ASSERT_OK(launch(producer.get(), wait, queued_launch(), Args().buffer(flag)));
  Event ready;
  DC_ASSERT_OK(api().event_record(ready.get(), producer.get()));
  DC_ASSERT_OK(api().stream_wait_event(consumer.get(), ready.get()));
  // The consumer is idle but must not run this inline past the wait.
  DC_ASSERT_OK(launch(consumer.get(), set, one, Args().buffer(out).scalar<int32_t>(7)));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(__atomic_load_n(out.as<int32_t>(), __ATOMIC_ACQUIRE), 0) << "consumer ran before the producer's event";
  __atomic_store_n(flag.as<int32_t>(), 1, __ATOMIC_RELEASE);
  consumer.sync();
  EXPECT_EQ(*out.as<int32_t>(), 7);
  int32_t done = 0;
  DC_ASSERT_OK(api().event_query(ready.get(), &done));
  EXPECT_EQ(done, 1);
  producer.sync();
}

TEST(CpuStreams, ManyThreadsShareOneStream) {
  dc_kernel k = kernel("count_launch");
  ASSERT_NE(k, nullptr);
  Stream s;
  DeviceBuffer counter(8);
  *counter.as<int64_t>() = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 500; ++i) {
        Dims d;
        EXPECT_EQ(launch(s.get(), k, d, Args().buffer(counter)), DC_OK);
      }
    });
  }
  for (auto& t : threads) t.join();
  s.sync();
  // The kernel's increment is not atomic: only a stream that runs one launch
  // at a time gets every one of them counted.
  EXPECT_EQ(*counter.as<int64_t>(), 2000);
}

// Not a benchmark gate (no timing thresholds in tests): prints the per-launch
// cost of a trivial kernel and checks that every launch ran.
TEST(CpuStreams, TrivialLaunchLatency) {
  dc_kernel k = kernel("count_launch");
  ASSERT_NE(k, nullptr);
  Stream s;
  DeviceBuffer counter(8);
  *counter.as<int64_t>() = 0;
  Args args;
  args.buffer(counter);
  Dims d;
  const int n = 10000;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) ASSERT_EQ(launch(s.get(), k, d, args), DC_OK);
  s.sync();
  const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / n;
  std::printf("[ info     ] trivial launch: %.3f us per launch over %d launches\n", us, n);
  EXPECT_EQ(*counter.as<int64_t>(), n);
}

// A kernel's report through dc_cpu_launch::fail becomes the launch's status: at
// once for an inline launch, at the next synchronize for a queued one; it is
// reported once, and the stream runs later work.
TEST(CpuStreams, KernelFailureBecomesTheLaunchStatus) {
  dc_kernel k = kernel("fail_with");
  ASSERT_NE(k, nullptr);
  Stream s;
  struct Case {
    int32_t reason;
    dc_status status;
  };
  for (const Case c : {Case{DC_CPU_FAIL_OUT_OF_MEMORY, DC_ERROR_OUT_OF_MEMORY}, Case{DC_CPU_FAIL_LAUNCH, DC_ERROR_LAUNCH}}) {
    Args fail_args;
    fail_args.scalar(c.reason);
    Dims inline_dims;  // one item: runs inline on the idle stream
    EXPECT_EQ(launch(s.get(), k, inline_dims, fail_args), c.status);
    EXPECT_NE(last_error().find("fail_with was asked to fail"), std::string::npos) << last_error();
    DC_ASSERT_OK(launch(s.get(), k, queued_launch(), fail_args));  // queued: reported later
    EXPECT_EQ(api().stream_synchronize(s.get()), c.status);
    EXPECT_NE(last_error().find("fail_with was asked to fail"), std::string::npos) << last_error();
    DC_ASSERT_OK(api().stream_synchronize(s.get()));  // reported once
    Args ok_args;
    ok_args.scalar(int32_t{0});
    DC_ASSERT_OK(launch(s.get(), k, queued_launch(), ok_args));
    DC_ASSERT_OK(api().stream_synchronize(s.get()));
  }
}

}  // namespace
}  // namespace cputest

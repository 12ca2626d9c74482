// Streams and events through the fake plugin, whose streams are real worker
// threads: ordering within a stream, waits across streams, timing.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "test_helpers.hpp"

using namespace dotcompute;

namespace {

struct StreamFixture : ::testing::Test {
  std::unique_ptr<Runtime> rt = dctest::fake_runtime();
  std::shared_ptr<Accelerator> acc = rt->accelerator("fake:0");
  std::shared_ptr<Kernel> sleep_k = acc->compile(dctest::kFakeSource, "sleep_ms");
  std::shared_ptr<Kernel> append_k = acc->compile(dctest::kFakeSource, "append_i64");
  std::shared_ptr<LaunchPlan> sleep_p = sleep_k->plan({{ParamKind::Scalar, "ms", DType::Int64}});
  std::shared_ptr<LaunchPlan> append_p =
      append_k->plan({{ParamKind::Buffer, "log", DType::Int64, 1, true}, {ParamKind::Scalar, "v", DType::Int64}});
  LaunchConfig one = LaunchConfig::make({1});

  void sleep(Stream& s, int64_t ms) { sleep_p->launch(one, {ArgValue(ms)}, &s); }
  void append(Stream& s, Buffer& log, int64_t v) { append_p->launch(one, {ArgValue(&log), ArgValue(v)}, &s); }
  std::vector<int64_t> read(Buffer& log) {
    std::vector<int64_t> v(static_cast<size_t>(log.size()));
    log.copy_to_host(v.data(), log.nbytes());
    return std::vector<int64_t>(v.begin() + 1, v.begin() + 1 + v[0]);
  }
};

}  // namespace

TEST_F(StreamFixture, WorkOnAStreamRunsInOrderAndAsynchronously) {
  auto log = acc->allocate({16}, DType::Int64);
  log->fill_bytes(0);
  auto s = acc->create_stream();
  auto begin = std::chrono::steady_clock::now();
  sleep(*s, 80);
  append(*s, *log, 1);
  append(*s, *log, 2);
  auto e = s->record();
  auto enqueue_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count();
  EXPECT_LT(enqueue_ms, 60) << "launches must not wait for the work";
  EXPECT_FALSE(e->query());
  e->synchronize();
  EXPECT_TRUE(e->query());
  EXPECT_EQ(read(*log), (std::vector<int64_t>{1, 2}));
}

TEST_F(StreamFixture, AStreamWaitsForAnEventOfAnother) {
  auto log = acc->allocate({16}, DType::Int64);
  log->fill_bytes(0);
  acc->synchronize();
  auto s1 = acc->create_stream();
  auto s2 = acc->create_stream();
  sleep(*s1, 60);
  append(*s1, *log, 1);
  auto e = s1->record();
  s2->wait(*e);
  // Without the wait s2 would append first: s1 is still sleeping.
  append(*s2, *log, 2);
  s2->synchronize();
  EXPECT_EQ(read(*log), (std::vector<int64_t>{1, 2}));
}

TEST_F(StreamFixture, BuffersOrderThemselvesAcrossStreams) {
  // The buffer remembers s1 wrote it last; using it on s2 makes s2 wait.
  auto log = acc->allocate({16}, DType::Int64);
  log->fill_bytes(0);
  auto s1 = acc->create_stream();
  auto s2 = acc->create_stream();
  sleep(*s1, 60);
  append(*s1, *log, 1);
  append(*s2, *log, 2);
  EXPECT_EQ(log->last_stream().get(), s2.get());
  s2->synchronize();
  EXPECT_EQ(read(*log), (std::vector<int64_t>{1, 2}));
}

TEST_F(StreamFixture, EventsTimeTheWorkBetweenThem) {
  auto s = acc->create_stream();
  auto e1 = s->record();
  sleep(*s, 30);
  auto e2 = s->record();
  double ms = e1->elapsed_ms(*e2);
  EXPECT_GE(ms, 25.0);
  EXPECT_LT(ms, 5000.0);
  EXPECT_GE(e2->elapsed_ms(*e2), 0.0);
}

TEST_F(StreamFixture, AcceleratorSynchronizeWaitsForEveryStream) {
  auto log = acc->allocate({16}, DType::Int64);
  log->fill_bytes(0);
  acc->synchronize();
  auto s1 = acc->create_stream();
  auto s2 = acc->create_stream();
  sleep(*s1, 40);
  auto e1 = s1->record();
  sleep(*s2, 40);
  auto e2 = s2->record();
  acc->synchronize();
  EXPECT_TRUE(e1->query());
  EXPECT_TRUE(e2->query());
}

TEST_F(StreamFixture, DestroyingAStreamDrainsIt) {
  auto log = acc->allocate({16}, DType::Int64);
  log->fill_bytes(0);
  acc->synchronize();
  {
    auto s = acc->create_stream();
    sleep(*s, 30);
    append(*s, *log, 7);
    log->mark_used(acc->default_stream());  // the buffer no longer refers to s
  }
  EXPECT_EQ(read(*log), (std::vector<int64_t>{7}));
}

TEST_F(StreamFixture, AnotherDeviceOfTheSameBackendCanBeWaitedFor) {
  auto other = rt->accelerator("fake:1");
  auto e = other->default_stream().record();
  // Same plugin: allowed (like CUDA events across devices).
  EXPECT_NO_THROW(acc->default_stream().wait(*e));
  acc->synchronize();
}

TEST_F(StreamFixture, ManyThreadsLaunchAtOnce) {
  auto fill = acc->compile(dctest::kFakeSource, "fill_f32");
  auto plan = fill->plan({{ParamKind::Buffer, "x", DType::Float32, 1, true}, {ParamKind::Scalar, "v", DType::Float32}});
  std::vector<std::shared_ptr<Buffer>> bufs;
  for (int t = 0; t < 4; ++t) bufs.push_back(acc->allocate({256}, DType::Float32));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      // Half the threads use their own stream, half share the default one.
      std::shared_ptr<Stream> own = t % 2 ? acc->create_stream() : nullptr;
      for (int i = 0; i < 200; ++i) {
        plan->launch(LaunchConfig::make({256}), {ArgValue(bufs[t].get()), ArgValue(double(t * 1000 + i))}, own.get());
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) {
    EXPECT_EQ(static_cast<float*>(bufs[t]->host_data())[255], float(t * 1000 + 199)) << t;
  }
}

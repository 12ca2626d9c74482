// Compiling through the kernel cache and the launch path: argument checks
// naming the parameter, scalar conversion, extents, host arrays.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>

#include "test_helpers.hpp"

using namespace dotcompute;

namespace {

ParamSpec buf(const char* name, DType t, int ndim, bool written = false) {
  return {ParamKind::Buffer, name, t, ndim, written};
}
ParamSpec scalar(const char* name, DType t) { return {ParamKind::Scalar, name, t, 0, false}; }

struct LaunchFixture : ::testing::Test {
  std::unique_ptr<Runtime> rt = dctest::fake_runtime();
  std::shared_ptr<Accelerator> acc = rt->accelerator("fake:0");
  std::shared_ptr<Kernel> add = acc->compile(dctest::kFakeSource, "add_f32");
  std::shared_ptr<LaunchPlan> plan =
      add->plan({buf("a", DType::Float32, 1), buf("b", DType::Float32, 1), buf("out", DType::Float32, 1, true)});

  std::shared_ptr<Buffer> filled(const std::shared_ptr<Accelerator>& on, int64_t n, float v) {
    auto b = on->allocate({n}, DType::Float32);
    std::vector<float> h(static_cast<size_t>(n), v);
    b->copy_from_host(h.data(), b->nbytes());
    return b;
  }
  void expect_param_error(const std::vector<ArgValue>& args, const std::string& param, const std::string& text) {
    try {
      plan->launch(LaunchConfig::make({4}), args);
      ADD_FAILURE() << "expected InvalidArgumentError about " << param;
    } catch (const InvalidArgumentError& e) {
      EXPECT_EQ(e.param(), param) << e.what();
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  }
};

}  // namespace

TEST_F(LaunchFixture, ValidatesPacksAndRuns) {
  EXPECT_EQ(plan->expanded_count(), 6u);
  auto a = filled(acc, 100, 1), b = filled(acc, 100, 2);
  auto out = acc->allocate({100}, DType::Float32);
  plan->launch(LaunchConfig::make({100}), {ArgValue(a.get()), ArgValue(b.get()), ArgValue(out.get())});
  EXPECT_EQ(out->state(), TransferState::DeviceDirty);
  EXPECT_EQ(static_cast<float*>(out->host_data())[99], 3.0f);
}

TEST_F(LaunchFixture, ArgumentErrorsNameTheParameter) {
  auto a = filled(acc, 4, 1);
  auto d = acc->allocate({4}, DType::Float64);
  auto m = acc->allocate({2, 2}, DType::Float32);
  try {
    plan->launch(LaunchConfig::make({4}), {ArgValue(a.get())});
    ADD_FAILURE();
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("takes 3 arguments, got 1"), std::string::npos) << e.what();
  }
  expect_param_error({ArgValue(a.get()), ArgValue(d.get()), ArgValue(a.get())}, "b", "expected float32 elements, got float64");
  expect_param_error({ArgValue(a.get()), ArgValue(m.get()), ArgValue(a.get())}, "b", "expected 1 dimension(s), got 2");
  expect_param_error({ArgValue(a.get()), ArgValue(a.get()), ArgValue(1.0)}, "out", "expected a buffer or array, got a float");
  expect_param_error({ArgValue(static_cast<Buffer*>(nullptr)), ArgValue(a.get()), ArgValue(a.get())}, "a", "None");
  auto other = rt->accelerator("fake:1");
  auto far = filled(other, 4, 1);
  expect_param_error({ArgValue(far.get()), ArgValue(a.get()), ArgValue(a.get())}, "a", "lives on fake:1");
}

TEST_F(LaunchFixture, ScalarsAreConvertedToTheDeclaredType) {
  auto k = acc->compile(dctest::kFakeSource, "scalars");
  // raw: no extents after the buffer, but typed scalars.
  auto p = k->plan({buf("out", DType::Int64, 1, true), scalar("a", DType::Int32), scalar("b", DType::UInt8),
                    scalar("c", DType::Float32), scalar("d", DType::Float64), scalar("e", DType::Bool)},
                   /*raw=*/true);
  EXPECT_EQ(p->expanded_count(), 6u);
  auto out = acc->allocate({5}, DType::Int64);
  p->launch(LaunchConfig::make({1}), {ArgValue(out.get()), ArgValue(int64_t(-7)), ArgValue(int64_t(200)),
                                      ArgValue(int64_t(3)), ArgValue(2.5), ArgValue(true)});
  int64_t* o = static_cast<int64_t*>(out->host_data());
  EXPECT_EQ(o[0], -7);
  EXPECT_EQ(o[1], 200);
  EXPECT_EQ(o[2], 3000);
  EXPECT_EQ(o[3], 2500);
  EXPECT_EQ(o[4], 1);
  auto expect_error = [&](std::vector<ArgValue> args, const char* param, const char* text) {
    try {
      p->launch(LaunchConfig::make({1}), args);
      ADD_FAILURE() << "expected an error about " << param;
    } catch (const InvalidArgumentError& e) {
      EXPECT_EQ(e.param(), param);
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  expect_error({ArgValue(out.get()), ArgValue(1.5), ArgValue(int64_t(1)), ArgValue(1.0), ArgValue(1.0), ArgValue(false)},
               "a", "expected an int (int32), got a float");
  expect_error({ArgValue(out.get()), ArgValue(int64_t(1)), ArgValue(int64_t(256)), ArgValue(1.0), ArgValue(1.0),
                ArgValue(false)},
               "b", "does not fit in uint8");
  expect_error({ArgValue(out.get()), ArgValue(int64_t(1) << 40), ArgValue(int64_t(1)), ArgValue(1.0), ArgValue(1.0),
                ArgValue(false)},
               "a", "does not fit in int32");
  expect_error({ArgValue(out.get()), ArgValue(int64_t(1)), ArgValue(int64_t(1)), ArgValue(1.0), ArgValue(1.0),
                ArgValue(int64_t(1))},
               "e", "expected a bool, got an int");
  expect_error({ArgValue(out.get()), ArgValue(out.get()), ArgValue(int64_t(1)), ArgValue(1.0), ArgValue(1.0),
                ArgValue(false)},
               "a", "expected a int32 scalar, got a device buffer");
}

TEST_F(LaunchFixture, UntypedRawKernelsTakeArgumentsAsGiven) {
  auto k = acc->compile(dctest::kFakeSource, "scale_raw");
  auto p = k->plan({}, /*raw=*/true);
  auto x = acc->allocate({3}, DType::Float64);
  double v[3] = {1, 2, 3};
  x->copy_from_host(v, sizeof v);
  p->launch(LaunchConfig::make({1}), {ArgValue(x.get()), ArgValue(10.0), ArgValue(int64_t(3))});
  x->copy_to_host(v, sizeof v);
  EXPECT_EQ(v[2], 30.0);
}

TEST_F(LaunchFixture, HostArraysRunInPlaceOnUnifiedMemoryOnly) {
  std::vector<float> a(64, 1.5f), b(64, 2.0f), out(64, 0.0f);
  int64_t shape[1] = {64};
  auto host = [&](std::vector<float>& v) {
    HostArray h;
    h.data = v.data();
    h.dtype = DType::Float32;
    h.ndim = 1;
    h.shape = shape;
    return ArgValue(h);
  };
  plan->launch(LaunchConfig::make({64}), {host(a), host(b), host(out)});
  EXPECT_EQ(out[63], 3.5f) << "results are there when launch returns";

  auto other = rt->accelerator("fake:1");
  auto k = other->compile(dctest::kFakeSource, "add_f32");
  auto p = k->plan(plan->params());
  auto bb = filled(other, 64, 1);
  try {
    p->launch(LaunchConfig::make({64}), {ArgValue(bb.get()), host(b), ArgValue(bb.get())});
    FAIL() << "expected NeedsStaging";
  } catch (const NeedsStaging& e) {
    EXPECT_EQ(e.index(), 1u);
    EXPECT_EQ(e.param(), "b");
  }
  HostArray strided;
  strided.data = a.data();
  strided.ndim = 1;
  strided.shape = shape;
  strided.contiguous = false;
  EXPECT_THROW(plan->launch(LaunchConfig::make({64}), {ArgValue(strided), host(b), host(out)}), NeedsStaging);
}

TEST_F(LaunchFixture, LaunchConfigIsChecked) {
  EXPECT_THROW(LaunchConfig::make({}), LaunchError);
  EXPECT_THROW(LaunchConfig::make({1, 2, 3, 4}), LaunchError);
  EXPECT_THROW(LaunchConfig::make({0}), LaunchError);
  EXPECT_THROW(LaunchConfig::make({8, 8}, {4}), LaunchError);
  LaunchConfig c = LaunchConfig::make({8, 6}, {4, 2}, 128);
  dc_launch_config abi = c.to_abi();
  EXPECT_EQ(abi.dims, 2u);
  EXPECT_EQ(abi.global_size[1], 6u);
  EXPECT_EQ(abi.global_size[2], 1u);
  EXPECT_EQ(abi.local_size[0], 4u);
  EXPECT_EQ(abi.dynamic_shared_bytes, 128u);
  EXPECT_EQ(abi.struct_size, sizeof(dc_launch_config));
}

TEST_F(LaunchFixture, BackendLaunchFailuresAreLaunchErrors) {
  auto k = acc->compile(dctest::kFakeSource, "fill_f32");
  auto p = k->plan({}, true);
  try {
    p->launch(LaunchConfig::make({1}), {ArgValue(int64_t(1))});
    FAIL();
  } catch (const LaunchError& e) {
    EXPECT_NE(std::string(e.what()).find("wrong argument count"), std::string::npos) << e.what();
  }
  auto s = rt->accelerator("fake:1")->create_stream();
  EXPECT_THROW(k->launch(LaunchConfig::make({1}), {}, *s), LaunchError) << "a stream of another device";
}

TEST(Compile, GoesThroughBothCacheLevels) {
  dctest::TempDir dir;
  const std::string src = std::string(dctest::kFakeSource) + "// unique 1\n";
  int64_t compiles0;
  {
    auto rt = dctest::fake_runtime(dir.path());
    auto acc = rt->accelerator("fake:0");
    compiles0 = dctest::fake_counters().compiles;
    auto k1 = acc->compile(src, "fill_f32");
    EXPECT_EQ(dctest::fake_counters().compiles, compiles0 + 1);
    auto k2 = acc->compile(src, "add_f32");  // same module, another entry
    EXPECT_EQ(k2->name(), "add_f32");
    EXPECT_EQ(dctest::fake_counters().compiles, compiles0 + 1);
    EXPECT_EQ(rt->cache().stats().misses, 1u);
    auto k3 = acc->compile(src, "fill_f32", "-DX");  // options are part of the key
    EXPECT_EQ(dctest::fake_counters().compiles, compiles0 + 2);
    EXPECT_EQ(rt->cache().stats().entries, 2u);
  }
  auto rt = dctest::fake_runtime(dir.path());
  auto acc = rt->accelerator("fake:0");
  int64_t before = dctest::fake_counters().compiles;
  auto k = acc->compile(src, "fill_f32");
  EXPECT_EQ(dctest::fake_counters().compiles, before) << "a new runtime finds the binary on disk";
  EXPECT_EQ(rt->cache().stats().disk_hits, 1u);
  // Another device has another arch: another key.
  rt->accelerator("fake:1")->compile(src, "fill_f32");
  EXPECT_EQ(dctest::fake_counters().compiles, before + 1);
}

TEST(Compile, ErrorsCarryTheLogAndSource) {
  auto rt = dctest::fake_runtime();
  auto acc = rt->accelerator("fake:0");
  const std::string bad = "kernel k\n#error this does not compile\n";
  try {
    acc->compile(bad, "k");
    FAIL();
  } catch (const CompilationError& e) {
    EXPECT_NE(e.log().find("fakecc: error: #error this does not compile"), std::string::npos) << e.log();
    EXPECT_EQ(e.source(), bad);
    EXPECT_NE(std::string(e.what()).find("'k'"), std::string::npos);
  }
  try {
    acc->compile(dctest::kFakeSource, "missing_entry");
    FAIL();
  } catch (const CompilationError& e) {
    EXPECT_NE(std::string(e.what()).find("missing_entry"), std::string::npos);
  }
}

// Not a timed test: prints the cost of the core's per-launch path (validation,
// packing, buffer bookkeeping) for reference; the "noop" kernel enqueues nothing.
TEST_F(LaunchFixture, LaunchPathCost) {
  auto noop = acc->compile(dctest::kFakeSource, "noop");
  auto p = noop->plan(plan->params());
  auto a = filled(acc, 16, 1), b = filled(acc, 16, 2);
  auto out = acc->allocate({16}, DType::Float32);
  const ArgValue args[3] = {ArgValue(a.get()), ArgValue(b.get()), ArgValue(out.get())};
  LaunchConfig cfg = LaunchConfig::make({16});
  const int64_t before = dctest::fake_counters().launches;
  const int n = 50000;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) p->launch(cfg, args, 3);
  double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / n;
  std::printf("[ info ] %.3f us per launch of a 3-buffer kernel through LaunchPlan (core path only)\n", us);
  EXPECT_EQ(dctest::fake_counters().launches - before, n);
  EXPECT_EQ(out->state(), TransferState::DeviceDirty);
}

TEST_F(LaunchFixture, IndexFactsAreCheckedAgainstTheBufferExtents) {
  // out[2 * global_id(0) + 1] and a[global_id(0)] along dimension 0 (lang/bounds.py's facts)
  plan->set_index_facts({IndexFact{2, 0, 0, 2, 1}, IndexFact{0, 0, 0, 1, 0}});
  auto a = filled(acc, 8, 1), out = filled(acc, 8, 0);
  const std::vector<ArgValue> args{ArgValue(a.get()), ArgValue(a.get()), ArgValue(out.get())};
  EXPECT_TRUE(plan->indices_fit(LaunchConfig::make({4}), args.data(), args.size()));   // top index 7
  EXPECT_FALSE(plan->indices_fit(LaunchConfig::make({5}), args.data(), args.size()));  // 9 > 7
  auto short_a = filled(acc, 3, 1);
  const std::vector<ArgValue> short_args{ArgValue(short_a.get()), ArgValue(a.get()), ArgValue(out.get())};
  EXPECT_FALSE(plan->indices_fit(LaunchConfig::make({4}), short_args.data(), short_args.size()));
  // a dimension the launch lacks counts as size 1; a fact on a non-buffer argument proves nothing
  plan->set_index_facts({IndexFact{2, 0, 1, 1, 7}});
  EXPECT_TRUE(plan->indices_fit(LaunchConfig::make({100}), args.data(), args.size()));
  const std::vector<ArgValue> host{ArgValue(a.get()), ArgValue(a.get()), ArgValue(1.0)};
  EXPECT_FALSE(plan->indices_fit(LaunchConfig::make({1}), host.data(), host.size()));
  // a huge launch does not wrap around to an index that looks in range
  plan->set_index_facts({IndexFact{2, 0, 0, int64_t{1} << 62, 0}});
  EXPECT_FALSE(plan->indices_fit(LaunchConfig::make({8}), args.data(), args.size()));
}

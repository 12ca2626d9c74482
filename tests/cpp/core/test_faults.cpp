// Issue 8: faults injected into the fake plugin (fake_inject) surface as the right exception for
// their status and call site, and leave the runtime usable afterwards.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_helpers.hpp"

using namespace dotcompute;

namespace {

using InjectFn = void (*)(const char*, int64_t, int32_t);
using ClearFn = void (*)();

// The most derived core exception class of what `fn` throws ("none" if nothing).
template <typename F>
std::string thrown_kind(F&& fn) {
  try {
    fn();
  } catch (const OutOfMemoryError&) {
    return "OutOfMemoryError";
  } catch (const CompilationError&) {
    return "CompilationError";
  } catch (const LaunchError&) {
    return "LaunchError";
  } catch (const BackendUnavailableError&) {
    return "BackendUnavailableError";
  } catch (const InvalidArgumentError&) {
    return "InvalidArgumentError";
  } catch (const PluginError&) {
    return "PluginError";
  } catch (const Error&) {
    return "Error";
  } catch (...) {
    return "foreign";
  }
  return "none";
}

struct Faults : ::testing::Test {
  std::unique_ptr<Runtime> rt = dctest::fake_runtime();
  std::shared_ptr<Accelerator> acc = rt->accelerator("fake:1");
  InjectFn inject = reinterpret_cast<InjectFn>(rt->plugin_symbol("fake", "fake_inject"));
  ClearFn clear = reinterpret_cast<ClearFn>(rt->plugin_symbol("fake", "fake_inject_clear"));
  int unique = 0;

  void SetUp() override {
    ASSERT_NE(inject, nullptr);
    ASSERT_NE(clear, nullptr);
  }
  void TearDown() override { clear(); }

  std::shared_ptr<LaunchPlan> fill_plan() {
    auto k = acc->compile(std::string(dctest::kFakeSource) + "# " + std::to_string(++unique) + "\n", "fill_f32");
    return k->plan({{ParamKind::Buffer, "x", DType::Float32, 1, true}, {ParamKind::Scalar, "v", DType::Float32}});
  }
  // Compiles, allocates, launches and reads back: the runtime still works.
  void expect_usable() {
    auto plan = fill_plan();
    auto b = acc->allocate({16}, DType::Float32);
    plan->launch(LaunchConfig::make({16}), {ArgValue(b.get()), ArgValue(3.0)});
    float out[16] = {0};
    b->copy_to_host(out, sizeof out);
    EXPECT_EQ(out[0], 3.0f);
    EXPECT_EQ(out[15], 3.0f);
  }
};

struct Row {
  dc_status status;
  const char* compile;
  const char* launch;
  const char* runtime;
};

// The table of errors.hpp, driven through the plugin at each call site.
const Row kTable[] = {
    {DC_ERROR_INVALID_ARGUMENT, "CompilationError", "LaunchError", "Error"},
    {DC_ERROR_OUT_OF_MEMORY, "OutOfMemoryError", "OutOfMemoryError", "OutOfMemoryError"},
    {DC_ERROR_COMPILATION, "CompilationError", "CompilationError", "CompilationError"},
    {DC_ERROR_LAUNCH, "LaunchError", "LaunchError", "LaunchError"},
    {DC_ERROR_UNAVAILABLE, "BackendUnavailableError", "BackendUnavailableError", "BackendUnavailableError"},
    {DC_ERROR_UNSUPPORTED, "CompilationError", "LaunchError", "Error"},
    {DC_ERROR_INTERNAL, "Error", "Error", "Error"},
};

}  // namespace

TEST_F(Faults, StatusAndCallSiteChooseTheException) {
  auto plan = fill_plan();
  auto b = acc->allocate({16}, DType::Float32);
  float host[16];
  for (const Row& row : kTable) {
    SCOPED_TRACE("status " + std::to_string(int(row.status)));
    inject("compile", 1, row.status);
    EXPECT_EQ(thrown_kind([&] { fill_plan(); }), row.compile);
    inject("module_load", 1, row.status);
    EXPECT_EQ(thrown_kind([&] { fill_plan(); }), row.compile) << "module_load";
    inject("launch", 1, row.status);
    EXPECT_EQ(thrown_kind([&] { plan->launch(LaunchConfig::make({16}), {ArgValue(b.get()), ArgValue(1.0)}); }),
              row.launch);
    acc->synchronize();
    inject("memcpy_d2h", 1, row.status);
    EXPECT_EQ(thrown_kind([&] { b->copy_to_host(host, sizeof host); }), row.runtime) << "memcpy_d2h";
    inject("stream_synchronize", 1, row.status);
    EXPECT_EQ(thrown_kind([&] { acc->default_stream().synchronize(); }), row.runtime) << "stream_synchronize";
    inject("event_create", 1, row.status);
    EXPECT_EQ(thrown_kind([&] { acc->default_stream().record(); }), row.runtime) << "event_create";
    clear();
  }
  expect_usable();
}

TEST_F(Faults, AllocationFailureAtTheNthCall) {
  acc->memory().trim();
  const MemoryStats before = acc->memory().stats();
  // the 3rd device allocation fails, and so does the pool's retry after releasing its cache
  inject("mem_alloc", 3, DC_ERROR_OUT_OF_MEMORY);
  inject("mem_alloc", 3, DC_ERROR_OUT_OF_MEMORY);
  std::vector<std::shared_ptr<Buffer>> kept;
  kept.push_back(acc->allocate({1000}, DType::Float32));
  kept.push_back(acc->allocate({2000}, DType::Float32));
  EXPECT_THROW(acc->allocate({3000}, DType::Float32), OutOfMemoryError);
  EXPECT_EQ(acc->memory().stats().in_use, before.in_use + MemoryPool::size_class(4000) + MemoryPool::size_class(8000));
  kept.clear();
  acc->synchronize();
  acc->memory().trim();
  EXPECT_EQ(acc->memory().stats().in_use, before.in_use);
  EXPECT_EQ(acc->memory().stats().reserved, before.reserved) << "the failed allocation reserved nothing";
  expect_usable();
}

TEST_F(Faults, OneShotAllocationFailureIsCuredByTheRetry) {
  acc->memory().trim();
  auto cached = acc->allocate({5000}, DType::Float32);
  cached.reset();  // one block in the pool's cache
  inject("mem_alloc", 1, DC_ERROR_OUT_OF_MEMORY);
  auto b = acc->allocate({7000}, DType::Float32);  // fails once, the pool frees its cache and retries
  EXPECT_NE(b->device_ptr(), 0u);
}

TEST_F(Faults, LaunchAndCompileFailuresLeaveTheRuntimeUsable) {
  auto plan = fill_plan();
  auto b = acc->allocate({16}, DType::Float32);
  inject("launch", 1, DC_ERROR_LAUNCH);
  EXPECT_THROW(plan->launch(LaunchConfig::make({16}), {ArgValue(b.get()), ArgValue(2.0)}), LaunchError);
  plan->launch(LaunchConfig::make({16}), {ArgValue(b.get()), ArgValue(2.0)});
  float out[16];
  b->copy_to_host(out, sizeof out);
  EXPECT_EQ(out[7], 2.0f);
  const std::string src = std::string(dctest::kFakeSource) + "# compile-fault\n";
  inject("compile", 1, DC_ERROR_COMPILATION);
  EXPECT_THROW(acc->compile(src, "fill_f32"), CompilationError);
  EXPECT_NE(acc->compile(src, "fill_f32"), nullptr) << "a failed compile is not cached";
  expect_usable();
}

TEST_F(Faults, DeviceLostThenBack) {
  auto plan = fill_plan();
  auto b = acc->allocate({16}, DType::Float32);
  for (const char* call : {"launch", "mem_alloc", "stream_synchronize", "memcpy_d2h", "compile"})
    inject(call, 0, DC_ERROR_UNAVAILABLE);
  float out[16];
  EXPECT_THROW(plan->launch(LaunchConfig::make({16}), {ArgValue(b.get()), ArgValue(2.0)}), BackendUnavailableError);
  EXPECT_THROW(acc->allocate({1 << 20}, DType::Float32), BackendUnavailableError);
  EXPECT_THROW(acc->synchronize(), BackendUnavailableError);
  EXPECT_THROW(b->copy_to_host(out, sizeof out), BackendUnavailableError);
  EXPECT_THROW(fill_plan(), BackendUnavailableError);
  b.reset();  // freeing while the device is lost must not crash or leak into later work
  clear();
  expect_usable();
}

// Buffers: shapes, transfer states on unified and separate memory, copies,
// and memory-pool behaviour through a real (fake) plugin.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <string>
#include <utility>

#include "test_helpers.hpp"

using namespace dotcompute;

TEST(DType, NamesSizesAndKinds) {
  EXPECT_EQ(itemsize(DType::Float16), 2u);
  EXPECT_EQ(itemsize(DType::UInt64), 8u);
  EXPECT_STREQ(dtype_name(DType::Bool), "bool");
  for (int i = 0; i < kNumDTypes; ++i) {
    DType t = static_cast<DType>(i);
    EXPECT_EQ(dtype_from_name(dtype_name(t)), t);
  }
  EXPECT_EQ(dtype_from_name("bool_"), DType::Bool);
  EXPECT_TRUE(is_integer(DType::UInt8));
  EXPECT_FALSE(is_integer(DType::Bool));
  EXPECT_TRUE(is_floating(DType::Float16));
  EXPECT_FALSE(is_signed(DType::UInt32));
  try {
    dtype_from_name("float128");
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_EQ(e.param(), "dtype");
    EXPECT_NE(std::string(e.what()).find("float128"), std::string::npos);
  }
}

TEST(Buffer, ShapeSizeAndBytes) {
  auto rt = dctest::fake_runtime();
  auto acc = rt->accelerator("fake");
  auto b = acc->allocate({3, 4, 5}, DType::Float64);
  EXPECT_EQ(b->ndim(), 3);
  EXPECT_EQ(b->size(), 60);
  EXPECT_EQ(b->nbytes(), 480u);
  EXPECT_EQ(b->dtype(), DType::Float64);
  EXPECT_EQ(&b->accelerator(), acc.get());
  auto empty = acc->allocate({0, 7}, DType::Int32);
  EXPECT_EQ(empty->size(), 0);
  EXPECT_EQ(empty->nbytes(), 0u);
  auto scalar = acc->allocate({}, DType::Int32);
  EXPECT_EQ(scalar->size(), 1);
  try {
    acc->allocate({2, -1}, DType::Int32);
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_EQ(e.param(), "shape");
  }
  EXPECT_THROW(acc->allocate({INT64_MAX, 4}, DType::Int32), InvalidArgumentError);
}

TEST(Buffer, UnifiedMemoryNeverCopies) {
  auto rt = dctest::fake_runtime();
  auto acc = rt->accelerator("fake:0");
  ASSERT_TRUE(acc->unified_memory());
  auto b = acc->allocate({8}, DType::Float32);
  EXPECT_EQ(b->state(), TransferState::Synchronized);
  float* h = static_cast<float*>(b->host_data());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(h), static_cast<uintptr_t>(b->device_ptr())) << "host view is device memory";
  std::iota(h, h + 8, 1.0f);
  b->mark_host_dirty();
  EXPECT_EQ(b->state(), TransferState::Synchronized) << "nothing to upload";
  float out[8];
  b->copy_to_host(out, sizeof out);
  EXPECT_EQ(out[7], 8.0f);
  b->fill_bytes(0);
  EXPECT_EQ(static_cast<float*>(b->host_data())[3], 0.0f) << "host_data waits for queued work";
}

TEST(Buffer, SeparateMemoryCopiesLazilyAndOnce) {
  auto rt = dctest::fake_runtime();
  auto acc = rt->accelerator("fake:1");
  ASSERT_FALSE(acc->unified_memory());
  auto b = acc->allocate({8}, DType::Float32);
  EXPECT_EQ(b->state(), TransferState::DeviceOnly);
  float* h = static_cast<float*>(b->host_data());
  EXPECT_EQ(b->state(), TransferState::Synchronized);
  EXPECT_NE(reinterpret_cast<uintptr_t>(h), static_cast<uintptr_t>(b->device_ptr())) << "a separate mirror";
  for (int i = 0; i < 8; ++i) h[i] = float(i);
  b->mark_host_dirty();
  EXPECT_EQ(b->state(), TransferState::HostDirty);
  // The device copy is stale until device_ptr() uploads it.
  float* dev = reinterpret_cast<float*>(static_cast<uintptr_t>(b->device_ptr()));
  acc->synchronize();
  EXPECT_EQ(b->state(), TransferState::Synchronized);
  EXPECT_EQ(dev[5], 5.0f);
  // Device-side writes make the mirror stale; host_data() downloads.
  auto k = acc->compile(dctest::kFakeSource, "fill_f32");
  auto plan = k->plan({{ParamKind::Buffer, "x", DType::Float32, 1, true}, {ParamKind::Scalar, "v", DType::Float32}});
  plan->launch(LaunchConfig::make({8}), {ArgValue(b.get()), ArgValue(2.5)});
  EXPECT_EQ(b->state(), TransferState::DeviceDirty);
  EXPECT_EQ(h, b->host_data()) << "the mirror stays where it is";
  EXPECT_EQ(h[7], 2.5f);
  EXPECT_EQ(b->state(), TransferState::Synchronized);
  // copy_to_host serves from the synchronized mirror, copy_from_host invalidates it.
  float src[8] = {9, 9, 9, 9, 9, 9, 9, 42};
  b->copy_from_host(src, sizeof src);
  EXPECT_EQ(b->state(), TransferState::DeviceDirty);
  float out[8] = {0};
  b->copy_to_host(out, sizeof out);
  EXPECT_EQ(out[7], 42.0f);
  EXPECT_EQ(static_cast<float*>(b->host_data())[7], 42.0f);
  EXPECT_THROW(b->copy_to_host(out, 4), InvalidArgumentError);
  EXPECT_THROW(b->copy_from_host(src, 4), InvalidArgumentError);
}

TEST(Buffer, FreedBuffersAreReusedByThePool) {
  auto rt = dctest::fake_runtime();
  auto acc = rt->accelerator("fake:1");
  acc->memory().trim();
  MemoryStats before = acc->memory().stats();
  dc_devptr first;
  {
    auto b = acc->allocate({1000}, DType::Float32);
    first = b->device_ptr();
  }
  auto again = acc->allocate({1000}, DType::Float32);
  EXPECT_EQ(again->device_ptr(), first);
  MemoryStats after = acc->memory().stats();
  EXPECT_EQ(after.hits - before.hits, 1u);
  EXPECT_EQ(after.misses - before.misses, 1u);
  EXPECT_EQ(after.in_use, MemoryPool::size_class(4000));
}

TEST(Buffer, DeviceOutOfMemoryIsAnOutOfMemoryError) {
  setenv("FAKE_DEVICE_BYTES", "1048576", 1);
  {
    auto rt = dctest::fake_runtime();
    auto acc = rt->accelerator("fake:1");
    auto a = acc->allocate({600 * 1024}, DType::UInt8);
    try {
      acc->allocate({600 * 1024}, DType::UInt8);
      FAIL() << "expected OutOfMemoryError";
    } catch (const OutOfMemoryError& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find("fake:1"), std::string::npos) << msg;
      EXPECT_NE(msg.find("614400 bytes"), std::string::npos) << msg;
    }
    a.reset();  // cached now; the next allocation reuses it
    EXPECT_NO_THROW(acc->allocate({600 * 1024}, DType::UInt8));
    // A different size class must first release the cached block (retry).
    EXPECT_NO_THROW(acc->allocate({700 * 1024}, DType::UInt8));
  }
  unsetenv("FAKE_DEVICE_BYTES");
  // Re-initialise the plugin with its default capacity for later tests.
  dctest::fake_runtime()->backends();
}

// Issue 8: the upload from the host mirror is non-blocking; a buffer destroyed right after it
// must not free the mirror under the copy (ASan reports a heap-use-after-free otherwise).
TEST(Buffer, MirrorOutlivesAQueuedUpload) {
  auto rt = dctest::fake_runtime();
  auto acc = rt->accelerator("fake:1");
  ASSERT_FALSE(acc->unified_memory());
  auto sleep_k = acc->compile(dctest::kFakeSource, "sleep_ms");
  auto sleep_p = sleep_k->plan({{ParamKind::Scalar, "ms", DType::Int64}});
  auto dst = acc->allocate({4096}, DType::Float32);
  for (int round = 0; round < 3; ++round) {
    auto b = acc->allocate({4096}, DType::Float32);
    float* h = static_cast<float*>(b->host_data());
    for (int i = 0; i < 4096; ++i) h[i] = float(i + round);
    b->mark_host_dirty();
    Stream& s = acc->default_stream();
    // the queue is busy, so the upload below runs well after the buffer is gone
    sleep_p->launch(LaunchConfig::make({1}), {ArgValue(int64_t{30})}, &s);
    const dc_devptr src = b->device_ptr(s);  // enqueues the upload from the mirror
    ASSERT_EQ(acc->api()->memcpy_d2d(s.handle(), dst->device_ptr(s), 0, src, 0, 4096 * sizeof(float)), DC_OK);
    b.reset();  // the mirror must stay alive until the upload has run
    acc->synchronize();
    float out[4096];
    dst->copy_to_host(out, sizeof out);
    EXPECT_EQ(out[0], float(round));
    EXPECT_EQ(out[4095], float(4095 + round));
  }
}

namespace {
// The fake plugin's memcpy_h2d / memcpy_d2h call counts.
std::pair<int64_t, int64_t> fake_copy_counts() {
  void* h = dlopen(DC_TEST_FAKE_LIB, RTLD_NOW | RTLD_NOLOAD);
  if (h == nullptr) return {-1, -1};
  auto fn = reinterpret_cast<void (*)(int64_t*)>(dlsym(h, "fake_copy_counts"));
  int64_t v[2] = {-1, -1};
  if (fn) fn(v);
  dlclose(h);
  return {v[0], v[1]};
}
}  // namespace

// DC_FEATURE_HOST_VISIBLE_MEMORY (Metal's shared storage): a host-addressable block is viewed and
// copied in place, with no staging and no mirror; a block the plugin says is not (private
// storage) keeps the mirror and the plugin's copies; host pointers still are not device pointers.
TEST(Buffer, HostVisibleMemoryIsViewedAndCopiedInPlace) {
  setenv("FAKE_HOST_VISIBLE", "1", 1);
  {
    auto rt = dctest::fake_runtime();
    auto acc = rt->accelerator("fake:1");
    ASSERT_TRUE(acc->host_visible_memory());
    ASSERT_FALSE(acc->unified_memory()) << "host memory is still not device memory";
    auto k = acc->compile(dctest::kFakeSource, "fill_f32");
    auto plan = k->plan({{ParamKind::Buffer, "x", DType::Float32, 1, true}, {ParamKind::Scalar, "v", DType::Float32}});
    const auto copies_before = fake_copy_counts();

    auto b = acc->allocate({8}, DType::Float32);
    EXPECT_TRUE(b->host_visible());
    EXPECT_EQ(b->state(), TransferState::Synchronized);
    float* h = static_cast<float*>(b->host_data());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(h), static_cast<uintptr_t>(b->device_ptr())) << "the view is the block";
    std::iota(h, h + 8, 1.0f);
    b->mark_host_dirty();
    EXPECT_EQ(b->state(), TransferState::Synchronized) << "nothing to upload";
    auto other = acc->create_stream();
    plan->launch(LaunchConfig::make({8}), {ArgValue(b.get()), ArgValue(4.5)}, other.get());
    EXPECT_EQ(static_cast<float*>(b->host_data())[7], 4.5f) << "host_data waits for the kernel's stream";
    float src[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8] = {0};
    b->copy_from_host(src, sizeof src);
    b->copy_to_host(out, sizeof out);
    EXPECT_EQ(out[7], 8.0f);
    EXPECT_EQ(h[7], 8.0f) << "copy_from_host wrote the block itself";
    EXPECT_EQ(fake_copy_counts(), copies_before) << "no memcpy_h2d/d2h for a host-visible block";

    auto big = acc->allocate({1 << 18}, DType::Float32);  // 1 MiB: the fake says not host-visible
    EXPECT_FALSE(big->host_visible());
    EXPECT_EQ(big->state(), TransferState::DeviceOnly);
    float* mirror = static_cast<float*>(big->host_data());
    EXPECT_NE(reinterpret_cast<uintptr_t>(mirror), static_cast<uintptr_t>(big->device_ptr())) << "a mirror";
    mirror[0] = 3.0f;
    big->mark_host_dirty();
    EXPECT_EQ(big->state(), TransferState::HostDirty);
    big->device_ptr();
    acc->synchronize();
    EXPECT_GT(fake_copy_counts().first, copies_before.first) << "the mirror was uploaded by the plugin";
  }
  unsetenv("FAKE_HOST_VISIBLE");
  dctest::fake_runtime()->backends();  // re-initialise the plugin without it for later tests
}

// The core hands every plugin that takes it its checked kernel-cache folder (Metal keeps its
// binary archives there).
TEST(Runtime, PluginsLearnTheKernelCacheFolder) {
  char tmpl[] = "/tmp/dc-core-cachedir-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  auto rt = dctest::fake_runtime(tmpl);
  rt->backends();  // loads the plugins
  void* h = dlopen(DC_TEST_FAKE_LIB, RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(h, nullptr);
  auto fn = reinterpret_cast<void (*)(char*, size_t)>(dlsym(h, "fake_cache_dir"));
  ASSERT_NE(fn, nullptr);
  char dir[4096] = {0};
  fn(dir, sizeof dir);
  dlclose(h);
  EXPECT_EQ(std::string(dir), rt->cache().dir());
  EXPECT_EQ(std::string(dir), std::string(tmpl));
  rmdir(tmpl);
}

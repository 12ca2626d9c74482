// Running OpenCL C for real: argument kinds, work sizes, __local memory and barriers.
#include <cmath>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "../abi_struct_size.hpp"
#include "test_support.h"

namespace dctest {
namespace {

template <typename T>
void upload(const Stream& s, const DeviceBuffer& b, const std::vector<T>& v) {
  dc_status st = plugin()->memcpy_h2d(s.get(), b.get(), 0, v.data(), v.size() * sizeof(T));
  ASSERT_EQ(st, DC_OK) << describe(st);
}

template <typename T>
std::vector<T> download(const Stream& s, const DeviceBuffer& b, size_t n) {
  std::vector<T> v(n);
  dc_status st = plugin()->memcpy_d2h(s.get(), v.data(), b.get(), 0, n * sizeof(T));
  EXPECT_EQ(st, DC_OK) << describe(st);
  s.sync();
  return v;
}

TEST(OpenCLKernels, VectorAddWithAutomaticLocalSize) {
  const int64_t n = 1000;  // not a multiple of any work-group size
  Stream s;
  DeviceBuffer a(n * 4), b(n * 4), out(n * 4);
  std::vector<float> ha(n), hb(n);
  for (int64_t i = 0; i < n; ++i) {
    ha[i] = static_cast<float>(i) * 0.5f;
    hb[i] = 3.0f - static_cast<float>(i);
  }
  upload(s, a, ha);
  upload(s, b, hb);
  dc_kernel k = test_module().kernel("vadd");
  dc_kernel_arg args[] = {buffer_arg(a.get()), buffer_arg(b.get()), buffer_arg(out.get()), scalar_arg(n)};
  dc_launch_config cfg = launch_config({static_cast<uint64_t>(n)});
  DC_ASSERT_OK(plugin()->launch(s.get(), k, &cfg, args, 4));
  std::vector<float> result = download<float>(s, out, n);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(result[i], ha[i] + hb[i]) << "element " << i;
}

TEST(OpenCLKernels, RoundedUpGlobalSizeRunsEveryItemOnce) {
  // Sizes below, at and above the preferred multiple, with automatic and explicit local sizes.
  dc_kernel k = test_module().kernel("mark");
  Stream s;
  for (int64_t n : {1, 7, 8, 9, 255, 257, 1031}) {
    for (uint32_t local : {0u, 16u}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " local=" + std::to_string(local));
      const int64_t padded = n + 64;  // room for items a wrong launch would let through
      DeviceBuffer hits(padded * 4);
      DC_ASSERT_OK(plugin()->memset_d8(s.get(), hits.get(), 0, 0, padded * 4));
      dc_kernel_arg args[] = {buffer_arg(hits.get()), scalar_arg(n)};
      dc_launch_config cfg = local ? launch_config({static_cast<uint64_t>(n)}, {local})
                                   : launch_config({static_cast<uint64_t>(n)});
      DC_ASSERT_OK(plugin()->launch(s.get(), k, &cfg, args, 2));
      std::vector<int32_t> h = download<int32_t>(s, hits, padded);
      for (int64_t i = 0; i < padded; ++i) ASSERT_EQ(h[i], i < n ? 1 : 0) << "item " << i;
    }
  }
}

TEST(OpenCLKernels, TiledMatmulWithLocalMemoryAndBarriers) {
  const int M = 21, N = 37, K = 19;  // no dimension is a multiple of the tile
  std::vector<float> A(M * K), B(K * N), expected(M * N, 0.0f);
  for (int i = 0; i < M * K; ++i) A[i] = static_cast<float>((i * 7) % 11) - 5.0f;
  for (int i = 0; i < K * N; ++i) B[i] = static_cast<float>((i * 5) % 13) * 0.25f;
  for (int r = 0; r < M; ++r) {
    for (int c = 0; c < N; ++c) {
      for (int k = 0; k < K; ++k) expected[r * N + c] += A[r * K + k] * B[k * N + c];
    }
  }
  Stream s;
  DeviceBuffer dA(A.size() * 4), dB(B.size() * 4), dC(expected.size() * 4);
  upload(s, dA, A);
  upload(s, dB, B);
  dc_kernel k = test_module().kernel("matmul_tiled");
  dc_kernel_arg args[] = {buffer_arg(dA.get()), buffer_arg(dB.get()), buffer_arg(dC.get()), scalar_arg(M),
                          scalar_arg(N),        scalar_arg(K),        local_arg(8 * 8 * sizeof(float))};
  dc_launch_config cfg = launch_config({static_cast<uint64_t>(N), static_cast<uint64_t>(M)}, {8, 8});
  DC_ASSERT_OK(plugin()->launch(s.get(), k, &cfg, args, 7));
  std::vector<float> C = download<float>(s, dC, expected.size());
  for (int i = 0; i < M * N; ++i) ASSERT_NEAR(C[i], expected[i], 1e-3f * (1.0f + std::fabs(expected[i]))) << i;
}

TEST(OpenCLKernels, DynamicSharedBytesBecomeTheTrailingLocalArgument) {
  const int M = 8, N = 8, K = 8;
  std::vector<float> A(M * K, 1.0f), B(K * N, 2.0f);
  Stream s;
  DeviceBuffer dA(A.size() * 4), dB(B.size() * 4), dC(M * N * 4);
  upload(s, dA, A);
  upload(s, dB, B);
  dc_kernel k = test_module().kernel("matmul_tiled");
  dc_kernel_arg args[] = {buffer_arg(dA.get()), buffer_arg(dB.get()), buffer_arg(dC.get()),
                          scalar_arg(M),        scalar_arg(N),        scalar_arg(K)};
  dc_launch_config cfg = launch_config({8, 8}, {8, 8});
  cfg.dynamic_shared_bytes = 8 * 8 * sizeof(float);
  DC_ASSERT_OK(plugin()->launch(s.get(), k, &cfg, args, 6));
  for (float v : download<float>(s, dC, M * N)) ASSERT_EQ(v, 16.0f);
}

TEST(OpenCLKernels, ImpossibleLocalSizesAreLaunchErrorsNamingTheSizes) {
  dc_kernel k = test_module().kernel("mark");
  Stream s;
  DeviceBuffer hits(64);
  int64_t n = 16;
  dc_kernel_arg args[] = {buffer_arg(hits.get()), scalar_arg(n)};
  dc_device_info info{};
  info.struct_size = sizeof(info);
  DC_ASSERT_OK(plugin()->device_info(0, &info));

  uint32_t too_wide = info.max_work_item_sizes[0] + 1;
  dc_launch_config cfg = launch_config({too_wide}, {too_wide});
  EXPECT_EQ(plugin()->launch(s.get(), k, &cfg, args, 2), DC_ERROR_LAUNCH);
  std::string msg = plugin()->last_error();
  EXPECT_NE(msg.find(std::to_string(too_wide)), std::string::npos) << msg;
  EXPECT_NE(msg.find("CL_DEVICE_MAX_WORK_ITEM_SIZES"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'mark'"), std::string::npos) << msg;

  // Each extent fits, their product does not.
  uint32_t side = 1;
  while (static_cast<uint64_t>(side) * side <= info.max_work_group_size) side *= 2;
  cfg = launch_config({side, side}, {side, side});
  EXPECT_EQ(plugin()->launch(s.get(), k, &cfg, args, 2), DC_ERROR_LAUNCH);
  msg = plugin()->last_error();
  EXPECT_NE(msg.find(std::to_string(static_cast<uint64_t>(side) * side) + " work-items"), std::string::npos) << msg;
  EXPECT_NE(msg.find("CL_KERNEL_WORK_GROUP_SIZE"), std::string::npos) << msg;
}

TEST(OpenCLKernels, ArgumentMistakesAreLaunchErrors) {
  dc_kernel k = test_module().kernel("mark");
  Stream s;
  DeviceBuffer hits(64);
  int64_t n = 16;
  int32_t narrow = 16;
  dc_launch_config cfg = launch_config({16});

  dc_kernel_arg too_few[] = {buffer_arg(hits.get())};
  EXPECT_EQ(plugin()->launch(s.get(), k, &cfg, too_few, 1), DC_ERROR_LAUNCH);
  EXPECT_NE(std::string(plugin()->last_error()).find("takes 2 arguments, 1 given"), std::string::npos)
      << plugin()->last_error();

  dc_kernel_arg wrong_size[] = {buffer_arg(hits.get()), scalar_arg(narrow)};
  EXPECT_EQ(plugin()->launch(s.get(), k, &cfg, wrong_size, 2), DC_ERROR_LAUNCH);
  std::string msg = plugin()->last_error();
  EXPECT_NE(msg.find("argument 1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("CL_INVALID_ARG_SIZE"), std::string::npos) << msg;

  dc_kernel_arg fine[] = {buffer_arg(hits.get()), scalar_arg(n)};
  cfg.dims = 4;
  EXPECT_EQ(plugin()->launch(s.get(), k, &cfg, fine, 2), DC_ERROR_LAUNCH);
  EXPECT_NE(std::string(plugin()->last_error()).find("dims"), std::string::npos);
}

TEST(OpenCLKernels, EmptyLaunchRunsNothing) {
  dc_kernel k = test_module().kernel("mark");
  Stream s;
  DeviceBuffer hits(4);
  DC_ASSERT_OK(plugin()->memset_d8(s.get(), hits.get(), 0, 0, 4));
  int64_t n = 1;
  dc_kernel_arg args[] = {buffer_arg(hits.get()), scalar_arg(n)};
  dc_launch_config cfg = launch_config({0});
  DC_ASSERT_OK(plugin()->launch(s.get(), k, &cfg, args, 2));
  EXPECT_EQ(download<int32_t>(s, hits, 1)[0], 0);
}

TEST(OpenCLKernels, UnknownKernelNameIsNamed) {
  dc_kernel k = nullptr;
  EXPECT_EQ(plugin()->kernel_get(test_module().get(), "no_such_kernel", &k), DC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(plugin()->last_error()).find("'no_such_kernel'"), std::string::npos);
}

TEST(OpenCLKernels, KernelHandlesAreStablePerName) {
  EXPECT_EQ(test_module().kernel("vadd"), test_module().kernel("vadd"));
  EXPECT_NE(test_module().kernel("vadd"), test_module().kernel("spin"));
}

}  // namespace
}  // namespace dctest

namespace dctest {
namespace {

// Arguments are set and the kernel enqueued under one lock: threads sharing a
// kernel must each get their own arguments.
TEST(OpenCLKernels, ConcurrentLaunchesOfOneKernelKeepTheirArguments) {
  constexpr int kThreads = 4;
  constexpr int kRounds = 10;
  const int64_t n = 256;
  dc_kernel k = test_module().kernel("vadd");
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Stream s;
      DeviceBuffer a(n * 4), out(n * 4);
      std::vector<float> ha(n, static_cast<float>(t + 1));
      plugin()->memcpy_h2d(s.get(), a.get(), 0, ha.data(), n * 4);
      for (int r = 0; r < kRounds; ++r) {
        dc_kernel_arg args[] = {buffer_arg(a.get()), buffer_arg(a.get()), buffer_arg(out.get()), scalar_arg(n)};
        dc_launch_config cfg = launch_config({static_cast<uint64_t>(n)});
        if (plugin()->launch(s.get(), k, &cfg, args, 4) != DC_OK) errors[t] = plugin()->last_error();
      }
      std::vector<float> h(n);
      plugin()->memcpy_d2h(s.get(), h.data(), out.get(), 0, n * 4);
      plugin()->stream_synchronize(s.get());
      for (float v : h) {
        if (v != 2.0f * (t + 1)) errors[t] = "thread " + std::to_string(t) + " got " + std::to_string(v);
      }
    });
  }
  for (auto& th : threads) th.join();
  for (const std::string& e : errors) EXPECT_EQ(e, "");
}

}  // namespace
}  // namespace dctest

namespace dctest {
namespace {

// The struct_size rule of backend_abi.h (tests/cpp/abi_struct_size.hpp), as for every plugin.
TEST(OpenCLAbi, StructSizeRule) {
  abitest::check_device_info_rule(*plugin(), 0);
  const int64_t n = 300;
  Stream s;
  DeviceBuffer a(n * 4), b(n * 4), out(n * 4);
  std::vector<float> ha(n), hb(n, 2.0f), zero(n, 0.0f);
  for (int64_t i = 0; i < n; ++i) ha[i] = static_cast<float>(i);
  upload(s, a, ha);
  upload(s, b, hb);
  dc_kernel k = test_module().kernel("vadd");
  dc_kernel_arg args[] = {buffer_arg(a.get()), buffer_arg(b.get()), buffer_arg(out.get()), scalar_arg(n)};
  abitest::check_launch_config_rule(
      launch_config({static_cast<uint64_t>(n)}),
      [&](const dc_launch_config* c) { return plugin()->launch(s.get(), k, c, args, 4); },
      [&] {
        std::vector<float> r = download<float>(s, out, n);
        for (int64_t i = 0; i < n; ++i) ASSERT_EQ(r[i], ha[i] + 2.0f) << i;
        upload(s, out, zero);
        s.sync();  // the upload reads `zero`, which must outlive it
      });
}

}  // namespace
}  // namespace dctest

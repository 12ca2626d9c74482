// Compiling and running kernels: 1-D/2-D geometry, a tiled matmul with
// barriers and work-group memory, atomics, dynamic shared memory, errors.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "../abi_struct_size.hpp"
#include "cpu_plugin.h"

namespace cputest {
namespace {

TEST(CpuLaunch, VectorAddAllSizes) {
  dc_kernel k = kernel("vector_add");
  ASSERT_NE(k, nullptr);
  Stream s;
  // Sizes cover: one inline group, several groups, a partial last group,
  // and a launch large enough for the pool.
  for (uint64_t n : {uint64_t{1}, uint64_t{1000}, uint64_t{16385}, uint64_t{1} << 20}) {
    DeviceBuffer a(n * 4), b(n * 4), out(n * 4);
    for (uint64_t i = 0; i < n; ++i) {
      a.as<float>()[i] = static_cast<float>(i);
      b.as<float>()[i] = 0.5f * static_cast<float>(i % 1000);
      out.as<float>()[i] = -1.0f;
    }
    Dims d;
    d.global[0] = n;
    DC_ASSERT_OK(launch(s.get(), k, d, Args().buffer(a).buffer(b).buffer(out).scalar<int64_t>(n)));
    s.sync();
    for (uint64_t i = 0; i < n; ++i)
      ASSERT_EQ(out.as<float>()[i], static_cast<float>(i) + 0.5f * static_cast<float>(i % 1000))
          << "n=" << n << " i=" << i;
  }
}

TEST(CpuLaunch, ExplicitLocalSizeWithPartialLastGroup) {
  dc_kernel k = kernel("vector_add");
  ASSERT_NE(k, nullptr);
  Stream s;
  const uint64_t n = 100003;
  DeviceBuffer a(n * 4), b(n * 4), out(n * 4);
  for (uint64_t i = 0; i < n; ++i) {
    a.as<float>()[i] = 1.0f;
    b.as<float>()[i] = static_cast<float>(i);
  }
  Dims d;
  d.global[0] = n;
  d.local[0] = 64;
  DC_ASSERT_OK(launch(s.get(), k, d, Args().buffer(a).buffer(b).buffer(out).scalar<int64_t>(n)));
  s.sync();
  for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(out.as<float>()[i], 1.0f + static_cast<float>(i)) << i;
}

void check_2d(uint64_t W, uint64_t H, uint32_t lx, uint32_t ly) {
  dc_kernel k = kernel("index_2d");
  ASSERT_NE(k, nullptr);
  Stream s;
  DeviceBuffer pos(W * H * 8), local(W * H * 8);
  for (uint64_t i = 0; i < W * H; ++i) pos.as<int64_t>()[i] = local.as<int64_t>()[i] = -1;
  Dims d;
  d.dims = 2;
  d.global[0] = W;
  d.global[1] = H;
  d.local[0] = lx;
  d.local[1] = ly;
  DC_ASSERT_OK(launch(s.get(), k, d, Args().buffer(pos).buffer(local)));
  s.sync();
  for (uint64_t y = 0; y < H; ++y) {
    for (uint64_t x = 0; x < W; ++x) {
      ASSERT_EQ(pos.as<int64_t>()[y * W + x], static_cast<int64_t>(x * 100000 + y)) << x << "," << y;
      if (lx != 0) {
        ASSERT_EQ(local.as<int64_t>()[y * W + x], static_cast<int64_t>(x % lx + 1000 * (y % ly))) << x << "," << y;
      } else {
        ASSERT_GE(local.as<int64_t>()[y * W + x], 0) << x << "," << y;
      }
    }
  }
}

TEST(CpuLaunch, TwoDimensionalAutomaticLocalSize) { check_2d(300, 200, 0, 0); }
TEST(CpuLaunch, TwoDimensionalExplicitLocalSize) { check_2d(300, 203, 16, 8); }
TEST(CpuLaunch, TwoDimensionalNarrowGrid) { check_2d(3, 5000, 0, 0); }

TEST(CpuLaunch, TiledMatmulWithSharedTilesAndBarriers) {
  dc_kernel k = kernel("tiled_matmul");
  ASSERT_NE(k, nullptr);
  const int64_t M = 64, N = 96, K = 80;
  DeviceBuffer A(M * K * 4), B(K * N * 4), C(M * N * 4);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int64_t i = 0; i < M * K; ++i) A.as<float>()[i] = dist(rng);
  for (int64_t i = 0; i < K * N; ++i) B.as<float>()[i] = dist(rng);
  Stream s;
  Dims d;
  d.dims = 2;
  d.global[0] = N;
  d.global[1] = M;
  d.local[0] = 16;
  d.local[1] = 16;
  DC_ASSERT_OK(launch(s.get(), k, d, Args().buffer(A).buffer(B).buffer(C).scalar(M).scalar(N).scalar(K)));
  s.sync();
  for (int64_t r = 0; r < M; ++r) {
    for (int64_t c = 0; c < N; ++c) {
      double want = 0.0;
      for (int64_t i = 0; i < K; ++i) want += double(A.as<float>()[r * K + i]) * double(B.as<float>()[i * N + c]);
      ASSERT_NEAR(C.as<float>()[r * N + c], want, 1e-4) << r << "," << c;
    }
  }
}

TEST(CpuLaunch, AtomicsFromManyThreads) {
  dc_kernel k = kernel("atomics");
  ASSERT_NE(k, nullptr);
  const uint64_t n = 1u << 20;
  DeviceBuffer i32(4), i64(8), f32(4), f64(8), mx(4);
  *i32.as<int32_t>() = 0;
  *i64.as<int64_t>() = int64_t{1} << 40;
  *f32.as<float>() = 0.0f;
  *f64.as<double>() = 0.0;
  *mx.as<int32_t>() = -1;
  Stream s;
  Dims d;
  d.global[0] = n;
  d.local[0] = 256;  // 4096 groups spread over every pool participant
  DC_ASSERT_OK(launch(s.get(), k, d, Args().buffer(i32).buffer(i64).buffer(f32).buffer(f64).buffer(mx)));
  s.sync();
  EXPECT_EQ(*i32.as<int32_t>(), static_cast<int32_t>(n));
  EXPECT_EQ(*i64.as<int64_t>(), (int64_t{1} << 40) + 3 * static_cast<int64_t>(n));
  EXPECT_EQ(*f32.as<float>(), 0.5f * static_cast<float>(n));  // exact: 2^19 fits a float
  EXPECT_EQ(*f64.as<double>(), 0.25 * static_cast<double>(n));
  EXPECT_EQ(*mx.as<int32_t>(), static_cast<int32_t>(n - 1));
}

TEST(CpuLaunch, DynamicSharedMemoryPerWorker) {
  dc_kernel k = kernel("reverse_groups");
  ASSERT_NE(k, nullptr);
  const uint32_t L = 512;
  const uint64_t groups = 300;
  const uint64_t n = L * groups;
  DeviceBuffer in(n * 4), out(n * 4), bad(4);
  for (uint64_t i = 0; i < n; ++i) in.as<int32_t>()[i] = static_cast<int32_t>(i);
  *bad.as<int32_t>() = 0;
  Stream s;
  Dims d;
  d.global[0] = n;
  d.local[0] = L;
  DC_ASSERT_OK(launch(s.get(), k, d, Args().buffer(in).buffer(out).buffer(bad), L * sizeof(int32_t)));
  s.sync();
  EXPECT_EQ(*bad.as<int32_t>(), 0) << "dynamic shared memory missing or misaligned";
  for (uint64_t g = 0; g < groups; ++g)
    for (uint64_t l = 0; l < L; ++l) ASSERT_EQ(out.as<int32_t>()[g * L + l], static_cast<int32_t>(g * L + L - 1 - l));
}

TEST(CpuLaunch, InvalidGeometryIsALaunchError) {
  dc_kernel k = kernel("vector_add");
  ASSERT_NE(k, nullptr);
  DeviceBuffer a(64);
  Args args;
  args.buffer(a).buffer(a).buffer(a).scalar<int64_t>(16);
  Dims zero_dim;
  zero_dim.dims = 2;
  zero_dim.global[0] = zero_dim.global[1] = 16;
  zero_dim.local[0] = 4;  // local[1] == 0 while local[0] is set
  EXPECT_EQ(launch(nullptr, k, zero_dim, args), DC_ERROR_LAUNCH);
  EXPECT_NE(last_error().find("local_size[1]"), std::string::npos) << last_error();

  Dims huge;
  huge.dims = 2;
  huge.global[0] = huge.global[1] = 4096;
  huge.local[0] = huge.local[1] = 2048;
  EXPECT_EQ(launch(nullptr, k, huge, args), DC_ERROR_LAUNCH);
  EXPECT_NE(last_error().find("exceeds"), std::string::npos) << last_error();

  Dims four;
  four.dims = 4;
  EXPECT_EQ(launch(nullptr, k, four, args), DC_ERROR_LAUNCH);
  EXPECT_NE(last_error().find("dims"), std::string::npos) << last_error();

  Dims extra;
  extra.global[0] = 16;
  extra.local[0] = 4;
  extra.local[1] = 4;  // a 1-D launch with a second local dimension
  EXPECT_EQ(launch(nullptr, k, extra, args), DC_ERROR_LAUNCH);

  dc_kernel_arg local_arg{};
  local_arg.kind = DC_ARG_LOCAL;
  local_arg.size = 64;
  dc_launch_config c{};
  c.struct_size = sizeof(c);
  c.dims = 1;
  c.global_size[0] = 1;
  EXPECT_EQ(api().launch(nullptr, k, &c, &local_arg, 1), DC_ERROR_UNSUPPORTED);
  EXPECT_NE(last_error().find("dynamic_shared_bytes"), std::string::npos) << last_error();
}

TEST(CpuLaunch, ZeroSizedLaunchIsANoOp) {
  dc_kernel k = kernel("count_launch");
  ASSERT_NE(k, nullptr);
  DeviceBuffer counter(8);
  *counter.as<int64_t>() = 0;
  Dims d;
  d.global[0] = 0;
  DC_ASSERT_OK(launch(nullptr, k, d, Args().buffer(counter)));
  DC_ASSERT_OK(api().stream_synchronize(nullptr));
  EXPECT_EQ(*counter.as<int64_t>(), 0);
}

TEST(CpuCompile, ErrorsCarryTheCompilerLog) {
  const char* source =
      "#include <dotcompute/cpu_kernel_abi.h>\n"
      "extern \"C\" void broken(const dc_cpu_launch*, uint64_t, uint64_t, void*) {\n"
      "  int x = undeclared_identifier_xyz;\n"
      "}\n";
  void* binary = nullptr;
  uint64_t size = 0;
  EXPECT_EQ(api().compile(0, source, "", &binary, &size), DC_ERROR_COMPILATION);
  EXPECT_EQ(binary, nullptr);
  const std::string log = last_error();
  EXPECT_NE(log.find("undeclared_identifier_xyz"), std::string::npos) << log;
  EXPECT_NE(log.find("kernel.cpp:3"), std::string::npos) << log;
}

TEST(CpuCompile, OptionsReachTheCompilerAndModulesLeaveNoFiles) {
  // The kernel only compiles when the option defines DC_TEST_VALUE.
  const char* source =
      "#include <dotcompute/cpu_kernel_abi.h>\n"
      "extern \"C\" void put(const dc_cpu_launch* l, uint64_t, uint64_t, void*) {\n"
      "  **(int**)l->args[0] = DC_TEST_VALUE;\n"
      "}\n";
  void* binary = nullptr;
  uint64_t size = 0;
  DC_ASSERT_OK(api().compile(0, source, "-DDC_TEST_VALUE=1234", &binary, &size));
  ASSERT_GT(size, 4u);
  EXPECT_EQ(std::memcmp(binary, "\x7f" "ELF", 4), 0);
  // Load twice: two independent modules from the same bytes.
  dc_module m1 = nullptr, m2 = nullptr;
  DC_ASSERT_OK(api().module_load(0, binary, size, &m1));
  DC_ASSERT_OK(api().module_load(0, binary, size, &m2));
  api().free_binary(binary);
  for (dc_module m : {m1, m2}) {
    dc_kernel k = nullptr;
    DC_ASSERT_OK(api().kernel_get(m, "put", &k));
    DeviceBuffer out(4);
    *out.as<int>() = 0;
    Dims d;
    DC_ASSERT_OK(launch(nullptr, k, d, Args().buffer(out)));
    DC_ASSERT_OK(api().stream_synchronize(nullptr));
    EXPECT_EQ(*out.as<int>(), 1234);
  }
  DC_ASSERT_OK(api().module_unload(m1));
  DC_ASSERT_OK(api().module_unload(m2));
}


// The struct_size rule of backend_abi.h (tests/cpp/abi_struct_size.hpp), as for every plugin.
TEST(CpuAbi, StructSizeRule) {
  abitest::check_device_info_rule(api(), 0);
  dc_kernel k = kernel("vector_add");
  ASSERT_NE(k, nullptr);
  Stream s;
  const uint64_t n = 1000;
  DeviceBuffer a(n * 4), b(n * 4), out(n * 4);
  for (uint64_t i = 0; i < n; ++i) {
    a.as<float>()[i] = static_cast<float>(i);
    b.as<float>()[i] = 2.0f;
  }
  Args args = Args().buffer(a).buffer(b).buffer(out).scalar<int64_t>(n);
  dc_launch_config base{};
  base.dims = 1;
  base.global_size[0] = n;
  abitest::check_launch_config_rule(
      base, [&](const dc_launch_config* c) { return api().launch(s.get(), k, c, args.data(), args.size()); },
      [&] {
        s.sync();
        for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(out.as<float>()[i], static_cast<float>(i) + 2.0f);
        std::memset(out.as<float>(), 0, n * 4);
      });
}

}  // namespace
}  // namespace cputest

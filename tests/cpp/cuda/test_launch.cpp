// Launch marshalling: what reaches cuLaunchKernel for each kind of argument and size.
#include <cstring>
#include <vector>

#include "../abi_struct_size.hpp"
#include "plugin_fixture.hpp"

namespace dctest {
namespace {

class LaunchTest : public CudaPlugin {
 protected:
  void SetUp() override {
    CudaPlugin::SetUp();
    if (HasFatalFailure()) return;
    const std::string image = fake_ptx("k");
    ASSERT_EQ(b.module_load(0, image.c_str(), image.size() + 1, &module_), DC_OK) << error();
    ASSERT_EQ(b.stream_create(0, &stream_), DC_OK);
  }
  void TearDown() override {
    if (stream_) b.stream_destroy(stream_);
    if (module_) b.module_unload(module_);
    CudaPlugin::TearDown();
  }
  dc_kernel kernel(const std::vector<size_t>& sizes) {
    dbl.set_param_sizes("k", sizes.data(), static_cast<int>(sizes.size()));
    dc_kernel k = nullptr;
    EXPECT_EQ(b.kernel_get(module_, "k", &k), DC_OK) << error();
    return k;
  }
  static dc_launch_config config(uint32_t dims, std::vector<uint64_t> global, std::vector<uint32_t> local = {}) {
    dc_launch_config c{};
    c.struct_size = sizeof c;
    c.dims = dims;
    for (int d = 0; d < 3; ++d) {
      c.global_size[d] = d < static_cast<int>(global.size()) ? global[d] : 1;
      c.local_size[d] = d < static_cast<int>(local.size()) ? local[d] : 0;
    }
    return c;
  }
  const double_launch& last() {
    int n = 0;
    const double_launch* log = dbl.launch_log(&n);
    EXPECT_GT(n, 0);
    return log[n - 1];
  }
  static dc_kernel_arg scalar(const void* v, uint32_t size) {
    dc_kernel_arg a{};
    a.kind = DC_ARG_SCALAR;
    a.size = size;
    a.value.scalar = v;
    return a;
  }
  static dc_kernel_arg buffer(dc_devptr p) {
    dc_kernel_arg a{};
    a.kind = DC_ARG_BUFFER;
    a.size = 8;
    a.value.buffer = p;
    return a;
  }
  dc_module module_ = nullptr;
  dc_stream stream_ = nullptr;
};

template <typename T>
T read(const double_launch& l, int i) {
  T v;
  std::memcpy(&v, l.param_bytes[i], sizeof v);
  return v;
}

TEST_F(LaunchTest, PacksPointersAndScalarsOfEveryTypeInOrder) {
  dc_devptr x = 0, y = 0;
  ASSERT_EQ(b.mem_alloc(0, 64, &x), DC_OK);
  ASSERT_EQ(b.mem_alloc(0, 64, &y), DC_OK);
  const bool flag = true;
  const int32_t i32 = -123456;
  const int64_t i64 = -(int64_t{1} << 40);
  const uint32_t u32 = 4000000000u;
  const float f32 = 1.5f;
  const double f64 = -2.25;
  const int16_t i16 = -7;
  // The kernel-language ABI's trailing global size (three int64) is passed like any scalar.
  const int64_t g0 = 1000, g1 = 1, g2 = 1;
  dc_kernel k = kernel({8, 1, 4, 8, 4, 4, 8, 2, 8, 8, 8, 8});
  ASSERT_NE(k, nullptr);
  const dc_kernel_arg args[] = {buffer(x),        scalar(&flag, 1), scalar(&i32, 4), scalar(&i64, 8),
                                scalar(&u32, 4),  scalar(&f32, 4),  scalar(&f64, 8), scalar(&i16, 2),
                                buffer(y),        scalar(&g0, 8),   scalar(&g1, 8),  scalar(&g2, 8)};
  const auto c = config(1, {1000});
  ASSERT_EQ(b.launch(stream_, k, &c, args, 12), DC_OK) << error();
  const double_launch& l = last();
  EXPECT_STREQ(l.name, "k");
  ASSERT_EQ(l.param_count, 12);
  EXPECT_EQ(read<uint64_t>(l, 0), x);
  EXPECT_EQ(read<bool>(l, 1), true);
  EXPECT_EQ(read<int32_t>(l, 2), i32);
  EXPECT_EQ(read<int64_t>(l, 3), i64);
  EXPECT_EQ(read<uint32_t>(l, 4), u32);
  EXPECT_EQ(read<float>(l, 5), f32);
  EXPECT_EQ(read<double>(l, 6), f64);
  EXPECT_EQ(read<int16_t>(l, 7), i16);
  EXPECT_EQ(read<uint64_t>(l, 8), y);
  EXPECT_EQ(read<int64_t>(l, 9), 1000);
  EXPECT_EQ(l.param_sizes[1], 1u);
  EXPECT_EQ(l.param_sizes[7], 2u);
  EXPECT_EQ(b.mem_free(0, x), DC_OK);
  EXPECT_EQ(b.mem_free(0, y), DC_OK);
}

TEST_F(LaunchTest, ScalarOfTheWrongSizeNamesTheArgument) {
  dc_kernel k = kernel({8, 8});
  const int32_t small = 1;
  const dc_kernel_arg args[] = {buffer(0), scalar(&small, 4)};
  const auto c = config(1, {10});
  EXPECT_EQ(b.launch(stream_, k, &c, args, 2), DC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(error().find("argument 1 of k is 4 bytes but the kernel's parameter 1 is 8 bytes"), std::string::npos)
      << error();
  int n = 0;
  dbl.launch_log(&n);
  EXPECT_EQ(n, 0);
}

TEST_F(LaunchTest, WrongArgumentCountIsRefused) {
  dc_kernel k = kernel({8, 8, 4});
  const dc_kernel_arg args[] = {buffer(0), buffer(0)};
  const auto c = config(1, {10});
  EXPECT_EQ(b.launch(stream_, k, &c, args, 2), DC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(error().find("takes 3 parameters but 2 arguments"), std::string::npos) << error();
}

TEST_F(LaunchTest, LocalArgumentsAreRefused) {
  dc_kernel k = kernel({8});
  dc_kernel_arg a{};
  a.kind = DC_ARG_LOCAL;
  a.size = 256;
  const auto c = config(1, {10});
  EXPECT_EQ(b.launch(stream_, k, &c, &a, 1), DC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(error().find("dynamic_shared_bytes"), std::string::npos) << error();
}

TEST_F(LaunchTest, BlockFromOccupancyAndGridCoversTheGlobalSize) {
  dc_kernel k = kernel({});
  dbl.set_occupancy_block(768);
  auto c = config(1, {1000});
  ASSERT_EQ(b.launch(stream_, k, &c, nullptr, 0), DC_OK) << error();
  EXPECT_EQ(last().block[0], 768u);
  EXPECT_EQ(last().grid[0], 2u);
  // A small launch gets a block no wider than it needs (rounded to a warp).
  c = config(1, {100});
  ASSERT_EQ(b.launch(stream_, k, &c, nullptr, 0), DC_OK);
  EXPECT_EQ(last().block[0], 128u);
  EXPECT_EQ(last().grid[0], 1u);
  // 2D: a warp along x, the rest along y.
  dbl.set_occupancy_block(256);
  c = config(2, {1000, 1000});
  ASSERT_EQ(b.launch(stream_, k, &c, nullptr, 0), DC_OK);
  EXPECT_EQ(last().block[0], 32u);
  EXPECT_EQ(last().block[1], 8u);
  EXPECT_EQ(last().grid[0], 32u);
  EXPECT_EQ(last().grid[1], 125u);
  EXPECT_EQ(last().grid[2], 1u);
}

TEST_F(LaunchTest, GivenLocalSizeIsUsedAndTheLastGroupIsPartial) {
  dc_kernel k = kernel({});
  const auto c = config(3, {100, 50, 3}, {16, 16, 2});
  ASSERT_EQ(b.launch(stream_, k, &c, nullptr, 0), DC_OK) << error();
  const double_launch& l = last();
  EXPECT_EQ(l.block[0], 16u);
  EXPECT_EQ(l.block[1], 16u);
  EXPECT_EQ(l.block[2], 2u);
  EXPECT_EQ(l.grid[0], 7u);
  EXPECT_EQ(l.grid[1], 4u);
  EXPECT_EQ(l.grid[2], 2u);
}

TEST_F(LaunchTest, OversizedBlocksAndGridsAreLaunchErrors) {
  dc_kernel k = kernel({});
  auto c = config(2, {64, 64}, {64, 32});
  EXPECT_EQ(b.launch(stream_, k, &c, nullptr, 0), DC_ERROR_LAUNCH);
  EXPECT_NE(error().find("2048 threads exceeds the kernel's limit of 1024"), std::string::npos) << error();
  c = config(2, {1, 70000}, {1, 1});
  EXPECT_EQ(b.launch(stream_, k, &c, nullptr, 0), DC_ERROR_LAUNCH);
  EXPECT_NE(error().find("at most 65535"), std::string::npos) << error();
}

TEST_F(LaunchTest, DynamicSharedMemoryAboveTheDefaultIsOptedIn) {
  dc_kernel k = kernel({});
  auto c = config(1, {256}, {256});
  c.dynamic_shared_bytes = 100 * 1024;
  ASSERT_EQ(b.launch(stream_, k, &c, nullptr, 0), DC_OK) << error();
  EXPECT_EQ(last().shared_bytes, 100u * 1024);
  c.dynamic_shared_bytes = 300 * 1024;
  EXPECT_EQ(b.launch(stream_, k, &c, nullptr, 0), DC_ERROR_LAUNCH);
  EXPECT_NE(error().find("exceed the device's 232448"), std::string::npos) << error();
}

TEST_F(LaunchTest, CooperativeFlagUsesTheCooperativeEntryPoint) {
  dc_kernel k = kernel({});
  auto c = config(1, {1024}, {256});
  c.flags = DC_LAUNCH_COOPERATIVE;
  ASSERT_EQ(b.launch(stream_, k, &c, nullptr, 0), DC_OK) << error();
  EXPECT_EQ(last().cooperative, 1);
  EXPECT_NE(std::string(dbl.op_log()).find("cooperative launch k"), std::string::npos);
}

TEST_F(LaunchTest, DriverLaunchFailuresMapToLaunchError) {
  dc_kernel k = kernel({});
  const auto c = config(1, {32});
  for (int code : {CUDA_ERROR_LAUNCH_FAILED, CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES}) {
    dbl.fail_next("cuLaunchKernel", code);
    EXPECT_EQ(b.launch(stream_, k, &c, nullptr, 0), DC_ERROR_LAUNCH) << code;
    EXPECT_NE(error().find("cuLaunchKernel(k) failed"), std::string::npos) << error();
  }
  dbl.fail_next("cuLaunchKernel", CUDA_ERROR_LAUNCH_FAILED);
  EXPECT_EQ(b.launch(stream_, k, &c, nullptr, 0), DC_ERROR_LAUNCH);
  EXPECT_NE(error().find("CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure)"), std::string::npos) << error();
}

TEST_F(LaunchTest, EmptyGlobalSizeLaunchesNothing) {
  dc_kernel k = kernel({});
  const auto c = config(1, {0});
  EXPECT_EQ(b.launch(stream_, k, &c, nullptr, 0), DC_OK);
  int n = 0;
  dbl.launch_log(&n);
  EXPECT_EQ(n, 0);
}

TEST_F(LaunchTest, LaunchIsRecordedOnItsStream) {
  dc_kernel k = kernel({});
  const auto c = config(1, {32});
  ASSERT_EQ(b.launch(stream_, k, &c, nullptr, 0), DC_OK);
  EXPECT_NE(last().stream, 0u);
  ASSERT_EQ(b.launch(nullptr, k, &c, nullptr, 0), DC_OK);
  EXPECT_EQ(last().stream, 0u);
}

// The struct_size rule of backend_abi.h (tests/cpp/abi_struct_size.hpp), as for every plugin;
// the double records what reached cuLaunchKernel.
TEST_F(LaunchTest, StructSizeRule) {
  abitest::check_device_info_rule(b, 0);
  dc_kernel k = kernel({4});
  const int32_t v = 7;
  dc_kernel_arg args[] = {scalar(&v, 4)};
  dc_launch_config base = config(1, {1000}, {128});
  abitest::check_launch_config_rule(
      base, [&](const dc_launch_config* c) { return b.launch(stream_, k, c, args, 1); },
      [&] {
        ASSERT_EQ(b.stream_synchronize(stream_), DC_OK);
        const double_launch& l = last();
        EXPECT_EQ(l.grid[0], 8u);
        EXPECT_EQ(l.block[0], 128u);
        EXPECT_EQ(l.cooperative, 0) << "flags of an older caller read as 0";
      });
}

}  // namespace
}  // namespace dctest

// Device description, raw memory and stream-ordered copies of the CPU backend.
#include <numeric>
#include <string>
#include <vector>

#include "cpu_plugin.h"

namespace cputest {
namespace {

TEST(CpuDevice, DescribesTheHost) {
  int32_t count = 0;
  DC_ASSERT_OK(api().device_count(&count));
  EXPECT_EQ(count, 1);
  EXPECT_STREQ(api().name, "cpu");

  dc_device_info info{};
  info.struct_size = sizeof(info);
  DC_ASSERT_OK(api().device_info(0, &info));
  EXPECT_EQ(info.struct_size, sizeof(info));
  EXPECT_GT(std::strlen(info.name), 0u);
  EXPECT_STREQ(info.type, "cpu");
  EXPECT_GE(info.compute_units, 1u);
  EXPECT_TRUE(info.simd_width == 1 || info.simd_width == 4 || info.simd_width == 8 || info.simd_width == 16)
      << info.simd_width;
  EXPECT_GT(info.global_memory_bytes, 0u);
  const uint64_t want = DC_FEATURE_FP64 | DC_FEATURE_INT64_ATOMICS | DC_FEATURE_FLOAT_ATOMICS | DC_FEATURE_UNIFIED_MEMORY;
  EXPECT_EQ(info.features & want, want);
  const std::string arch = info.arch;
  EXPECT_FALSE(arch.empty());
  const std::string extra = info.extra_json;
  EXPECT_NE(extra.find("\"isa\""), std::string::npos) << extra;
  EXPECT_NE(extra.find("\"threads\": 4"), std::string::npos) << extra;  // DOTCOMPUTE_CPU_THREADS=4
  EXPECT_NE(extra.find("\"compiler\""), std::string::npos) << extra;
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2")) {
    EXPECT_NE(arch.find("avx2"), std::string::npos) << arch;
    EXPECT_GE(info.simd_width, 8u);
  }
#endif
}

TEST(CpuDevice, RejectsBadArguments) {
  dc_device_info info{};
  info.struct_size = sizeof(info);
  EXPECT_EQ(api().device_info(1, &info), DC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("device 1"), std::string::npos) << last_error();
  dc_device_info unset{};
  EXPECT_EQ(api().device_info(0, &unset), DC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("struct_size"), std::string::npos) << last_error();
}

TEST(CpuDevice, CompilerIdentityIsStableAndNamesTheFlags) {
  char a[2048] = {};
  char b[2048] = {};
  DC_ASSERT_OK(api().compiler_identity(0, a, sizeof(a)));
  DC_ASSERT_OK(api().compiler_identity(0, b, sizeof(b)));
  EXPECT_STREQ(a, b);
  const std::string id = a;
  EXPECT_NE(id.find("-O3"), std::string::npos) << id;
  EXPECT_NE(id.find("-fno-math-errno"), std::string::npos) << id;
  EXPECT_EQ(id.find("-ffast-math"), std::string::npos) << id;
  char tiny[4];
  EXPECT_EQ(api().compiler_identity(0, tiny, sizeof(tiny)), DC_ERROR_INVALID_ARGUMENT);
}

TEST(CpuMemory, AllocationsAreAlignedAndFreeable) {
  for (uint64_t bytes : {uint64_t{0}, uint64_t{1}, uint64_t{100}, uint64_t{4096}, uint64_t{3} << 20}) {
    dc_devptr p = 0;
    DC_ASSERT_OK(api().mem_alloc(0, bytes, &p));
    EXPECT_NE(p, 0u);
    EXPECT_EQ(p % 64, 0u) << bytes;
    DC_ASSERT_OK(api().mem_free(0, p));
  }
  int local = 0;
  EXPECT_EQ(api().mem_free(0, reinterpret_cast<dc_devptr>(&local)), DC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("not allocated"), std::string::npos);
}

TEST(CpuMemory, CopiesAndMemsetRunInStreamOrder) {
  Stream s;
  // Big enough for the queued (and pool-parallel) copy path, plus small ones inline.
  const uint64_t n = (8u << 20) / sizeof(int32_t);
  std::vector<int32_t> host(n), back(n, -1);
  std::iota(host.begin(), host.end(), 0);
  DeviceBuffer a(n * sizeof(int32_t)), b(n * sizeof(int32_t));
  DC_ASSERT_OK(api().memcpy_h2d(s.get(), a.handle(), 0, host.data(), n * sizeof(int32_t)));
  DC_ASSERT_OK(api().memcpy_d2d(s.get(), b.handle(), 0, a.handle(), 0, n * sizeof(int32_t)));
  // Queued behind the big copies although small: must see their result.
  DC_ASSERT_OK(api().memset_d8(s.get(), b.handle(), 4 * sizeof(int32_t), 0xff, 2 * sizeof(int32_t)));
  DC_ASSERT_OK(api().memcpy_d2h(s.get(), back.data(), b.handle(), 0, n * sizeof(int32_t)));
  s.sync();
  for (uint64_t i = 0; i < n; ++i) {
    const int32_t want = (i == 4 || i == 5) ? -1 : static_cast<int32_t>(i);
    ASSERT_EQ(back[i], want) << "at " << i;
  }
  // Offsets on both sides.
  int32_t small[3] = {0, 0, 0};
  DC_ASSERT_OK(api().memcpy_d2h(s.get(), small, a.handle(), 10 * sizeof(int32_t), sizeof(small)));
  s.sync();
  EXPECT_EQ(small[0], 10);
  EXPECT_EQ(small[2], 12);
  EXPECT_EQ(api().memcpy_h2d(s.get(), 0, 0, host.data(), 4), DC_ERROR_INVALID_ARGUMENT);
}

TEST(CpuMemory, LargeZeroFillsOfDirtyBlocksReadZeroAndSpareTheirNeighbours) {
  // From 256 KiB on a zero fill inside a mapped block (1 MiB and more) drops whole pages and writes
  // the partial ones at either end; the bytes outside the range must keep their values.
  Stream s;
  for (uint64_t bytes : {uint64_t{1} << 20, uint64_t{3} << 20, (uint64_t{5} << 20) + 100}) {
    DeviceBuffer b(bytes);
    std::vector<unsigned char> back(bytes);
    DC_ASSERT_OK(api().memset_d8(s.get(), b.handle(), 0, 0xab, bytes));
    const uint64_t lo = 1001, hi = bytes - 999;  // unaligned ends, so partial pages on both sides
    DC_ASSERT_OK(api().memset_d8(s.get(), b.handle(), lo, 0, hi - lo));
    DC_ASSERT_OK(api().memcpy_d2h(s.get(), back.data(), b.handle(), 0, bytes));
    s.sync();
    for (uint64_t i = 0; i < bytes; ++i) ASSERT_EQ(back[i], (i >= lo && i < hi) ? 0 : 0xab) << bytes << " at " << i;
    // The dropped pages are ordinary memory again: written, they keep what was written.
    DC_ASSERT_OK(api().memset_d8(s.get(), b.handle(), 0, 0x5c, bytes));
    DC_ASSERT_OK(api().memcpy_d2h(s.get(), back.data(), b.handle(), 0, bytes));
    s.sync();
    for (uint64_t i = 0; i < bytes; ++i) ASSERT_EQ(back[i], 0x5c) << bytes << " at " << i;
  }
}

TEST(CpuMemory, NullStreamIsTheBackendsDefaultStream) {
  DeviceBuffer a(64);
  int32_t v = 42, out = 0;
  DC_ASSERT_OK(api().memcpy_h2d(nullptr, a.handle(), 0, &v, sizeof(v)));
  DC_ASSERT_OK(api().memcpy_d2h(nullptr, &out, a.handle(), 0, sizeof(out)));
  DC_ASSERT_OK(api().stream_synchronize(nullptr));
  EXPECT_EQ(out, 42);
}

TEST(CpuModule, BadBinariesAndMissingKernelsAreReported) {
  const char junk[] = "definitely not a shared object";
  dc_module m = nullptr;
  EXPECT_EQ(api().module_load(0, junk, sizeof(junk), &m), DC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("ELF"), std::string::npos) << last_error();
  dc_kernel k = nullptr;
  ASSERT_NE(test_module(), nullptr);
  EXPECT_EQ(api().kernel_get(test_module(), "no_such_kernel", &k), DC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("no_such_kernel"), std::string::npos) << last_error();
}

}  // namespace
}  // namespace cputest

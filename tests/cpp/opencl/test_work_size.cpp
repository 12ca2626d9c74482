// The local/global size rules, without a device.
#include <gtest/gtest.h>

#include <set>

#include "work_size.h"

namespace dcl {
namespace {

dc_launch_config config(uint32_t dims, uint64_t g0, uint64_t g1 = 1, uint64_t g2 = 1, uint32_t l0 = 0,
                        uint32_t l1 = 0, uint32_t l2 = 0) {
  dc_launch_config c{};
  c.struct_size = sizeof(c);
  c.dims = dims;
  c.global_size[0] = g0;
  c.global_size[1] = g1;
  c.global_size[2] = g2;
  c.local_size[0] = l0;
  c.local_size[1] = l1;
  c.local_size[2] = l2;
  return c;
}

WorkLimits limits(uint64_t kernel_limit, uint64_t multiple, uint32_t max_item = 1024) {
  WorkLimits l;
  l.kernel_limit = kernel_limit;
  l.preferred_multiple = multiple;
  l.max_item_sizes[0] = l.max_item_sizes[1] = l.max_item_sizes[2] = max_item;
  return l;
}

WorkSizes choose(const dc_launch_config& c, const WorkLimits& l) {
  WorkSizes s;
  std::string why;
  EXPECT_TRUE(choose_work_sizes(c, l, &s, &why)) << why;
  return s;
}

TEST(OpenCLWorkSize, AutomaticLocalIsAMultipleOfThePreferredCappedByTheKernel) {
  WorkSizes s = choose(config(1, 100000), limits(4096, 8));
  EXPECT_EQ(s.local[0], kAutoGroupCap);
  EXPECT_EQ(s.global[0], 100096u);  // rounded up to whole groups
  s = choose(config(1, 100000), limits(96, 32));
  EXPECT_EQ(s.local[0], 96u);
  s = choose(config(1, 100000), limits(100, 32));
  EXPECT_EQ(s.local[0], 96u);  // the largest multiple under the limit
}

TEST(OpenCLWorkSize, AutomaticLocalShrinksToTheGlobalSize) {
  WorkSizes s = choose(config(1, 20), limits(4096, 8));
  EXPECT_EQ(s.local[0], 24u);
  EXPECT_EQ(s.global[0], 24u);
  s = choose(config(1, 5), limits(4096, 8));
  EXPECT_EQ(s.local[0], 5u);  // smaller than one multiple: taken whole, nothing wasted
  EXPECT_EQ(s.global[0], 5u);
}

TEST(OpenCLWorkSize, DriversThatBuildPerLocalSizeGetPowersOfTwo) {
  WorkLimits l = limits(4096, 8);
  l.pow2_groups = true;
  // every 1-d size meets one of nine local sizes (1, 2, ..., 256), never more than twice the items
  std::set<size_t> seen;
  for (uint64_t g = 1; g <= 5000; ++g) {
    WorkSizes s = choose(config(1, g), l);
    seen.insert(s.local[0]);
    EXPECT_EQ(s.local[0] & (s.local[0] - 1), 0u) << g;
    EXPECT_GE(s.global[0], g);
    EXPECT_LE(s.global[0], 2 * g) << g;
  }
  EXPECT_EQ(seen.size(), 9u);
  WorkSizes s = choose(config(1, 20), l);
  EXPECT_EQ(s.local[0], 32u);
  EXPECT_EQ(s.global[0], 32u);
  s = choose(config(2, 5, 1000), l);  // tall: the budget left goes to dimension 1
  EXPECT_EQ(s.local[0], 8u);
  EXPECT_EQ(s.local[1], 32u);
  l.kernel_limit = 100;  // a kernel allowing fewer items than the cap: the largest power of two under it
  EXPECT_EQ(choose(config(1, 100000), l).local[0], 64u);
}

TEST(OpenCLWorkSize, TallLaunchesSpendTheBudgetOnLaterDimensions) {
  WorkSizes s = choose(config(2, 1, 100000), limits(4096, 8));
  EXPECT_EQ(s.local[0], 1u);
  EXPECT_EQ(s.local[1], kAutoGroupCap);
  s = choose(config(2, 1000, 1000), limits(4096, 8));
  EXPECT_EQ(s.local[0], kAutoGroupCap);
  EXPECT_EQ(s.local[1], 1u);
  EXPECT_EQ(s.global[1], 1000u);
}

TEST(OpenCLWorkSize, GivenLocalIsKeptAndTheGlobalRoundedUp) {
  WorkSizes s = choose(config(2, 37, 21, 1, 8, 8), limits(256, 8));
  EXPECT_EQ(s.local[0], 8u);
  EXPECT_EQ(s.local[1], 8u);
  EXPECT_EQ(s.global[0], 40u);
  EXPECT_EQ(s.global[1], 24u);
}

TEST(OpenCLWorkSize, ImpossibleLocalSizesSayWhy) {
  WorkSizes s;
  std::string why;
  EXPECT_FALSE(choose_work_sizes(config(1, 64, 1, 1, 2048), limits(4096, 8, 1024), &s, &why));
  EXPECT_NE(why.find("2048"), std::string::npos) << why;
  EXPECT_NE(why.find("1024"), std::string::npos) << why;
  EXPECT_FALSE(choose_work_sizes(config(2, 64, 64, 1, 32, 32), limits(256, 8), &s, &why));
  EXPECT_NE(why.find("(32, 32)"), std::string::npos) << why;
  EXPECT_NE(why.find("1024 work-items"), std::string::npos) << why;
  EXPECT_NE(why.find("at most 256"), std::string::npos) << why;
  EXPECT_FALSE(choose_work_sizes(config(2, 64, 64, 1, 8, 0), limits(256, 8), &s, &why));
  EXPECT_NE(why.find("zero extent"), std::string::npos) << why;
  EXPECT_FALSE(choose_work_sizes(config(0, 64), limits(256, 8), &s, &why));
}

TEST(OpenCLWorkSize, ZeroGlobalExtentMeansNothingToRun) {
  WorkSizes s = choose(config(2, 64, 0), limits(256, 8));
  EXPECT_TRUE(s.empty);
}

}  // namespace
}  // namespace dcl

// Which code NVRTC is asked for, and how option strings are split.
#include <gtest/gtest.h>

#include "compile_policy.hpp"

namespace dotcompute::cuda {
namespace {

const std::vector<int> kNvrtc129 = {50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90, 100, 120};

TEST(CompilePolicy, CubinForTheExactArchWhenTheDriverIsCurrent) {
  const CompileTarget t = choose_target(90, 12090, 12090, kNvrtc129);
  EXPECT_FALSE(t.ptx);
  EXPECT_EQ(t.arch, "sm_90");
  EXPECT_EQ(choose_target(86, 13000, 12090, kNvrtc129).arch, "sm_86");
}

TEST(CompilePolicy, PtxWhenTheDriverIsOlderThanNvrtc) {
  const CompileTarget t = choose_target(80, 12040, 12090, kNvrtc129);
  EXPECT_TRUE(t.ptx);
  EXPECT_EQ(t.arch, "compute_80");
  EXPECT_NE(t.reason.find("older than NVRTC"), std::string::npos) << t.reason;
}

TEST(CompilePolicy, PtxForTheNewestKnownArchWhenTheDeviceIsNewerThanNvrtc) {
  const CompileTarget t = choose_target(130, 13050, 12090, kNvrtc129);
  EXPECT_TRUE(t.ptx);
  EXPECT_EQ(t.arch, "compute_120");
  EXPECT_NE(t.reason.find("sm_130"), std::string::npos) << t.reason;
}

TEST(CompilePolicy, OptionsSplitAtWhitespace) {
  EXPECT_EQ(split_options(nullptr), std::vector<std::string>{});
  EXPECT_EQ(split_options("  -DN=4\t--use_fast_math \n -lineinfo "),
            (std::vector<std::string>{"-DN=4", "--use_fast_math", "-lineinfo"}));
}

}  // namespace
}  // namespace dotcompute::cuda

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

TEST(CompilePolicy, NameExpressionsAreReadFromMarkerLinesOnly) {
  const std::string src =
      "template <int N> __global__ void k(float* x) {}\n"
      "  //!dotcompute-name-expression not<at_line_start>\n"
      "// a comment: //!dotcompute-name-expression nor<this>\n"
      "//!dotcompute-name-expression k<32>  \r\n"
      "//!dotcompute-name-expression reduce<float, 256>";
  EXPECT_EQ(name_expressions_in(src), (std::vector<std::string>{"k<32>", "reduce<float, 256>"}));
  EXPECT_TRUE(name_expressions_in("__global__ void k() {}\n").empty());
}

TEST(CompilePolicy, NameTableRoundTripsAndLeavesPlainImagesAlone) {
  const NameMap names = {{"k<32>", "_Z1kILi32EEvPf"}, {"ns::f", "_ZN2ns1fEv"}};
  const std::string image("\x7f" "ELF and the rest", 17);
  const std::string wrapped = wrap_with_names(names, image);
  NameMap got;
  const void* inner = nullptr;
  size_t inner_size = 0;
  std::string error;
  ASSERT_TRUE(unwrap_names(wrapped.data(), wrapped.size(), got, inner, inner_size, error)) << error;
  EXPECT_EQ(got, names);
  EXPECT_EQ(std::string(static_cast<const char*>(inner), inner_size), image);

  EXPECT_FALSE(unwrap_names(image.data(), image.size(), got, inner, inner_size, error));
  EXPECT_TRUE(error.empty());  // not wrapped: no error, the image is used as it is
  EXPECT_TRUE(got.empty());

  // cut inside the table, or with nothing after it: damaged
  for (size_t cut : {size_t{10}, wrapped.size() - image.size() - 3, wrapped.size() - image.size()}) {
    error.clear();
    EXPECT_FALSE(unwrap_names(wrapped.data(), cut, got, inner, inner_size, error)) << cut;
    EXPECT_FALSE(error.empty()) << cut;
  }
}

}  // namespace
}  // namespace dotcompute::cuda

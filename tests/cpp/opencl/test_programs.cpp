// compile() and module_load(): build logs, binaries, and the blob round trip.
#include <string>
#include <vector>

#include "test_support.h"

namespace dctest {
namespace {

// The error is on line 3; the log must point there.
const char* kBroken =
    "__kernel void broken(__global float* x) {\n"
    "  size_t i = get_global_id(0);\n"
    "  x[i] = undefined_identifier_42 * 2.0f;\n"
    "}\n";

TEST(OpenCLPrograms, BuildFailureCarriesTheFullLog) {
  dc_status st = DC_OK;
  std::vector<uint8_t> blob = compile(kBroken, "", &st);
  ASSERT_EQ(st, DC_ERROR_COMPILATION);
  EXPECT_TRUE(blob.empty());
  std::string log = plugin()->last_error();
  EXPECT_NE(log.find("CL_BUILD_PROGRAM_FAILURE"), std::string::npos) << log;
  EXPECT_NE(log.find("undefined_identifier_42"), std::string::npos) << log;
  EXPECT_NE(log.find(":3:"), std::string::npos) << log;  // line 3
  EXPECT_NE(log.find("-cl-std=CL1.2"), std::string::npos) << log;
}

TEST(OpenCLPrograms, BadBuildOptionsAreACompilationError) {
  dc_status st = DC_OK;
  compile("__kernel void k(__global int* x) { x[0] = 1; }", "-cl-no-such-option-zz", &st);
  EXPECT_EQ(st, DC_ERROR_COMPILATION);
  EXPECT_NE(std::string(plugin()->last_error()).find("-cl-no-such-option-zz"), std::string::npos)
      << plugin()->last_error();
}

TEST(OpenCLPrograms, BlobLoadsIntoIndependentModules) {
  const std::vector<uint8_t>& blob = test_program_blob();
  ASSERT_GT(blob.size(), 16u);
  // Two modules from the same bytes, as two processes sharing the disk cache would get.
  dc_module m1 = nullptr;
  dc_module m2 = nullptr;
  DC_ASSERT_OK(plugin()->module_load(0, blob.data(), blob.size(), &m1));
  Module first(m1);
  DC_ASSERT_OK(plugin()->module_load(0, blob.data(), blob.size(), &m2));
  Module second(m2);

  Stream s;
  const int64_t n = 64;
  DeviceBuffer a(n * 4), out(n * 4);
  std::vector<float> ha(n);
  for (int64_t i = 0; i < n; ++i) ha[i] = static_cast<float>(i);
  DC_ASSERT_OK(plugin()->memcpy_h2d(s.get(), a.get(), 0, ha.data(), n * 4));
  for (const Module* m : {&first, &second}) {
    dc_kernel_arg args[] = {buffer_arg(a.get()), buffer_arg(a.get()), buffer_arg(out.get()), scalar_arg(n)};
    dc_launch_config cfg = launch_config({static_cast<uint64_t>(n)});
    DC_ASSERT_OK(plugin()->launch(s.get(), m->kernel("vadd"), &cfg, args, 4));
    std::vector<float> r(n);
    DC_ASSERT_OK(plugin()->memcpy_d2h(s.get(), r.data(), out.get(), 0, n * 4));
    s.sync();
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(r[i], 2.0f * i);
    DC_ASSERT_OK(plugin()->memset_d8(s.get(), out.get(), 0, 0, n * 4));
  }
}

TEST(OpenCLPrograms, DamagedBlobsAreRefusedClearly) {
  std::vector<uint8_t> blob = test_program_blob();
  dc_module m = nullptr;
  EXPECT_EQ(plugin()->module_load(0, blob.data(), blob.size() / 2, &m), DC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(plugin()->last_error()).find("truncated"), std::string::npos) << plugin()->last_error();
  std::vector<uint8_t> foreign(blob.size(), 0x42);
  EXPECT_EQ(plugin()->module_load(0, foreign.data(), foreign.size(), &m), DC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(plugin()->last_error()).find("bad header"), std::string::npos) << plugin()->last_error();
  EXPECT_EQ(m, nullptr);
}

}  // namespace
}  // namespace dctest

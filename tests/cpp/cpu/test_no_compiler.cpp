// Run by ctest with DOTCOMPUTE_CXX naming a compiler that does not exist:
// the device must still work for memory, and compile() must say what to do.
#include <cstdlib>
#include <string>

#include "cpu_plugin.h"

namespace cputest {
namespace {

TEST(NoCompiler, DeviceWorksButCompileExplainsHowToGetOne) {
  const char* cxx = std::getenv("DOTCOMPUTE_CXX");
  if (cxx == nullptr || std::string(cxx).find("nonexistent") == std::string::npos)
    GTEST_SKIP() << "run by the cpu_backend_no_compiler ctest entry (DOTCOMPUTE_CXX=/nonexistent/c++)";
  DeviceBuffer buf(256);
  ASSERT_NE(buf.handle(), 0u);
  int32_t v = 5, back = 0;
  DC_ASSERT_OK(api().memcpy_h2d(nullptr, buf.handle(), 0, &v, 4));
  DC_ASSERT_OK(api().memcpy_d2h(nullptr, &back, buf.handle(), 0, 4));
  DC_ASSERT_OK(api().stream_synchronize(nullptr));
  EXPECT_EQ(back, 5);

  void* binary = nullptr;
  uint64_t size = 0;
  EXPECT_EQ(api().compile(0, "extern \"C\" void k() {}", "", &binary, &size), DC_ERROR_UNAVAILABLE);
  const std::string msg = last_error();
  EXPECT_NE(msg.find("DOTCOMPUTE_CXX"), std::string::npos) << msg;
  EXPECT_NE(msg.find("apt-get install g++"), std::string::npos) << msg;
  char id[256];
  EXPECT_EQ(api().compiler_identity(0, id, sizeof(id)), DC_ERROR_UNAVAILABLE);

  dc_device_info info{};
  info.struct_size = sizeof(info);
  DC_ASSERT_OK(api().device_info(0, &info));
  EXPECT_NE(std::string(info.extra_json).find("\"compiler\": null"), std::string::npos) << info.extra_json;
}

}  // namespace
}  // namespace cputest

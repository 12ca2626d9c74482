// Without a usable driver the backend is unavailable, with a reason, and nothing crashes.
#include <dlfcn.h>

#include <cstdlib>

#include "plugin_fixture.hpp"

namespace dctest {
namespace {

class MissingDriver : public ::testing::Test {
 protected:
  void TearDown() override {
    b.shutdown();
    setenv("DOTCOMPUTE_CUDA_DRIVER", DC_CUDA_DOUBLE_PATH, 1);
  }
  const dc_backend& b = backend();
};

TEST_F(MissingDriver, WithoutLibcudaTheBackendIsUnavailable) {
  unsetenv("DOTCOMPUTE_CUDA_DRIVER");
  if (void* real = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
    dlclose(real);
    GTEST_SKIP() << "a real NVIDIA driver is installed here";
  }
  b.shutdown();
  EXPECT_EQ(b.initialize(), DC_ERROR_UNAVAILABLE);
  EXPECT_EQ(std::string(b.last_error()).rfind("libcuda.so.1 not found (NVIDIA driver not installed)", 0), 0u)
      << b.last_error();
  int32_t count = -1;
  EXPECT_EQ(b.device_count(&count), DC_ERROR_UNAVAILABLE);
}

TEST_F(MissingDriver, ExplicitDriverPathThatDoesNotLoadIsNamed) {
  setenv("DOTCOMPUTE_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
  b.shutdown();
  EXPECT_EQ(b.initialize(), DC_ERROR_UNAVAILABLE);
  EXPECT_NE(std::string(b.last_error()).find("DOTCOMPUTE_CUDA_DRIVER=/nonexistent/libcuda.so.1"), std::string::npos)
      << b.last_error();
}

TEST_F(MissingDriver, LibraryWithoutTheDriverApiIsRefused) {
  setenv("DOTCOMPUTE_CUDA_DRIVER", "libm.so.6", 1);
  b.shutdown();
  EXPECT_EQ(b.initialize(), DC_ERROR_UNAVAILABLE);
  EXPECT_NE(std::string(b.last_error()).find("lacks cuInit"), std::string::npos) << b.last_error();
}

TEST_F(MissingDriver, CuInitFailureIsUnavailableWithTheDriverError) {
  setenv("DOTCOMPUTE_CUDA_DRIVER", DC_CUDA_DOUBLE_PATH, 1);
  b.shutdown();
  controls().reset();
  controls().fail_next("cuInit", CUDA_ERROR_NO_DEVICE);
  EXPECT_EQ(b.initialize(), DC_ERROR_UNAVAILABLE);
  EXPECT_NE(std::string(b.last_error()).find("CUDA_ERROR_NO_DEVICE"), std::string::npos) << b.last_error();
  // The next attempt (the failure was one-shot) succeeds.
  EXPECT_EQ(b.initialize(), DC_OK) << b.last_error();
}

TEST_F(MissingDriver, NoDevicesIsUnavailable) {
  setenv("DOTCOMPUTE_CUDA_DRIVER", DC_CUDA_DOUBLE_PATH, 1);
  b.shutdown();
  controls().reset();
  controls().set_device_count(0);
  EXPECT_EQ(b.initialize(), DC_ERROR_UNAVAILABLE);
  EXPECT_NE(std::string(b.last_error()).find("no CUDA device"), std::string::npos) << b.last_error();
  controls().reset();
}

}  // namespace
}  // namespace dctest

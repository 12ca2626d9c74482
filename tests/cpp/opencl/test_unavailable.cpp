// A missing or broken loader and an empty platform list make the backend
// unavailable with the reason, in a fresh process each (the probe).
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "test_support.h"

namespace dctest {
namespace {

struct ProbeResult {
  int status = -1;
  int devices = -1;
  std::string output;
};

// Runs the probe on `plugin` with `env` (VAR=value ...) added to the environment.
ProbeResult probe(const std::string& env, const char* plugin_path, int cycles = 1) {
  std::string cmd = "env " + env + " '" + std::string(DC_OPENCL_PROBE) + "' '" + plugin_path + "' " +
                    std::to_string(cycles) + " 2>&1";
  ProbeResult r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) {
    ADD_FAILURE() << "cannot run " << cmd;
    return r;
  }
  char buf[512];
  while (std::fgets(buf, sizeof(buf), pipe) != nullptr) r.output += buf;
  int rc = pclose(pipe);
  EXPECT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0) << cmd << "\n" << r.output;
  std::sscanf(r.output.c_str(), "status=%d devices=%d", &r.status, &r.devices);
  return r;
}

std::string empty_dir() {
  char templ[] = "/tmp/dc_ocl_empty_XXXXXX";
  const char* dir = mkdtemp(templ);
  EXPECT_NE(dir, nullptr);
  return dir != nullptr ? dir : "/nonexistent";
}

TEST(OpenCLUnavailable, ProbeSeesTheRealPlatform) {
  // The control case: the same probe, untouched environment, finds the device.
  ProbeResult r = probe("", DC_OPENCL_PLUGIN);
  EXPECT_EQ(r.status, DC_OK) << r.output;
  EXPECT_GE(r.devices, 1) << r.output;
}

TEST(OpenCLUnavailable, ShutdownAndInitializeAgain) {
  ProbeResult r = probe("", DC_OPENCL_PLUGIN, 3);
  EXPECT_EQ(r.status, DC_OK) << r.output;
  EXPECT_GE(r.devices, 1) << r.output;
}

TEST(OpenCLUnavailable, MissingLoaderIsReported) {
  ProbeResult r = probe("", DC_OPENCL_PLUGIN_NOLOADER);
  EXPECT_EQ(r.status, DC_ERROR_UNAVAILABLE) << r.output;
  EXPECT_NE(r.output.find("libdc_no_such_OpenCL.so.1 not found"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("ocl-icd-libopencl1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("pocl-opencl-icd"), std::string::npos) << r.output;
}

TEST(OpenCLUnavailable, LibraryWithoutTheEntryPointsIsReported) {
  ProbeResult r = probe("LD_LIBRARY_PATH='" + std::string(DC_FAKE_OPENCL_DIR) + "'", DC_OPENCL_PLUGIN);
  EXPECT_EQ(r.status, DC_ERROR_UNAVAILABLE) << r.output;
  EXPECT_NE(r.output.find("lacks clGetPlatformInfo"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(DC_FAKE_OPENCL_DIR), std::string::npos) << r.output;  // names the file it found
}

TEST(OpenCLUnavailable, EmptyPlatformListIsReported) {
  std::string dir = empty_dir();
  ProbeResult r = probe("OCL_ICD_VENDORS='" + dir + "'", DC_OPENCL_PLUGIN);
  rmdir(dir.c_str());
  EXPECT_EQ(r.status, DC_ERROR_UNAVAILABLE) << r.output;
  EXPECT_NE(r.output.find("no OpenCL platform found"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace dctest

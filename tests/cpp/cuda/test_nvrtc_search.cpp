// NVRTC is found in the nvidia wheel next to an installed plugin, with no environment help.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "plugin_fixture.hpp"

namespace fs = std::filesystem;

namespace dctest {
namespace {

TEST(NvrtcSearch, FindsTheWheelBesideTheInstalledPackage) {
  const std::string nvrtc = nvrtc_path();
  if (nvrtc.empty()) GTEST_SKIP() << "NVRTC not installed (pip install nvidia-cuda-nvrtc-cu12)";

  // <site>/dotcompute/plugins/libdotcompute_cuda.so and <site>/nvidia/cuda_nvrtc/lib -> the real wheel.
  const fs::path site = fs::temp_directory_path() / ("dc_cuda_site_" + std::to_string(getpid()));
  fs::remove_all(site);
  fs::create_directories(site / "dotcompute" / "plugins");
  fs::create_directories(site / "nvidia" / "cuda_nvrtc");
  fs::create_directory_symlink(fs::path(nvrtc).parent_path(), site / "nvidia" / "cuda_nvrtc" / "lib");
  // A copy, not a link: the loader must see a different file to load a second, independent instance.
  const fs::path plugin = site / "dotcompute" / "plugins" / "libdotcompute_cuda.so";
  fs::copy_file(DC_CUDA_PLUGIN_PATH, plugin);

  void* lib = dlopen(plugin.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  auto entry = reinterpret_cast<dc_backend_entry_fn>(dlsym(lib, DC_BACKEND_ENTRY_SYMBOL));
  ASSERT_NE(entry, nullptr);
  const dc_backend& b = *entry();

  const std::string saved = std::getenv("DOTCOMPUTE_NVRTC") ? std::getenv("DOTCOMPUTE_NVRTC") : "";
  unsetenv("DOTCOMPUTE_NVRTC");
  setenv("DOTCOMPUTE_CUDA_DRIVER", DC_CUDA_DOUBLE_PATH, 1);
  controls().reset();
  ASSERT_EQ(b.initialize(), DC_OK) << b.last_error();
  char id[128] = {};
  const dc_status s = b.compiler_identity(0, id, sizeof id);
  const std::string why = b.last_error();
  b.shutdown();
  if (!saved.empty()) setenv("DOTCOMPUTE_NVRTC", saved.c_str(), 1);
  dlclose(lib);
  fs::remove_all(site);

  ASSERT_EQ(s, DC_OK) << why;
  EXPECT_EQ(std::string(id).rfind("nvrtc ", 0), 0u) << id;
}

}  // namespace
}  // namespace dctest

// The plugin loader: every way a plugin can fail is reported with its reason
// and none is fatal; filtering, shadowing, "auto", unload and reload.
#include <gtest/gtest.h>

#include <map>

#include "test_helpers.hpp"

using namespace dotcompute;

namespace {

std::map<std::string, BackendStatus> by_name(const std::vector<BackendStatus>& list) {
  std::map<std::string, BackendStatus> out;
  for (const auto& s : list) out.emplace(s.name, s);  // first of a name wins
  return out;
}

#define EXPECT_CONTAINS(hay, needle) \
  EXPECT_NE(std::string(hay).find(needle), std::string::npos) << "'" << (hay) << "' lacks '" << (needle) << "'"

}  // namespace

TEST(PluginLoader, LoadsAGoodPluginAndItsDevices) {
  auto rt = dctest::fake_runtime();
  auto list = rt->backends();
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].name, "fake");
  EXPECT_TRUE(list[0].available) << list[0].reason;
  EXPECT_EQ(list[0].version, "9.9.9");
  EXPECT_EQ(list[0].abi_version, DC_BACKEND_ABI_VERSION);
  EXPECT_EQ(list[0].device_count, 2);
  EXPECT_CONTAINS(list[0].library, "libdc_fake.so");
  EXPECT_CONTAINS(list[0].manifest, "fake.plugin.json");
  auto devs = rt->devices();
  ASSERT_EQ(devs.size(), 2u);
  EXPECT_EQ(devs[0]->id(), "fake:0");
  EXPECT_EQ(devs[1]->id(), "fake:1");
  EXPECT_EQ(devs[0]->name(), "Fake device 0");
  EXPECT_EQ(devs[0]->backend(), "fake");
  EXPECT_EQ(devs[1]->index(), 1);
  EXPECT_EQ(devs[0]->type(), "cpu");
  EXPECT_TRUE(devs[0]->unified_memory());
  EXPECT_FALSE(devs[1]->unified_memory());
  EXPECT_EQ(devs[0]->info().compute_units, 4u);
  EXPECT_EQ(devs[0]->info().arch, "fake-arch-0");
  EXPECT_EQ(devs[0]->info().extra_json, "{\"fake\": true}");
  EXPECT_TRUE(devs[0]->info().has(DC_FEATURE_FP64));
  EXPECT_EQ(devs[0]->compiler_identity(), "fakecc 1.0");
  EXPECT_EQ(rt->accelerator("fake"), devs[0]) << "one object per device";
  EXPECT_EQ(rt->accelerator("fake:1"), devs[1]);
}

TEST(PluginLoader, EveryBrokenPluginIsReportedWithItsReason) {
  Runtime rt(dctest::options_for({DC_TEST_GOOD_DIR, DC_TEST_BROKEN_DIR}));
  auto all = by_name(rt.backends());
  ASSERT_TRUE(all.count("fake"));
  EXPECT_TRUE(all["fake"].available);
  const std::map<std::string, std::vector<std::string>> expected = {
      {"fake_abi", {"ABI version 99", "1 to 1"}},
      {"fake_init", {"libfakedriver.so.1 not found"}},
      {"fake_noentry", {"does not export dotcompute_backend_entry"}},
      {"fake_dep", {"libdc_fake_dep.so", "libdc_test_dep.so"}},
      {"missing_lib", {"libdc_never_built.so"}},
      {"needs_driver", {"required library libdc_no_such_driver.so.7 not found"}},
      {"future_abi", {"ABI version 7"}},
      {"garbled", {"invalid plugin manifest", "garbled.plugin.json"}},
  };
  for (const auto& [name, needles] : expected) {
    ASSERT_TRUE(all.count(name)) << name << " is not listed";
    const BackendStatus& s = all[name];
    EXPECT_FALSE(s.available) << name;
    for (const auto& n : needles) EXPECT_CONTAINS(s.reason, n);
  }
  // None of it gets in the way of the good plugin.
  auto devs = rt.devices();
  ASSERT_EQ(devs.size(), 2u);
  EXPECT_EQ(devs[0]->backend(), "fake");
  try {
    rt.accelerator("fake_init");
    FAIL() << "expected BackendUnavailableError";
  } catch (const BackendUnavailableError& e) {
    EXPECT_CONTAINS(e.reason(), "libfakedriver.so.1");
    EXPECT_CONTAINS(e.what(), "fake_init");
  }
}

TEST(PluginLoader, AcceleratorSpecsAreChecked) {
  auto rt = dctest::fake_runtime();
  EXPECT_THROW(rt->accelerator("fake:2"), BackendUnavailableError);
  EXPECT_THROW(rt->accelerator("cuda"), BackendUnavailableError);
  try {
    rt->accelerator("nonesuch:0");
  } catch (const BackendUnavailableError& e) {
    EXPECT_CONTAINS(e.reason(), "found: fake");
  }
  EXPECT_THROW(rt->accelerator("fake:x"), InvalidArgumentError);
  EXPECT_THROW(rt->accelerator("fake:"), InvalidArgumentError);
  // No cuda/metal/opencl/cpu here: auto has nothing to choose.
  EXPECT_THROW(rt->accelerator("auto"), BackendUnavailableError);
}

TEST(PluginLoader, AutoPrefersAGpuOverTheCpu) {
  Runtime rt(dctest::options_for({DC_TEST_AUTO_DIR}));
  // The stand-in "opencl" has a gpu as its second device.
  EXPECT_EQ(rt.accelerator("auto")->id(), "opencl:1");
  RuntimeOptions only_cpu = dctest::options_for({DC_TEST_AUTO_DIR});
  only_cpu.enabled_backends = std::vector<std::string>{"cpu"};
  Runtime rt2(only_cpu);
  EXPECT_EQ(rt2.accelerator("auto")->id(), "cpu:0");
}

TEST(PluginLoader, EnabledBackendsRestrictLoading) {
  RuntimeOptions o = dctest::options_for({DC_TEST_GOOD_DIR, DC_TEST_BROKEN_DIR});
  o.enabled_backends = std::vector<std::string>{"fake"};
  Runtime rt(o);
  auto all = by_name(rt.backends());
  EXPECT_TRUE(all["fake"].available);
  EXPECT_EQ(all["fake_init"].reason, "disabled by DOTCOMPUTE_BACKENDS");
  RuntimeOptions none = dctest::options_for({DC_TEST_GOOD_DIR});
  none.enabled_backends = std::vector<std::string>{"cpu"};
  Runtime rt2(none);
  EXPECT_TRUE(rt2.devices().empty());
  EXPECT_FALSE(rt2.backends()[0].available);
}

TEST(PluginLoader, LaterDuplicatesAreShadowed) {
  Runtime rt(dctest::options_for({DC_TEST_GOOD_DIR, DC_TEST_GOOD_DIR}));
  auto list = rt.backends();
  ASSERT_EQ(list.size(), 2u);
  EXPECT_TRUE(list[0].available);
  EXPECT_FALSE(list[1].available);
  EXPECT_CONTAINS(list[1].reason, "shadowed by");
  EXPECT_EQ(rt.devices().size(), 2u);
  // An explicit load of a loaded name is shadowed too.
  BackendStatus again = rt.load_plugin(std::string(DC_TEST_GOOD_DIR) + "/fake.plugin.json");
  EXPECT_FALSE(again.available);
  EXPECT_CONTAINS(again.reason, "shadowed");
}

TEST(PluginLoader, LoadPluginByManifestFolderOrLibrary) {
  Runtime rt(dctest::options_for({}));
  EXPECT_TRUE(rt.backends().empty());
  EXPECT_THROW(rt.load_plugin("/no/such/plugin.json"), PluginError);
  BackendStatus s = rt.load_plugin(DC_TEST_FAKE_LIB);
  EXPECT_TRUE(s.available) << s.reason;
  EXPECT_EQ(s.name, "fake");
  EXPECT_EQ(rt.accelerator("fake")->id(), "fake:0");

  Runtime rt2(dctest::options_for({}));
  BackendStatus bad = rt2.load_plugin(DC_TEST_BROKEN_DIR);
  EXPECT_FALSE(bad.available);
  EXPECT_FALSE(bad.reason.empty());
  EXPECT_GE(rt2.backends().size(), 8u);
}

TEST(PluginLoader, UnloadOnlyWithoutLiveObjectsThenReload) {
  auto rt = dctest::fake_runtime();
  {
    auto acc = rt->accelerator("fake");
    auto buf = acc->allocate({16}, DType::Float32);
    acc.reset();
    // The buffer keeps its accelerator, and so the plugin, alive.
    EXPECT_THROW(rt->unload_plugin("fake"), PluginError);
    auto stream = rt->accelerator("fake:1")->create_stream();
    buf.reset();
    EXPECT_THROW(rt->unload_plugin("fake"), PluginError) << "a stream is alive";
  }
  EXPECT_THROW(rt->unload_plugin("nonesuch"), PluginError);
  bool loaded = false;
  dctest::fake_counters(&loaded);
  EXPECT_TRUE(loaded);
  rt->unload_plugin("fake");
  dctest::fake_counters(&loaded);
  EXPECT_FALSE(loaded) << "the library was closed";
  auto list = rt->backends();
  ASSERT_EQ(list.size(), 1u);
  EXPECT_FALSE(list[0].available);
  EXPECT_EQ(list[0].reason, "unloaded");
  EXPECT_THROW(rt->accelerator("fake"), BackendUnavailableError);
  EXPECT_TRUE(rt->devices().empty());

  BackendStatus s = rt->load_plugin(std::string(DC_TEST_GOOD_DIR) + "/fake.plugin.json");
  EXPECT_TRUE(s.available) << s.reason;
  ASSERT_EQ(rt->backends().size(), 1u) << "reloading replaces the entry";
  auto acc = rt->accelerator("fake");
  auto buf = acc->allocate({4}, DType::Int32);
  int32_t in[4] = {1, 2, 3, 4}, out[4] = {0};
  buf->copy_from_host(in, sizeof in);
  buf->copy_to_host(out, sizeof out);
  EXPECT_EQ(out[3], 4);
}

TEST(PluginLoader, PluginSymbolReachesAPluginsOwnExports) {
  auto rt = dctest::fake_runtime();
  // The entry point is what every plugin exports; the table it returns is the one the core uses.
  void* entry = rt->plugin_symbol("fake", DC_BACKEND_ENTRY_SYMBOL);
  ASSERT_NE(entry, nullptr);
  const dc_backend* table = reinterpret_cast<dc_backend_entry_fn>(entry)();
  EXPECT_EQ(table, rt->accelerator("fake")->api());
  EXPECT_EQ(rt->plugin_symbol("fake", "dotcompute_no_such_extension"), nullptr);
  EXPECT_EQ(rt->plugin_symbol("fake", ""), nullptr);
  EXPECT_EQ(rt->plugin_symbol("nonesuch", DC_BACKEND_ENTRY_SYMBOL), nullptr);
  rt->unload_plugin("fake");
  EXPECT_EQ(rt->plugin_symbol("fake", DC_BACKEND_ENTRY_SYMBOL), nullptr) << "an unloaded plugin has no symbols";
}

TEST(PluginLoader, OptionsFromTheEnvironment) {
  setenv("DOTCOMPUTE_PLUGIN_DIR", "/pkg/plugins", 1);
  setenv("DOTCOMPUTE_PLUGIN_PATH", "/a:/b::", 1);
  setenv("DOTCOMPUTE_BACKENDS", "cpu, opencl", 1);
  RuntimeOptions o = RuntimeOptions::from_environment();
  EXPECT_EQ(o.plugin_dirs, (std::vector<std::string>{"/pkg/plugins", "/a", "/b"}));
  ASSERT_TRUE(o.enabled_backends.has_value());
  EXPECT_EQ(*o.enabled_backends, (std::vector<std::string>{"cpu", "opencl"}));
  unsetenv("DOTCOMPUTE_PLUGIN_DIR");
  unsetenv("DOTCOMPUTE_PLUGIN_PATH");
  unsetenv("DOTCOMPUTE_BACKENDS");
  RuntimeOptions d = RuntimeOptions::from_environment();
  ASSERT_EQ(d.plugin_dirs.size(), 1u);
  // Without the variable, plugins are looked for beside libdotcompute.
  EXPECT_CONTAINS(d.plugin_dirs[0], "/plugins");
  EXPECT_FALSE(d.enabled_backends.has_value());
}

// A dependency of the "fake_dep" plugin, built where the loader cannot find it.
extern "C" __attribute__((visibility("default"))) int dc_test_dep_value(void) { return 42; }

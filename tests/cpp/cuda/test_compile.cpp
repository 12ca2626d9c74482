// Compilation through the real NVRTC, loading into the driver double.
#include <cstdlib>
#include <cstring>
#include <string>

#include "plugin_fixture.hpp"

namespace dctest {
namespace {

const char* kVadd = R"(extern "C" __global__ void vadd(const float* a, const float* b, float* out, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] + b[i];
}
)";

class CompileTest : public CudaPlugin {
 protected:
  void SetUp() override {
    if (nvrtc_path().empty()) GTEST_SKIP() << "NVRTC not installed (pip install nvidia-cuda-nvrtc-cu12)";
    CudaPlugin::SetUp();
  }
  std::string compile(const char* source, const char* options, dc_status expect = DC_OK) {
    void* bin = nullptr;
    uint64_t size = 0;
    const dc_status s = b.compile(0, source, options, &bin, &size);
    EXPECT_EQ(s, expect) << error();
    if (s != DC_OK) return {};
    std::string out(static_cast<const char*>(bin), size);
    b.free_binary(bin);
    return out;
  }
  std::string identity() {
    char buf[256];
    EXPECT_EQ(b.compiler_identity(0, buf, sizeof buf), DC_OK) << error();
    return buf;
  }
};

TEST_F(CompileTest, CompilesToCubinForTheExactArchAndLoadsIt) {
  const std::string id = identity();
  EXPECT_EQ(id.rfind("nvrtc ", 0), 0u) << id;
  EXPECT_NE(id.find(" sm_90 cubin"), std::string::npos) << id;

  const std::string cubin = compile(kVadd, "");
  ASSERT_GT(cubin.size(), 4u);
  EXPECT_EQ(cubin.compare(0, 4, "\x7f" "ELF"), 0);

  dc_module m = nullptr;
  ASSERT_EQ(b.module_load(0, cubin.data(), cubin.size(), &m), DC_OK) << error();
  size_t loaded = 0;
  EXPECT_STREQ(dbl.last_image_kind(&loaded), "cubin");
  EXPECT_EQ(loaded, cubin.size());
  dc_kernel k = nullptr, again = nullptr;
  ASSERT_EQ(b.kernel_get(m, "vadd", &k), DC_OK) << error();
  ASSERT_EQ(b.kernel_get(m, "vadd", &again), DC_OK);
  EXPECT_EQ(k, again);  // one handle per name, owned by the module
  EXPECT_EQ(b.kernel_get(m, "nope", &k), DC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(error().find("no kernel named 'nope'"), std::string::npos) << error();
  EXPECT_EQ(b.module_unload(m), DC_OK);
}

TEST_F(CompileTest, OptionsReachNvrtc) {
  const char* src = "extern \"C\" __global__ void k(int* o) { o[0] = SCALE; }\n";
  compile(src, "", DC_ERROR_COMPILATION);
  const std::string cubin = compile(src, "-DSCALE=3  --use_fast_math");
  EXPECT_EQ(cubin.compare(0, 4, "\x7f" "ELF"), 0);
}

TEST_F(CompileTest, CompileErrorCarriesNvrtcLogWithTheLine) {
  const char* bad = "extern \"C\" __global__ void k(float* o) {\n"
                    "  o[0] = 1.0f;\n"
                    "  o[1] = undefined_name;\n"
                    "}\n";
  compile(bad, "", DC_ERROR_COMPILATION);
  const std::string log = error();
  EXPECT_NE(log.find("dotcompute_kernel.cu(3)"), std::string::npos) << log;
  EXPECT_NE(log.find("undefined_name"), std::string::npos) << log;
  EXPECT_NE(log.find("for sm_90"), std::string::npos) << log;
}

TEST_F(CompileTest, FallsBackToPtxWhenTheDriverIsOlderThanNvrtc) {
  dbl.set_driver_version(11080);
  restart();
  const std::string id = identity();
  EXPECT_NE(id.find(" compute_90 ptx driver 11080"), std::string::npos) << id;
  const std::string ptx = compile(kVadd, "");
  ASSERT_FALSE(ptx.empty());
  EXPECT_EQ(ptx.back(), '\0');  // the driver reads PTX as a C string
  EXPECT_NE(ptx.find(".target sm_90"), std::string::npos);
  EXPECT_NE(ptx.find(".entry vadd"), std::string::npos);
  dc_module m = nullptr;
  ASSERT_EQ(b.module_load(0, ptx.data(), ptx.size(), &m), DC_OK) << error();
  EXPECT_STREQ(dbl.last_image_kind(nullptr), "ptx");
  dc_kernel k = nullptr;
  EXPECT_EQ(b.kernel_get(m, "vadd", &k), DC_OK) << error();
  EXPECT_EQ(b.module_unload(m), DC_OK);
}

TEST_F(CompileTest, DriverRejectingTheImageIsACompilationError) {
  const std::string cubin = compile(kVadd, "");
  dbl.fail_next("cuModuleLoadData", CUDA_ERROR_NO_BINARY_FOR_GPU);
  dc_module m = nullptr;
  EXPECT_EQ(b.module_load(0, cubin.data(), cubin.size(), &m), DC_ERROR_COMPILATION);
  EXPECT_NE(error().find("cuModuleLoadData failed"), std::string::npos) << error();
}

TEST_F(CompileTest, MissingNvrtcIsUnavailableWithTheInstallHint) {
  setenv("DOTCOMPUTE_NVRTC", "/nonexistent/libnvrtc.so.12", 1);
  restart();
  void* bin = nullptr;
  uint64_t size = 0;
  EXPECT_EQ(b.compile(0, kVadd, "", &bin, &size), DC_ERROR_UNAVAILABLE);
  EXPECT_NE(error().find("pip install dotcompute[cuda]"), std::string::npos) << error();
  EXPECT_NE(error().find("/nonexistent/libnvrtc.so.12"), std::string::npos) << error();
  char buf[128];
  EXPECT_EQ(b.compiler_identity(0, buf, sizeof buf), DC_ERROR_UNAVAILABLE);
  // Memory and streams work without a compiler.
  dc_devptr p = 0;
  EXPECT_EQ(b.mem_alloc(0, 8, &p), DC_OK);
  EXPECT_EQ(b.mem_free(0, p), DC_OK);
}

// A template kernel named with its arguments: the plugin gives NVRTC the name expression (the
// line dotcompute.RawKernel appends), and the driver is asked for the lowered (mangled) name.
const char* kTemplate = R"(template <int N, typename T> __global__ void scale(T* x) { x[threadIdx.x] *= N; }
template <int N> __global__ void scale(float* x, int n) { if (threadIdx.x < n) x[threadIdx.x] *= N; }
//!dotcompute-name-expression scale<3, float>
//!dotcompute-name-expression scale<4>
)";

TEST_F(CompileTest, TemplateKernelsAreFoundByNameExpressionUnderTheirLoweredNames) {
  const std::string image = compile(kTemplate, "");
  ASSERT_GT(image.size(), 8u);
  EXPECT_EQ(image.compare(0, 8, "DCNAMES1"), 0);  // the name table travels in front of the CUBIN
  dc_module m = nullptr;
  ASSERT_EQ(b.module_load(0, image.data(), image.size(), &m), DC_OK) << error();
  size_t loaded = 0;
  EXPECT_STREQ(dbl.last_image_kind(&loaded), "cubin");  // the driver gets the CUBIN alone
  EXPECT_LT(loaded, image.size());
  dc_kernel k3 = nullptr, k4 = nullptr;
  ASSERT_EQ(b.kernel_get(m, "scale<3, float>", &k3), DC_OK) << error();
  ASSERT_EQ(b.kernel_get(m, "scale<4>", &k4), DC_OK) << error();
  EXPECT_NE(k3, k4);
  // not asked for at compile time: no instantiation exists, and the message says so
  dc_kernel other = nullptr;
  EXPECT_EQ(b.kernel_get(m, "scale<5>", &other), DC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(error().find("no kernel named 'scale<5>'"), std::string::npos) << error();

  dc_stream st = nullptr;
  ASSERT_EQ(b.stream_create(0, &st), DC_OK);
  dc_devptr x = 0;
  ASSERT_EQ(b.mem_alloc(0, 64, &x), DC_OK);
  dc_launch_config c{};
  c.struct_size = sizeof c;
  c.dims = 1;
  c.global_size[0] = 16;
  c.global_size[1] = c.global_size[2] = 1;
  c.local_size[0] = 16;
  dc_kernel_arg args[2]{};
  args[0].kind = DC_ARG_BUFFER;
  args[0].size = 8;
  args[0].value.buffer = x;
  const int32_t n = 16;
  args[1].kind = DC_ARG_SCALAR;
  args[1].size = 4;
  args[1].value.scalar = &n;
  ASSERT_EQ(b.launch(st, k3, &c, args, 1), DC_OK) << error();
  ASSERT_EQ(b.launch(st, k4, &c, args, 2), DC_OK) << error();
  int count = 0;
  const double_launch* log = dbl.launch_log(&count);
  ASSERT_GE(count, 2);
  // Itanium mangling, as NVRTC lowers the two expressions
  EXPECT_STREQ(log[count - 2].name, "_Z5scaleILi3EfEvPT0_");
  EXPECT_STREQ(log[count - 1].name, "_Z5scaleILi4EEvPfi");
  EXPECT_EQ(b.mem_free(0, x), DC_OK);
  EXPECT_EQ(b.stream_destroy(st), DC_OK);
  EXPECT_EQ(b.module_unload(m), DC_OK);
}

TEST_F(CompileTest, ANameExpressionNamingNoKernelIsACompilationError) {
  compile("__global__ void k(float* x) {}\n//!dotcompute-name-expression kk<2>\n", "", DC_ERROR_COMPILATION);
  EXPECT_NE(error().find("kk"), std::string::npos) << error();
}

TEST_F(CompileTest, ADamagedNameTableIsRefused) {
  std::string image = compile(kTemplate, "");
  ASSERT_GT(image.size(), 16u);
  image.resize(14);  // the magic and part of the count
  dc_module m = nullptr;
  EXPECT_EQ(b.module_load(0, image.data(), image.size(), &m), DC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(error().find("kernel-name table is damaged"), std::string::npos) << error();
}

}  // namespace
}  // namespace dctest

// Adds two vectors with a C++ kernel compiled at run time on the "cpu"
// accelerator, and checks the result.
#include <cmath>
#include <cstdio>
#include <vector>

#include <dotcompute/dotcompute.hpp>

namespace dc = dotcompute;

// A kernel written by hand against the CPU kernel ABI (dotcompute/cpu_kernel_abi.h):
// the backend hands it a range of work-groups; it runs every work-item in them.
static const char* kSource = R"(
#include <dotcompute/cpu_kernel_abi.h>

extern "C" void vector_add(const dc_cpu_launch* launch, uint64_t group_begin, uint64_t group_end, void*) {
  const float* a = *(const float* const*)launch->args[0];
  const float* b = *(const float* const*)launch->args[1];
  float* out = *(float* const*)launch->args[2];
  const uint64_t n = launch->global_size[0];
  const uint64_t local = launch->local_size[0];
  for (uint64_t g = group_begin; g < group_end; ++g) {
    uint64_t begin = g * local;
    uint64_t end = begin + local < n ? begin + local : n;
    for (uint64_t i = begin; i < end; ++i) out[i] = a[i] + b[i];
  }
}
)";

int main() {
  try {
    dc::Runtime& runtime = dc::Runtime::instance();
    for (const auto& b : runtime.backends()) {
      std::printf("backend %-8s %s%s\n", b.name.c_str(), b.available ? "available" : "unavailable: ",
                  b.available ? "" : b.reason.c_str());
    }
    auto acc = runtime.accelerator("cpu");
    std::printf("running on %s (%s, %u compute units)\n", acc->id().c_str(), acc->name().c_str(),
                acc->info().compute_units);

    const int64_t n = 1 << 20;
    std::vector<float> a(n), b(n), out(n);
    for (int64_t i = 0; i < n; ++i) {
      a[i] = static_cast<float>(i);
      b[i] = 0.5f * static_cast<float>(i);
    }
    auto da = acc->allocate({n}, dc::DType::Float32);
    auto db = acc->allocate({n}, dc::DType::Float32);
    auto dout = acc->allocate({n}, dc::DType::Float32);
    da->copy_from_host(a.data(), da->nbytes());
    db->copy_from_host(b.data(), db->nbytes());

    auto kernel = acc->compile(kSource, "vector_add");
    // A raw kernel: arguments are passed as given (no extents after buffers).
    auto plan = kernel->plan({}, /*raw=*/true);
    plan->launch(dc::LaunchConfig::make({n}), {dc::ArgValue(da.get()), dc::ArgValue(db.get()), dc::ArgValue(dout.get())});
    dout->copy_to_host(out.data(), dout->nbytes());  // waits for the launch

    for (int64_t i = 0; i < n; ++i) {
      if (std::fabs(out[i] - 1.5f * static_cast<float>(i)) > 1e-3f * (1 + std::fabs(out[i]))) {
        std::fprintf(stderr, "wrong result at %lld: %f\n", static_cast<long long>(i), out[i]);
        return 1;
      }
    }
    std::printf("vector_add of %lld floats: correct\n", static_cast<long long>(n));
    return 0;
  } catch (const dc::Error& e) {
    std::fprintf(stderr, "dotcompute error: %s\n", e.what());
    return 2;
  }
}

// The CUDA simulator's device API beside the scheduler: the device clock and the refused texture
// fetches. Included by dcsim_atomics.h (itself included by dcsim_cuda.h), after the barriers.
#pragma once

// clock() in device code reads the SM's cycle counter, the same counter as clock64(); the host's
// clock(3) is the process's CPU time in other units. Kernels time sections with clock() and
// compare with clock64() or with each other, so both read the simulator's one clock (monotonic
// nanoseconds, dcsim_cuda.h's clock64). A function-like macro: <time.h>'s declaration (already
// included) and <ctime>'s `using ::clock;` are left as they are.
#define clock() (static_cast<clock_t>(clock64()))

// Texture objects: the type exists so that files with texture kernels compile (their other kernels
// run); a fetch fails the launch, naming the feature (CUDA_ERROR_LAUNCH_FAILED). The simulator has
// no texture units (filtering, address modes, normalised coordinates) and dotcompute no API that
// creates texture objects (cuTexObjectCreate) for a launch to pass.
typedef unsigned long long cudaTextureObject_t;
typedef unsigned long long cudaSurfaceObject_t;

namespace dcsim {
namespace {  // internal linkage: each kernel object keeps its own state (no GNU unique symbols)
template <class T>
T texture_refused(const char* what) {
  fail(719, "%s: textures (cudaTextureObject_t) are not supported by the CUDA simulator%s (docs/cuda-simulator.md)",
       what, "");
  __builtin_unreachable();
}
}  // namespace
}  // namespace dcsim

template <class T>
T tex1Dfetch(cudaTextureObject_t, int) { return ::dcsim::texture_refused<T>("tex1Dfetch"); }
template <class T>
T tex1D(cudaTextureObject_t, float) { return ::dcsim::texture_refused<T>("tex1D"); }
template <class T>
T tex2D(cudaTextureObject_t, float, float) { return ::dcsim::texture_refused<T>("tex2D"); }
template <class T>
T tex3D(cudaTextureObject_t, float, float, float) { return ::dcsim::texture_refused<T>("tex3D"); }
template <class T>
T tex1DLod(cudaTextureObject_t, float, float) { return ::dcsim::texture_refused<T>("tex1DLod"); }
template <class T>
T tex2DLod(cudaTextureObject_t, float, float, float) { return ::dcsim::texture_refused<T>("tex2DLod"); }

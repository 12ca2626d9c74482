#!/usr/bin/env bash
# Installs everything the test suite needs, then runs it, printing each phase's wall time at the end:
#   the C++ tests (ctest) and the Python tests (pytest) on cpu, opencl (PoCL), the CUDA simulator and
#   the Metal double.
# Usage: bash tests/run.sh [--full] [extra pytest paths or options for the main pytest run...]
#   --full  also the tests marked slow (@pytest.mark.slow), the whole dtype and operator matrices and the
#           realworld/idioms suites on every device (by default devices other than cpu:0 run a slice:
#           tests/python/conftest.py), and the whole CUDA-simulator and Metal-double passes (the
#           scheduled CI workflow, .github/workflows/tests.yml)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
jobs=${DOTCOMPUTE_BUILD_JOBS:-2}

full=0
extra=()
for arg in "$@"; do
  if [ "$arg" = "--full" ]; then full=1; else extra+=("$arg"); fi
done
export DOTCOMPUTE_TESTS_FULL=$full  # tests/python/conftest.py: slow tests run only when set

# step NAME: starts a phase (and ends the one before); the wall seconds of each are printed at exit,
# also when a phase fails.
phase_names=()
phase_secs=()
phase_name=""
phase_t0=$(date +%s)
step() {
  local now
  now=$(date +%s)
  if [ -n "$phase_name" ]; then
    phase_names+=("$phase_name")
    phase_secs+=($((now - phase_t0)))
  fi
  phase_name="$*"
  phase_t0=$now
  if [ -n "$phase_name" ]; then printf '\n== %s ==\n' "$phase_name"; fi
}
report_times() {
  local rc=$? total=0 i
  step ""
  printf '\n== wall time per phase (seconds) ==\n'
  for i in "${!phase_names[@]}"; do
    printf '%6d  %s\n' "${phase_secs[$i]}" "${phase_names[$i]}"
    total=$((total + phase_secs[i]))
  done
  printf '%6d  total%s\n' "$total" "$(if [ "$rc" -ne 0 ]; then echo " (stopped: exit status $rc)"; fi)"
}
trap report_times EXIT

# System packages: a C++ compiler and CMake for the build, GoogleTest for ctest,
# PoCL so the OpenCL backend runs for real, CLBlast and clFFT so its vendor paths are exercised
# (loaded at run time; never required), clang for the Metal shim, and GNUstep Foundation,
# the GNU Objective-C runtime and BlocksRuntime for the Metal test double (tests/metal_double).
need=()
for pkg in g++ cmake ninja-build libgtest-dev pocl-opencl-icd ocl-icd-libopencl1 libclblast1 libclfft2 clang \
           gobjc++ libgnustep-base-dev libblocksruntime-dev; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  step "installing Debian packages: ${need[*]}"
  if [ "$(id -u)" = 0 ]; then sudo_cmd=(); else sudo_cmd=(sudo); fi
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

step "installing dotcompute with its test extras"
python3 -m pip install -q --upgrade pip >/dev/null
python3 -m pip install -q ".[test,cuda]"
# cuRAND's headers and host library: the simulator compiles the former, and the device API's
# sequences are checked against the latter (tests/python/cuda_sim/test_curand_device.py)
python3 -m pip install -q nvidia-curand-cu12

# The C++ tests run once, under ASan + UBSan (the stricter build). The plain dev build makes what
# pytest loads (the CUDA plugin and simulator, the CUDA driver double, the fake plugin); the C++
# example is built the way a C++ user builds it, against the package pip just installed
# (find_package through `dotcompute --cmake-dir`: examples/cpp/CMakeLists.txt), and cannot run under
# the sanitizers. --full builds and runs every C++ test in the dev build too (its example test
# installs the dev build tree and builds the example against that).
if [ "$full" = 1 ]; then
  step "C++ build and tests (ctest, dev preset)"
  cmake --preset dev >/dev/null
  cmake --build --preset dev -j "$jobs"
  ctest --preset dev --output-on-failure
else
  step "C++ build (dev preset: what pytest loads) and the C++ example against the installed package"
  cmake --preset dev >/dev/null
  cmake --build --preset dev -j "$jobs" --target dotcompute_cuda dotcompute_cuda_sim cuda_double dc_fake
  example_dir=$(mktemp -d)
  cmake -S examples/cpp -B "$example_dir/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -Ddotcompute_DIR="$(python3 -m dotcompute --cmake-dir)" >/dev/null
  cmake --build "$example_dir/build"
  # only the installed package's plugins: none from the environment
  example_out=$(env -u DOTCOMPUTE_PLUGIN_DIR -u DOTCOMPUTE_PLUGIN_PATH DOTCOMPUTE_CACHE_DIR="$example_dir/cache" \
    "$example_dir/build/vector_add")
  printf '%s\n' "$example_out"
  rm -rf "$example_dir"
  case "$example_out" in
    *correct*) ;;
    *) echo "the C++ example did not report a correct result" >&2; exit 1 ;;
  esac
fi

step "C++ tests under ASan + UBSan (ctest)"
# (the asan preset leaves out the CUDA simulator library: no C++ test loads it -- the simulator runs
# under the Python tests below -- and it was a sixth of this build's compile time), and it is a unity
# build (135 -> 77 s on 2 cores; the dev build above compiles the libraries source by source)
cmake --preset asan >/dev/null
cmake --build --preset asan -j "$jobs"
ctest --preset asan --output-on-failure

# pytest runs the test files on as many worker processes as there are cores (at most 4; pytest-xdist,
# whole files per worker so a file's kernels compile once): kernel compiles are separate processes
# and most tests wait on them, so a second worker keeps the second core busy.
# DOTCOMPUTE_TEST_WORKERS=1 runs everything in one process.
workers=${DOTCOMPUTE_TEST_WORKERS:-$(n=$(nproc 2>/dev/null || echo 1); echo $((n > 4 ? 4 : n)))}
pytest_opts=()
if [ "$workers" -gt 1 ]; then pytest_opts=(-n "$workers" --dist loadfile); fi
# each pytest run ends with its 25 slowest tests: where the time of a phase went
pytest_opts+=(--durations=25)

step "Python tests (pytest, in Python's development mode)"
cd "$root"
# The CUDA driver test double and the plugin built above let the CUDA host logic run without a GPU.
export DOTCOMPUTE_TEST_CUDA_BUILD="$root/build/dev"
# The whole suite runs once in development mode (PYTHONDEVMODE: debug allocator hooks, every warning
# shown) with unclosed resources as errors: a ResourceWarning in a test, or one raised in a
# destructor (which pytest reports as PytestUnraisableExceptionWarning), fails the run.
PYTHONDEVMODE=1 python3 -W error::ResourceWarning -m pytest -q -rs "${pytest_opts[@]}" tests/python --ignore=tests/python/metal "${extra[@]}" \
  -W error::ResourceWarning -W error::pytest.PytestUnraisableExceptionWarning \
  --deselect tests/python/cuda_sim/test_under_simulator.py::test_this_folder_on_the_simulator

# The Array API's own conformance suite (the pinned copy beside the checkout; skipped when absent), whole,
# on cpu:0, a few examples a test (about 65 s with a cold kernel cache on 2 cores, most of it compiling
# the generated kernels). tests/array_api/xfails.txt lists its known failures, each with its reason.
step "Array API conformance suite (array-api-tests, cpu:0)"
bash tests/array_api/run.sh --device cpu:0 --max-examples "${DOTCOMPUTE_ARRAY_API_EXAMPLES:-3}"
# the device paths of a non-host device (complex kernels, mask indexing, >3-d reshapes): 40 tests on
# opencl:0, about 45 s on 2 busy cores with the kernel cache warm
bash tests/array_api/run.sh --device opencl:0 --max-examples 2 --device-subset

step "CUDA backend on the CUDA simulator (pytest, DOTCOMPUTE_CUDA_SIM=1)"
# The device-parametrised suites again with cuda:0 simulated, so the CUDA kernels run and are checked
# against numpy (the main pass only compiles them); then the simulator's own tests and the GPU
# conformance file. -k keeps the cuda:0 parameters and the CUDA tests that behave differently on the
# simulator; what already ran in the main pass is left out: the cpu:0 and opencl:0 parameters, the
# emit-only and NVRTC-only tests, and test_sim_devices and test_sim_host_build (they start their own simulated interpreters).
# On the simulator (no vendor libraries) the ops suites' "auto" path is the portable one, so their
# "portable" parameter would run everything twice: it runs in --full only. By default the suites
# that exercise every feature (the language, types, operations, expressions, runtime, pipelines,
# orchestration, profiling, reliability); --full adds the rest of lang, idioms, realworld and
# contract_extra, which run the same features again through other kernels.
sim_k="cuda and not cpu:0 and not opencl:0 and not nvrtc and not for_every_backend and not prints_and_cuda_compiles"
sim_ignore=()
sim_suites=(tests/python/lang/test_conformance.py tests/python/lang/test_subgroups.py tests/python/lang/test_bitcast.py
  tests/python/lang/test_launch_checks.py tests/python/lang/test_fastmath.py tests/python/types tests/python/ops
  tests/python/expr tests/python/runtime tests/python/pipeline tests/python/orchestrate tests/python/profile
  tests/python/reliability tests/python/check tests/python/namespace/test_nd_expressions.py
  tests/python/namespace/test_dlpack_zero_copy.py tests/python/namespace/test_device_integer_indexing.py)
if [ "$full" = 1 ]; then
  sim_suites+=(tests/python/lang tests/python/idioms tests/python/realworld tests/python/contract_extra)
else
  # By default the simulator runs one representative slice of the matrices that mostly re-run the
  # same emitter on more dtypes (each kernel is a ~1 s host compile here; --full runs them all).
  # The dtype and operator matrices that every device other than cpu:0 slices (the device_slice
  # fixture of tests/python/conftest.py: the numpy-conformance operators spelled differently in C,
  # integer constant powers, fused reductions, reductions' result dtypes, the sorts' key dtypes,
  # weak scalars and unary operators) slice themselves; on top of those, here:
  # - the ops suites' "portable" path parameters ("portable-", "portable-radix-", ...), which on the
  #   simulator are the "auto" path again;
  # - every binary operator on every dtype pair: float16 on the left (three left dtypes on other
  #   devices: tests/python/expr/test_operators.py); the direct matmul's shape list: float32; the float64
  #   matmul of a batched and a vector product (every operand layout runs in test_matmul_direct.py);
  # - left for --full: the blocked matmul (the kernel for CPU-type OpenCL devices), random
  #   expression trees and the laziness rules (Python-side logic, the same on every device).
  sim_k="$sim_k and not portable-"
  sim_k="$sim_k and not (test_shapes_match_numpy and int32)"
  sim_k="$sim_k and not (test_every_binary_operator_on_every_dtype_pair and not 0-float16)"
  sim_k="$sim_k and not (test_matmul_batched_and_vectors and not (shapes0 or shapes3))"
  sim_ignore=(--ignore=tests/python/ops/test_matmul_blocked.py --ignore=tests/python/expr/test_random_trees.py
    --ignore=tests/python/expr/test_laziness.py)
fi
DOTCOMPUTE_CUDA_SIM=1 python3 -m pytest -q -rs "${pytest_opts[@]}" -k "$sim_k" "${sim_suites[@]}" ${sim_ignore[@]+"${sim_ignore[@]}"}
DOTCOMPUTE_CUDA_SIM=1 python3 -m pytest -q -rs "${pytest_opts[@]}" tests/python/cuda_sim tests/python/cuda/test_cuda_gpu.py \
  --deselect tests/python/cuda_sim/test_sim_devices.py --deselect tests/python/cuda_sim/test_sim_host_build.py

step "Metal plugin on the Metal test double (pytest)"
# The plugin's own tests, then suites on metal:0 only; kernels that Metal cannot express (float64,
# 64-bit atomics) are skipped with the emitter's reason. By default the suites that cover every
# feature: the language (conformance, numpy semantics, sub-groups), vectors and structs, the runtime,
# linalg (its portable kernels: about 5 s)
# and expressions; --full adds realworld, idioms and contract_extra (the same features through other
# kernels) and the operations (tests/python/ops, without the portable parameter, which on metal:0
# is the auto path again: about 4 minutes on the loaded 2-core machine). Deselected:
# a float64 kernel refused inside worker threads (the refusal is collected, not raised, so
# metal_limits cannot see it), a test expecting float16 buffers to be refused (Metal has half), and
# one expecting `int32 += 1.5` to fail on same_kind casting (on Metal the float64 refusal comes first).
metal_suites=(tests/python/metal tests/python/lang/test_conformance.py tests/python/lang/test_numpy_semantics.py tests/python/namespace/test_numpy_port_example.py
  tests/python/lang/test_subgroups.py tests/python/types/test_vectors.py tests/python/types/test_structs.py
  tests/python/types/test_structs_particles.py tests/python/runtime tests/python/expr tests/python/ops/test_int_wrap_devices.py
  tests/python/check tests/python/linalg tests/python/namespace/test_nd_expressions.py
  tests/python/namespace/test_device_integer_indexing.py tests/python/namespace/test_dlpack_zero_copy.py
  tests/python/ops/test_float_key.py tests/python/lang/test_bitcast.py)
metal_k="metal:0 or test_metal_plugin or test_metal_abi or test_metal_memory or test_metal_archives or test_metal_msl_styles or test_metal_faults or test_metal_shim_runner or test_metal_math_mode or test_outside_msl_kernels or test_raw_msl_checks or test_metal_threadgroup_params"
if [ "$full" = 1 ]; then
  metal_suites+=(tests/python/realworld tests/python/idioms tests/python/contract_extra tests/python/ops)
  metal_k="($metal_k) and not portable-metal:0"
fi
bash tests/metal_double/build.sh "$root/build/metal-double"
DOTCOMPUTE_PLUGIN_PATH="$root/build/metal-double" DOTCOMPUTE_METAL_DOUBLE_DIR="$root/build/metal-double" \
  PYTHONPATH="$root/tests/python/metal${PYTHONPATH:+:$PYTHONPATH}" \
  python3 -m pytest -q -rs "${pytest_opts[@]}" -p metal_limits "${metal_suites[@]}" -k "$metal_k" \
    --deselect "tests/python/expr/test_indexing.py::test_inplace_operators[metal:0]" \
    --deselect "tests/python/realworld/test_rw_idioms.py::test_first_launches_race_from_threads[metal:0]" \
    --deselect "tests/python/realworld/test_rw_patterns.py::test_unsupported_dtype_is_refused_naming_parameter[metal:0]"

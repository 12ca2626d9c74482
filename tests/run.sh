#!/usr/bin/env bash
# Installs everything the test suite needs, then runs all of it:
#   the C++ tests (ctest, plain and under ASan+UBSan) and the Python tests (pytest).
# Usage: bash tests/run.sh [extra pytest paths...]
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
jobs=${DOTCOMPUTE_BUILD_JOBS:-2}

step() { printf '\n== %s ==\n' "$*"; }

# System packages: a C++ compiler and CMake for the build, GoogleTest for ctest,
# PoCL so the OpenCL backend runs for real, clang for the Metal shim.
need=()
for pkg in g++ cmake ninja-build libgtest-dev pocl-opencl-icd ocl-icd-libopencl1 clang; do
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

step "C++ tests (ctest)"
cmake --preset dev >/dev/null
cmake --build --preset dev -j "$jobs"
ctest --preset dev --output-on-failure

step "C++ tests under ASan + UBSan (ctest)"
cmake --preset asan >/dev/null
cmake --build --preset asan -j "$jobs"
ctest --preset asan --output-on-failure

step "Python tests (pytest)"
cd "$root"
# The CUDA driver test double and the plugin built above let the CUDA host logic run without a GPU.
export DOTCOMPUTE_TEST_CUDA_BUILD="$root/build/dev"
python3 -m pytest -q -rs tests/python "$@"

#!/usr/bin/env bash
# Builds the Metal test double and the Metal plugin (metal/*.mm) against it, on Linux:
#
#   bash tests/metal_double/build.sh OUTDIR
#   DOTCOMPUTE_PLUGIN_PATH=OUTDIR python -c "import dotcompute as dc; print(dc.accelerator('metal'))"
#
# Needs clang++, and Debian's gobjc++ (the GNU Objective-C runtime headers), libgnustep-base-dev
# and libblocksruntime-dev. The plugin is compiled with manual retain/release (-fno-objc-arc),
# the same sources that macOS builds with ARC (metal/CMakeLists.txt).
set -euo pipefail

out="${1:?usage: build.sh OUTDIR}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

cxx="${DOTCOMPUTE_METAL_DOUBLE_CXX:-clang++}"
command -v "$cxx" >/dev/null || { echo "build.sh: $cxx not found (apt-get install clang)" >&2; exit 1; }
command -v gnustep-config >/dev/null || {
  echo "build.sh: gnustep-config not found (apt-get install gobjc++ libgnustep-base-dev libblocksruntime-dev)" >&2
  exit 1
}
# clang finds the GNU runtime's <objc/objc.h> in gcc's private include folder.
gcc_inc="$(dirname "$(gcc -print-file-name=include/objc/objc.h)")/.."
[ -f "$gcc_inc/objc/objc.h" ] || { echo "build.sh: objc/objc.h not found (apt-get install gobjc++)" >&2; exit 1; }
# gnustep-config's flags name gcc's runtime spelling; clang gets its own below.
objc_flags="$(gnustep-config --objc-flags | sed -e 's/-fobjc-runtime=[^ ]*//g' -e 's/-MMD//g' -e 's/-MP//g' \
  -e 's/-g //g' -e 's/-O2//g' -e 's/-DGSWARN//g' -e 's/-DGSDIAGNOSE//g')"
base_libs="$(gnustep-config --base-libs)"

common=(-std=c++17 -fPIC -O${DC_METAL_DOUBLE_OPT:-1} -g -Wall -Wextra -fobjc-runtime=gcc -fblocks -fno-objc-arc
        -I"$here/include" -idirafter "$gcc_inc")
# Extra flags for every compile and link, e.g. DC_METAL_DOUBLE_CXXFLAGS="-fsanitize=address".
# shellcheck disable=SC2206
extra=(${DC_METAL_DOUBLE_CXXFLAGS:-})
common+=("${extra[@]}")
# shellcheck disable=SC2206
objc=(-x objective-c++ $objc_flags)

obj="$out/.obj"
mkdir -p "$obj"

# The double: libdotcompute_metal_double.so (Metal's API, running MSL through the shim).
# The MSL runner is the one the emitter tests' runner.py builds too (tests/support/metal_shim).
shim="$root/tests/support/metal_shim"
"$cxx" "${common[@]}" -I"$shim" -DDC_MTL_SHIM_DIR="\"$shim\"" -c "$shim/msl_runner.cpp" -o "$obj/msl_runner.o"
"$cxx" "${common[@]}" "${objc[@]}" -I"$shim" -c "$here/metal_double.mm" -o "$obj/metal_double.o"
"$cxx" "${common[@]}" "${objc[@]}" -I"$shim" -c "$here/double_commands.mm" -o "$obj/double_commands.o"
# shellcheck disable=SC2086
# libBlocksRuntime comes before gnustep-base, which carries a blocks runtime of its own whose
# _Block_copy does not copy clang's stack blocks: the first in the search order wins.
# -z nodelete: the runner's fault handler stays installed for the process's life, so its code must
# stay mapped after the plugin is unloaded.
"$cxx" "${extra[@]}" -shared -o "$out/libdotcompute_metal_double.so" "$obj/msl_runner.o" "$obj/metal_double.o" "$obj/double_commands.o" \
  -Wl,-z,nodelete -Wl,--no-as-needed -lBlocksRuntime $base_libs -ldl -pthread -Wl,--no-undefined

# The plugin: the same .mm sources as on macOS, linked against the double.
plugin_objs=()
for src in plugin memory queue program launch; do
  "$cxx" "${common[@]}" "${objc[@]}" -fvisibility=hidden -I"$root/metal" -I"$root/cpp/include" \
    -c "$root/metal/$src.mm" -o "$obj/plugin_$src.o"
  plugin_objs+=("$obj/plugin_$src.o")
done
# shellcheck disable=SC2086
"$cxx" "${extra[@]}" -shared -o "$out/libdotcompute_metal.so" "${plugin_objs[@]}" -L"$out" -Wl,--no-as-needed -lBlocksRuntime \
  -ldotcompute_metal_double $base_libs -pthread -Wl,-rpath,'$ORIGIN' -Wl,--no-undefined

cp "$root/metal/metal.plugin.json" "$out/metal.plugin.json"

# The ABI test: every function of the plugin's table, called directly (tests/python/metal runs it).
"$cxx" "${extra[@]}" -std=c++17 -O1 -g -Wall -Wextra -I"$root/cpp/include" "$here/abi_test.cpp" -o "$out/metal_abi_test" -ldl
echo "built the Metal plugin against the test double in $out"

#!/usr/bin/env bash
# Runs the Array API standard's conformance suite (data-apis/array-api-tests, the pinned copy in
# ../shared/array-api-tests beside this checkout) against dotcompute, with the known failures of
# tests/array_api/xfails.txt, and prints the pass counts.
# Usage: bash tests/array_api/run.sh [--module dotcompute|numpy] [--device SPEC] [--max-examples N]
#                                    [--no-xfails] [--report JUNIT.xml] [--device-subset]
#                                    [extra pytest arguments, e.g. array_api_tests/test_creation_functions.py]
# --device-subset: only the tests that exercise the device paths of non-host devices (complex
# expressions and their special values, mask and integer-array indexing, reshape/broadcast past
# 3 dimensions, nextafter): a short CI check for opencl:0 / cuda:0 (see docs/array-api.md).
# The suite is read-only in CI: it is copied to a temporary folder and run from there.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
suite="$root/../shared/array-api-tests"
module=dotcompute
device=cpu:0
examples=5
xfails="$here/xfails.txt"
report=""
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --module) module=$2; shift 2 ;;
    --device) device=$2; shift 2 ;;
    --max-examples) examples=$2; shift 2 ;;
    --no-xfails) xfails=""; shift ;;
    --report) report=$2; shift 2 ;;
    --device-subset)
      t=array_api_tests
      extra+=("$t/test_array_object.py::test_getitem_masking" "$t/test_array_object.py::test_setitem_masking"
              "$t/test_array_object.py::test_getitem_arrays_and_ints_2"
              "$t/test_manipulation_functions.py::test_reshape" "$t/test_data_type_functions.py::test_broadcast_to"
              "$t/test_operators_and_elementwise_functions.py::test_nextafter"
              "$t/test_operators_and_elementwise_functions.py::test_exp"
              "$t/test_operators_and_elementwise_functions.py::test_multiply"
              "$t/test_special_cases.py::test_unary" -k "not test_unary or (real and (sqrt or tanh))")
      shift ;;
    *) extra+=("$1"); shift ;;
  esac
done
if [ ! -d "$suite" ]; then
  echo "array-api-tests: skipped ($suite is absent: the pinned suite lives beside the checkout, see docs/array-api.md)"
  exit 0
fi
if ! python3 -c "import hypothesis, ndindex, pytest_jsonreport" 2>/dev/null; then
  # the test extras have them (pip install -e '.[test]'): without them the suite cannot run at all
  echo "array-api-tests: needs hypothesis, ndindex and pytest-json-report: pip install -e '.[test]'" >&2
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$suite/." "$work"
args=(--max-examples "$examples" --hypothesis-seed 0 --disable-deadline -p no:cacheprovider -p no:warnings -q -rN --tb=no
      -o "junit_family=xunit2" --junitxml "$work/report.xml")
if [ -n "$xfails" ]; then
  # our file says why on each line ("id  # reason"); the suite reads bare ids
  sed -e 's/[[:space:]]*#.*$//' -e '/^$/d' "$xfails" > "$work/xfails-ids.txt"
  args+=(--xfails-file "$work/xfails-ids.txt")
fi
if [ ${#extra[@]} -eq 0 ]; then extra=(array_api_tests); fi
cd "$work"
set +e
# the installed dotcompute (as the rest of tests/run.sh uses): python/ of the checkout has no _native
# after a plain `pip install .`
ARRAY_API_TESTS_MODULE=$module ARRAY_API_TESTS_VERSION=2024.12 DOTCOMPUTE_DEFAULT_DEVICE=$device \
  python3 -m pytest "${args[@]}" "${extra[@]}"
rc=$?
set -e
if [ ! -f "$work/report.xml" ]; then
  echo "array-api-tests did not run (pytest exit status $rc): see the output above" >&2
  exit "$(( rc == 0 ? 1 : rc ))"
fi
python3 - "$work/report.xml" "$module" "$device" <<'PY'
import sys
import xml.etree.ElementTree as ET

root = ET.parse(sys.argv[1]).getroot()
counts = {"passed": 0, "failed": 0, "skipped": 0, "xfailed": 0, "error": 0}
for case in root.iter("testcase"):
    kinds = [child.tag for child in case]
    if "failure" in kinds:
        counts["failed"] += 1
    elif "error" in kinds:
        counts["error"] += 1
    elif "skipped" in kinds:
        msg = next(c for c in case if c.tag == "skipped").get("type", "")
        counts["xfailed" if "xfail" in msg else "skipped"] += 1
    else:
        counts["passed"] += 1
total = sum(counts.values())
print(f"array-api-tests ({sys.argv[2]}, device {sys.argv[3]}): " + ", ".join(f"{v} {k}" for k, v in counts.items())
      + f" of {total}")
PY
if [ -n "$report" ]; then cp "$work/report.xml" "$report"; fi
exit $rc

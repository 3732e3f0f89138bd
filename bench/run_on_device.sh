#!/usr/bin/env bash
# Runs every staged GPU test (name ending in _gpu_test) on the GPU machine and prints a
# summary table last. Logs go to $OUT (or ./device-logs). GPU_TESTS names a subset
# ("im2col_gpu_test library_gpu_test"): all of them take longer than one 10-minute device
# call on an H100, so split them over two.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-device-logs}"
mkdir -p "$out"
source bench/device_env.sh || exit 1
summary=()
status=0
for name in ${GPU_TESTS:-}; do
  [ -x ".device/bin/$name" ] || { echo "GPU_TESTS names $name, which is not staged" >&2; exit 1; }
done
for test in .device/bin/*_gpu_test; do
  [ -x "$test" ] || continue
  name=$(basename "$test")
  [ -z "${GPU_TESTS:-}" ] || [[ " $GPU_TESTS " == *" $name "* ]] || continue
  if "$test" --gtest_brief=1 > "$out/$name.log" 2>&1; then result=PASS; else result=FAIL; status=1; fi
  tail -n 3 "$out/$name.log"
  summary+=("$(printf '%-40s %s  %s' "$name" "$result" "$(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \]' "$out/$name.log" | tr '\n' ' ')")")
done
echo "== GPU tests"
if [ ${#summary[@]} -eq 0 ]; then
  echo "no GPU test is staged in .device/bin (bash bench/stage_for_device.sh)"
  exit 1
fi
printf '%s\n' "${summary[@]}"
exit $status

#!/usr/bin/env bash
# Runs every staged GPU test (name ending in _gpu_test) on the GPU machine and prints a
# summary table last. Logs go to $OUT (or ./device-logs).
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-device-logs}"
mkdir -p "$out"
export LD_LIBRARY_PATH="$PWD/.device/bin:${LD_LIBRARY_PATH:-}"
# On the GPU machine a test that finds no GPU (or not the architecture it needs) fails.
export TILETUNE_REQUIRE_GPU=1
cudnn_lib=$(python3 -c 'import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], "lib"))' 2>/dev/null) && export LD_LIBRARY_PATH="$cudnn_lib:$LD_LIBRARY_PATH"
summary=()
status=0
for test in .device/bin/*_gpu_test; do
  [ -x "$test" ] || continue
  name=$(basename "$test")
  if "$test" --gtest_brief=1 > "$out/$name.log" 2>&1; then result=PASS; else result=FAIL; status=1; fi
  tail -n 3 "$out/$name.log"
  summary+=("$(printf '%-40s %s  %s' "$name" "$result" "$(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \]' "$out/$name.log" | tr '\n' ' ')")")
done
echo "== GPU tests"
printf '%s\n' "${summary[@]}"
exit $status

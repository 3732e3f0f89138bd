#!/usr/bin/env bash
# On the GPU machine: compute-sanitizer memcheck and racecheck over a sample of every
# operator form's GPU test cases (staged *_gpu_test binaries), kernels compiled with line
# info (TILETUNE_LINE_INFO=1) so reports name source lines. Prints a table of error and
# hazard counts per operator and tool last; full logs go to $OUT/sanitize/.
#   SANITIZE_TOOLS="memcheck racecheck" SANITIZE_SECONDS=120 bash bench/sanitize_on_device.sh
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-device-logs}/sanitize"
mkdir -p "$out"
export LD_LIBRARY_PATH="$PWD/.device/bin:${LD_LIBRARY_PATH:-}"
export TILETUNE_REQUIRE_GPU=1 TILETUNE_LINE_INFO=1
# A few cases of each form: every path and form of the operator, several dtypes.
declare -A samples=(
  [copy]='Paths/CopyGpuTest.*/tma_f16:Paths/CopyGpuTest.*/tma_1stage_*:Paths/CopyGpuTest.*/cp_async*:Paths/CopyGpuTest.*/simt_*:Paths/CopyGpuTest.*/bulk_*:Paths/CopyGpuTest.*/slice_*:Regions/CopyRegionGpuTest.*/r?_*'
  [im2col]='*/simt_00[0-2]_*:*/tma_00[0-2]_*:*/staged_00[0-2]_*:*/flat_00[0-2]_*:*/staged_phase_00[0-2]_*:*/staged_bulk_00[0-2]_*:*/resnet_3x3_s2_tma'
  [col2im]='*/staged_cp_async_00[0-2]_*:*/direct_cp_async_00[0-2]_*:*/swept_tma_00*:*/swept_cp_async_00[0-2]_*:*/stem_7x7_s2_p3_swept_bands_persistent'
)
rows=()
for op in copy im2col col2im; do
  bin=".device/bin/${op}_gpu_test"
  [ -x "$bin" ] || continue
  for tool in ${SANITIZE_TOOLS:-memcheck racecheck}; do
    log="$out/${op}_${tool}.txt"
    extra=()
    [ "$tool" = racecheck ] && extra=(--racecheck-report all)
    timeout "${SANITIZE_SECONDS:-150}" compute-sanitizer --tool "$tool" "${extra[@]}" \
      --print-limit 20 "$bin" --gtest_brief=1 --gtest_filter="${samples[$op]}" > "$log" 2>&1
    rc=$?
    tests=$(grep -oE '^\[  PASSED  \] [0-9]+' "$log" | grep -oE '[0-9]+$' || echo "?")
    summary=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -n 1 | sed 's/^========= //')
    rows+=("$(printf '%-7s %-10s rc=%-3s tests passed %-4s %s' "$op" "$tool" "$rc" "$tests" "${summary:-no summary (timed out?)}")")
  done
done
echo "== compute-sanitizer"
printf '%s\n' "${rows[@]}"

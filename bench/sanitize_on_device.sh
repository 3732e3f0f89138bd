#!/usr/bin/env bash
# On the GPU machine: compute-sanitizer memcheck and racecheck over a sample of every
# operator form's GPU test cases (staged *_gpu_test binaries), kernels compiled with line
# info (TILETUNE_LINE_INFO=1) so reports name source lines. Prints a table of error and
# hazard counts per operator and tool last; full logs go to $OUT/sanitize/.
#   SANITIZE_TOOLS="memcheck racecheck" SANITIZE_SECONDS=120 bash bench/sanitize_on_device.sh
# SANITIZE_OPS="copy col2im" picks operators ("" runs only the racecheck reproducer).
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-device-logs}/sanitize"
mkdir -p "$out"
source bench/device_env.sh || exit 1
export TILETUNE_LINE_INFO=1
# A few cases of each form: every path and form of the operator, several dtypes. gtest
# filters know only * and ?, so "first three cases" is spelled out by first3.
first3() { local p; for p in "$@"; do printf '*/%s_000_*:*/%s_001_*:*/%s_002_*:' "$p" "$p" "$p"; done; }
declare -A samples=(
  [copy]='Paths/CopyGpuTest.*/tma_f16:Paths/CopyGpuTest.*/tma_1stage_*:Paths/CopyGpuTest.*/cp_async*:Paths/CopyGpuTest.*/simt_*:Paths/CopyGpuTest.*/bulk_*:Paths/CopyGpuTest.*/slice_*:Regions/CopyRegionGpuTest.*/r?_*:Paths/CopyGpuTest.*/span_*:*SpanFormReadsOnlyItsSpan'
  [im2col]="$(first3 simt tma staged flat staged_phase staged_bulk planes planes_span planes_shared simt_window_row)*/resnet_3x3_s2_tma:*SpanGatherReadsOnlyTheImage"
  [col2im]="$(first3 staged_cp_async direct_cp_async swept_cp_async planes_simt planes_staged_simt planes_runs)*/swept_tma_00*:*/stem_7x7_s2_p3_swept_bands_persistent"
)
rows=()
for op in ${SANITIZE_OPS-copy im2col col2im}; do
  bin=".device/bin/${op}_gpu_test"
  [ -x "$bin" ] || continue
  for tool in ${SANITIZE_TOOLS:-memcheck racecheck}; do
    log="$out/${op}_${tool}.txt"
    # Module::GetKernel counts a kernel's parameters by asking cuFuncGetParamInfo for
    # indices until the driver answers CUDA_ERROR_INVALID_VALUE (the driver has no count
    # call); that handled answer is not an error, so API errors are not reported: every
    # other failing call fails its test, which the table shows.
    extra=(--report-api-errors no)
    [ "$tool" = racecheck ] && extra+=(--racecheck-report all)
    timeout "${SANITIZE_SECONDS:-150}" compute-sanitizer --tool "$tool" "${extra[@]}" \
      --print-limit 20 "$bin" --gtest_brief=1 --gtest_filter="${samples[$op]}" > "$log" 2>&1
    rc=$?
    tests=$(grep -oE '^\[  PASSED  \] [0-9]+' "$log" | grep -oE '[0-9]+$' || echo "?")
    ran=$(grep -oE '^\[==========\] [0-9]+ tests? from' "$log" | grep -oE '[0-9]+' | head -n 1)
    [ "${ran:-0}" = 0 ] && tests="NONE (filter matched no test)"
    summary=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -n 1 | sed 's/^========= //')
    rows+=("$(printf '%-7s %-10s rc=%-3s tests passed %-4s %s' "$op" "$tool" "$rc" "$tests" "${summary:-no summary (timed out?)}")")
  done
done
# The minimal reproducer of col2im's TMA-sweep report (bench/racecheck_release.cc): the
# sweep's per-warp release, every thread releasing, and a real race (no __syncwarp), with a
# bulk-copy fill and a plain-store fill.
if [ -x .device/bin/racecheck_release ]; then
  for release in warp thread nosync; do
    for fill in bulk stores; do
      log="$out/racecheck_release_${release}_${fill}.txt"
      timeout 120 compute-sanitizer --tool racecheck --racecheck-report all --print-limit 5 \
        .device/bin/racecheck_release --release=$release --fill=$fill --blocks=2 --rows=8 \
        > "$log" 2>&1
      rc=$?
      exact=$(grep -oE '[0-9]+ of [0-9]+ sums differ' "$log" || echo "no result")
      summary=$(grep -E 'RACECHECK SUMMARY' "$log" | tail -n 1 | sed 's/^========= //')
      rows+=("$(printf 'repro   release=%-6s fill=%-6s rc=%-3s %-26s %s' "$release" "$fill" "$rc" \
        "$exact" "${summary:-no summary (timed out?)}")")
    done
  done
fi
echo "== compute-sanitizer"
printf '%s\n' "${rows[@]}"

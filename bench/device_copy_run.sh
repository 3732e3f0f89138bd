#!/usr/bin/env bash
# On the GPU machine: GPU tests, compute-sanitizer memcheck over one case per copy path,
# then the copy benchmark. Logs under $OUT; a short table last.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-device-logs}"
mkdir -p "$out"
export LD_LIBRARY_PATH="$PWD/.device/bin:${LD_LIBRARY_PATH:-}"
bash bench/run_on_device.sh > "$out/gpu_tests.txt" 2>&1
tests_rc=$?
filter='*/tma_f16:*/tma_1stage_u8:*/bulk_f16:*/cp_async_f16:*/cp_async_1stage_i8:*/simt_shared_f16:*/simt_direct_u8:*/slice_*:*/rank4_*:*/rank3_tma:*evict_first'
compute-sanitizer --tool memcheck --report-api-errors no --print-limit 20 \
  .device/bin/copy_gpu_test --gtest_filter="$filter" > "$out/memcheck.txt" 2>&1
memcheck_rc=$?
.device/bin/copy_benchmark --benchmark_counters_tabular=true \
  --benchmark_out="$out/copy_benchmark.json" --benchmark_out_format=json > "$out/copy_benchmark.txt" 2>&1
bench_rc=$?
echo "== memcheck (rc $memcheck_rc)"; grep -E "ERROR SUMMARY|PASSED|FAILED" "$out/memcheck.txt" | tail -4
echo "== copy benchmark (rc $bench_rc)"; grep -E "copy_f16|Benchmark" "$out/copy_benchmark.txt" | awk '{print $1, $2, $(NF-3), $(NF-2), $(NF-1), $NF}' | column -t
echo "== GPU tests (rc $tests_rc)"; tail -n 4 "$out/gpu_tests.txt"

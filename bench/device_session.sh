#!/usr/bin/env bash
# On the GPU machine: every staged GPU test, compute-sanitizer on selected cases (set
# SANITIZE / SANITIZE_IM2COL / SANITIZE_COL2IM to a gtest filter of copy_gpu_test /
# im2col_gpu_test / col2im_gpu_test), the copy, im2col, col2im (with F.fold) and dispatch
# benchmarks when staged, and the autotuner's default suite cold (empty compile cache) then
# warm. Logs go to a scratch folder and come back as one archive, $OUT/logs.tar.gz (the
# device tool returns at most 8 files), plus the databases; a summary last.
# PARTS picks what runs (default: tests bench autotune):
#   region      the region benchmark's problems tuned, then benchmarked with that database
#               and, with REGION_HEURISTIC=1, without;
#   python      the wheel staged in .device/wheel by `bash kernels/python/build_wheel.sh
#               .device/wheel`, installed without network, and its PyTorch GPU tests;
#   torchbench  bench/torch_benchmark.py from that wheel (TORCHBENCH_ARGS=--quick: f16 only);
#   model       the default suite tuned cold as the corpus, `autotune fit` to it, the suite
#               tuned cold again with --cost_model and MODEL_TOP_K, and `autotune diff`;
#   corpus      each suite of CORPUS_SUITES (default the four held-out ones) evaluated with its
#               per-problem tuning measuring every candidate and the library's choices
#               (`autotune evaluate --cost_model=none --library_alternatives=9`: the table
#               SUITE_builtin.md, and the tuning as the corpus SUITE.corpus.txtpb), then
#               `autotune replay` of the corpus: the library's selections timed by what was
#               measured. All in $OUT/corpora.tar.gz, to be replayed again on the CPU;
#               CORPUS_FROM names a folder of earlier SUITE.corpus.txtpb to resume;
#               CORPUS_SECONDS (default 480) bounds them all. CORPUS_EVALUATE=0 only tunes
#               (no evaluate table): the replay needs no more. The suite name "default"
#               tunes the built-in default suite.
# BENCH names the benchmarks. One device call is capped at 10 minutes, and all the GPU tests
# together take longer than that on an H100 (im2col_gpu_test alone about 4 minutes):
# GPU_TESTS (run_on_device.sh) splits them, e.g. PARTS=tests GPU_TESTS=im2col_gpu_test
# first, then the others, then PARTS="bench autotune"; TESTS_SECONDS (default 400) bounds
# the tests of one call.
set -uo pipefail
cd "$(dirname "$0")/.."
parts="${PARTS:-tests bench autotune}"
want() { [[ " $parts " == *" $1 "* ]]; }
final="${OUT:-device-logs}"
out=/tmp/tt-logs
rm -rf "$out" && mkdir -p "$out" "$final"
trap 'tar -C /tmp --exclude=tt-logs/corpora -czf "$final/logs.tar.gz" tt-logs; cp "$out"/*.txtpb "$out"/*.md "$out"/*.svg "$final"/ 2>/dev/null; [ -d "$out/corpora" ] && tar -C "$out" -czf "$final/corpora.tar.gz" corpora' EXIT
source bench/device_env.sh || exit 1
now() { date +%s%N; }
secs() { echo $(( ($(now) - $1) / 1000000 ))ms; }
tests_rc=skipped
want tests && { OUT="$out" timeout "${TESTS_SECONDS:-400}" bash bench/run_on_device.sh > "$out/gpu_tests.txt" 2>&1; tests_rc=$?; }
if want tests && [ -n "${SANITIZE:-}" ]; then
  timeout 100 compute-sanitizer --tool memcheck --report-api-errors no --print-limit 10 \
    .device/bin/copy_gpu_test --gtest_brief=1 --gtest_filter="$SANITIZE" > "$out/sanitize.txt" 2>&1
fi
if want tests && [ -n "${SANITIZE_IM2COL:-}" ]; then
  timeout 100 compute-sanitizer --tool memcheck --report-api-errors no --print-limit 10 \
    .device/bin/im2col_gpu_test --gtest_brief=1 --gtest_filter="$SANITIZE_IM2COL" > "$out/sanitize_im2col.txt" 2>&1
fi
if want tests && [ -n "${SANITIZE_COL2IM:-}" ]; then
  timeout 100 compute-sanitizer --tool memcheck --report-api-errors no --print-limit 10 \
    .device/bin/col2im_gpu_test --gtest_brief=1 --gtest_filter="$SANITIZE_COL2IM" > "$out/sanitize_col2im.txt" 2>&1
fi
if [ -f .device/bin/bad.ptx ]; then
  ptxas -arch=sm_90a .device/bin/bad.ptx -o /tmp/bad.cubin > "$out/sass.txt" 2>&1 && \
    cuobjdump -sass /tmp/bad.cubin >> "$out/sass.txt" 2>&1
fi
if want bench; then
  for b in ${BENCH:-copy_benchmark dispatch_benchmark im2col_benchmark col2im_benchmark}; do
    [ -x .device/bin/$b ] && timeout "${BENCH_SECONDS:-240}" stdbuf -oL .device/bin/$b --benchmark_counters_tabular=true \
      --benchmark_out="$out/$b.json" --benchmark_out_format=json ${BENCH_ARGS:-} > "$out/$b.txt" 2>&1
  done
  # PyTorch F.fold in the same call, joined with the col2im results.
  [ -f "$out/col2im_benchmark.json" ] && timeout 120 python3 bench/fold_baseline.py \
    --join "$out/col2im_benchmark.json" > "$out/fold_join.txt" 2>&1
fi
# region: the region benchmark's problems tuned, then benchmarked through the Library with
# that database (tuned) and without one (nearest record or heuristic).
if want region && [ -x .device/bin/region_benchmark ]; then
  problems=$(.device/bin/region_benchmark --problems)
  t=$(now)
  timeout "${REGION_TUNE_SECONDS:-300}" .device/bin/autotune --problems="$problems" \
    --output="$out/region_tuned.txtpb" --report=false > "$out/region_tune.txt" 2> "$out/region_tune.err"
  echo "rc $? in $(secs $t)" >> "$out/region_tune.txt"
  TILETUNE_DB="$out/region_tuned.txtpb" timeout "${BENCH_SECONDS:-240}" stdbuf -oL .device/bin/region_benchmark \
    --benchmark_counters_tabular=true --benchmark_out="$out/region_tuned.json" \
    --benchmark_out_format=json ${BENCH_ARGS:-} > "$out/region_tuned.txt" 2>&1
  [ -n "${REGION_HEURISTIC:-}" ] && timeout "${BENCH_SECONDS:-240}" stdbuf -oL .device/bin/region_benchmark \
    --benchmark_counters_tabular=true ${BENCH_ARGS:-} > "$out/region_heuristic.txt" 2>&1
fi
python_rc=skipped torchbench_rc=skipped
if want python || want torchbench; then
  rm -rf /tmp/tt-site
  python3 -m pip install --quiet --no-deps --no-index --target /tmp/tt-site .device/wheel/tiletune-*.whl \
    > "$out/python_install.txt" 2>&1
  here=$PWD
fi
if want python; then
  (cd /tmp && PYTHONPATH=/tmp/tt-site timeout "${PYTHON_SECONDS:-240}" python3 -m pytest -q \
    -p no:cacheprovider "$here/kernels/python/tests/gpu" > "$out/python_gpu.txt" 2>&1)
  python_rc=$?
fi
if want torchbench; then
  (cd /tmp && PYTHONPATH=/tmp/tt-site timeout "${TORCHBENCH_SECONDS:-300}" python3 \
    "$here/bench/torch_benchmark.py" ${TORCHBENCH_ARGS:-} --json "$out/torch_benchmark.json" \
    > "$out/torch_benchmark.txt" 2>&1)
  torchbench_rc=$?
fi
cold_rc=skipped warm_rc=skipped cold=- warm=-
if want autotune; then
  export TILETUNE_CACHE_DIR=/tmp/tiletune-cold-cache
  rm -rf "$TILETUNE_CACHE_DIR"
  t=$(now)
  timeout 280 .device/bin/autotune --output="$out/h200_cold.txtpb" > "$out/autotune_cold.txt" 2> "$out/autotune_cold.err"; cold_rc=$?
  cold=$(secs $t)
  t=$(now)
  timeout 200 .device/bin/autotune --output=/tmp/h200_warm.txtpb --report=false > "$out/autotune_warm.txt" 2> "$out/autotune_warm.err"; warm_rc=$?
  warm=$(secs $t)
fi
model_rc=skipped
if want model; then
  # The corpus: the default suite tuned from an empty compile cache, every candidate measured
  # (no cost model prunes it).
  export TILETUNE_CACHE_DIR=/tmp/tiletune-model-cache
  rm -rf "$TILETUNE_CACHE_DIR"
  t=$(now)
  timeout 200 .device/bin/autotune --output="$out/model_corpus.txtpb" --report=false --cost_model=none \
    > "$out/model_full.txt" 2> "$out/model_full.err"
  full=$(secs $t)
  .device/bin/autotune fit "$out/model_corpus.txtpb" ${MODEL_CORPUS:-} -o "$out/h200.model.txtpb" \
    > "$out/model_fit.txt" 2>&1
  rm -rf "$TILETUNE_CACHE_DIR"
  t=$(now)
  timeout 200 .device/bin/autotune --output="$out/model_pruned.txtpb" --report=false \
    --cost_model="$out/h200.model.txtpb" --model_top_k="${MODEL_TOP_K:-40}" \
    > "$out/model_pruned.txt" 2> "$out/model_pruned.err"; model_rc=$?
  pruned=$(secs $t)
  .device/bin/autotune diff "$out/model_corpus.txtpb" "$out/model_pruned.txtpb" > "$out/model_diff.txt" 2>&1
fi
if want corpus; then
  export TILETUNE_CACHE_DIR=/tmp/tiletune-corpus-cache
  # The library's choices come from the shipped databases alone, as a user's would.
  export TILETUNE_DB_DIR=/tmp/tiletune-no-user-records
  mkdir -p "$TILETUNE_DB_DIR"
  corpora="$out/corpora"
  mkdir -p "$corpora"
  # One deadline for all the suites (a call is capped at 10 minutes); a suite cut short
  # resumes from CORPUS_FROM in the next call.
  deadline=$(( $(date +%s) + ${CORPUS_SECONDS:-480} ))
  for suite in ${CORPUS_SUITES:-heldout_fresh heldout_col2im heldout_torch_layers heldout}; do
    [ -f "${CORPUS_FROM:-/nonexistent}/$suite.corpus.txtpb" ] && cp "$CORPUS_FROM/$suite.corpus.txtpb" "$corpora/" \
      && chmod u+w "$corpora/$suite.corpus.txtpb"
    left=$(( deadline - $(date +%s) ))
    [ "$left" -gt 10 ] || { echo "rc skipped: no time left" > "$out/${suite}_corpus.txt"; continue; }
    t=$(now)
    # "default": the built-in default suite, which has no suite file (tuned, not evaluated).
    problems=(--suite="autotune/suites/$suite.txt")
    [ "$suite" = default ] && problems=()
    if [ "${CORPUS_EVALUATE:-1}" = 1 ] && [ "$suite" != default ]; then
      timeout "$left" .device/bin/autotune evaluate "${problems[@]}" \
        --cost_model=none --library_alternatives=9 --tuned="$corpora/$suite.corpus.txtpb" \
        --output="$corpora/${suite}_builtin" --rounds=10 \
        > "$out/${suite}_corpus.txt" 2> "$out/${suite}_corpus.err"
    else
      timeout "$left" .device/bin/autotune "${problems[@]}" --report=false \
        --cost_model=none --library_alternatives=9 --output="$corpora/$suite.corpus.txtpb" \
        > "$out/${suite}_corpus.txt" 2> "$out/${suite}_corpus.err"
    fi
    echo "rc $? in $(secs $t)" >> "$out/${suite}_corpus.txt"
    .device/bin/autotune replay "$corpora/$suite.corpus.txtpb" -o "$corpora/${suite}_replay" \
      > /dev/null 2> "$out/${suite}_replay.err"
  done
fi
echo "== GPU tests (rc $tests_rc)"; [ -f "$out/gpu_tests.txt" ] && grep -E "PASS|FAIL" "$out/gpu_tests.txt" | tail -n 6
want python && { echo "== Python GPU tests (rc $python_rc)"; tail -n 8 "$out/python_gpu.txt"; }
want torchbench && { echo "== torch_benchmark (rc $torchbench_rc)"; cat "$out/torch_benchmark.txt"; }
for f in sanitize sanitize_im2col sanitize_col2im; do
  [ -f "$out/$f.txt" ] && { echo "== $f"; grep -E "ERROR SUMMARY|Illegal|PASSED|FAILED|at 0x" "$out/$f.txt" | head -12; }
done
[ -f "$out/copy_benchmark.txt" ] && { echo "== copy"; grep -E "^copy_f16" "$out/copy_benchmark.txt" | awk '{print $1, $(NF-3), $(NF-2), $(NF-1), $NF}' | sort -k4 -g | tail -12; }
[ -f "$out/dispatch_benchmark.txt" ] && { echo "== dispatch"; grep -E "^BM_" "$out/dispatch_benchmark.txt"; }
[ -f "$out/im2col_benchmark.txt" ] && { echo "== im2col"; grep -E "^im2col|^BM" "$out/im2col_benchmark.txt" | awk '{print $1, $(NF-5), $(NF-4), $(NF-3), $(NF-2), $(NF-1), $NF}' | head -40; }
[ -f "$out/col2im_benchmark.txt" ] && { echo "== col2im"; grep -E "^col2im" "$out/col2im_benchmark.txt" | awk '{print $1, $(NF-4), $(NF-3), $(NF-2), $NF}' | head -48; }
[ -f "$out/fold_join.txt" ] && { echo "== col2im vs F.fold"; cat "$out/fold_join.txt"; }
if want region; then
  echo "== region tuning"; tail -n 20 "$out/region_tune.txt"
  for f in region_tuned region_heuristic; do
    [ -f "$out/$f.txt" ] && { echo "== $f (name, time, GB/s, base GB/s, vs_base, [ceiling GB/s, vs_ceiling], label)"; grep -E "^region/" "$out/$f.txt"; }
  done
fi
if want autotune; then
  echo "== autotune cold (rc $cold_rc, $cold)"; cat "$out/autotune_cold.txt"; grep -E "faulted|failed" "$out/autotune_cold.err" | head -5
  echo "== autotune warm (rc $warm_rc, $warm)"; cat "$out/autotune_warm.txt"
fi
if want corpus; then
  for suite in ${CORPUS_SUITES:-heldout_fresh heldout_col2im heldout_torch_layers heldout}; do
    echo "== corpus $suite: $(tail -n 1 "$out/${suite}_corpus.txt")"
    grep -m1 'problem(s) measured' "$out/corpora/${suite}_builtin.md" 2>/dev/null
    sed -n '/^| selection/,/^$/p' "$out/corpora/${suite}_replay.md" 2>/dev/null || tail -n 3 "$out/${suite}_replay.err" 2>/dev/null
  done
fi
if want model; then
  echo "== cost model: fitted to the default suite tuned cold in $full"; cat "$out/model_fit.txt"
  echo "== the suite tuned cold again with it (rc $model_rc, $pruned)"; cat "$out/model_pruned.txt"
  grep -oE 'regret [0-9.]+%(, [0-9]+ skipped by the cost model)?' "$out/model_pruned.err" | head -20
  echo "== winners, full tuning -> with the model"; cat "$out/model_diff.txt"
fi

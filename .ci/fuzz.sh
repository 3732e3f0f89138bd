#!/usr/bin/env bash
# CI: libFuzzer (Debian's clang 14) with AddressSanitizer and UndefinedBehaviorSanitizer on
# the readers and parsers that take user input, each for a bounded time, from the corpora
# checked in beside them (deep nesting, huge repeated fields, bit flips, overflowing sizes,
# long values). A crash, a leak, undefined behaviour (signed overflow, a bad shift, ...) or
# a trap in a target's checks fails the run and leaves the input under $FUZZ_OUT.
#
#   FUZZ_SECONDS=60 bash .ci/fuzz.sh
#
# The clang build lives in its own output base, so it shares nothing with the gcc build of
# `bazel test //...`.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${FUZZ_SECONDS:-60}"
out="${FUZZ_OUT:-/tmp/tiletune-fuzz}"
base=/tmp/tiletune-clang
targets=(
  "//compiler/tuning_db:tuning_db_fuzz compiler/tuning_db/fuzz_corpus"
  "//compiler/ops:spec_fuzz compiler/ops/fuzz_corpus"
  "//compiler:compiler_cli_fuzz compiler/fuzz_corpus"
)
labels=()
for t in "${targets[@]}"; do labels+=("${t%% *}"); done
start=$(date +%s)
# Every library the targets link is instrumented too, so UBSan sees the parsers' callees.
bazel --output_base="$base" build --repo_env=CC=clang --symlink_prefix=/ \
  --copt=-fsanitize=fuzzer-no-link,address,undefined --copt=-fno-sanitize-recover=all \
  --linkopt=-fsanitize=address,undefined --linkopt=-fsanitize-link-c++-runtime "${labels[@]}"
echo "fuzz: clang build in $(( $(date +%s) - start )) s"
bin="$base/execroot/tiletune/bazel-out/k8-fastbuild/bin"
rm -rf "$out" && mkdir -p "$out"
status=0
for t in "${targets[@]}"; do
  label="${t%% *}" corpus="${t##* }"
  path="${label#//}" && path="${path/://}"
  name="${path##*/}"
  mkdir -p "$out/$name/corpus"
  t0=$(date +%s)
  if UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 "$bin/$path" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$out/$name/" "$out/$name/corpus" "$corpus" > "$out/$name/log.txt" 2>&1; then
    result=ok
  else
    result=FAILED
    status=1
    tail -n 40 "$out/$name/log.txt"
  fi
  runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$out/$name/log.txt" | grep -oE '[0-9]+$' || echo "?")
  echo "fuzz: $name $result: $runs inputs in $(( $(date +%s) - t0 )) s"
done
echo "fuzz: done in $(( $(date +%s) - start )) s"
exit $status

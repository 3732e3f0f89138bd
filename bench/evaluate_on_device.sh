#!/usr/bin/env bash
# On the GPU machine (binaries staged by bench/stage_for_device.sh //autotune): tunes the
# held-out suite problem by problem, then `autotune evaluate`s the library's built-in
# database on it, without and with tuning on a miss, each with an empty compile cache so
# first calls pay NVRTC as a user's would. Logs, tables and databases go to $OUT; the
# two summaries print last. SUITE, TUNE_ON_MISS_MS (default 100) and ROUNDS override;
# TUNED names an earlier per-problem tuning of the suite to resume from (its problems are
# then not tuned again).
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-device-logs}"
mkdir -p "$out"
suite="${SUITE:-autotune/suites/heldout.txt}"
name=$(basename "$suite" .txt)
source bench/device_env.sh || exit 1
bin=.device/bin
[ -n "${TUNED:-}" ] && cp "$TUNED" "$out/$name.tuned.txtpb" && chmod u+w "$out/$name.tuned.txtpb"
"$bin/autotune" --suite="$suite" --output="$out/$name.tuned.txtpb" --report=false \
  > "$out/$name.tune.out" 2> "$out/$name.tune.log"
echo "per-problem tuning: exit $?"
status=0
for mode in builtin miss; do
  flags=()
  [ "$mode" = miss ] && flags=(--tune_on_miss="${TUNE_ON_MISS_MS:-100}")
  cache=$(mktemp -d)
  TILETUNE_CACHE_DIR="$cache" "$bin/autotune" evaluate --suite="$suite" \
    --tuned="$out/$name.tuned.txtpb" --output="$out/${name}_$mode" --rounds="${ROUNDS:-15}" \
    "${flags[@]}" > "$out/${name}_$mode.out" 2> "$out/${name}_$mode.log" || status=1
  rm -rf "$cache"
done
for mode in builtin miss; do
  echo "== $name, $mode"
  grep -m1 'problem(s) measured' "$out/${name}_$mode.md" 2>/dev/null || tail -3 "$out/${name}_$mode.log"
done
exit $status

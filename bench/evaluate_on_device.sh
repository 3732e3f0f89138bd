#!/usr/bin/env bash
# On the GPU machine (binaries staged by bench/stage_for_device.sh //autotune): tunes the
# held-out suite problem by problem, then `autotune evaluate`s the library's built-in
# database on it, without and with tuning on a miss, each with an empty compile cache so
# first calls pay NVRTC as a user's would. Logs, tables and databases go to $OUT; the
# two summaries print last. SUITE, TUNE_ON_MISS_MS (default 100) and ROUNDS override;
# TUNED names an earlier per-problem tuning of the suite to resume from (its problems are
# then not tuned again).
# BASELINE=<another autotune binary> (an A/B of a selection change): in place of the two
# modes, the built-in database through that binary and through this one, RUNS times
# (default 2) in alternating order, each from an empty compile cache, against the same
# per-problem tuning; a table of each problem's ratios under both prints last.
# BASELINE_ENV / THIS_ENV: VAR=value words set for that side's runs alone (an A/B of a
# database, e.g. THIS_ENV="TILETUNE_BUILTIN_DB=0 TILETUNE_DB=new.txtpb"); with either and no
# BASELINE, both sides run this binary. The per-problem tuning runs in the caller's
# environment.
# PACK=1 leaves this suite's outputs as one archive, $OUT/<suite>.evaluate.tar.gz (the
# device tool brings back at most 8 files; two suites' tables and logs are more).
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-device-logs}"
mkdir -p "$out"
suite="${SUITE:-autotune/suites/heldout.txt}"
name=$(basename "$suite" .txt)
source bench/device_env.sh || exit 1
# This suite's outputs (its name, then . or _), lock files included, into one archive.
pack() {
  [ "${PACK:-0}" = 1 ] || return 0
  local files
  mapfile -t files < <(cd "$out" && ls -A | grep -E "^\.?$name[._]" |
                       grep -vx "$name.evaluate.tar.gz")
  [ ${#files[@]} -eq 0 ] || tar -C "$out" -czf "$out/$name.evaluate.tar.gz" --remove-files "${files[@]}"
}
bin=.device/bin
[ -n "${TUNED:-}" ] && cp "$TUNED" "$out/$name.tuned.txtpb" && chmod u+w "$out/$name.tuned.txtpb"
"$bin/autotune" --suite="$suite" --output="$out/$name.tuned.txtpb" --report=false \
  > "$out/$name.tune.out" 2> "$out/$name.tune.log"
echo "per-problem tuning: exit $?"
status=0
[ -z "${BASELINE:-}" ] && [ -n "${BASELINE_ENV:-}${THIS_ENV:-}" ] && BASELINE="$bin/autotune"
if [ -n "${BASELINE:-}" ]; then
  runs=()
  for run in $(seq "${RUNS:-2}"); do
    order="baseline this"; [ $((run % 2)) -eq 0 ] && order="this baseline"
    for side in $order; do
      binary="$bin/autotune" side_env="${THIS_ENV:-}"
      [ "$side" = baseline ] && binary="$BASELINE" side_env="${BASELINE_ENV:-}"
      cache=$(mktemp -d)
      # shellcheck disable=SC2086  # side_env is a list of VAR=value words
      env $side_env TILETUNE_CACHE_DIR="$cache" "$binary" evaluate --suite="$suite" \
        --tuned="$out/$name.tuned.txtpb" --output="$out/${name}_${side}_$run" \
        --rounds="${ROUNDS:-15}" > "$out/${name}_${side}_$run.out" \
        2> "$out/${name}_${side}_$run.log" || status=1
      rm -rf "$cache"
      runs+=("$out/${name}_${side}_$run.csv")
    done
  done
  python3 - "${runs[@]}" <<'PY'
import csv, math, sys
ratios = {}  # problem -> side -> [ratio per run]
for path in sys.argv[1:]:
    side = "baseline" if "_baseline_" in path else "this"
    try:
        rows = list(csv.DictReader(open(path)))
    except OSError:
        print(f"{path}: missing (see its .log)")
        continue
    for row in rows:
        if row["ratio"]:
            ratios.setdefault(row["problem"], {}).setdefault(side, []).append(float(row["ratio"]))
print("| problem | baseline | this |\n| --- | ---: | ---: |")
logs = {"baseline": [], "this": []}
for problem, sides in ratios.items():
    cells = []
    for side in ("baseline", "this"):
        values = sides.get(side, [])
        cells.append(" / ".join(f"{v:.3f}" for v in values) or "-")
        logs[side] += [math.log(v) for v in values]
    print(f"| {problem} | {cells[0]} | {cells[1]} |")
for side, values in logs.items():
    if values:
        print(f"{side}: geomean over every run {math.exp(sum(values) / len(values)):.3f}")
PY
  pack
  exit $status
fi
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
  grep -E -m2 'problem\(s\) measured|^Lowest ratio' "$out/${name}_$mode.md" 2>/dev/null || tail -3 "$out/${name}_$mode.log"
done
pack
exit $status

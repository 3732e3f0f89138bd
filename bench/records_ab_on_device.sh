#!/usr/bin/env bash
# On the GPU machine (autotune staged by bench/stage_for_device.sh //autotune): whether new
# records belong in the shipped database. Tunes SUITE (the candidate problems), stacks the
# winners on the shipped database, lists the held-out problems whose launch they move
# (bench/launch_diff.sh, on the CPU) and A/Bs those with bench/evaluate_on_device.sh: the
# shipped database alone against it with the records, against one per-problem tuning.
#   SUITE=autotune/suites/h200_nchw_coverage.txt OUT=... bash bench/records_ab_on_device.sh
# RECORDS=<a database of them tuned before> skips the tuning (the second of two device
# calls where both halves do not fit in one); STOP_AFTER_DIFF=1 stops before the A/B.
# HELDOUT (default autotune/suites/heldout*.txt) names the suites searched for moved
# launches; FRESH=<a suite> is evaluated whole as well, both sides, for its geomean.
# RUNS (default 1) and ROUNDS (default 10) go to evaluate_on_device.sh; TUNE_FLAGS to
# autotune. Writes $OUT/records.txtpb (the winners alone, as a shipped database keeps
# them: merge it into kernels/tuned/h200.txtpb), $OUT/with_records.txtpb (the shipped
# database and the records), $OUT/diff.txt and the A/B tables; the tables print last.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-device-logs}"
mkdir -p "$out"
source bench/device_env.sh || exit 1
bin=.device/bin/autotune
fail() { echo "records_ab_on_device.sh: $*" >&2; exit 1; }
if [ -n "${RECORDS:-}" ]; then
  [ -f "$RECORDS" ] || fail "RECORDS=$RECORDS: no such file"
  cp "$RECORDS" "$out/records.txtpb" || exit 1
else
  [ -n "${SUITE:-}" ] || fail "set SUITE (the candidate problems) or RECORDS (tuned before)"
  # shellcheck disable=SC2086  # TUNE_FLAGS is a list of flags
  "$bin" --suite="$SUITE" --output="$out/tuned.txtpb" --report=false ${TUNE_FLAGS:-} \
    > "$out/tune.out" 2> "$out/tune.log" || fail "tuning $SUITE failed (see $out/tune.log)"
  "$bin" merge "$out/tuned.txtpb" -o "$out/records.txtpb" --winners_only > "$out/merge.log" 2>&1 ||
    fail "merge failed (see $out/merge.log)"
fi
"$bin" merge kernels/tuned/h200.txtpb "$out/records.txtpb" -o "$out/with_records.txtpb" \
  --winners_only >> "$out/merge.log" 2>&1 || fail "merge failed (see $out/merge.log)"
# shellcheck disable=SC2086  # HELDOUT is a list of files
OLD_DB= NEW_DB="$out/records.txtpb" bash bench/launch_diff.sh "$bin" "$bin" \
  ${HELDOUT:-autotune/suites/heldout*.txt} > "$out/diff.txt" 2>&1 || fail "launch_diff.sh failed (see $out/diff.txt)"
grep -- '--problems=' "$out/diff.txt" | sed "s/^--problems='//; s/'\$//" | tr ';' '\n' \
  > "$out/moved.txt"
echo "$(grep -c . "$out/moved.txt") held-out problem(s) launch differently with the records ($out/diff.txt)"
[ "${STOP_AFTER_DIFF:-0}" = 1 ] && exit 0
sides="TILETUNE_BUILTIN_DB=0 TILETUNE_DB=$(realpath "$out/with_records.txtpb")"
status=0
for suite in "$out/moved.txt" ${FRESH:-}; do
  [ -s "$suite" ] || continue
  name=$(basename "$suite" .txt)
  echo "== $name: baseline = the shipped database, this = with the records"
  SUITE="$suite" OUT="$out/$name" RUNS="${RUNS:-1}" ROUNDS="${ROUNDS:-10}" THIS_ENV="$sides" \
    bash bench/evaluate_on_device.sh > "$out/$name.ab.txt" 2>&1 || status=1
  sed -n '/^| problem | baseline | this |/,$p' "$out/$name.ab.txt"
done
exit $status

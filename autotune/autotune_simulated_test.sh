#!/usr/bin/env bash
# The supervisor and its worker processes, end to end on the simulated device (no GPU):
# variants that fault the device are isolated in worker processes and recorded, variants
# that hang are killed after --hang_seconds and recorded, wrong outputs never win, a run
# resumes what an earlier one left, and shards merged give the single run's winners.
set -euo pipefail

bin="autotune/autotune"
tmp="$TEST_TMPDIR"
fail() { echo "FAIL: $*" >&2; exit 1; }
sim="seed=1,fault=0.03,wrong=0.05,hang=0.02"
two="copy:f16:512,512;im2col:f16:2,16,16,8:k=3:p=1"

# The winner's source hash of every record, sorted.
winners() {
  awk '/^  winner \{/ {w = 1} w && /^    source_sha256:/ {print $2} /^  winner_statistics \{/ {w = 0}' "$1" | sort
}

# 1. One run: faults, hangs and wrong outputs all happen and are recorded.
"$bin" --simulate="$sim" --hang_seconds=1 --problems="$two" --output="$tmp/db.txtpb" \
  >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; fail "the simulated run exited $?"; }
[[ "$(grep -c '^records {' "$tmp/db.txtpb")" == 2 ]] || fail "expected 2 records"
grep -q 'status: LAUNCH_FAULT' "$tmp/db.txtpb" || fail "no fault recorded"
grep -q 'simulated fault: CUDA_ERROR_ILLEGAL_ADDRESS' "$tmp/db.txtpb" || fail "no fault detail"
grep -q 'killed as a hang' "$tmp/db.txtpb" || fail "no hang recorded"
grep -q 'status: FAILED_VERIFICATION' "$tmp/db.txtpb" || fail "no wrong output recorded"
grep -q 'retrying without it' "$tmp/err" || fail "no worker was restarted"
grep -q 'hung for 1 s; killed' "$tmp/err" || fail "the supervisor did not kill a hang"
grep -q 'autotune: 2 problem(s)' "$tmp/out" || fail "no summary"
# Progress per finished problem on stderr, as it happens.
grep -q 'autotune: done 1 of 2: ' "$tmp/err" || fail "no progress line for the first problem"
grep -q 'autotune: done 2 of 2: ' "$tmp/err" || fail "no progress line for the second problem"
[[ -f "$tmp/db.report.md" && -f "$tmp/db.report.svg" ]] || fail "no report"
grep -q "(schema version 3)" "$tmp/db.report.md" || fail "the report names no schema version"
leftovers=$(ls -A "$tmp" | grep -E 'worker|tmp-' || true)
[[ -z "$leftovers" ]] || fail "worker files left behind: $leftovers"
# No faulted, hung or wrong variant won.
for sha in $(winners "$tmp/db.txtpb"); do
  if grep -B30 "source_sha256: $sha" "$tmp/db.txtpb" | grep -q 'status: \(LAUNCH_FAULT\|FAILED_VERIFICATION\)'; then
    # The sha may appear as a candidate of the other record; only fail if it failed there too.
    grep -A3 "source_sha256: $sha" "$tmp/db.txtpb" | grep -q 'status: \(LAUNCH_FAULT\|FAILED_VERIFICATION\)' \
      && fail "winner $sha failed"
  fi
done
single=$(winners "$tmp/db.txtpb")

# 2. Resume: the tuned problems are skipped, the new one is added.
"$bin" --simulate="$sim" --hang_seconds=1 --problems="$two;copy:bf16:100,300" \
  --output="$tmp/db.txtpb" >"$tmp/out2" 2>"$tmp/err2" || { cat "$tmp/err2"; fail "resume exited $?"; }
[[ "$(grep -c 'already tuned on Simulated GPU; skipped' "$tmp/err2")" == 2 ]] || fail "not skipped"
grep -q 'resuming .*db.txtpb (2 records)' "$tmp/err2" || fail "no resume line"
[[ "$(grep -c '^records {' "$tmp/db.txtpb")" == 3 ]] || fail "expected 3 records after resume"

# 3. Shards, then merge: the same winners as the single run.
for i in 0 1; do
  "$bin" --simulate="$sim" --hang_seconds=1 --problems="$two" --shard="$i/2" --report=false \
    --output="$tmp/shard$i.pb" >/dev/null 2>"$tmp/shard$i.err" \
    || { cat "$tmp/shard$i.err"; fail "shard $i exited $?"; }
done
"$bin" merge "$tmp/shard0.pb" "$tmp/shard1.pb" -o "$tmp/merged.txtpb" >/dev/null \
  || fail "merging the shards"
[[ "$(winners "$tmp/merged.txtpb")" == "$single" ]] || fail "shards gave other winners"

# 4. A bad simulation spec is a usage error.
set +e
"$bin" --simulate="fault=7" --output="$tmp/x.txtpb" 2>"$tmp/bad"
code=$?
set -e
[[ $code == 2 ]] || fail "bad --simulate exited $code"
grep -q -- "--simulate: 'fault=7'" "$tmp/bad" || fail "bad --simulate message"
echo PASS

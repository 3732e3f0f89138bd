#!/usr/bin/env bash
# What is at an output path is never lost (issue 34), on the simulated device:
# - concurrent tuning runs into one output keep every record (a run lock serializes them,
#   each record is merged in under the write lock, workers' files are private per run);
# - a device node or pipe at an output is written through, never replaced: /dev/null
#   discards, /dev/full fails with exit 1; a folder or socket is refused before tuning;
# - workers die with a kill -9'd supervisor;
# - a kill -9 between a database's rename and its report's leaves a report that the next
#   reader flags as describing another version of the database.
set -euo pipefail

bin="autotune/autotune"
bake="kernels/bake"
tmp="$TEST_TMPDIR"
export TMPDIR="$tmp"
fail() { echo "FAIL: $*" >&2; exit 1; }
records() { grep -c '^records {' "$1" || true; }

# 1. Twenty runs at once into one output, each its own problem: twenty records.
pids=()
for i in $(seq 1 20); do
  "$bin" --simulate=seed=$i --problems="copy:u8:$((64 * i))" --report=false \
    --output="$tmp/shared.txtpb" >"$tmp/run$i.out" 2>"$tmp/run$i.err" &
  pids+=($!)
done
for i in $(seq 1 20); do
  wait "${pids[$((i - 1))]}" || { cat "$tmp/run$i.err"; fail "run $i exited $?"; }
done
[[ "$(records "$tmp/shared.txtpb")" == 20 ]] || fail "20 runs left $(records "$tmp/shared.txtpb") records"
grep -l "another tuning run writes" "$tmp"/run*.err >/dev/null || fail "no run waited for another"
for i in $(seq 1 20); do grep -qx "      shape: $((64 * i))" "$tmp/shared.txtpb" || fail "copy:u8:$((64 * i)) lost"; done
[[ -z "$(ls -A "$tmp" | grep -E '^tiletune-autotune-|worker|tmp-' || true)" ]] || fail "worker files left"

# 2. Two copies of one six-problem run: six records, the second run resumes the first's.
six="copy:f16:64,64;copy:f16:128,64;copy:bf16:96,32;copy:u8:4096;copy:f32:33,65;copy:i8:1000"
"$bin" --simulate=seed=7 --problems="$six" --output="$tmp/six.txtpb" >/dev/null 2>"$tmp/six1.err" &
first=$!
"$bin" --simulate=seed=7 --problems="$six" --output="$tmp/six.txtpb" >/dev/null 2>"$tmp/six2.err" &
second=$!
wait $first || { cat "$tmp/six1.err"; fail "first six-problem run failed"; }
wait $second || { cat "$tmp/six2.err"; fail "second six-problem run failed"; }
[[ "$(records "$tmp/six.txtpb")" == 6 ]] || fail "two six-problem runs left $(records "$tmp/six.txtpb")"
[[ "$(cat "$tmp"/six?.err | grep -c 'already tuned on Simulated GPU; skipped')" == 6 ]] \
  || fail "the second run did not resume the first's records"

# 3. Device nodes: /dev/null discards and stays a device; /dev/full is exit 1 (ENOSPC).
"$bin" --simulate=seed=1 --problems=copy:u8:64 --output=/dev/null >/dev/null 2>"$tmp/null.err" \
  || { cat "$tmp/null.err"; fail "--output=/dev/null exited $?"; }
[[ -c /dev/null ]] || fail "/dev/null is no longer a device"
set +e
"$bin" --simulate=seed=1 --problems=copy:u8:64 --output=/dev/full >/dev/null 2>"$tmp/full.err"
code=$?
set -e
[[ $code == 1 ]] || fail "--output=/dev/full exited $code"
grep -q "/dev/full" "$tmp/full.err" || fail "no message naming /dev/full"
[[ -c /dev/full ]] || fail "/dev/full is no longer a device"
"$bin" merge "$tmp/shared.txtpb" -o /dev/null --report >/dev/null 2>"$tmp/merge_null.err" \
  || { cat "$tmp/merge_null.err"; fail "merge -o /dev/null exited $?"; }
[[ -c /dev/null ]] || fail "merge replaced /dev/null"
set +e
"$bin" merge "$tmp/shared.txtpb" -o /dev/full 2>"$tmp/merge_full.err" >/dev/null
code=$?
set -e
[[ $code == 1 ]] || fail "merge -o /dev/full exited $code"
"$bake" --database=kernels/tuned/h200.txtpb --targets=sm_90a --name=x --problems=copy:f16:8192,8192 \
  --output=/dev/null 2>"$tmp/bake.err" || { cat "$tmp/bake.err"; fail "bake --output=/dev/null"; }
[[ -c /dev/null ]] || fail "bake replaced /dev/null"

# 4. A folder or a socket at the output, or a missing folder, is refused before tuning.
mkdir "$tmp/folder.txtpb"
set +e
"$bin" --simulate=seed=1 --problems=copy:u8:64 --output="$tmp/folder.txtpb" 2>"$tmp/dir.err"
code=$?
"$bin" --simulate=seed=1 --problems=copy:u8:64 --output="$tmp/absent/db.txtpb" 2>"$tmp/absent.err"
code2=$?
set -e
[[ $code == 2 ]] && grep -q "is a folder" "$tmp/dir.err" || fail "a folder output: exit $code"
[[ $code2 == 2 ]] && grep -q "does not exist; create it first" "$tmp/absent.err" \
  || fail "a missing output folder: exit $code2"
grep -q "dry run\|\[1/1\]" "$tmp/dir.err" "$tmp/absent.err" && fail "tuning started before the check"

# 5. Workers die with their supervisor.
"$bin" --simulate=seed=1,hang=1.0 --hang_seconds=600 --problems=copy:u8:64 \
  --output="$tmp/hang.txtpb" >/dev/null 2>&1 &
supervisor=$!
for _ in $(seq 1 100); do
  worker=$(pgrep -f -- "--worker_parent=$supervisor" || true)
  [[ -n "$worker" ]] && break
  sleep 0.1
done
[[ -n "$worker" ]] || fail "no worker started"
kill -9 "$supervisor"
wait "$supervisor" 2>/dev/null || true
for _ in $(seq 1 50); do kill -0 "$worker" 2>/dev/null || break; sleep 0.1; done
kill -0 "$worker" 2>/dev/null && fail "worker $worker outlived its supervisor"

# 6. kill -9 between the database's rename and the report's (strace kills the merge at its
# second rename): the database is new, the report old, and the next reader says so.
"$bin" merge "$tmp/six.txtpb" -o "$tmp/unit.txtpb" --report >/dev/null 2>&1
"$bin" merge "$tmp/shared.txtpb" "$tmp/six.txtpb" -o "$tmp/both.txtpb" >/dev/null 2>&1
set +e
strace -f -o /dev/null -e trace=rename,renameat,renameat2 \
  -e inject=rename,renameat,renameat2:signal=KILL:when=2 \
  "$bin" merge "$tmp/both.txtpb" -o "$tmp/unit.txtpb" --report >/dev/null 2>&1
code=$?
set -e
[[ $code == 137 ]] || fail "the merge was not killed between its renames (exit $code)"
[[ "$(records "$tmp/unit.txtpb")" == 26 ]] || fail "the database rename did not happen"
"$bin" merge "$tmp/unit.txtpb" -o "$tmp/reader.txtpb" >/dev/null 2>"$tmp/reader.err"
grep -q "unit.report.md describes another version of .*unit.txtpb" "$tmp/reader.err" \
  || { cat "$tmp/reader.err"; fail "the reader did not flag the stale report"; }
"$bin" merge "$tmp/unit.txtpb" -o "$tmp/unit.txtpb" --report >/dev/null 2>&1
"$bin" merge "$tmp/unit.txtpb" -o "$tmp/reader.txtpb" >/dev/null 2>"$tmp/reader2.err"
grep -q "describes another version" "$tmp/reader2.err" && fail "a rewritten report is still flagged"
echo PASS

#!/usr/bin/env bash
# `autotune merge` through the real binary: the dispatch in autotune_main.cc, the exit
# codes (0 merged, 1 unreadable input, 2 bad arguments) and the merged file.
set -euo pipefail

bin="autotune/autotune"
data="compiler/tuning_db/testdata"
out="${TEST_TMPDIR}/merged.txtpb"

fail() { echo "FAIL: $*" >&2; exit 1; }

# A merge with one conflict: the faster f16 winner (tma, 70.5 us on gpu-a) is kept.
"$bin" merge "$data/v1_h200_a.txtpb" "$data/v1_h200_b.txtpb" -o "$out" >"$TEST_TMPDIR/stdout" \
  2>"$TEST_TMPDIR/stderr" || fail "merge exited $?"
# Schema-1 inputs are upgraded, and the user is told they carried no checksum.
[[ "$(grep -c 'note: .*v1_h200_.\.txtpb: schema 1, upgraded to 3 .*no records_sha256' \
  "$TEST_TMPDIR/stderr")" == 2 ]] || { cat "$TEST_TMPDIR/stderr"; fail "upgrade notes"; }
grep -q '^conflict: "NVIDIA H200" sm_9.0 | "copy" "f16" shape=\[8192,8192\].*: kept tma .*70.500 us, compiler/tuning_db/testdata/v1_h200_a.txtpb, host gpu-a) over bulk_1d .*72.000 us' \
  "$TEST_TMPDIR/stdout" || { cat "$TEST_TMPDIR/stdout"; fail "conflict line"; }
grep -q '4 records from 2 databases -> 3 records' "$TEST_TMPDIR/stdout" \
  || fail "summary line"
[[ "$(grep -c '^records {' "$out")" == 3 ]] || fail "merged file does not hold 3 records"
tail -n 2 "$out" | head -n 1 | grep -qx 'record_count: 3' || fail "merged file has no trailer"
tail -n 1 "$out" | grep -q '^records_sha256: "[0-9a-f]\{64\}"$' || fail "merged file has no checksum"
# The merged file is itself a valid input.
"$bin" merge "$out" -o "$TEST_TMPDIR/again.pb" >/dev/null || fail "re-reading the output"

# Bad arguments: exit 2 and exactly one line on stderr.
for args in "merge $data/v1_h200_a.txtpb" "merge -o $out" "merge --frobnicate x -o y" "merge a -o"; do
  set +e
  # shellcheck disable=SC2086
  "$bin" $args >/dev/null 2>"$TEST_TMPDIR/stderr"
  code=$?
  set -e
  [[ $code == 2 ]] || fail "'$args' exited $code, expected 2"
  [[ "$(wc -l <"$TEST_TMPDIR/stderr")" == 1 ]] || fail "'$args' printed more than one line"
  grep -q '^autotune merge: .*usage: autotune merge INPUT... -o OUTPUT \[--report\] \[--winners_only\] \[--replace\]$' "$TEST_TMPDIR/stderr" \
    || fail "'$args': $(cat "$TEST_TMPDIR/stderr")"
done

# A missing input: exit 1, the path named.
set +e
"$bin" merge "$TEST_TMPDIR/nope.pb" -o "$out" 2>"$TEST_TMPDIR/stderr"
code=$?
set -e
[[ $code == 1 ]] || fail "missing input exited $code, expected 1"
grep -q "nope.pb: no such file" "$TEST_TMPDIR/stderr" || fail "missing input message"
echo PASS

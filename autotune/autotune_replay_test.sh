#!/usr/bin/env bash
# `autotune replay` end to end on the simulated device (no GPU): a tuning that measures
# every candidate and the library's alternatives (the simulated GPU named as the H200, so
# the built-in records answer) is the corpus; replay finds each selection's kernel in it,
# and its ratios agree with what the tuning itself measured of the library's choice. Bad
# arguments and corpora are refused with their exit codes.
set -euo pipefail

bin="autotune/autotune"
tmp="$TEST_TMPDIR"
fail() { echo "FAIL: $*" >&2; exit 1; }
problems="im2col:f16:32,32,32,128:k=2:s=2:layout=nchw;copy:f16:6000,5000"
problems+=";col2im:f16:16,40,40,96:k=3:p=1:layout=nchw;copy:u8:src=300x4097[0:300,3:4000]"
unset TILETUNE_COST_MODEL TILETUNE_COST_MODEL_FILE TILETUNE_DB

"$bin" --simulate="seed=3,name=NVIDIA H200" --problems="$problems" --cost_model=none \
  --library_alternatives=9 --output="$tmp/corpus.txtpb" --report=false \
  >"$tmp/tune.out" 2>"$tmp/tune.err" || { cat "$tmp/tune.err"; fail "the simulated tuning exited $?"; }
"$bin" replay "$tmp/corpus.txtpb" -o "$tmp/replay" >"$tmp/replay.out" 2>"$tmp/replay.err" \
  || { cat "$tmp/replay.err"; fail "replay exited $?"; }
cat "$tmp/replay.out"
cmp -s "$tmp/replay.out" "$tmp/replay.md" || fail "-o did not write the report printed"
grep -q '^4 problem(s) of ' "$tmp/replay.out" || fail "no count of problems"
# The tuning measured the library's choice, and every alternative it was given.
grep -q '^| nearest record (the default) | 4 of 4 | ' "$tmp/replay.out" \
  || fail "the nearest record's kernel was not found for every problem"
rows=$(grep -cE '^\| (copy|im2col|col2im) ' "$tmp/replay.out")
[[ "$rows" == 4 ]] || fail "expected 4 problem rows, got $rows"
awk -F'|' '/^\| (copy|im2col|col2im) / { split($8, m, " of "); if (m[1] + 0 != m[2] + 0 || m[2] + 0 < 2) bad = 1 }
           END { exit bad }' "$tmp/replay.out" || fail "not every one of the library's choices was measured"
# Each problem's nearest ratio is the one the tuner reported for the library's choice,
# within the tuning's two sets of rounds (the simulator adds no noise: equal).
grep -oE "library's choice \([a-z]+\) [0-9.]+x" "$tmp/tune.err" | sed -E 's/.* ([0-9.]+)x/\1/' \
  >"$tmp/tuner_ratios"
awk -F'|' '/^\| (copy|im2col|col2im) / { gsub(/ /, "", $5); print $5 }' "$tmp/replay.out" \
  >"$tmp/replay_ratios"
[[ "$(wc -l < "$tmp/tuner_ratios")" == 4 ]] || { cat "$tmp/tune.err"; fail "the tuner did not report 4 ratios"; }
paste "$tmp/tuner_ratios" "$tmp/replay_ratios" | awk '{ d = $1 - $2; if (d < -0.002 || d > 0.002) { print; bad = 1 } } END { exit bad }' \
  || fail "replay's nearest ratios differ from the tuner's"
# No ratio below 1: the fastest measured kernel is the denominator.
awk -F'|' '/^\| (copy|im2col|col2im) / { for (i = 5; i <= 9; i += 2) { gsub(/ /, "", $i); if ($i != "notmeasured" && $i + 0 < 0.9995) bad = 1 } }
           END { exit bad }' "$tmp/replay.out" || fail "a ratio below 1"

# A fitted model file serves the cost-model selection.
"$bin" fit "$tmp/corpus.txtpb" -o "$tmp/model.txtpb" >/dev/null 2>&1 || fail "fit exited $?"
"$bin" replay "$tmp/corpus.txtpb" --cost_model="$tmp/model.txtpb" >"$tmp/model.out" 2>&1 \
  || { cat "$tmp/model.out"; fail "replay with a model file exited $?"; }
grep -q "the model: .*/model.txtpb\." "$tmp/model.out" || fail "the report does not name the model file"

# Refusals.
set +e
"$bin" replay >/dev/null 2>"$tmp/none.err"; [[ $? == 2 ]] || fail "no corpus: not a usage error"
grep -q 'give at least one corpus' "$tmp/none.err" || fail "no corpus: no message"
TILETUNE_COST_MODEL=1 "$bin" replay "$tmp/corpus.txtpb" >/dev/null 2>"$tmp/env.err"
[[ $? == 2 ]] || fail "TILETUNE_COST_MODEL=1: not a usage error"
grep -q "TILETUNE_COST_MODEL='1' is set" "$tmp/env.err" || fail "TILETUNE_COST_MODEL=1: no message"
echo 'records { device {' >"$tmp/bad.txtpb"
"$bin" replay "$tmp/bad.txtpb" >/dev/null 2>"$tmp/bad.err"; [[ $? == 3 ]] || fail "a broken corpus: not exit 3"
grep -q 'bad.txtpb' "$tmp/bad.err" || fail "a broken corpus is refused without naming it"
"$bin" replay "$tmp/corpus.txtpb" --cost_model="$tmp/missing.txtpb" >/dev/null 2>"$tmp/model.err"
[[ $? == 3 ]] || fail "a missing model: not exit 3"
grep -q 'missing.txtpb' "$tmp/model.err" || fail "a missing model is refused without naming it"
"$bin" replay "$tmp/corpus.txtpb" --choices=0 >/dev/null 2>"$tmp/choices.err"
[[ $? == 2 ]] || fail "--choices=0: not a usage error"
grep -q -- '--choices' "$tmp/choices.err" || fail "--choices=0 is refused without naming the flag"
echo PASS

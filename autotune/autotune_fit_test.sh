#!/usr/bin/env bash
# `autotune fit` end to end on the simulated device (no GPU): a tuning's own output (every
# measured candidate kept) is the corpus; the model is written and reads back, and its
# leave-one-problem-out error is reported per operator. Bad corpora and arguments are
# refused with their exit codes.
set -euo pipefail

bin="autotune/autotune"
tmp="$TEST_TMPDIR"
fail() { echo "FAIL: $*" >&2; exit 1; }
problems="copy:f16:512,512;copy:u8:src=300x4097[0:300,3:4000];copy:f32:64,3,224,224"
problems+=";copy:bf16:1023,1025;im2col:f16:2,16,16,8:k=3:p=1;im2col:f32:4,28,28,16:k=3"

"$bin" --simulate=seed=3 --problems="$problems" --output="$tmp/corpus.txtpb" --report=false \
  >"$tmp/tune.out" 2>"$tmp/tune.err" || { cat "$tmp/tune.err"; fail "the simulated tuning exited $?"; }
"$bin" fit "$tmp/corpus.txtpb" -o "$tmp/model.txtpb" --terms="$tmp/terms.csv" >"$tmp/fit.out" \
  2>"$tmp/fit.err" || { cat "$tmp/fit.err"; fail "fit exited $?"; }
cat "$tmp/fit.out"
grep -qE '^autotune fit: [0-9]+ kernels of 6 problems on Simulated GPU \(sm_9\.0\)' "$tmp/fit.out" \
  || fail "no summary line"
for op in copy im2col all; do
  grep -qE "^  $op +[0-9]+ +[0-9]+ +[0-9.]+ " "$tmp/fit.out" || fail "no leave-one-out row for $op"
done
[[ "$(grep -c '^terms: ' "$tmp/model.txtpb")" == 14 ]] || fail "the model does not name 14 terms"
[[ "$(grep -c '^coefficients: ' "$tmp/model.txtpb")" == 14 ]] || fail "the model has not 14 coefficients"
grep -q 'name: "Simulated GPU"' "$tmp/model.txtpb" || fail "the model names no device"
# The k a tuner measures per operator, from the leave-one-out (an operator's when some k
# holds its regret to 1%, and all operators').
grep -qE 'key: "(all|copy|im2col)"' "$tmp/model.txtpb" || fail "the model holds no top k"
# --terms: a header and one row per kernel the summary counts.
kernels=$(sed -nE 's/^autotune fit: ([0-9]+) kernels.*/\1/p' "$tmp/fit.out")
head -n 1 "$tmp/terms.csv" | grep -q '^problem,op,kernel,variant,median_us,bytes,vector_bytes,' || fail "no CSV header"
[[ "$(($(wc -l < "$tmp/terms.csv") - 1))" == "$kernels" ]] || fail "the CSV has not $kernels rows"
# The simulator's times are a launch floor plus bytes over a bandwidth that grows with the
# vector: the model's form holds them, so it ranks an unseen problem's kernels well (the
# best of its first five within 5% of the fastest, on average) and estimates them closely.
err=$(awk '$1 == "all" {print $4}' "$tmp/fit.out")
top5=$(awk '$1 == "all" {sub("%", "", $8); print $8}' "$tmp/fit.out")
awk -v e="$err" 'BEGIN {exit !(e < 0.3)}' || fail "median |ln error| $err on the simulator's times"
awk -v r="$top5" 'BEGIN {exit !(r < 5)}' || fail "best-of-five regret $top5% on the simulator's times"

# --trees: the model holds boosted trees, reads back (rank and a tuning use it), and the
# fit says so; its leave-one-out rows are reported as before.
"$bin" fit "$tmp/corpus.txtpb" --trees=20 -o "$tmp/trees.txtpb" >"$tmp/trees.out" \
  2>"$tmp/trees.err" || { cat "$tmp/trees.err"; fail "fit --trees exited $?"; }
grep -q 'then 20 regression trees' "$tmp/trees.out" || fail "fit --trees does not say it added trees"
[[ "$(grep -c '^trees {' "$tmp/trees.txtpb")" == 20 ]] || fail "the model does not hold 20 trees"
grep -qE "^  all +[0-9]+ +[0-9]+ +[0-9.]+ " "$tmp/trees.out" || fail "no leave-one-out row with trees"
"$bin" rank "copy:f16:700,700" --cost_model="$tmp/trees.txtpb" >"$tmp/rank_trees.out" 2>&1 \
  || { cat "$tmp/rank_trees.out"; fail "rank with the trees model exited $?"; }
"$bin" fit "$tmp/corpus.txtpb" --trees=-1 >/dev/null 2>"$tmp/trees_bad.err" && fail "--trees=-1 was accepted"
grep -q -- '--trees' "$tmp/trees_bad.err" || fail "--trees=-1 is refused without naming the flag"
# --rank: ranking trees, stated by the fit and kept in the file, which rank reads back; with
# no trees it is a usage error.
"$bin" fit "$tmp/corpus.txtpb" --trees=20 --rank -o "$tmp/rank.txtpb" >"$tmp/rank_fit.out" \
  2>"$tmp/rank_fit.err" || { cat "$tmp/rank_fit.err"; fail "fit --rank exited $?"; }
grep -q "fitted to order each problem's kernels" "$tmp/rank_fit.out" || fail "fit --rank does not say so"
grep -q '^trees_from_terms: true' "$tmp/rank.txtpb" || fail "the ranking model's file does not say so"
"$bin" rank "copy:f16:700,700" --cost_model="$tmp/rank.txtpb" >"$tmp/rank_rank.out" 2>&1 \
  || { cat "$tmp/rank_rank.out"; fail "rank with the ranking model exited $?"; }
# --registers: each printed kernel compiled (NVRTC, no GPU), its registers and the CTAs an
# SM holds shown beside it, the library's fitted kernel's too.
"$bin" rank "copy:f16:700,700" --top=3 --registers >"$tmp/rank_regs.out" 2>&1 \
  || { cat "$tmp/rank_regs.out"; fail "rank --registers exited $?"; }
[[ "$(grep -cE ', [0-9]+ registers, [0-9]+ CTAs/SM$' "$tmp/rank_regs.out")" == 4 ]] \
  || { cat "$tmp/rank_regs.out"; fail "rank --registers does not show 3 ranked kernels' and the library's registers"; }
rc=0
"$bin" fit "$tmp/corpus.txtpb" --rank >/dev/null 2>"$tmp/rank_bad.err" || rc=$?
[[ $rc == 2 ]] || fail "--rank without --trees exited $rc, not 2"
grep -q -- '--rank fits trees' "$tmp/rank_bad.err" || fail "--rank without --trees: no message"

# Tuning with the model measures its top k (and the heuristic's choice) per phase: fewer
# candidates, and winners within 5% of the full tuning's (the simulator is deterministic).
"$bin" --simulate=seed=3 --problems="$problems" --output="$tmp/pruned.txtpb" --report=false \
  --cost_model="$tmp/model.txtpb" --model_top_k=8 >"$tmp/pruned.out" 2>"$tmp/pruned.err" \
  || { cat "$tmp/pruned.err"; fail "the tuning with the cost model exited $?"; }
[[ "$(grep -c 'skipped by the cost model' "$tmp/pruned.err")" == 6 ]] \
  || { grep 'done' "$tmp/pruned.err"; fail "not every problem skipped candidates by the model"; }
# What the library would launch was measured with the finalists, and the summary says how
# it compares with the winner.
[[ "$(grep -cE "library's choice \((exact|nearest|heuristic)\) [0-9.]+x" "$tmp/pruned.err")" == 6 ]] \
  || { cat "$tmp/pruned.err"; fail "not every summary compares the library's choice"; }
# Without --model_top_k the model's own k is measured; --cost_model=none measures all.
"$bin" --simulate=seed=3 --problems="copy:f16:512,512" --output="$tmp/own_k.txtpb" --report=false \
  --cost_model="$tmp/model.txtpb" >/dev/null 2>"$tmp/own_k.err" \
  || { cat "$tmp/own_k.err"; fail "the tuning with the model's own k exited $?"; }
grep -q 'skipped by the cost model' "$tmp/own_k.err" || fail "the model's own k skipped nothing"
"$bin" --simulate=seed=3 --problems="copy:f16:512,512" --output="$tmp/none.txtpb" --report=false \
  --cost_model=none >/dev/null 2>"$tmp/none.err" || { cat "$tmp/none.err"; fail "--cost_model=none exited $?"; }
! grep -q 'skipped by the cost model' "$tmp/none.err" || fail "--cost_model=none skipped candidates"
winners() { awk '/^  winner_statistics \{/ {w = 1} w && /median_us:/ {print $2; w = 0}' "$1"; }
paste <(winners "$tmp/corpus.txtpb") <(winners "$tmp/pruned.txtpb") >"$tmp/pairs"
[[ "$(wc -l < "$tmp/pairs")" == 6 ]] || fail "expected 6 winners in each tuning"
awk '{ if ($2 > 1.05 * $1) { print "winner " $2 " us against " $1 " us"; bad = 1 } } END { exit bad }' \
  "$tmp/pairs" || fail "a winner of the pruned tuning is more than 5% slower"
# A model file that is not one is a usage error, before anything is tuned.
echo 'floor_us: "x"' >"$tmp/bad_model.txtpb"
set +e
"$bin" --simulate=seed=3 --problems="$problems" --output="$tmp/x.txtpb" \
  --cost_model="$tmp/bad_model.txtpb" >/dev/null 2>"$tmp/e5"; rc5=$?
set -e
[[ $rc5 == 2 ]] && grep -q -- '--cost_model: .*not a text-format CostModel: line 1' "$tmp/e5" \
  || fail "a bad model: exit $rc5 $(cat "$tmp/e5")"
[[ ! -e "$tmp/x.txtpb" ]] || fail "a bad model still tuned"

# `autotune rank`: a GPU the model was not fitted on (sm_100, 148 SMs, simulated) gets a
# ranked candidate list from the built-in H200 model, estimates ascending, and the device
# constants change the estimates.
"$bin" rank --target=sm_100a --sm_count=148 --top=8 copy:f16:8192,8192 \
  "im2col:f16:64,56,56,64:k=3:p=1" >"$tmp/rank100.out" 2>"$tmp/rank100.err" \
  || { cat "$tmp/rank100.err"; fail "rank exited $?"; }
cat "$tmp/rank100.out"
grep -q '^autotune rank: model kernels/tuned/h200.model.txtpb (NVIDIA H200' "$tmp/rank100.out" \
  || fail "rank names no built-in model"
[[ "$(grep -cE '^ +[0-9]+ +[0-9.]+ us  ' "$tmp/rank100.out")" == 16 ]] || fail "rank printed not 8 per problem"
awk '/candidates;/ {last = 0} /^ +[0-9]+ +[0-9.]+ us/ { if ($2 + 0 < last) bad = 1; last = $2 + 0 } END { exit bad }' \
  "$tmp/rank100.out" || fail "rank's estimates are not ascending"
"$bin" rank --target=sm_90a --sm_count=132 --top=8 copy:f16:8192,8192 >"$tmp/rank90.out" 2>/dev/null
[[ "$(grep -m1 ' us ' "$tmp/rank90.out")" != "$(grep -m1 ' us ' "$tmp/rank100.out")" ]] \
  || fail "sm_100 with 148 SMs ranks with the H200's estimates"
# On the model's own GPU rank also shows what the library launches and the nearest records'
# variants it weighs, nearest first, each as the model predicts it; elsewhere it does not.
cat "$tmp/rank90.out"
grep -qE '^  the library on NVIDIA H200 launches \((exact|nearest|heuristic)\): ' "$tmp/rank90.out" \
  || fail "rank shows no library choice on the H200"
[[ "$(grep -cE '^ +[0-9]+ +[0-9.]+ us  distance +[0-9.]+  nearest: record ' "$tmp/rank90.out")" -ge 2 ]] \
  || fail "rank shows no predicted nearby variants"
awk '/distance/ { d = $5 + 0; if (d < last) bad = 1; last = d } END { exit bad }' \
  "$tmp/rank90.out" || fail "the nearby variants are not nearest first"
! grep -q 'the library on' "$tmp/rank100.out" || fail "rank shows the H200 library for sm_100"
set +e
"$bin" rank --target=sm_42 copy:f16:64 >/dev/null 2>"$tmp/r1"; r1=$?
"$bin" rank --cost_model="$tmp/no_such_model.txtpb" copy:f16:64 >/dev/null 2>"$tmp/r2"; r2=$?
"$bin" rank >/dev/null 2>"$tmp/r3"; r3=$?
set -e
[[ $r1 == 2 ]] && grep -q -- '--target' "$tmp/r1" || fail "a bad target: exit $r1 $(cat "$tmp/r1")"
[[ $r2 == 3 ]] || fail "a missing model: exit $r2 $(cat "$tmp/r2")"
[[ $r3 == 2 ]] && grep -q 'give at least one problem spec' "$tmp/r3" || fail "no spec: exit $r3"

# Usage errors exit 2; a corpus that does not read, or holds too little, exits 3.
set +e
"$bin" fit >/dev/null 2>"$tmp/e1"; rc1=$?
"$bin" fit "$tmp/no_such.txtpb" >/dev/null 2>"$tmp/e2"; rc2=$?
"$bin" --simulate=seed=3 --problems="copy:f16:512,512" --output="$tmp/one.txtpb" --report=false \
  >/dev/null 2>&1
"$bin" fit "$tmp/one.txtpb" >/dev/null 2>"$tmp/e3"; rc3=$?
"$bin" fit "$tmp/corpus.txtpb" --bogus >/dev/null 2>"$tmp/e4"; rc4=$?
set -e
[[ $rc1 == 2 ]] && grep -q 'give at least one corpus' "$tmp/e1" || fail "no corpus: exit $rc1"
[[ $rc2 == 3 ]] || fail "missing corpus: exit $rc2"
[[ $rc3 == 3 ]] && grep -q 'at least 2 problems' "$tmp/e3" || fail "one problem: exit $rc3 $(cat "$tmp/e3")"
[[ $rc4 == 2 ]] || fail "unknown flag: exit $rc4"
echo PASS

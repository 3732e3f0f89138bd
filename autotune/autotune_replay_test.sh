#!/usr/bin/env bash
# `autotune replay` end to end on the simulated device (no GPU): a tuning that measures
# every candidate and the library's alternatives (the simulated GPU named as the H200, so
# the built-in records answer) is the corpus; replay finds each selection's kernel in it by
# its source, its ratios are the ones the tuner measured of the library's choice, and a
# problem the library holds exactly is listed apart. Bad arguments and corpora are refused
# with their exit codes.
set -euo pipefail

bin="autotune/autotune"
tmp="$TEST_TMPDIR"
fail() { echo "FAIL: $*" >&2; exit 1; }
# Three problems no shipped record holds, and one the shipped database holds exactly.
problems="im2col:f16:32,32,32,128:k=2:s=2:layout=nchw;copy:f16:6000,5000"
problems+=";col2im:f16:16,40,40,96:k=3:p=1:layout=nchw;copy:u8:src=300x4097[0:300,3:4000]"
unset TILETUNE_COST_MODEL TILETUNE_COST_MODEL_FILE TILETUNE_DB
export TILETUNE_DB_DIR="$tmp/no_user_records"
mkdir -p "$TILETUNE_DB_DIR"
rows() { grep -E '^\| (copy|im2col|col2im) ' "$1" || true; }

rc=0
"$bin" --simulate="seed=3,name=NVIDIA H200" --problems="$problems" --cost_model=none \
  --library_alternatives=9 --output="$tmp/corpus.txtpb" --report=false \
  >"$tmp/tune.out" 2>"$tmp/tune.err" || rc=$?
[[ $rc == 0 ]] || { cat "$tmp/tune.err"; fail "the simulated tuning exited $rc"; }
grep -q 'command_line: "autotune --problems=.* --cost_model=none --library_alternatives=9"' \
  "$tmp/corpus.txtpb" || fail "the corpus's provenance does not say how it was tuned"
"$bin" replay "$tmp/corpus.txtpb" -o "$tmp/replay" >"$tmp/replay.out" 2>"$tmp/replay.err" || rc=$?
[[ $rc == 0 ]] || { cat "$tmp/replay.err"; fail "replay exited $rc"; }
cat "$tmp/replay.out"
cmp -s "$tmp/replay.out" "$tmp/replay.md" || fail "-o did not write the report printed"
grep -q '^4 problem(s) of .*, measured on NVIDIA H200 (sm_9\.0, ' "$tmp/replay.out" \
  || fail "no count of problems and GPU"
grep -q ' 1 problem(s) the library holds exactly ' "$tmp/replay.out" || fail "the exact problem is not counted apart"
# The tuning measured the library's choice (by its source), and every alternative it was given.
grep -q '^| nearest record (the default) | 3 | 3 | ' "$tmp/replay.out" \
  || fail "the nearest record's kernel was not found for every selected problem"
[[ "$(rows "$tmp/replay.out" | wc -l)" == 4 ]] || fail "expected 4 problem rows"
rows "$tmp/replay.out" | awk -F'|' '{ split($8, m, " of "); if (m[1] + 0 != m[2] + 0 || m[2] + 0 < 2) bad = 1 }
  END { exit bad }' || fail "not every one of the library's choices was measured"
! rows "$tmp/replay.out" | grep -q '~' || fail "a kernel was found by its variant, not its source"
# The fastest choice is named (its kernel and level), and it is never slower than the nearest
# record's, which is one of the choices.
rows "$tmp/replay.out" | grep -v "(exact)" | awk -F'|' '
  { split($9, f, ": "); if ($9 !~ /^ [0-9.]+: .* tile .*\((nearest|heuristic|exact)/ || f[1] + 0 > $5 + 0) bad = 1 }
  END { exit bad }' || fail "a fastest choice is not named, or is slower than the nearest record's"
# Per operator: the three selected problems are one of each, so each operator's geomean is
# its one row's ratio.
for op in copy im2col col2im; do
  line=$(grep "^| \`$op\` | 1 | " "$tmp/replay.out") || fail "no per-operator row for $op"
  ratio=$(rows "$tmp/replay.out" | grep "^| $op " | grep -v "(exact)" | awk -F'|' '{ gsub(/ /, "", $5); print $5 }')
  [[ "$line" == *"| $ratio (1) |"* ]] || fail "$op's per-operator nearest geomean is not its row's $ratio: $line"
done
# The exact problem comes last, and says so.
rows "$tmp/replay.out" | tail -n 1 | grep -q '^| copy u8 \[300, 3997\].*(exact)' \
  || fail "the exact problem is not listed last"
# The winner's time is the record's: the ratios are over it.
winners=$(awk '/^  winner_statistics \{/ {w = 1} w && /median_us:/ {printf "%.2f\n", $2; w = 0}' \
  "$tmp/corpus.txtpb" | sort)
[[ "$(rows "$tmp/replay.out" | awk -F'|' '{ gsub(/ /, "", $3); print $3 }' | sort)" == "$winners" ]] \
  || fail "the winner column is not the records' winners' times"
# Each problem's nearest ratio is the one the tuner measured of the library's choice over its
# winner (the simulator adds no noise: equal), and the library's choice lost somewhere.
grep -oE "library's choice \([a-z]+\) [0-9.]+x" "$tmp/tune.err" | sed -E 's/.* ([0-9.]+)x/\1/' \
  | sort >"$tmp/tuner_ratios" || true
rows "$tmp/replay.out" | awk -F'|' '{ gsub(/ /, "", $5); print $5 }' | sort >"$tmp/replay_ratios"
[[ "$(wc -l < "$tmp/tuner_ratios")" == 4 ]] || { cat "$tmp/tune.err"; fail "the tuner did not report 4 ratios"; }
paste "$tmp/tuner_ratios" "$tmp/replay_ratios" \
  | awk '{ d = $1 - $2; if (d < -0.002 || d > 0.002) { print; bad = 1 } } END { exit bad }' \
  || fail "replay's nearest ratios differ from the tuner's"
awk '$1 > 1.01 { found = 1 } END { exit !found }' "$tmp/replay_ratios" \
  || fail "the library's choice was the winner everywhere: the ratios test nothing"

# --choices_csv: each selected problem's choices (the exact problem left out), the nearest
# record's pick first (order 0) at the ratio the report gives it, each with the winner's time.
"$bin" replay "$tmp/corpus.txtpb" --choices_csv="$tmp/choices.csv" >/dev/null 2>"$tmp/csv.err" \
  || { cat "$tmp/csv.err"; fail "replay --choices_csv failed"; }
python3 - "$tmp/choices.csv" "$tmp/replay.out" <<'PY' || fail "the choices CSV does not match the report"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows and list(rows[0]) == ("problem,op,order,level,kernel,us,winner_us,by_variant,"
    "vector_bytes,threads,tiles,shared_bytes,distance,predicted_us").split(","), list(rows[0])
problems = {}
for row in rows:
    problems.setdefault(row["problem"], []).append(row)
assert len(problems) == 3, sorted(problems)
report = {cells[1].strip(): cells[4].strip() for cells in
          (line.split("|") for line in open(sys.argv[2]) if line.startswith("| ") and " tile " in line)}
for problem, choices in problems.items():
    first = choices[0]
    assert first["order"] == "0" and len(choices) >= 2, (problem, len(choices))
    assert len({c["winner_us"] for c in choices}) == 1, problem
    ratio = float(first["us"]) / float(first["winner_us"])
    assert abs(ratio - float(report[problem])) < 0.002, (problem, ratio, report[problem])
    assert first["level"] != "nearest" or first["distance"], problem
PY

# A fitted model file serves the cost-model selection, and the report names it.
"$bin" fit "$tmp/corpus.txtpb" -o "$tmp/model.txtpb" >/dev/null 2>&1 || fail "fit failed"
"$bin" replay "$tmp/corpus.txtpb" --cost_model="$tmp/model.txtpb" >"$tmp/model.out" 2>&1 || rc=$?
[[ $rc == 0 ]] || { cat "$tmp/model.out"; fail "replay with a model file exited $rc"; }
grep -q "the cost model: .*/model.txtpb\." "$tmp/model.out" || fail "the report does not name the model file"
grep -q '^| cost model (where it chose) | 3 | 3 | ' "$tmp/model.out" || fail "the model did not choose for every problem"
rows "$tmp/model.out" | grep -q 'by the model' || fail "no row says the model chose"

# With a margin no prediction clears, the model keeps every nearest record's variant.
"$bin" replay "$tmp/corpus.txtpb" --model_margin=1000 >"$tmp/margin.out" 2>&1 || rc=$?
[[ $rc == 0 ]] || { cat "$tmp/margin.out"; fail "replay --model_margin exited $rc"; }
grep -q 'only when it predicts it 1000% faster' "$tmp/margin.out" || fail "the report does not state the margin"
grep -q '^| cost model (where it chose) | 3 | 3 | ' "$tmp/margin.out" || fail "with a margin the model did not decide"
same_kernels() { awk -F'|' '{ m = $6; sub(/, by the model\)/, ")", m); print ($4 == m) }'; }
rows "$tmp/margin.out" | same_kernels | grep -qv 1 && fail "with a margin of 1000% a model pick is not the nearest record's"
rows "$tmp/replay.out" | same_kernels | grep -q 0 \
  || fail "without a margin the model picks the nearest record's kernel everywhere: the margin tests nothing"

# --leave_out: the problem the shipped database holds is replayed without its record (the
# nearest record's selection then answers), the others as before; with the corpus itself as
# the database, every problem is left out of it.
"$bin" replay "$tmp/corpus.txtpb" --leave_out >"$tmp/leave.out" 2>"$tmp/leave.err" || rc=$?
[[ $rc == 0 ]] || { cat "$tmp/leave.err"; fail "replay --leave_out exited $rc"; }
grep -q 'without its own record (--leave_out): 1 of the 4 had one' "$tmp/leave.out" \
  || fail "--leave_out does not say it left the exact problem's record out"
grep -q ' 0 problem(s) the library holds exactly ' "$tmp/leave.out" \
  || fail "--leave_out still resolved a problem exactly"
rows "$tmp/leave.out" | grep '^| copy u8 \[300, 3997\]' | awk -F'|' '$4 ~ /\(nearest\)/' | grep -q . \
  || fail "the left-out problem was not resolved from another record"
diff <(rows "$tmp/replay.out" | grep -v 'copy u8 \[300, 3997\]') \
  <(rows "$tmp/leave.out" | grep -v 'copy u8 \[300, 3997\]') >/dev/null \
  || fail "--leave_out changed the rows of problems the database does not hold"
"$bin" replay "$tmp/corpus.txtpb" --database="$tmp/corpus.txtpb" --leave_out >"$tmp/self.out" \
  2>"$tmp/self.err" || rc=$?
[[ $rc == 0 ]] || { cat "$tmp/self.err"; fail "replay --leave_out of its own database exited $rc"; }
grep -q 'without its own record (--leave_out): 4 of the 4 had one' "$tmp/self.out" \
  || fail "--leave_out with the corpus as the database did not leave every problem out"
! rows "$tmp/self.out" | grep -q '(exact)' || fail "a problem resolved exactly from its own left-out record"

# A winners-only database is no corpus, and replay says so.
"$bin" merge "$tmp/corpus.txtpb" --winners_only -o "$tmp/winners.txtpb" >/dev/null 2>&1 || fail "merge failed"
"$bin" replay "$tmp/winners.txtpb" >/dev/null 2>"$tmp/winners.err" || fail "replay of winners exited $?"
grep -q '4 record(s) hold only their winner: not a corpus' "$tmp/winners.err" \
  || fail "a winners-only database is not called out"

# Refusals.
set +e
"$bin" replay >/dev/null 2>"$tmp/none.err"; [[ $? == 2 ]] || fail "no corpus: not a usage error"
grep -q 'give at least one corpus' "$tmp/none.err" || fail "no corpus: no message"
for var in TILETUNE_COST_MODEL=1 TILETUNE_COST_MODEL_FILE=$tmp/model.txtpb; do
  env "$var" "$bin" replay "$tmp/corpus.txtpb" >/dev/null 2>"$tmp/env.err"
  [[ $? == 2 ]] || fail "$var: not a usage error"
  grep -q "${var%%=*}='.*' is set" "$tmp/env.err" || fail "$var: no message"
done
for var in TILETUNE_DB=$tmp/corpus.txtpb TILETUNE_BUILTIN_DB=0; do
  env "$var" "$bin" replay "$tmp/corpus.txtpb" --leave_out >/dev/null 2>"$tmp/leave_env.err"
  [[ $? == 2 ]] || fail "$var with --leave_out: not a usage error"
  grep -q "${var%%=*}='.*' is set: --leave_out" "$tmp/leave_env.err" || fail "$var with --leave_out: no message"
done
echo 'records { device {' >"$tmp/bad.txtpb"
"$bin" replay "$tmp/bad.txtpb" >/dev/null 2>"$tmp/bad.err"; [[ $? == 3 ]] || fail "a broken corpus: not exit 3"
grep -q 'bad.txtpb' "$tmp/bad.err" || fail "a broken corpus is refused without naming it"
"$bin" replay "$tmp/corpus.txtpb" --cost_model="$tmp/missing.txtpb" >/dev/null 2>"$tmp/model.err"
[[ $? == 3 ]] || fail "a missing model: not exit 3"
grep -q 'missing.txtpb' "$tmp/model.err" || fail "a missing model is refused without naming it"
"$bin" replay "$tmp/corpus.txtpb" --model_margin=-5 >/dev/null 2>"$tmp/margin.err"
[[ $? == 2 ]] || fail "--model_margin=-5: not a usage error"
grep -q -- '--model_margin' "$tmp/margin.err" || fail "--model_margin=-5 is refused without naming the flag"
"$bin" replay "$tmp/corpus.txtpb" --choices=0 >/dev/null 2>"$tmp/choices.err"
[[ $? == 2 ]] || fail "--choices=0: not a usage error"
grep -q -- '--choices' "$tmp/choices.err" || fail "--choices=0 is refused without naming the flag"
echo PASS

#!/usr/bin/env bash
# The tuning entry point of the real binary, without a GPU: one clear line and the right
# exit code for a missing GPU (3) and for bad flags (2).
set -uo pipefail

bin="autotune/autotune"
fail() { echo "FAIL: $*" >&2; exit 1; }
export TILETUNE_CUDA_DRIVER_LIBRARY=/nonexistent/libcuda.so.1  # No GPU, even on a GPU host.

expect() {  # expect CODE [--] PATTERN ARGS...
  local code="$1"
  shift
  [[ "$1" == "--" ]] && shift
  local pattern="$1"
  shift
  "$bin" "$@" >"$TEST_TMPDIR/out" 2>"$TEST_TMPDIR/err"
  local got=$?
  [[ "$got" == "$code" ]] || { cat "$TEST_TMPDIR/err"; fail "$* exited $got, expected $code"; }
  grep -q -- "$pattern" "$TEST_TMPDIR/err" || { cat "$TEST_TMPDIR/err"; fail "$*: no '$pattern'"; }
  [[ "$(wc -l <"$TEST_TMPDIR/err")" == 1 ]] || { cat "$TEST_TMPDIR/err"; fail "$*: not one line"; }
}

expect 3 "no GPU to tune on .*use --dry_run" --output="$TEST_TMPDIR/db.txtpb"
expect 2 "problem 'gemm:f16:8': unknown tile operator 'gemm': accepted are copy, im2col" --problems="gemm:f16:8"
expect 2 "'x' is not an integer" --problems="copy:f16:8,x"
expect 2 "unknown option 'q'" --problems="im2col:f16:1,8,8,4:q=1"
expect 2 "shard" --shard=5/2
expect 2 "--devices: 'a' is not a device ordinal" --devices=a
expect 2 "unknown target 'sm_91'" --dry_run --target=sm_91
# Issue 17: usage errors the flag library used to exit 1 on, or accepted.
expect 2 "unknown flag --foo; accepted are --problems, " --foo
expect 2 "samples=0: accepted are integers 1 to 1000" --samples=0
expect 2 "samples=-5: accepted are integers 1 to 1000" --samples=-5
expect 2 "hang_seconds=-1: accepted are integers 1 to 86400" --hang_seconds=-1
expect 2 "unexpected argument 'extra.txtpb'" --dry_run extra.txtpb
expect 2 -- "--samples is given twice" --samples=3 --samples=4
expect 2 -- "--shard is empty" --shard=
# Both spellings of a value.
expect 3 "no GPU to tune on" --output "$TEST_TMPDIR/db.txtpb" --samples 3
expect 2 "option 'k' is given twice" --problems="im2col:f16:1,8,8,4:k=3:k=5"
long=$(printf '7%.0s' $(seq 1 5000))
expect 2 "(5000 characters)" --problems="copy:f16:$long"
[[ "$(wc -c <"$TEST_TMPDIR/err")" -lt 2000 ]] || fail "a 5000-character value was echoed whole"
# --help: exit 0, the subcommands, problem syntax, environment and exit codes; no internal flags.
"$bin" --help >"$TEST_TMPDIR/help" 2>&1 || fail "--help exited $?"
for want in "autotune merge INPUT" "autotune evaluate" "--suite" "--samples" "copy:DTYPE" "src=" "im2col:DTYPE" \
            "TILETUNE_CACHE_DIR" "SLURM_ARRAY_TASK_ID" "JOB_COMPLETION_INDEX" "exit codes: 0"; do
  grep -q -- "$want" "$TEST_TMPDIR/help" || fail "--help lacks '$want'"
done
! grep -q "worker_" "$TEST_TMPDIR/help" || fail "--help shows internal flags"
# Suites from files, and `autotune evaluate`.
printf '# two problems\ncopy:f16:64   # a comment\n\nim2col:f16:1,8,8,4:k=3\n' >"$TEST_TMPDIR/suite.txt"
printf 'copy:f16:64\ncopy:f16:8,x\n' >"$TEST_TMPDIR/bad_suite.txt"
expect 3 "no GPU to tune on" --suite="$TEST_TMPDIR/suite.txt" --output="$TEST_TMPDIR/db.txtpb"
expect 2 "bad_suite.txt:2: problem 'copy:f16:8,x'" --suite="$TEST_TMPDIR/bad_suite.txt"
expect 2 "--suite: .*missing.txt: no such file" --suite="$TEST_TMPDIR/missing.txt"
expect 2 "--problems and --suite are exclusive" --suite="$TEST_TMPDIR/suite.txt" --problems=copy:f16:8
expect 3 "no GPU to tune on" evaluate --suite="$TEST_TMPDIR/suite.txt" --output="$TEST_TMPDIR/ev"
expect 2 "unknown flag --dry_run" evaluate --suite="$TEST_TMPDIR/suite.txt" --dry_run
expect 2 "tune_on_miss=-3: accepted are integers 0 to 600000" evaluate --suite="$TEST_TMPDIR/suite.txt" --tune_on_miss=-3
# A corpus from the evaluation's own tuning: the flags are taken (the supervisor passes them
# to its tuning workers, as autotune's own), and the tuning then needs a GPU.
expect 3 "no GPU to tune on" evaluate --suite="$TEST_TMPDIR/suite.txt" --output="$TEST_TMPDIR/ev" \
  --cost_model=none --library_alternatives=9
expect 2 "library_alternatives=65: accepted are integers 0 to 64" evaluate --suite="$TEST_TMPDIR/suite.txt" --library_alternatives=65
"$bin" evaluate --help >"$TEST_TMPDIR/help" 2>&1 || fail "evaluate --help exited $?"
for want in "autotune evaluate" "--database" "--tune_on_miss" "--cost_model" "--library_alternatives" "geomean" "exit codes: 0"; do
  grep -q -- "$want" "$TEST_TMPDIR/help" || fail "evaluate --help lacks '$want'"
done
# A dry run killed mid-way keeps the lines of the problems it finished (stdout used to be
# block-buffered: the log stayed empty). The simulated compiler keeps this fast.
heavy="copy:f16:64"
for n in 8100 8101 8102 8103 8104 8105 8106 8107 8108 8109 8110 8111; do heavy="$heavy;copy:f16:$n,$n"; done
"$bin" --dry_run --simulate=seed=1 --problems="$heavy" --output="$TEST_TMPDIR/dry.txtpb" \
  >"$TEST_TMPDIR/dry" 2>/dev/null &
pid=$!
for _ in $(seq 1 600); do grep -q 'copy f16 \[64\]' "$TEST_TMPDIR/dry" && break; sleep 0.05; done
kill -9 "$pid" 2>/dev/null || fail "the dry run ended before it could be killed; give it more problems"
wait "$pid" 2>/dev/null
grep -q 'copy f16 \[64\]' "$TEST_TMPDIR/dry" || fail "a killed dry run left no line for the problem it finished"
# Progress on stderr, a line as each problem starts.
"$bin" --dry_run --simulate=seed=1 --problems="copy:f16:64;copy:u8:128" >/dev/null 2>"$TEST_TMPDIR/dry_err" \
  || fail "dry run exited $?"
grep -q '^autotune: dry run 1 of 2: copy f16 \[64\]$' "$TEST_TMPDIR/dry_err" || { cat "$TEST_TMPDIR/dry_err"; fail "no dry-run progress"; }
grep -q '^autotune: dry run 2 of 2: copy u8 \[128\]$' "$TEST_TMPDIR/dry_err" || fail "no progress for the second problem"
[[ ! -e "$TEST_TMPDIR/db.txtpb" ]] || fail "a database was written without a GPU"
echo "PASS"

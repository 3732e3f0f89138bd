#!/usr/bin/env bash
# A campaign of hostile inputs (issue 34) against every command, on the simulated device:
# each flag of autotune (tuning, dry run, evaluate), merge, diff, export, fit, bake and compiler
# given each hostile value, each TILETUNE_* environment variable given each hostile value,
# and every input file kind (empty, garbage, truncated, binary named .txtpb, a FIFO, a
# folder, a device, a dangling link, 8 MB of text). For every case:
#   - no crash and no hang: the exit code is 0, 1, 2 or 3 (no signal, no timeout);
#   (values up to 100,000 bytes: one argument may hold at most 128 KiB)
#   - bounded messages: no line of stderr is longer than kMaxLine bytes, and no output
#     (stdout + stderr) passes 64 KB;
#   - nothing lost: a sentinel database beside every output still reads, unchanged, and
#     /dev/null and /dev/full are still character devices.
# Prints a table of cases per command and exit code; a failing case is printed with its
# command line and output.
set -uo pipefail

autotune="$PWD/autotune/autotune"
bake="$PWD/kernels/bake"
compiler="$PWD/compiler/compiler"
shipped="$PWD/kernels/tuned/h200.txtpb"
tmp="$TEST_TMPDIR/hostile"
rm -rf "$tmp" && mkdir -p "$tmp/work" "$tmp/logs"
export TMPDIR="$tmp" TILETUNE_CACHE_DIR="$tmp/cache" TILETUNE_DB_DIR="$tmp/userdb"
export HOME="$tmp/home" && mkdir -p "$HOME"
readonly kMaxLine=2000
failures=0
declare -A table

# --- Files of every kind an input path may name.
f="$tmp/files"
mkdir -p "$f/folder"
: >"$f/empty.txtpb"
head -c 4096 /dev/urandom >"$f/garbage.txtpb"
cp "$shipped" "$f/good.txtpb"
head -c 3000 "$shipped" >"$f/truncated.txtpb"
"$autotune" merge "$shipped" -o "$f/binary.pb" >/dev/null 2>&1
cp "$f/binary.pb" "$f/binary_named.txtpb"
mkfifo "$f/fifo.txtpb"
ln -s "$f/nowhere" "$f/dangling.txtpb"
ln -s "$f/loop_b" "$f/loop_a" && ln -s "$f/loop_a" "$f/loop_b"
python3 -c "print('copy:u8:64\n' * 400000, end='')" >"$f/huge_suite.txt"
printf 'copy:u8:64\n%.0s' $(seq 1 2000) >"$f/repeated_suite.txt"
printf '\xef\xbb\xbfcopy:u8:64\n' >"$f/bom_suite.txt"
printf 'copy:u8:6\x004\n' >"$f/nul_suite.txt"
printf 'copy:u8:\x1b[2J64\n' >"$f/escape_suite.txt"
# Pristine copies of the regular files: a case that writes to one (merge -o garbage.txtpb
# may) has it restored, so every case sees the same kinds.
mkdir -p "$tmp/pristine"
for x in "$f"/*; do [ -f "$x" ] && [ ! -L "$x" ] && cp "$x" "$tmp/pristine/"; done
sentinel="$tmp/work/sentinel.txtpb"
cp "$shipped" "$sentinel"
sentinel_sum=$(sha256sum "$sentinel" | cut -d' ' -f1)

big=$(head -c 100000 /dev/zero | tr '\0' 'x')
values=(
  ""
  "0"
  "-1"
  "99999999999999999999"
  "1e308"
  "nan"
  "abc"
  "0x10"
  "1,,2"
  ",,,"
  $'line\nbreak'
  $'\e[31mred\e[0m'
  $'\xef\xbb\xbfbom'
  $'\x7f\x01'
  "ünïcødé"
  "../../../../etc/passwd"
  "/dev/null"
  "/dev/full"
  "/"
  "$f/folder"
  "$f/fifo.txtpb"
  "$f/dangling.txtpb"
  "$f/loop_a"
  "$f/garbage.txtpb"
  "$f/binary_named.txtpb"
  "$big"
)

# One case: a name, then the command (argv) after "--", with HOSTILE_ENV (if set) added.
run_case() {
  local group="$1"
  shift 2
  local log="$tmp/logs/case"
  (cd "$tmp/work" && timeout -k 5 30 env ${HOSTILE_ENV:+"$HOSTILE_ENV"} "$@" \
    </dev/null >"$log.out" 2>"$log.err")
  local rc=$?
  local why=""
  if [ "$rc" -ge 124 ]; then why="exit $rc (crash, signal or hang)"; fi
  if [ "$rc" -gt 3 ] && [ -z "$why" ]; then why="exit $rc (not 0-3)"; fi
  local longest
  longest=$(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$log.err")
  if [ "$longest" -gt "$kMaxLine" ]; then why="${why:+$why; }a stderr line of $longest bytes"; fi
  local size=$(($(stat -c %s "$log.out") + $(stat -c %s "$log.err")))
  if [ "$size" -gt 65536 ]; then why="${why:+$why; }$size bytes of output"; fi
  if [ "$(sha256sum "$sentinel" | cut -d' ' -f1)" != "$sentinel_sum" ]; then
    why="${why:+$why; }the sentinel database changed"
    cp "$shipped" "$sentinel"
  fi
  for node in /dev/null /dev/full; do
    [ -c "$node" ] || why="${why:+$why; }$node is no longer a character device"
  done
  [ -p "$f/fifo.txtpb" ] || { why="${why:+$why; }the FIFO input was replaced"; rm -f "$f/fifo.txtpb"; mkfifo "$f/fifo.txtpb"; }
  {
    printf '%s\trc=%s\t%q\t' "$group" "$rc" "${HOSTILE_ENV:-}" | cut -c1-300 | tr -d '\n'
    for a in "${@:2}"; do printf ' %q' "$(printf '%.60s' "$a")"; done
    printf '\t%s\n' "$(head -n 1 "$log.err" | cut -c1-160)"
  } >>"${TEST_UNDECLARED_OUTPUTS_DIR:-$tmp}/hostile_cases.tsv"
  local key="$group rc=$rc"
  table[$key]=$((${table[$key]:-0} + 1))
  if [ -n "$why" ]; then
    failures=$((failures + 1))
    {
      echo "FAIL [$group]: $why"
      printf '  env: %q\n' "${HOSTILE_ENV:-}"
      printf '  command:'; for a in "$@"; do printf ' %q' "$(printf '%.200s' "$a")"; done; echo
      head -c 600 "$log.err" | sed 's/^/  | /'
      echo
    } >&2
  fi
  find "$tmp/work" -mindepth 1 ! -name sentinel.txtpb -exec rm -rf {} + 2>/dev/null
  for x in "$tmp/pristine"/*; do
    cmp -s "$x" "$f/${x##*/}" || cp "$x" "$f/${x##*/}"
  done
  return 0
}

# --- autotune (tuning, dry run) and evaluate: every flag x every value.
sim=(--simulate=seed=1)
base=(--problems=copy:u8:64)
for flag in problems suite output report devices shard target dry_run simulate samples \
  hang_seconds tuned database tune_on_miss worker_problem cost_model model_top_k; do
  for v in "${values[@]}"; do
    case "$flag" in
      problems | suite) args=("${sim[@]}" "--$flag=$v" --output=out.txtpb) ;;
      *) args=("${sim[@]}" "${base[@]}" "--$flag=$v" --output=out.txtpb) ;;
    esac
    run_case "autotune --$flag" -- "$autotune" "${args[@]}"
  done
done
for flag in problems database output tuned devices; do
  for v in "${values[@]}" ; do
    case "$flag" in
      problems) args=("${sim[@]}" "--problems=$v" --output=outeval) ;;
      *) args=("${sim[@]}" "${base[@]}" "--$flag=$v") ;;
    esac
    run_case "autotune evaluate --$flag" -- "$autotune" evaluate "${args[@]}"
  done
done
for v in "${values[@]}"; do
  run_case "autotune --dry_run --target" -- "$autotune" --dry_run "${sim[@]}" "${base[@]}" "--target=$v"
done
for file in "$f"/*_suite.txt; do
  run_case "autotune --suite files" -- "$autotune" --dry_run "${sim[@]}" "--suite=$file"
done

# --- merge, diff, export, fit: every input kind and value, every output value.
for v in "${values[@]}" "$f/empty.txtpb" "$f/truncated.txtpb" "$f/good.txtpb" "$f/binary.pb"; do
  run_case "merge input" -- "$autotune" merge "$v" -o out.txtpb --report
  run_case "merge output" -- "$autotune" merge "$shipped" -o "$v"
  run_case "diff" -- "$autotune" diff "$shipped" "$v"
  run_case "export" -- "$autotune" export "$v" --format=csv
  run_case "export --format" -- "$autotune" export "$shipped" "--format=$v"
  run_case "fit input" -- "$autotune" fit "$v"
  run_case "fit output" -- "$autotune" fit "$shipped" -o "$v"
  run_case "fit --terms" -- "$autotune" fit "$shipped" "--terms=$v"
done

# --- bake: every flag x every value.
for flag in database targets name problems ptx output; do
  for v in "${values[@]}"; do
    args=()
    for a in --database="$shipped" --targets=sm_90a --name=k --output=out.cc --problems=copy:f16:2048; do
      [[ "$a" == --$flag=* ]] || args+=("$a")
    done
    args+=("--$flag=$v")
    run_case "bake --$flag" -- "$bake" "${args[@]}"
  done
done

# --- compiler: every flag x every value.
for flag in op problem dtype tile threads stages ctas_per_sm target emit coalesced_width \
  eviction_policy prefer_instruction loop_layout annotations shape src_shape src_offset \
  kernel stride dilation pad; do
  for v in "${values[@]}"; do
    args=(--op=copy --dtype=f16 --shape=64,64 --tile=8,64 "--$flag=$v")
    [ "$flag" = problem ] && args=("--problem=$v" --tile=8,64)
    [ "$flag" = kernel ] || [ "$flag" = stride ] || [ "$flag" = dilation ] || [ "$flag" = pad ] &&
      args=(--op=im2col --dtype=f16 --shape=1,8,8,8 --kernel=3 --tile=8,64 "--$flag=$v")
    run_case "compiler --$flag" -- "$compiler" "${args[@]}"
  done
done

# --- Environment variables, each with each value, on a small tuning run and a merge.
for var in TILETUNE_CACHE_DIR TILETUNE_DB TILETUNE_DB_DIR TILETUNE_BUILTIN_DB \
  TILETUNE_CUDA_DRIVER_LIBRARY TILETUNE_SHARD SLURM_ARRAY_TASK_ID SLURM_ARRAY_TASK_COUNT \
  TILETUNE_RECORD_MISSES TILETUNE_LINE_INFO; do
  for v in "${values[@]}"; do
    [ ${#v} -gt 4096 ] && continue  # the kernel's limit on one environment string
    HOSTILE_ENV="$var=$v" run_case "env $var" -- "$autotune" "${sim[@]}" "${base[@]}" --output=out.txtpb
  done
done

total=0
echo "== hostile inputs: cases per command and exit code"
for key in "${!table[@]}"; do
  printf '%-36s %5d\n' "$key" "${table[$key]}"
  total=$((total + table[$key]))
done | sort
for key in "${!table[@]}"; do total=$((total + table[$key])); done
echo "== $total cases, $failures failing"
[ "$total" -ge 500 ] || { echo "FAIL: only $total cases" >&2; exit 1; }
[ "$failures" -eq 0 ]

#!/usr/bin/env bash
# The user's loop, end to end on the simulated device (no GPU): a workload records the
# problems it has no exact record for, autotune tunes exactly those, merge ships the
# winners into the user database folder, and the next run resolves every one exactly
# from that file, recording nothing new.
set -euo pipefail
tmp="$TEST_TMPDIR"
fail() { echo "FAIL: $*" >&2; exit 1; }
export TILETUNE_DB_DIR="$tmp/user_db" TILETUNE_RECORD_MISSES="$tmp/misses.txt"
mkdir -p "$TILETUNE_DB_DIR"
workload=(kernels/example/workload --device="Simulated GPU" --cc=9.0
          "copy:f16:1000,1000" "copy:u8:src=301x4099[0:301,5:4000]:dst=301x3995"
          "im2col:f16:2,16,16,8:k=3:p=1" "col2im:f32:2,9,9,4:k=3")

# 1. The workload runs: every problem misses (nothing was tuned on this GPU), each is
#    recorded once however often it runs.
"${workload[@]}" >"$tmp/run1.txt"
"${workload[@]}" >/dev/null
cat "$tmp/run1.txt"
! grep -q " exact " "$tmp/run1.txt" || fail "a problem resolved exactly before tuning"
[[ "$(grep -cv '^#' "$TILETUNE_RECORD_MISSES")" == 4 ]] || { cat "$TILETUNE_RECORD_MISSES"; fail "expected 4 recorded misses"; }

# 2. Tune exactly those problems, 3. ship the winners into the user folder.
autotune/autotune --simulate=seed=1 --suite="$TILETUNE_RECORD_MISSES" --output="$tmp/tuned.txtpb" \
  >"$tmp/tune.out" 2>"$tmp/tune.err" || { cat "$tmp/tune.err"; fail "tuning the misses exited $?"; }
autotune/autotune merge "$tmp/tuned.txtpb" --winners_only -o "$TILETUNE_DB_DIR/mine.txtpb" >/dev/null \
  || fail "merging into the user folder"

# 4. The next run finds every problem exactly, in the user folder, and records nothing.
cp "$TILETUNE_RECORD_MISSES" "$tmp/misses.before"
"${workload[@]}" >"$tmp/run2.txt"
cat "$tmp/run2.txt"
[[ "$(grep -c " exact $TILETUNE_DB_DIR/mine.txtpb\$" "$tmp/run2.txt")" == 4 ]] \
  || fail "not every problem resolved exactly from the user folder"
cmp -s "$TILETUNE_RECORD_MISSES" "$tmp/misses.before" || fail "exact problems were recorded as misses"
echo PASS

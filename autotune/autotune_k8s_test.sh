#!/usr/bin/env bash
# The Kubernetes example (autotune/k8s/) keeps autotune's environment contract: an Indexed
# Job whose TILETUNE_SHARD_COUNT is its completion count, each pod writing its own shard,
# and a merge of exactly those shards. Then the contract itself, on the simulated device:
# pods 0..n-1 (JOB_COMPLETION_INDEX set, no --shard) tune disjoint slices whose merge is
# the whole suite, each problem once.
set -uo pipefail
bin="autotune/autotune"
job="autotune/k8s/tune-indexed-job.yaml"
merge="autotune/k8s/merge-job.yaml"
fail() { echo "FAIL: $*" >&2; exit 1; }

grep -q '^  completionMode: Indexed$' "$job" || fail "the Job is not Indexed"
completions=$(sed -n 's/^  completions: \([0-9]*\)$/\1/p' "$job")
parallelism=$(sed -n 's/^  parallelism: \([0-9]*\)$/\1/p' "$job")
count=$(grep -A1 'name: TILETUNE_SHARD_COUNT' "$job" | sed -n 's/.*value: "\([0-9]*\)".*/\1/p')
[[ -n "$completions" && "$completions" == "$count" ]] || fail "TILETUNE_SHARD_COUNT ($count) is not spec.completions ($completions)"
[[ "$parallelism" == "$completions" ]] || fail "parallelism $parallelism, completions $completions"
grep -q -- '--output=/results/shard-${JOB_COMPLETION_INDEX}.txtpb' "$job" || fail "shards do not write their own databases"
for ((i = 0; i < completions; i++)); do
  grep -q "/results/shard-$i.txtpb" "$merge" || fail "the merge leaves out shard $i"
done
grep -q "/results/shard-$completions.txtpb" "$merge" && fail "the merge names a shard that does not exist"

# The contract on the simulated device, with the Job's shard count.
suite="copy:f16:64;copy:u8:4096;copy:f32:1000,30;im2col:f16:2,9,9,16:k=3:p=1;copy:bf16:7,9;copy:i8:333"
shards=()
for ((i = 0; i < completions; i++)); do
  JOB_COMPLETION_INDEX=$i TILETUNE_SHARD_COUNT=$count "$bin" --simulate=seed=3 --problems="$suite" \
    --output="$TEST_TMPDIR/shard-$i.txtpb" --report=false >/dev/null 2>"$TEST_TMPDIR/err-$i" \
    || { cat "$TEST_TMPDIR/err-$i"; fail "pod $i exited $?"; }
  grep -q "shard $i/$count (Kubernetes" "$TEST_TMPDIR/err-$i" || { cat "$TEST_TMPDIR/err-$i"; fail "pod $i did not take its shard from the environment"; }
  [[ -e "$TEST_TMPDIR/shard-$i.txtpb" ]] && shards+=("$TEST_TMPDIR/shard-$i.txtpb")
done
"$bin" merge "${shards[@]}" -o "$TEST_TMPDIR/all.txtpb" >"$TEST_TMPDIR/merge" 2>&1 || { cat "$TEST_TMPDIR/merge"; fail "merge exited $?"; }
grep -q -- "6 records from .* databases -> 6 records in .* (0 conflicts)" "$TEST_TMPDIR/merge" || { cat "$TEST_TMPDIR/merge"; fail "the shards do not cover the suite exactly once"; }
echo PASS

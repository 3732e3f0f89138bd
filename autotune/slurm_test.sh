#!/usr/bin/env bash
# Tuning on a real Slurm (issue 16): a single-node cluster on localhost only (munged,
# slurmctld and slurmd from Debian's munge and slurm-wlm, which third_party/setup.sh
# installs), started here and stopped on exit. autotune/slurm/tune.sbatch runs as an array
# job of 4 shards on the simulated device; one task is killed mid-run and requeued by
# Slurm; merge.sbatch runs after the array. The merged database must hold every problem
# once, with the winners a single unsharded run finds, and the requeued task must have
# resumed its database rather than started over.
set -uo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
export PATH="$PATH:/usr/sbin:/sbin"  # the daemons live in sbin
for tool in munged mungekey slurmctld slurmd sbatch squeue scontrol sinfo; do
  command -v "$tool" >/dev/null || fail "$tool is missing: install munge and slurm-wlm (bash third_party/setup.sh)"
done
bin="$PWD/autotune/autotune"
tune="$PWD/autotune/slurm/tune.sbatch"
merge="$PWD/autotune/slurm/merge.sbatch"
# Socket paths are short-lived and must be short: not under TEST_TMPDIR.
run=$(mktemp -d /tmp/tt-slurm.XXXXXX)
pids=()
cleanup() {
  [ -n "${SLURM_CONF:-}" ] && scancel --quiet --user="$(id -un)" 2>/dev/null
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  for f in "$run"/slurmd.pid "$run"/slurmctld.pid "$run"/munged.pid; do
    [ -s "$f" ] && kill "$(cat "$f")" 2>/dev/null
  done
  sleep 0.5
  rm -rf "$run"
}
trap cleanup EXIT
mkdir -p "$run"/{state,spool,log,out} && chmod 700 "$run"
user=$(id -un)
host=$(hostname)
port=$((20000 + RANDOM % 20000))

# munge, with a key of its own.
mungekey -c -k "$run/munge.key" -b 1024 >/dev/null 2>&1 || fail "mungekey failed"
chmod 600 "$run/munge.key"
munged --force --key-file="$run/munge.key" --socket="$run/munge.sock" --pid-file="$run/munged.pid" \
  --log-file="$run/log/munged.log" --seed-file="$run/munge.seed" || fail "munged did not start"

cat >"$run/slurm.conf" <<CONF
ClusterName=tiletune-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
AuthInfo=socket=$run/munge.sock
CredType=cred/munge
SlurmUser=$user
SlurmdUser=$user
StateSaveLocation=$run/state
SlurmdSpoolDir=$run/spool
SlurmctldPidFile=$run/slurmctld.pid
SlurmdPidFile=$run/slurmd.pid
SlurmctldLogFile=$run/log/slurmctld.log
SlurmdLogFile=$run/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
# The node may have fewer cores than the 4 tasks run at once: trust the configured CPUs.
SlurmdParameters=config_overrides
JobRequeue=1
NodeName=$host NodeAddr=127.0.0.1 CPUs=4 RealMemory=2000 State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
CONF
export SLURM_CONF="$run/slurm.conf"
slurmctld -f "$SLURM_CONF" || fail "slurmctld did not start: $(tail -3 "$run/log/slurmctld.log")"
slurmd -f "$SLURM_CONF" || fail "slurmd did not start: $(tail -3 "$run/log/slurmd.log")"
for _ in $(seq 1 100); do
  [ "$(sinfo -h -o %t 2>/dev/null)" = "idle" ] && break
  sleep 0.2
done
[ "$(sinfo -h -o %t)" = "idle" ] || fail "the node did not come up ($(sinfo -h -o %t)): $(grep -i error "$run/log/slurmd.log" "$run/log/slurmctld.log" | grep -v pmix | tail -3)"

# 16 problems, 4 per shard; a simulated problem takes a fraction of a second.
problems="copy:f16:64"
for n in 100 200 300 400 500 600 700 800 900 1000 1100 1200 1300 1400 1500; do problems="$problems;copy:f16:$n,$((n + 3))"; done
sim="seed=11"
export TILETUNE_AUTOTUNE="$bin" TILETUNE_OUT="$run/out" TILETUNE_PROBLEMS="$problems" \
  TILETUNE_ARGS="--simulate=$sim" TILETUNE_SHARDS=4 TILETUNE_CACHE_DIR="$run/cache"

start=$(date +%s)
job=$(sbatch --parsable --array=0-3 --output="$run/log/task-%a.out" "$tune") || fail "sbatch refused the array job"
merge_job=$(sbatch --parsable --dependency=afterok:"$job" --output="$run/log/merge.out" "$merge") \
  || fail "sbatch refused the merge job"

# Kill task 1 once it has written part of its shard, and have Slurm requeue it.
for _ in $(seq 1 300); do
  [ -s "$run/out/shard-1.txtpb" ] && break
  sleep 0.1
done
[ -s "$run/out/shard-1.txtpb" ] || fail "task 1 wrote nothing: $(cat "$run/log/task-1.out" 2>/dev/null | tail -3)"
before=$(grep -c '^records {' "$run/out/shard-1.txtpb")
scontrol requeue "${job}_1" || fail "scontrol requeue ${job}_1 failed"
# Slurm holds a requeued job back (its begin time moves on); let it start now.
for _ in $(seq 1 100); do
  if [ "$(squeue -h -j "${job}_1" -o %T 2>/dev/null)" = "PENDING" ]; then
    scontrol update JobId="${job}_1" StartTime=now >/dev/null 2>&1 && break
  fi
  sleep 0.1
done

# Wait for the merge (it runs only after every task succeeded).
for _ in $(seq 1 600); do
  [ -z "$(squeue -h 2>/dev/null)" ] && break
  sleep 0.2
done
# What each task did, for a failure to name: its state and exit code as slurmctld keeps
# them, and the end of its log.
tasks_report() {
  scontrol show job "$job" 2>/dev/null | grep -oE '\b(JobId|ArrayTaskId|JobState|Restarts|ExitCode)=[^ ]*' | paste -sd' '
  for f in "$run"/log/task-*.out; do echo "== $(basename "$f")"; tail -4 "$f"; done
}
[ -z "$(squeue -h)" ] && [ -s "$run/out/tuned.txtpb" ] \
  || fail "the merge did not run: $(cat "$run/log/merge.out" 2>/dev/null | tail -3; squeue; tasks_report)"
elapsed=$(( $(date +%s) - start ))

grep -q 'restart 1' "$run/log/task-1.out" || { cat "$run/log/task-1.out"; fail "task 1 was not requeued"; }
if [ "$before" -gt 0 ]; then
  grep -q "resuming .*shard-1.txtpb" "$run/log/task-1.out" || { cat "$run/log/task-1.out"; fail "the requeued task did not resume"; }
fi
grep -q -- "16 records from 4 databases -> 16 records in .* (0 conflicts)" "$run/log/merge.out" \
  || { cat "$run/log/merge.out"; fail "the shards are not 16 problems, each once"; }

# The same winners as one unsharded run.
"$bin" --simulate="$sim" --problems="$problems" --report=false --output="$run/single.txtpb" \
  >/dev/null 2>"$run/log/single.err" || { cat "$run/log/single.err"; fail "the single run failed"; }
winners() {  # one line per record: its problem, then its winner's source hash
  awk '/^records \{/ {p = ""; inp = 0}
       /^  problem \{/ {inp = 1}
       inp {p = p $0}
       inp && /^  \}/ {inp = 0}
       /^  winner \{/ {w = 1}
       w && /^    source_sha256:/ {print p " -> " $2; w = 0}' "$1" | sort
}
[ "$(winners "$run/out/tuned.txtpb")" = "$(winners "$run/single.txtpb")" ] \
  || { diff <(winners "$run/out/tuned.txtpb") <(winners "$run/single.txtpb") | head; fail "the merged database differs from a single run"; }
[ "$(winners "$run/out/tuned.txtpb" | wc -l)" = 16 ] || fail "not 16 winners"
echo "PASS: array of 4 with one task requeued (it had $before of its records), merged, in ${elapsed} s"

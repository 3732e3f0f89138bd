#!/usr/bin/env bash
# Prepares, on the CPU, the device A/B of a selection or tile-fitting change: builds
# //autotune at REV (the commit before the change) and at the working tree, lists the
# problems of SUITE... whose built-in launch differs (bench/launch_diff.sh), and stages
# both binaries and that list for bench/evaluate_on_device.sh. Usage:
#   bash bench/prepare_ab.sh REV SUITE...
# e.g. bash bench/prepare_ab.sh HEAD~1 autotune/suites/heldout*.txt
# Then, on the device (carry .device), the command it prints last. REV is built in this
# checkout (its tracked files checked out, then restored, so the build is incremental):
# the working tree must be clean. The moved problems go to .device/moved.txt, the
# baseline binary to .device/base/autotune_<rev>.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: $0 REV SUITE..." >&2; exit 2; }
rev=$(git rev-parse --short "$1") || { echo "prepare_ab: no commit '$1'" >&2; exit 2; }
shift
for suite in "$@"; do
  [ -f "$suite" ] || { echo "prepare_ab: no suite file '$suite'" >&2; exit 2; }
done
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  echo "prepare_ab: the working tree has changes; commit or stash them first" >&2
  exit 2
fi
head=$(git rev-parse HEAD)
trap 'git reset -q --hard "$head"' EXIT
# The baseline: REV's tracked files in place (files only the working tree has stay, unused
# unless REV's BUILD files name them); a hard reset to HEAD restores the clean tree.
git checkout -q "$rev" -- .
bazel build //autotune
mkdir -p .device/base
rm -f ".device/base/autotune_$rev"
cp -L bazel-bin/autotune/autotune ".device/base/autotune_$rev"
chmod u+w ".device/base/autotune_$rev"
git reset -q --hard "$head"
trap - EXIT
bash bench/stage_for_device.sh //autotune
# launch_diff's last line is the --problems list; one problem a line for SUITE=.
diff_out=$(bash bench/launch_diff.sh ".device/base/autotune_$rev" bazel-bin/autotune/autotune "$@")
echo "$diff_out"
list=$(echo "$diff_out" | sed -n "s/^--problems='\(.*\)'$/\1/p")
if [ -z "$list" ]; then
  echo "prepare_ab: no launch moves between $rev and the working tree; nothing to A/B"
  exit 0
fi
echo "$list" | tr ';' '\n' > .device/moved.txt
echo "on the device (carry .device):"
echo "  SUITE=.device/moved.txt BASELINE=.device/base/autotune_$rev RUNS=2 ROUNDS=7 bash bench/evaluate_on_device.sh"

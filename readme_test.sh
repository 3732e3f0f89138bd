#!/usr/bin/env bash
# README.md's environment-variable table is the one every tool prints in --help (all come
# from EnvironmentHelp() in compiler/base/command_line.cc): the same variables, in the
# same order, with the same words, in README and in the --help of autotune (and merge,
# diff, export, evaluate, fit, rank, replay), compiler and bake. And README keeps the two commands CI runs.
set -euo pipefail
readme="README.md"
env_of() { "$@" --help | sed -n '/^environment:$/,/^$/p' | sed '1d;/^$/d;/^exit codes/d'; }
help=$(env_of autotune/autotune)
for tool in "autotune/autotune merge" "autotune/autotune diff" "autotune/autotune export" \
  "autotune/autotune evaluate" "autotune/autotune fit" "autotune/autotune rank" \
  "autotune/autotune replay" compiler/compiler kernels/bake; do
  # shellcheck disable=SC2086
  [ "$(env_of $tool)" = "$help" ] || { echo "FAIL: $tool --help has another environment table" >&2; exit 1; }
done
[ -n "$help" ] || { echo "FAIL: autotune --help printed no environment table" >&2; exit 1; }
expected=$(printf '%s\n' "$help" | sed -E 's/^  ([^ ].*[^ ]|[^ ])  +(.*)$/| `\1` | \2 |/')
actual=$(sed -n '/^<!-- environment:/,/^<!-- end environment -->/p' "$readme" | grep '^| `' || true)
if [ "$expected" != "$actual" ]; then
  echo "FAIL: README.md's environment table differs from autotune --help:" >&2
  diff <(printf '%s\n' "$expected") <(printf '%s\n' "$actual") >&2 || true
  exit 1
fi
grep -qxF '    bash third_party/setup.sh && bazel run //autotune' "$readme" ||
  { echo "FAIL: README.md lost the command that tunes" >&2; exit 1; }
grep -qxF '    bash third_party/setup.sh && bazel test //...' "$readme" ||
  { echo "FAIL: README.md lost the command that tests" >&2; exit 1; }
echo "README.md's environment table matches --help ($(printf '%s\n' "$expected" | wc -l) variables)"

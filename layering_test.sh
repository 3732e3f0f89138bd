#!/usr/bin/env bash
# Fails when anything under compiler/ or kernels/ depends, directly or not, on //autotune.
# The argument is the transitive dependency list of every target there (//:layered_dependencies).
set -euo pipefail
deps="$1"
fail() { echo "FAIL: $*" >&2; exit 1; }
# The query is not vacuous: it reaches the operators, the registry and the public library.
for expected in //compiler/ops:registry //compiler/ops/im2col:im2col //kernels:library \
                //compiler/tuning_db:tuning_db; do
  grep -qx "$expected" "$deps" || fail "the dependency list lacks $expected"
done
if grep -E '^//autotune[:/]' "$deps"; then
  fail "targets under compiler/ or kernels/ depend on the //autotune targets above"
fi
echo "PASS: $(wc -l <"$deps") targets under compiler/ and kernels/ and their dependencies; none in //autotune"

#!/usr/bin/env bash
# The problems whose built-in launch differs between two autotune binaries (a selection
# or tile-fitting change), found on the CPU with `autotune rank`: the set an A/B
# (bench/evaluate_on_device.sh BASELINE=...) has to measure. Usage:
#   bash bench/launch_diff.sh OLD_AUTOTUNE NEW_AUTOTUNE SUITE...
# Prints each changed problem's launch under both, then a --problems list of them.
# OLD_DB / NEW_DB stack a database on that side's built-in ones (TILETUNE_DB, which either
# side otherwise inherits): the same binary twice, with and without new records, says which
# launches the records move.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 OLD_AUTOTUNE NEW_AUTOTUNE SUITE..." >&2; exit 2; }
old="$1" new="$2"; shift 2
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
# One line per problem: its spec, then the launch the library fits to it.
launches() {
  local binary="$1" suite="$2" db="$3"
  grep -v '^\s*#' "$suite" | grep -v '^\s*$' | while read -r spec; do
    fitted=$(TILETUNE_DB="$db" "$binary" rank "$spec" --top=1 2>&1 | grep -m1 'fitted to this problem:' |
             sed 's/.*fitted to this problem: //' || true)
    printf '%s\t%s\n' "$spec" "${fitted:-(none)}"
  done
}
changed=()
for suite in "$@"; do
  launches "$old" "$suite" "${OLD_DB-${TILETUNE_DB:-}}" > "$work/old"
  launches "$new" "$suite" "${NEW_DB-${TILETUNE_DB:-}}" > "$work/new"
  while IFS=$'\t' read -r spec before && IFS=$'\t' read -r _ after <&3; do
    if [ "$before" != "$after" ]; then
      printf '%s (%s)\n  before: %s\n  after:  %s\n' "$spec" "$(basename "$suite")" "$before" "$after"
      changed+=("$spec")
    fi
  done < "$work/old" 3< "$work/new"
done
echo "${#changed[@]} problem(s) launch differently"
[ ${#changed[@]} -eq 0 ] || (IFS=';'; echo "--problems='${changed[*]}'")

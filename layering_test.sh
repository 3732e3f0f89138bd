#!/usr/bin/env bash
# The layering of DESIGN.md, enforced on the dependency graph.
#   $1  every dependency, direct or not, of every target under compiler/ and kernels/
#       (//:layered_dependencies): none may be in //autotune.
#   $2  the packages listed in LAYERED_PACKAGES: every compiler/ or kernels/ package the
#       graph reaches must be one of them, so a new package cannot slip past the rules.
#   $3… LAYER=DEPS_FILE=PACKAGES=ALLOWED: the dependencies of a layer's shipped targets may
#       lie only in its own packages, in ALLOWED ("X/..." is X and below) or outside the
#       workspace (@...).
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
deps="$1"
listed="$2"
shift 2

# The query is not vacuous: it reaches the operators, the registry and the public library.
for expected in //compiler/ops:registry //compiler/ops/im2col:im2col //kernels:library \
                //compiler/tuning_db:tuning_db; do
  grep -qx "$expected" "$deps" || fail "the dependency list lacks $expected"
done
if grep -E '^//autotune[:/]' "$deps"; then
  fail "targets under compiler/ or kernels/ depend on the //autotune targets above"
fi

package_of() { local label="$1"; echo "${label%%:*}"; }

# Every compiler/ or kernels/ package reached is listed.
while read -r package; do
  [[ ",$listed," == *",$package,"* ]] ||
    fail "$package is reached from compiler/ or kernels/ but not listed in LAYERED_PACKAGES (root BUILD)"
done < <(grep -E '^//(compiler|kernels)([:/])' "$deps" | sed 's/:.*//' | sort -u)

# A package is allowed when it is one of the layer's own or matches an allowed entry.
allowed_in() {
  local package="$1" list="$2" entry
  IFS=',' read -r -a entries <<<"$list"
  for entry in "${entries[@]}"; do
    [[ -z "$entry" ]] && continue
    if [[ "$entry" == */... ]]; then
      local root="${entry%/...}"
      [[ "$package" == "$root" || "$package" == "$root"/* ]] && return 0
    elif [[ "$package" == "$entry" ]]; then
      return 0
    fi
  done
  return 1
}

layers=0
for spec in "$@"; do
  IFS='=' read -r layer file own allowed <<<"$spec"
  [[ -s "$file" ]] || fail "layer $layer: empty dependency list $file"
  bad=()
  while read -r label; do
    package="$(package_of "$label")"
    [[ "$package" == "//" ]] && continue  # the root package_group //:internal
    allowed_in "$package" "$own,$allowed" || bad+=("$label")
  done < <(grep '^//' "$file")
  if ((${#bad[@]})); then
    printf '  %s\n' "${bad[@]}" >&2
    fail "layer $layer ($own) depends on the targets above; DESIGN.md allows only ${allowed:-nothing of the workspace}"
  fi
  layers=$((layers + 1))
done
echo "PASS: $(wc -l <"$deps") targets under compiler/ and kernels/ and their dependencies, none in //autotune; $layers layers keep to their allowed dependencies"

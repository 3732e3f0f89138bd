#!/usr/bin/env bash
# CI: tiletune as other Bazel projects use it. Builds each consumer workspace under
# kernels/example/ (consumer: tiletune's dependencies as declared by repositories.bzl;
# consumer_own_absl: the same with the workspace's own abseil) from this checkout, each in
# its own output base, then runs each binary's no-GPU path (one clear line on stderr, a
# non-zero exit), and checks that tiletune's internals are not visible to a consumer.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
fail() { echo "consumers: FAIL: $*" >&2; exit 1; }
for variant in consumer consumer_own_absl; do
  start=$(date +%s)
  base="/tmp/tiletune-${variant}"
  cd "$root/kernels/example/$variant"
  # The sandbox flag only quiets Debian's linux-sandbox; the build needs no flags.
  bazel --output_base="$base" build --spawn_strategy=processwrapper-sandbox //:all
  for app in plan_app baked_app library_app; do
    set +e
    TILETUNE_CUDA_DRIVER_LIBRARY=/nonexistent/libcuda.so.1 "./bazel-bin/$app" >"$base/$app.out" 2>"$base/$app.err"
    code=$?
    set -e
    cat "$base/$app.out" "$base/$app.err"
    [[ $code != 0 ]] || fail "$variant/$app exited 0 without a GPU"
    [[ "$(wc -l <"$base/$app.err")" == 1 ]] || fail "$variant/$app: not one line on stderr"
    grep -q "no CUDA driver" "$base/$app.err" || fail "$variant/$app: the line does not say why"
  done
  grep -q "baked sm_90a kernel" "$base/baked_app.out" || fail "$variant: the baked kernel was not found"
  if bazel --output_base="$base" build --spawn_strategy=processwrapper-sandbox \
      //private_use:uses_internals >"$base/private.log" 2>&1; then
    fail "$variant: a consumer could depend on tiletune's internals"
  fi
  grep -q "is not visible from target '//private_use:uses_internals'" "$base/private.log" \
    || { cat "$base/private.log"; fail "$variant: the refusal does not name the visibility"; }
  bazel --output_base="$base" shutdown
  echo "consumers: $variant built and ran in $(( $(date +%s) - start )) s"
done

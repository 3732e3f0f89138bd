#!/usr/bin/env bash
# A GPU test on a machine without a usable driver skips, unless TILETUNE_REQUIRE_GPU=1:
# then it fails, naming why (issue 16: a broken GPU setup must not look green).
set -uo pipefail
bin="kernels/runtime/runtime_gpu_test"
fail() { echo "FAIL: $*" >&2; exit 1; }
export TILETUNE_CUDA_DRIVER_LIBRARY=/nonexistent/libcuda.so.1  # No driver, even on a GPU host.

TILETUNE_REQUIRE_GPU=0 "$bin" >"$TEST_TMPDIR/lenient" 2>&1 || { cat "$TEST_TMPDIR/lenient"; fail "without TILETUNE_REQUIRE_GPU the test should skip and pass"; }
grep -q "SKIPPED" "$TEST_TMPDIR/lenient" || fail "the test did not say it skipped"

if TILETUNE_REQUIRE_GPU=1 "$bin" >"$TEST_TMPDIR/strict" 2>&1; then
  cat "$TEST_TMPDIR/strict"
  fail "with TILETUNE_REQUIRE_GPU=1 and no driver the test passed"
fi
grep -q "TILETUNE_REQUIRE_GPU=1, and no GPU: no CUDA driver: cannot load /nonexistent/libcuda.so.1" \
  "$TEST_TMPDIR/strict" || { cat "$TEST_TMPDIR/strict"; fail "the failure does not say why"; }
echo PASS

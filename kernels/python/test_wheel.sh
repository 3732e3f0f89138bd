#!/usr/bin/env bash
# The Python package as a user gets it: builds the wheel, installs it into a fresh virtual
# environment (no Bazel on the path, outside the source tree), and runs the CPU tests
# from it. On a machine with PyTorch and a GPU, kernels/python/tests/gpu/ runs too when
# TILETUNE_PYTHON_GPU=1.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/tiletune-wheel-XXXXXX")"
trap 'rm -rf "$work"' EXIT
bash "$root/kernels/python/build_wheel.sh" "$work/dist"
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check "$work"/dist/tiletune-*.whl pytest
cp -r "$root/kernels/python/tests" "$work/tests"
cd "$work"  # not the source tree: `import tiletune` must find the installed package
env -u PYTHONPATH PATH="$work/venv/bin:/usr/bin:/bin" "$work/venv/bin/python" -m pytest -q tests/test_api.py

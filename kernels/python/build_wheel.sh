#!/usr/bin/env bash
# Builds the tiletune wheel in one command: libtiletune.so (Bazel, linked against the
# shared abseil and protobuf), then the package with those libraries inside it.
#   bash kernels/python/build_wheel.sh [OUT_DIR]    (default dist/)
#   pip install dist/tiletune-*.whl
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:-dist}"
bazel build --define=tiletune_link=shared //kernels/python:libtiletune.so
python3 kernels/python/make_wheel.py bazel-bin/kernels/python/libtiletune.so "$out"

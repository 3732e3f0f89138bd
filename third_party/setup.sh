#!/usr/bin/env bash
# Installs everything tiletune's build and tests need on Debian 12, idempotently, and says what is
# missing when it cannot. Run as root (or with sudo available). Safe to run again.
#
#   bash third_party/setup.sh
set -euo pipefail

packages=(
  bazel-bootstrap      # Bazel 4.2.3 (WORKSPACE mode); runs offline with third_party/ shims
  g++
  libabsl-dev          # abseil 20220623, linked statically
  libprotobuf-dev      # protobuf 3.21 runtime, linked statically
  protobuf-compiler    # protoc
  libgtest-dev         # googletest
  libgmock-dev         # googlemock
  libbenchmark-dev     # Google Benchmark (shared library)
  zlib1g-dev           # protobuf's compression dependency; PNG decoding in report tests
  librsvg2-bin         # rsvg-convert: the report chart rendered in report_render_test
  munge                # Slurm's authentication, for autotune's slurm_test
  slurm-wlm            # slurmctld, slurmd and the client: a localhost cluster in slurm_test
  strace               # kills a process between two renames in autotune_output_test
  clang                # .ci/fuzz.sh: libFuzzer with AddressSanitizer and UBSan
  libclang-rt-14-dev   # their run-time libraries
  python3-venv         # kernels/python/test_wheel.sh: the wheel installed in a fresh venv
)

fail() { echo "setup: $*" >&2; exit 1; }

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if ! command -v apt-get >/dev/null; then
    fail "missing packages ${missing[*]} and no apt-get: install them with your package manager"
  fi
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || fail "missing packages ${missing[*]}: run as root or install sudo"
    sudo=sudo
  fi
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

cuda="${CUDA_PATH:-/usr/local/cuda}"
for f in include/cuda.h include/nvrtc.h lib64/libcudart_static.a; do
  [ -e "$cuda/$f" ] || fail "no CUDA toolkit found at $cuda ($f is missing): install the CUDA 13 toolkit or set CUDA_PATH"
done
ls "$cuda"/lib64/libnvrtc.so.* >/dev/null 2>&1 || fail "$cuda/lib64 has no libnvrtc.so.*: tiletune compiles kernels with NVRTC"
command -v bazel >/dev/null || fail "bazel is not on PATH after installing bazel-bootstrap"
echo "setup: ok (CUDA at $cuda, $(bazel --version 2>/dev/null | head -1 || echo bazel))"

#!/usr/bin/env bash
# Builds binaries and copies them into .device/ (ignored by git) so the device tool can
# carry them to the GPU machine, which has no Bazel. Usage:
#   bash bench/stage_for_device.sh //kernels/runtime:runtime_gpu_test //bench:copy_benchmark
# Then, on the GPU machine: bash bench/run_on_device.sh (carry .device). The binaries go
# packed, as .device/bin.tgz; the device scripts unpack them.
set -euo pipefail
cd "$(dirname "$0")/.."
grep -qx '/.device/' .git/info/exclude 2>/dev/null || echo '/.device/' >> .git/info/exclude
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  # Fuzz binaries (tag fuzz) stay here: .ci/fuzz.sh runs them. Manual ones build only with
  # their own flags (libtiletune.so: kernels/python/build_wheel.sh stages the wheel).
  mapfile -t targets < <(bazel query 'attr(tags, "gpu", tests(//...)) + kind("cc_binary", //...) except attr(tags, "fuzz", //...) except attr(tags, "manual", //...)' 2>/dev/null)
fi
rm -f .device/bin.tgz  # a failed staging leaves none behind to run
bazel build "${targets[@]}"
rm -rf .device/bin && mkdir -p .device/bin  # .device/wheel (the Python wheel) stays
for t in "${targets[@]}"; do
  label="${t#//}"
  [[ "$label" == *:* ]] || label="$label:${label##*/}"  # //autotune -> autotune:autotune
  cp -L "bazel-bin/${label/://}" .device/bin/
done
cp -L /usr/lib/x86_64-linux-gnu/libbenchmark.so.1debian .device/bin/ 2>/dev/null || true
ls -la .device/bin
# The device tool carries at most 64 MiB: packed, the binaries are about a third of their
# size. The device scripts unpack them (bench/device_env.sh).
rm -f .device/bin.tgz && tar -C .device -czf .device/bin.tgz bin && rm -rf .device/bin
du -h .device/bin.tgz

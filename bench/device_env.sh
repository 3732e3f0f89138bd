# Sourced by the scripts that run on the GPU machine, from the repository root: unpacks the
# binaries bench/stage_for_device.sh packed into .device/bin.tgz (the device tool carries
# at most 64 MiB; the staged binaries are over 100 MB unpacked), puts them and cuDNN (from
# python3's nvidia.cudnn) on LD_LIBRARY_PATH, and makes a GPU test that finds no GPU, or
# not the architecture it needs, fail instead of skipping.
if [ -f .device/bin.tgz ] && { [ ! -d .device/bin ] || [ .device/bin.tgz -nt .device/bin ]; }; then
  rm -rf .device/bin && tar -C .device -xzf .device/bin.tgz && touch .device/bin
fi
export LD_LIBRARY_PATH="$PWD/.device/bin:${LD_LIBRARY_PATH:-}"
export TILETUNE_REQUIRE_GPU=1
if cudnn_lib=$(python3 -c 'import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], "lib"))' 2>/dev/null); then
  export LD_LIBRARY_PATH="$cudnn_lib:$LD_LIBRARY_PATH"
fi

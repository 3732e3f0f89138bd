# Sourced by the scripts that run on the GPU machine, from the repository root: unpacks the
# binaries bench/stage_for_device.sh packed into .device/bin.tgz (the device tool carries
# at most 64 MiB; the staged binaries are over 100 MB unpacked) unless .device/bin already
# holds that archive's contents, puts them and cuDNN (from python3's nvidia.cudnn) on
# LD_LIBRARY_PATH, and makes a GPU test that finds no GPU, or not the architecture it
# needs, fail instead of skipping. Returns 1 where the archive does not unpack.
if [ -f .device/bin.tgz ]; then
  tt_stamp=$(sha256sum .device/bin.tgz | cut -d' ' -f1)
  if [ "$(cat .device/bin/.unpacked_from 2>/dev/null)" != "$tt_stamp" ]; then
    rm -rf .device/bin
    if ! tar -C .device -xzf .device/bin.tgz; then
      echo "device_env.sh: .device/bin.tgz does not unpack; stage again" >&2
      rm -rf .device/bin
      return 1
    fi
    echo "$tt_stamp" > .device/bin/.unpacked_from
  fi
fi
export LD_LIBRARY_PATH="$PWD/.device/bin:${LD_LIBRARY_PATH:-}"
export TILETUNE_REQUIRE_GPU=1
if cudnn_lib=$(python3 -c 'import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], "lib"))' 2>/dev/null); then
  export LD_LIBRARY_PATH="$cudnn_lib:$LD_LIBRARY_PATH"
fi

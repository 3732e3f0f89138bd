// bazel run //autotune -- [--device=N]
// bazel run //autotune -- merge INPUT... -o OUTPUT [--report]
//
// Finds the GPU to tune for and reports it. The search over lowering variants is built on
// top of this entry point. `merge` merges tuning databases (autotune/merge_command.h);
// it exits 0 on success, 1 when a database cannot be read or written, 2 on bad arguments.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "autotune/merge_command.h"
#include "kernels/runtime/runtime.h"

ABSL_FLAG(int, device, 0, "CUDA device ordinal to tune for.");

int main(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "merge") {
    const std::vector<std::string> args(argv + 2, argv + argc);
    return tiletune::autotune::RunMergeCommand(args, stdout, stderr);
  }
  absl::ParseCommandLine(argc, argv);
  auto context = tiletune::Context::Create(absl::GetFlag(FLAGS_device));
  if (!context.ok()) {
    std::fprintf(stderr, "autotune: %s\n", std::string(context.status().message()).c_str());
    return absl::IsUnavailable(context.status()) ? 3 : 2;
  }
  const tiletune::DeviceInfo& info = (*context)->info();
  std::printf("autotune: device %d is %s (%s, %d SMs, %lld MiB L2)\n", info.ordinal,
              info.name.c_str(), info.ArchName().c_str(), info.sm_count,
              static_cast<long long>(info.l2_bytes >> 20));
  return 0;
}

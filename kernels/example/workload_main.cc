// A stand-in for a user's program in the capture -> tune -> ship test
// (capture_tune_ship_test.sh): it asks the library, configured only by the environment
// (TILETUNE_RECORD_MISSES, TILETUNE_DB_DIR, ...), what it would launch for each problem
// spec on the command line on a GPU called --device (compute capability --cc), and prints
// one line per problem: "<spec> <level> <database>". No GPU is needed.
//
//   workload --device='Simulated GPU' --cc=9.0 copy:f16:1000,1000 im2col:f16:2,16,16,8:k=3
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "compiler/base/command_line.h"
#include "compiler/ops/builtin_ops.h"
#include "compiler/tuning_db/tuning_db.pb.h"
#include "kernels/library.h"

int main(int argc, char** argv) {
  using namespace tiletune;
  const std::vector<FlagSpec> flags = {
      {"device", FlagType::kString, "NAME: the GPU's name (default NVIDIA H200)"},
      {"cc", FlagType::kString, "MAJOR.MINOR: its compute capability (default 9.0)"},
  };
  absl::StatusOr<CommandLine> line =
      ParseCommandLine(std::vector<std::string>(argv + 1, argv + argc), flags, 1 << 20);
  if (!line.ok()) {
    std::fprintf(stderr, "workload: %s\n", std::string(line.status().message()).c_str());
    return 2;
  }
  tuning::DeviceIdentity device;
  device.set_name(line->String("device", "NVIDIA H200"));
  std::vector<std::string> cc = absl::StrSplit(line->String("cc", "9.0"), '.');
  int major = 0, minor = 0;
  if (cc.size() != 2 || !absl::SimpleAtoi(cc[0], &major) || !absl::SimpleAtoi(cc[1], &minor)) {
    std::fprintf(stderr, "workload: --cc=%s: expected MAJOR.MINOR\n", line->String("cc").c_str());
    return 2;
  }
  device.set_cc_major(major);
  device.set_cc_minor(minor);
  absl::StatusOr<std::unique_ptr<Library>> library = Library::Create({});
  if (!library.ok()) {
    std::fprintf(stderr, "workload: %s\n", std::string(library.status().message()).c_str());
    return 1;
  }
  for (const std::string& spec : line->positional()) {
    absl::StatusOr<std::unique_ptr<TileOp>> op = BuiltinTileOps().ParseSpec(spec);
    if (!op.ok()) {
      std::fprintf(stderr, "workload: %s\n", std::string(op.status().message()).c_str());
      return 2;
    }
    absl::StatusOr<Explanation> explained = (*library)->Explain(**op, device);
    if (!explained.ok()) {
      std::fprintf(stderr, "workload: %s\n", std::string(explained.status().message()).c_str());
      return 1;
    }
    std::printf("%s %s %s\n", spec.c_str(), ResolutionLevelName(explained->level).c_str(),
                explained->database.empty() ? "-" : explained->database.c_str());
  }
  return 0;
}

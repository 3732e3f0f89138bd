// The `//compiler` command line: problem + hints + target -> plan, CUDA source or PTX.
//
//   bazel run //compiler -- --op=copy --dtype=f16 --shape=8192,8192 --tile=128,128
//       --target=sm_90a --prefer_instruction=tma --eviction_policy=evict_first --emit=plan
//   bazel run //compiler -- --op=im2col --dtype=f16 --shape=64,56,56,64 --kernel=3 --stride=1
//       --dilation=1 --pad=1 --tile=128,64 --target=sm_90a --emit=plan
//
// Flags are --name=value. Bad flags or values print one line naming the value and what is
// accepted, and return exit code 2.
#ifndef COMPILER_COMPILER_CLI_H_
#define COMPILER_COMPILER_CLI_H_

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/copy_op.h"
#include "compiler/ir/im2col_op.h"
#include "compiler/lower/lowered_kernel.h"

namespace tiletune {

// Parses "--name=value" arguments (a bare "--name" means "true"). InvalidArgument for
// anything else, naming the argument.
absl::StatusOr<std::map<std::string, std::string>> ParseFlags(const std::vector<std::string>& args);

// The copy problem the flags describe: --dtype, --shape, and optionally --src_shape,
// --src_offset, --dst_shape, --dst_offset (the copy of --shape lies at those offsets of
// larger row-major buffers), plus the hint flags.
absl::StatusOr<CopyOp> CopyOpFromFlags(const std::map<std::string, std::string>& flags);

// The im2col problem the flags describe: --dtype, --shape=N,H,W,C (a dense NHWC image),
// --kernel, --stride, --dilation, --pad (each one value for both axes or two, h then w;
// defaults stride 1, dilation 1, pad 0), plus the hint flags. Copy's slice flags are
// rejected.
absl::StatusOr<Im2colOp> Im2colOpFromFlags(const std::map<std::string, std::string>& flags);

// --tile, --threads, --stages, --through_shared, --ctas_per_sm.
absl::StatusOr<LaunchParams> LaunchFromFlags(const std::map<std::string, std::string>& flags);

// A comma-separated list of integers ("8192,8192"), each within [min_value, max_value].
absl::StatusOr<std::vector<int64_t>> ParseIntList(const std::string& flag, const std::string& text,
                                                  int64_t min_value, int64_t max_value);

// Runs the command; returns the process exit code (0 ok, 2 bad input, 1 other failure).
int RunCompilerCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace tiletune

#endif  // COMPILER_COMPILER_CLI_H_

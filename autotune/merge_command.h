// `autotune merge`: merges tuning databases from the command line.
//
//   bazel run //autotune -- merge a.txtpb b.pb c.pb -o merged.txtpb [--report]
//
// Reads every input (ReadTuningDatabase: text or binary by name), merges them
// (MergeDatabases), prints one line per conflict and a summary to `out`, and writes the
// result atomically; with --report also its Markdown report and SVG chart beside it
// (autotune/report.h). Relative paths are taken from $BUILD_WORKING_DIRECTORY when set
// (where `bazel run` was invoked), else from the working directory.
#ifndef AUTOTUNE_MERGE_COMMAND_H_
#define AUTOTUNE_MERGE_COMMAND_H_

#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace tiletune {
namespace autotune {

// Exit codes of RunMergeCommand.
inline constexpr int kMergeOk = 0;
inline constexpr int kMergeFailed = 1;  // an input could not be read, or the output written
inline constexpr int kMergeBadArguments = 2;

struct MergeArguments {
  std::vector<std::string> inputs;  // at least one
  std::string output;               // required
  bool report = false;              // --report: also write the report beside the output
  // --winners_only: drop each record's other candidates (a database to ship: the winner,
  // its statistics and provenance stay).
  bool winners_only = false;
  // --replace: a later input's record replaces an earlier one's for the same key, faster
  // or not (MergeOptions::later_inputs_replace).
  bool replace = false;
  bool help = false;                // --help / -h: print usage, do nothing else
  bool version = false;             // --version: print the version, do nothing else
};

// Parses the arguments that follow "merge" with the shared parser
// (compiler/base/command_line.h): `INPUT... (-o|--output) OUTPUT [--report]
// [--winners_only]`, in any order. InvalidArgument naming the fault otherwise.
absl::StatusOr<MergeArguments> ParseMergeArguments(absl::Span<const std::string> args);

// Runs the command on the arguments that follow "merge" and returns the exit code.
// Errors go to `err` as one line starting "autotune merge: ".
int RunMergeCommand(absl::Span<const std::string> args, std::FILE* out, std::FILE* err);

}  // namespace autotune
}  // namespace tiletune

#endif  // AUTOTUNE_MERGE_COMMAND_H_

#include "autotune/merge_command.h"

#include <sys/stat.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "autotune/merge.h"
#include "compiler/base/command_line.h"
#include "compiler/base/abbreviate.h"
#include "compiler/base/status_macros.h"
#include "autotune/report.h"
#include "compiler/ops/builtin_ops.h"
#include "compiler/tuning_db/atomic_file.h"
#include "compiler/tuning_db/file_lock.h"
#include "compiler/tuning_db/tuning_db.h"
#include "compiler/tuning_db/tuning_db.pb.h"

namespace tiletune {
namespace autotune {
namespace {

constexpr char kUsage[] =
    "usage: autotune merge INPUT... -o OUTPUT [--report] [--winners_only] [--replace]";

// Whether two paths name one existing file (links and relative spellings included).
bool SameFile(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

}  // namespace

const std::vector<FlagSpec>& MergeFlags() {
  static const std::vector<FlagSpec>* const flags = new std::vector<FlagSpec>{
      {"output", FlagType::kString, "PATH: the merged database (.txtpb text, else binary)", 'o'},
      {"report", FlagType::kBool, "also write its Markdown report and SVG chart beside it"},
      {"winners_only", FlagType::kBool, "keep each record's winner, statistics and provenance; "
                                        "drop the other candidates (a database to ship)"},
      {"replace", FlagType::kBool, "a later input's record replaces an earlier input's for "
                                   "the same key, faster or not (re-tuned records, e.g. after "
                                   "an upgrade changed the kernels)"},
  };
  return *flags;
}

absl::StatusOr<MergeArguments> ParseMergeArguments(absl::Span<const std::string> args) {
  TT_ASSIGN_OR_RETURN(CommandLine line,
                      ParseCommandLine(std::vector<std::string>(args.begin(), args.end()),
                                       MergeFlags(), /*max_positional=*/1 << 20));
  MergeArguments parsed;
  parsed.help = line.help();
  parsed.version = line.version();
  if (parsed.help || parsed.version) return parsed;
  parsed.inputs = line.positional();
  parsed.output = line.String("output");
  parsed.report = line.Bool("report", false);
  parsed.winners_only = line.Bool("winners_only", false);
  parsed.replace = line.Bool("replace", false);
  for (const std::string& input : parsed.inputs) {
    if (input.empty()) return absl::InvalidArgumentError("an input path is empty");
  }
  if (parsed.inputs.empty()) return absl::InvalidArgumentError("no input databases given");
  if (!line.Has("output")) return absl::InvalidArgumentError("no output given (-o OUTPUT)");
  return parsed;
}

int RunMergeCommand(absl::Span<const std::string> args, std::FILE* out, std::FILE* err) {
  absl::StatusOr<MergeArguments> parsed = ParseMergeArguments(args);
  if (!parsed.ok()) {
    std::fprintf(err, "autotune merge: %s; %s\n", BoundedMessage(parsed.status().message()).c_str(),
                 kUsage);
    return kMergeBadArguments;
  }
  if (parsed->help) {
    std::fprintf(out,
                 "%s\n"
                 "Merges tuning databases (*.textproto / *.txtpb are text, others binary).\n"
                 "Where inputs share a key, the faster winner is kept (with --replace, the "
                 "later input's) and the conflict printed.\n\nflags:\n%s\nenvironment:\n%s\nexit codes: 0 merged; 1 an input "
                 "could not be read or the output written; 2 usage error\n",
                 kUsage, FlagHelp(MergeFlags()).c_str(), EnvironmentHelp().c_str());
    return kMergeOk;
  }
  if (parsed->version) {
    std::fprintf(out, "%s\n", VersionLine("autotune merge").c_str());
    return kMergeOk;
  }
  const TileOpRegistry& ops = BuiltinTileOps();
  const std::string output = UserPath(parsed->output);
  // What is at the output is checked before any input is read: a folder or a socket there
  // is refused; a device or a pipe (/dev/null) is written through and gets no report.
  absl::StatusOr<tuning::OutputKind> kind = tuning::ClassifyOutput(output);
  if (!kind.ok()) {
    std::fprintf(err, "autotune merge: %s\n", BoundedMessage(kind.status().message()).c_str());
    return kMergeFailed;
  }
  // Serialized with other writers of the output (tuning runs, appends): the output may be
  // one of the inputs, and nothing may land in it between the read and the write.
  std::unique_ptr<tuning::FileLock> lock;
  if (*kind != tuning::OutputKind::kStream) {
    absl::StatusOr<std::unique_ptr<tuning::FileLock>> locked =
        tuning::FileLock::Acquire(tuning::WriteLockPath(output));
    if (!locked.ok()) {
      std::fprintf(err, "autotune merge: %s\n", BoundedMessage(locked.status().message()).c_str());
      return kMergeFailed;
    }
    lock = *std::move(locked);
  }
  tuning::ReadOptions read;
  read.semantics = ops.RecordValidator();
  std::vector<std::string> notes;
  read.notes = &notes;
  std::vector<tuning::TuningDatabase> inputs;
  for (const std::string& input : parsed->inputs) {
    absl::StatusOr<tuning::TuningDatabase> database =
        tuning::ReadTuningDatabase(UserPath(input), read);
    for (const std::string& note : notes) {
      std::fprintf(err, "autotune merge: note: %s\n", note.c_str());
    }
    notes.clear();
    if (!database.ok()) {
      std::fprintf(err, "autotune merge: %s\n", BoundedMessage(database.status().message()).c_str());
      return kMergeFailed;
    }
    if (absl::StatusOr<std::string> bytes = tuning::ReadFileToString(UserPath(input),
                                                                     tuning::kMaxDatabaseBytes);
        bytes.ok()) {
      if (absl::Status fresh = CheckReport(UserPath(input), *bytes); !fresh.ok()) {
        std::fprintf(err, "autotune merge: note: %s\n", BoundedMessage(fresh.message()).c_str());
      }
    }
    // Progress as each input is read (a large merge reads for a while).
    std::fprintf(err, "autotune merge: read %zu of %zu: %s (%d records)\n", inputs.size() + 1,
                 parsed->inputs.size(), input.c_str(), database->records_size());
    std::fflush(err);
    inputs.push_back(*std::move(database));
  }
  MergeReport report;
  MergeOptions options;
  options.later_inputs_replace = parsed->replace;
  absl::StatusOr<tuning::TuningDatabase> merged = MergeDatabases(inputs, &report, options);
  if (merged.ok() && parsed->winners_only) {
    for (tuning::TuningRecord& record : *merged->mutable_records()) record.clear_candidates();
  }
  for (const std::string& input : parsed->inputs) {
    if (SameFile(UserPath(input), output)) {
      std::fprintf(err, "autotune merge: note: the output %s is also an input; it is replaced "
                        "by the merge\n", parsed->output.c_str());
      break;
    }
  }
  // The database and its report are written together: all of them or none.
  absl::Status written = merged.status();
  if (merged.ok()) {
    absl::StatusOr<std::string> bytes = tuning::SerializeTuningDatabase(
        *merged, tuning::FormatForPath(output), ops.RecordValidator());
    written = bytes.status();
    if (bytes.ok()) {
      std::vector<tuning::FileWrite> files = {{output, *bytes}};
      if (parsed->report && *kind == tuning::OutputKind::kStream) {
        std::fprintf(err, "autotune merge: note: %s is not a regular file, so no report is "
                          "written beside it\n", parsed->output.c_str());
      } else if (parsed->report) {
        for (tuning::FileWrite& file : ReportFiles(*merged, *bytes, output, ops)) {
          files.push_back(std::move(file));
        }
      }
      written = tuning::WriteFilesAtomically(files);
    }
  }
  if (!written.ok()) {
    std::fprintf(err, "autotune merge: %s\n", BoundedMessage(written.message()).c_str());
    return kMergeFailed;
  }
  for (const MergeConflict& conflict : report.conflicts) {
    std::fprintf(out, "conflict: %s\n", FormatMergeConflict(conflict, parsed->inputs).c_str());
  }
  std::fprintf(out,
               "autotune merge: %d records from %zu databases -> %d records in %s (%zu "
               "conflicts)\n",
               report.input_records, inputs.size(), report.output_records, parsed->output.c_str(),
               report.conflicts.size());
  return kMergeOk;
}

}  // namespace autotune
}  // namespace tiletune

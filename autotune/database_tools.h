// `autotune diff` and `autotune export`: what changed between two tuning databases, and a
// database as CSV or JSON for other tools.
//
//   autotune diff before.txtpb after.txtpb
//     One line per record key that differs: added, removed, or the winner and its time
//     changed (with the speed ratio before/after: above 1 the new winner is faster), or
//     only its provenance (tool version, host, driver, CUDA or NVRTC version). Exit 0 when
//     the databases hold the same records, 1 when they differ, 2 for a usage error, 3
//     when one does not read.
//   autotune export db.txtpb [--format=csv|json] [-o out.csv]
//     CSV: one row per record (device, problem spec, winner, statistics, baselines,
//     provenance). JSON: the whole database, by protobuf's JSON printer. To stdout unless
//     -o is given.
#ifndef AUTOTUNE_DATABASE_TOOLS_H_
#define AUTOTUNE_DATABASE_TOOLS_H_

#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ops/registry.h"
#include "compiler/tuning_db/tuning_db.pb.h"

namespace tiletune {
namespace autotune {

// One key's difference between two databases.
struct RecordDiff {
  enum class Kind { kAdded, kRemoved, kWinner, kTime, kProvenance };
  Kind kind = Kind::kWinner;
  std::string key;
  std::string line;  // what a person reads
};

// The differences between `before` and `after`, ordered by key; empty when they hold the
// same records (winners, statistics and provenance).
std::vector<RecordDiff> DiffDatabases(const tuning::TuningDatabase& before,
                                      const tuning::TuningDatabase& after,
                                      const TileOpRegistry& ops);

// CSV of `database`: a header, then one row per record.
std::string ExportCsv(const tuning::TuningDatabase& database, const TileOpRegistry& ops);

// The whole database as JSON (protobuf's printer, fields as in tuning_db.proto).
absl::StatusOr<std::string> ExportJson(const tuning::TuningDatabase& database);

// The commands, on the arguments after "diff" / "export"; return the exit code.
int RunDiffCommand(const std::vector<std::string>& args, std::FILE* out, std::FILE* err);
int RunExportCommand(const std::vector<std::string>& args, std::FILE* out, std::FILE* err);

}  // namespace autotune
}  // namespace tiletune

#endif  // AUTOTUNE_DATABASE_TOOLS_H_

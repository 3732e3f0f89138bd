// Merging tuning databases from many machines into one.
//
// The result does not depend on the order of the inputs (unless
// MergeOptions::later_inputs_replace): records are sorted by
// RecordKey(), and where several inputs hold a record for the same key the one with the
// faster winner is kept (lower winner_statistics.median_us; equal medians are decided by
// CompareVariants on the winners, then by the records' serialized bytes). Every record
// that loses is reported as a conflict against the one kept.
//
//   MergeReport report;
//   TT_ASSIGN_OR_RETURN(TuningDatabase merged, MergeDatabases({a, b, c}, &report));
//   for (const MergeConflict& conflict : report.conflicts) {
//     std::puts(FormatMergeConflict(conflict).c_str());
//   }
#ifndef AUTOTUNE_MERGE_H_
#define AUTOTUNE_MERGE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "compiler/tuning_db/tuning_db.pb.h"

namespace tiletune {
namespace autotune {

// Two inputs held a record for the same key; `kept` won.
struct MergeConflict {
  std::string key;  // RecordKey() of both records
  tuning::Variant kept_winner;
  double kept_median_us = 0;
  int kept_input = 0;     // index into MergeDatabases' inputs
  std::string kept_host;  // provenance.host of the kept record
  tuning::Variant dropped_winner;
  double dropped_median_us = 0;
  int dropped_input = 0;
  std::string dropped_host;
};

struct MergeReport {
  int input_records = 0;   // records over all inputs
  int output_records = 0;  // records in the merged database
  // One per dropped record, ordered by key, then as the records rank (fastest first).
  std::vector<MergeConflict> conflicts;
};

struct MergeOptions {
  // A record of a later input replaces an earlier input's for the same key, faster or not:
  // a re-tuning after what the emitter writes changed (a record times the kernel its
  // source_sha256 names, so an older, faster record describes a kernel no user gets), or
  // on another driver. Records of one input still rank by speed. The replaced records are
  // the report's conflicts.
  bool later_inputs_replace = false;
};

// Merges `inputs` (each a valid database at kCurrentSchemaVersion, as ReadTuningDatabase
// returns them) into one valid database with its trailer set. InvalidArgument naming
// the input ("merge input 2: ...") when an input is not valid. `report` may be null;
// otherwise it is overwritten.
absl::StatusOr<tuning::TuningDatabase> MergeDatabases(const std::vector<tuning::TuningDatabase>& inputs,
                                              MergeReport* report, MergeOptions options = {});

// One line: `<key>: kept <variant> (<median> us, <input>[, host <h>]) over <variant>
// (<median> us, <input>[, host <h>])`, where <input> is input_names[i] when given
// (e.g. the file names), else "input <i>".
std::string FormatMergeConflict(const MergeConflict& conflict,
                                absl::Span<const std::string> input_names = {});

}  // namespace autotune
}  // namespace tiletune

#endif  // AUTOTUNE_MERGE_H_

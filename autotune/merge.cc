#include "autotune/merge.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/types/span.h"
#include "compiler/tuning_db/tuning_db.h"
#include "compiler/tuning_db/tuning_db.pb.h"
#include "compiler/base/abbreviate.h"
#include "compiler/base/status_macros.h"

namespace tiletune {
namespace autotune {
namespace {

struct Entry {
  const tuning::TuningRecord* record;
  int input;
  std::string bytes;  // deterministic serialization: the last tie-breaker
};

// True when `a` ranks before `b`: the faster winner, then the smaller variant, then the
// smaller bytes. Depends on the records only, never on the input order.
bool RanksBefore(const Entry& a, const Entry& b) {
  const double ma = a.record->winner_statistics().median_us();
  const double mb = b.record->winner_statistics().median_us();
  if (ma != mb) return ma < mb;
  const int by_variant = tuning::CompareVariants(a.record->winner(), b.record->winner());
  if (by_variant != 0) return by_variant < 0;
  return a.bytes < b.bytes;
}

std::string Side(const tuning::Variant& winner, double median_us, int input,
                 absl::Span<const std::string> input_names, const std::string& host) {
  std::string text = absl::StrFormat("%s (%.3f us, ", tuning::DescribeVariant(winner), median_us);
  if (input >= 0 && input < static_cast<int>(input_names.size())) {
    absl::StrAppend(&text, input_names[input]);
  } else {
    absl::StrAppend(&text, "input ", input);
  }
  if (!host.empty()) absl::StrAppend(&text, ", host ", host);
  absl::StrAppend(&text, ")");
  return text;
}

}  // namespace

absl::StatusOr<tuning::TuningDatabase> MergeDatabases(const std::vector<tuning::TuningDatabase>& inputs,
                                              MergeReport* report, MergeOptions options) {
  std::map<std::string, std::vector<Entry>> by_key;
  int input_records = 0;
  for (int i = 0; i < static_cast<int>(inputs.size()); ++i) {
    TT_RETURN_IF_ERROR(tuning::ValidateTuningDatabase(inputs[i], absl::StrCat("merge input ", i)));
    for (const tuning::TuningRecord& record : inputs[i].records()) {
      by_key[tuning::RecordKey(record)].push_back(Entry{&record, i, tuning::SerializeDeterministically(record)});
      ++input_records;
    }
  }
  tuning::TuningDatabase merged;
  merged.set_schema_version(tuning::kCurrentSchemaVersion);
  std::vector<MergeConflict> conflicts;
  for (auto& [key, entries] : by_key) {
    std::sort(entries.begin(), entries.end(), [&](const Entry& a, const Entry& b) {
      if (options.later_inputs_replace && a.input != b.input) return a.input > b.input;
      return RanksBefore(a, b);
    });
    const Entry& kept = entries.front();
    *merged.add_records() = *kept.record;
    for (size_t j = 1; j < entries.size(); ++j) {
      const Entry& dropped = entries[j];
      MergeConflict conflict;
      conflict.key = key;
      conflict.kept_winner = kept.record->winner();
      conflict.kept_median_us = kept.record->winner_statistics().median_us();
      conflict.kept_input = kept.input;
      conflict.kept_host = kept.record->provenance().host();
      conflict.dropped_winner = dropped.record->winner();
      conflict.dropped_median_us = dropped.record->winner_statistics().median_us();
      conflict.dropped_input = dropped.input;
      conflict.dropped_host = dropped.record->provenance().host();
      conflicts.push_back(std::move(conflict));
    }
  }
  merged.set_record_count(merged.records_size());
  merged.set_records_sha256(tuning::RecordsSha256(merged));
  if (report != nullptr) {
    report->input_records = input_records;
    report->output_records = merged.records_size();
    report->conflicts = std::move(conflicts);
  }
  return merged;
}

std::string FormatMergeConflict(const MergeConflict& conflict,
                                absl::Span<const std::string> input_names) {
  // Database strings reach a terminal: escape sequences are shown, not sent, and a
  // megabyte host name costs one line.
  return Printable(
      absl::StrCat(conflict.key, ": kept ",
                   Side(conflict.kept_winner, conflict.kept_median_us, conflict.kept_input,
                        input_names, Printable(conflict.kept_host, 80)),
                   " over ",
                   Side(conflict.dropped_winner, conflict.dropped_median_us,
                        conflict.dropped_input, input_names, Printable(conflict.dropped_host, 80))),
      4000);
}

}  // namespace autotune
}  // namespace tiletune

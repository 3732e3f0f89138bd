// Helpers the operator definitions share: parsing the numbers of problem specs and flags,
// and checking the path names a database records.
#ifndef COMPILER_OPS_OP_UTIL_H_
#define COMPILER_OPS_OP_UTIL_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "compiler/tuning_db/tuning_db.pb.h"

namespace tiletune {

// A comma-separated list of 1 to `max_count` integers ("8192,8192"), each within
// [min_value, max_value]. InvalidArgument names `what`, the text and the bad entry.
absl::StatusOr<std::vector<int64_t>> ParseIntList(absl::string_view what, absl::string_view text,
                                                  int64_t min_value, int64_t max_value,
                                                  int max_count);

// "3" -> {3, 3}; "3x2" -> {3, 2}: one value for both axes or two, h then w, each within
// [min_value, max_value].
absl::StatusOr<std::pair<int64_t, int64_t>> ParseAxisPair(absl::string_view what,
                                                         absl::string_view text,
                                                         int64_t min_value, int64_t max_value,
                                                         char separator);

// Appends a length-prefixed list of integers to an op key (TileOpDefinition::AppendKey).
void AppendKeyInts(std::string& key, const std::vector<int64_t>& values);

// OK when `lowering` names one of `paths` (path name -> its form names; an empty set of
// forms accepts ""), with an accepted form. InvalidArgument naming the bad value and the
// accepted ones otherwise. Form "" is accepted for every path (schema-1 records).
absl::Status CheckPathNames(const tuning::Lowering& lowering, const std::string& op,
                            const std::map<std::string, std::vector<std::string>>& paths);

}  // namespace tiletune

#endif  // COMPILER_OPS_OP_UTIL_H_

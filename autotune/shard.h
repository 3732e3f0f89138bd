// Splitting a tuning run across machines: which shard this process is, and its items.
//
// The shard comes from `--shard=i/n` when given (0-based i < n), else from the batch
// system's environment: a Slurm job array (SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT,
// offset by SLURM_ARRAY_TASK_MIN and divided by SLURM_ARRAY_TASK_STEP when set), else a
// Kubernetes indexed Job (JOB_COMPLETION_INDEX, with the count given by the caller or by
// TILETUNE_SHARD_COUNT), else the whole run is one shard, 0/1. Every bad value is an
// InvalidArgument error naming the variable or flag, the value and what is accepted.
//
//   TT_ASSIGN_OR_RETURN(Shard shard,
//                       ResolveShard(absl::GetFlag(FLAGS_shard), ProcessEnvironment()));
//   std::vector<Problem> mine = SelectShard(absl::MakeConstSpan(all_problems), shard);
//
// Pure functions apart from ProcessEnvironment(), which reads the process environment.
#ifndef AUTOTUNE_SHARD_H_
#define AUTOTUNE_SHARD_H_

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace tiletune {
namespace autotune {

struct Shard {
  int index = 0;  // 0 <= index < count
  int count = 1;
  // Where it came from: "--shard", "Slurm array", "Kubernetes indexed job", "default".
  std::string source = "default";
};

// "i/n" as Shard{i, n}. Accepts decimal digits only (no signs, spaces or leading '+').
absl::StatusOr<Shard> ParseShard(absl::string_view spec);

// "i/n".
std::string FormatShard(const Shard& shard);

// Looks up one environment variable; nullopt when it is not set.
using EnvironmentLookup = std::function<std::optional<std::string>(const std::string& name)>;

// The process environment (getenv). An empty value counts as set.
EnvironmentLookup ProcessEnvironment();

// The shard the batch system assigned, from `environment` as described at the top; Slurm
// is consulted before Kubernetes. `job_count` is the number of completions of a
// Kubernetes indexed Job when the caller knows it; it takes precedence over
// TILETUNE_SHARD_COUNT. Shard{0, 1, "default"} when no batch variables are set.
absl::StatusOr<Shard> ShardFromEnvironment(const EnvironmentLookup& environment,
                                           std::optional<int> job_count = std::nullopt);

// ParseShard(flag) when `flag` is not empty, else ShardFromEnvironment.
absl::StatusOr<Shard> ResolveShard(absl::string_view flag, const EnvironmentLookup& environment,
                                   std::optional<int> job_count = std::nullopt);

// The positions of the items of `shard` among `item_count` items: k for every k with
// k % count == index, ascending. Shards differ in size by at most one item, every item
// is in exactly one shard, and the split depends only on the item order. A shard that
// ParseShard would reject (index outside [0, count)) selects nothing.
std::vector<size_t> ShardIndices(size_t item_count, const Shard& shard);

// The items at ShardIndices(items.size(), shard), in order.
template <typename T>
std::vector<T> SelectShard(absl::Span<const T> items, const Shard& shard) {
  std::vector<T> selected;
  for (size_t k : ShardIndices(items.size(), shard)) selected.push_back(items[k]);
  return selected;
}

}  // namespace autotune
}  // namespace tiletune

#endif  // AUTOTUNE_SHARD_H_

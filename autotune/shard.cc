#include "autotune/shard.h"

#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "compiler/base/status_macros.h"

namespace tiletune {
namespace autotune {
namespace {

constexpr char kSlurmId[] = "SLURM_ARRAY_TASK_ID";
constexpr char kSlurmCount[] = "SLURM_ARRAY_TASK_COUNT";
constexpr char kSlurmMin[] = "SLURM_ARRAY_TASK_MIN";
constexpr char kSlurmMax[] = "SLURM_ARRAY_TASK_MAX";
constexpr char kSlurmStep[] = "SLURM_ARRAY_TASK_STEP";
constexpr char kJobIndex[] = "JOB_COMPLETION_INDEX";
constexpr char kShardCount[] = "TILETUNE_SHARD_COUNT";

// A non-negative decimal integer that fits in an int: digits only.
std::optional<int> ParseCount(absl::string_view text) {
  if (text.empty() || text.size() > 10) return std::nullopt;
  for (char c : text) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return std::nullopt;
  }
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value) || value > std::numeric_limits<int>::max()) {
    return std::nullopt;
  }
  return static_cast<int>(value);
}

// The integer value of environment variable `name`, nullopt when unset.
absl::StatusOr<std::optional<int>> IntegerVariable(const EnvironmentLookup& environment,
                                                   const char* name) {
  std::optional<std::string> value = environment(name);
  if (!value.has_value()) return std::optional<int>();
  std::optional<int> parsed = ParseCount(*value);
  if (!parsed.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(name, "=\"", absl::CEscape(*value),
                                                   "\" is not a non-negative decimal integer"));
  }
  return parsed;
}

absl::StatusOr<Shard> SlurmShard(const EnvironmentLookup& environment, int id) {
  TT_ASSIGN_OR_RETURN(std::optional<int> count, IntegerVariable(environment, kSlurmCount));
  TT_ASSIGN_OR_RETURN(std::optional<int> min, IntegerVariable(environment, kSlurmMin));
  TT_ASSIGN_OR_RETURN(std::optional<int> max, IntegerVariable(environment, kSlurmMax));
  TT_ASSIGN_OR_RETURN(std::optional<int> step, IntegerVariable(environment, kSlurmStep));
  const int first = min.value_or(0);
  const int stride = step.value_or(1);
  if (stride < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(kSlurmStep, "=", stride, " is not a step; it must be >= 1"));
  }
  if (!count.has_value()) {
    if (!max.has_value() || *max < first) {
      return absl::InvalidArgumentError(
          absl::StrCat(kSlurmId, "=", id, " is set but ", kSlurmCount,
                       " is not (nor a valid SLURM_ARRAY_TASK_MAX): run as a job array (sbatch "
                       "--array=0-N) or pass --shard=i/n"));
    }
    count = (*max - first) / stride + 1;
  }
  if (*count < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(kSlurmCount, "=", *count, " is not a shard count; it must be >= 1"));
  }
  if (id < first) {
    return absl::InvalidArgumentError(
        absl::StrCat(kSlurmId, "=", id, " is below ", kSlurmMin, "=", first));
  }
  if ((id - first) % stride != 0) {
    return absl::InvalidArgumentError(absl::StrCat(kSlurmId, "=", id, " is not ", kSlurmMin, "=",
                                                   first, " plus a multiple of ", kSlurmStep, "=",
                                                   stride));
  }
  const int index = (id - first) / stride;
  if (index >= *count) {
    return absl::InvalidArgumentError(
        absl::StrCat(kSlurmId, "=", id, " (minimum ", first, ", step ", stride, ") gives shard ",
                     index, ", not below ", kSlurmCount, "=", *count,
                     ": use a contiguous array (sbatch --array=0-N) or pass --shard=i/n"));
  }
  return Shard{index, *count, "Slurm array"};
}

absl::StatusOr<Shard> KubernetesShard(const EnvironmentLookup& environment, int index,
                                      std::optional<int> job_count) {
  std::optional<int> count = job_count;
  std::string count_source = "the job's completion count";
  if (!count.has_value()) {
    TT_ASSIGN_OR_RETURN(count, IntegerVariable(environment, kShardCount));
    count_source = kShardCount;
  }
  if (!count.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kJobIndex, "=", index, " is set but the shard count is unknown: set ",
                     kShardCount, " to the Job's spec.completions, or pass --shard=", index, "/N"));
  }
  if (*count < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(count_source, " is ", *count, "; a shard count must be >= 1"));
  }
  if (index >= *count) {
    return absl::InvalidArgumentError(
        absl::StrCat(kJobIndex, "=", index, " is not below ", count_source, " (", *count, ")"));
  }
  return Shard{index, *count, "Kubernetes indexed job"};
}

}  // namespace

absl::StatusOr<Shard> ParseShard(absl::string_view spec) {
  const std::string quoted = absl::StrCat("--shard=\"", absl::CEscape(spec), "\"");
  const size_t slash = spec.find('/');
  std::optional<int> index, count;
  if (slash != absl::string_view::npos) {
    index = ParseCount(spec.substr(0, slash));
    count = ParseCount(spec.substr(slash + 1));
  }
  if (!index.has_value() || !count.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat(quoted,
                     " is not of the form i/n (decimal, 0-based index i below the shard count n, "
                     "e.g. --shard=0/4)"));
  }
  if (*count < 1) {
    return absl::InvalidArgumentError(absl::StrCat(quoted, ": the shard count must be >= 1"));
  }
  if (*index >= *count) {
    return absl::InvalidArgumentError(
        absl::StrCat(quoted, ": the index must be below the count; shards are 0-based, 0/", *count,
                     " to ", *count - 1, "/", *count));
  }
  return Shard{*index, *count, "--shard"};
}

std::string FormatShard(const Shard& shard) { return absl::StrCat(shard.index, "/", shard.count); }

EnvironmentLookup ProcessEnvironment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

absl::StatusOr<Shard> ShardFromEnvironment(const EnvironmentLookup& environment,
                                           std::optional<int> job_count) {
  TT_ASSIGN_OR_RETURN(std::optional<int> slurm_id, IntegerVariable(environment, kSlurmId));
  if (slurm_id.has_value()) return SlurmShard(environment, *slurm_id);
  TT_ASSIGN_OR_RETURN(std::optional<int> job_index, IntegerVariable(environment, kJobIndex));
  if (job_index.has_value()) return KubernetesShard(environment, *job_index, job_count);
  return Shard{};
}

absl::StatusOr<Shard> ResolveShard(absl::string_view flag, const EnvironmentLookup& environment,
                                   std::optional<int> job_count) {
  if (!flag.empty()) return ParseShard(flag);
  return ShardFromEnvironment(environment, job_count);
}

std::vector<size_t> ShardIndices(size_t item_count, const Shard& shard) {
  std::vector<size_t> indices;
  if (shard.count < 1 || shard.index < 0 || shard.index >= shard.count) return indices;
  for (size_t k = shard.index; k < item_count; k += shard.count) indices.push_back(k);
  return indices;
}

}  // namespace autotune
}  // namespace tiletune

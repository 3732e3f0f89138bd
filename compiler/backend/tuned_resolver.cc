#include "compiler/backend/tuned_resolver.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "compiler/base/status_macros.h"
#include "compiler/cuda/kernel_digest.h"
#include "compiler/ir/data_type.h"
#include "compiler/lower/lowering_rules.h"
#include "compiler/ops/candidates.h"
#include "compiler/tuning_db/tuning_db.h"

namespace tiletune {

std::string ResolutionLevelName(ResolutionLevel level) {
  switch (level) {
    case ResolutionLevel::kExact: return "exact";
    case ResolutionLevel::kNearest: return "nearest";
    case ResolutionLevel::kHeuristic: return "heuristic";
  }
  return "unknown";
}

absl::StatusOr<Target> TargetOf(const tuning::DeviceIdentity& device) {
  return Target::Parse(Target::ArchNameForDevice(device.cc_major(), device.cc_minor()));
}

TunedResolver::TunedResolver(Options options)
    : registry_(options.registry),
      ops_(options.ops),
      cost_models_(std::move(options.cost_models)),
      select_by_model_(options.select_by_model),
      model_margin_(options.model_margin) {
  for (size_t d = 0; d < options.databases.size(); ++d) {
    const std::string origin = d < options.origins.size() ? options.origins[d] : "";
    for (auto& record : *options.databases[d].mutable_records()) {
      // An earlier database's record of the same key shadows this one (Exact).
      std::string key = tuning::RecordKey(record);
      if (!by_key_.emplace(key, records_.size()).second) {
        ++shadowed_;
        shadowed_by_key_[key].push_back(shadowed_records_.size());
        shadowed_records_.push_back(std::move(record));
        shadowed_origins_.push_back(origin);
        continue;
      }
      records_.push_back(std::move(record));
      origins_.push_back(origin);
    }
  }
}

absl::StatusOr<std::unique_ptr<TunedResolver>> TunedResolver::Create(Options options) {
  if (options.registry == nullptr) {
    return absl::InvalidArgumentError("TunedResolver needs a codegen registry");
  }
  if (options.ops == nullptr) {
    return absl::InvalidArgumentError("TunedResolver needs a tile-operator registry");
  }
  if (!(options.model_margin >= 0 && options.model_margin <= 100)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a cost-model margin of ", options.model_margin,
        " (the fraction faster a kernel must be predicted to replace the nearest record's: "
        "0.1 for 10%); accepted: 0 to 100"));
  }
  return std::unique_ptr<TunedResolver>(new TunedResolver(std::move(options)));
}

namespace {

// Halvings of a transferred tile the resolver tries (for a tile that does not lower, or
// one that leaves too few tiles) before it uses the record's tile as stored.
constexpr int kMaxHalvings = 8;
// Records after the nearest usable one that resolution tries (usable or not) for one whose
// kernel moves wider vectors here than the nearest's (NearestUsable).
constexpr int kWiderRecordTries = 4;

// How evenly `tiles` equal CTAs spread over `sm_count` SMs: the mean over the most any SM
// runs (196 tiles over 132 SMs: 1.48 of 2, 0.74).
double SmBalance(int64_t tiles, int sm_count) {
  if (tiles <= 0 || sm_count <= 0) return 1.0;
  const int64_t most = (tiles + sm_count - 1) / sm_count;
  return static_cast<double>(tiles) / static_cast<double>(most * sm_count);
}

// Whether halving a grid of one to two tiles per SM (a small problem, every CTA resident
// at once: the SMs that run two set the time) would spread it markedly more evenly: 196
// tiles over 132 SMs run two on some and one on others; 392 run three on nearly all.
// Fewer tiles than SMs is a question of parallelism, not balance (the caller's).
bool HalvingBalances(int64_t tiles, int sm_count) {
  if (tiles <= sm_count || tiles >= 2 * int64_t{sm_count}) return false;
  const double now = SmBalance(tiles, sm_count);
  return now < 0.8 && SmBalance(2 * tiles, sm_count) > now + 0.1;
}

// Whether a record's problem is this one (tuned on another board, or the exact record).
bool SameProblem(const tuning::Problem& a, const tuning::Problem& b) {
  return tuning::ProblemKey(a) == tuning::ProblemKey(b);
}

// The SMs of the record's GPU (128 when it names none).
int RecordSmCount(const tuning::TuningRecord& record) {
  return record.device().sm_count() > 0 ? record.device().sm_count() : 128;
}

// The record's own launch lowered for its own problem; null when that does not lower.
std::shared_ptr<const LoweredTileKernel> RecordLowered(const TileOpDefinition& definition,
                                                       const tuning::TuningRecord& record,
                                                       const Trial& tuned, const Target& target) {
  absl::StatusOr<std::unique_ptr<TileOp>> theirs = definition.FromProblem(record.problem());
  if (!theirs.ok()) return nullptr;
  (*theirs)->hints = MergeHints(tuned.hints, (*theirs)->hints);
  absl::StatusOr<std::shared_ptr<const LoweredTileKernel>> lowered =
      definition.Lower(**theirs, target, tuned.launch);
  return lowered.ok() ? *std::move(lowered) : nullptr;
}

// The tiles the record's own launch made of its own problem; 0 when that does not lower.
int64_t RecordTiles(const TileOpDefinition& definition, const tuning::TuningRecord& record,
                    const Trial& tuned, const Target& target) {
  std::shared_ptr<const LoweredTileKernel> lowered = RecordLowered(definition, record, tuned, target);
  return lowered != nullptr ? lowered->num_tiles : 0;
}

// What makes two built variants the same kernel launch.
std::string KernelKey(const BuiltKernel& built) {
  const LaunchParams& launch = built.lowered->launch;
  return absl::StrCat(built.source.text, "|", launch.threads, "|", absl::StrJoin(launch.tile, ","));
}

// The coalesced width a record's variant keeps on another problem `op`, or none for the
// lowering's widest. A width `op`'s alignments allow no wider than is kept: the tuner chose
// it over the wider forms (a plain byte-wise copy over the shifted 16-byte one for short
// rows). Where `op` allows wider, what the width meant decides:
//  - a kernel moving vectors both ways was held to it by its own problem's alignments (an
//    odd pitch), or chose it by a margin within noise: `op` takes the widest;
//  - a kernel gathering its input element by element (LoweredTileKernel::gather_reads)
//    whose own problem allowed no wider: `op` takes the widest its alignments allow, stated
//    as the width (the lowering would store wider vectors that straddle image rows), and
//    where that kernel summed several reads per output element, at most twice the record's
//    width: its tuning found wider better up to the widest it could try, and a summing
//    kernel's best width is not its widest (each wider vector holds more sums of reads
//    that straddle it), so past one doubling nothing measured speaks for it;
//  - such a kernel that chose it where its own problem allowed wider, for how its loads
//    coalesce: it is kept, unless the record's kernel summed several reads per output
//    element and `op`'s, lowered at the record's launch, reads one (a 3x3 fold's width on
//    patches that do not overlap): `op` takes the widest. Where that lowering fails, the
//    width is kept.
std::optional<int> TransferredWidth(const TileOpDefinition& definition,
                                    const tuning::TuningRecord& record, const Trial& tuned,
                                    const TileOp& op, const Target& target) {
  const int element = DataTypeBytes(op.dtype());
  const int width = *tuned.hints.coalesced_width * element;
  const int widest = definition.WidestVectorBytes(op);
  if (width >= widest) return tuned.hints.coalesced_width;
  std::shared_ptr<const LoweredTileKernel> theirs = RecordLowered(definition, record, tuned, target);
  absl::StatusOr<std::unique_ptr<TileOp>> their_op = definition.FromProblem(record.problem());
  if (theirs == nullptr || !theirs->gather_reads.has_value() || !their_op.ok()) {
    return std::nullopt;
  }
  if (width >= definition.WidestVectorBytes(**their_op)) {
    return (*theirs->gather_reads > 1 ? std::min(widest, 2 * width) : widest) / element;
  }
  if (*theirs->gather_reads == 1) return tuned.hints.coalesced_width;
  std::unique_ptr<TileOp> ours = op.Clone();
  ours->hints = MergeHints(tuned.hints, op.hints);
  absl::StatusOr<std::shared_ptr<const LoweredTileKernel>> lowered =
      definition.Lower(*ours, target, tuned.launch);
  if (lowered.ok() && (*lowered)->gather_reads == 1) return std::nullopt;
  return tuned.hints.coalesced_width;
}

}  // namespace

std::optional<Resolution> TunedResolver::Transfer(
    const tuning::TuningRecord& record, const Trial& tuned, const TileOpDefinition& definition,
    const std::shared_ptr<const DeviceCodegen>& codegen, const TileOp& op,
    const TileOp& resolved, const Target& target) const {
  // Another problem's launch: fitted to this one by the operator, then halved while it
  // does not lower, while it leaves half or less of the tiles the record made of its own
  // problem (up to two per SM: a small problem given a large problem's tile runs on a few
  // SMs), or while it spreads one to two tiles per SM unevenly and a halving spreads them
  // more evenly. The last tile that lowered wins; none, and the caller uses the stored one.
  const int sm_count = RecordSmCount(record);
  LaunchParams launch = definition.AdaptLaunch(resolved, record.problem(), tuned.launch,
                                               record.winner().lowering().form());
  const std::vector<int64_t> fitted_tile = launch.tile;
  std::optional<Resolution> best;
  int64_t wanted_tiles = -1;  // Known once a tile lowers.
  std::string why;
  // The tile a halving for balance replaced, kept in case the halving spreads no better
  // (halving 3 rows to 2 gives 1.5x the tiles, not 2x).
  std::optional<Resolution> before_balancing;
  double balance_before = 0;
  for (int halvings = 0; halvings <= kMaxHalvings; ++halvings) {
    const bool refitted = launch.tile != tuned.launch.tile;
    std::unique_ptr<TileOp> request_op = resolved.Clone();
    // A thread layout was tuned for the record's tile shape: on another (a 2-D layout over
    // a 1-D tile idles most of the CTA) the lowering picks one, unless the op sets it.
    if (refitted && !op.hints.loop_layout.has_value()) request_op->hints.loop_layout.reset();
    CodegenRequest request{std::move(request_op), launch, target};
    absl::StatusOr<BuiltKernel> built = codegen->BuildWithoutCompile(request);
    if (built.ok()) {
      const int64_t tiles = built->lowered->num_tiles;
      if (before_balancing.has_value() && SmBalance(tiles, sm_count) <= balance_before) {
        return before_balancing;
      }
      if (wanted_tiles < 0) {
        wanted_tiles = tiles >= 2 * sm_count
                           ? 0
                           : std::min<int64_t>(RecordTiles(definition, record, tuned, target),
                                               2 * sm_count);
      }
      best.emplace();
      best->request = std::move(request);
      best->built = *std::move(built);
      // As stored, the record's description says it all.
      if (refitted) best->detail = absl::StrCat(
          ", tile fitted to ", absl::StrJoin(launch.tile, "x"),
          halvings > 0 ? absl::StrCat(" (", absl::StrJoin(fitted_tile, "x"), " halved ", halvings,
                                      "x: ", why, ")")
                       : "",
          tuned.hints.loop_layout.has_value() && !op.hints.loop_layout.has_value()
              ? " (its thread layout left to the lowering)"
              : "");
      // Halving doubles the tiles: done once that would pass what was wanted, unless it
      // leaves the SMs markedly uneven.
      const bool balances = HalvingBalances(tiles, sm_count);
      if (2 * tiles > wanted_tiles && !balances) return best;
      if (2 * tiles > wanted_tiles) {
        before_balancing = best;
        balance_before = SmBalance(tiles, sm_count);
      }
      if (why.empty()) {
        why = 2 * tiles > wanted_tiles
                  ? absl::StrFormat("its %d tiles spread over %d SMs at %.2f of the busiest",
                                    tiles, sm_count, SmBalance(tiles, sm_count))
                  : absl::StrCat("it made ", tiles, " tiles, the record ", wanted_tiles,
                                 " of its problem");
      }
    } else if (best.has_value()) {
      return best;  // Smaller no longer lowers: the last that did.
    } else if (why.empty()) {
      why = "it did not lower";
    }
    if (!definition.HalveTile(resolved, record.winner().lowering().form(), launch.tile)) break;
  }
  return best;
}

namespace {

// Whether `hints` set `key` (a keyword or its annotation).
bool Sets(const Hints& hints, const std::string& key) {
  if (hints.annotations.count(key)) return true;
  if (key == "prefer_instruction") return hints.prefer_instruction.has_value();
  return key == "loop_layout" && hints.loop_layout.has_value();
}

// The records a nearest one is chosen among, for the resolution's detail.
const char* Pool(const TileOpDefinition& definition) {
  return definition.TransfersAcrossElementSizes() ? "this operator and architecture"
                                                  : "this operator, element size and architecture";
}

}  // namespace

Resolution TunedResolver::Repathed(const tuning::TuningRecord& record, const Trial& tuned,
                                   const TileOpDefinition& definition,
                                   const std::shared_ptr<const DeviceCodegen>& codegen,
                                   const TileOp& op, const TileOp& resolved, const Target& target,
                                   const std::string& variant, Resolution fitted) const {
  // The record's path keeps its vector on the record's problem; where it cannot on this
  // one (cp.async of an odd-sized tensor falls to 4-byte copies: it has no head_tail
  // form) while this problem's alignments allow wider, the path the record chose is what
  // made it fast no longer. Its path and thread layout give way, to the lowering's choice
  // and then to the SIMT path's, and the widest vector wins (the record's own on ties).
  const int widest = std::min(record.winner().lowering().vector_bytes(),
                              definition.WidestVectorBytes(op));
  if (fitted.built.lowered->vector_bytes >= widest || Sets(op.hints, "prefer_instruction")) {
    return fitted;
  }
  const int narrowed = fitted.built.lowered->vector_bytes;
  for (std::optional<Instruction> path : {std::optional<Instruction>(), std::optional(Instruction::kSync)}) {
    std::unique_ptr<TileOp> repathed = resolved.Clone();
    repathed->hints.prefer_instruction = path;
    repathed->hints.annotations.erase("prefer_instruction");
    if (!Sets(op.hints, "loop_layout")) {
      repathed->hints.loop_layout.reset();
      repathed->hints.annotations.erase("loop_layout");
    }
    Trial unpathed = tuned;
    unpathed.hints = repathed->hints;
    if (path.has_value()) {
      // The SIMT path's direct form: the one whose head_tail and shifted forms keep wide
      // vectors over odd ends and starts.
      unpathed.launch.through_shared = false;
      unpathed.launch.stages = 1;
    }
    std::optional<Resolution> other =
        Transfer(record, unpathed, definition, codegen, op, *repathed, target);
    if (!other.has_value() || other->built.lowered->vector_bytes <= fitted.built.lowered->vector_bytes) {
      continue;
    }
    other->level = fitted.level;
    other->codegen = codegen;
    other->detail = absl::StrCat(
        variant, other->detail, "; its ",
        fitted.built.lowered->path_name, " path moves ", narrowed, "-byte vectors here, ",
        other->built.lowered->path_name, " ", other->built.lowered->vector_bytes,
        "-byte ones: ", path.has_value() ? "the SIMT path" : "the lowering's path",
        " instead");
    fitted = *std::move(other);
    if (fitted.built.lowered->vector_bytes >= widest) break;
  }
  return fitted;
}

absl::StatusOr<Resolution> TunedResolver::Attempt(
    const tuning::TuningRecord& record, ResolutionLevel level,
    const std::shared_ptr<const DeviceCodegen>& codegen, const TileOp& op,
    const tuning::Problem& problem, const Target& target) const {
  absl::StatusOr<Resolution> resolution = Fit(record, level, codegen, op, problem, target);
  if (resolution.ok()) resolution->origin = origins_[&record - records_.data()];
  return resolution;
}

std::optional<absl::StatusOr<Resolution>> TunedResolver::Exact(
    absl::flat_hash_map<std::string, size_t>::const_iterator by_key,
    const std::shared_ptr<const DeviceCodegen>& codegen, const TileOp& op,
    const tuning::Problem& problem, const Target& target) const {
  if (by_key == by_key_.end()) return std::nullopt;
  absl::StatusOr<Resolution> first =
      Attempt(records_[by_key->second], ResolutionLevel::kExact, codegen, op, problem, target);
  if (first.ok() && !first->stale) return first;
  auto shadowed = shadowed_by_key_.find(by_key->first);
  if (shadowed == shadowed_by_key_.end()) return first;
  const std::string& above = origins_[by_key->second];
  for (size_t index : shadowed->second) {
    // Only a record known to describe today's kernel: one with no digest may not.
    if (shadowed_records_[index].winner().source_sha256().empty()) continue;
    absl::StatusOr<Resolution> below = Fit(shadowed_records_[index], ResolutionLevel::kExact,
                                           codegen, op, problem, target);
    if (!below.ok() || below->stale) continue;
    below->origin = shadowed_origins_[index];
    below->detail = absl::StrCat(
        below->detail, "; from ", below->origin.empty() ? "a lower database" : below->origin,
        ", below ", above.empty() ? "a database" : above, " whose record of this problem ",
        first.ok() ? "timed a kernel that has changed since"
                   : absl::StrCat("does not lower (", first.status().message(), ")"));
    return below;
  }
  return first;
}

absl::StatusOr<Resolution> TunedResolver::Fit(
    const tuning::TuningRecord& record, ResolutionLevel level,
    const std::shared_ptr<const DeviceCodegen>& codegen, const TileOp& op,
    const tuning::Problem& problem, const Target& target) const {
  TT_ASSIGN_OR_RETURN(Trial tuned, TrialOf(record.winner()));
  TT_ASSIGN_OR_RETURN(const TileOpDefinition* definition, ops_->For(op));
  // The same problem on another board or architecture keeps everything it was tuned with.
  const bool same_problem =
      level == ResolutionLevel::kExact || SameProblem(problem, record.problem());
  std::string width;  // what became of the record's coalesced_width, where it changed
  // Choices bound to the record's own geometry are left to this problem's lowering.
  std::string dropped;
  if (!same_problem) {
    for (const std::string& key : definition->hint_scope().problem_bound) {
      if (tuned.hints.annotations.erase(key) > 0) absl::StrAppend(&dropped, ", ", key);
    }
    if (!dropped.empty()) absl::StrAppend(&dropped, " left to the lowering");
  }
  // A record of another element size (TransfersAcrossElementSizes): its width, counted in
  // its elements, is the same bytes in ours.
  if (absl::StatusOr<DataType> theirs = ParseDataType(record.problem().dtype());
      theirs.ok() && DataTypeBytes(*theirs) != DataTypeBytes(op.dtype()) &&
      tuned.hints.coalesced_width.has_value()) {
    const int bytes = *tuned.hints.coalesced_width * DataTypeBytes(*theirs);
    tuned.hints.coalesced_width =
        bytes >= DataTypeBytes(op.dtype())
            ? std::optional<int>(bytes / DataTypeBytes(op.dtype()))
            : std::nullopt;
  }
  if (!same_problem && tuned.hints.coalesced_width.has_value()) {
    const std::optional<int> kept = TransferredWidth(*definition, record, tuned, op, target);
    if (kept != tuned.hints.coalesced_width) {
      width = kept.has_value() ? absl::StrCat(", coalesced_width=", *kept, " for this problem")
                               : ", coalesced_width left to the lowering";
    }
    tuned.hints.coalesced_width = kept;
  }
  std::unique_ptr<TileOp> resolved = op.Clone();
  resolved->hints = MergeHints(tuned.hints, op.hints);
  const std::string variant = absl::StrCat(ResolutionLevelName(level), ": record ",
                                           tuning::RecordKey(record), " -> ",
                                           tuning::DescribeVariant(record.winner()), width,
                                           dropped);
  if (!same_problem) {
    std::optional<Resolution> fitted =
        Transfer(record, tuned, *definition, codegen, op, *resolved, target);
    if (fitted.has_value()) {
      fitted->level = level;
      fitted->codegen = codegen;
      fitted->detail = absl::StrCat(variant, fitted->detail);
      return FittedThreads(record, *definition, op, target,
                           Repathed(record, tuned, *definition, codegen, op, *resolved, target,
                                    variant, *std::move(fitted)));
    }
  }
  Resolution resolution;
  resolution.level = level;
  resolution.codegen = codegen;
  resolution.request = CodegenRequest{std::move(resolved), tuned.launch, target};
  TT_ASSIGN_OR_RETURN(resolution.built, codegen->BuildWithoutCompile(resolution.request));
  resolution.detail = variant;
  const std::string& timed = record.winner().source_sha256();
  if (level == ResolutionLevel::kExact && !timed.empty()) {
    const std::string now = KernelDigest(resolution.built.source.text);
    if (now != timed) {
      resolution.stale = true;
      absl::StrAppend(&resolution.detail, "; the kernel has changed since this record timed it ",
                      "(digest ", timed.substr(0, 12), " then, ", now.substr(0, 12),
                      " now): tune the problem again to time this one");
    }
  }
  return resolution;
}

namespace {

// Bytes of loads and stores under way per SM that keep HBM busy: an H200's 4.8 TB/s over
// 132 SMs is 36 B/ns per SM, and a load takes most of a microsecond.
constexpr double kBytesInFlightPerSm = 64 * 1024;

// CTAs of `threads` threads and `shared` bytes of dynamic shared memory the GPU holds at
// once (registers aside).
int64_t ResidentCtas(const Target& target, int sm_count, int threads, int64_t shared) {
  return ResidentCtasPerSm(target, threads, shared) * sm_count;
}

}  // namespace

Resolution TunedResolver::FittedThreads(const tuning::TuningRecord& record,
                                        const TileOpDefinition& definition, const TileOp& op,
                                        const Target& target, Resolution fitted) const {
  const int sm_count = RecordSmCount(record);
  const int threads = fitted.request.launch.threads;
  const int64_t tiles = fitted.built.lowered->num_tiles;
  // A persistent grid (ctas_per_sm) holds the CTAs it names.
  if (threads < 256 || tiles <= 0 || fitted.request.launch.ctas_per_sm > 0) return fitted;
  const int64_t resident =
      ResidentCtas(target, sm_count, threads, fitted.built.lowered->shared_bytes);
  // Bytes in flight: an SM keeps the memory busy with about 64 KiB of loads and stores
  // under way; 8 resident CTAs of 4 rows of 224 i32 (7 KiB each, read and written) hold
  // 56 KiB, and 16 of 128 threads twice that.
  const double cta_bytes = static_cast<double>(definition.Sizes(op).bytes_moved) / tiles;
  const double per_sm = cta_bytes * static_cast<double>(resident / sm_count);
  if (per_sm >= kBytesInFlightPerSm || tiles <= resident) return fitted;
  CodegenRequest request{fitted.request.op, fitted.request.launch, target};
  request.launch.threads = threads / 2;
  absl::StatusOr<BuiltKernel> built = fitted.codegen->BuildWithoutCompile(request);
  if (!built.ok() || built->lowered->num_tiles != tiles) return fitted;
  const int64_t halved = ResidentCtas(target, sm_count, threads / 2, built->lowered->shared_bytes);
  if (halved < 2 * resident) return fitted;
  fitted.detail = absl::StrCat(
      fitted.detail, ", ", threads / 2, " threads ",
      absl::StrFormat("(the CTAs resident at %d threads move %.0f KiB per SM at once, "
                      "twice as many at %d)",
                      threads, per_sm / 1024, threads / 2));
  fitted.request = std::move(request);
  fitted.built = *std::move(built);
  return fitted;
}

absl::StatusOr<Resolution> TunedResolver::Heuristic(
    const TileOpDefinition& definition, const std::shared_ptr<const DeviceCodegen>& codegen,
    const TileOp& op, const Target& target, bool safe_fallback) const {
  Trial heuristic = definition.Heuristic(op, target);
  std::unique_ptr<TileOp> resolved = op.Clone();
  resolved->hints = heuristic.hints;
  Resolution resolution;
  resolution.level = ResolutionLevel::kHeuristic;
  resolution.codegen = codegen;
  resolution.request = CodegenRequest{std::move(resolved), heuristic.launch, target};
  absl::StatusOr<BuiltKernel> built = codegen->BuildWithoutCompile(resolution.request);
  if (!built.ok() && safe_fallback) {
    // The op's own hints may not fit the heuristic launch: the smallest safe tile instead.
    LaunchParams safe;
    safe.tile.assign(heuristic.launch.tile.size(), 1);
    safe.tile.back() = std::min<int64_t>(heuristic.launch.tile.back(), 256);
    safe.threads = 64;
    resolution.request.launch = safe;
    built = codegen->BuildWithoutCompile(resolution.request);
  }
  TT_RETURN_IF_ERROR(built.status());
  resolution.built = *std::move(built);
  resolution.detail = absl::StrCat("heuristic: ", codegen->name(), " with ",
                                   resolution.request.launch.threads, " threads");
  return resolution;
}

std::vector<std::pair<double, size_t>> TunedResolver::Ranked(
    const TileOpDefinition& definition, const tuning::Problem& problem,
    const tuning::DeviceIdentity& device) const {
  // Another dtype of the same size moves the same bytes with the same vectors; it ranks
  // behind records of the op's own dtype at equal features.
  constexpr double kOtherDtype = 0.5;
  absl::StatusOr<DataType> dtype = ParseDataType(problem.dtype());
  std::vector<std::pair<double, size_t>> near;
  if (!dtype.ok()) return near;
  const std::vector<double> features = definition.TransferFeatures(problem);
  for (size_t i = 0; i < records_.size(); ++i) {
    const tuning::TuningRecord& record = records_[i];
    if (record.device().cc_major() != device.cc_major() ||
        record.device().cc_minor() != device.cc_minor() ||
        tuning::OperatorName(record.problem()) != definition.name()) {
      continue;
    }
    absl::StatusOr<DataType> theirs_dtype = ParseDataType(record.problem().dtype());
    if (!theirs_dtype.ok() || (DataTypeBytes(*theirs_dtype) != DataTypeBytes(*dtype) &&
                               !definition.TransfersAcrossElementSizes())) {
      continue;
    }
    const std::vector<double> theirs = definition.TransferFeatures(record.problem());
    if (theirs.size() != features.size()) continue;
    double distance = *theirs_dtype == *dtype ? 0 : kOtherDtype;
    for (size_t d = 0; d < features.size(); ++d) distance += std::fabs(features[d] - theirs[d]);
    near.emplace_back(distance, i);
  }
  std::sort(near.begin(), near.end());
  return near;
}

std::optional<tuning::DeviceIdentity> TunedResolver::OlderStandIn(
    const TileOpDefinition& definition, const tuning::DeviceIdentity& device) const {
  absl::StatusOr<Target> mine = TargetOf(device);
  if (!mine.ok()) return std::nullopt;
  auto same_features = [&](const Target& t) {
    return t.HasCpAsync() == mine->HasCpAsync() && t.HasL2CacheHints() == mine->HasL2CacheHints() &&
           t.HasTma() == mine->HasTma();
  };
  std::optional<tuning::DeviceIdentity> best;
  for (const tuning::TuningRecord& record : records_) {
    const tuning::DeviceIdentity& theirs = record.device();
    const int cc = theirs.cc_major() * 10 + theirs.cc_minor();
    if (cc >= mine->arch() || tuning::OperatorName(record.problem()) != definition.name()) continue;
    absl::StatusOr<Target> target = TargetOf(theirs);
    if (!target.ok() || !same_features(*target)) continue;
    if (best && best->cc_major() * 10 + best->cc_minor() >= cc) continue;
    best = device;
    best->set_cc_major(theirs.cc_major());
    best->set_cc_minor(theirs.cc_minor());
  }
  return best;
}

const GpuCostModel* TunedResolver::ModelFor(const tuning::DeviceIdentity& device) const {
  return device.sm_count() > 0 ? CostModelFor(cost_models_, device) : nullptr;
}

const GpuCostModel* TunedResolver::SelectingModelFor(const tuning::DeviceIdentity& device) const {
  return select_by_model_ ? ModelFor(device) : nullptr;
}

absl::StatusOr<std::vector<TunedResolver::NearbyEstimate>> TunedResolver::NearbyEstimates(
    const tuning::DeviceIdentity& device, const TileOp& op) const {
  TT_ASSIGN_OR_RETURN(const TileOpDefinition* definition, ops_->For(op));
  TT_ASSIGN_OR_RETURN(Target target, TargetOf(device));
  TT_ASSIGN_OR_RETURN(std::shared_ptr<const DeviceCodegen> codegen, registry_->Resolve(target));
  TT_ASSIGN_OR_RETURN(tuning::Problem problem, definition->ToProblem(op));
  std::vector<NearbyEstimate> out;
  for (Candidate& c : NearCandidates(Ranked(*definition, problem, device), kModelCandidates,
                                     ModelFor(device), *definition, codegen, op, problem, target,
                                     device.sm_count())) {
    out.push_back({std::move(c.resolution.detail), c.distance, c.predicted_us});
  }
  return out;
}

std::optional<double> TunedResolver::Predicted(const GpuCostModel& model,
                                               const tuning::TuningRecord& record,
                                               const TileOpDefinition& definition,
                                               const Resolution& candidate, const Target& target,
                                               int sm_count) const {
  const double estimated_here =
      model.model.EstimateUs(TermsOf(*candidate.built.lowered, DeviceConstantsFor(target, sm_count)));
  // A model with trees estimates times themselves (or, with ranking trees, orders one
  // problem's kernels, which is all this compares), so it compares a record's variant with
  // the search space's kernels directly; scaled by the record's own measured time over its
  // estimate, the variants of a record whose winner measured below its estimate (as the
  // fastest of many noisy measurements tends to) would all look faster than they are.
  if (model.model.tree_count() > 0) {
    if (!(estimated_here > 0) || !std::isfinite(estimated_here)) return std::nullopt;
    return estimated_here;
  }
  const double measured = record.winner_statistics().median_us();
  if (!(measured > 0)) return std::nullopt;
  absl::StatusOr<Trial> tuned = TrialOf(record.winner());
  if (!tuned.ok()) return std::nullopt;
  std::shared_ptr<const LoweredTileKernel> theirs = RecordLowered(definition, record, *tuned, target);
  if (theirs == nullptr) return std::nullopt;
  const double estimated_there =
      model.model.EstimateUs(TermsOf(*theirs, DeviceConstantsFor(target, RecordSmCount(record))));
  const double predicted = estimated_here * measured / estimated_there;
  if (!(estimated_there > 0) || !(estimated_here > 0) || !std::isfinite(predicted)) {
    return std::nullopt;
  }
  return predicted;
}

std::vector<TunedResolver::Candidate> TunedResolver::NearCandidates(
    const std::vector<std::pair<double, size_t>>& near, size_t count,
    const GpuCostModel* model, const TileOpDefinition& definition,
    const std::shared_ptr<const DeviceCodegen>& codegen, const TileOp& op,
    const tuning::Problem& problem, const Target& target, int sm_count) const {
  std::vector<Candidate> out;
  std::set<std::string> kernels;
  for (size_t rank = 0; rank < near.size() && out.size() < count; ++rank) {
    const auto& [distance, index] = near[rank];
    absl::StatusOr<Resolution> resolution =
        Attempt(records_[index], ResolutionLevel::kNearest, codegen, op, problem, target);
    if (!resolution.ok() || !kernels.insert(KernelKey(resolution->built)).second) continue;
    Candidate candidate{*std::move(resolution), distance, rank, std::nullopt};
    if (model != nullptr) {
      candidate.predicted_us =
          Predicted(*model, records_[index], definition, candidate.resolution, target, sm_count);
    }
    out.push_back(std::move(candidate));
  }
  return out;
}

std::vector<TunedResolver::Candidate> TunedResolver::SpaceCandidates(
    const GpuCostModel& model, const TileOpDefinition& definition,
    const std::shared_ptr<const DeviceCodegen>& codegen, const TileOp& op, const Target& target,
    int sm_count, std::set<std::string>& kernels) const {
  std::vector<Candidate> out;
  const std::vector<Trial> trials = SearchTrials(definition, op, target);
  for (const Trial& trial : trials) {
    std::unique_ptr<TileOp> resolved = op.Clone();
    resolved->hints = MergeHints(trial.hints, op.hints);
    Resolution resolution;
    resolution.level = ResolutionLevel::kHeuristic;
    resolution.codegen = codegen;
    resolution.request = CodegenRequest{std::move(resolved), trial.launch, target};
    absl::StatusOr<BuiltKernel> built = codegen->BuildWithoutCompile(resolution.request);
    if (!built.ok() || !kernels.insert(KernelKey(*built)).second) continue;
    resolution.built = *std::move(built);
    const double estimate = model.model.EstimateUs(
        TermsOf(*resolution.built.lowered, DeviceConstantsFor(target, sm_count)));
    if (!(estimate > 0) || !std::isfinite(estimate)) continue;
    resolution.detail = absl::StrCat(
        "searched: ", tuning::DescribeVariant(VariantOf(resolution.request.op->hints,
                                                        *resolution.built.lowered, "")));
    out.push_back(Candidate{std::move(resolution), 0, out.size(), estimate});
  }
  return out;
}

absl::StatusOr<std::vector<Resolution>> TunedResolver::Alternatives(
    const tuning::DeviceIdentity& device, const TileOp& op, size_t max_count,
    size_t searched) const {
  TT_ASSIGN_OR_RETURN(const TileOpDefinition* definition, ops_->For(op));
  TT_ASSIGN_OR_RETURN(Target target, TargetOf(device));
  TT_ASSIGN_OR_RETURN(std::shared_ptr<const DeviceCodegen> codegen, registry_->Resolve(target));
  tuning::TuningRecord probe;
  *probe.mutable_device() = device;
  TT_ASSIGN_OR_RETURN(*probe.mutable_problem(), definition->ToProblem(op));
  max_count = std::max<size_t>(1, max_count);
  std::vector<Resolution> out;
  std::set<std::string> kernels;
  // Keeps `resolution` when its kernel is new; false when the list is full.
  auto keep = [&](Resolution resolution) {
    if (kernels.insert(KernelKey(resolution.built)).second) out.push_back(std::move(resolution));
    return out.size() < max_count;
  };
  // The records' variants, until the list is full.
  [&] {
    if (std::optional<absl::StatusOr<Resolution>> resolution =
            Exact(by_key_.find(tuning::RecordKey(probe)), codegen, op, probe.problem(), target);
        resolution.has_value() && resolution->ok() && !keep(**std::move(resolution))) {
      return;
    }
    // With a cost model of this GPU, the nearby records' variants go fastest predicted
    // first (those it cannot predict after them); without, nearest first.
    const GpuCostModel* model = SelectingModelFor(device);
    std::vector<Candidate> candidates = NearCandidates(
        Ranked(*definition, probe.problem(), device),
        // One more when the exact record's kernel is listed: a nearby one may repeat it.
        std::max<size_t>(max_count, model != nullptr ? kModelCandidates : 0) + out.size(), model,
        *definition, codegen, op, probe.problem(), target, device.sm_count());
    std::stable_sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
      return a.predicted_us.has_value() && (!b.predicted_us.has_value() || *a.predicted_us < *b.predicted_us);
    });
    for (Candidate& candidate : candidates) {
      candidate.resolution.detail = absl::StrCat(
          candidate.resolution.detail, absl::StrFormat(" (distance %.2f", candidate.distance),
          candidate.predicted_us.has_value()
              ? absl::StrFormat(", predicted %.2f us", *candidate.predicted_us)
              : "",
          ")");
      if (!keep(std::move(candidate.resolution))) return;
    }
    if (const std::optional<tuning::DeviceIdentity> older = OlderStandIn(*definition, device);
        older.has_value() && out.empty()) {
      for (const auto& [distance, index] : Ranked(*definition, probe.problem(), *older)) {
        auto resolution = Attempt(records_[index], ResolutionLevel::kNearest, codegen, op, probe.problem(), target);
        if (!resolution.ok()) continue;
        resolution->detail = absl::StrCat(resolution->detail, " (older architecture sm_",
                                          older->cc_major(), older->cc_minor(),
                                          absl::StrFormat(", distance %.2f)", distance));
        if (!keep(*std::move(resolution))) return;
      }
    }
  }();
  absl::StatusOr<Resolution> heuristic = Heuristic(*definition, codegen, op, target);
  if (heuristic.ok()) {
    // The heuristic always has a place (the last record's, when records filled the list):
    // records bring what was tuned nearby, the heuristic what suits this problem's own
    // shape, which no nearby record may have.
    if (out.size() >= max_count && out.size() > 1 && kernels.count(KernelKey(heuristic->built)) == 0) {
      out.pop_back();
    }
    if (out.size() < max_count) keep(*std::move(heuristic));
  }
  if (out.empty()) {
    return heuristic.ok() ? absl::InternalError("no variant lowers for this problem")
                          : heuristic.status();
  }
  if (const GpuCostModel* model = ModelFor(device); model != nullptr && searched > 0) {
    std::vector<Candidate> space = SpaceCandidates(*model, *definition, codegen, op, target,
                                                   device.sm_count(), kernels);
    std::stable_sort(space.begin(), space.end(), [](const Candidate& a, const Candidate& b) {
      return *a.predicted_us < *b.predicted_us;
    });
    for (size_t i = 0; i < space.size() && i < searched; ++i) {
      space[i].resolution.detail = absl::StrCat(
          space[i].resolution.detail,
          absl::StrFormat(" (the cost model's pick %zu of %zu, estimate %.2f us)", i + 1,
                          space.size(), *space[i].predicted_us));
      out.push_back(std::move(space[i].resolution));
    }
  }
  return out;
}

// The nearest usable record answers, unless the first of the next kWiderRecordTries records
// whose kernel moves wider vectors here than the nearest's, and no wider than it moved on its
// own problem (so its tuning measured that width), and whose problem is of the nearest's
// TransferFamily (a kernel family another problem kind cannot run: its width is that of
// the family's problems, not a misfit), does: a memory-bound kernel's width is
// most of its speed, and the nearest record's width may be its own problem's (its alignment
// or row length) rather than this one's. A kernel that sums several gathered reads
// per output element (LoweredTileKernel::gather_reads above 1: the NCHW folds) keeps the
// nearest's width, where a narrower one reads better, and such a kernel does not take over
// for its width either; both unless the nearest's kernel moves narrower vectors here than on
// its own problem (what made it fast there no longer holds, as in Repathed). Where the
// nearest's kernel narrows so and none of the next records moves wider vectors here, the
// operator's heuristic, at the launch it plans for this problem, answers if it does. Both
// chosen on the shipped tunings' problems replayed without their own records (`autotune
// replay --leave_out`); the held-out replays were unchanged by the heuristic's part
// (bench/results/model_vs_nearest.md). A nearest record of this very problem, tuned on
// another board of the architecture, answers as it is: its tuning measured the other
// widths on this problem.
std::optional<Resolution> TunedResolver::NearestUsable(
    const std::vector<std::pair<double, size_t>>& near, const std::string& why,
    const TileOpDefinition& definition, const std::shared_ptr<const DeviceCodegen>& codegen,
    const TileOp& op, const tuning::Problem& problem, const Target& target) const {
  std::optional<Resolution> nearest;
  double nearest_distance = 0;
  size_t nearest_index = 0;
  // The width the nearest's kernel moved on its own problem, where it moves narrower here.
  std::optional<int> narrowed_from;
  int tries = 0;
  for (const auto& [distance, index] : near) {
    // Past the nearest, every record tried counts, usable or not.
    if (nearest.has_value() && ++tries > kWiderRecordTries) break;
    auto resolution = Attempt(records_[index], ResolutionLevel::kNearest, codegen, op, problem, target);
    if (!resolution.ok()) continue;
    const int here = resolution->built.lowered->vector_bytes;
    if (!nearest.has_value()) {
      nearest_distance = distance;
      nearest_index = index;
      const int own = records_[index].winner().lowering().vector_bytes();
      nearest = *std::move(resolution);
      // The same problem tuned on another board of this architecture: its tuning measured
      // the other widths on this very problem.
      if (SameProblem(records_[index].problem(), problem)) break;
      const std::optional<int64_t>& sums = nearest->built.lowered->gather_reads;
      if (here >= own && sums.has_value() && *sums > 1) break;
      if (here < own) narrowed_from = own;
      continue;
    }
    const std::optional<int64_t>& sums = resolution->built.lowered->gather_reads;
    if (here > nearest->built.lowered->vector_bytes &&
        here <= records_[index].winner().lowering().vector_bytes() &&
        definition.TransferFamily(records_[index].problem()) ==
            definition.TransferFamily(records_[nearest_index].problem()) &&
        (narrowed_from.has_value() || !sums.has_value() || *sums <= 1)) {
      resolution->detail = absl::StrCat(
          why, resolution->detail, " (of ", near.size(),
          " record(s) of ", Pool(definition), ", the nearest (distance ",
          absl::StrFormat("%.2f", nearest_distance), ") moves ",
          nearest->built.lowered->vector_bytes, "-byte vectors here",
          narrowed_from.has_value()
              ? absl::StrCat(" against ", *narrowed_from, " on its own problem")
              : std::string(),
          "; this one, ", here, "-byte ones; distance ",
          absl::StrFormat("%.2f", distance), ")");
      return *std::move(resolution);
    }
  }
  if (nearest.has_value() && narrowed_from.has_value()) {
    // No nearby record keeps its width here: the operator's heuristic, at the launch it
    // plans for this problem, where it moves wider vectors than the nearest's narrowed ones.
    absl::StatusOr<Resolution> planned =
        Heuristic(definition, codegen, op, target, /*safe_fallback=*/false);
    const int here = nearest->built.lowered->vector_bytes;
    if (planned.ok() && planned->built.lowered->vector_bytes > here) {
      const int after = std::min(tries, kWiderRecordTries);
      planned->detail = absl::StrCat(
          why, planned->detail, " (the nearest of ", near.size(),
          " record(s) of ", Pool(definition), " (distance ",
          absl::StrFormat("%.2f", nearest_distance), ") moves ", here,
          "-byte vectors here against ", *narrowed_from, " on its own problem",
          after > 0 ? absl::StrCat(", and none of the ", after, " after it moves wider ones")
                    : std::string(),
          "; the heuristic's moves ", planned->built.lowered->vector_bytes, "-byte ones)");
      return *std::move(planned);
    }
  }
  if (nearest.has_value()) {
    // Why this one: its place among the candidates and how far its features are.
    nearest->detail = absl::StrCat(
        why, nearest->detail, " (nearest usable of ", near.size(),
        " record(s) of ", Pool(definition), " by size, "
        "launch-boundness, alignment, shape and dtype; distance ",
        absl::StrFormat("%.2f", nearest_distance), ")");
  }
  return nearest;
}

std::optional<Resolution> TunedResolver::ByModel(
    const GpuCostModel& model, const std::vector<std::pair<double, size_t>>& near,
    const std::string& why, const TileOpDefinition& definition,
    const std::shared_ptr<const DeviceCodegen>& codegen, const TileOp& op,
    const tuning::Problem& problem, const Target& target, int sm_count) const {
  std::vector<Candidate> candidates =
      NearCandidates(near, kModelCandidates, &model, definition, codegen, op, problem, target,
                     sm_count);
  const size_t from_records = candidates.size();
  // A model with trees estimates kernels well enough to weigh the operator's own search
  // space too; a terms-only one compares only measured records' variants, each scaled by
  // its record's measurement. With no nearby record at all, the older architecture's
  // records and the heuristic answer (Resolve), as without a model.
  if (model.model.tree_count() > 0 && !near.empty()) {
    std::set<std::string> kernels;
    for (const Candidate& c : candidates) kernels.insert(KernelKey(c.resolution.built));
    for (Candidate& c : SpaceCandidates(model, definition, codegen, op, target, sm_count, kernels)) {
      candidates.push_back(std::move(c));
    }
  }
  Candidate* best = nullptr;
  for (Candidate& c : candidates) {
    if (c.predicted_us.has_value() && (best == nullptr || *c.predicted_us < *best->predicted_us)) {
      best = &c;
    }
  }
  if (best != nullptr && from_records == 0) {
    best->resolution.detail = absl::StrCat(
        why, best->resolution.detail,
        absl::StrFormat(" (the cost model's fastest of %d kernels of the operator's search "
                        "space, predicted %.2f us; no nearby record lowers; %s)",
                        candidates.size(), *best->predicted_us, model.origin));
    best->resolution.chosen_by_model = true;
    return std::move(best->resolution);
  }
  if (best != nullptr && model_margin_ > 0) {
    // The kernel the nearest record's selection launches stays unless the model predicts
    // another faster by the margin; one it cannot predict stays too.
    std::optional<Resolution> kept =
        NearestUsable(near, why, definition, codegen, op, problem, target);
    const Candidate* same = nullptr;
    for (const Candidate& c : candidates) {
      if (kept.has_value() && KernelKey(c.resolution.built) == KernelKey(kept->built)) same = &c;
    }
    // Its estimate: as a candidate's, or, for a kernel no candidate holds (the heuristic's),
    // from a model with trees, which estimates any kernel.
    std::optional<double> kept_us = same != nullptr ? same->predicted_us : std::nullopt;
    if (same == nullptr && kept.has_value() && model.model.tree_count() > 0) {
      const double estimate = model.model.EstimateUs(
          TermsOf(*kept->built.lowered, DeviceConstantsFor(target, sm_count)));
      if (estimate > 0 && std::isfinite(estimate)) kept_us = estimate;
    }
    if (kept.has_value() && same != best &&
        (!kept_us.has_value() || *best->predicted_us * (1 + model_margin_) > *kept_us)) {
      kept->detail = absl::StrCat(
          kept->detail,
          kept_us.has_value()
              ? absl::StrFormat("; kept over the cost model's fastest of %d kernels, "
                                "predicted %.2f us against its %.2f us, not %g%% faster (%s)",
                                candidates.size(), *best->predicted_us, *kept_us,
                                100 * model_margin_, model.origin)
              : absl::StrFormat("; kept: the cost model (%s) does not predict it",
                                model.origin));
      // The model judged it unless it could not predict it.
      kept->chosen_by_model = kept_us.has_value();
      return kept;
    }
  }
  if (best != nullptr) {
    const Candidate& nearest = candidates.front();
    best->resolution.detail = absl::StrCat(
        why, best->resolution.detail,
        absl::StrFormat(" (the cost model's fastest of the variants of the %d nearest usable "
                        "record(s) of %d",
                        from_records, near.size()),
        candidates.size() > from_records
            ? absl::StrFormat(" and %d kernels of the operator's search space",
                              candidates.size() - from_records)
            : "",
        absl::StrFormat(", predicted %.2f us", *best->predicted_us),
        &nearest == best
            ? ", the nearest's own"
            : nearest.predicted_us.has_value()
                  ? absl::StrFormat(" against the nearest's %.2f us", *nearest.predicted_us)
                  : "",
        best - candidates.data() >= static_cast<std::ptrdiff_t>(from_records)
            ? absl::StrFormat("; %s; a kernel of the search space)", model.origin)
            : absl::StrFormat("; %s, distance %.2f, rank %d)", model.origin, best->distance,
                              best->rank + 1));
    best->resolution.chosen_by_model = true;
    return std::move(best->resolution);
  }
  return std::nullopt;
}

absl::StatusOr<Resolution> TunedResolver::Resolve(const tuning::DeviceIdentity& device,
                                                  const TileOp& op) const {
  TT_ASSIGN_OR_RETURN(const TileOpDefinition* definition, ops_->For(op));
  TT_ASSIGN_OR_RETURN(Target target, TargetOf(device));
  TT_ASSIGN_OR_RETURN(std::shared_ptr<const DeviceCodegen> codegen, registry_->Resolve(target));
  tuning::TuningRecord probe;
  *probe.mutable_device() = device;
  TT_ASSIGN_OR_RETURN(*probe.mutable_problem(), definition->ToProblem(op));
  const tuning::Problem& problem = probe.problem();
  std::string why;

  // 1. Exact.
  if (std::optional<absl::StatusOr<Resolution>> resolution =
          Exact(by_key_.find(tuning::RecordKey(probe)), codegen, op, problem, target)) {
    if (resolution->ok()) return *std::move(resolution);
    why = absl::StrCat("exact record unusable (", resolution->status().message(), "); ");
  } else {
    why = "no exact record; ";
  }

  // 2. Nearest problem of the same operator (and element size, unless the operator's
  // records transfer across them) on the same architecture.
  const std::vector<std::pair<double, size_t>> near = Ranked(*definition, problem, device);
  // With a cost model of this GPU: the kernel it predicts fastest.
  if (const GpuCostModel* model = SelectingModelFor(device); model != nullptr) {
    if (std::optional<Resolution> chosen = ByModel(*model, near, why, *definition, codegen, op,
                                                   problem, target, device.sm_count())) {
      return *std::move(chosen);
    }
  }
  if (std::optional<Resolution> nearest =
          NearestUsable(near, why, *definition, codegen, op, probe.problem(), target);
      nearest.has_value()) {
    return *std::move(nearest);
  }
  absl::StrAppend(&why, near.empty() ? absl::StrCat("no record of ", Pool(*definition), "; ")
                                     : absl::StrCat(near.size(), " nearby record(s) do not lower "
                                                                 "for this problem; "));

  // 3. An older architecture with the same data-movement features, only when this one
  // has nothing usable.
  if (const std::optional<tuning::DeviceIdentity> older = OlderStandIn(*definition, device);
      older.has_value()) {
    const std::vector<std::pair<double, size_t>> old_near = Ranked(*definition, problem, *older);
    for (const auto& [distance, index] : old_near) {
      auto resolution = Attempt(records_[index], ResolutionLevel::kNearest, codegen, op, probe.problem(), target);
      if (resolution.ok()) {
        resolution->detail = absl::StrCat(
            why, resolution->detail, " (tuned on the older architecture sm_", older->cc_major(),
            older->cc_minor(), ", which has the same data-movement features; nearest usable of ",
            old_near.size(), " of its record(s); distance ", absl::StrFormat("%.2f", distance), ")");
        return resolution;
      }
    }
    absl::StrAppend(&why, "no record of the older architecture sm_", older->cc_major(),
                    older->cc_minor(), " lowers for this problem; ");
  }

  // 4. Heuristic.
  TT_ASSIGN_OR_RETURN(Resolution resolution, Heuristic(*definition, codegen, op, target));
  resolution.detail = absl::StrCat(why, resolution.detail);
  return resolution;
}

}  // namespace tiletune

#include "compiler/ops/copy/copy_lowering.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/base/status_macros.h"
#include "compiler/ir/buffer.h"
#include "compiler/lower/lowering_rules.h"

namespace tiletune {
namespace {

constexpr uint64_t kTwoTo32 = uint64_t{1} << 32;
constexpr int64_t kTwoTo40 = int64_t{1} << 40;

std::string Dims(const std::vector<int64_t>& v) { return absl::StrCat("[", absl::StrJoin(v, ", "), "]"); }

struct Operand {
  std::vector<int64_t> extents;
  std::vector<int64_t> strides;
  int64_t offset = 0;
};

// Drops unit dimensions, keeping the strides of the others.
Operand Squeeze(const Region& region) {
  Operand operand;
  operand.offset = region.BaseOffsetElements();
  for (int d = 0; d < region.rank(); ++d) {
    if (region.extents[d] == 1) continue;
    operand.extents.push_back(region.extents[d]);
    operand.strides.push_back(region.buffer.strides[d]);
  }
  if (operand.extents.empty()) {
    operand.extents = {1};
    operand.strides = {1};
  }
  return operand;
}

bool IsContiguous(const Operand& operand) {
  int64_t expected = 1;
  for (int d = static_cast<int>(operand.extents.size()) - 1; d >= 0; --d) {
    if (operand.strides[d] != expected) return false;
    expected *= operand.extents[d];
  }
  return true;
}

// Per-path feasibility: the reasons a path cannot be used, empty when it can.
class PathChecks {
 public:
  PathChecks(const Target& target, const LaunchParams& launch, const LoweredCopy& lowered)
      : target_(target), launch_(launch), l_(lowered) {}

  std::vector<std::string> Tma() const {
    std::vector<std::string> why = CommonTma();
    int r = Rank();
    if (l_.src_strides[r - 1] != 1 || l_.dst_strides[r - 1] != 1) {
      why.push_back("the innermost dimension is strided (TMA needs stride 1)");
    }
    int64_t inner_bytes = l_.tile[r - 1] * l_.element_bytes;
    if (inner_bytes % 16 != 0) {
      why.push_back(absl::StrCat("tile inner dimension ", l_.tile[r - 1], " x ", l_.element_bytes,
                                 " B = ", inner_bytes, " B is not a multiple of 16 B"));
    }
    for (int d = 0; d < r; ++d) {
      if (l_.tile[d] > 256) {
        why.push_back(absl::StrCat("tile dimension ", d, " is ", l_.tile[d],
                                   " (a TMA box dimension is at most 256)"));
      }
      if (static_cast<uint64_t>(l_.extents[d]) >= kTwoTo32) {
        why.push_back(absl::StrCat("extent ", l_.extents[d], " in dimension ", d,
                                   " is not below 2^32"));
      }
    }
    for (int d = 0; d + 1 < r; ++d) {
      for (const auto* strides : {&l_.src_strides, &l_.dst_strides}) {
        int64_t bytes = (*strides)[d] * l_.element_bytes;
        if (bytes % 16 != 0 || bytes >= kTwoTo40) {
          why.push_back(absl::StrCat(strides == &l_.src_strides ? "src" : "dst",
                                     " stride of dimension ", d, " is ", bytes,
                                     " B (TMA needs a multiple of 16 B below 2^40)"));
        }
      }
    }
    return why;
  }

  std::vector<std::string> Bulk1d() const {
    std::vector<std::string> why = CommonTma();
    if (Rank() != 1 || l_.src_strides[0] != 1 || l_.dst_strides[0] != 1) {
      why.push_back("bulk_1d needs a contiguous copy tiled with a 1-D tile");
    }
    if (l_.tile_bytes % 16 != 0) {
      why.push_back(absl::StrCat("tile of ", l_.tile_bytes, " B is not a multiple of 16 B"));
    }
    int64_t total_bytes = l_.extents[0] * l_.element_bytes;
    if (total_bytes % 16 != 0) {
      why.push_back(absl::StrCat("copy of ", total_bytes, " B is not a multiple of 16 B"));
    }
    return why;
  }

  std::vector<std::string> CpAsync() const {
    std::vector<std::string> why;
    if (!target_.HasCpAsync()) {
      why.push_back(absl::StrCat(target_.ArchName(), " has no cp.async (sm_80+)"));
    }
    int vector_bytes = l_.vector_elems * l_.element_bytes;
    if (vector_bytes < 4) {
      why.push_back(absl::StrCat("vector of ", vector_bytes,
                                 " B (cp.async moves 4, 8 or 16 B; alignment allows only ",
                                 vector_bytes, " B here)"));
    }
    if (!launch_.through_shared) why.push_back("through_shared=false is for sync_simt only");
    CheckSharedFit(l_.tile_bytes * launch_.stages, launch_.ctas_per_sm, target_, why);
    if (l_.items_per_thread > kMaxCpAsyncItemsPerThread) {
      why.push_back(absl::StrCat(l_.items_per_thread, " cp.async per thread per stage exceeds ",
                                 kMaxCpAsyncItemsPerThread,
                                 "; use more threads or a smaller tile"));
    }
    return why;
  }

  std::vector<std::string> SyncSimt() const {
    std::vector<std::string> why;
    if (launch_.stages != 1) {
      why.push_back(absl::StrCat("stages=", launch_.stages,
                                 ": sync_simt is not pipelined; use stages=1"));
    }
    if (launch_.through_shared) {
      CheckSharedFit(l_.tile_bytes, launch_.ctas_per_sm, target_, why);
    }
    if (l_.items_per_thread > kMaxSimtItemsPerThread) {
      why.push_back(absl::StrCat(l_.items_per_thread, " vector accesses per thread exceeds ",
                                 kMaxSimtItemsPerThread, "; use more threads or a smaller tile"));
    }
    return why;
  }

 private:
  int Rank() const { return static_cast<int>(l_.extents.size()); }

  std::vector<std::string> CommonTma() const {
    std::vector<std::string> why;
    if (!target_.HasTma()) why.push_back(absl::StrCat(target_.ArchName(), " has no TMA (sm_90+)"));
    if (l_.hints.disable_tma) why.push_back("disable_tma is set");
    if (!launch_.through_shared) why.push_back("through_shared=false is for sync_simt only");
    for (int64_t offset : {l_.src_offset, l_.dst_offset}) {
      if (offset * l_.element_bytes % 16 != 0) {
        why.push_back(absl::StrCat("region starts ", offset * l_.element_bytes,
                                   " B into its buffer (TMA needs 16-B alignment)"));
      }
    }
    CheckSharedFit(RoundUp(l_.tile_bytes, 128) * launch_.stages, launch_.ctas_per_sm, target_,
                   why);
    return why;
  }

  const Target& target_;
  const LaunchParams& launch_;
  const LoweredCopy& l_;
};

// The copy's dimensions after squeezing (and flattening for a 1-D tile), the tile in
// them, and the tile counts.
absl::Status PlaceTiles(const CopyOp& op, const LaunchParams& launch, LoweredCopy& l) {
  Operand src = Squeeze(op.src);
  Operand dst = Squeeze(op.dst);
  l.extents = src.extents;
  l.src_strides = src.strides;
  l.dst_strides = dst.strides;
  l.src_offset = src.offset;
  l.dst_offset = dst.offset;
  int rank = static_cast<int>(l.extents.size());

  // Bring the tile to the copy's rank.
  std::vector<int64_t> tile = launch.tile;
  if (static_cast<int>(tile.size()) == op.src.rank() && op.src.rank() != rank) {
    std::vector<int64_t> kept;
    for (int d = 0; d < op.src.rank(); ++d) {
      if (op.src.extents[d] != 1) {
        kept.push_back(tile[d]);
      } else if (tile[d] != 1) {
        return absl::InvalidArgumentError(absl::StrCat("tile ", Dims(tile), " spans ", tile[d],
                                                       " in dimension ", d,
                                                       ", whose extent is 1; use 1 there"));
      }
    }
    if (kept.empty()) kept.push_back(1);
    tile = kept;
  }
  if (tile.size() == 1 && rank > 1) {
    if (!IsContiguous(src) || !IsContiguous(dst)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "a 1-D tile needs a contiguous copy; ", RegionToString(op.src), " -> ",
          RegionToString(op.dst), " is strided: give one tile extent per dimension"));
    }
    int64_t n = op.src.NumElements();
    l.extents = {n};
    l.src_strides = {1};
    l.dst_strides = {1};
    rank = 1;
    l.decision_log.push_back(absl::StrCat("contiguous copy flattened to ", n, " elements"));
  }
  if (static_cast<int>(tile.size()) != rank) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tile ", Dims(tile), " has rank ", tile.size(), " but the copy ", Dims(l.extents),
        " has rank ", rank, " (unit dimensions dropped); give ", rank, " tile extents"));
  }
  l.tile = tile;
  l.num_tiles = 1;
  l.tile_bytes = l.element_bytes;
  for (int d = 0; d < rank; ++d) {
    l.tiles_per_dim.push_back(CeilDiv(l.extents[d], l.tile[d]));
    l.num_tiles *= l.tiles_per_dim[d];
    l.tile_bytes *= l.tile[d];
  }
  if (l.num_tiles >= (int64_t{1} << 31)) {
    return absl::InvalidArgumentError(absl::StrCat(l.num_tiles,
                                                   " tiles exceed the 2^31-1 CTA grid; use a "
                                                   "larger tile"));
  }
  l.decision_log.push_back(absl::StrCat("copy ", DataTypeName(l.dtype), " ", Dims(l.extents),
                                        " with tile ", Dims(l.tile), ": ", l.num_tiles,
                                        " tiles of ", l.tile_bytes, " B"));
  return absl::OkStatus();
}

// Vector width: the widest that every row start, extent, tile and region offset allows,
// or the coalesced_width hint.
absl::Status ChooseVector(LoweredCopy& l) {
  const int r = static_cast<int>(l.extents.size());
  std::vector<VectorConstraint> constraints = {{"inner extent", l.extents[r - 1]},
                                               {"tile inner extent", l.tile[r - 1]}};
  for (int d = 0; d + 1 < r; ++d) {
    constraints.push_back({"src stride", l.src_strides[d]});
    constraints.push_back({"dst stride", l.dst_strides[d]});
  }
  constraints.push_back({"src offset", l.src_offset});
  constraints.push_back({"dst offset", l.dst_offset});
  std::string limit;
  const bool contiguous = l.src_strides[r - 1] == 1 && l.dst_strides[r - 1] == 1;
  const int legal = WidestVector(l.element_bytes, contiguous, "strided innermost dimension",
                                 constraints, &limit);
  TT_ASSIGN_OR_RETURN(l.vector_elems,
                      ChooseVectorWidth(l.hints, legal, l.element_bytes, limit, "", l.decision_log));
  return absl::OkStatus();
}

// Thread layout over (tile rows, vectors per row) and the accesses per thread.
absl::Status ChooseLayout(const LaunchParams& launch, LoweredCopy& l) {
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < l.tile.size(); ++d) rows *= l.tile[d];
  const int64_t vectors_per_row = l.tile.back() / l.vector_elems;
  TT_ASSIGN_OR_RETURN(l.layout, ChooseLoopLayout(l.hints, launch.threads, vectors_per_row));
  l.decision_log.push_back(absl::StrCat("loop layout ", LoopLayoutName(l.layout),
                                        l.hints.loop_layout.has_value()
                                            ? " (hint)"
                                            : ": consecutive threads take consecutive vectors"));
  l.items_per_thread = static_cast<int>(std::min<int64_t>(
      CeilDiv(rows, l.layout.rows) * CeilDiv(vectors_per_row, l.layout.cols), 1 << 30));
  return absl::OkStatus();
}

// Shared memory, barriers and tensor maps of the chosen path.
void PlaceResources(const LaunchParams& launch, LoweredCopy& l) {
  const int rank = static_cast<int>(l.extents.size());
  switch (l.path) {
    case CopyPath::kTma:
    case CopyPath::kBulk1d:
      l.shared_bytes = RoundUp(l.tile_bytes, 128) * l.stages;
      l.barriers = l.stages;
      l.decision_log.push_back(absl::StrCat(l.stages, " stage(s), one mbarrier each; ",
                                            l.path == CopyPath::kTma ? "TMA store" : "bulk store",
                                            " back to global"));
      if (l.hints.coalesced_width.has_value() || l.hints.loop_layout.has_value()) {
        l.decision_log.push_back("coalesced_width and loop_layout do not apply to TMA transfers");
      }
      break;
    case CopyPath::kCpAsync:
      l.shared_bytes = l.tile_bytes * l.stages;
      break;
    case CopyPath::kSyncSimt:
      l.shared_bytes = launch.through_shared ? l.tile_bytes : 0;
      l.decision_log.push_back(launch.through_shared ? "global -> shared -> global"
                                                     : "direct global -> global");
      break;
  }
  if (l.path != CopyPath::kTma) return;
  for (auto operand : {TensorMapSpec::Operand::kInput, TensorMapSpec::Operand::kOutput}) {
    const bool is_src = operand == TensorMapSpec::Operand::kInput;
    const std::vector<int64_t>& strides = is_src ? l.src_strides : l.dst_strides;
    TensorMapSpec map;
    map.operand = operand;
    map.element_bytes = l.element_bytes;
    map.base_offset_bytes = (is_src ? l.src_offset : l.dst_offset) * l.element_bytes;
    for (int d = rank - 1; d >= 0; --d) {
      map.dims.push_back(static_cast<uint64_t>(l.extents[d]));
      map.box.push_back(static_cast<uint32_t>(l.tile[d]));
      if (d != rank - 1) map.strides_bytes.push_back(strides[d] * l.element_bytes);
    }
    l.tensor_maps.push_back(map);
  }
}

}  // namespace

std::string CopyPathName(CopyPath path) {
  switch (path) {
    case CopyPath::kTma: return "tma";
    case CopyPath::kBulk1d: return "bulk_1d";
    case CopyPath::kCpAsync: return "cp_async";
    case CopyPath::kSyncSimt: return "sync_simt";
  }
  return "unknown";
}

absl::StatusOr<LoweredCopy> LowerCopy(const CopyOp& op, const Target& target,
                                      const LaunchParams& launch) {
  TT_RETURN_IF_ERROR(ValidateCopyOp(op));
  TT_RETURN_IF_ERROR(ValidateLaunchParams(launch, target));
  if (op.src.buffer.scope != Scope::kGlobal || op.dst.buffer.scope != Scope::kGlobal) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a copy kernel moves global -> global through its own shared tile; got ",
        ScopeName(op.src.buffer.scope), " -> ", ScopeName(op.dst.buffer.scope)));
  }
  LoweredCopy l;
  l.op = CopyOp::Name();
  l.input_name = "src";
  l.output_name = "dst";
  l.target = target;
  l.dtype = op.src.buffer.dtype;
  l.element_bytes = DataTypeBytes(l.dtype);
  TT_ASSIGN_OR_RETURN(l.hints, ResolveHints(op.hints, CopyHintScope()));
  l.launch = launch;
  l.stages = launch.stages;
  std::string hint_text = HintsToString(l.hints);
  l.decision_log.push_back(absl::StrCat("target ", target.ArchName(), "; hints: ",
                                        hint_text.empty() ? "none" : hint_text));
  TT_RETURN_IF_ERROR(PlaceTiles(op, launch, l));
  TT_RETURN_IF_ERROR(ChooseVector(l));
  // The layout comes before the SIMT checks, which count accesses per thread.
  TT_RETURN_IF_ERROR(ChooseLayout(launch, l));

  PathChecks checks(target, launch, l);
  const bool one_d = l.extents.size() == 1;
  const std::vector<std::pair<CopyPath, PathOption>> chain = {
      one_d ? std::make_pair(CopyPath::kBulk1d,
                             PathOption{Instruction::kTma, CopyPathName(CopyPath::kBulk1d),
                                        [&] { return checks.Bulk1d(); }})
            : std::make_pair(CopyPath::kTma, PathOption{Instruction::kTma,
                                                        CopyPathName(CopyPath::kTma),
                                                        [&] { return checks.Tma(); }}),
      {CopyPath::kCpAsync, PathOption{Instruction::kCpAsync, CopyPathName(CopyPath::kCpAsync),
                                      [&] { return checks.CpAsync(); }}},
      {CopyPath::kSyncSimt, PathOption{Instruction::kSync, CopyPathName(CopyPath::kSyncSimt),
                                       [&] { return checks.SyncSimt(); }}},
  };
  std::vector<PathOption> options;
  for (const auto& [path, option] : chain) options.push_back(option);
  TT_ASSIGN_OR_RETURN(size_t chosen, ChoosePath(options, l.hints, "copy", target, l.decision_log));
  l.path = chain[chosen].first;
  l.path_name = CopyPathName(l.path);
  l.instruction = chain[chosen].second.instruction;
  l.vector_bytes = l.vector_elems * l.element_bytes;
  PlaceResources(launch, l);
  l.l2_policy = ChooseL2Policy(l.hints.eviction_policy, target, "every load and store",
                               l.decision_log);
  l.kernel_name = absl::StrCat("tt_copy_", l.path_name);
  return l;
}

std::string DescribeCopyPlan(const LoweredCopy& l) {
  std::string out = PlanHeader(l);
  absl::StrAppend(&out, "extents     [", absl::StrJoin(l.extents, ", "), "]\n");
  absl::StrAppend(&out, "tile        [", absl::StrJoin(l.tile, ", "), "] (", l.tile_bytes,
                  " B), ", l.num_tiles, " tiles\n");
  absl::StrAppend(&out, "threads     ", l.launch.threads, "\n");
  if (l.path == CopyPath::kSyncSimt || l.path == CopyPath::kCpAsync) {
    absl::StrAppend(&out, "vector      ", l.vector_elems, " elements (",
                    l.vector_elems * l.element_bytes, " B)\n");
    absl::StrAppend(&out, "layout      ", LoopLayoutName(l.layout), ", ", l.items_per_thread,
                    " accesses per thread per tile\n");
  }
  absl::StrAppend(&out, PlanFooter(l, l.l2_policy ? EvictionPolicyName(*l.l2_policy)
                                                   : std::string("none")));
  return out;
}

}  // namespace tiletune

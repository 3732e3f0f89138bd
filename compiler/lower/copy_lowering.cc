#include "compiler/lower/copy_lowering.h"

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
#include "compiler/ir/copy_op.h"
#include "compiler/lower/lowered_kernel.h"

namespace tiletune {
namespace {

constexpr uint64_t kTwoTo32 = uint64_t{1} << 32;
constexpr int64_t kTwoTo40 = int64_t{1} << 40;
// Shared bytes kept back from the per-block limit for static barriers.
constexpr int64_t kReservedShared = 1024;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t RoundUp(int64_t a, int64_t b) { return CeilDiv(a, b) * b; }

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
class Lowering {
 public:
  Lowering(const Target& target, const LaunchParams& launch, LoweredCopy& lowered)
      : target_(target), launch_(launch), l_(lowered) {}

  std::vector<std::string> CheckTma() const {
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

  std::vector<std::string> CheckBulk1d() const {
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

  std::vector<std::string> CheckCpAsync() const {
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
    AppendSharedFit(why, l_.tile_bytes * launch_.stages);
    if (Items() > kMaxCpAsyncItemsPerThread) {
      why.push_back(absl::StrCat(Items(), " cp.async per thread per stage exceeds ",
                                 kMaxCpAsyncItemsPerThread, "; use more threads or a smaller tile"));
    }
    return why;
  }

  std::vector<std::string> CheckSyncSimt() const {
    std::vector<std::string> why;
    if (launch_.stages != 1) {
      why.push_back(absl::StrCat("stages=", launch_.stages,
                                 ": sync_simt is not pipelined; use stages=1"));
    }
    if (launch_.through_shared) AppendSharedFit(why, l_.tile_bytes);
    if (Items() > kMaxSimtItemsPerThread) {
      why.push_back(absl::StrCat(Items(), " vector accesses per thread exceeds ",
                                 kMaxSimtItemsPerThread, "; use more threads or a smaller tile"));
    }
    return why;
  }

  // Thread layout over (tile rows, vectors per row); the loop_layout hint wins.
  absl::Status ChooseLayout() {
    int64_t vectors_per_row = l_.tile.back() / l_.vector_elems;
    if (l_.hints.loop_layout.has_value()) {
      const LoopLayout& layout = *l_.hints.loop_layout;
      if (layout.rows * layout.cols != launch_.threads) {
        return absl::InvalidArgumentError(absl::StrCat(
            "loop_layout ", LoopLayoutName(layout), " arranges ", layout.rows * layout.cols,
            " threads but the launch has ", launch_.threads,
            "; give ROWSxCOLS with ROWS*COLS = threads"));
      }
      l_.layout = layout;
      l_.decision_log.push_back(absl::StrCat("loop layout ", LoopLayoutName(layout), " (hint)"));
    } else {
      int cols = 1;
      while (cols * 2 <= launch_.threads && cols * 2 <= vectors_per_row &&
             launch_.threads % (cols * 2) == 0) {
        cols *= 2;
      }
      l_.layout = LoopLayout{launch_.threads / cols, cols};
      l_.decision_log.push_back(absl::StrCat("loop layout ", LoopLayoutName(l_.layout),
                                             ": consecutive threads take consecutive vectors"));
    }
    l_.items_per_thread = static_cast<int>(Items());
    return absl::OkStatus();
  }

  int64_t Items() const {
    int64_t rows = 1;
    for (size_t d = 0; d + 1 < l_.tile.size(); ++d) rows *= l_.tile[d];
    int64_t vectors_per_row = l_.tile.back() / l_.vector_elems;
    int layout_rows = l_.layout.rows > 0 ? l_.layout.rows : 1;
    int layout_cols = l_.layout.cols > 0 ? l_.layout.cols : 1;
    return CeilDiv(rows, layout_rows) * CeilDiv(vectors_per_row, layout_cols);
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
    AppendSharedFit(why, RoundUp(l_.tile_bytes, 128) * launch_.stages);
    return why;
  }

  void AppendSharedFit(std::vector<std::string>& why, int64_t bytes) const {
    int64_t limit = target_.MaxSharedBytesPerBlock() - kReservedShared;
    if (bytes > limit) {
      why.push_back(absl::StrCat(bytes, " B of shared memory (tile x stages) exceeds the ",
                                 limit, " B a block may use on ", target_.ArchName()));
    }
    int ctas = std::max(launch_.ctas_per_sm, 1);
    if (launch_.ctas_per_sm > 0 && bytes * ctas > target_.MaxSharedBytesPerSm()) {
      why.push_back(absl::StrCat(ctas, " CTAs per SM x ", bytes, " B exceeds the ",
                                 target_.MaxSharedBytesPerSm(), " B of shared memory per SM"));
    }
  }

  const Target& target_;
  const LaunchParams& launch_;
  LoweredCopy& l_;
};

// Widest vector (elements, power of two, <= 16 B) that every row start, extent, tile and
// region offset allows.
int LegalVectorElems(const LoweredCopy& l, std::string* limit) {
  int r = static_cast<int>(l.extents.size());
  int v = 16 / l.element_bytes;
  if (l.src_strides[r - 1] != 1 || l.dst_strides[r - 1] != 1) {
    *limit = "strided innermost dimension";
    return 1;
  }
  auto fits = [&](int width) -> std::string {
    if (l.extents[r - 1] % width) return absl::StrCat("inner extent ", l.extents[r - 1]);
    if (l.tile[r - 1] % width) return absl::StrCat("tile inner extent ", l.tile[r - 1]);
    for (int d = 0; d + 1 < r; ++d) {
      if (l.src_strides[d] % width) return absl::StrCat("src stride ", l.src_strides[d]);
      if (l.dst_strides[d] % width) return absl::StrCat("dst stride ", l.dst_strides[d]);
    }
    if (l.src_offset % width) return absl::StrCat("src offset ", l.src_offset);
    if (l.dst_offset % width) return absl::StrCat("dst offset ", l.dst_offset);
    return "";
  };
  while (v > 1) {
    std::string why = fits(v);
    if (why.empty()) break;
    *limit = why;
    v /= 2;
  }
  return v;
}

}  // namespace

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
  l.target = target;
  l.dtype = op.src.buffer.dtype;
  l.element_bytes = DataTypeBytes(l.dtype);
  TT_ASSIGN_OR_RETURN(l.hints, ResolveHints(op.hints));
  l.launch = launch;
  l.stages = launch.stages;
  std::string hint_text = HintsToString(l.hints);
  l.decision_log.push_back(absl::StrCat("target ", target.ArchName(), "; hints: ",
                                        hint_text.empty() ? "none" : hint_text));

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

  std::string vector_limit;
  int legal = LegalVectorElems(l, &vector_limit);
  l.vector_elems = legal;
  if (l.hints.coalesced_width.has_value()) {
    int width = *l.hints.coalesced_width;
    if (legal % width != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "coalesced_width=", width, " does not divide the widest aligned vector here, ", legal,
          " element(s)", vector_limit.empty() ? "" : absl::StrCat(" (limited by ", vector_limit, ")"),
          "; use a divisor of ", legal));
    }
    l.vector_elems = width;
    l.decision_log.push_back(absl::StrCat("vector width ", width, " elements (coalesced_width; ",
                                          legal, " allowed)"));
  } else {
    l.decision_log.push_back(absl::StrCat(
        "vector width ", legal, " elements (", legal * l.element_bytes, " B)",
        vector_limit.empty() ? "" : absl::StrCat(", limited by ", vector_limit)));
  }

  Lowering lowering(target, launch, l);
  // The layout is computed before the SIMT checks, which count accesses per thread.
  TT_RETURN_IF_ERROR(lowering.ChooseLayout());

  // The chain, starting at the preferred path.
  LoweringPath tma_path = rank == 1 ? LoweringPath::kBulk1d : LoweringPath::kTma;
  std::vector<LoweringPath> chain = {tma_path, LoweringPath::kCpAsync, LoweringPath::kSyncSimt};
  size_t start = 0;
  if (l.hints.prefer_instruction.has_value()) {
    switch (*l.hints.prefer_instruction) {
      case Instruction::kTma:
        if (l.hints.disable_tma) {
          return absl::InvalidArgumentError(
              "prefer_instruction=tma conflicts with disable_tma=true: drop one of them");
        }
        start = 0;
        break;
      case Instruction::kCpAsync: start = 1; break;
      case Instruction::kSync: start = 2; break;
    }
  }
  bool chosen = false;
  for (size_t i = start; i < chain.size() && !chosen; ++i) {
    LoweringPath path = chain[i];
    std::vector<std::string> why;
    switch (path) {
      case LoweringPath::kTma: why = lowering.CheckTma(); break;
      case LoweringPath::kBulk1d: why = lowering.CheckBulk1d(); break;
      case LoweringPath::kCpAsync: why = lowering.CheckCpAsync(); break;
      default: why = lowering.CheckSyncSimt(); break;
    }
    if (why.empty()) {
      l.path = path;
      chosen = true;
      l.decision_log.push_back(absl::StrCat(
          "path ", LoweringPathName(path),
          i == start && l.hints.prefer_instruction ? " (preferred)" : ""));
      break;
    }
    std::string reasons = absl::StrJoin(why, "; ");
    bool explicit_choice = i == start && l.hints.prefer_instruction.has_value();
    if (explicit_choice && l.hints.fallback == FallbackMode::kError) {
      return absl::InvalidArgumentError(absl::StrCat(
          "prefer_instruction=", InstructionName(*l.hints.prefer_instruction),
          " cannot be honoured for this copy on ", target.ArchName(), ": ", reasons,
          ". Fix the constraint, drop prefer_instruction, or annotate fallback=auto"));
    }
    l.decision_log.push_back(
        absl::StrCat(LoweringPathName(path), " rejected: ", reasons, "; falling back"));
    if (i + 1 == chain.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("no lowering path fits this copy and launch: ", reasons));
    }
  }

  // Shared memory, barriers, tensor maps.
  switch (l.path) {
    case LoweringPath::kTma:
    case LoweringPath::kBulk1d:
      l.shared_bytes = RoundUp(l.tile_bytes, 128) * l.stages;
      l.barriers = l.stages;
      break;
    case LoweringPath::kCpAsync:
      l.shared_bytes = l.tile_bytes * l.stages;
      break;
    default:
      l.shared_bytes = launch.through_shared ? l.tile_bytes : 0;
      l.decision_log.push_back(launch.through_shared ? "global -> shared -> global"
                                                     : "direct global -> global");
      break;
  }
  if (l.path == LoweringPath::kTma) {
    for (auto operand : {TensorMapSpec::Operand::kSrc, TensorMapSpec::Operand::kDst}) {
      bool is_src = operand == TensorMapSpec::Operand::kSrc;
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
  if (l.path == LoweringPath::kTma || l.path == LoweringPath::kBulk1d) {
    l.decision_log.push_back(absl::StrCat(l.stages, " stage(s), one mbarrier each; ",
                                          l.path == LoweringPath::kTma ? "TMA store" : "bulk store",
                                          " back to global"));
  }
  if (l.path == LoweringPath::kTma || l.path == LoweringPath::kBulk1d) {
    if (l.hints.coalesced_width.has_value() || l.hints.loop_layout.has_value()) {
      l.decision_log.push_back("coalesced_width and loop_layout do not apply to TMA transfers");
    }
  }

  if (l.hints.eviction_policy.has_value()) {
    EvictionPolicy policy = *l.hints.eviction_policy;
    if (!target.HasL2CacheHints()) {
      l.decision_log.push_back(absl::StrCat("eviction_policy ignored: ", target.ArchName(),
                                            " has no L2 cache hints (sm_80+)"));
    } else if (policy == EvictionPolicy::kEvictNormal) {
      l.decision_log.push_back("evict_normal is the default L2 priority: no policy emitted");
    } else {
      l.l2_policy = policy;
      l.decision_log.push_back(absl::StrCat("L2 ", EvictionPolicyName(policy),
                                            " via createpolicy on every load and store"));
    }
  }
  l.kernel_name = absl::StrCat("tt_copy_", LoweringPathName(l.path));
  return l;
}

}  // namespace tiletune

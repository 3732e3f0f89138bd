#include "compiler/ops/copy/copy_lowering.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
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

// Merges neighbouring dimensions that are contiguous in both operands (the outer
// stride is the inner one times its extent, on both sides): a dense tensor becomes 1-D,
// a slice of whole rows one run per slice. Returns the merged groups for the log.
std::vector<std::string> MergeContiguous(Operand& src, Operand& dst) {
  std::vector<std::string> merged;
  for (int d = static_cast<int>(src.extents.size()) - 2; d >= 0; --d) {
    const bool src_joins = src.strides[d] == src.strides[d + 1] * src.extents[d + 1];
    const bool dst_joins = dst.strides[d] == dst.strides[d + 1] * dst.extents[d + 1];
    if (!src_joins || !dst_joins) continue;
    merged.push_back(absl::StrCat(src.extents[d], " x ", src.extents[d + 1]));
    for (Operand* o : {&src, &dst}) {
      o->extents[d] *= o->extents[d + 1];
      o->strides[d] = o->strides[d + 1];
      o->extents.erase(o->extents.begin() + d + 1);
      o->strides.erase(o->strides.begin() + d + 1);
    }
  }
  return merged;
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
    if (l_.span) {
      // The span form loops over its blocks at run time: only its shared memory is bounded.
      CheckSharedFit(SpanStageBytes(l_.tile[0], l_.src_strides[0] * l_.element_bytes),
                     launch_.ctas_per_sm, target_, why);
    } else if (l_.items_per_thread > kMaxSimtItemsPerThread) {
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

// The copy's dimensions, the tile in them, and the tile counts. Unit dimensions are
// dropped and dimensions contiguous in both operands merged; a tile with one extent per
// merged dimension tiles those. A tile with one extent per unmerged dimension (squeezed,
// or with 1s at the unit dimensions) keeps the dimensions as they are.
absl::Status PlaceTiles(const CopyOp& op, const LaunchParams& launch, LoweredCopy& l) {
  const Operand src = Squeeze(op.src);
  const Operand dst = Squeeze(op.dst);
  Operand merged_src = src, merged_dst = dst;
  const std::vector<std::string> merged = MergeContiguous(merged_src, merged_dst);
  const int squeezed_rank = static_cast<int>(src.extents.size());
  const int merged_rank = static_cast<int>(merged_src.extents.size());
  l.src_offset = src.offset;
  l.dst_offset = dst.offset;

  std::vector<int64_t> tile = launch.tile;
  const int tile_rank = static_cast<int>(tile.size());
  bool merge = true;
  if (tile_rank != merged_rank) {
    merge = false;
    // Bring a tile over the unsqueezed dimensions to the squeezed ones.
    if (tile_rank == op.src.rank() && op.src.rank() != squeezed_rank) {
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
    if (static_cast<int>(tile.size()) != squeezed_rank) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tile ", Dims(tile), " has rank ", tile_rank, " but the copy ", Dims(merged_src.extents),
          " has rank ", merged_rank, " (unit dimensions dropped, dimensions contiguous in src "
          "and dst merged); give ", merged_rank, " tile extents",
          merged_rank != squeezed_rank
              ? absl::StrCat(", or ", squeezed_rank, " to tile ", Dims(src.extents), " unmerged")
              : ""));
    }
  }
  const Operand& s = merge ? merged_src : src;
  const Operand& d_side = merge ? merged_dst : dst;
  l.extents = s.extents;
  l.src_strides = s.strides;
  l.dst_strides = d_side.strides;
  const int rank = static_cast<int>(l.extents.size());
  if (!merged.empty()) {
    l.decision_log.push_back(
        merge ? absl::StrCat("merged ", absl::StrJoin(merged, ", "),
                             " (contiguous in src and dst): ", Dims(src.extents), " -> ",
                             Dims(l.extents))
              : absl::StrCat("dimensions left unmerged: the tile has one extent per dimension of ",
                             Dims(src.extents)));
  }
  l.tile = tile;
  l.num_tiles = 1;
  l.tile_bytes = l.element_bytes;
  for (int d = 0; d < rank; ++d) {
    l.tiles_per_dim.push_back(CeilDiv(l.extents[d], l.tile[d]));
    l.tile_bytes *= l.tile[d];
  }
  return absl::OkStatus();
}

// The tile count (after the head_tail form may have changed the tiles along rows).
absl::Status CountTiles(LoweredCopy& l) {
  l.num_tiles = 1;
  for (int64_t t : l.tiles_per_dim) {
    l.num_tiles *= t;
    if (l.num_tiles >= (int64_t{1} << 31)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "copy ", Dims(l.extents), " with tile ", Dims(l.tile),
          " needs more than 2^31-1 tiles (the CTA grid); use a larger tile"));
    }
  }
  l.decision_log.push_back(absl::StrCat("copy ", DataTypeName(l.dtype), " ", Dims(l.extents),
                                        " with tile ", Dims(l.tile), ": ", l.num_tiles,
                                        " tiles of ", l.tile_bytes, " B"));
  return absl::OkStatus();
}


// Why a 2-D copy whose rows suit the span form (SpanGeometry, or narrower than 16 B) does
// not take it; empty when it does. The span is read whole, gaps included, so the src pitch
// may be at most twice the row; a coalesced_width other than 16 B asks for the row-by-row
// kernel instead.
std::string SpanRefusal(const LaunchParams& launch, const LoweredCopy& l) {
  const int e = l.element_bytes;
  const int64_t row_bytes = l.extents[1] * e;
  const int64_t pitch = l.src_strides[0] * e;
  std::vector<std::string> why;
  if (launch.through_shared) why.push_back("through_shared=true asks for the tiled kernel");
  if (launch.stages != 1) why.push_back(absl::StrCat("stages=", launch.stages, " (it is not pipelined)"));
  if (l.hints.coalesced_width.has_value() && *l.hints.coalesced_width * e != 16) {
    why.push_back(absl::StrCat("coalesced_width=", *l.hints.coalesced_width,
                               " asks for vectors of ", *l.hints.coalesced_width * e,
                               " B along the rows"));
  }
  if (pitch < row_bytes) {
    why.push_back(absl::StrCat("the src rows overlap (a pitch of ", pitch, " B under the row's ",
                               row_bytes, " B)"));
  } else if (pitch > 2 * row_bytes) {
    why.push_back(absl::StrCat("the src pitch, ", pitch, " B, is not within twice the row (",
                               2 * row_bytes, " B): reading the span would read more than twice "
                               "the bytes copied"));
  }
  if (l.tile[1] < l.extents[1]) {
    why.push_back(absl::StrCat("the tile's inner extent ", l.tile[1],
                               " does not hold a whole row of ", l.extents[1]));
  }
  return absl::StrJoin(why, "; ");
}

void ChooseSpan(LoweredCopy& l) {
  const int e = l.element_bytes;
  const int64_t row_bytes = l.extents[1] * e;
  const int64_t src_pitch = l.src_strides[0] * e;
  const int64_t dst_pitch = l.dst_strides[0] * e;
  l.span = true;
  l.form_name = "span";
  l.tile[1] = l.extents[1];
  l.tiles_per_dim[1] = 1;
  l.tile_bytes = l.tile[0] * row_bytes;
  l.vector_elems = 16 / e;
  l.input_align = l.output_align = e;
  l.relative_align = 1;
  const bool dense_dst = dst_pitch == row_bytes;
  l.decision_log.push_back(absl::StrCat(
      "span form: rows of ", row_bytes, " B at a src pitch of ", src_pitch, " B (",
      row_bytes * 100 / src_pitch, "% of the span copied); each tile's ", l.tile[0],
      " rows read as their src span in aligned 16-B vectors into shared memory (bytewise where "
      "an end block sticks out of the copy's span), then ",
      dense_dst ? "written as aligned 16-B vectors of the contiguous dst rows"
                : absl::StrCat("written element by element (dst pitch ", dst_pitch,
                               " B is not the row)")));
  if (!dense_dst) return;
  // Groups of rows whose dst bytes are whole vectors; their src bytes at fixed words when
  // both starts and every tile's first row are 16-B aligned.
  const int64_t group_rows = 16 / std::gcd<int64_t>(row_bytes, 16);
  std::vector<std::string> why;
  const int src_align = AlignmentOf(l.src_offset * e), dst_align = AlignmentOf(l.dst_offset * e);
  if (src_align < 16) why.push_back(absl::StrCat("the src start is ", src_align, "-B aligned"));
  if (dst_align < 16) why.push_back(absl::StrCat("the dst start is ", dst_align, "-B aligned"));
  // Every tile's first row starts a group (one tile: its first row is the copy's).
  if (l.tiles_per_dim[0] > 1 && l.tile[0] % group_rows != 0) {
    why.push_back(absl::StrCat("the tile's ", l.tile[0], " rows are not whole groups of ",
                               group_rows));
  }
  if (group_rows * src_pitch % 16 != 0 || group_rows * src_pitch > 256) {
    why.push_back(absl::StrCat("a group's src span of ", group_rows * src_pitch,
                               " B is not a multiple of 16 B up to 256 B"));
  }
  if (!why.empty()) {
    l.decision_log.push_back(absl::StrCat("span gather by bytes, not by groups of ", group_rows,
                                          " rows: ", absl::StrJoin(why, "; ")));
    return;
  }
  l.span_group_rows = static_cast<int>(group_rows);
  l.input_align = l.output_align = 16;
  l.decision_log.push_back(absl::StrCat(
      "span groups of ", group_rows, " rows (", group_rows * row_bytes, " B of dst, ",
      group_rows * src_pitch, " B of src at fixed words): each dst word by byte permutes"));
}

// Vector width: the widest that every row start, extent, tile and region alignment
// allows, or the coalesced_width hint. A direct SIMT copy whose rows are contiguous on
// both sides but whose starts or lengths stop wide vectors takes the head_tail form
// instead: it walks each row in aligned slots as wide as the src and dst starts agree
// modulo (their difference's alignment), and moves the partial first and last slot of a
// row piecewise.
absl::Status ChooseVector(const LaunchParams& launch, LoweredCopy& l) {
  const int r = static_cast<int>(l.extents.size());
  const int e = l.element_bytes;
  const int src_align = AlignmentOf(l.src_offset * e);
  const int dst_align = AlignmentOf(l.dst_offset * e);
  std::vector<VectorConstraint> constraints = {{"inner extent", l.extents[r - 1]},
                                               {"tile inner extent", l.tile[r - 1]}};
  for (int d = 0; d + 1 < r; ++d) {
    constraints.push_back({"src stride", l.src_strides[d]});
    constraints.push_back({"dst stride", l.dst_strides[d]});
  }
  // The regions' starts enter as alignments only, so one kernel serves every offset that
  // keeps them.
  constraints.push_back({"src start alignment (elements)", std::max(1, src_align / e)});
  constraints.push_back({"dst start alignment (elements)", std::max(1, dst_align / e)});
  std::string limit;
  const bool contiguous = l.src_strides[r - 1] == 1 && l.dst_strides[r - 1] == 1;
  const int legal = WidestVector(e, contiguous, "strided innermost dimension", constraints, &limit);

  // Rows narrower than a vector: the span form, unless something rules it out. (Single
  // elements at a stride, which squeezing leaves 1-D, load as fast one by one.)
  const MergedCopyGeometry merged{l.extents, l.src_strides, l.dst_strides, l.src_offset,
                                  l.dst_offset};
  const bool span_rows = SpanGeometry(merged, e);
  const bool narrow = r == 2 && contiguous && l.extents[1] * e < 16;
  std::string span_refused;
  if (span_rows || narrow) span_refused = SpanRefusal(launch, l);
  if (narrow) {
    if (span_refused.empty()) {
      ChooseSpan(l);
      return absl::OkStatus();
    }
    l.decision_log.push_back(absl::StrCat("span form not used for rows of ", l.extents[1] * e,
                                          " B: ", span_refused));
  }

  // The head_tail slot: the alignment src and dst rows share, for every row.
  const int slot = AlignmentOfMerged(merged, e).agree;
  const int64_t row_bytes = l.extents[r - 1] * e;
  const int64_t tile_row_bytes = l.tile[r - 1] * e;
  // Both slot forms: a direct SIMT copy of contiguous rows long enough that the partial
  // slots at their ends are few, which fixed vectors would move narrower than 16 B.
  const bool slots_fit = contiguous && !launch.through_shared && launch.stages == 1 &&
                         legal * e < 16 && row_bytes >= 128;
  const bool head_tail_fits = slots_fit && slot >= 8 && slot > legal * e &&
                              tile_row_bytes % slot == 0;
  const bool shifted_fits = slots_fit && slot < 8 && tile_row_bytes % 16 == 0;
  const std::optional<int> hint = l.hints.coalesced_width;
  const bool hint_fixed = hint.has_value() && legal % *hint == 0;
  const bool head_tail =
      head_tail_fits && !hint_fixed && (!hint.has_value() || slot % (*hint * e) == 0);
  const bool shifted = shifted_fits && !hint_fixed && (!hint.has_value() || *hint * e == 16);
  // Wider rows that no 16-B vector fits and no slot form takes: the span form too, its
  // loads and stores 16 B wide whatever the rows' alignment.
  if (!narrow && span_rows && !head_tail && !shifted) {
    if (span_refused.empty()) {
      ChooseSpan(l);
      return absl::OkStatus();
    }
    l.decision_log.push_back(absl::StrCat("span form not used for misaligned rows of ",
                                          row_bytes, " B: ", span_refused));
  }
  if (!head_tail && !shifted) {
    TT_ASSIGN_OR_RETURN(l.vector_elems, ChooseVectorWidth(l.hints, legal, e, limit, "", l.decision_log));
    l.input_align = l.output_align = l.vector_elems * e;
    return absl::OkStatus();
  }
  l.head_tail = true;
  l.shifted = shifted;
  l.form_name = shifted ? "shifted" : "head_tail";
  const int slot_bytes = shifted ? 16 : hint.has_value() ? *hint * e : slot;
  l.vector_elems = slot_bytes / e;
  l.input_align = l.output_align = e;
  l.relative_align = shifted ? 1 : slot_bytes;
  // A row starting anywhere within a slot spans at most this many slots.
  l.row_slots = (slot_bytes - e + row_bytes + slot_bytes - 1) / slot_bytes;
  const int64_t tile_slots = tile_row_bytes / slot_bytes;
  l.tiles_per_dim[r - 1] = CeilDiv(l.row_slots, tile_slots);
  const std::string fixed = absl::StrCat("the widest vector at fixed alignment is ", legal * e,
                                         " B", limit.empty() ? "" : absl::StrCat(" (", limit, ")"),
                                         hint.has_value() ? "; coalesced_width" : "");
  l.decision_log.push_back(
      shifted ? absl::StrCat("shifted form: src and dst starts agree only modulo ", slot,
                             " B; rows of ", row_bytes, " B in dst-aligned 16-B slots (",
                             l.row_slots, " at most per row), each loaded as the two aligned "
                             "16-B blocks of src holding it and funnel-shifted into place (byte "
                             "by byte where those blocks would leave the copy's src span); "
                             "partial slots piecewise; ", fixed)
              : absl::StrCat("head_tail form: rows of ", row_bytes, " B in aligned ", slot_bytes,
                             "-B slots (", l.row_slots, " at most per row), the partial first "
                             "and last slot piecewise; ", fixed));
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
      if (l.span) {
        l.shared_bytes = SpanStageBytes(l.tile[0], l.src_strides[0] * l.element_bytes);
        l.decision_log.push_back(absl::StrCat("global -> shared (", l.shared_bytes,
                                              " B of src span a tile) -> global"));
        break;
      }
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
    for (int d = rank - 1; d >= 0; --d) {
      map.dims.push_back(static_cast<uint64_t>(l.extents[d]));
      map.box.push_back(static_cast<uint32_t>(l.tile[d]));
      if (d != rank - 1) map.strides_bytes.push_back(strides[d] * l.element_bytes);
    }
    l.tensor_maps.push_back(map);
  }
}

}  // namespace

MergedCopyGeometry MergeCopyGeometry(const CopyOp& op) {
  Operand src = Squeeze(op.src);
  Operand dst = Squeeze(op.dst);
  if (src.extents == dst.extents) MergeContiguous(src, dst);  // Else not a valid copy.
  return MergedCopyGeometry{src.extents, src.strides, dst.strides, src.offset, dst.offset};
}

std::vector<int64_t> MergedCopyExtents(const CopyOp& op) { return MergeCopyGeometry(op).extents; }

CopyAlignment AlignmentOfMerged(const MergedCopyGeometry& g, int element_bytes) {
  const int64_t e = element_bytes;
  const int r = static_cast<int>(g.extents.size());
  const bool contiguous = g.src_strides[r - 1] == 1 && g.dst_strides[r - 1] == 1;
  const int64_t run = contiguous ? g.extents[r - 1] * e : e;
  CopyAlignment a;
  // A run's length fixes the alignment of the rows after it; a single run (a dense
  // tensor) has none after it, and its odd end is only the last slot's business.
  a.fixed = !contiguous ? static_cast<int>(std::min<int64_t>(e, 16))
            : r == 1    ? 16
                        : AlignmentOf(run);
  a.agree = AlignmentOf((g.src_offset - g.dst_offset) * e);
  for (int d = 0; d + 1 < r; ++d) {
    for (int64_t stride : {g.src_strides[d], g.dst_strides[d]}) {
      a.fixed = std::min(a.fixed, AlignmentOf(stride * e));
    }
    a.agree = std::min(a.agree, AlignmentOf((g.src_strides[d] - g.dst_strides[d]) * e));
  }
  a.fixed = std::min({a.fixed, AlignmentOf(g.src_offset * e), AlignmentOf(g.dst_offset * e)});
  return a;
}

bool SpanGeometry(const MergedCopyGeometry& g, int element_bytes) {
  const int64_t e = element_bytes;
  if (g.extents.size() != 2 || g.src_strides[1] != 1 || g.dst_strides[1] != 1 ||
      g.src_strides[0] < g.extents[1] || g.src_strides[0] > 2 * g.extents[1]) {
    return false;
  }
  const int64_t row_bytes = g.extents[1] * e;
  if (row_bytes < 16) return true;
  // Wider rows: those no 16-B vector fits (their starts or pitches are misaligned), that
  // the slot forms do not take whole (shorter than 128 B, or not whole 16-B slots), into
  // contiguous dst rows, and short enough that 16 of them stage in shared memory.
  const CopyAlignment a = AlignmentOfMerged(g, element_bytes);
  const int fixed = a.fixed, slot = a.agree;
  // head_tail takes whole rows of 128 B and more that are whole slots of 8 B or more,
  // wider than `fixed`.
  const bool head_tail = row_bytes >= 128 && slot >= 8 && slot > fixed && row_bytes % slot == 0;
  return fixed < 16 && g.dst_strides[0] == g.extents[1] && row_bytes < kSpanMaxRowBytes &&
         (row_bytes < 128 || row_bytes % 16 != 0) && !head_tail;
}

int64_t SpanTileRows(int64_t span_bytes, int64_t pitch_bytes) {
  return std::max<int64_t>(16, span_bytes / std::max<int64_t>(pitch_bytes, 1) / 16 * 16);
}

int64_t SpanStageBytes(int64_t rows, int64_t pitch_bytes) {
  // (rows - 1) pitches and a row of at most a pitch, plus up to 15 B before the first
  // aligned block and after the last.
  return RoundUp(rows * pitch_bytes + 32, 16);
}

int AlignmentOf(int64_t bytes) {
  int a = 16;
  while (a > 1 && bytes % a != 0) a /= 2;
  return a;
}

std::string CopyPathName(CopyPath path) {
  switch (path) {
    case CopyPath::kTma: return "tma";
    case CopyPath::kBulk1d: return "bulk_1d";
    case CopyPath::kCpAsync: return "cp_async";
    case CopyPath::kSyncSimt: return "sync_simt";
  }
  return "unknown";
}

namespace {

// Tile-origin addressing where the tile leaves a partial tile along some dimension, or
// as the simt_addressing annotation asks. A last tile moves back where the overlap it
// redoes is at most a quarter of the dimension; past that, a bounds test costs less.
void ChooseAddressing(LoweredCopy& l) {
  std::vector<std::string> moved, tested;
  l.moved_back.assign(l.extents.size(), false);
  for (size_t d = 0; d < l.extents.size(); ++d) {
    const int64_t extent = l.extents[d], tile = l.tile[d];
    if (extent % tile == 0) continue;
    const int64_t overlap = tile - extent % tile;
    l.moved_back[d] = extent > tile && 4 * overlap <= extent;
    (l.moved_back[d] ? moved : tested)
        .push_back(absl::StrCat(d, " (", extent, " over ", tile, ")"));
  }
  const auto asked = l.hints.choices.find(kSimtAddressingKey);
  const std::string by =
      asked == l.hints.choices.end() ? "" : absl::StrCat(" (", kSimtAddressingKey, "=", asked->second, ")");
  const bool ragged = !moved.empty() || !tested.empty();
  if (asked == l.hints.choices.end() ? !ragged : asked->second == "per_slot") {
    l.moved_back.clear();
    l.decision_log.push_back(absl::StrCat(
        "per-slot addressing", by,
        ragged ? ": each vector located and bounds-tested on its own" : ": the tile divides the copy"));
    return;
  }
  l.addressing = SimtAddressing::kTileOrigin;
  std::string why = absl::StrCat("tile-origin addressing", by,
                                 ": each vector at the thread's base plus a constant");
  if (!moved.empty()) {
    absl::StrAppend(&why, "; the last tile moves back to end with the copy along dimension ",
                    absl::StrJoin(moved, ", "));
  }
  if (!tested.empty()) {
    absl::StrAppend(&why, "; bounds tested against the tile's share of the copy along dimension ",
                    absl::StrJoin(tested, ", "));
  }
  l.decision_log.push_back(why);
}

}  // namespace

std::string SimtAddressingName(SimtAddressing addressing) {
  return addressing == SimtAddressing::kTileOrigin ? "tile_origin" : "per_slot";
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
  TT_RETURN_IF_ERROR(ChooseVector(launch, l));
  TT_RETURN_IF_ERROR(CountTiles(l));
  // The layout comes before the SIMT checks, which count accesses per thread.
  if (l.span) {
    // Every thread walks the tile's span blocks, then its dst blocks or elements.
    l.layout = LoopLayout{launch.threads, 1};
    l.items_per_thread = static_cast<int>(std::min<int64_t>(
        CeilDiv(SpanStageBytes(l.tile[0], l.src_strides[0] * l.element_bytes) / 16,
                launch.threads),
        1 << 30));
  } else {
    TT_RETURN_IF_ERROR(ChooseLayout(launch, l));
  }

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
  if ((l.path == CopyPath::kSyncSimt || l.path == CopyPath::kCpAsync) && !l.span &&
      !l.head_tail) {
    ChooseAddressing(l);
  }
  l.l2_policy = ChooseL2Policy(l.hints.eviction_policy, target, "every load and store",
                               l.decision_log);
  l.kernel_name = absl::StrCat("tt_copy_", l.path_name);
  if (l.path == CopyPath::kTma || l.path == CopyPath::kBulk1d) {
    l.input_align = l.output_align = 16;
  } else if (l.path == CopyPath::kCpAsync) {
    l.input_align = l.output_align = l.vector_bytes;
  }
  l.input_offset_bytes = l.src_offset * l.element_bytes;
  l.output_offset_bytes = l.dst_offset * l.element_bytes;
  int64_t src_span = 1, dst_span = 1;
  for (size_t d = 0; d < l.extents.size(); ++d) {
    src_span += (l.extents[d] - 1) * l.src_strides[d];
    dst_span += (l.extents[d] - 1) * l.dst_strides[d];
  }
  l.input_span_bytes = src_span * l.element_bytes;
  l.output_span_bytes = dst_span * l.element_bytes;
  return l;
}

std::string DescribeCopyPlan(const LoweredCopy& l) {
  std::string out = PlanHeader(l);
  absl::StrAppend(&out, "extents     [", absl::StrJoin(l.extents, ", "), "]\n");
  absl::StrAppend(&out, "tile        [", absl::StrJoin(l.tile, ", "), "] (", l.tile_bytes,
                  " B), ", l.num_tiles, " tiles\n");
  absl::StrAppend(&out, "threads     ", l.launch.threads, "\n");
  if (l.path == CopyPath::kSyncSimt || l.path == CopyPath::kCpAsync) {
    if (l.span) {
      absl::StrAppend(&out, "span        ", l.tile[0], " rows a tile, ", l.shared_bytes,
                      " B of shared memory, 16-B vectors\n");
    }
    absl::StrAppend(&out, l.head_tail ? "slot        " : "vector      ", l.vector_elems,
                    " elements (", l.vector_elems * l.element_bytes, " B)",
                    l.head_tail ? absl::StrCat(", ", l.row_slots, " per row at most") : "", "\n");
    absl::StrAppend(&out, "layout      ", LoopLayoutName(l.layout), ", ", l.items_per_thread,
                    " accesses per thread per tile\n");
  }
  absl::StrAppend(&out, PlanFooter(l, l.l2_policy ? EvictionPolicyName(*l.l2_policy)
                                                   : std::string("none")));
  return out;
}

}  // namespace tiletune

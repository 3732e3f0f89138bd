#include "compiler/ops/copy/copy_emitter.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/codegen/ptx_snippets.h"
#include "compiler/lower/lowering_rules.h"

namespace tiletune {
namespace {

class CopyEmitter {
 public:
  explicit CopyEmitter(const LoweredCopy& l) : l_(l), rank_(static_cast<int>(l.extents.size())) {}

  std::string Emit() {
    Header();
    absl::StrAppend(&out_, PreludeSnippet());
    bool hint = l_.l2_policy.has_value();
    if (hint) absl::StrAppend(&out_, PolicySnippet(*l_.l2_policy));
    int vector_bytes = l_.vector_elems * l_.element_bytes;
    switch (l_.path) {
      case CopyPath::kSyncSimt:
        absl::StrAppend(&out_, VectorAccessSnippet(vector_bytes, hint, hint));
        Constants();
        if (l_.span) {
          SpanKernel();
        } else if (l_.head_tail) {
          HeadTailLocate();
          HeadTailKernel();
        } else if (Lean()) {
          OriginLocate();
          LeanSimtKernel();
        } else {
          Locate();
          SimtKernel();
        }
        break;
      case CopyPath::kCpAsync:
        absl::StrAppend(&out_, VectorAccessSnippet(vector_bytes, hint, hint));
        absl::StrAppend(&out_, CpAsyncSnippet(vector_bytes, hint));
        Constants();
        if (Lean()) {
          OriginLocate();
          LeanCpAsyncKernel();
        } else {
          Locate();
          CpAsyncKernel();
        }
        break;
      case CopyPath::kTma:
        absl::StrAppend(&out_, MbarrierSnippet());
        absl::StrAppend(&out_, TmaTensorSnippet(rank_, hint));
        Constants();
        TmaKernel(/*bulk=*/false);
        break;
      case CopyPath::kBulk1d:
        absl::StrAppend(&out_, MbarrierSnippet());
        absl::StrAppend(&out_, BulkSnippet(hint));
        Constants();
        TmaKernel(/*bulk=*/true);
        break;
    }
    return out_;
  }

 private:
  bool Simt() const {
    return l_.path == CopyPath::kSyncSimt || l_.path == CopyPath::kCpAsync;
  }
  bool Lean() const { return l_.addressing == SimtAddressing::kTileOrigin; }
  int64_t TileRows() const {
    int64_t rows = 1;
    for (int d = 0; d + 1 < rank_; ++d) rows *= l_.tile[d];
    return rows;
  }
  int64_t RowVectors() const { return l_.tile[rank_ - 1] / l_.vector_elems; }
  std::string Policy() const { return l_.l2_policy ? ", policy" : ""; }

  void Header() {
    absl::StrAppend(&out_, "// tiletune copy kernel (generated; do not edit).\n//   path ",
                    CopyPathName(l_.path), ", ", DataTypeName(l_.dtype), ", extents [",
                    absl::StrJoin(l_.extents, ", "), "], tile [", absl::StrJoin(l_.tile, ", "),
                    "], ", l_.launch.threads, " threads\n//   ");
    if (Simt()) {
      absl::StrAppend(&out_, "vector ", l_.vector_elems, " x ", l_.element_bytes, " B, layout ",
                      LoopLayoutName(l_.layout), ", ");
      if (l_.path == CopyPath::kSyncSimt) {
        absl::StrAppend(&out_, l_.span ? std::string("span form, ")
                               : l_.head_tail ? absl::StrCat("direct, ", l_.form_name, " form, ")
                               : l_.launch.through_shared ? std::string("through shared, ")
                                                          : std::string("direct, "));
      }
      if (Lean()) absl::StrAppend(&out_, "tile-origin addressing, ");
    }
    absl::StrAppend(&out_, l_.stages, " stage(s), L2 policy ",
                    l_.l2_policy ? EvictionPolicyName(*l_.l2_policy) : std::string("none"),
                    "\n\n");
  }

  void Constant(const std::string& type, const std::string& name, int64_t value) {
    absl::StrAppend(&out_, ConstantDefinition(type, name, value));
  }

  void Constants() {
    absl::StrAppend(&out_, "\n// Problem constants; enumerators fold into the code and take no storage.\n");
    Constant("u32", "kThreads", l_.launch.threads);
    Constant("u64", "kNumTiles", l_.num_tiles);
    Constant("u32", "kStages", l_.stages);
    Constant("u32", "kTileBytes", l_.tile_bytes);
    Constant("u64", "kElementBytes", l_.element_bytes);
    for (int d = 0; d < rank_; ++d) {
      Constant("u64", absl::StrCat("kExtent", d), l_.extents[d]);
      Constant("u64", absl::StrCat("kTile", d), l_.tile[d]);
      Constant("u64", absl::StrCat("kTiles", d), l_.tiles_per_dim[d]);
      Constant("u64", absl::StrCat("kSrcStride", d), l_.src_strides[d]);
      Constant("u64", absl::StrCat("kDstStride", d), l_.dst_strides[d]);
    }
    if (l_.head_tail) {
      Constant("u64", "kSlotBytes", l_.vector_elems * l_.element_bytes);
      Constant("u64", "kRowBytes", l_.extents[rank_ - 1] * l_.element_bytes);
      if (l_.shifted) {
        // From the first src byte to one past the last: the shifted loads stay inside it.
        int64_t span = l_.extents[rank_ - 1] * l_.element_bytes;
        for (int d = 0; d + 1 < rank_; ++d) {
          span += (l_.extents[d] - 1) * l_.src_strides[d] * l_.element_bytes;
        }
        Constant("u64", "kSrcSpanBytes", span);
      }
      Constant("u64", "kRowSlots", l_.row_slots);
      Constant("u64", "kTileSlots", RowVectors());
    }
    if (l_.span) {
      Constant("u64", "kRowBytes", l_.extents[1] * l_.element_bytes);
      Constant("u64", "kSrcPitch", l_.src_strides[0] * l_.element_bytes);
      Constant("u64", "kDstPitch", l_.dst_strides[0] * l_.element_bytes);
      Constant("u64", "kTileRows", l_.tile[0]);
    } else if (Simt()) {
      Constant("u64", "kVector", l_.vector_elems);
      Constant("u32", "kRows", l_.layout.rows);
      Constant("u32", "kCols", l_.layout.cols);
      Constant("u32", "kTileRows", TileRows());
      Constant("u32", "kRowVectors", RowVectors());
      Constant("u32", "kItemsCol", CeilDiv(RowVectors(), l_.layout.cols));
      Constant("u32", "kItems", CeilDiv(TileRows(), l_.layout.rows) *
                                    CeilDiv(RowVectors(), l_.layout.cols));
    } else {
      int64_t stage_bytes = CeilDiv(l_.tile_bytes, 128) * 128;
      Constant("u32", "kStageBytes", stage_bytes);
      if (l_.path == CopyPath::kBulk1d) {
        Constant("u64", "kTotalBytes", l_.extents[0] * l_.element_bytes);
      }
    }
  }

  // The start of tt_locate: tile `tile`'s coordinates c0.. (in tiles) and, for the
  // dimensions outside the innermost, row `row`'s element coordinates g0.. of the copy.
  void TileCoordinates() {
    absl::StrAppend(&out_, "  u64 t = tile;\n");
    for (int d = rank_ - 1; d >= 1; --d) {
      absl::StrAppend(&out_, "  const u64 c", d, " = t % kTiles", d, ";\n  t /= kTiles", d, ";\n");
    }
    absl::StrAppend(&out_, "  const u64 c0 = t;\n");
    if (rank_ == 1) {
      absl::StrAppend(&out_, "  (void)row;\n");
      return;
    }
    absl::StrAppend(&out_, "  u32 rest = row;\n");
    for (int d = rank_ - 2; d >= 1; --d) {
      absl::StrAppend(&out_, "  const u64 g", d, " = c", d, " * kTile", d, " + rest % kTile", d,
                      ";\n  rest /= kTile", d, ";\n");
    }
    absl::StrAppend(&out_, "  const u64 g0 = c0 * kTile0 + rest;\n");
  }

  // tt_locate: byte offsets of one vector of a tile, and whether it lies inside the copy.
  // tt_in_tile: whether (row, vector) is a slot of the tile at all.
  void Locate() {
    absl::StrAppend(&out_,
                    "\n// Byte offsets of vector `vc` of row `row` of tile `tile`; false when it "
                    "lies outside the copy.\n"
                    "__device__ __forceinline__ bool tt_locate(u64 tile, u32 row, u32 vc, u64& "
                    "src_byte, u64& dst_byte) {\n");
    TileCoordinates();
    int inner = rank_ - 1;
    absl::StrAppend(&out_, "  const u64 g", inner, " = c", inner, " * kTile", inner,
                    " + u64(vc) * kVector;\n");
    std::vector<std::string> src_terms, dst_terms, bounds;
    for (int d = 0; d < rank_; ++d) {
      src_terms.push_back(absl::StrCat("g", d, " * kSrcStride", d));
      dst_terms.push_back(absl::StrCat("g", d, " * kDstStride", d));
      if (l_.extents[d] % l_.tile[d] != 0) bounds.push_back(absl::StrCat("g", d, " < kExtent", d));
    }
    absl::StrAppend(&out_, "  src_byte = (", absl::StrJoin(src_terms, " + "), ") * kElementBytes;\n",
                    "  dst_byte = (", absl::StrJoin(dst_terms, " + "), ") * kElementBytes;\n",
                    "  return ", bounds.empty() ? "true" : absl::StrJoin(bounds, " && "), ";\n}\n");
    std::vector<std::string> slot;
    if (TileRows() % l_.layout.rows != 0) slot.push_back("row < kTileRows");
    if (RowVectors() % l_.layout.cols != 0) slot.push_back("vc < kRowVectors");
    absl::StrAppend(&out_,
                    "__device__ __forceinline__ bool tt_in_tile(u32 row, u32 vc) {\n  (void)row;\n"
                    "  (void)vc;\n  return ",
                    slot.empty() ? "true" : absl::StrJoin(slot, " && "), ";\n}\n",
                    SharedOffset());
  }

  // tt_shared_offset: where vector `vc` of tile row `row` sits in a tile staged in shared
  // memory (both addressings stage tiles alike).
  std::string SharedOffset() const {
    return absl::StrCat("__device__ __forceinline__ u32 tt_shared_offset(u32 row, u32 vc) {\n"
                        "  return u32((u64(row) * kTile", rank_ - 1,
                        " + u64(vc) * kVector) * kElementBytes);\n}\n");
  }

  // The statements adding `vectors` vectors along the innermost dimension to src_byte and
  // dst_byte.
  std::string AddInnerVectors(const std::string& vectors) const {
    return absl::StrCat("  src_byte += ", vectors, " * kVector * kSrcStride", rank_ - 1,
                        " * kElementBytes;\n  dst_byte += ", vectors, " * kVector * kDstStride",
                        rank_ - 1, " * kElementBytes;\n");
  }

  // head_tail: tt_locate gives the byte offsets of a tile row's copy row from the start
  // addresses and the slot index along it; false when the row or slot lies outside.
  void HeadTailLocate() {
    absl::StrAppend(&out_,
                    "\n// Row `row` of tile `tile`: byte offsets of its copy row from the start "
                    "addresses, and the index\n// of slot `sc` along it; false when either lies "
                    "outside the copy.\n"
                    "__device__ __forceinline__ bool tt_locate(u64 tile, u32 row, u32 sc, u64& "
                    "src_row, u64& dst_row, u64& slot) {\n");
    TileCoordinates();
    const int inner = rank_ - 1;
    std::vector<std::string> src_terms, dst_terms, bounds;
    if (rank_ >= 2) {
      for (int d = 0; d < inner; ++d) {
        src_terms.push_back(absl::StrCat("g", d, " * kSrcStride", d));
        dst_terms.push_back(absl::StrCat("g", d, " * kDstStride", d));
        if (l_.extents[d] % l_.tile[d] != 0) bounds.push_back(absl::StrCat("g", d, " < kExtent", d));
      }
    } else {
      src_terms = dst_terms = {"0"};
    }
    absl::StrAppend(&out_, "  slot = c", inner, " * kTileSlots + sc;\n");
    if (l_.row_slots % RowVectors() != 0) bounds.push_back("slot < kRowSlots");
    absl::StrAppend(&out_, "  src_row = (", absl::StrJoin(src_terms, " + "), ") * kElementBytes;\n",
                    "  dst_row = (", absl::StrJoin(dst_terms, " + "), ") * kElementBytes;\n",
                    "  return ", bounds.empty() ? "true" : absl::StrJoin(bounds, " && "), ";\n}\n");
    std::vector<std::string> in_tile;
    if (TileRows() % l_.layout.rows != 0) in_tile.push_back("row < kTileRows");
    if (RowVectors() % l_.layout.cols != 0) in_tile.push_back("sc < kTileSlots");
    absl::StrAppend(&out_,
                    "__device__ __forceinline__ bool tt_in_tile(u32 row, u32 sc) {\n  (void)row;\n"
                    "  (void)sc;\n  return ",
                    in_tile.empty() ? "true" : absl::StrJoin(in_tile, " && "), ";\n}\n");
    // Pieces of a partial slot: aligned and narrower than the slot, so the src side (equal
    // to the dst side modulo the slot) is aligned too.
    absl::StrAppend(
        &out_,
        "// Bytes [begin, end) of a partial slot, from src address = dst address + delta, in\n"
        "// the widest pieces aligned on both sides.\n"
        "__device__ __forceinline__ void tt_copy_piece(u64 begin, u64 end, long long delta) {\n"
        "  while (begin < end) {\n"
        "    const u64 n = end - begin;\n"
        "    const u64 from_address = begin + delta;\n"
        "    const u8* from = reinterpret_cast<const u8*>(from_address);\n"
        "    u8* to = reinterpret_cast<u8*>(begin);\n"
        "    const u64 both = begin | from_address;\n"
        "    if ((both & 7) == 0 && n >= 8) {\n"
        "      *reinterpret_cast<u64*>(to) = *reinterpret_cast<const u64*>(from);\n"
        "      begin += 8;\n"
        "    } else if ((both & 3) == 0 && n >= 4) {\n"
        "      *reinterpret_cast<u32*>(to) = *reinterpret_cast<const u32*>(from);\n"
        "      begin += 4;\n"
        "    } else if ((both & 1) == 0 && n >= 2) {\n"
        "      *reinterpret_cast<unsigned short*>(to) =\n"
        "          *reinterpret_cast<const unsigned short*>(from);\n"
        "      begin += 2;\n"
        "    } else {\n"
        "      *to = *from;\n"
        "      begin += 1;\n"
        "    }\n"
        "  }\n"
        "}\n");
  }

  // shifted: 16 bytes at any src address from the two aligned blocks holding them.
  void ShiftedLoad() {
    const std::string policy_param = l_.l2_policy ? ", u64 policy" : "";
    absl::StrAppend(
        &out_,
        "// The 16 bytes at src address `s`, of any alignment: the two aligned 16-B blocks\n"
        "// holding them (the second only when `s` is not aligned), funnel-shifted. Where a\n"
        "// block would leave the copy's src span [first, end) (the first and last slots of\n"
        "// the copy), the bytes are gathered one by one instead: no load leaves the span.\n"
        "__device__ __forceinline__ tt_vec tt_ld_shifted(u64 s, u64 first, u64 end",
        policy_param, ") {\n"
        "  const u64 a = s & ~u64(15);\n"
        "  const u32 m = u32(s & 15);\n"
        "  if (a < first || a + (m == 0 ? 16 : 32) > end) {\n"
        "    u32 b[4] = {0, 0, 0, 0};\n"
        "#pragma unroll\n"
        "    for (u32 k = 0; k < 16; ++k) {\n"
        "      b[k / 4] |= u32(*reinterpret_cast<const u8*>(s + k)) << (8 * (k % 4));\n"
        "    }\n"
        "    tt_vec v;\n"
        "    v.x = b[0];\n"
        "    v.y = b[1];\n"
        "    v.z = b[2];\n"
        "    v.w = b[3];\n"
        "    return v;\n"
        "  }\n"
        "  const tt_vec x = tt_ld_global(reinterpret_cast<const u8*>(a)", Policy(), ");\n"
        "  if (m == 0) return x;\n"
        "  const tt_vec y = tt_ld_global(reinterpret_cast<const u8*>(a + 16)", Policy(), ");\n"
        "  const u32 w[8] = {x.x, x.y, x.z, x.w, y.x, y.y, y.z, y.w};\n"
        "  // Words m/4 .. m/4+4 by selects (no local memory), then the byte shift.\n"
        "  const u32 q = m >> 2;\n"
        "  const u32 bits = (m & 3) * 8;\n"
        "  u32 o[5];\n"
        "#pragma unroll\n"
        "  for (int i = 0; i < 5; ++i) {\n"
        "    o[i] = q == 0 ? w[i] : q == 1 ? w[i + 1] : q == 2 ? w[i + 2] : w[i + 3];\n"
        "  }\n"
        "  tt_vec v;\n"
        "  v.x = __funnelshift_r(o[0], o[1], bits);\n"
        "  v.y = __funnelshift_r(o[1], o[2], bits);\n"
        "  v.z = __funnelshift_r(o[2], o[3], bits);\n"
        "  v.w = __funnelshift_r(o[3], o[4], bits);\n"
        "  return v;\n"
        "}\n");
  }

  // head_tail and shifted: every thread loads its full slots, moving partial ones on the
  // spot, then stores the full ones.
  void HeadTailKernel() {
    if (l_.shifted) ShiftedLoad();
    KernelSignature(false);
    if (l_.shifted) {
      absl::StrAppend(&out_,
                      "  const u64 span_first = reinterpret_cast<u64>(src);\n"
                      "  const u64 span_end = span_first + kSrcSpanBytes;\n");
    }
    absl::StrAppend(&out_,
                    "  const u32 tr = threadIdx.x / kCols;\n"
                    "  const u32 tc = threadIdx.x % kCols;\n"
                    "  for (u64 tile = blockIdx.x; tile < kNumTiles; tile += gridDim.x) {\n"
                    "    tt_vec v[kItems];\n"
                    "    bool full[kItems];\n"
                    "    u64 at[kItems];\n"
                    "#pragma unroll\n"
                    "    for (u32 i = 0; i < kItems; ++i) {\n"
                    "      full[i] = false;\n"
                    "      const u32 row = tr + (i / kItemsCol) * kRows;\n"
                    "      const u32 sc = tc + (i % kItemsCol) * kCols;\n"
                    "      u64 src_row, dst_row, slot;\n"
                    "      if (!tt_in_tile(row, sc) || !tt_locate(tile, row, sc, src_row, dst_row, slot)) {\n"
                    "        continue;\n"
                    "      }\n"
                    "      // The row's bytes in dst, and this slot's share of them.\n"
                    "      const u64 first = reinterpret_cast<u64>(dst) + dst_row;\n"
                    "      const u64 last = first + kRowBytes;\n"
                    "      const u64 lo = (first & ~(kSlotBytes - 1)) + slot * kSlotBytes;\n"
                    "      const u64 begin = lo > first ? lo : first;\n"
                    "      const u64 end = lo + kSlotBytes < last ? lo + kSlotBytes : last;\n"
                    "      if (begin >= end) continue;\n",
                    l_.shifted ? "      // src address = dst address + delta.\n"
                               : "      // src address = dst address + delta, a multiple of the slot.\n",
                    "      const long long delta =\n"
                    "          (long long)(reinterpret_cast<u64>(src) + src_row) - (long long)first;\n"
                    "      if (end - begin == kSlotBytes) {\n"
                    "        full[i] = true;\n"
                    "        at[i] = lo;\n",
                    l_.shifted ? "        v[i] = tt_ld_shifted(lo + delta, span_first, span_end"
                               : "        v[i] = tt_ld_global(reinterpret_cast<const u8*>(lo + delta)",
                    Policy(),
                    ");\n"
                    "      } else {\n"
                    "        tt_copy_piece(begin, end, delta);\n"
                    "      }\n"
                    "    }\n"
                    "#pragma unroll\n"
                    "    for (u32 i = 0; i < kItems; ++i) {\n"
                    "      if (full[i]) tt_st_global(reinterpret_cast<u8*>(at[i]), v[i]",
                    Policy(), ");\n    }\n  }\n}\n");
  }

  // span: per tile of kTileRows rows, its src span into shared memory in aligned 16-B
  // blocks, then dst from there.
  void SpanKernel() {
    const bool dense_dst = l_.dst_strides[0] == l_.extents[1];
    const int e = l_.element_bytes;
    const std::string elem = e == 8 ? "u64" : e == 4 ? "u32" : e == 2 ? "unsigned short" : "u8";
    // Rows, pitches and the src start are whole elements: gathered an element at a time,
    // or 4 B of one.
    const std::string unit_type = e >= 4 ? "u32" : elem;
    KernelSignature(false);
    absl::StrAppend(
        &out_,
        "  extern __shared__ __align__(128) u8 tt_smem[];\n"
        "  // The copy's whole src span: no load leaves it.\n"
        "  const u64 span_first = reinterpret_cast<u64>(src);\n"
        "  const u64 span_end = span_first + (kExtent0 - 1) * kSrcPitch + kRowBytes;\n"
        "  for (u64 tile = blockIdx.x; tile < kNumTiles; tile += gridDim.x) {\n"
        "    const u64 row0 = tile * kTileRows;\n"
        "    const u64 rows = kExtent0 - row0 < kTileRows ? kExtent0 - row0 : kTileRows;\n"
        "    const u64 first = span_first + row0 * kSrcPitch;\n"
        "    const u64 lo = first & ~u64(15);\n"
        "    const u64 end = first + (rows - 1) * kSrcPitch + kRowBytes;\n"
        "    const u32 blocks = u32(((end + 15) & ~u64(15)) - lo) / 16;\n"
        "    __syncthreads();  // the previous tile's reads of shared memory are done\n"
        "    for (u32 b = threadIdx.x; b < blocks; b += kThreads) {\n"
        "      const u64 a = lo + u64(b) * 16;\n"
        "      if (a >= span_first && a + 16 <= span_end) {\n"
        "        tt_st_shared(tt_smem + b * 16, tt_ld_global(reinterpret_cast<const u8*>(a)",
        Policy(),
        "));\n"
        "      } else {  // an end block of the span: only its bytes inside it\n"
        "#pragma unroll\n"
        "        for (u32 k = 0; k < 16; ++k) {\n"
        "          if (a + k >= span_first && a + k < span_end) {\n"
        "            tt_smem[b * 16 + k] = *reinterpret_cast<const u8*>(a + k);\n"
        "          }\n"
        "        }\n"
        "      }\n"
        "    }\n"
        "    __syncthreads();\n"
        "    const u8* stage = tt_smem + u32(first - lo);  // the tile's first src byte\n");
    if (dense_dst) {
      absl::StrAppend(
          &out_,
          "    // dst rows are contiguous: the tile's dst bytes [dfirst, dend) in aligned 16-B\n"
          "    // blocks, each gathered from the rows in shared memory in units of an element\n"
          "    // (up to 4 B); an end block that other tiles (or other data) share is written\n"
          "    // bytewise, only its own bytes.\n"
          "    typedef ", unit_type, " tt_unit;\n"
          "    const u64 dfirst = reinterpret_cast<u64>(dst) + row0 * kRowBytes;\n"
          "    const u64 dend = dfirst + rows * kRowBytes;\n"
          "    const u64 dlo = dfirst & ~u64(15);\n"
          "    const u32 dblocks = u32(((dend + 15) & ~u64(15)) - dlo) / 16;\n",
          SpanGroups(),
          "    for (u32 b = ", l_.span_group_rows > 0 ? "grouped + " : "",
          "threadIdx.x; b < dblocks; b += kThreads) {\n"
          "      const u64 a = dlo + u64(b) * 16;\n"
          "      if (a >= dfirst && a + 16 <= dend) {\n"
          "        const u32 j = u32(a - dfirst);  // the block's first byte in the tile's dst\n"
          "        u32 col = j % u32(kRowBytes);\n"
          "        u32 at = j / u32(kRowBytes) * u32(kSrcPitch) + col;\n"
          "        u32 w[4] = {0, 0, 0, 0};\n"
          "#pragma unroll\n"
          "        for (u32 k = 0; k < 16; k += sizeof(tt_unit)) {\n"
          "          w[k / 4] |= u32(*reinterpret_cast<const tt_unit*>(stage + at)) << (8 * (k % 4));\n"
          "          at += sizeof(tt_unit);\n"
          "          col += sizeof(tt_unit);\n"
          "          if (col == u32(kRowBytes)) {\n"
          "            col = 0;\n"
          "            at += u32(kSrcPitch - kRowBytes);\n"
          "          }\n"
          "        }\n"
          "        tt_vec v;\n"
          "        v.x = w[0];\n"
          "        v.y = w[1];\n"
          "        v.z = w[2];\n"
          "        v.w = w[3];\n"
          "        tt_st_global(reinterpret_cast<u8*>(a), v",
          Policy(),
          ");\n"
          "      } else {\n"
          "#pragma unroll\n"
          "        for (u32 k = 0; k < 16; ++k) {\n"
          "          if (a + k < dfirst || a + k >= dend) continue;\n"
          "          const u32 j = u32(a + k - dfirst);\n"
          "          *reinterpret_cast<u8*>(a + k) =\n"
          "              stage[j / u32(kRowBytes) * u32(kSrcPitch) + j % u32(kRowBytes)];\n"
          "        }\n"
          "      }\n"
          "    }\n");
    } else {
      absl::StrAppend(
          &out_,
          "    // dst rows are apart: element by element, each row's elements to consecutive\n"
          "    // threads.\n"
          "    typedef ", elem, " tt_elem;\n"
          "    const u32 elements = u32(rows) * u32(kExtent1);\n"
          "    for (u32 i = threadIdx.x; i < elements; i += kThreads) {\n"
          "      const u32 row = i / u32(kExtent1);\n"
          "      const u32 col = (i % u32(kExtent1)) * u32(kElementBytes);\n"
          "      *reinterpret_cast<tt_elem*>(dst + (row0 + row) * kDstPitch + col) =\n"
          "          *reinterpret_cast<const tt_elem*>(stage + row * u32(kSrcPitch) + col);\n"
          "    }\n");
    }
    absl::StrAppend(&out_, "  }\n}\n");
  }

  // span groups: the tile's whole groups of kGroupRows rows, each gathered word by word
  // with byte permutes of its src words (fixed, as both starts and the tile are aligned);
  // `grouped` is the dst blocks they wrote, and the general gather takes the rest.
  std::string SpanGroups() const {
    const int64_t group = l_.span_group_rows;
    if (group == 0) return "";
    const int64_t row = l_.extents[1] * l_.element_bytes;
    const int64_t pitch = l_.src_strides[0] * l_.element_bytes;
    const int64_t src_words = group * pitch / 4;
    const int64_t dst_words = group * row / 4;
    std::string out = absl::StrCat(
        "    // Groups of ", group, " rows: ", group * row, " B of dst (whole vectors) from ",
        group * pitch, " B of src.\n"
        "    const u32 groups = u32(rows) / ", group, "u;\n"
        "    for (u32 g = threadIdx.x; g < groups; g += kThreads) {\n"
        "      const uint4* from = reinterpret_cast<const uint4*>(tt_smem + g * ", group * pitch,
        "u);\n"
        "      u32 s[", src_words, "];\n"
        "#pragma unroll\n"
        "      for (u32 i = 0; i < ", src_words / 4, "u; ++i) {\n"
        "        const uint4 q = from[i];\n"
        "        s[4 * i] = q.x;\n"
        "        s[4 * i + 1] = q.y;\n"
        "        s[4 * i + 2] = q.z;\n"
        "        s[4 * i + 3] = q.w;\n"
        "      }\n"
        "      u8* to = reinterpret_cast<u8*>(dfirst) + g * ", group * row, "u;\n");
    static const char* const kFields[] = {"x", "y", "z", "w"};
    for (int64_t v = 0; v < dst_words / 4; ++v) {
      absl::StrAppend(&out, "      {\n        tt_vec v;\n");
      for (int f = 0; f < 4; ++f) {
        absl::StrAppend(&out, "        v.", kFields[f], " = ", DstWord(4 * v + f, row, pitch),
                        ";\n");
      }
      absl::StrAppend(&out, "        tt_st_global(to + ", 16 * v, ", v", Policy(), ");\n      }\n");
    }
    absl::StrAppend(&out, "    }\n    const u32 grouped = groups * ", group * row / 16, "u;\n");
    return out;
  }

  // Word `w` of a group's dst bytes as an expression of its src words s[]: byte b of dst is
  // byte (b / row) * pitch + b % row of src.
  static std::string DstWord(int64_t w, int64_t row, int64_t pitch) {
    std::vector<int64_t> words;  // distinct src words, in order of first use
    std::vector<std::pair<int, int>> bytes;  // per dst byte: (index in words, byte in word)
    for (int64_t i = 0; i < 4; ++i) {
      const int64_t b = 4 * w + i;
      const int64_t at = (b / row) * pitch + b % row;
      auto it = std::find(words.begin(), words.end(), at / 4);
      if (it == words.end()) it = words.insert(words.end(), at / 4);
      bytes.emplace_back(static_cast<int>(it - words.begin()), static_cast<int>(at % 4));
    }
    auto word = [&](int k) { return absl::StrCat("s[", words[k], "]"); };
    // __byte_perm(x, y, selector): result byte i is byte (selector >> 4i) & 7 of y:x.
    auto selector = [&](auto pick) {
      uint32_t sel = 0;
      for (int i = 0; i < 4; ++i) sel |= static_cast<uint32_t>(pick(i)) << (4 * i);
      return absl::StrCat("0x", absl::Hex(sel, absl::kZeroPad4), "u");
    };
    if (words.size() == 1) {
      bool identity = true;
      for (int i = 0; i < 4; ++i) identity = identity && bytes[i].second == i;
      if (identity) return word(0);
      return absl::StrCat("__byte_perm(", word(0), ", 0u, ",
                          selector([&](int i) { return bytes[i].second; }), ")");
    }
    if (words.size() == 2) {
      return absl::StrCat("__byte_perm(", word(0), ", ", word(1), ", ",
                          selector([&](int i) { return 4 * bytes[i].first + bytes[i].second; }),
                          ")");
    }
    // Three or four words: the bytes of words 0-1 and of words 2-3 first, then both.
    const std::string low = absl::StrCat(
        "__byte_perm(", word(0), ", ", word(1), ", ",
        selector([&](int i) {
          return bytes[i].first < 2 ? 4 * bytes[i].first + bytes[i].second : 0;
        }),
        ")");
    const std::string high = absl::StrCat(
        "__byte_perm(", word(2), ", ", words.size() > 3 ? word(3) : std::string("0u"), ", ",
        selector([&](int i) {
          return bytes[i].first >= 2 ? 4 * (bytes[i].first - 2) + bytes[i].second : 0;
        }),
        ")");
    return absl::StrCat("__byte_perm(", low, ", ", high, ", ",
                        selector([&](int i) { return bytes[i].first < 2 ? i : 4 + i; }), ")");
  }

  void KernelSignature(bool maps) {
    absl::StrAppend(&out_, "\nextern \"C\" __global__ void __launch_bounds__(kThreads) ",
                    l_.kernel_name, "(const u8* __restrict__ src, u8* __restrict__ dst");
    if (maps) {
      absl::StrAppend(&out_, ",\n    const __grid_constant__ tt_tensor_map src_map, "
                             "const __grid_constant__ tt_tensor_map dst_map");
    }
    absl::StrAppend(&out_, ") {\n");
    if (l_.l2_policy) absl::StrAppend(&out_, "  const u64 policy = tt_make_policy();\n");
  }

  void SimtKernel() {
    bool shared = l_.launch.through_shared;
    KernelSignature(false);
    if (shared) absl::StrAppend(&out_, "  extern __shared__ __align__(128) u8 tt_smem[];\n");
    absl::StrAppend(&out_,
                    "  const u32 tr = threadIdx.x / kCols;\n"
                    "  const u32 tc = threadIdx.x % kCols;\n"
                    "  for (u64 tile = blockIdx.x; tile < kNumTiles; tile += gridDim.x) {\n"
                    "    tt_vec v[kItems];\n"
                    "    bool ok[kItems];\n"
                    "    u64 dst_byte[kItems];\n"
                    "#pragma unroll\n"
                    "    for (u32 i = 0; i < kItems; ++i) {\n"
                    "      const u32 row = tr + (i / kItemsCol) * kRows;\n"
                    "      const u32 vc = tc + (i % kItemsCol) * kCols;\n"
                    "      u64 src_byte;\n"
                    "      ok[i] = tt_in_tile(row, vc) && tt_locate(tile, row, vc, src_byte, dst_byte[i]);\n"
                    "      if (ok[i]) v[i] = tt_ld_global(src + src_byte",
                    Policy(), ");\n    }\n");
    if (shared) {
      absl::StrAppend(&out_,
                      "#pragma unroll\n"
                      "    for (u32 i = 0; i < kItems; ++i) {\n"
                      "      const u32 row = tr + (i / kItemsCol) * kRows;\n"
                      "      const u32 vc = tc + (i % kItemsCol) * kCols;\n"
                      "      if (ok[i]) tt_st_shared(tt_smem + tt_shared_offset(row, vc), v[i]);\n"
                      "    }\n"
                      "    __syncthreads();\n"
                      "#pragma unroll\n"
                      "    for (u32 i = 0; i < kItems; ++i) {\n"
                      "      const u32 row = tr + (i / kItemsCol) * kRows;\n"
                      "      const u32 vc = tc + (i % kItemsCol) * kCols;\n"
                      "      if (ok[i]) v[i] = tt_ld_shared(tt_smem + tt_shared_offset(row, vc));\n"
                      "    }\n");
    }
    absl::StrAppend(&out_,
                    "#pragma unroll\n"
                    "    for (u32 i = 0; i < kItems; ++i) {\n"
                    "      if (ok[i]) tt_st_global(dst + dst_byte[i], v[i]",
                    Policy(), ");\n    }\n");
    if (shared) absl::StrAppend(&out_, "    __syncthreads();\n");
    absl::StrAppend(&out_, "  }\n}\n");
  }


  // Whether a thread's rows split into a part of its own and a constant of the unrolled
  // loop: the tile coordinates of row tr + j * kRows are those of tr plus those of
  // j * kRows, with no carry between them, for every row of the tile.
  bool RowsSeparate() const {
    const int64_t rows = TileRows();
    const int64_t step = l_.layout.rows;
    auto digits = [&](int64_t row) {
      std::vector<int64_t> out(rank_ > 1 ? rank_ - 1 : 1, 0);
      for (int d = rank_ - 2; d >= 1; --d) {
        out[d] = row % l_.tile[d];
        row /= l_.tile[d];
      }
      out[0] = row;
      return out;
    };
    for (int64_t tr = 0; tr < step && tr < rows; ++tr) {
      const std::vector<int64_t> own = digits(tr);
      for (int64_t base = 0; tr + base < rows; base += step) {
        const std::vector<int64_t> sum = digits(tr + base), loop = digits(base);
        for (size_t d = 0; d < sum.size(); ++d) {
          if (sum[d] != own[d] + loop[d]) return false;
        }
      }
    }
    return true;
  }

  // tile_origin addressing: tt_origin (a tile's first element), tt_row_offsets (a tile
  // row's offsets within the tile), tt_inside (whether a vector of the tile is one of the
  // copy's: the tile's own slots, and along dimensions shorter than their tile, the copy's
  // extent), tt_opaque (a base the compiler keeps in one register, so that constant
  // offsets from it become immediates).
  // Dimensions a tile_origin kernel bounds-tests: those the tiles do not divide and whose
  // last tile does not move back (every one shorter than its tile among them).
  bool Tested(int d) const {
    return l_.extents[d] % l_.tile[d] != 0 && !(d < static_cast<int>(l_.moved_back.size()) &&
                                                l_.moved_back[d]);
  }

  // The statements that split tile row `row` into its coordinates r0.. (type `type`):
  // the innermost row dimension first; below the outermost row dimension whose tile is
  // longer than 1, a tile row is short of the next one, so that coordinate takes no modulo.
  std::string RowDigits(const std::string& type) const {
    std::string out = "  u32 rest = row;\n";
    for (int d = rank_ - 2; d >= 1; --d) {
      bool outer_units = true;
      for (int e = 0; e < d; ++e) outer_units = outer_units && l_.tile[e] == 1;
      if (outer_units) {
        absl::StrAppend(&out, "  const ", type, " r", d, " = rest;\n  rest = 0;\n");
      } else {
        absl::StrAppend(&out, "  const ", type, " r", d, " = rest % kTile", d, ";\n  rest /= kTile",
                        d, ";\n");
      }
    }
    absl::StrAppend(&out, "  const ", type, " r0 = rest;\n");
    return out;
  }

  void OriginLocate() {
    std::string limits;
    for (int d = 0; d < rank_; ++d) {
      if (Tested(d)) absl::StrAppend(&limits, " u32 e", d, ";");
    }
    absl::StrAppend(&out_,
                    "\n// Elements of the copy from a tile's origin on, along the dimensions "
                    "its vectors are tested on.\n"
                    "struct tt_limits {", limits, " };\n"
                    "// Byte offsets of tile `tile`'s first element, and its limits. A last tile "
                    "that moves back starts\n// kTile before the end, overlapping its neighbour, "
                    "which writes the same values.\n"
                    "__device__ __forceinline__ void tt_origin(u64 tile, u64& src_byte, u64& "
                    "dst_byte, tt_limits& lim) {\n  (void)lim;\n  u64 t = tile;\n");
    for (int d = rank_ - 1; d >= 1; --d) {
      absl::StrAppend(&out_, "  const u64 c", d, " = t % kTiles", d, ";\n  t /= kTiles", d, ";\n");
    }
    absl::StrAppend(&out_, "  const u64 c0 = t;\n");
    std::vector<std::string> src_terms, dst_terms;
    for (int d = 0; d < rank_; ++d) {
      const bool moved = !Tested(d) && l_.extents[d] % l_.tile[d] != 0;
      const std::string origin =
          moved ? absl::StrCat("(c", d, " + 1 == kTiles", d, " ? kExtent", d, " - kTile", d,
                               " : c", d, " * kTile", d, ")")
                : absl::StrCat("c", d, " * kTile", d);
      absl::StrAppend(&out_, "  const u64 o", d, " = ", origin, ";\n");
      if (Tested(d)) absl::StrAppend(&out_, "  lim.e", d, " = u32(kExtent", d, " - o", d, ");\n");
      src_terms.push_back(absl::StrCat("o", d, " * kSrcStride", d));
      dst_terms.push_back(absl::StrCat("o", d, " * kDstStride", d));
    }
    absl::StrAppend(&out_, "  src_byte = (", absl::StrJoin(src_terms, " + "), ") * kElementBytes;\n",
                    "  dst_byte = (", absl::StrJoin(dst_terms, " + "), ") * kElementBytes;\n}\n");

    const int inner = rank_ - 1;
    absl::StrAppend(&out_,
                    "// Byte offsets of row `row` of a tile from the tile's first element.\n"
                    "__device__ __forceinline__ void tt_row_offsets(u32 row, u64& src_byte, "
                    "u64& dst_byte) {\n");
    if (rank_ == 1) {
      absl::StrAppend(&out_, "  (void)row;\n  src_byte = 0;\n  dst_byte = 0;\n}\n");
    } else {
      absl::StrAppend(&out_, RowDigits("u64"));
      std::vector<std::string> src_terms, dst_terms;
      for (int d = 0; d < inner; ++d) {
        src_terms.push_back(absl::StrCat("r", d, " * kSrcStride", d));
        dst_terms.push_back(absl::StrCat("r", d, " * kDstStride", d));
      }
      absl::StrAppend(&out_, "  src_byte = (", absl::StrJoin(src_terms, " + "),
                      ") * kElementBytes;\n  dst_byte = (", absl::StrJoin(dst_terms, " + "),
                      ") * kElementBytes;\n}\n");
    }

    // The vector slots a tile has, and along the tested dimensions, the copy's.
    std::vector<std::string> inside;
    if (TileRows() % l_.layout.rows != 0) inside.push_back("row < kTileRows");
    if (RowVectors() % l_.layout.cols != 0) inside.push_back("vc < kRowVectors");
    std::string row_digits;
    bool tested_row = false;
    for (int d = 0; d < inner; ++d) tested_row = tested_row || Tested(d);
    if (tested_row) {
      absl::StrAppend(&row_digits, RowDigits("u32"));
      for (int d = 0; d < inner; ++d) {
        if (Tested(d)) {
          inside.push_back(absl::StrCat("r", d, " < lim.e", d));
        } else {
          absl::StrAppend(&row_digits, "  (void)r", d, ";\n");
        }
      }
    }
    if (Tested(inner)) inside.push_back(absl::StrCat("vc * u32(kVector) < lim.e", inner));
    absl::StrAppend(&out_,
                    "// Whether vector `vc` of row `row` is one of the tile's and of the copy's.\n"
                    "__device__ __forceinline__ bool tt_inside(u32 row, u32 vc, const tt_limits& "
                    "lim) {\n  (void)row;\n  (void)vc;\n  (void)lim;\n",
                    row_digits, "  return ",
                    inside.empty() ? "true" : absl::StrJoin(inside, " && "), ";\n}\n");
    absl::StrAppend(&out_, SharedOffset(),
                    "__device__ __forceinline__ u64 tt_opaque(u64 a) {\n"
                    "  u64 r;\n"
                    "  asm(\"mov.b64 %0, %1;\" : \"=l\"(r) : \"l\"(a));\n"
                    "  return r;\n}\n");
    // A slot's offsets from the thread's base.
    const bool separate = RowsSeparate();
    absl::StrAppend(&out_, "// Byte offsets of slot `i` (row `row`) from the thread's base",
                    separate ? ", constants of the unrolled loop" : "", ".\n",
                    "__device__ __forceinline__ void tt_slot(u32 i, u32 row, u64& src_byte, u64& "
                    "dst_byte) {\n");
    if (separate) {
      absl::StrAppend(&out_, "  (void)row;\n  tt_row_offsets((i / kItemsCol) * kRows, src_byte, dst_byte);\n");
    } else {
      absl::StrAppend(&out_, "  tt_row_offsets(row, src_byte, dst_byte);\n");
    }
    absl::StrAppend(&out_, AddInnerVectors("u64(i % kItemsCol) * kCols"), "}\n");
    // The thread's own part: its column and, where rows separate, its row.
    absl::StrAppend(&out_,
                    "// Byte offsets of the thread's first slot of a tile from the tile's first "
                    "element.\n"
                    "__device__ __forceinline__ void tt_thread_offsets(u32 tr, u32 tc, u64& "
                    "src_byte, u64& dst_byte) {\n");
    if (separate) {
      absl::StrAppend(&out_, "  tt_row_offsets(tr, src_byte, dst_byte);\n");
    } else {
      absl::StrAppend(&out_, "  (void)tr;\n  src_byte = 0;\n  dst_byte = 0;\n");
    }
    absl::StrAppend(&out_, AddInnerVectors("u64(tc)"), "}\n");
  }

  // The start of a tile_origin kernel: the thread's coordinates and base offsets.
  void LeanPrologue() {
    absl::StrAppend(&out_,
                    "  // threadIdx.x < kThreads; the modulo tells the compiler so.\n"
                    "  const u32 tr = threadIdx.x % kThreads / kCols;\n"
                    "  const u32 tc = threadIdx.x % kThreads % kCols;\n"
                    "  u64 src_thread, dst_thread;\n"
                    "  tt_thread_offsets(tr, tc, src_thread, dst_thread);\n");
  }

  // The lines that set `s` and `d`, the thread's bases in tile `tile` (indent `in`).
  static std::string LeanBases(const std::string& in) {
    return absl::StrCat(in, "u64 src_origin, dst_origin;\n", in, "tt_limits lim;\n", in,
                        "tt_origin(tile, src_origin, dst_origin, lim);\n", in,
                        "const u8* s = reinterpret_cast<const u8*>(tt_opaque(reinterpret_cast<u64>(src) "
                        "+ src_origin + src_thread));\n",
                        in,
                        "u8* d = reinterpret_cast<u8*>(tt_opaque(reinterpret_cast<u64>(dst) + "
                        "dst_origin + dst_thread));\n");
  }

  static constexpr const char* kSlotLoop =
      "#pragma unroll\n"
      "    for (u32 i = 0; i < kItems; ++i) {\n"
      "      const u32 row = tr + (i / kItemsCol) * kRows;\n"
      "      const u32 vc = tc + (i % kItemsCol) * kCols;\n"
      "      if (!tt_inside(row, vc, lim)) continue;\n"
      "      u64 so, dso;\n"
      "      tt_slot(i, row, so, dso);\n";

  void LeanSimtKernel() {
    const bool shared = l_.launch.through_shared;
    KernelSignature(false);
    if (shared) absl::StrAppend(&out_, "  extern __shared__ __align__(128) u8 tt_smem[];\n");
    LeanPrologue();
    absl::StrAppend(&out_, "  for (u64 tile = blockIdx.x; tile < kNumTiles; tile += gridDim.x) {\n",
                    LeanBases("    "), "    tt_vec v[kItems];\n", kSlotLoop,
                    "      (void)dso;\n      v[i] = tt_ld_global(s + so", Policy(), ");\n    }\n");
    if (shared) {
      absl::StrAppend(&out_,
                      "#pragma unroll\n"
                      "    for (u32 i = 0; i < kItems; ++i) {\n"
                      "      const u32 row = tr + (i / kItemsCol) * kRows;\n"
                      "      const u32 vc = tc + (i % kItemsCol) * kCols;\n"
                      "      if (tt_inside(row, vc, lim)) tt_st_shared(tt_smem + tt_shared_offset(row, vc), v[i]);\n"
                      "    }\n"
                      "    __syncthreads();\n"
                      "#pragma unroll\n"
                      "    for (u32 i = 0; i < kItems; ++i) {\n"
                      "      const u32 row = tr + (i / kItemsCol) * kRows;\n"
                      "      const u32 vc = tc + (i % kItemsCol) * kCols;\n"
                      "      if (tt_inside(row, vc, lim)) v[i] = tt_ld_shared(tt_smem + tt_shared_offset(row, vc));\n"
                      "    }\n");
    }
    absl::StrAppend(&out_, kSlotLoop, "      (void)so;\n      tt_st_global(d + dso, v[i]", Policy(),
                    ");\n    }\n");
    if (shared) absl::StrAppend(&out_, "    __syncthreads();\n");
    absl::StrAppend(&out_, "  }\n}\n");
  }

  void LeanCpAsyncKernel() {
    KernelSignature(false);
    absl::StrAppend(&out_, "  extern __shared__ __align__(128) u8 tt_smem[];\n");
    LeanPrologue();
    absl::StrAppend(
        &out_,
        "  const u32 my_tiles = u32((kNumTiles - blockIdx.x + gridDim.x - 1) / gridDim.x);\n"
        "  // Stage k % kStages <- tile k of this CTA, by cp.async.\n"
        "  auto issue = [&](u32 k) {\n"
        "    const u64 tile = blockIdx.x + u64(k) * gridDim.x;\n",
        LeanBases("    "),
        "    (void)d;\n"
        "    u8* stage = tt_smem + (k % kStages) * kTileBytes;\n", kSlotLoop,
        "      (void)dso;\n"
        "      tt_cp_async(stage + tt_shared_offset(row, vc), s + so, true", Policy(),
        ");\n"
        "    }\n"
        "  };\n"
        "  // Global <- stage k % kStages, by vector stores.\n"
        "  auto drain = [&](u32 k) {\n"
        "    const u64 tile = blockIdx.x + u64(k) * gridDim.x;\n",
        LeanBases("    "),
        "    (void)s;\n"
        "    const u8* stage = tt_smem + (k % kStages) * kTileBytes;\n"
        "    tt_vec v[kItems];\n"
        "#pragma unroll\n"
        "    for (u32 i = 0; i < kItems; ++i) {\n"
        "      const u32 row = tr + (i / kItemsCol) * kRows;\n"
        "      const u32 vc = tc + (i % kItemsCol) * kCols;\n"
        "      if (tt_inside(row, vc, lim)) v[i] = tt_ld_shared(stage + tt_shared_offset(row, vc));\n"
        "    }\n",
        kSlotLoop, "      (void)so;\n      tt_st_global(d + dso, v[i]", Policy(), ");\n    }\n  };\n");
    CpAsyncSchedule();
  }

  void CpAsyncKernel() {
    KernelSignature(false);
    absl::StrAppend(
        &out_,
        "  extern __shared__ __align__(128) u8 tt_smem[];\n"
        "  const u32 tr = threadIdx.x / kCols;\n"
        "  const u32 tc = threadIdx.x % kCols;\n"
        "  const u32 my_tiles = u32((kNumTiles - blockIdx.x + gridDim.x - 1) / gridDim.x);\n"
        "  // Stage k % kStages <- tile k of this CTA, by cp.async.\n"
        "  auto issue = [&](u32 k) {\n"
        "    const u64 tile = blockIdx.x + u64(k) * gridDim.x;\n"
        "    u8* stage = tt_smem + (k % kStages) * kTileBytes;\n"
        "#pragma unroll\n"
        "    for (u32 i = 0; i < kItems; ++i) {\n"
        "      const u32 row = tr + (i / kItemsCol) * kRows;\n"
        "      const u32 vc = tc + (i % kItemsCol) * kCols;\n"
        "      if (!tt_in_tile(row, vc)) continue;\n"
        "      u64 src_byte, dst_byte;\n"
        "      const bool inside = tt_locate(tile, row, vc, src_byte, dst_byte);\n"
        "      tt_cp_async(stage + tt_shared_offset(row, vc), inside ? src + src_byte : src, inside",
        Policy(),
        ");\n"
        "    }\n"
        "  };\n"
        "  // Global <- stage k % kStages, by vector stores.\n"
        "  auto drain = [&](u32 k) {\n"
        "    const u64 tile = blockIdx.x + u64(k) * gridDim.x;\n"
        "    const u8* stage = tt_smem + (k % kStages) * kTileBytes;\n"
        "    tt_vec v[kItems];\n"
        "    bool ok[kItems];\n"
        "    u64 dst_byte[kItems];\n"
        "#pragma unroll\n"
        "    for (u32 i = 0; i < kItems; ++i) {\n"
        "      const u32 row = tr + (i / kItemsCol) * kRows;\n"
        "      const u32 vc = tc + (i % kItemsCol) * kCols;\n"
        "      u64 src_byte;\n"
        "      ok[i] = tt_in_tile(row, vc) && tt_locate(tile, row, vc, src_byte, dst_byte[i]);\n"
        "      if (ok[i]) v[i] = tt_ld_shared(stage + tt_shared_offset(row, vc));\n"
        "    }\n"
        "#pragma unroll\n"
        "    for (u32 i = 0; i < kItems; ++i) {\n"
        "      if (ok[i]) tt_st_global(dst + dst_byte[i], v[i]",
        Policy(),
        ");\n"
        "    }\n"
        "  };\n");
    CpAsyncSchedule();
  }

  // The cp.async pipeline over a CTA's tiles, from its issue and drain.
  void CpAsyncSchedule() {
    if (l_.stages == 1) {
      absl::StrAppend(&out_,
                      "  for (u32 k = 0; k < my_tiles; ++k) {\n"
                      "    issue(k);\n"
                      "    tt_cp_async_commit();\n"
                      "    tt_cp_async_wait<0>();\n"
                      "    __syncthreads();\n"
                      "    drain(k);\n"
                      "    __syncthreads();\n"
                      "  }\n}\n");
    } else {
      absl::StrAppend(
          &out_,
          "  // Keep kStages - 1 tiles in flight; one commit group per tile slot.\n"
          "#pragma unroll\n"
          "  for (u32 k = 0; k < kStages - 1; ++k) {\n"
          "    if (k < my_tiles) issue(k);\n"
          "    tt_cp_async_commit();\n"
          "  }\n"
          "  for (u32 k = 0; k < my_tiles; ++k) {\n"
          "    tt_cp_async_wait<kStages - 2>();\n"
          "    // Tile k has landed for every thread, and every thread has drained tile k - 1,\n"
          "    // whose stage the next issue reuses.\n"
          "    __syncthreads();\n"
          "    if (k + kStages - 1 < my_tiles) issue(k + kStages - 1);\n"
          "    tt_cp_async_commit();\n"
          "    drain(k);\n"
          "  }\n}\n");
    }
  }

  // Tensor TMA (bulk = false) or 1-D bulk copies, driven by one thread.
  void TmaKernel(bool bulk) {
    KernelSignature(!bulk);
    absl::StrAppend(&out_,
                    "  extern __shared__ __align__(128) u8 tt_smem[];\n"
                    "  __shared__ __align__(8) u64 tt_bar[kStages];\n"
                    "  // One thread drives the copy engine; the others have nothing to move.\n"
                    "  if (threadIdx.x != 0) return;\n"
                    "#pragma unroll\n"
                    "  for (u32 s = 0; s < kStages; ++s) tt_mbarrier_init(&tt_bar[s], 1);\n"
                    "  tt_fence_barrier_init();\n"
                    "  const u32 my_tiles = u32((kNumTiles - blockIdx.x + gridDim.x - 1) / gridDim.x);\n");
    if (bulk) {
      absl::StrAppend(&out_,
                      "  auto bytes_of = [](u64 tile) -> u32 {\n"
                      "    const u64 start = tile * kTileBytes;\n"
                      "    return start + kTileBytes <= kTotalBytes ? kTileBytes : u32(kTotalBytes - start);\n"
                      "  };\n"
                      "  auto load = [&](u32 k) {\n"
                      "    const u64 tile = blockIdx.x + u64(k) * gridDim.x;\n"
                      "    u64* bar = &tt_bar[k % kStages];\n"
                      "    tt_mbarrier_expect_tx(bar, bytes_of(tile));\n"
                      "    tt_bulk_load(tt_smem + (k % kStages) * kStageBytes, src + tile * kTileBytes, "
                      "bytes_of(tile), bar",
                      Policy(),
                      ");\n"
                      "  };\n"
                      "  auto store = [&](u32 k) {\n"
                      "    const u64 tile = blockIdx.x + u64(k) * gridDim.x;\n"
                      "    tt_bulk_store(dst + tile * kTileBytes, tt_smem + (k % kStages) * kStageBytes, "
                      "bytes_of(tile)",
                      Policy(),
                      ");\n"
                      "    tt_bulk_commit();\n"
                      "  };\n");
    } else {
      std::string coords;
      absl::StrAppend(&coords, "    u64 t = blockIdx.x + u64(k) * gridDim.x;\n");
      for (int d = rank_ - 1; d >= 1; --d) {
        absl::StrAppend(&coords, "    const int c", d, " = int((t % kTiles", d, ") * kTile", d,
                        ");\n    t /= kTiles", d, ";\n");
      }
      absl::StrAppend(&coords, "    const int c0 = int(t * kTile0);\n");
      std::vector<std::string> order;
      for (int d = rank_ - 1; d >= 0; --d) order.push_back(absl::StrCat("c", d));
      std::string coord_args = absl::StrJoin(order, ", ");
      absl::StrAppend(&out_, "  auto load = [&](u32 k) {\n", coords,
                      "    u64* bar = &tt_bar[k % kStages];\n"
                      "    tt_mbarrier_expect_tx(bar, kTileBytes);\n"
                      "    tt_tma_load(tt_smem + (k % kStages) * kStageBytes, &src_map, bar, ",
                      coord_args, Policy(),
                      ");\n"
                      "  };\n"
                      "  auto store = [&](u32 k) {\n",
                      coords,
                      "    tt_tma_store(&dst_map, tt_smem + (k % kStages) * kStageBytes, ",
                      coord_args, Policy(),
                      ");\n"
                      "    tt_bulk_commit();\n"
                      "  };\n");
    }
    if (l_.stages == 1) {
      absl::StrAppend(&out_,
                      "  for (u32 k = 0; k < my_tiles; ++k) {\n"
                      "    tt_bulk_wait_read<0>();  // The previous store has left shared memory.\n"
                      "    load(k);\n"
                      "    tt_mbarrier_wait(&tt_bar[0], k & 1);\n"
                      "    store(k);\n"
                      "  }\n");
    } else {
      absl::StrAppend(&out_,
                      "  for (u32 k = 0; k < kStages - 1 && k < my_tiles; ++k) load(k);\n"
                      "  for (u32 k = 0; k < my_tiles; ++k) {\n"
                      "    tt_mbarrier_wait(&tt_bar[k % kStages], (k / kStages) & 1);\n"
                      "    store(k);\n"
                      "    if (k + kStages - 1 < my_tiles) {\n"
                      "      tt_bulk_wait_read<1>();  // Store k - 1 has left the stage we refill.\n"
                      "      load(k + kStages - 1);\n"
                      "    }\n"
                      "  }\n");
    }
    absl::StrAppend(&out_, "  tt_bulk_wait_all();\n}\n");
  }

  const LoweredCopy& l_;
  int rank_;
  std::string out_;
};

}  // namespace

CudaSource EmitCopyKernel(const LoweredCopy& lowered) {
  return CudaSource{lowered.kernel_name, CopyEmitter(lowered).Emit()};
}

}  // namespace tiletune

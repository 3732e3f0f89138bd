#include "compiler/ops/im2col/im2col_emitter.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "compiler/codegen/ptx_snippets.h"
#include "compiler/lower/lowering_rules.h"
#include "compiler/ops/im2col/im2col_lowering.h"

namespace tiletune {
namespace {

// The emitted statement, inside a loop over a window's elements at 6 spaces, that steps
// (d, kh, kw, c) to the next element when `when` (which increments c) holds: c, then kw,
// then kh wrap, and d counts the pixels past the first.
std::string WindowStep(absl::string_view when) {
  return absl::StrCat("      if (", when, ") {\n",
                      "        c = 0;\n"
                      "        if (++kw == u32(kKW)) {\n"
                      "          kw = 0;\n"
                      "          if (++kh == kKH) {\n"
                      "            kh = 0;\n"
                      "            ++d;\n"
                      "          }\n"
                      "        }\n"
                      "      }\n");
}

class Im2colEmitter {
 public:
  explicit Im2colEmitter(const LoweredIm2col& l) : l_(l), g_(l.geometry) {}

  std::string Emit() {
    Header();
    absl::StrAppend(&out_, PreludeSnippet());
    if (l_.img_policy) absl::StrAppend(&out_, NamedPolicySnippet("img", *l_.img_policy));
    if (l_.col_policy) absl::StrAppend(&out_, NamedPolicySnippet("col", *l_.col_policy));
    if (Planes()) {
      absl::StrAppend(&out_, VectorAccessSnippet(l_.vector_elems * l_.element_bytes,
                                                 /*load_hint=*/false, l_.col_policy.has_value()));
      if (l_.span_gather) {
        absl::StrAppend(&out_, VectorAccessSnippet(16, l_.img_policy.has_value(),
                                                   /*store_hint=*/false, "tt_blk"));
      }
      if (l_.patches) {
        // The image rows' loads.
        absl::StrAppend(&out_, VectorAccessSnippet(
                                   static_cast<int>(l_.patch_load_elems * l_.element_bytes),
                                   l_.img_policy.has_value(), /*store_hint=*/false, "tp"));
      }
      ElementLoad();
      Constants();
      if (l_.span_gather) SpanGather();
      if (l_.patches) {
        PatchesKernel();
      } else if (l_.shared_gather) {
        if (l_.box_runs) BoxRun();
        SharedPlanesKernel();
      } else {
        PlanesKernel();
      }
    } else if (Tma()) {
      absl::StrAppend(&out_, MbarrierSnippet());
      absl::StrAppend(&out_, TmaIm2colLoadSnippet(l_.img_policy.has_value()));
      absl::StrAppend(&out_, TmaStoreSnippet(2, l_.col_policy.has_value()));
      Constants();
      TmaKernel();
    } else if (Flat()) {
      absl::StrAppend(&out_, VectorAccessSnippet(l_.flat_vector_elems * l_.element_bytes,
                                                 /*load_hint=*/false, l_.col_policy.has_value()));
      if (Staged()) {
        absl::StrAppend(&out_, VectorAccessSnippet(l_.box.load_bytes, l_.img_policy.has_value(),
                                                   /*store_hint=*/false, "tt_box"));
        if (l_.box.bulk_fill) {
          absl::StrAppend(&out_, MbarrierSnippet(), BulkSnippet(l_.img_policy.has_value()),
                          BulkPrefetchSnippet(l_.img_policy.has_value()));
        }
      }
      ElementLoad();
      Constants();
      if (Staged()) {
        StagedKernel();
      } else {
        FlatKernel();
      }
    } else {
      absl::StrAppend(&out_, VectorAccessSnippet(l_.vector_elems * l_.element_bytes,
                                                 l_.img_policy.has_value(),
                                                 l_.col_policy.has_value()));
      Constants();
      Gather();
      SimtKernel();
    }
    return out_;
  }

 private:
  bool Tma() const { return l_.path == Im2colPath::kTma; }
  bool Planes() const { return l_.path == Im2colPath::kSimtPlanes; }
  bool Flat() const { return l_.path == Im2colPath::kSimtFlat || Staged(); }
  bool Staged() const { return l_.path == Im2colPath::kSimtStaged; }
  // Table entries (and shared loads) per vector of the staged form.
  int64_t Units() const { return l_.flat_vector_elems * l_.element_bytes / l_.box.unit_bytes; }
  int64_t RowVectors() const { return l_.block_k / l_.vector_elems; }
  std::string ImgPolicy() const { return l_.img_policy ? ", img_policy" : ""; }
  std::string ColPolicy() const { return l_.col_policy ? ", col_policy" : ""; }

  void Header() {
    absl::StrAppend(&out_, "// tiletune im2col kernel (generated; do not edit).\n//   path ",
                    Im2colPathName(l_.path), ", ", DataTypeName(l_.dtype), ", ",
                    Im2colGeometryToString(g_), ", image strides [",
                    absl::StrJoin(l_.img_strides, ", "), "]\n//   tile [", l_.block_m, ", ",
                    l_.block_k, "], ", l_.launch.threads, " threads, ");
    if (Planes()) {
      absl::StrAppend(&out_, "channel_rows columns, vector ", l_.vector_elems, " x ",
                      l_.element_bytes, " B, ");
    } else if (Tma()) {
      absl::StrAppend(&out_, l_.chunks_per_tile, " load(s) of ", l_.channels_per_pixel,
                      " channels per tile, ");
    } else if (Flat()) {
      absl::StrAppend(&out_, "flat runs of whole rows, vector ", l_.flat_vector_elems, " x ",
                      l_.element_bytes, " B, ");
      if (Staged()) {
        absl::StrAppend(&out_, "input staged (", l_.box.rows_per_tile, " output row(s) x ",
                        g_.kh, " input rows, ",
                        l_.box.bulk_fill
                            ? absl::StrCat("bulk copies, ", DescribeImagePrefetch(l_.box))
                            : absl::StrCat(l_.box.load_bytes, "-byte loads"),
                        "), ");
      }
    } else {
      absl::StrAppend(&out_, "vector ", l_.vector_elems, " x ", l_.element_bytes, " B",
                      l_.window_row_vector ? " along a kernel row (over pixels)" : "",
                      ", layout ", LoopLayoutName(l_.layout), ", ");
    }
    absl::StrAppend(&out_, l_.stages, " stage(s), L2 policy image ",
                    l_.img_policy ? EvictionPolicyName(*l_.img_policy) : std::string("none"),
                    ", columns ",
                    l_.col_policy ? EvictionPolicyName(*l_.col_policy) : std::string("none"),
                    "\n\n");
  }

  void Constant(const std::string& type, const std::string& name, int64_t value) {
    absl::StrAppend(&out_, ConstantDefinition(type, name, value));
  }

  void Constants() {
    absl::StrAppend(&out_,
                    "\n// Problem constants; enumerators fold into the code and take no storage.\n");
    Constant("u32", "kThreads", l_.launch.threads);
    Constant("u64", "kNumTiles", l_.num_tiles);
    Constant("u64", "kTilesK", l_.tiles_k);
    Constant("u64", "kBlockM", l_.block_m);
    Constant("u64", "kBlockK", l_.block_k);
    Constant("u64", "kM", l_.m);
    Constant("u64", "kK", l_.k);
    Constant("u64", "kElementBytes", l_.element_bytes);
    Constant("u64", "kH", g_.h);
    Constant("u64", "kW", g_.w);
    Constant("u64", "kC", g_.c);
    Constant("u64", "kKW", g_.kw);
    Constant("u64", "kSH", g_.sh);
    Constant("u64", "kSW", g_.sw);
    Constant("u64", "kDH", g_.dh);
    Constant("u64", "kDW", g_.dw);
    Constant("u64", "kPH", g_.ph);
    Constant("u64", "kPW", g_.pw);
    Constant("u64", "kOW", l_.ow);
    Constant("u64", "kOHW", l_.oh * l_.ow);
    if (Planes()) {
      const char* names[] = {"N", "H", "W", "C"};
      for (int d = 0; d < 4; ++d) {
        Constant("u64", absl::StrCat("kImgStride", names[d]), l_.img_strides[d]);
      }
      Constant("u64", "kOH", l_.oh);
      Constant("u64", "kTaps", g_.kh * g_.kw);
      Constant("u32", "kKH", g_.kh);
      Constant("u32", "kVector", l_.vector_elems);
      Constant("u32", "kSegVectors", l_.segment_elems / l_.vector_elems);
      Constant("u32", "kTileItems", l_.segments * (l_.segment_elems / l_.vector_elems));
      if (l_.span_gather) {
        Constant("u32", "kSpanBlocks", l_.span_blocks);
        Constant("u64", "kImageBytes", l_.image_bytes);
      }
      if (l_.patches) {
        Constant("u32", "kPlaneTiles", l_.patch_row_tiles * l_.patch_oh_tiles);
        Constant("u32", "kOhTiles", l_.patch_oh_tiles);
        Constant("u32", "kPatchRows", l_.patch_rows);
        Constant("u32", "kPatchOh", l_.patch_oh);
        // Shared-memory elements from one tap's run to the next.
        Constant("u32", "kPitch", l_.block_k);
        Constant("u32", "kLoad", l_.patch_load_elems);
        Constant("u32", "kRowLoads", g_.w / l_.patch_load_elems);
      }
      if (l_.shared_gather) {
        Constant("u64", "kPlanes", g_.n * g_.c);
        Constant("u32", "kBoxPlanes", l_.box_planes);
        Constant("u32", "kBand", l_.band_rows);
        Constant("u32", "kBoxCols", l_.box_cols);
        Constant("u32", "kBoxPlane", l_.box_rows * l_.box_cols);
      }
      return;
    }
    if (Tma()) {
      int64_t chunk_bytes = l_.block_m * l_.channels_per_pixel * l_.element_bytes;
      int64_t chunk_stride = RoundUp(chunk_bytes, 128);
      Constant("u32", "kStages", l_.stages);
      Constant("u64", "kChannelBox", l_.channels_per_pixel);
      Constant("u32", "kChunks", l_.chunks_per_tile);
      Constant("u32", "kChunkBytes", chunk_bytes);
      Constant("u32", "kChunkStride", chunk_stride);
      Constant("u32", "kStageBytes", chunk_stride * l_.chunks_per_tile);
      Constant("u64", "kStoreRows", l_.store_rows);
      Constant("u32", "kStorePieces", l_.block_m / l_.store_rows);
      Constant("u32", "kStorePieceBytes",
               int64_t{l_.store_rows} * l_.channels_per_pixel * l_.element_bytes);
    } else if (Flat()) {
      const char* names[] = {"N", "H", "W", "C"};
      for (int d = 0; d < 4; ++d) {
        Constant("u64", absl::StrCat("kImgStride", names[d]), l_.img_strides[d]);
      }
      // Window and output positions fit 32 bits (the geometry is validated).
      Constant("u32", "kTaps", g_.kh * g_.kw);
      Constant("u32", "kFlatVector", l_.flat_vector_elems);
      if (!Staged() || !l_.box.row_phase) {  // a row_phase row counts its own vectors
        Constant("u32", "kTileVectors", l_.block_m * l_.k / l_.flat_vector_elems);
      }
      if (Staged()) {
        const LoweredIm2col::InputBox& box = l_.box;
        const int64_t copy_bytes = StagedRowCopyBytes(l_);
        Constant("u32", "kKH", g_.kh);
        Constant("u32", "kRowsPerTile", box.rows_per_tile);
        Constant("u32", "kPeriod", box.period_vectors);
        if (box.row_phase) {
          Constant("u32", "kPhaseUnit", box.phase_unit);
          Constant("u32", "kVectorInverse", box.vector_inverse);
        } else {
          Constant("u32", "kPeriodRows", box.period_rows);
        }
        Constant("u32", "kUnits", Units());
        Constant("u32", "kUnitsPerElem", l_.element_bytes / box.unit_bytes);
        Constant("u32", "kTableWords", Units() * box.entry_bytes / 4);
        Constant("u64", "kOH", l_.oh);
        Constant("u64", "kOutRows", g_.n * l_.oh);
        Constant("u32", "kBoxRows", box.rows_per_tile * g_.kh);
        Constant("u32", "kBoxPitch", box.pitch_elems);
        Constant("u32", "kBoxLead", box.lead_elems);
        Constant("u32", "kBoxOffset", box.offset_bytes);
        Constant("u32", "kBoxStart", g_.pw * g_.c);  // element of iw = 0 in a box row
        Constant("u32", "kBoxCopy", box.copy_pixels * g_.c);
        Constant("u32", "kPadElems", (box.pixels - box.copy_pixels) * g_.c);
        Constant("u32", "kLoad", box.load_bytes);
        Constant("u32", "kChunks", copy_bytes / box.load_bytes);
        Constant("u32", "kTail", copy_bytes % box.load_bytes / l_.element_bytes);
        if (box.bulk_fill && box.prefetch_all) {
          Constant("u32", "kResidentCtas", box.resident_ctas);
          Constant("u64", "kImageBytes", box.image_span_bytes);
          Constant("u32", "kPrefetchPiece", 1 << 20);  // bytes per prefetch instruction at most
        } else if (box.bulk_fill) {
          Constant("u32", "kPrefetchCtasPerSm", box.prefetch_waves * box.resident_ctas);
        }
      }
    } else {
      const char* names[] = {"N", "H", "W", "C"};
      for (int d = 0; d < 4; ++d) {
        Constant("u64", absl::StrCat("kImgStride", names[d]), l_.img_strides[d]);
      }
      Constant("u64", "kVector", l_.vector_elems);
      Constant("u32", "kRows", l_.layout.rows);
      Constant("u32", "kCols", l_.layout.cols);
      Constant("u32", "kRowVectors", RowVectors());
      Constant("u32", "kItemsCol", CeilDiv(RowVectors(), l_.layout.cols));
      Constant("u32", "kItems", l_.items_per_thread);
    }
  }

  // tt_gather: where column-matrix element (m, k) lives in the image, or that it is padding.
  void Gather() {
    // With no padding on an axis every window lies inside the image along it.
    std::vector<std::string> inside;
    if (g_.ph > 0) inside.push_back("ih < kH");
    if (g_.pw > 0) inside.push_back("iw < kW");
    absl::StrAppend(
        &out_,
        "\n// Byte offset in the image of column-matrix element (m, k); false where the element\n"
        "// lies in the padding. m = (n, oh, ow), k = (kh, kw, c) with c fastest.\n",
        l_.window_row_vector
            ? "// A vector from (m, k) runs on along its kernel row, over pixels side by side in\n"
              "// the image, and lies wholly inside the image or wholly in the padding.\n"
            : "",
        "__device__ __forceinline__ bool tt_gather(u64 m, u64 k, u64& img_byte) {\n"
        "  const u64 n = m / kOHW;\n"
        "  const u64 oh = m % kOHW / kOW;\n"
        "  const u64 ow = m % kOW;\n"
        "  const u64 tap = k / kC;\n"
        "  const u64 c = k % kC;\n"
        "  // Above or left of the image the subtraction wraps to a huge value: one compare\n"
        "  // checks both edges.\n"
        "  const u64 ih = oh * kSH + tap / kKW * kDH - kPH;\n"
        "  const u64 iw = ow * kSW + tap % kKW * kDW - kPW;\n"
        "  img_byte = (n * kImgStrideN + ih * kImgStrideH + iw * kImgStrideW + c * kImgStrideC) *\n"
        "             kElementBytes;\n"
        "  return ",
        inside.empty() ? "true" : absl::StrJoin(inside, " && "), ";\n}\n");
  }

  // `min_ctas`: the CTAs per SM the register allocation must leave room for (0: no bound);
  // `max_registers` > 0 holds each thread to that many registers instead (__maxnreg__,
  // which excludes __launch_bounds__).
  // One thread's part of InputBox::prefetch_all, inside a block at one level of indent
  // (the caller writes the comment).
  void WholeImagePrefetch() {
    absl::StrAppend(
        &out_,
        "    u32 sms;\n"
        "    asm(\"mov.u32 %0, %%nsmid;\" : \"=r\"(sms));\n"
        "    const u64 parts = min(u64(gridDim.x), u64(kResidentCtas) * sms);\n"
        "    const u64 share = ((kImageBytes + parts - 1) / parts + 15) / 16 * 16;\n"
        "    const u64 end = kImageBytes / 16 * 16;\n"
        "    for (u64 at = blockIdx.x * share, to = min(end, at + share); at < to;\n"
        "         at += kPrefetchPiece) {\n"
        "      tt_bulk_prefetch_l2(img + at, u32(min(to - at, u64(kPrefetchPiece)))",
        ImgPolicy(),
        ");\n"
        "    }\n");
  }

  // The kernel's first line: its launch bounds (or register cap) and parameters.
  void KernelSignatureBounds(int min_ctas, int max_registers) {
    const std::string bounds =
        max_registers > 0
            ? absl::StrCat("__maxnreg__(", max_registers, ")")
            : absl::StrCat("__launch_bounds__(kThreads",
                           min_ctas > 0 ? absl::StrCat(", ", min_ctas) : "", ")");
    absl::StrAppend(&out_, "\nextern \"C\" __global__ void ", bounds, " ", l_.kernel_name,
                    "(const u8* __restrict__ img, u8* __restrict__ col");
    if (Tma()) {
      absl::StrAppend(&out_, ",\n    const __grid_constant__ tt_tensor_map img_map, "
                             "const __grid_constant__ tt_tensor_map col_map");
    }
    absl::StrAppend(&out_, ") {\n");
  }

  // The signature, then the L2 policies the kernel applies.
  void KernelSignature(int min_ctas = 0, int max_registers = 0) {
    KernelSignatureBounds(min_ctas, max_registers);
    if (l_.img_policy) absl::StrAppend(&out_, "  const u64 img_policy = tt_make_img_policy();\n");
    if (l_.col_policy) absl::StrAppend(&out_, "  const u64 col_policy = tt_make_col_policy();\n");
  }

  void SimtKernel() {
    std::vector<std::string> guards;
    if (l_.block_m % l_.layout.rows != 0) guards.push_back("row < kBlockM");
    if (RowVectors() % l_.layout.cols != 0) guards.push_back("vc < kRowVectors");
    if (l_.m % l_.block_m != 0) guards.push_back("m < kM");
    if (l_.k % l_.block_k != 0) guards.push_back("k < kK");
    KernelSignature();
    absl::StrAppend(
        &out_,
        "  const u32 tr = threadIdx.x / kCols;\n"
        "  const u32 tc = threadIdx.x % kCols;\n"
        "  // Tile t is the tile op at (nhw_step, c_step) = (t / kTilesK, t % kTilesK).\n"
        "  for (u64 tile = blockIdx.x; tile < kNumTiles; tile += gridDim.x) {\n"
        "    const u64 m0 = tile / kTilesK * kBlockM;\n"
        "    const u64 k0 = tile % kTilesK * kBlockK;\n"
        "    tt_vec v[kItems];\n"
        "    bool ok[kItems];\n"
        "    u64 col_byte[kItems];\n"
        "#pragma unroll\n"
        "    for (u32 i = 0; i < kItems; ++i) {\n"
        "      const u32 row = tr + (i / kItemsCol) * kRows;\n"
        "      const u32 vc = tc + (i % kItemsCol) * kCols;\n"
        "      const u64 m = m0 + row;\n"
        "      const u64 k = k0 + u64(vc) * kVector;\n"
        "      ok[i] = ",
        guards.empty() ? "true" : absl::StrJoin(guards, " && "),
        ";\n"
        "      col_byte[i] = (m * kK + k) * kElementBytes;\n"
        "      v[i] = tt_vec{};\n"
        "      u64 img_byte;\n"
        "      if (ok[i] && tt_gather(m, k, img_byte)) v[i] = tt_ld_global(img + img_byte",
        ImgPolicy(),
        ");\n"
        "    }\n"
        "#pragma unroll\n"
        "    for (u32 i = 0; i < kItems; ++i) {\n"
        "      if (ok[i]) tt_st_global(col + col_byte[i], v[i]",
        ColPolicy(),
        ");\n"
        "    }\n"
        "  }\n"
        "}\n");
  }

  // The planes form's span gather (planes_gather=span): a vector's elements, kSW apart
  // along one image row, read as the aligned 16-B blocks that hold them and taken out of
  // those registers at offsets known here, after one shift by where element 0 starts.
  void SpanGather() {
    const int64_t e = l_.element_bytes;
    const int64_t span_bytes = ((l_.vector_elems - 1) * g_.sw + 1) * e;
    const int64_t shift_words = CeilDiv(span_bytes, 4);
    const int64_t words = std::max<int64_t>(4 * l_.span_blocks, shift_words + 4);
    absl::StrAppend(
        &out_,
        "\n// The kVector elements kSW apart from element iw of the image row at byte `row` of\n"
        "// img (iw may lie left of it; elements outside the row are zero), read as the aligned\n"
        "// 16-B blocks that hold them (blocks holding none are not read). False, having read\n"
        "// nothing, where the last block would pass the image's last byte.\n"
        "__device__ __forceinline__ bool tt_span_gather(tt_elem (&out)[kVector], const u8* img,\n"
        "                                               long long row, int iw", ImgPolicyParam(),
        ") {\n"
        "  const int lo_e = max(iw, 0);\n"
        "  const int hi_e = min(iw + int((kVector - 1) * kSW), int(kW) - 1);\n"
        "  if (lo_e > hi_e) {\n"
        "#pragma unroll\n"
        "    for (u32 e = 0; e < kVector; ++e) out[e] = tt_elem(0);\n"
        "    return true;\n"
        "  }\n"
        "  // The first and last blocks holding an element of the row.\n"
        "  const long long lo = (row + lo_e * (long long)kElementBytes) & ~15ll;\n"
        "  const long long hi = (row + hi_e * (long long)kElementBytes) & ~15ll;\n",
        l_.image_bytes % 16 == 0 ? ""
                                 : "  if (hi + 16 > (long long)kImageBytes) return false;\n",
        "  const long long at = row + iw * (long long)kElementBytes;  // element 0's byte\n"
        "  const long long a0 = at & ~15ll;\n"
        "  u32 w[", words, "];\n"
        "#pragma unroll\n"
        "  for (u32 i = 0; i < kSpanBlocks; ++i) {\n"
        "    const long long a = a0 + 16 * i;\n"
        "    tt_blk_vec x = {0u, 0u, 0u, 0u};\n"
        "    if (a >= lo && a <= hi) x = tt_blk_ld_global(img + a", ImgPolicy(), ");\n"
        "    w[4 * i] = x.x;\n"
        "    w[4 * i + 1] = x.y;\n"
        "    w[4 * i + 2] = x.z;\n"
        "    w[4 * i + 3] = x.w;\n"
        "  }\n"
        "#pragma unroll\n"
        "  for (u32 i = 4 * kSpanBlocks; i < ", words, "; ++i) w[i] = 0;\n"
        "  // Element 0 moved to byte 0: whole words by selects, then bytes by funnel shifts.\n"
        "  const u32 q = u32(at - a0) >> 2;\n",
        e < 4 ? "  const u32 r = u32(at - a0) % 4 * 8;\n" : "",
        "  u32 x[", shift_words + 1, "];\n"
        "#pragma unroll\n"
        "  for (u32 j = 0; j <= ", shift_words, "; ++j) {\n"
        "    x[j] = q == 0 ? w[j] : q == 1 ? w[j + 1] : q == 2 ? w[j + 2] : w[j + 3];\n"
        "  }\n"
        "#pragma unroll\n"
        "  for (u32 e = 0; e < kVector; ++e) {\n"
        "    const u32 o = e * kSW * kElementBytes;  // element e's byte once shifted\n",
        e < 4 ? "    const u32 word = __funnelshift_r(x[o / 4], x[o / 4 + 1], r);\n"
                "    const tt_elem v = tt_elem(word >> (o % 4 * 8));\n"
              : e == 4 ? "    const tt_elem v = x[o / 4];\n"
                       : "    const tt_elem v = (u64(x[o / 4 + 1]) << 32) | x[o / 4];\n",
        g_.pw > 0 ? "    out[e] = u32(iw + int(e * kSW)) < u32(kW) ? v : tt_elem(0);\n"
                  : "    out[e] = v;\n",
        "  }\n"
        "  return true;\n"
        "}\n");
  }

  std::string ImgPolicyParam() const { return l_.img_policy ? ", u64 img_policy" : ""; }

  // tt_box_run(box, o): the vector of consecutive box elements from byte o. Element by
  // element, a warp's loads from one box row hit each bank several times (its vectors lie
  // a vector apart); instead it loads the aligned vector holding byte o and the next (the
  // box has one vector of shared memory more for it), and shifts the pair into place.
  // Without branches, so a thread's loads for its batch of vectors all issue together.
  void BoxRun() {
    const int words = l_.vector_elems * l_.element_bytes / 4;
    const char* fields[] = {"x", "y", "z", "w"};
    std::string gather, pick, place;
    for (int i = 0; i < 2 * words; ++i) {
      absl::StrAppend(&gather, "  w[", i, "] = ", i < words ? "lo." : "hi.", fields[i % words],
                      ";\n");
    }
    // Word i of the run is word i + shift of the pair, shift < words: selects, since an
    // array indexed at run time would live in local memory.
    for (int i = 0; i <= words; ++i) {
      std::string choice = absl::StrCat("w[", i, "]");
      for (int shift = 1; shift < words; ++shift) {
        choice = absl::StrCat("shift == ", shift, " ? w[", i + shift, "] : ", choice);
      }
      absl::StrAppend(&pick, "  const u32 r", i, " = ", choice, ";\n");
    }
    for (int i = 0; i < words; ++i) {
      absl::StrAppend(&place, "  v.", fields[i], " = __funnelshift_r(r", i, ", r", i + 1,
                      ", bits);\n");
    }
    absl::StrAppend(&out_,
                    "\n// The vector of consecutive box elements from byte o of the box.\n"
                    "__device__ __forceinline__ tt_vec tt_box_run(const u8* box, u32 o) {\n"
                    "  const u32 s = o % u32(sizeof(tt_vec));\n"
                    "  const tt_vec lo = tt_ld_shared(box + (o - s));\n"
                    "  const tt_vec hi = tt_ld_shared(box + (o - s) + sizeof(tt_vec));\n"
                    "  u32 w[", 2 * words, "];\n", gather,
                    words > 1 ? "  const u32 shift = s / 4, bits = s % 4 * 8;\n"
                              : "  const u32 bits = s * 8;\n",
                    pick,
                    "  tt_vec v;\n", place, "  return v;\n}\n");
  }

  // The shared gather's read of vector b (its first element at box offset at_box): a run of
  // the box, or element by element, stepping (ohl, ow) and, in whole rows, q.
  std::string ReadVector(bool whole) const {
    if (l_.box_runs) {
      return "        // Every vector lies within one output row: a run of the box.\n"
             "        pack[b].v = tt_box_run(tt_smem, (valid[b] == kVector ? at_box : 0u) * "
             "u32(kElementBytes));\n";
    }
    return absl::StrCat(
        "#pragma unroll\n"
        "        for (u32 e = 0; e < kVector; ++e) {\n"
        "          tt_elem v = tt_elem(0);\n"
        "          if (e < valid[b]) v = box[at_box];\n"
        "          pack[b].e[e] = v;\n"
        "          // The next element: the next column, wrapping to the next output row",
        whole ? " and\n          // from the last to the next tile row.\n" : ".\n",
        "          at_box += u32(kSW);\n"
        "          if (++ow == u32(kOW)) {\n"
        "            ow = 0;\n",
        whole ? "            if (++ohl == u32(kBand)) {\n"
                "              ohl = 0;\n"
                "              ++q;\n"
                "            }\n"
              : "            ++ohl;\n",
        "            at_box = offset(u32(m0) + q, plane0, ohl, 0);\n"
        "          }\n"
        "        }\n");
  }

  // The planes form with planes_gather=patches: tile t is kernel rows [kh0, kh0 +
  // kPatchRows) x window rows [oh0, oh0 + kPatchOh) of plane t / kPlaneTiles. The CTA loads
  // the image rows oh * KH + kh of the tile whole (kh fastest, so neighbouring rows of the
  // image), neighbouring threads loading neighbouring vectors, and parts each vector's
  // pixels into their taps' runs in shared memory (pixel w is tap column w % KW of window
  // column w / KW); then it stores the runs, neighbouring threads storing neighbouring
  // vectors: one span of the matrix where the tile takes every window row.
  void PatchesKernel() {
    const bool whole = l_.patch_oh == l_.oh;
    KernelSignature();
    absl::StrAppend(
        &out_,
        "  extern __shared__ __align__(16) u8 tt_smem[];\n"
        "  tt_elem* const stage = reinterpret_cast<tt_elem*>(tt_smem);\n"
        "  union Loaded {\n"
        "    tp_vec v;\n"
        "    tt_elem e[kLoad];\n"
        "  };\n"
        "  for (u64 tile = blockIdx.x; tile < kNumTiles; tile += gridDim.x) {\n"
        "    const u64 plane = tile / kPlaneTiles;\n"
        "    const u32 t = u32(tile % kPlaneTiles);\n"
        "    const u32 kh0 = t / kOhTiles * kPatchRows, oh0 = t % kOhTiles * kPatchOh;\n"
        "    const u32 rows = min(kPatchRows, u32(kKH) - kh0), ohs = min(kPatchOh, u32(kOH) - oh0);\n"
        "    const u8* const from = img + plane * kH * kW * kElementBytes;\n"
        "    __syncthreads();  // the previous tile's stores are done with the stage\n"
        "    const u32 loads = rows * ohs * kRowLoads;\n"
        "    for (u32 i = threadIdx.x; i < loads; i += kThreads) {\n"
        "      const u32 row = i / kRowLoads, x = i % kRowLoads * kLoad;\n"
        "      const u32 q = row % rows, o = row / rows;\n"
        "      Loaded in;\n"
        "      in.v = tp_ld_global(from + ((u64(oh0 + o) * kKH + kh0 + q) * kW + x) * kElementBytes",
        ImgPolicy(),
        ");\n"
        "      tt_elem* const runs = stage + q * u32(kKW) * kPitch + o * u32(kOW);\n"
        "#pragma unroll\n"
        "      for (u32 e = 0; e < kLoad; ++e) {\n"
        "        const u32 w = x + e;\n"
        "        runs[w % u32(kKW) * kPitch + w / u32(kKW)] = in.e[e];\n"
        "      }\n"
        "    }\n"
        "    __syncthreads();\n"
        "    u8* const to = col + ((plane * kKH + kh0) * kKW * kOHW + u64(oh0) * kOW) * kElementBytes;\n",
        whole ? absl::StrCat(
                    "    // Every window row: the taps' runs are one span of the matrix.\n"
                    "    const u32 stores = rows * u32(kKW) * u32(kOHW) / kVector;\n"
                    "    for (u32 i = threadIdx.x; i < stores; i += kThreads) {\n"
                    "      const u64 at = u64(i) * kVector * kElementBytes;\n"
                    "      tt_st_global(to + at, tt_ld_shared(tt_smem + at)",
                    ColPolicy(),
                    ");\n"
                    "    }\n")
              : absl::StrCat(
                    "    // A run of ohs window rows into each of the taps' matrix rows.\n"
                    "    const u32 per_run = ohs * u32(kOW) / kVector, stores = rows * u32(kKW) * per_run;\n"
                    "    for (u32 i = threadIdx.x; i < stores; i += kThreads) {\n"
                    "      const u32 r = i / per_run, j = i % per_run * kVector;\n"
                    "      tt_st_global(to + (u64(r) * kOHW + j) * kElementBytes,\n"
                    "                   tt_ld_shared(tt_smem + (u64(r) * kPitch + j) * kElementBytes)",
                    ColPolicy(),
                    ");\n"
                    "    }\n"),
        "  }\n"
        "}\n");
  }

  // The planes form with planes_gather=shared: tile t's rows reach kBoxPlanes planes at
  // most (from plane m0 / kTaps), its columns kBand output rows (from oh0). The CTA first
  // copies each plane's window of the image those rows read into shared memory: box row j
  // is image row oh0*SH - PH + j, box column x image column x - PW, zero outside the image.
  // Then thread j stores vectors j, j + kThreads, ... of the tile's runs, 4 at a time, each
  // element read from the box while (row, oh, ow) steps along the vector.
  void SharedPlanesKernel() {
    const bool whole = l_.block_k == l_.k;
    KernelSignature();
    absl::StrAppend(
        &out_,
        "  extern __shared__ __align__(16) u8 tt_smem[];\n"
        "  tt_elem* const box = reinterpret_cast<tt_elem*>(tt_smem);\n",
        PlanesPack(),
        "  // Box offset of matrix row r's element at output row oh0 + ohl, column ow, for a\n"
        "  // tile from plane plane0.\n"
        "  auto offset = [](u32 r, u32 plane0, u32 ohl, u32 ow) {\n"
        "    const u32 p = r / u32(kTaps) - plane0, tap = r % u32(kTaps);\n"
        "    const u32 kh = tap / u32(kKW), kw = tap % u32(kKW);\n"
        "    return p * kBoxPlane + (ohl * u32(kSH) + kh * u32(kDH)) * kBoxCols + ow * u32(kSW) +\n"
        "           kw * u32(kDW);\n"
        "  };\n",
        PlanesTileHead(),
        "    const u32 plane0 = u32(m0 / kTaps);\n"
        "    const u32 oh0 = k0 / u32(kOW);\n"
        "    __syncthreads();  // the previous tile's reads of the box are done\n"
        "    for (u32 i = threadIdx.x; i < kBoxPlanes * kBoxPlane; i += kThreads) {\n"
        "      const u32 p = i / kBoxPlane, rest = i % kBoxPlane;\n"
        "      const u32 plane = plane0 + p;\n"
        "      // Above or left of the image the subtraction wraps: one compare per axis.\n"
        "      const u32 ih = oh0 * u32(kSH) + rest / kBoxCols - u32(kPH);\n"
        "      const u32 iw = rest % kBoxCols - u32(kPW);\n"
        "      const bool inside = plane < u32(kPlanes) && ih < u32(kH) && iw < u32(kW);\n"
        "      const tt_elem v = tt_ld_elem(inside ? img + (plane / u32(kC) * kImgStrideN + plane % u32(kC) * "
        "kImgStrideC + u64(ih) * kImgStrideH + u64(iw) * kImgStrideW) * kElementBytes : img",
        ImgPolicy(),
        ");\n"
        "      box[i] = inside ? v : tt_elem(0);\n"
        "    }\n"
        "    __syncthreads();\n",
        PlanesVectorLoopHead(whole),
        whole ? "        const u32 f = j * kVector;  // element of the run\n"
                "        valid[b] = j < vectors ? min(kVector, run - f) : 0;\n"
                "        u32 q = f / u32(kK);\n"
                "        const u32 column = f % u32(kK);\n"
                "        at[b] = (m0 * kK + f) * kElementBytes;\n"
              : "        const u32 q = j / kSegVectors, column = k0 + j % kSegVectors * kVector;\n"
                "        valid[b] = j < vectors && m0 + q < kM && column < u32(kK) ? kVector : 0;\n"
                "        at[b] = ((m0 + q) * kK + column) * kElementBytes;\n",
        "        u32 ohl = column / u32(kOW) - oh0, ow = column % u32(kOW);\n"
        "        u32 at_box = offset(u32(m0) + q, plane0, ohl, ow);\n",
        ReadVector(whole),
        "      }\n",
        PlanesStores());
  }

  // The planes kernels' shared pieces: a thread's batch of packed vectors, the tile loop's
  // head (the tile's first matrix row m0 and column k0), the loop over a tile's vectors
  // kBatch at a time (item b of the batch is vector j), and the batch's stores, which close
  // the vector loop, the tile loop and the kernel.
  static std::string PlanesPack() {
    return "  constexpr u32 kBatch = 4;\n"
           "  union Pack {\n"
           "    tt_vec v;\n"
           "    tt_elem e[kVector];\n"
           "  };\n";
  }
  static std::string PlanesTileHead() {
    return "  for (u64 tile = blockIdx.x; tile < kNumTiles; tile += gridDim.x) {\n"
           "    const u64 m0 = tile / kTilesK * kBlockM;\n"
           "    const u32 k0 = u32(tile % kTilesK * kBlockK);\n";
  }
  static std::string PlanesVectorLoopHead(bool whole) {
    return absl::StrCat(
        whole ? "    // Whole rows: one run of the tile's rows (fewer in the last tile).\n"
                "    const u32 run = u32(m0 + kBlockM <= kM ? kBlockM * kK : (kM - m0) * kK);\n"
                "    const u32 vectors = (run + kVector - 1) / kVector;\n"
              : "    const u32 vectors = kTileItems;\n",
        "    for (u32 j0 = threadIdx.x; j0 < vectors; j0 += kThreads * kBatch) {\n"
        "      Pack pack[kBatch];\n"
        "      u64 at[kBatch];\n"
        "      u32 valid[kBatch];\n"
        "#pragma unroll\n"
        "      for (u32 b = 0; b < kBatch; ++b) {\n"
        "        const u32 j = j0 + b * kThreads;\n");
  }
  std::string PlanesStores() const {
    return absl::StrCat(
        "#pragma unroll\n"
        "      for (u32 b = 0; b < kBatch; ++b) {\n"
        "        if (valid[b] == kVector) {\n"
        "          tt_st_global(col + at[b], pack[b].v",
        ColPolicy(),
        ");\n"
        "        } else {\n"
        "          for (u32 e = 0; e < valid[b]; ++e) {\n"
        "            reinterpret_cast<tt_elem*>(col + at[b])[e] = pack[b].e[e];\n"
        "          }\n"
        "        }\n"
        "      }\n"
        "    }\n"
        "  }\n"
        "}\n");
  }

  // The planes form (channel_rows columns): the matrix [N*C*KH*KW, OH*OW], tile t at
  // (t / kTilesK, t % kTilesK) of [kBlockM, kBlockK] tiles. Row r is plane r / kTaps (= n*C
  // + c) and tap r % kTaps (= kh*KW + kw); column p is (p / OW, p % OW). Thread j of a tile
  // stores vectors j, j + kThreads, ... of its runs, 4 at a time (their loads first), each
  // element gathered from the image while (row, oh, ow) steps along the vector.
  void PlanesKernel() {
    const bool whole = l_.block_k == l_.k;
    std::vector<std::string> inside;
    // With no padding on an axis every window lies inside the image along it.
    if (g_.ph > 0) inside.push_back("ih < kH");
    if (g_.pw > 0) inside.push_back("iw < kW");
    const std::string guard = inside.empty() ? "" : absl::StrCat(" && ", absl::StrJoin(inside, " && "));
    KernelSignature();
    absl::StrAppend(
        &out_,
        PlanesPack(),
        PlanesTileHead(),
        PlanesVectorLoopHead(whole),
        whole ? "        const u32 f = j * kVector;  // element of the run\n"
                "        valid[b] = j < vectors ? min(kVector, run - f) : 0;\n"
                "        u64 r = m0 + f / u32(kK);\n"
                "        u32 p = f % u32(kK);\n"
                "        at[b] = (m0 * kK + f) * kElementBytes;\n"
              : "        const u32 row = j / kSegVectors, column = k0 + j % kSegVectors * kVector;\n"
                "        u64 r = m0 + row;\n"
                "        u32 p = column;\n"
                "        valid[b] = j < vectors && r < kM && p < u32(kK) ? kVector : 0;\n"
                "        at[b] = (r * kK + p) * kElementBytes;\n",
        "        // Where the vector starts: (plane, kh, kw) of its row, (oh, ow) of its column,\n"
        "        // and the image position (ih, iw) they read; each then steps along the vector.\n"
        "        u32 oh = p / u32(kOW), ow = p % u32(kOW);\n"
        "        const u32 tap = u32(r % kTaps);\n"
        "        u32 kh = tap / u32(kKW), kw = tap % u32(kKW);\n"
        "        u64 plane = r / kTaps;\n"
        "        const u8* from = img + (plane / kC * kImgStrideN + plane % kC * kImgStrideC) * kElementBytes;\n"
        "        // Above or left of the image the subtraction wraps: one compare per axis.\n"
        "        u32 ih = oh * u32(kSH) + kh * u32(kDH) - u32(kPH);\n"
        "        u32 iw = ow * u32(kSW) + kw * u32(kDW) - u32(kPW);\n"
        "        const u8* line = from + u64(ih) * (kImgStrideH * kElementBytes);\n",
        SpanCall(),
        "#pragma unroll\n"
        "        for (u32 e = 0; e < kVector; ++e) {\n"
        "          const bool inside = e < valid[b]", guard, ";\n"
        "          const tt_elem v = tt_ld_elem(\n"
        "              inside ? line + u64(iw) * (kImgStrideW * kElementBytes) : img",
        ImgPolicy(),
        ");\n"
        "          pack[b].e[e] = inside ? v : tt_elem(0);\n"
        "          // The next element: the next column, wrapping to the next row.\n"
        "          iw += u32(kSW);\n"
        "          if (++ow == u32(kOW)) {\n"
        "            ow = 0;\n"
        "            ih += u32(kSH);\n"
        "            if (++oh == u32(kOH)) {\n"
        "              oh = 0;\n"
        "              if (++kw == u32(kKW)) {\n"
        "                kw = 0;\n"
        "                if (++kh == u32(kKH)) {\n"
        "                  kh = 0;\n"
        "                  ++plane;\n"
        "                  from = img + (plane / kC * kImgStrideN + plane % kC * kImgStrideC) * kElementBytes;\n"
        "                }\n"
        "              }\n"
        "              ih = kh * u32(kDH) - u32(kPH);\n"
        "            }\n"
        "            iw = kw * u32(kDW) - u32(kPW);\n"
        "            line = from + u64(ih) * (kImgStrideH * kElementBytes);\n"
        "          }\n"
        "        }\n"
        "      }\n",
        PlanesStores());
  }

  // The span gather's call in the planes kernel: vectors within one output row take it
  // (rows above or below the image are zeros); the others, and any it declines, go on to
  // the element gather.
  std::string SpanCall() const {
    if (!l_.span_gather) return "";
    return absl::StrCat(
        "        if (valid[b] == kVector && ow + kVector <= u32(kOW)) {\n",
        g_.ph > 0 ? "          if (ih >= u32(kH)) {\n"
                    "#pragma unroll\n"
                    "            for (u32 e = 0; e < kVector; ++e) pack[b].e[e] = tt_elem(0);\n"
                    "            continue;\n"
                    "          }\n"
                  : "",
        "          if (tt_span_gather(pack[b].e, img, (long long)(line - img), int(iw)",
        ImgPolicy(), ")) continue;\n"
        "        }\n");
  }

  // One image element by a non-coherent load, with the image's L2 policy if any.
  void ElementLoad() {
    const char* type = "u8";
    const char* reg = "u16";
    const char* constraint = "h";
    switch (l_.element_bytes) {
      case 2: type = "u16"; break;
      case 4: type = "u32"; reg = "u32"; constraint = "r"; break;
      case 8: type = "u64"; reg = "u64"; constraint = "l"; break;
      default: break;
    }
    const char* elem = l_.element_bytes == 1   ? "u8"
                       : l_.element_bytes == 2 ? "u16"
                       : l_.element_bytes == 4 ? "u32"
                                               : "u64";
    bool hint = l_.img_policy.has_value();
    absl::StrAppend(
        &out_, "\n// One image element.\ntypedef ", elem, " tt_elem;\n",
        "__device__ __forceinline__ tt_elem tt_ld_elem(const u8* p", hint ? ", u64 policy" : "",
        ") {\n  ", reg, " v;\n  // Not volatile, so the loads of an unrolled loop may issue together; the\n  // compiler may also hoist it above a branch: callers pass valid addresses only.\n  asm(\"ld.global.nc", hint ? ".L2::cache_hint" : "", ".",
        type, " %0, [%1]", hint ? ", %2" : "", ";\" : \"=", constraint, "\"(v) : \"l\"(p)",
        hint ? ", \"l\"(policy)" : "", ");\n  return tt_elem(v);\n}\n");
  }

  // The flat form's store of a tile's run from shared memory (`rows`) to the column matrix.
  void FlatStore() {
    if (l_.m % l_.block_m != 0) {
      absl::StrAppend(
          &out_,
          "    // The last tile holds only the rows that exist.\n"
          "    const u32 run = u32(m0 + kBlockM <= kM ? kBlockM * kK : (kM - m0) * kK);\n"
          "    for (u32 v = threadIdx.x; v * kFlatVector < run; v += kThreads) {\n"
          "      const u32 e = v * kFlatVector;\n"
          "      if (e + kFlatVector <= run) {\n"
          "        tt_st_global(out + e * kElementBytes, *reinterpret_cast<const tt_vec*>(rows + e)",
          ColPolicy(),
          ");\n"
          "      } else {\n"
          "        for (u32 i = e; i < run; ++i) reinterpret_cast<tt_elem*>(out)[i] = rows[i];\n"
          "      }\n"
          "    }\n");
    } else {
      absl::StrAppend(
          &out_,
          "    for (u32 v = threadIdx.x; v < kTileVectors; v += kThreads) {\n"
          "      const u32 e = v * kFlatVector;\n"
          "      tt_st_global(out + e * kElementBytes, *reinterpret_cast<const tt_vec*>(rows + e)",
          ColPolicy(),
          ");\n"
          "    }\n");
    }
  }

  // Flat form with staged input: tile t is kBlockM / kOW whole output rows. Each output
  // row's kKH input rows are copied into shared memory as box rows (box column j is image
  // column j - kPW; zero outside the image), with wide coalesced loads, or (box.bulk_fill)
  // by the last thread's cp.async.bulk copies on an mbarrier while the image comes into L2
  // ahead of them: all of it at the start (box.prefetch_all), or the first threads prefetch
  // the rows of a tile a few waves ahead. The tile's run of
  // vectors repeats its (row, column) pattern every kPeriodRows rows, so vector v takes
  // unit u from offsets[v % kPeriod].at[u] past the box column of its period's first
  // output pixel: one table load per unit, one shared load per unit, one global store.
  // With box.row_phase (one output row a tile), the row's vector v takes entry
  // (t0 + v) % kPeriod past the box column of its own first pixel, t0 from the row's phase
  // (InputBox::row_phase), and the elements before and after its whole vectors go one by one.
  void StagedKernel() {
    if (l_.box.phase_gather) return StagedPhaseKernel();
    const LoweredIm2col::InputBox& box = l_.box;
    const int64_t units = Units();
    const char* unit = box.unit_bytes == 1 ? "u8" : box.unit_bytes == 2 ? "u16" : "b32";
    absl::StrAppend(&out_,
                    "\n// Byte offsets in the boxes of one vector's units (see the kernel).\n"
                    "struct __align__(", std::min<int64_t>(units * box.entry_bytes, 16),
                    ") tt_offsets {\n  u32 at[kTableWords];",
                    box.entry_bytes == 2 ? "  // two 16-bit offsets each, low half first" : "",
                    "\n};\n"
                    "// One unit from shared memory, by a 32-bit shared address (volatile: it stays\n"
                    "// after the barrier that publishes the boxes).\n"
                    "__device__ __forceinline__ u32 tt_unit(u32 addr) {\n"
                    "  u32 v;\n"
                    "  asm volatile(\"ld.shared.", unit, " %0, [%1];\" : \"=r\"(v) : \"r\"(addr));\n"
                    "  return v;\n}\n");
    const bool bulk = box.bulk_fill;
    // The bulk fill's bookkeeping would otherwise cost registers enough to drop a CTA per SM
    // (the N32 C3 stem at 512 threads: 40 registers, 3 CTAs per SM instead of 4).
    KernelSignature(bulk ? box.resident_ctas : 0, bulk ? box.max_registers : 0);
    absl::StrAppend(
        &out_,
        "  extern __shared__ __align__(16) u8 tt_smem[];\n"
        "  const tt_offsets* const offsets = reinterpret_cast<const tt_offsets*>(tt_smem);\n"
        "  tt_elem* const box = reinterpret_cast<tt_elem*>(tt_smem + kBoxOffset);\n");
    if (bulk) {
      absl::StrAppend(
          &out_,
          "  // The last thread fills the boxes with bulk copies that complete on tt_bar (its warp\n"
          "  // gets no more vectors or table entries than any other); the first tile's barrier\n"
          "  // publishes its initialisation.\n"
          "  __shared__ __align__(8) u64 tt_bar;\n"
          "  if (threadIdx.x == kThreads - 1) {\n"
          "    tt_mbarrier_init(&tt_bar, 1);\n"
          "    tt_fence_barrier_init();\n"
          "  }\n"
          "  u32 phase = 0;\n");
      if (box.prefetch_all) {
        // The whole image prefetched at the start, rather than each tile's rows a few waves
        // ahead, where the lowering chose it (kPrefetchAllL2Fraction says when).
        absl::StrAppend(
            &out_,
            "  // The whole image into L2 at the start: CTA b of the first wave (%nsmid x\n"
            "  // kResidentCtas CTAs, or the whole grid when smaller) prefetches the b-th of as many\n"
            "  // equal shares, in 16-byte units (a last partial unit is left to the copies).\n"
            "  if (threadIdx.x == 0) {\n");
        WholeImagePrefetch();
        absl::StrAppend(&out_, "  }\n");
      } else {
        absl::StrAppend(
            &out_,
            "  // Image rows are prefetched into L2 for the tile this many tiles ahead: a few waves\n"
            "  // of resident CTAs (%nsmid bounds the SM count).\n"
            "  u32 sms;\n"
            "  asm(\"mov.u32 %0, %%nsmid;\" : \"=r\"(sms));\n"
            "  const u64 ahead = u64(kPrefetchCtasPerSm) * sms;\n");
      }
    }
    const bool one_tile = l_.launch.ctas_per_sm == 0;
    absl::StrAppend(
        &out_,
        bulk ? "  // Box row b of the tile whose first output row is `first` is input row kh of output\n"
               "  // row first + b / kKH: whether it lies in the image (not padding, not past the last\n"
               "  // output row), and where it starts there when it does. The bulk copies branch on\n"
               "  // the first and never see a null address (one guarded by a null test read\n"
               "  // address 0 on the H200 where every row of a tile was padding).\n"
               "  auto inside = [&](u64 first, u32 b) -> bool {\n"
               "    const u64 row = first + b / kKH;\n"
               "    const u32 ih = u32(row % kOH) * u32(kSH) + b % kKH * u32(kDH) - u32(kPH);\n"
               "    return row < kOutRows && ih < kH;\n"
               "  };\n"
               "  auto start = [&](u64 first, u32 b) -> const u8* {\n"
               "    const u64 row = first + b / kKH;\n"
               "    const u32 ih = u32(row % kOH) * u32(kSH) + b % kKH * u32(kDH) - u32(kPH);\n"
               "    return img + (row / kOH * kImgStrideN + u64(ih) * kImgStrideH) * kElementBytes;\n"
               "  };\n"
               "  // The producer: one bulk copy per box row inside the image, its kChunks x kLoad bytes.\n"
               "  auto fill = [&](u64 first) {\n"
               "    u32 bytes = 0;\n"
               "    for (u32 b = 0; b < kBoxRows; ++b) {\n"
               "      if (inside(first, b)) bytes += kChunks * kLoad;\n"
               "    }\n"
               "    tt_mbarrier_expect_tx(&tt_bar, bytes);\n"
               "    for (u32 b = 0; b < kBoxRows; ++b) {\n"
               "      if (inside(first, b)) {\n"
               "        tt_bulk_load(reinterpret_cast<u8*>(box + b * kBoxPitch + kBoxLead + kBoxStart),\n"
               "                     start(first, b), kChunks * kLoad, &tt_bar"
             : "  // Image row of box row b of the tile whose first output row is `first` (input row\n"
               "  // kh of output row first + b / kKH); null where that row is padding or past the last\n"
               "  // output row.\n"
               "  auto source = [&](u64 first, u32 b) -> const u8* {\n"
               "    const u64 row = first + b / kKH;\n"
               "    const u32 ih = u32(row % kOH) * u32(kSH) + b % kKH * u32(kDH) - u32(kPH);\n"
               "    if (row >= kOutRows || ih >= kH) return nullptr;\n"
               "    return img + (row / kOH * kImgStrideN + u64(ih) * kImgStrideH) * kElementBytes;\n"
               "  };\n");
    const int64_t copy_bytes = StagedRowCopyBytes(l_);
    if (bulk) {
      // The first tile's copies start before the table is built, which hides the table
      // behind their latency. The producer is the last thread, whose warp is not also the
      // one with the extra vectors and table entries, so no warp does both.
      absl::StrAppend(&out_, ImgPolicy(),
                      ");\n"
                      "      }\n"
                      "    }\n"
                      "  };\n"
                      "  if (threadIdx.x == kThreads - 1) fill(u64(blockIdx.x) * kBlockM / kOW);\n");
    }
    if (bulk && copy_bytes % box.load_bytes != 0) {
      // The bulk copies take whole 16-byte units; the element loads of the rest need the
      // row's address or null.
      absl::StrAppend(&out_,
                      "  auto source = [&](u64 first, u32 b) -> const u8* {\n"
                      "    return inside(first, b) ? start(first, b) : nullptr;\n"
                      "  };\n");
    }
    const char* entry_type = box.entry_bytes == 2 ? "u16" : "u32";
    if (box.row_phase) {
      // One thread an entry, its units by walking (d, kh, kw, c) from the entry's first
      // element: five constant divisions an entry rather than seven a unit, since every
      // output row (each CTA's tile, unless the grid is persistent) builds the whole table.
      absl::StrAppend(
          &out_,
          "  // Unit u of entry t: of the vector that starts at column kFlatVector t mod kK of\n"
          "  // a pixel, its element u / kUnitsPerElem counted from there (past kK: a later\n"
          "  // pixel's, d pixels on). The first tile's barrier publishes the table.\n"
          "  for (u32 t = threadIdx.x; t < kPeriod; t += kThreads) {\n"
          "    const u32 f = t * kFlatVector % u32(kK);\n"
          "    u32 d = 0, kh = f / u32(kKW * kC), kw = f / u32(kC) % u32(kKW), c = f % u32(kC);\n"
          "    ", entry_type, "* const entry = reinterpret_cast<", entry_type,
          "*>(tt_smem) + t * kUnits;\n"
          "#pragma unroll\n"
          "    for (u32 u = 0; u < kUnits; ++u) {\n"
          "      entry[u] = (kh * kBoxPitch + kBoxLead + (d * u32(kSW) + kw * u32(kDW)) * u32(kC) + c) *\n"
          "                     u32(kElementBytes) + u % kUnitsPerElem * 4;\n",
          WindowStep("u % kUnitsPerElem == kUnitsPerElem - 1 && ++c == u32(kC)"),
          "    }\n"
          "  }\n");
    } else {
      absl::StrAppend(
          &out_,
          "  // Unit u of vector p of a period: element f of the period's run, kPeriodRows rows of\n"
          "  // kK columns. The first tile's barrier publishes the table.\n"
          "  for (u32 i = threadIdx.x; i < kPeriod * kUnits; i += kThreads) {\n"
          "    const u32 f = i / kUnitsPerElem, d = f / u32(kK), k = f % u32(kK);\n"
          "    const u32 kh = k / u32(kKW * kC), kw = k / u32(kC) % u32(kKW), c = k % u32(kC);\n"
          "    reinterpret_cast<", entry_type, "*>(tt_smem)[i] =\n"
          "        (kh * kBoxPitch + kBoxLead + (d * u32(kSW) + kw * u32(kDW)) * u32(kC) + c) *\n"
          "            u32(kElementBytes) + i % kUnitsPerElem * 4;\n"
          "  }\n");
    }
    absl::StrAppend(
        &out_,
        // One CTA per tile runs the body once, without the loop: the looped form issues a
        // third more instructions at the same occupancy.
        one_tile ? "  {\n"
                   "    const u64 tile = blockIdx.x;\n"
                 : "  for (u64 tile = blockIdx.x; tile < kNumTiles; tile += gridDim.x) {\n",
        "    const u64 m0 = tile * kBlockM;\n"
        "    const u64 row0 = m0 / kOW;\n");
    if (bulk && !box.prefetch_all) {
      absl::StrAppend(
          &out_,
          "    if (tile + ahead < kNumTiles) {\n"
          "      const u64 later = (tile + ahead) * kBlockM / kOW;\n"
          "      for (u32 b = threadIdx.x; b < kBoxRows; b += kThreads) {\n"
          "        if (inside(later, b)) tt_bulk_prefetch_l2(start(later, b), kChunks * kLoad",
          ImgPolicy(),
          ");\n"
          "      }\n"
          "    }\n");
    }
    if (box.pixels > box.copy_pixels) {
      absl::StrAppend(
          &out_,
          "    // Columns left of the image and right of the copied pixels.\n"
          "    for (u32 i = threadIdx.x; i < kBoxRows * kPadElems; i += kThreads) {\n"
          "      const u32 b = i / kPadElems, p = i % kPadElems;\n"
          "      box[b * kBoxPitch + kBoxLead + (p < kBoxStart ? p : p + kBoxCopy)] = 0;\n"
          "    }\n");
    }
    if (bulk) {
      absl::StrAppend(
          &out_,
          "    // Box rows outside the image read zero.\n"
          "    for (u32 i = threadIdx.x; i < kBoxRows * kChunks; i += kThreads) {\n"
          "      const u32 b = i / kChunks, j = i % kChunks;\n"
          "      if (!inside(row0, b)) {\n"
          "        tt_box_st_shared(\n"
          "            reinterpret_cast<u8*>(box + b * kBoxPitch + kBoxLead + kBoxStart) + j * kLoad,\n"
          "            tt_box_vec{});\n"
          "      }\n"
          "    }\n");
    } else if (copy_bytes >= box.load_bytes) {
      absl::StrAppend(
          &out_,
          "    // The image's pixels, kLoad bytes at a time; a padding row gets zeros.\n"
          "    for (u32 i = threadIdx.x; i < kBoxRows * kChunks; i += kThreads) {\n"
          "      const u32 b = i / kChunks, j = i % kChunks;\n"
          "      const u8* const from = source(row0, b);\n"
          "      tt_box_vec v{};\n"
          "      if (from != nullptr) v = tt_box_ld_global(from + j * kLoad",
          ImgPolicy(),
          ");\n"
          "      tt_box_st_shared(\n"
          "          reinterpret_cast<u8*>(box + b * kBoxPitch + kBoxLead + kBoxStart) + j * kLoad, v);\n"
          "    }\n");
    }
    if (copy_bytes % box.load_bytes != 0) {
      absl::StrAppend(
          &out_,
          "    // The copy's last elements, one at a time.\n"
          "    for (u32 i = threadIdx.x; i < kBoxRows * kTail; i += kThreads) {\n"
          "      const u32 b = i / kTail, t = kChunks * (kLoad / kElementBytes) + i % kTail;\n"
          "      const u8* const from = source(row0, b);\n"
          "      // A padding row reads the image's first element (tt_ld_elem may be hoisted\n"
          "      // above the test) and stores zero.\n"
          "      const tt_elem v = tt_ld_elem(from != nullptr ? from + t * kElementBytes : img",
          ImgPolicy(),
          ");\n"
          "      box[b * kBoxPitch + kBoxLead + kBoxStart + t] = from != nullptr ? v : tt_elem(0);\n"
          "    }\n");
    }
    absl::StrAppend(&out_, "    __syncthreads();\n",
                    bulk ? "    tt_mbarrier_wait(&tt_bar, phase);\n"
                           "    phase ^= 1;\n"
                         : "");
    if (box.row_phase) {
      // One output row per tile (block_M = OW), its run at its own phase of the vector.
      absl::StrAppend(
          &out_,
          "    // The row's run starts `head` elements before its first whole vector.\n"
          "    const u32 head = u32((kFlatVector - m0 * kK % kFlatVector) % kFlatVector);\n"
          "    const u32 vectors = (u32(kOW * kK) - head) / kFlatVector;\n"
          "    const u32 tail = (u32(kOW * kK) - head) % kFlatVector;\n"
          "    // The elements no whole vector holds, one at a time.\n"
          "    for (u32 i = threadIdx.x; i < head + tail; i += kThreads) {\n"
          "      const u32 f = i < head ? i : u32(kOW * kK) - tail + (i - head);\n"
          "      const u32 q = f / u32(kK), k = f % u32(kK);\n"
          "      const u32 kh = k / u32(kKW * kC), kw = k / u32(kC) % u32(kKW), c = k % u32(kC);\n"
          "      reinterpret_cast<tt_elem*>(col)[m0 * kK + f] =\n"
          "          box[kh * kBoxPitch + kBoxLead + (q * u32(kSW) + kw * u32(kDW)) * u32(kC) + c];\n"
          "    }\n"
          "    u8* const out = col + (m0 * kK + head) * kElementBytes;\n"
          "    const u32 boxes = tt_smem_addr(tt_smem) + kBoxOffset;\n"
          "    // Vector 0 starts at column head of pixel 0: table entry t0, and vector v at t0 + v.\n"
          "    const u32 t0 = head / kPhaseUnit * kVectorInverse % kPeriod;\n"
          "    for (u32 v = threadIdx.x; v < vectors; v += kThreads) {\n"
          "      const u32 p = (t0 + v) % kPeriod, q = (head + v * kFlatVector) / u32(kK);\n"
          "      const u32 at = boxes + q * u32(kSW * kC * kElementBytes);\n");
    } else {
      // The period's first output pixel: output row r / kOW of the tile, column r % kOW.
      const std::string first =
          box.rows_per_tile == 1
              ? "r * u32(kSW * kC)"
              : "(r / u32(kOW) * kKH * kBoxPitch + r % u32(kOW) * u32(kSW * kC))";
      absl::StrAppend(
          &out_,
          "    u8* const out = col + m0 * kK * kElementBytes;\n"
          "    const u32 boxes = tt_smem_addr(tt_smem) + kBoxOffset;\n",
          l_.m % l_.block_m != 0
              ? "    // The last tile holds only the output rows that exist.\n"
                "    const u32 vectors = u32(row0 + kRowsPerTile <= kOutRows\n"
                "                                ? kTileVectors\n"
                "                                : (kOutRows - row0) * kOW * kK / kFlatVector);\n"
              : "    const u32 vectors = kTileVectors;\n",
          "    for (u32 v = threadIdx.x; v < vectors; v += kThreads) {\n"
          "      const u32 p = v % u32(kPeriod), r = v / u32(kPeriod) * u32(kPeriodRows);\n"
          "      const u32 at = boxes + ",
          first, " * u32(kElementBytes);\n");
    }
    absl::StrAppend(&out_,
                    "      const tt_offsets o = offsets[p];\n"
                    "      tt_vec x;\n");
    const int per_word = 4 / box.unit_bytes;
    const char* fields[] = {"x", "y", "z", "w"};
    for (int64_t w = 0; w < units / per_word; ++w) {
      std::vector<std::string> parts;
      for (int t = 0; t < per_word; ++t) {
        const int64_t u = w * per_word + t;
        std::string entry = box.entry_bytes == 4  ? absl::StrCat("o.at[", u, "]")
                            : u % 2 == 0 ? absl::StrCat("(o.at[", u / 2, "] & 0xffffu)")
                                         : absl::StrCat("(o.at[", u / 2, "] >> 16)");
        std::string load = absl::StrCat("tt_unit(at + ", entry, ")");
        parts.push_back(t == 0 ? load : absl::StrCat(load, " << ", 8 * box.unit_bytes * t));
      }
      absl::StrAppend(&out_, "      x.", fields[w], " = ", absl::StrJoin(parts, " | "), ";\n");
    }
    absl::StrAppend(&out_,
                    "      tt_st_global(out + v * u32(kFlatVector * kElementBytes), x", ColPolicy(),
                    ");\n"
                    "    }\n");
    if (!one_tile && bulk) {
      absl::StrAppend(
          &out_,
          "    // The next tile's bulk copies may write where this tile's threads wrote zeros,\n"
          "    // and start once every thread is past its gather.\n"
          "    const u64 next = tile + gridDim.x;\n"
          "    if (next < kNumTiles) {\n"
          "      asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\");\n"
          "    }\n"
          "    __syncthreads();\n"
          "    if (threadIdx.x == kThreads - 1 && next < kNumTiles) fill(next * kBlockM / kOW);\n");
    } else if (!one_tile) {
      absl::StrAppend(&out_, "    __syncthreads();\n");
    }
    absl::StrAppend(&out_, "  }\n}\n");
  }

  // Staged form, phase gather (InputBox::phase_gather): CTA t writes output row t. The last
  // thread copies the row's kKH image rows, back to back in the image, into shared memory by
  // one bulk copy at the image's row pitch (after kLeadBytes) and brings later image rows
  // into L2. Thread t < kGatherThreads gathers vector p = t % kPeriod (its phase) of periods
  // g = t / kPeriod + kGroups i: the units of phase p lie at the same offsets from every
  // period's box column, so the thread works out those offsets once, packed 16 bits each in
  // registers. Units left of the image occur only in period 0, right of it only in the last
  // period, and on rows outside the image in every period: all are masked to zero, never
  // read from zeroed shared memory.
  void StagedPhaseKernel() {
    const LoweredIm2col::InputBox& box = l_.box;
    const int64_t e = l_.element_bytes;
    const bool wide = l_.m * l_.k * e >= (int64_t{1} << 32);
    const std::string offset = wide ? "u64" : "u32";
    Constant("u32", "kGroups", box.phase_groups);
    Constant("u32", "kGatherThreads", box.phase_groups * box.period_vectors);
    Constant("u32", "kPeriods", l_.ow / box.period_rows);
    Constant("u32", "kIters", l_.ow / box.period_rows / box.phase_groups);
    Constant("u32", "kPeriodBytes", box.period_rows * g_.sw * g_.c * e);
    Constant("u32", "kPeriodCols", box.period_rows * g_.sw * g_.c);
    Constant("u32", "kRowElems", g_.w * g_.c);
    Constant("u32", "kRowBytes", g_.w * g_.c * e);
    Constant("u32", "kLeadBytes", box.phase_lead_bytes);
    absl::StrAppend(
        &out_,
        "\n// One 2-byte unit from shared memory, by a 32-bit shared address (volatile: it stays\n"
        "// after the wait on the bulk copy).\n"
        "__device__ __forceinline__ u32 tt_unit(u32 addr) {\n"
        "  u32 v;\n"
        "  asm volatile(\"ld.shared.u16 %0, [%1];\" : \"=r\"(v) : \"r\"(addr));\n"
        "  return v;\n}\n");
    if (l_.col_policy) {
      absl::StrAppend(
          &out_,
          "// The column policy, not volatile: the compiler may make it again at each store\n"
          "// rather than hold it in two registers.\n"
          "__device__ __forceinline__ u64 tt_col_policy_nv() {\n"
          "  u64 policy;\n"
          "  asm(\"createpolicy.fractional.L2::",
          EvictionPolicyName(*l_.col_policy),
          ".b64 %0, 1.0;\" : \"=l\"(policy));\n"
          "  return policy;\n}\n");
    }
    absl::StrAppend(
        &out_,
        "// Kernel rows of output row `row` outside the image: bit kh.\n"
        "__device__ __forceinline__ u32 tt_zero_rows(u32 row) {\n"
        "  const int top = int(row % u32(kOH) * u32(kSH)) - int(kPH);  // image row of kernel row 0\n"
        "  const int above = min(max(-top, 0), int(kKH));\n"
        "  const int below = min(max(int(kH) - top, 0), int(kKH));  // first kernel row past the image\n"
        "  return ((1u << above) - 1u) | (((1u << kKH) - 1u) & ~((1u << below) - 1u));\n"
        "}\n");
    KernelSignatureBounds(box.resident_ctas, box.max_registers);
    absl::StrAppend(
        &out_,
        "  extern __shared__ __align__(16) u8 tt_smem[];\n"
        "  __shared__ __align__(8) u64 tt_bar;\n"
        "  const u32 row = blockIdx.x;  // one output row per CTA\n"
        "  if (threadIdx.x == kThreads - 1) {\n"
        "    tt_mbarrier_init(&tt_bar, 1);\n"
        "    tt_fence_barrier_init();\n",
        l_.img_policy ? "    const u64 img_policy = tt_make_img_policy();\n" : "",
        "    // The row's kernel rows inside the image are consecutive image rows: one copy.\n"
        "    const u32 zero = tt_zero_rows(row);\n"
        "    const u32 lo = __ffs(~zero) - 1, n = kKH - __popc(zero);\n"
        "    const int top = int(row % u32(kOH) * u32(kSH)) - int(kPH);\n"
        "    tt_mbarrier_expect_tx(&tt_bar, n * kRowBytes);\n"
        "    if (n != 0) {\n"
        "      tt_bulk_load(tt_smem + kLeadBytes + lo * kRowBytes,\n"
        "                   img + (u64(row / u32(kOH)) * kImgStrideN + u64(top + int(lo)) * kImgStrideH) *\n"
        "                             kElementBytes,\n"
        "                   n * kRowBytes, &tt_bar",
        ImgPolicy(),
        ");\n"
        "    }\n");
    if (box.prefetch_all) {
      absl::StrAppend(
          &out_,
          "    // The whole image into L2 at the start: CTA b of the first wave (%nsmid x\n"
          "    // kResidentCtas CTAs) prefetches the b-th of as many equal shares, in 16-byte units\n"
          "    // (a last partial unit is left to the copies).\n");
      WholeImagePrefetch();
    } else {
      absl::StrAppend(
          &out_,
          "    // L2 prefetch of the image rows of the output row this many rows ahead that the\n"
          "    // row before it did not need (all of them at an image's first row).\n"
          "    u32 sms;\n"
          "    asm(\"mov.u32 %0, %%nsmid;\" : \"=r\"(sms));\n"
          "    const u32 later = row + kPrefetchCtasPerSm * sms;\n"
          "    if (later < u32(kOutRows)) {\n"
          "      const u32 later_zero = tt_zero_rows(later);\n"
          "      const int later_top = int(later % u32(kOH) * u32(kSH)) - int(kPH);\n"
          "      u32 from = __ffs(~later_zero) - 1;\n"
          "      const u32 to = from + kKH - __popc(later_zero);\n"
          "      const u32 fresh = kKH > u32(kSH) ? kKH - u32(kSH) : 0u;\n"
          "      if (later % u32(kOH) != 0 && from < fresh) from = fresh;\n"
          "      if (to > from) {\n"
          "        tt_bulk_prefetch_l2(img + (u64(later / u32(kOH)) * kImgStrideN +\n"
          "                                   u64(later_top + int(from)) * kImgStrideH) * kElementBytes,\n"
          "                            (to - from) * kRowBytes",
          ImgPolicy(),
          ");\n"
          "      }\n"
          "    }\n");
    }
    absl::StrAppend(
        &out_,
        "  }\n"
        "  // Offsets of this thread's units past its period's box column, 16 bits each, low unit\n"
        "  // first; masks: bits 0-7 units left of the image in period 0, bits 8-15 right of it\n"
        "  // in the last period, bits 16-23 on kernel rows outside the image.\n"
        "  u32 o[kUnits / 2] = {};\n"
        "  u32 masks = 0, boxes = 0;\n"
        "  const u32 g = threadIdx.x / kPeriod, p = threadIdx.x % kPeriod;\n"
        "  if (threadIdx.x < kGatherThreads) {\n"
        "    boxes = tt_smem_addr(tt_smem) + g * kPeriodBytes;\n"
        "    const u32 zero = tt_zero_rows(row);\n"
        "    // Unit j is element p * kUnits + j of the period's run: walk (d, kh, kw, c) from the first.\n"
        "    const u32 f = p * kUnits, k = f % u32(kK);\n"
        "    u32 d = f / u32(kK), kh = k / u32(kKW * kC), kw = k / u32(kC) % u32(kKW), c = k % u32(kC);\n"
        "#pragma unroll\n"
        "    for (u32 j = 0; j < kUnits; ++j) {\n"
        "      const u32 x = (d * u32(kSW) + kw * u32(kDW)) * u32(kC) + c;  // column from iw = -kPW\n"
        "      o[j / 2] |= (kLeadBytes + (kh * kRowElems + x - kBoxStart) * u32(kElementBytes)) << (j % 2 * 16);\n"
        "      masks |= u32(x < kBoxStart) << j;\n"
        "      masks |= u32(x + (kPeriods - 1) * kPeriodCols >= kBoxStart + kRowElems) << (8 + j);\n"
        "      masks |= (zero >> kh & 1u) << (16 + j);\n",
        WindowStep("++c == u32(kC)"),
        "    }\n"
        "  }\n"
        "  __syncthreads();  // publishes the mbarrier's initialisation\n"
        "  if (threadIdx.x >= kGatherThreads) return;\n"
        "  const ", offset, " out = ", offset, "(row) * ", offset,
        "(kOW * kK * kElementBytes) + threadIdx.x * u32(kFlatVector * kElementBytes);\n"
        "  const u32 rows = masks >> 16 & 0xffu;\n"
        "  tt_mbarrier_wait(&tt_bar, 0);\n"
        "#pragma unroll\n"
        "  for (u32 i = 0; i < kIters; ++i) {\n"
        "    const u32 q = g + kGroups * i;\n"
        "    const u32 s = boxes + i * kGroups * kPeriodBytes;\n"
        "    tt_vec x;\n"
        "    u32* const w = reinterpret_cast<u32*>(&x);\n"
        "#pragma unroll\n"
        "    for (u32 j = 0; j < kUnits; j += 2) {\n"
        "      w[j / 2] = tt_unit(s + (o[j / 2] & 0xffffu)) | tt_unit(s + (o[j / 2] >> 16)) << 16;\n"
        "    }\n"
        "    const u32 bad = rows | ((q == 0 ? masks : 0u) | (q == kPeriods - 1 ? masks >> 8 : 0u)) & 0xffu;\n"
        "    if (bad != 0) {\n"
        "#pragma unroll\n"
        "      for (u32 j = 0; j < kUnits; j += 2) {\n"
        "        w[j / 2] &= ((bad >> j & 1u) ? 0u : 0xffffu) | ((bad >> (j + 1) & 1u) ? 0u : 0xffff0000u);\n"
        "      }\n"
        "    }\n"
        "    tt_st_global(col + (out + i * kGatherThreads * u32(kFlatVector * kElementBytes)), x",
        l_.col_policy ? ", tt_col_policy_nv()" : "",
        ");\n"
        "  }\n"
        "}\n");
  }

  // Flat form: tile t is rows [t * kBlockM, (t + 1) * kBlockM) of the column matrix, one
  // contiguous run of kBlockM * kK elements, staged in shared memory. Gather: work item
  // (tap, row) copies the C channels of one image pixel, and consecutive threads take
  // consecutive rows (neighbouring output pixels) of the same tap, so a warp's loads fall
  // on a few cache lines. Store: the run goes out in kFlatVector-element vectors.
  void FlatKernel() {
    bool tail = l_.m % l_.block_m != 0;
    // 32-bit row arithmetic when every row index fits.
    std::string row_type = l_.m + l_.block_m < (int64_t{1} << 31) ? "u32" : "u64";
    // Rows past M (in the last tile) read nothing; shared memory has room for them.
    std::vector<std::string> inside;
    if (tail) inside.push_back("m < kM");
    if (g_.ph > 0) inside.push_back("ih < kH");
    if (g_.pw > 0) inside.push_back("iw < kW");
    KernelSignature();
    absl::StrAppend(
        &out_,
        "  extern __shared__ __align__(16) u8 tt_smem[];\n"
        "  tt_elem* const rows = reinterpret_cast<tt_elem*>(tt_smem);\n"
        "  for (u64 tile = blockIdx.x; tile < kNumTiles; tile += gridDim.x) {\n"
        "    const u64 m0 = tile * kBlockM;\n"
        "#pragma unroll 4\n"
        "    for (u32 w = threadIdx.x; w < kBlockM * kTaps; w += kThreads) {\n"
        "      const u32 r = w % u32(kBlockM), tap = w / u32(kBlockM);\n"
        "      const ", row_type, " m = ", row_type, "(m0) + r;\n",
        "      const ", row_type, " n = m / ", row_type, "(kOHW);\n"
        "      const u32 oh = u32(m % ", row_type, "(kOHW) / ", row_type, "(kOW)), ow = u32(m % ",
        row_type, "(kOW));\n"
        "      // Above or left of the image the subtraction wraps: one compare per axis.\n"
        "      const u32 ih = oh * u32(kSH) + tap / u32(kKW) * u32(kDH) - u32(kPH);\n"
        "      const u32 iw = ow * u32(kSW) + tap % u32(kKW) * u32(kDW) - u32(kPW);\n"
        "      tt_elem* const to = rows + r * u32(kK) + tap * u32(kC);\n"
        "      // Padding reads the image's first element and stores zero: the loads carry no\n"
        "      // branch, so the compiler may issue them all before the first store.\n"
        "      const bool inside = ",
        inside.empty() ? "true" : absl::StrJoin(inside, " && "),
        ";\n"
        "      const u8* const from =\n"
        "          inside ? img + (u64(n) * kImgStrideN + u64(ih) * kImgStrideH +\n"
        "                          u64(iw) * kImgStrideW) * kElementBytes\n"
        "                 : img;\n"
        "      const u64 step = inside ? kImgStrideC * kElementBytes : 0;\n"
        "#pragma unroll 4\n"
        "      for (u32 c = 0; c < u32(kC); ++c) {\n"
        "        const tt_elem v = tt_ld_elem(from + c * step",
        ImgPolicy(),
        ");\n"
        "        to[c] = inside ? v : tt_elem(0);\n"
        "      }\n"
        "    }\n"
        "    __syncthreads();\n"
        "    u8* const out = col + m0 * kK * kElementBytes;\n");
    FlatStore();
    absl::StrAppend(&out_, "    __syncthreads();\n  }\n}\n");
  }

  // One thread drives the copy engine: per tile, one im2col load per channel box into
  // shared memory, then TMA stores of the boxes to the column matrix (the store map clips
  // the M and K tails).
  void TmaKernel() {
    absl::StrAppend(
        &out_,
        "\n// Channel boxes of the tile starting at column k0 that lie inside the matrix.\n"
        "__device__ __forceinline__ u32 tt_chunks_of(u64 k0) {\n"
        "  return k0 + kBlockK <= kK ? kChunks : u32((kK - k0) / kChannelBox);\n"
        "}\n");
    KernelSignature();
    std::string locate =
        "    const u64 tile = blockIdx.x + u64(t) * gridDim.x;\n"
        "    const u64 m0 = tile / kTilesK * kBlockM;\n"
        "    const u64 k0 = tile % kTilesK * kBlockK;\n"
        "    u8* stage = tt_smem + (t % kStages) * kStageBytes;\n"
        "    const u32 chunks = tt_chunks_of(k0);\n";
    absl::StrAppend(
        &out_,
        "  extern __shared__ __align__(128) u8 tt_smem[];\n"
        "  __shared__ __align__(8) u64 tt_bar[kStages];\n"
        "  // One thread drives the copy engine; the others have nothing to move.\n"
        "  if (threadIdx.x != 0) return;\n"
        "#pragma unroll\n"
        "  for (u32 s = 0; s < kStages; ++s) tt_mbarrier_init(&tt_bar[s], 1);\n"
        "  tt_fence_barrier_init();\n"
        "  const u32 my_tiles = u32((kNumTiles - blockIdx.x + gridDim.x - 1) / gridDim.x);\n"
        "  // Tile t of this CTA is the tile op at (nhw_step, c_step) = (tile / kTilesK,\n"
        "  // tile % kTilesK); its rows are kBlockM consecutive output pixels (n, oh, ow).\n"
        "  auto load = [&](u32 t) {\n",
        locate,
        "    // The first pixel's window corner is the filter base the TMA starts from; it walks\n"
        "    // the following pixels through the map's bounding box (lower = -pad, upper =\n"
        "    // pad - (kernel-1)*dilation) with the stride, into the next image after the last\n"
        "    // row. Positions outside the image, padding and pixels past the batch, read zero.\n"
        "    const u64 n = m0 / kOHW;\n"
        "    const int h = int(m0 % kOHW / kOW * kSH) - int(kPH);\n"
        "    const int w = int(m0 % kOW * kSW) - int(kPW);\n"
        "    u64* bar = &tt_bar[t % kStages];\n"
        "    tt_mbarrier_expect_tx(bar, chunks * kChunkBytes);\n"
        "    for (u32 j = 0; j < chunks; ++j) {\n"
        "      const u64 k = k0 + u64(j) * kChannelBox;\n"
        "      const u64 tap = k / kC;\n"
        "      tt_tma_load_im2col(stage + j * kChunkStride, &img_map, bar, int(k % kC), w, h, int(n),\n"
        "                         u16(tap % kKW * kDW), u16(tap / kKW * kDH)",
        ImgPolicy(),
        ");\n"
        "    }\n"
        "  };\n"
        "  auto store = [&](u32 t) {\n",
        locate,
        "    for (u32 j = 0; j < chunks; ++j) {\n"
        "#pragma unroll\n"
        "      for (u32 q = 0; q < kStorePieces; ++q) {\n"
        "        const u64 m = m0 + q * kStoreRows;\n"
        "        if (m < kM) {\n"
        "          tt_tma_store_tile(&col_map, stage + j * kChunkStride + q * kStorePieceBytes,\n"
        "                            int(k0 + j * kChannelBox), int(m)",
        ColPolicy(),
        ");\n"
        "        }\n"
        "      }\n"
        "    }\n"
        "    tt_bulk_commit();\n"
        "  };\n");
    if (l_.stages == 1) {
      absl::StrAppend(&out_,
                      "  for (u32 t = 0; t < my_tiles; ++t) {\n"
                      "    tt_bulk_wait_read<0>();  // The previous store has left shared memory.\n"
                      "    load(t);\n"
                      "    tt_mbarrier_wait(&tt_bar[0], t & 1);\n"
                      "    store(t);\n"
                      "  }\n");
    } else {
      absl::StrAppend(&out_,
                      "  for (u32 t = 0; t < kStages - 1 && t < my_tiles; ++t) load(t);\n"
                      "  for (u32 t = 0; t < my_tiles; ++t) {\n"
                      "    tt_mbarrier_wait(&tt_bar[t % kStages], (t / kStages) & 1);\n"
                      "    store(t);\n"
                      "    if (t + kStages - 1 < my_tiles) {\n"
                      "      tt_bulk_wait_read<1>();  // Store t - 1 has left the stage we refill.\n"
                      "      load(t + kStages - 1);\n"
                      "    }\n"
                      "  }\n");
    }
    absl::StrAppend(&out_, "  tt_bulk_wait_all();\n}\n");
  }

  const LoweredIm2col& l_;
  const Im2colGeometry& g_;
  std::string out_;
};

}  // namespace

CudaSource EmitIm2colKernel(const LoweredIm2col& lowered) {
  return CudaSource{lowered.kernel_name, Im2colEmitter(lowered).Emit()};
}

}  // namespace tiletune

#include "compiler/ops/col2im/col2im_emitter.h"

#include <cstdint>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/codegen/ptx_snippets.h"
#include "compiler/lower/lowering_rules.h"

namespace tiletune {
namespace {

class Col2imEmitter {
 public:
  explicit Col2imEmitter(const LoweredCol2im& l) : l_(l), g_(l.geometry) {}

  std::string Emit() {
    Header();
    absl::StrAppend(&out_, PreludeSnippet());
    if (l_.col_policy) absl::StrAppend(&out_, NamedPolicySnippet("col", *l_.col_policy));
    if (l_.img_policy) absl::StrAppend(&out_, NamedPolicySnippet("img", *l_.img_policy));
    const int vector_bytes = l_.vector_elems * l_.element_bytes;
    if (Planes()) {
      absl::StrAppend(&out_, VectorAccessSnippet(vector_bytes, /*load_hint=*/false,
                                                 l_.img_policy.has_value(), "tt"));
      if (Patches()) {
        // The stage's loads: vectors of the column matrix into shared memory.
        absl::StrAppend(&out_, VectorAccessSnippet(static_cast<int>(l_.patch_load_elems *
                                                                    l_.element_bytes),
                                                   l_.col_policy.has_value(),
                                                   /*store_hint=*/false, "tp"));
      }
      Elements();
      Constants();
      if (Patches()) {
        PatchesKernel();
      } else {
        PlanesKernel();
      }
      return out_;
    }
    // Image stores (and the direct form's column loads) take one vector along C.
    absl::StrAppend(&out_, VectorAccessSnippet(vector_bytes, !Staged() && l_.col_policy,
                                               l_.img_policy.has_value(), "tt"));
    if (Staged()) {
      absl::StrAppend(&out_, VectorAccessSnippet(16, l_.col_policy.has_value(),
                                                 /*store_hint=*/false, "tt_run"));
    }
    if (Tma()) {
      absl::StrAppend(&out_, MbarrierSnippet(), BulkSnippet(l_.col_policy.has_value()));
    } else if (Swept()) {
      absl::StrAppend(&out_, CpAsyncSnippet(16, l_.col_policy.has_value()));
    }
    Elements();
    Constants();
    Taps();
    if (Staged() || Swept()) StageHelpers();
    if (Swept()) {
      SweptKernel();
    } else {
      Kernel();
    }
    return out_;
  }

 private:
  bool Staged() const { return l_.path == Col2imPath::kSimtStaged; }
  bool Planes() const {
    return l_.path == Col2imPath::kSimtPlanes || l_.path == Col2imPath::kSimtPlanesStaged ||
           Patches();
  }
  bool Patches() const { return l_.path == Col2imPath::kSimtPatches; }
  bool PlanesStaged() const { return l_.path == Col2imPath::kSimtPlanesStaged; }
  bool Swept() const { return Col2imSwept(l_.path); }
  bool Tma() const { return l_.path == Col2imPath::kTmaSwept; }
  std::string ColPolicy() const { return l_.col_policy ? ", col_policy" : ""; }
  std::string ImgPolicy() const { return l_.img_policy ? ", img_policy" : ""; }
  int64_t ChannelsPerThread() const { return Col2imChannelsPerThread(l_); }

  void Header() {
    absl::StrAppend(&out_, "// tiletune col2im kernel (generated; do not edit).\n//   ",
                    l_.path_name, " (", l_.form_name, " form), ", DataTypeName(l_.dtype), ", ",
                    Im2colGeometryToString(g_), ", image strides [",
                    absl::StrJoin(l_.img_strides, ", "), "]\n//   output tile ", l_.tile_h, "x",
                    l_.tile_w, ", ", l_.launch.threads, " threads, vector ", l_.vector_elems,
                    " x ", l_.element_bytes, " B, ", ChannelsPerThread(),
                    " channel(s) per thread");
    if (Staged()) {
      absl::StrAppend(&out_, ", stage ", l_.stage.rows, " x ", l_.stage.cols, " runs of ",
                      l_.stage.run_elems, " elements");
    }
    if (Swept()) {
      absl::StrAppend(&out_, ", ", l_.sweep.buffers, " buffers of ", l_.sweep.chunks,
                      " chunks (one window row, ", l_.sweep.cols, " window columns) filled by ",
                      Tma() ? "bulk copies" : "cp.async");
    }
    absl::StrAppend(&out_, ", L2 policy columns ",
                    l_.col_policy ? EvictionPolicyName(*l_.col_policy) : std::string("none"),
                    ", image ",
                    l_.img_policy ? EvictionPolicyName(*l_.img_policy) : std::string("none"),
                    Planes() ? "\n//   channel_rows columns; taps summed in f32, kh descending then kw "
                               "(F.fold's order); one rounding; NaN canonical\n"
                             : "\n//   taps summed in f32, kh ascending then kw; one rounding; NaN "
                               "canonical\n");
  }

  // The element type, its widening to f32 and the rounding back.
  void Elements() {
    switch (l_.dtype) {
      case DataType::kF32:
        absl::StrAppend(
            &out_,
            "\n// f32 elements.\ntypedef u32 tt_elem;\n"
            "__device__ __forceinline__ float tt_widen(tt_elem b) { return __uint_as_float(b); }\n"
            "__device__ __forceinline__ tt_elem tt_round(float f) {\n"
            "  return f != f ? 0x7fffffffu : __float_as_uint(f);\n}\n");
        break;
      case DataType::kF16:
        absl::StrAppend(
            &out_,
            "\n// f16 elements: exact widening, round to nearest even, canonical NaN.\n"
            "typedef u16 tt_elem;\n"
            "__device__ __forceinline__ float tt_widen(tt_elem b) {\n"
            "  float f;\n  asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(b));\n  return f;\n}\n"
            "__device__ __forceinline__ tt_elem tt_round(float f) {\n"
            "  if (f != f) return 0x7fff;\n"
            "  tt_elem b;\n  asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(b) : \"f\"(f));\n  return b;\n}\n");
        break;
      default:
        absl::StrAppend(
            &out_,
            "\n// bf16 elements: exact widening, round to nearest even, canonical NaN.\n"
            "typedef u16 tt_elem;\n"
            "__device__ __forceinline__ float tt_widen(tt_elem b) {\n"
            "  return __uint_as_float(u32(b) << 16);\n}\n"
            "__device__ __forceinline__ tt_elem tt_round(float f) {\n"
            "  const u32 x = __float_as_uint(f);\n"
            "  if ((x & 0x7fffffffu) > 0x7f800000u) return 0x7fff;\n"
            "  return tt_elem((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);\n}\n");
        break;
    }
    absl::StrAppend(&out_,
                    "union tt_lanes {\n  tt_vec v;\n  tt_elem e[sizeof(tt_vec) / sizeof(tt_elem)];\n};\n");
  }

  void Constant(const std::string& type, const std::string& name, int64_t value) {
    absl::StrAppend(&out_, ConstantDefinition(type, name, value));
  }

  void Constants() {
    absl::StrAppend(&out_,
                    "\n// Problem constants; enumerators fold into the code and take no storage.\n");
    if (Patches()) {
      PatchesConstants();
      return;
    }
    if (Planes()) {
      PlanesConstants();
      return;
    }
    const int64_t per_thread = ChannelsPerThread();
    Constant("u32", "kThreads", l_.launch.threads);
    Constant("u64", "kNumTiles", l_.num_tiles);
    Constant("u32", "kTilesH", l_.tiles_h);
    Constant("u32", "kTilesW", l_.tiles_w);
    Constant("u32", "kTileH", l_.tile_h);
    Constant("u32", "kTileW", l_.tile_w);
    Constant("u64", "kElementBytes", l_.element_bytes);
    Constant("u32", "kH", g_.h);
    Constant("u32", "kW", g_.w);
    Constant("u32", "kC", g_.c);
    Constant("u32", "kKH", g_.kh);
    Constant("u32", "kKW", g_.kw);
    Constant("u32", "kSH", g_.sh);
    Constant("u32", "kSW", g_.sw);
    Constant("u32", "kDH", g_.dh);
    Constant("u32", "kDW", g_.dw);
    Constant("u32", "kPH", g_.ph);
    Constant("u32", "kPW", g_.pw);
    // The taps kh of one output row are kh0, kh0 + kStepH, ...: kh*DH = h + PH (mod SH).
    Constant("u32", "kStepH", g_.sh / std::gcd(g_.sh, g_.dh));
    Constant("u32", "kStepW", g_.sw / std::gcd(g_.sw, g_.dw));
    // The window-column move per tap step along w (exact: a step keeps the class).
    const int64_t col_step = g_.sw / std::gcd(g_.sw, g_.dw) * g_.dw / g_.sw;
    Constant("u32", "kOH", l_.oh);
    Constant("u32", "kOW", l_.ow);
    Constant("u64", "kK", l_.k);
    const char* names[] = {"N", "H", "W", "C"};
    for (int d = 0; d < 4; ++d) {
      Constant("u64", absl::StrCat("kImgStride", names[d]), l_.img_strides[d]);
    }
    Constant("u32", "kVector", l_.vector_elems);
    Constant("u32", "kPerThread", per_thread);
    Constant("u32", "kGroups", g_.c / per_thread);
    // A tile row's columns are walked one residue class of SW at a time (w0 + r, w0 + r + SW,
    // ...), so neighbouring threads share their tap pattern: kResW columns per class.
    const int64_t res_w = CeilDiv(l_.tile_w, g_.sw);
    Constant("u32", "kResW", res_w);
    Constant("u32", "kRowItems", g_.sw * res_w);
    const int64_t step_w = g_.sw / std::gcd(g_.sw, g_.dw);
    if (Staged()) {
      absl::StrAppend(&out_, "constexpr int kStageTapStep = ",
                      step_w * g_.c * l_.element_bytes - col_step * l_.stage.PitchBytes(),
                      ";  // bytes from one tap of a class to the next in the stage\n",
                      "enum : u32 { kShiftStep = ",
                      (16 - (col_step * l_.k * l_.element_bytes) % 16) % 16, "u };\n");
    } else {
      absl::StrAppend(&out_, "constexpr long long kColTapStep = ",
                      (step_w * g_.c - col_step * l_.k) * l_.element_bytes,
                      ";  // bytes from one tap of a class to the next in the matrix\n");
    }
    const int64_t tile_items = l_.tile_h * g_.sw * res_w * (g_.c / per_thread);
    Constant("u32", "kTileItems", tile_items);
    if (Swept()) {
      const LoweredCol2im::Sweep& s = l_.sweep;
      Constant("u32", "kRowGroups", s.row_groups);
      Constant("u32", "kGroupThreads", s.group_threads);
      Constant("u32", "kGroupRows", s.group_rows);
      Constant("u32", "kPerRow", s.per_row);
      // Taps along w of one pixel at most: one class kw0, kw0 + kStepW, ... below kKW.
      Constant("u32", "kMaxTapsW", CeilDiv(g_.kw, g_.sw / std::gcd(g_.sw, g_.dw)));
      Constant("u32", "kBuffers", s.buffers);
      Constant("u32", "kBufBytes", s.BufferBytes());
      // A window row's first byte lies at its matrix offset mod kBufAlign in its buffer.
      Constant("u32", "kBufAlign", Tma() ? 128 : 16);
      Constant("u32", "kTapElems", g_.kw * g_.c);
      Constant("u32", "kRowBytes", l_.k * l_.element_bytes);
      Constant("u64", "kWindowRowBytes", l_.ow * l_.k * l_.element_bytes);
      Constant("u64", "kColBytes", l_.m * l_.k * l_.element_bytes);
    }
    if (Staged()) {
      const LoweredCol2im::Stage& s = l_.stage;
      Constant("u32", "kStageRows", s.rows);
      Constant("u32", "kStageCols", s.cols);
      Constant("u32", "kChunks", s.chunks);
      Constant("u32", "kPitchBytes", s.PitchBytes());
      Constant("u32", "kStageChunks", s.rows * s.cols * s.chunks);
      Constant("u32", "kUnroll", 4);
      Constant("u32", "kTapElems", g_.kw * g_.c);
      Constant("u64", "kColBytes", l_.m * l_.k * l_.element_bytes);
    }
  }

  // The most window positions along H (W) that reach one pixel: ceil(effective kernel /
  // stride).
  int64_t SpanH() const { return CeilDiv(g_.EffectiveKh(), g_.sh); }
  int64_t SpanW() const { return CeilDiv(g_.EffectiveKw(), g_.sw); }
  // How tt_sum visits a pixel's window positions: unrolled over the span, addressing each
  // by fixed steps from the first (undilated windows) or by its tap; or a bounded loop.
  enum class SumForm { kSteps, kUnrolled, kLoop };
  SumForm PlanesSum() const {
    if (SpanH() * SpanW() > kCol2imMaxUnrolledSpan) return SumForm::kLoop;
    return g_.dh == 1 && g_.dw == 1 ? SumForm::kSteps : SumForm::kUnrolled;
  }

  void PlanesConstants() {
    Constant("u32", "kThreads", l_.launch.threads);
    Constant("u64", "kNumTiles", l_.num_tiles);
    Constant("u32", "kTilesPerPlane", l_.tiles_h * l_.tiles_w);
    Constant("u32", "kTilesW", l_.tiles_w);
    Constant("u64", "kTileH", l_.tile_h);
    Constant("u32", "kTileW", l_.tile_w);
    Constant("u64", "kElementBytes", l_.element_bytes);
    Constant("u32", "kH", g_.h);
    Constant("u32", "kW", g_.w);
    Constant("u64", "kC", g_.c);
    Constant("u64", "kRows", g_.n * g_.c * g_.h);
    Constant("u32", "kKW", g_.kw);
    // Window arithmetic is signed (positions left of and above the image are negative).
    for (auto [name, value] : std::vector<std::pair<const char*, int64_t>>{
             {"kSH", g_.sh}, {"kSW", g_.sw}, {"kDH", g_.dh}, {"kDW", g_.dw}, {"kPH", g_.ph},
             {"kPW", g_.pw}, {"kEKH", g_.EffectiveKh()}, {"kEKW", g_.EffectiveKw()},
             {"kOH", l_.oh}, {"kOW", l_.ow}, {"kSpanH", SpanH()}, {"kSpanW", SpanW()}}) {
      absl::StrAppend(&out_, "constexpr int ", name, " = ", value, ";\n");
    }
    if (PlanesSum() == SumForm::kSteps) {
      // Bytes from window position (oh, ow) to (oh + 1, ow) and to (oh, ow + 1), whose taps are
      // SH rows and SW columns of the window earlier.
      absl::StrAppend(&out_, "constexpr long long kStepI = ",
                      (l_.ow - g_.sh * g_.kw * l_.k) * l_.element_bytes, ";\n",
                      "constexpr long long kStepJ = ", (1 - g_.sw * l_.k) * l_.element_bytes,
                      ";\n");
    }
    Constant("u64", "kL", l_.k);
    Constant("u64", "kTaps", g_.kh * g_.kw);
    const char* names[] = {"N", "H", "W", "C"};
    for (int d = 0; d < 4; ++d) {
      Constant("u64", absl::StrCat("kImgStride", names[d]), l_.img_strides[d]);
    }
    Constant("u32", "kVector", l_.vector_elems);
    Constant("u32", "kRowVectors", CeilDiv(l_.tile_w, l_.vector_elems));
    Constant("u32", "kItems", l_.tile_h * CeilDiv(l_.tile_w, l_.vector_elems));
    if (PlanesStaged()) {
      Constant("u32", "kStageL", l_.stage_rows * l_.ow);
      Constant("u32", "kStageBytes", PlanesStageBytes(l_));
    }
  }

  void PatchesConstants() {
    Constant("u32", "kThreads", l_.launch.threads);
    Constant("u64", "kNumTiles", l_.num_tiles);
    Constant("u32", "kPlaneTiles", l_.patch_row_tiles * l_.patch_oh_tiles);
    Constant("u32", "kOhTiles", l_.patch_oh_tiles);
    Constant("u32", "kPatchRows", l_.patch_rows);
    Constant("u32", "kPatchOh", l_.patch_oh);
    Constant("u32", "kKH", g_.kh);
    Constant("u32", "kKW", g_.kw);
    Constant("u32", "kOH", l_.oh);
    Constant("u32", "kOW", l_.ow);
    Constant("u64", "kL", l_.k);
    Constant("u64", "kW", g_.w);
    // Shared-memory elements from one matrix row's run to the next.
    Constant("u32", "kPitch", l_.patch_oh * l_.ow);
    Constant("u32", "kLoad", l_.patch_load_elems);
    Constant("u32", "kVector", l_.vector_elems);
    Constant("u32", "kRowVectors", g_.w / l_.vector_elems);
    Constant("u64", "kElementBytes", l_.element_bytes);
  }

  // The patches form: tile t is kernel rows [kh0, kh0 + kPatchRows) x window rows
  // [oh0, oh0 + kPatchOh) of plane t / kPlaneTiles. The CTA copies the matrix rows of those
  // taps (tap kh * KW + kw; the run of the tile's window rows each, pitch kPitch) into shared
  // memory, neighbouring threads loading neighbouring vectors, then stores image rows
  // oh * KH + kh whole (kh fastest, so neighbouring rows of the image), pixel w being tap
  // column w % KW of window column w / KW.
  void PatchesKernel() {
    const bool hint = l_.col_policy.has_value();
    const std::string policy = hint ? ", col_policy" : "";
    absl::StrAppend(&out_, "\nextern \"C\" __global__ void __launch_bounds__(kThreads) ",
                    l_.kernel_name, "(const u8* __restrict__ col, u8* __restrict__ img) {\n");
    if (l_.col_policy) absl::StrAppend(&out_, "  const u64 col_policy = tt_make_col_policy();\n");
    if (l_.img_policy) absl::StrAppend(&out_, "  const u64 img_policy = tt_make_img_policy();\n");
    absl::StrAppend(
        &out_,
        "  extern __shared__ __align__(16) u8 tt_smem[];\n"
        "  const tt_elem* const stage = reinterpret_cast<const tt_elem*>(tt_smem);\n"
        "  for (u64 tile = blockIdx.x; tile < kNumTiles; tile += gridDim.x) {\n"
        "    const u64 plane = tile / kPlaneTiles;\n"
        "    const u32 t = u32(tile % kPlaneTiles);\n"
        "    const u32 kh0 = t / kOhTiles * kPatchRows, oh0 = t % kOhTiles * kPatchOh;\n"
        "    const u32 rows = min(kPatchRows, kKH - kh0), ohs = min(kPatchOh, kOH - oh0);\n"
        "    const u8* const from = col + ((plane * kKH + kh0) * kKW * kL + u64(oh0) * kOW) * "
        "kElementBytes;\n"
        "    __syncthreads();  // the previous tile's stores are done with the stage\n",
        l_.patch_oh == l_.oh
            ? absl::StrCat(
                  "    // Every window row: the taps' matrix rows are one span.\n"
                  "    const u32 loads = rows * kKW * u32(kL) / kLoad;\n"
                  "    for (u32 i = threadIdx.x; i < loads; i += kThreads) {\n"
                  "      const u64 at = u64(i) * kLoad * kElementBytes;\n"
                  "      tp_st_shared(tt_smem + at, tp_ld_global(from + at",
                  policy,
                  "));\n"
                  "    }\n")
            : absl::StrCat(
                  "    // A run of ohs window rows from each of the taps' matrix rows.\n"
                  "    const u32 per_run = ohs * kOW / kLoad, loads = rows * kKW * per_run;\n"
                  "    for (u32 i = threadIdx.x; i < loads; i += kThreads) {\n"
                  "      const u32 r = i / per_run, j = i % per_run * kLoad;\n"
                  "      tp_st_shared(tt_smem + (u64(r) * kPitch + j) * kElementBytes,\n"
                  "                   tp_ld_global(from + (u64(r) * kL + j) * kElementBytes",
                  policy,
                  "));\n"
                  "    }\n"),
        "    __syncthreads();\n"
        "    u8* const to = img + plane * kKH * kOH * kW * kElementBytes;\n"
        "    const u32 items = rows * ohs * kRowVectors;\n"
        "    for (u32 i = threadIdx.x; i < items; i += kThreads) {\n"
        "      const u32 row = i / kRowVectors, x = i % kRowVectors * kVector;\n"
        "      const u32 q = row % rows, o = row / rows;\n"
        "      const tt_elem* const src = stage + q * kKW * kPitch + o * kOW;\n"
        "      tt_lanes out;\n"
        "#pragma unroll\n"
        "      for (u32 e = 0; e < kVector; ++e) {\n"
        "        // One element's sum, as the other forms start theirs: 0 + x, rounded back.\n"
        "        const u32 w = x + e;\n"
        "        out.e[e] = tt_round(0.0f + tt_widen(src[w % kKW * kPitch + w / kKW]));\n"
        "      }\n"
        "      tt_st_global(to + ((u64(oh0 + o) * kKH + kh0 + q) * kW + x) * kElementBytes, out.v",
        ImgPolicy(),
        ");\n"
        "    }\n"
        "  }\n"
        "}\n");
  }

  // tt_sum's body after its window bounds: how it visits a pixel's window positions.
  std::string PlanesSumBody(SumForm form, bool hint) const {
    switch (form) {
      case SumForm::kSteps:
        // Undilated: position (oh0 + i, ow0 + j) is tap (kh0 - i*SH, kw0 - j*SW), so its
        // element lies a fixed i*kStepI + j*kStepJ bytes from the first position's, and a
        // pixel's loads cost an add and a select each (the unrolled loop's constants fold).
        return absl::StrCat(
        "  const int nh = oh1 - oh0, nw = ow1 - ow0;\n"
        "  if (nh <= 0 || nw <= 0) return acc;  // no window reaches the pixel\n"
        "  const u8* const base = from + (((long long)(h_im - oh0 * kSH) * kKW + (w_im - ow0 * kSW)) * "
        "(long long)kL + (long long)oh0 * kOW + ow0) * (long long)kElementBytes;\n"
        "  tt_elem v[kSpanH * kSpanW];\n"
        "#pragma unroll\n"
        "  for (int i = 0; i < kSpanH; ++i) {\n"
        "#pragma unroll\n"
        "    for (int j = 0; j < kSpanW; ++j) {\n"
        "      v[i * kSpanW + j] = tt_ld_col(i < nh && j < nw ? base + (i * kStepI + j * kStepJ) : from",
        hint ? ", col_policy" : "",
        ");\n"
        "    }\n"
        "  }\n"
        "#pragma unroll\n"
        "  for (int i = 0; i < kSpanH; ++i) {\n"
        "#pragma unroll\n"
        "    for (int j = 0; j < kSpanW; ++j) {\n"
        "      if (i < nh && j < nw) acc += tt_widen(v[i * kSpanW + j]);\n"
        "    }\n"
        "  }\n");
      case SumForm::kUnrolled:
        // At most kSpanH x kSpanW window positions reach a pixel: every one is loaded
        // before any is added, so the pixel's loads are in flight together; the sum then
        // takes the positions that reach it, in the same order as the loop below. A
        // position that does not reach it loads from its tap and position clamped into
        // range (taps of positions from oh0 on are below the window's extent), so every
        // address is one of the plane's elements and none is chosen by a select.
        return absl::StrCat(
        "  tt_elem v[kSpanH * kSpanW];\n"
        "  bool ok[kSpanH * kSpanW];\n"
        "#pragma unroll\n"
        "  for (int i = 0; i < kSpanH; ++i) {\n"
        "    const int oh = oh0 + i, hk = h_im - oh * kSH;\n"
        "    const bool row_ok = oh < oh1 && hk % kDH == 0;\n"
        "    const u64 row = u64(max(hk, 0) / kDH) * kKW * kL + u64(min(oh, kOH - 1)) * kOW;\n"
        "#pragma unroll\n"
        "    for (int j = 0; j < kSpanW; ++j) {\n"
        "      const int ow = ow0 + j, wk = w_im - ow * kSW;\n"
        "      ok[i * kSpanW + j] = row_ok && ow < ow1 && wk % kDW == 0;\n"
        "      v[i * kSpanW + j] = tt_ld_col(from + (row + u64(max(wk, 0) / kDW) * kL + "
        "u64(min(ow, kOW - 1))) * kElementBytes",
        hint ? ", col_policy" : "",
        ");\n"
        "    }\n"
        "  }\n"
        "#pragma unroll\n"
        "  for (int t = 0; t < kSpanH * kSpanW; ++t) {\n"
        "    if (ok[t]) acc += tt_widen(v[t]);\n"
        "  }\n");
      case SumForm::kLoop:
        break;
    }
    return absl::StrCat(
        "  for (int oh = oh0; oh < oh1; ++oh) {\n"
        "    const int hk = h_im - oh * kSH;\n"
        "    if (hk % kDH != 0) continue;\n"
        "    const u8* const row = from + (u64(hk / kDH) * kKW * kL + u64(oh) * kOW) * kElementBytes;\n"
        "    for (int ow = ow0; ow < ow1; ++ow) {\n"
        "      const int wk = w_im - ow * kSW;\n"
        "      if (wk % kDW != 0) continue;\n"
        "      acc += tt_widen(tt_ld_col(row + (u64(wk / kDW) * kL + u64(ow)) * kElementBytes",
        hint ? ", col_policy" : "",
        "));\n"
        "    }\n"
        "  }\n");
  }

  // The start of both planes forms' tt_sum: the window positions [oh0, oh1) x [ow0, ow1)
  // reaching pixel (h, w), and the f32 sum.
  static std::string WindowBounds() {
    return "  const int h_im = h + kPH, w_im = w + kPW;\n"
           "  const int oh0 = h_im < kEKH ? 0 : (h_im - kEKH) / kSH + 1;\n"
           "  const int oh1 = min(h_im / kSH + 1, kOH);\n"
           "  const int ow0 = w_im < kEKW ? 0 : (w_im - kEKW) / kSW + 1;\n"
           "  const int ow1 = min(w_im / kSW + 1, kOW);\n"
           "  float acc = 0.0f;\n";
  }

  // tt_ld_col: one column-matrix element by a non-coherent load (the planes forms).
  std::string ColElementLoad() const {
    const bool hint = l_.col_policy.has_value();
    return absl::StrCat(
        "\n// One column-matrix element by a non-coherent load.\n"
        "__device__ __forceinline__ tt_elem tt_ld_col(const u8* p", hint ? ", u64 policy" : "",
        ") {\n  tt_elem v;\n  asm(\"ld.global.nc", hint ? ".L2::cache_hint" : "",
        l_.element_bytes == 4 ? ".u32 %0, [%1]" : ".u16 %0, [%1]", hint ? ", %2" : "",
        ";\" : \"=", l_.element_bytes == 4 ? "r" : "h", "\"(v) : \"l\"(p)",
        hint ? ", \"l\"(policy)" : "", ");\n  return v;\n}\n");
  }

  // planes_staged: per tile (tile_h whole rows of one plane), each tap's run of the window
  // rows reaching it into shared memory, neighbouring threads loading neighbouring
  // elements; then every pixel's sum from there, oh then ow ascending, as tt_sum orders it,
  // neighbouring lanes summing neighbouring pixels; vectors go out through a warp's slice.
  void StagedPlanesKernel() {
    const bool hint = l_.col_policy.has_value();
    const std::string unroll =
        SpanH() * SpanW() <= kCol2imMaxUnrolledSpan ? "#pragma unroll\n" : "";
    absl::StrAppend(
        &out_,
        ColElementLoad(),
        "\n// Pixel (h, w)'s sum from the stage, whose runs start at window row oh = pos0 / OW.\n"
        "__device__ __forceinline__ float tt_sum(const tt_elem* stage, int pos0, int h, int w) {\n",
        WindowBounds(),
        unroll,
        "  for (int i = 0; i < kSpanH; ++i) {\n"
        "    const int oh = oh0 + i, hk = h_im - oh * kSH;\n"
        "    if (oh >= oh1 || hk % kDH != 0) continue;\n"
        "    const tt_elem* const row = stage + (hk / kDH) * kKW * int(kStageL) + oh * kOW - pos0;\n",
        unroll,
        "    for (int j = 0; j < kSpanW; ++j) {\n"
        "      const int ow = ow0 + j, wk = w_im - ow * kSW;\n"
        "      if (ow >= ow1 || wk % kDW != 0) continue;\n"
        "      acc += tt_widen(row[(wk / kDW) * int(kStageL) + ow]);\n"
        "    }\n"
        "  }\n"
        "  return acc;\n"
        "}\n");
    absl::StrAppend(&out_, "\nextern \"C\" __global__ void __launch_bounds__(kThreads) ",
                    l_.kernel_name, "(const u8* __restrict__ col, u8* __restrict__ img) {\n");
    if (l_.col_policy) absl::StrAppend(&out_, "  const u64 col_policy = tt_make_col_policy();\n");
    if (l_.img_policy) absl::StrAppend(&out_, "  const u64 img_policy = tt_make_img_policy();\n");
    absl::StrAppend(
        &out_,
        "  extern __shared__ __align__(16) u8 tt_smem[];\n"
        "  tt_elem* const stage = reinterpret_cast<tt_elem*>(tt_smem);\n"
        "  // The warp's 32 vectors, summed pixel by pixel before each lane stores its own.\n"
        "  tt_elem* const slice = reinterpret_cast<tt_elem*>(tt_smem + kStageBytes) + "
        "threadIdx.x / 32 * 32 * kVector;\n"
        "  const u32 lane = threadIdx.x % 32;\n"
        "  for (u64 tile = blockIdx.x; tile < kNumTiles; tile += gridDim.x) {\n"
        "    const u64 plane = tile / kTilesPerPlane;\n"
        "    const int h0 = int(tile % kTilesPerPlane * kTileH);\n"
        "    const int h1 = min(h0 + int(kTileH), int(kH));\n"
        "    // The window rows reaching rows [h0, h1): [lo, hi).\n"
        "    const int lo = h0 + kPH < kEKH ? 0 : (h0 + kPH - kEKH) / kSH + 1;\n"
        "    const int hi = min((h1 - 1 + kPH) / kSH + 1, kOH);\n"
        "    const int pos0 = lo * kOW;\n"
        "    const u32 run = hi > lo ? u32(hi - lo) * u32(kOW) : 0u;\n"
        "    const u64 n = plane / kC, c = plane % kC;\n"
        "    const u8* const from = col + (plane * kTaps * kL + u64(pos0)) * kElementBytes;\n"
        "    u8* const to = img + (n * kImgStrideN + c * kImgStrideC) * kElementBytes;\n"
        "    __syncthreads();  // the previous tile's sums are done with the stage\n"
        "    for (u32 i = threadIdx.x; i < u32(kTaps) * kStageL; i += kThreads) {\n"
        "      const u32 tap = i / kStageL, q = i % kStageL;\n"
        "      // Past the run the load reads the matrix's first element (tt_ld_col may be\n"
        "      // hoisted above the test); nothing is staged.\n"
        "      const tt_elem v =\n"
        "          tt_ld_col(q < run ? from + (u64(tap) * kL + q) * kElementBytes : col",
        hint ? ", col_policy" : "",
        ");\n"
        "      if (q < run) stage[i] = v;\n"
        "    }\n"
        "    __syncthreads();\n"
        "    // A warp takes 32 vectors at a time. Lane l sums the warp's pixels l, l + 32, ...\n"
        "    // (neighbouring lanes read neighbouring stage elements: no bank conflicts), then\n"
        "    // takes its own vector back from the warp's slice of shared memory and stores it.\n"
        "    for (u32 i0 = threadIdx.x / 32 * 32; i0 < kItems; i0 += kThreads) {\n"
        "#pragma unroll\n"
        "      for (u32 e = 0; e < kVector; ++e) {\n"
        "        const u32 f = e * 32 + lane, i = i0 + f / kVector;\n"
        "        const int h = h0 + int(i / kRowVectors);\n"
        "        const int w = int(i % kRowVectors * kVector + f % kVector);\n"
        "        slice[f] = i < kItems && h < h1 ? tt_round(tt_sum(stage, pos0, h, w)) : tt_elem(0);\n"
        "      }\n"
        "      __syncwarp();\n"
        "      const u32 i = i0 + lane;\n"
        "      const int h = h0 + int(i / kRowVectors), w = int(i % kRowVectors * kVector);\n"
        "      if (i < kItems && h < h1) {\n"
        "        tt_st_global(to + (u64(h) * kImgStrideH + u64(w) * kImgStrideW) * kElementBytes,\n"
        "                     *reinterpret_cast<const tt_vec*>(slice + lane * kVector)",
        ImgPolicy(),
        ");\n"
        "      }\n"
        "      __syncwarp();  // the slice is read before the next vectors are summed into it\n"
        "    }\n"
        "  }\n"
        "}\n");
  }

  // The planes form. tt_sum: pixel (h, w) of the plane whose column-matrix rows start at
  // `from`, summed over the window positions reaching it, oh ascending then ow ascending
  // (taps kh descending, then kw descending: F.fold's order), in f32. With a dense NCHW
  // image and whole rows, tile t is rows [t*kTileH, (t+1)*kTileH) of the image as the
  // matrix [N*C*H, W], one run that thread j stores vectors j, j + kThreads, ... of,
  // stepping (plane, h, w) along each; otherwise tile t is tile t % kTilesPerPlane of plane
  // t / kTilesPerPlane = n * C + c, vectors along a row.
  void PlanesKernel() {
    if (PlanesStaged()) return StagedPlanesKernel();
    const bool hint = l_.col_policy.has_value();
    const SumForm form = PlanesSum();
    absl::StrAppend(
        &out_,
        ColElementLoad(),
        "\n__device__ __forceinline__ float tt_sum(const u8* from, int h, int w",
        hint ? ", u64 col_policy" : "",
        ") {\n",
        WindowBounds(),
        PlanesSumBody(form, hint),
        "  return acc;\n"
        "}\n");
    absl::StrAppend(&out_, "\nextern \"C\" __global__ void __launch_bounds__(kThreads) ",
                    l_.kernel_name, "(const u8* __restrict__ col, u8* __restrict__ img) {\n");
    if (l_.col_policy) absl::StrAppend(&out_, "  const u64 col_policy = tt_make_col_policy();\n");
    if (l_.img_policy) absl::StrAppend(&out_, "  const u64 img_policy = tt_make_img_policy();\n");
    const std::string policy = hint ? ", col_policy" : "";
    if (l_.flat_rows) {
      absl::StrAppend(
          &out_,
          "  for (u64 tile = blockIdx.x; tile < kNumTiles; tile += gridDim.x) {\n"
          "    const u64 r0 = tile * kTileH;\n"
          "    const u32 run = u32((r0 + kTileH <= kRows ? kTileH : kRows - r0) * kW);\n"
          "    for (u32 j = threadIdx.x; j * kVector < run; j += kThreads) {\n"
          "      const u32 f = j * kVector;\n"
          "      const u32 valid = min(kVector, run - f);\n"
          "      const u64 r = r0 + f / kW;\n"
          "      u32 w = f % kW, h = u32(r % kH);\n"
          "      u64 plane = r / kH;\n"
          "      const u8* from = col + plane * kTaps * kL * kElementBytes;\n"
          "      tt_lanes out;\n"
          "#pragma unroll\n"
          "      for (u32 e = 0; e < kVector; ++e) {\n"
          "        out.e[e] = e < valid ? tt_round(tt_sum(from, int(h), int(w)", policy, ")) : 0;\n"
          "        if (++w == kW) {\n"
          "          w = 0;\n"
          "          if (++h == kH) {\n"
          "            h = 0;\n"
          "            ++plane;\n"
          "            from = col + plane * kTaps * kL * kElementBytes;\n"
          "          }\n"
          "        }\n"
          "      }\n"
          "      u8* const to = img + (r0 * kW + f) * kElementBytes;\n"
          "      if (valid == kVector) {\n"
          "        tt_st_global(to, out.v", ImgPolicy(), ");\n"
          "      } else {\n"
          "        for (u32 e = 0; e < valid; ++e) reinterpret_cast<tt_elem*>(to)[e] = out.e[e];\n"
          "      }\n"
          "    }\n"
          "  }\n"
          "}\n");
      return;
    }
    absl::StrAppend(
        &out_,
        "  for (u64 tile = blockIdx.x; tile < kNumTiles; tile += gridDim.x) {\n"
        "    const u64 plane = tile / kTilesPerPlane;\n"
        "    const u32 t = u32(tile % kTilesPerPlane);\n"
        "    const u32 h0 = u32(t / kTilesW * kTileH), w0 = t % kTilesW * kTileW;\n"
        "    const u64 n = plane / kC, c = plane % kC;\n"
        "    const u8* const from = col + plane * kTaps * kL * kElementBytes;\n"
        "    u8* const to = img + (n * kImgStrideN + c * kImgStrideC) * kElementBytes;\n"
        "    for (u32 i = threadIdx.x; i < kItems; i += kThreads) {\n"
        "      const u32 h = h0 + i / kRowVectors, w = w0 + i % kRowVectors * kVector;\n"
        "      if (h >= kH || w >= kW) continue;\n"
        "      tt_lanes out;\n"
        "#pragma unroll\n"
        "      for (u32 e = 0; e < kVector; ++e) {\n"
        "        out.e[e] = tt_round(tt_sum(from, int(h), int(w + e)", policy, "));\n"
        "      }\n"
        "      tt_st_global(to + (u64(h) * kImgStrideH + u64(w) * kImgStrideW) * kElementBytes, "
        "out.v",
        ImgPolicy(),
        ");\n"
        "    }\n"
        "  }\n"
        "}\n");
  }

  // tt_first_tap: the first tap index t in [0, step) with t*d = x (mod s), or `step` when
  // there is none; the taps of x are then t, t + step, ... (x = h + PH or w + PW).
  void Taps() {
    absl::StrAppend(
        &out_,
        "\n// The first tap t < step with t*d = x (mod s), or ~0 when none reaches x (x is not a\n"
        "// multiple of gcd(d, s)); the others are t + step, t + 2*step, ...\n"
        "__device__ __forceinline__ u32 tt_first_tap(u32 x, u32 d, u32 s, u32 step) {\n"
        "  u32 t = 0;\n"
        "  while (t < step && (x % s + s - t * d % s) % s != 0) ++t;\n"
        "  return t < step ? t : 0xffffffffu;  // none: the tap loops do not start\n}\n"
        "// The first tap of t's class (t, t + step, ...) with tap*d >= need.\n"
        "__device__ __forceinline__ u32 tt_skip(u32 t, u32 need, u32 d, u32 step) {\n"
        "  const u32 least = (need + d - 1) / d;\n"
        "  return t >= least ? t : t + (least - t + step - 1) / step * step;\n}\n");
  }

  // The sum of one thread's kPerThread channels at (n, h, w, c0) over its taps, kh
  // ascending then kw, written to the image. The taps of a row form one class kh0, kh0 +
  // kStepH, ... (kh*DH = h + PH mod SH) clipped to the window rows that exist, and each step
  // moves the window row by a constant (the same along w): `row_setup` runs per tap row
  // (oh, kh known), `tap_setup` points `p` at tap (kh, kw) for window column ow, `tap_step`
  // moves it to the next tap of the class, and `at` is where the loads read.
  std::string SumAndStore(const std::string& row_setup, const std::string& tap_setup,
                          const std::string& tap_step, const std::string& at) {
    return absl::StrCat(
        "      float acc[kPerThread];\n"
        "#pragma unroll\n"
        "      for (u32 i = 0; i < kPerThread; ++i) acc[i] = 0.0f;\n"
        "      u32 kw0 = tt_first_tap(w + kPW, kDW, kSW, kStepW);\n"
        "      if (kw0 != 0xffffffffu && w + kPW > (kOW - 1) * kSW) {\n"
        "        kw0 = tt_skip(kw0, w + kPW - (kOW - 1) * kSW, kDW, kStepW);  // ow < OW\n"
        "      }\n"
        "      u32 kh = tt_first_tap(h + kPH, kDH, kSH, kStepH);\n"
        "      if (kh != 0xffffffffu && h + kPH > (kOH - 1) * kSH) {\n"
        "        kh = tt_skip(kh, h + kPH - (kOH - 1) * kSH, kDH, kStepH);  // oh < OH\n"
        "      }\n"
        "      for (; kh < kKH && kh * kDH <= h + kPH; kh += kStepH) {\n"
        "        const u32 oh = (h + kPH - kh * kDH) / kSH;\n",
        row_setup,
        "        u32 kw = kw0;\n"
        "        const u32 ow = (w + kPW - kw * kDW) / kSW;\n",
        tap_setup,
        "        for (; kw < kKW && kw * kDW <= w + kPW; kw += kStepW) {\n"
        "#pragma unroll\n"
        "          for (u32 v = 0; v < kPerThread / kVector; ++v) {\n"
        "            tt_lanes lanes;\n"
        "            lanes.v = ", Staged() ? absl::StrCat("tt_ld_shared(", at, " + v * kVector * kElementBytes)")
                                           : absl::StrCat("tt_ld_global(", at, " + v * kVector * kElementBytes",
                                                          ColPolicy(), ")"),
        ";\n"
        "#pragma unroll\n"
        "            for (u32 i = 0; i < kVector; ++i) acc[v * kVector + i] += tt_widen(lanes.e[i]);\n"
        "          }\n",
        tap_step,
        "        }\n"
        "      }\n"
        "      u8* out = img + (u64(n) * kImgStrideN + u64(h) * kImgStrideH + u64(w) * kImgStrideW +\n"
        "                       u64(c0) * kImgStrideC) * kElementBytes;\n"
        "#pragma unroll\n"
        "      for (u32 v = 0; v < kPerThread / kVector; ++v) {\n"
        "        tt_lanes lanes;\n"
        "#pragma unroll\n"
        "        for (u32 i = 0; i < kVector; ++i) lanes.e[i] = tt_round(acc[v * kVector + i]);\n"
        "        tt_st_global(out + v * kVector * kImgStrideC * kElementBytes, lanes.v",
        ImgPolicy(),
        ");\n"
        "      }\n");
  }

  void Kernel() {
    absl::StrAppend(&out_, "\nextern \"C\" __global__ void __launch_bounds__(kThreads) ",
                    l_.kernel_name,
                    "(const u8* __restrict__ col, u8* __restrict__ img) {\n");
    if (l_.col_policy) absl::StrAppend(&out_, "  const u64 col_policy = tt_make_col_policy();\n");
    if (l_.img_policy) absl::StrAppend(&out_, "  const u64 img_policy = tt_make_img_policy();\n");
    if (Staged()) absl::StrAppend(&out_, "  extern __shared__ __align__(16) u8 stage[];\n");
    absl::StrAppend(
        &out_,
        "  // Tile t: image n, rows from h0, columns from w0, every channel.\n"
        "  for (u64 tile = blockIdx.x; tile < kNumTiles; tile += gridDim.x) {\n"
        "    const u32 n = u32(tile / (u64(kTilesH) * kTilesW));\n"
        "    const u32 h0 = u32(tile / kTilesW % kTilesH) * kTileH;\n"
        "    const u32 w0 = u32(tile % kTilesW) * kTileW;\n");
    if (Staged()) StageFill();
    absl::StrAppend(
        &out_,
        "    for (u32 item = threadIdx.x; item < kTileItems; item += kThreads) {\n"
        "      const u32 c0 = item % kGroups * kPerThread;\n"
        "      const u32 pixel = item / kGroups;\n"
        "      const u32 q = pixel % kRowItems;  // residue class q / kResW, its (q % kResW)-th column\n"
        "      const u32 w_in = q / kResW + q % kResW * kSW;\n"
        "      const u32 h = h0 + pixel / kRowItems;\n"
        "      const u32 w = w0 + w_in;\n"
        "      if (w_in >= kTileW || h >= kH || w >= kW) continue;\n");
    if (Staged()) {
      absl::StrAppend(
          &out_,
          SumAndStore(
              "        const u32 kh_lo = tt_kh_lo(h0, oh);\n"
              "        // The slot row of oh at tap (kh, 0, c0); a slot's run starts at its matrix\n"
              "        // offset mod 16, computed in 32 bits (which keep the low bits exact).\n"
              "        const u8* slots = stage + (oh - oh_lo) * kStageCols * kPitchBytes +\n"
              "                          ((kh - kh_lo) * kTapElems + c0) * kElementBytes;\n"
              "        const u32 run0 = ((n * kOH + oh) * kOW) * u32(kK) + kh_lo * kTapElems;\n",
              "        const u8* p = slots + (ow - ow_lo) * kPitchBytes + kw * kC * kElementBytes;\n"
              "        u32 shift = (run0 + ow * u32(kK)) * u32(kElementBytes) % 16;\n",
              "          p += kStageTapStep;\n"
              "          shift = (shift + kShiftStep) % 16;\n",
              "(p + shift)"));
      absl::StrAppend(&out_, "    }\n    __syncthreads();  // the next tile refills the stage\n");
    } else {
      absl::StrAppend(
          &out_,
          SumAndStore("",
                      "        const u8* p = col + (((u64(n) * kOH + oh) * kOW + ow) * kK +\n"
                      "                             (kh * kKW + kw) * kC + c0) * kElementBytes;\n",
                      "          p += kColTapStep;\n", "p"));
      absl::StrAppend(&out_, "    }\n");
    }
    absl::StrAppend(&out_, "  }\n}\n");
  }

  // The swept form (see col2im_lowering.h): per tile, the window rows oh reaching it from
  // the last to the first, each one's matrix rows copied into a rotating buffer while the
  // previous one is summed; f32 sums stay in registers for the sweep.
  void SweptKernel() {
    SweptHelpers();
    absl::StrAppend(&out_, "\nextern \"C\" __global__ void __launch_bounds__(kThreads) ",
                    l_.kernel_name, "(const u8* __restrict__ col, u8* __restrict__ img) {\n");
    if (l_.col_policy) absl::StrAppend(&out_, "  const u64 col_policy = tt_make_col_policy();\n");
    if (l_.img_policy) absl::StrAppend(&out_, "  const u64 img_policy = tt_make_img_policy();\n");
    absl::StrAppend(&out_, "  extern __shared__ __align__(128) u8 stage[];\n");
    if (Tma()) TmaProducer();
    absl::StrAppend(
        &out_,
        Tma() ? "  u32 g = 0;  // window rows this block summed before the tile\n"
              : "  u32 sweep0 = 0;  // window rows this block swept before the tile\n",
        "  for (u64 tile = blockIdx.x; tile < kNumTiles; tile += gridDim.x) {\n"
        "    const tt_tile t = tt_tile_at(tile);\n"
        "\n",
        SweptTileSetup());
    SweptLoop();
    StoreSums();
  }

  // The device helpers of the swept form: a thread's column slots, a tile's window rows,
  // and TMA's arrival on an empty barrier.
  void SweptHelpers() {
    absl::StrAppend(
        &out_,
        "\n// A thread of band b = threadIdx.x / kGroupThreads sums the tile rows [b * kGroupRows,\n"
        "// (b + 1) * kGroupRows) at kPerRow column slots: slot j is item lane + j * kGroupThreads\n"
        "// of a row, its column w and first channel c0; false when it lies outside the tile or\n"
        "// the image. Every thread of a band has the same rows, so each window row gives its\n"
        "// warps the same share of work. A row's pixels go one residue class of SW at a time\n"
        "// (q / kResW): neighbouring threads share their tap pattern.\n"
        "__device__ __forceinline__ bool tt_column(u32 j, u32 w0, u32& w, u32& c0) {\n"
        "  const u32 item = threadIdx.x % kGroupThreads + j * kGroupThreads;\n"
        "  if (threadIdx.x / kGroupThreads >= kRowGroups || item >= kRowItems * kGroups) return false;\n"
        "  c0 = item % kGroups * kPerThread;\n"
        "  const u32 q = item / kGroups;\n"
        "  const u32 w_in = q / kResW + q % kResW * kSW;\n"
        "  w = w0 + w_in;\n"
        "  return w_in < kTileW && w < kW;\n}\n"
        "\n// Tile t's place and the window rows reaching it: oh_hi down to oh_lo are swept (a\n"
        "// pixel then meets its taps kh ascending), each one's matrix rows for window columns\n"
        "// ow_lo..ow_hi being `span` contiguous bytes from row0 + oh * kWindowRowBytes.\n"
        "struct tt_tile {\n"
        "  u32 n, h0, w0, h_end, w_end, oh_lo, oh_hi, ow_lo, ow_hi, rows, span;\n"
        "  u64 row0;\n"
        "};\n"
        "__device__ __forceinline__ tt_tile tt_tile_at(u64 tile) {\n"
        "  tt_tile t;\n"
        "  t.n = u32(tile / (u64(kTilesH) * kTilesW));\n"
        "  t.h0 = u32(tile / kTilesW % kTilesH) * kTileH;\n"
        "  t.w0 = u32(tile % kTilesW) * kTileW;\n"
        "  t.h_end = min(t.h0 + kTileH, kH) - 1;  // last row of the tile\n"
        "  t.w_end = min(t.w0 + kTileW, kW) - 1;\n"
        "  t.oh_lo = tt_lo(t.h0, kPH, (kKH - 1) * kDH, kSH);\n"
        "  t.oh_hi = min((t.h_end + kPH) / kSH, kOH - 1);\n"
        "  t.ow_lo = tt_lo(t.w0, kPW, (kKW - 1) * kDW, kSW);\n"
        "  t.ow_hi = min((t.w_end + kPW) / kSW, kOW - 1);\n"
        "  t.rows = t.oh_lo <= t.oh_hi && t.ow_lo <= t.ow_hi ? t.oh_hi - t.oh_lo + 1 : 0;\n"
        "  t.row0 = (u64(t.n) * kOH * kOW + t.ow_lo) * kK * kElementBytes;\n"
        "  t.span = t.rows ? (t.ow_hi - t.ow_lo + 1) * u32(kRowBytes) : 0;\n"
        "  return t;\n}\n");
    if (Tma()) {
      absl::StrAppend(
          &out_,
          "__device__ __forceinline__ void tt_mbarrier_arrive(u64* bar) {\n"
          "  asm volatile(\"mbarrier.arrive.shared::cta.b64 _, [%0];\" :: \"r\"(tt_smem_addr(bar))\n"
          "               : \"memory\");\n}\n");
    }
  }

  // Per tile: this thread's band, its f32 sums zeroed, and its column slots' taps.
  std::string SweptTileSetup() {
    return std::string(
        "    // This thread's first tile row, and per column slot the buffer offset of its first\n"
        "    // tap (kw0 at window column ow0, channel c0) in tap row 0 and its taps per row (0:\n"
        "    // none, or no pixel).\n"
        "    const u32 h_band = t.h0 + threadIdx.x / kGroupThreads * kGroupRows;\n"
        "    float acc[kGroupRows][kPerRow][kPerThread];\n"
        "    u32 first[kPerRow], taps[kPerRow];\n"
        "#pragma unroll\n"
        "    for (u32 r = 0; r < kGroupRows; ++r) {\n"
        "#pragma unroll\n"
        "      for (u32 j = 0; j < kPerRow; ++j) {\n"
        "#pragma unroll\n"
        "        for (u32 e = 0; e < kPerThread; ++e) acc[r][j][e] = 0.0f;\n"
        "      }\n"
        "    }\n"
        "#pragma unroll\n"
        "    for (u32 j = 0; j < kPerRow; ++j) {\n"
        "      first[j] = 0;\n"
        "      taps[j] = 0;\n"
        "      u32 w, c0;\n"
        "      if (!tt_column(j, t.w0, w, c0)) continue;\n"
        "      u32 kw = tt_first_tap(w + kPW, kDW, kSW, kStepW);\n"
        "      if (kw == 0xffffffffu) continue;\n"
        "      if (w + kPW > (kOW - 1) * kSW) {\n"
        "        kw = tt_skip(kw, w + kPW - (kOW - 1) * kSW, kDW, kStepW);  // ow < OW\n"
        "      }\n"
        "      u32 count = 0;\n"
        "      for (u32 k = kw; k < kKW && k * kDW <= w + kPW; k += kStepW) ++count;\n"
        "      taps[j] = count;\n"
        "      if (count) {\n"
        "        first[j] = (((w + kPW - kw * kDW) / kSW - t.ow_lo) * u32(kK) + kw * kC + c0) *\n"
        "                   u32(kElementBytes);\n"
        "      }\n"
        "    }\n");
  }

  // The window rows of one tile: with TMA, each waited for on its buffer's full barrier and
  // released by an arrival per warp on its empty barrier; with cp.async, filled
  // kBuffers - 1 ahead and closed by a CTA barrier.
  //
  // The per-warp release is __syncwarp (which orders the lanes' shared-memory reads before
  // lane 0's next operations) and then lane 0's mbarrier.arrive (a release at CTA scope),
  // the producer's try_wait being the matching acquire: the pattern of Hopper's TMA
  // pipelines. compute-sanitizer's racecheck does not follow the warp barrier: it reports
  // each other lane's read as a WAR hazard against the next bulk copy into the buffer.
  // bench/racecheck_release.cc reproduces that in a few lines: racecheck reports the same
  // errors for this release as for one with no __syncwarp (a real race), and nothing when
  // every thread arrives. Arriving from every thread gives the same bits but is slower on
  // every swept variant of bench/col2im_benchmark, so the per-warp release stays.
  void SweptLoop() {
    if (Tma()) {
      absl::StrAppend(
          &out_,
          "\n"
          "#pragma unroll 1\n"
          "    for (u32 s = 0; s < t.rows; ++s, ++g) {\n"
          "      if (threadIdx.x == 0) produce();  // the window row kBuffers - 1 ahead\n"
          "      const u32 b = g % kBuffers;\n"
          "      tt_mbarrier_wait(&tt_full[b], g / kBuffers & 1);  // window row s landed\n"
          "      const u32 oh = t.oh_hi - s;\n"
          "      const u8* buf = stage + b * kBufBytes + u32(t.row0 + oh * kWindowRowBytes) % kBufAlign;\n",
          SumBuffer(),
          "      __syncwarp();\n"
          "      if (threadIdx.x % 32 == 0) tt_mbarrier_arrive(&tt_empty[b]);  // buffer b summed\n"
          "    }\n");
    } else {
      absl::StrAppend(
          &out_,
          "\n"
          "    // Window row s of the sweep (the block's g-th) into buffer g % kBuffers: what of its\n"
          "    // matrix rows holds a tap landing in the tile (taps kh_lo..kh_hi, bytes\n"
          "    // [run_lo, run_hi) of each matrix row).\n"
          "    auto fill = [&](u32 s) {\n"
          "      if (s >= t.rows) return;\n"
          "      const u32 g = sweep0 + s;\n"
          "      const u32 oh = t.oh_hi - s;\n"
          "      const u32 kh_lo = tt_kh_lo(t.h0, oh);\n"
          "      const u32 kh_hi = min((t.h_end + kPH - oh * kSH) / kDH, kKH - 1);\n"
          "      const u32 run_lo = kh_lo * kTapElems * u32(kElementBytes);\n"
          "      const u32 run_hi = kh_lo <= kh_hi ? (kh_hi + 1) * kTapElems * u32(kElementBytes) : run_lo;\n"
          "      const bool whole = run_lo == 0 && run_hi == kRowBytes;\n"
          "      const u64 start = t.row0 + oh * kWindowRowBytes;\n"
          "      const u64 base = start & ~u64(15);\n"
          "      u8* buf = stage + g % kBuffers * kBufBytes;\n",
          FillCpAsync(),
          "    };\n"
          "\n"
          "#pragma unroll 1\n"
          "    for (u32 s = 0; s + 1 < kBuffers; ++s) {\n"
          "      fill(s);\n"
          "      tt_cp_async_commit();\n"
          "    }\n"
          "#pragma unroll 1\n"
          "    for (u32 s = 0; s < t.rows; ++s) {\n"
          "      fill(s + kBuffers - 1);\n"
          "      tt_cp_async_commit();\n"
          "      tt_cp_async_wait<kBuffers - 1>();  // window row s has landed\n"
          "      __syncthreads();\n"
          "      const u32 g = sweep0 + s;\n"
          "      const u32 oh = t.oh_hi - s;\n"
          "      const u8* buf = stage + g % kBuffers * kBufBytes + u32(t.row0 + oh * kWindowRowBytes) % kBufAlign;\n",
          SumBuffer(),
          "      __syncthreads();  // buffer g % kBuffers refills next\n"
          "    }\n"
          "    sweep0 += t.rows;\n");
    }
  }

  // The tile's sums, rounded once, into the image.
  void StoreSums() {
    absl::StrAppend(
        &out_,
        "\n"
        "#pragma unroll\n"
        "    for (u32 r = 0; r < kGroupRows; ++r) {\n"
        "      const u32 h = h_band + r;\n"
        "      if (h >= kH || h - t.h0 >= kTileH) continue;\n"
        "#pragma unroll\n"
        "      for (u32 j = 0; j < kPerRow; ++j) {\n"
        "        u32 w, c0;\n"
        "        if (!tt_column(j, t.w0, w, c0)) continue;\n"
        "        u8* out = img + (u64(t.n) * kImgStrideN + u64(h) * kImgStrideH + u64(w) * kImgStrideW +\n"
        "                         u64(c0) * kImgStrideC) * kElementBytes;\n"
        "#pragma unroll\n"
        "        for (u32 v = 0; v < kPerThread / kVector; ++v) {\n"
        "          tt_lanes lanes;\n"
        "#pragma unroll\n"
        "          for (u32 e = 0; e < kVector; ++e) lanes.e[e] = tt_round(acc[r][j][v * kVector + e]);\n"
        "          tt_st_global(out + v * kVector * kImgStrideC * kElementBytes, lanes.v",
        ImgPolicy(),
        ");\n"
        "        }\n"
        "      }\n"
        "    }\n"
        "  }\n"
        "}\n");
  }

  // The sum of one buffer (window row oh at `buf`) into each item's f32 sums.
  std::string SumBuffer() {
    return "#pragma unroll\n"
           "      for (u32 r = 0; r < kGroupRows; ++r) {\n"
           "        // tap row kh of this window row for tile row h: kh*DH = h + PH - oh*SH\n"
           "        if (h_band + r > t.h_end) break;  // past the tile or the image\n"
           "        const u32 y = h_band + r + kPH;\n"
           "        if (y < oh * kSH || (y - oh * kSH) % kDH != 0) continue;\n"
           "        const u32 kh = (y - oh * kSH) / kDH;\n"
           "        if (kh >= kKH) continue;\n"
           "#pragma unroll\n"
           "        for (u32 j = 0; j < kPerRow; ++j) {\n"
           "          const u8* p = buf + first[j] + kh * (kTapElems * u32(kElementBytes));\n"
           "#pragma unroll\n"
           "          for (u32 tap = 0; tap < kMaxTapsW; ++tap, p += kColTapStep) {\n"
           "            if (tap >= taps[j]) break;\n"
           "#pragma unroll\n"
           "            for (u32 v = 0; v < kPerThread / kVector; ++v) {\n"
           "              tt_lanes lanes;\n"
           "              lanes.v = tt_ld_shared(p + v * kVector * kElementBytes);\n"
           "#pragma unroll\n"
           "              for (u32 e = 0; e < kVector; ++e) acc[r][j][v * kVector + e] += tt_widen(lanes.e[e]);\n"
           "            }\n"
           "          }\n"
           "        }\n"
           "      }\n";
  }

  // The TMA sweep's producer, thread 0: the block's window rows in sweep order over its
  // tiles (tile, tile + gridDim.x, ...), each copied whole into buffer g % kBuffers by one
  // bulk copy once every warp has arrived on that buffer's empty barrier for its previous
  // window row; the bytes past the matrix's last whole 16-byte chunk are copied by hand
  // before the arrival that publishes them.
  void TmaProducer() {
    absl::StrAppend(
        &out_,
        "  __shared__ __align__(8) u64 tt_full[kBuffers];   // the bulk copy's bytes landed\n"
        "  __shared__ __align__(8) u64 tt_empty[kBuffers];  // an arrival per warp that summed it\n"
        "  if (threadIdx.x == 0) {\n"
        "#pragma unroll\n"
        "    for (u32 b = 0; b < kBuffers; ++b) {\n"
        "      tt_mbarrier_init(&tt_full[b], 1);\n"
        "      tt_mbarrier_init(&tt_empty[b], kThreads / 32);\n"
        "    }\n"
        "    tt_fence_barrier_init();\n"
        "  }\n"
        "  __syncthreads();\n"
        "  u64 p_tile = blockIdx.x;  // the producer's place: window row p_s of tile p_tile\n"
        "  u32 p_s = 0, p_g = 0;\n"
        "  tt_tile pt = tt_tile_at(p_tile < kNumTiles ? p_tile : 0);\n"
        "  auto produce = [&]() {\n"
        "    while (p_tile < kNumTiles && p_s >= pt.rows) {\n"
        "      p_tile += gridDim.x;\n"
        "      p_s = 0;\n"
        "      if (p_tile < kNumTiles) pt = tt_tile_at(p_tile);\n"
        "    }\n"
        "    if (p_tile >= kNumTiles) return;\n"
        "    const u32 b = p_g % kBuffers;\n"
        "    if (p_g >= kBuffers) tt_mbarrier_wait(&tt_empty[b], (p_g / kBuffers - 1) & 1);\n"
        "    constexpr u64 kLastWhole = kColBytes & ~u64(15);  // bulk copies stop here\n"
        "    const u64 start = pt.row0 + (pt.oh_hi - p_s) * kWindowRowBytes;\n"
        "    const u64 base = start & ~u64(15), end = start + pt.span;\n"
        "    const u64 stop = min((end + 15) & ~u64(15), kLastWhole);\n"
        "    u8* buf = stage + b * kBufBytes + u32(base) % kBufAlign;  // holds `base` on\n"
        "    if (stop < end) {\n"
        "      for (u64 i = stop > base ? stop : base; i < end; ++i) buf[i - base] = col[i];\n"
        "      // A later bulk copy into this buffer (the async proxy) writes after these stores.\n"
        "      asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\");\n"
        "    }\n"
        "    tt_mbarrier_expect_tx(&tt_full[b], stop > base ? u32(stop - base) : 0u);\n"
        "    if (stop > base) tt_bulk_load(buf, col + base, u32(stop - base), &tt_full[b]",
        ColPolicy(),
        ");\n"
        "    ++p_g;\n"
        "    ++p_s;\n"
        "  };\n"
        "  if (threadIdx.x == 0) {\n"
        "#pragma unroll 1\n"
        "    for (u32 i = 0; i + 1 < kBuffers; ++i) produce();\n"
        "  }\n");
  }

  // cp.async: the 16-byte chunks covering the window row's matrix rows, those holding a
  // needed byte only (all of them when every tap lands in the tile).
  std::string FillCpAsync() {
    return absl::StrCat(
        "      const u32 shift = u32(start - base);\n"
        "      const u32 chunks = run_lo < run_hi ? (shift + t.span + 15) / 16 : 0;\n"
        "      for (u32 c = threadIdx.x; c < chunks; c += kThreads) {\n"
        "        if (!whole) {  // bytes [lo, hi) from `start`; rows ra..rb of them\n"
        "          const u32 lo = c ? c * 16 - shift : 0;\n"
        "          const u32 hi = min(c * 16 + 16 - shift, t.span);\n"
        "          const u32 ra = lo / kRowBytes, rb = (hi - 1) / kRowBytes;\n"
        "          const bool need = rb > ra + 1 ||\n"
        "                            (lo < ra * kRowBytes + run_hi && ra * kRowBytes + run_lo < hi) ||\n"
        "                            (lo < rb * kRowBytes + run_hi && rb * kRowBytes + run_lo < hi);\n"
        "          if (!need) continue;\n"
        "        }\n"
        "        const u64 at = base + u64(c) * 16;\n"
        "        if (at + 16 <= kColBytes) {\n"
        "          tt_cp_async(buf + c * 16, col + at, true", ColPolicy(), ");\n"
        "        } else {  // the matrix's last chunk: only its own bytes\n"
        "          for (u32 b = 0; at + b < kColBytes; ++b) buf[c * 16 + b] = col[at + b];\n"
        "        }\n"
        "      }\n");
  }

  // The staged form's copy of the tile's column-matrix runs into shared memory, and the
  // helpers it uses (emitted before the kernel).
  void StageHelpers() {
    absl::StrAppend(
        &out_,
        "\n// Window rows oh and columns ow whose taps reach a tile starting at (h0, w0).\n"
        "__device__ __forceinline__ u32 tt_lo(u32 x0, u32 pad, u32 span, u32 s) {\n"
        "  // ceil((x0 + pad - span) / s), at least 0\n"
        "  return x0 + pad >= span ? (x0 + pad - span + s - 1) / s : 0;\n}\n"
        "// Byte offset in the column matrix of the run of window position (oh, ow) from tap\n"
        "// row kh_lo.\n"
        "__device__ __forceinline__ u64 tt_run_start(u32 n, u32 oh, u32 ow, u32 kh_lo) {\n"
        "  return (((u64(n) * kOH + oh) * kOW + ow) * kK + u64(kh_lo) * kTapElems) * kElementBytes;\n"
        "}\n"
        "// The first tap kh of window row oh that lands in rows >= h0.\n"
        "__device__ __forceinline__ u32 tt_kh_lo(u32 h0, u32 oh) {\n"
        "  const u32 top = oh * kSH;  // the row of tap 0, plus kPH\n"
        "  return h0 + kPH > top ? (h0 + kPH - top + kDH - 1) / kDH : 0;\n}\n");
  }

  void StageFill() {
    absl::StrAppend(
        &out_,
        "    const u32 h_end = min(h0 + kTileH, kH) - 1;  // last row of the tile\n"
        "    const u32 w_end = min(w0 + kTileW, kW) - 1;\n"
        "    const u32 oh_lo = tt_lo(h0, kPH, (kKH - 1) * kDH, kSH);\n"
        "    const u32 oh_hi = min((h_end + kPH) / kSH, kOH - 1);\n"
        "    const u32 ow_lo = tt_lo(w0, kPW, (kKW - 1) * kDW, kSW);\n"
        "    const u32 ow_hi = min((w_end + kPW) / kSW, kOW - 1);\n"
        "    // Per window position (oh, ow): the taps kh in [kh_lo, kh_hi] land in the tile's\n"
        "    // rows, one run of the matrix row (all kw and c), copied to its slot as the aligned\n"
        "    // 16-byte chunks that cover it; kUnroll chunks per thread are loaded before any is\n"
        "    // stored, so that several loads are in flight.\n"
        "    for (u32 i0 = threadIdx.x; i0 < kStageChunks; i0 += kThreads * kUnroll) {\n"
        "      tt_run_vec v[kUnroll];\n"
        "      u32 at[kUnroll];\n"
        "#pragma unroll\n"
        "      for (u32 u = 0; u < kUnroll; ++u) {\n"
        "        const u32 i = i0 + u * kThreads;\n"
        "        at[u] = 0xffffffffu;\n"
        "        if (i >= kStageChunks) continue;\n"
        "        const u32 slot = i / kChunks;\n"
        "        const u32 oh = oh_lo + slot / kStageCols;\n"
        "        const u32 ow = ow_lo + slot % kStageCols;\n"
        "        if (oh > oh_hi || ow > ow_hi) continue;\n"
        "        const u32 kh_lo = tt_kh_lo(h0, oh);\n"
        "        const u32 kh_hi = min((h_end + kPH - oh * kSH) / kDH, kKH - 1);\n"
        "        if (kh_lo > kh_hi) continue;\n"
        "        const u64 start = tt_run_start(n, oh, ow, kh_lo);\n"
        "        const u64 end = start + u64(kh_hi - kh_lo + 1) * kTapElems * kElementBytes;\n"
        "        const u64 chunk = (start & ~u64(15)) + u64(i % kChunks) * 16;\n"
        "        if (chunk >= end) continue;\n"
        "        at[u] = slot * kPitchBytes + i % kChunks * 16;\n"
        "        if (chunk + 16 <= kColBytes) {\n"
        "          v[u] = tt_run_ld_global(col + chunk", ColPolicy(), ");\n"
        "        } else {  // the matrix's last chunk: only its own bytes\n"
        "          union { tt_run_vec v; u8 b[16]; } last;\n"
        "          for (u32 b = 0; b < 16; ++b) last.b[b] = chunk + b < kColBytes ? col[chunk + b] : 0;\n"
        "          v[u] = last.v;\n"
        "        }\n"
        "      }\n"
        "#pragma unroll\n"
        "      for (u32 u = 0; u < kUnroll; ++u) {\n"
        "        if (at[u] != 0xffffffffu) tt_run_st_shared(stage + at[u], v[u]);\n"
        "      }\n"
        "    }\n"
        "    __syncthreads();\n");
  }

  const LoweredCol2im& l_;
  const Im2colGeometry& g_;
  std::string out_;
};

}  // namespace

CudaSource EmitCol2imKernel(const LoweredCol2im& lowered) {
  return CudaSource{lowered.kernel_name, Col2imEmitter(lowered).Emit()};
}

}  // namespace tiletune

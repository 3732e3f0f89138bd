#include "compiler/ops/col2im/col2im_emitter.h"

#include <cstdint>
#include <numeric>
#include <string>
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
    // Image stores (and the direct form's column loads) take one vector along C.
    absl::StrAppend(&out_, VectorAccessSnippet(vector_bytes, !Staged() && l_.col_policy,
                                               l_.img_policy.has_value(), "tt"));
    if (Staged()) {
      absl::StrAppend(&out_, VectorAccessSnippet(16, l_.col_policy.has_value(),
                                                 /*store_hint=*/false, "tt_run"));
    }
    Elements();
    Constants();
    Taps();
    if (Staged()) StageHelpers();
    Kernel();
    return out_;
  }

 private:
  bool Staged() const { return l_.path == Col2imPath::kSimtStaged; }
  std::string ColPolicy() const { return l_.col_policy ? ", col_policy" : ""; }
  std::string ImgPolicy() const { return l_.img_policy ? ", img_policy" : ""; }
  int64_t ChannelsPerThread() const {
    return g_.c * l_.element_bytes <= 16 ? g_.c : l_.vector_elems;
  }

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
    absl::StrAppend(&out_, ", L2 policy columns ",
                    l_.col_policy ? EvictionPolicyName(*l_.col_policy) : std::string("none"),
                    ", image ",
                    l_.img_policy ? EvictionPolicyName(*l_.img_policy) : std::string("none"),
                    "\n//   taps summed in f32, kh ascending then kw; one rounding; NaN canonical\n");
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
    Constant("u32", "kTileItems", l_.tile_h * g_.sw * res_w * (g_.c / per_thread));
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

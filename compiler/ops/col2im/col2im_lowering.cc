#include "compiler/ops/col2im/col2im_lowering.h"

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
#include "compiler/ops/im2col/conv_spec.h"

namespace tiletune {
namespace {

constexpr int64_t kTwoTo31 = int64_t{1} << 31;

absl::Status CheckLaunch(const LaunchParams& launch, const Target& target) {
  if (launch.tile.size() != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "col2im tile [", absl::StrJoin(launch.tile, ", "),
        "]: give two extents, tile_h and tile_w (output rows and columns; a tile is every "
        "channel of them), e.g. --tile=2,56"));
  }
  return ValidateLaunchParams(launch, target);
}

// The image, the column matrix, the tile over the image and the tile counts.
absl::Status PlaceTiles(const Col2imOp& op, const LaunchParams& launch, LoweredCol2im& l) {
  const Im2colGeometry& g = op.geometry;
  l.geometry = g;
  l.img_strides = op.img.strides;
  l.oh = g.OH();
  l.ow = g.OW();
  l.m = g.M();
  l.k = g.K();
  l.tile_h = std::min(launch.tile[0], g.h);
  l.tile_w = std::min(launch.tile[1], g.w);
  l.tiles_h = CeilDiv(g.h, l.tile_h);
  l.tiles_w = CeilDiv(g.w, l.tile_w);
  // The planes and patches forms place their own tiles and check their own grids.
  if (op.order != ColumnOrder::kChannelRows && g.n > kTwoTo31 / l.tiles_h / l.tiles_w) {
    return absl::InvalidArgumentError(absl::StrCat(
        g.n, " x ", l.tiles_h, " x ", l.tiles_w,
        " tiles exceed the 2^31-1 CTA grid; use a larger tile"));
  }
  l.num_tiles = g.n * l.tiles_h * l.tiles_w;
  l.tile_bytes = l.tile_h * l.tile_w * g.c * l.element_bytes;
  // The planes form places its own tiles (over planes, or whole rows across them).
  if (op.order != ColumnOrder::kChannelRows) {
    l.decision_log.push_back(absl::StrCat(
        "col2im ", DataTypeName(l.dtype), " ", Im2colGeometryToString(g), " with output tile ",
        l.tile_h, "x", l.tile_w, "x", g.c, ": ", g.n, " x ", l.tiles_h, " x ", l.tiles_w, " = ",
        l.num_tiles, " tiles", g.h % l.tile_h ? ", row tail guarded" : "",
        g.w % l.tile_w ? ", column tail guarded" : "",
        launch.tile[0] > g.h || launch.tile[1] > g.w ? " (tile clipped to the image)" : ""));
  }
  l.decision_log.push_back(
      op.order == ColumnOrder::kChannelRows
          ? "taps summed in f32 in the order kh descending, then kw descending (F.fold's); one "
            "rounding to the image type; NaN written canonical; no atomics"
          : "taps summed in f32 in the order kh ascending, then kw ascending; one rounding to "
            "the image type; NaN written canonical; no atomics");
  return absl::OkStatus();
}

// Widest vector along C (elements, power of two, <= 16 B) that C and the image strides
// allow; the column matrix's row stride K = KH*KW*C and its tap runs follow from C.
int LegalVectorElems(const LoweredCol2im& l, std::string* limit) {
  const std::vector<VectorConstraint> constraints = {{"C=", l.geometry.c},
                                                     {"image N stride", l.img_strides[0]},
                                                     {"image H stride", l.img_strides[1]},
                                                     {"image W stride", l.img_strides[2]}};
  return WidestVector(l.element_bytes, l.img_strides[3] == 1,
                      absl::StrCat("image C stride ", l.img_strides[3]), constraints, limit);
}

// The staged form's stage for the tile (see LoweredCol2im::Stage).
LoweredCol2im::Stage PlanStage(const LoweredCol2im& l) {
  const Im2colGeometry& g = l.geometry;
  LoweredCol2im::Stage s;
  s.rows = std::min(l.oh, (l.tile_h - 1 + (g.kh - 1) * g.dh) / g.sh + 1);
  s.cols = std::min(l.ow, (l.tile_w - 1 + (g.kw - 1) * g.dw) / g.sw + 1);
  s.taps_h = std::min(g.kh, (l.tile_h - 1) / g.dh + 1);
  s.run_elems = s.taps_h * g.kw * g.c;
  // A run of B bytes starting at offset o < 16 of a chunk spans ceil((o + B) / 16) chunks.
  s.chunks = CeilDiv(s.run_elems * l.element_bytes + 15, 16);
  return s;
}

int64_t StageBytes(const LoweredCol2im& l) {
  return l.stage.rows * l.stage.cols * l.stage.PitchBytes();
}

// The swept form's buffers (see LoweredCol2im::Sweep) and its f32 sums per thread: each
// thread takes the same items of every tile row, a row's pixels walked in residue classes
// of SW (see the emitter).
void PlanSweep(LoweredCol2im& l) {
  const Im2colGeometry& g = l.geometry;
  LoweredCol2im::Sweep& s = l.sweep;
  s.cols = std::min(l.ow, (l.tile_w - 1 + (g.kw - 1) * g.dw) / g.sw + 1);
  // Rows of `cols` window columns start anywhere mod 16: ceil((o + B) / 16) chunks, o < 16.
  // A bulk copy's bytes keep their address mod 128 in the buffer (a buffer is a whole
  // number of 128-byte lines): o < 128 there.
  const bool tma = l.path == Col2imPath::kTmaSwept;
  s.chunks = CeilDiv(s.cols * l.k * l.element_bytes + (tma ? 127 : 15), 16);
  if (tma) s.chunks = RoundUp(s.chunks, 8);
  s.buffers = l.launch.stages;
  // Every thread of a band takes the same share of each of its rows (see the emitter's
  // tt_column); a row's items need RoundUp(row_items, 32) threads, and more than that split
  // the tile's rows into bands, as many as whole bands of rows need (7 bands of 2 over 8
  // rows are 4).
  const int64_t per_thread = Col2imChannelsPerThread(l);
  const int64_t threads = l.launch.threads;
  s.row_items = g.sw * CeilDiv(l.tile_w, g.sw) * (g.c / per_thread);
  const int64_t row_threads = std::min(threads, RoundUp(s.row_items, 32));
  s.group_rows = CeilDiv(l.tile_h, std::clamp<int64_t>(threads / row_threads, 1, l.tile_h));
  s.row_groups = CeilDiv(l.tile_h, s.group_rows);
  s.group_threads = std::max<int64_t>(32, threads / s.row_groups / 32 * 32);
  s.per_row = CeilDiv(s.row_items, s.group_threads);
  l.sums_per_thread = s.group_rows * s.per_row * per_thread;
}

std::vector<std::string> CheckPositions(const Im2colGeometry& g) {
  std::vector<std::string> why;
  if (g.h + 2 * g.ph >= kTwoTo31 || g.w + 2 * g.pw >= kTwoTo31 || g.c >= kTwoTo31) {
    why.push_back(absl::StrCat("image ", g.h, "x", g.w, "x", g.c, " with pads ", g.ph, "x", g.pw,
                               ": rows and columns with their pads, and C, must be below 2^31 "
                               "(the kernel's 32-bit positions)"));
  }
  return why;
}

std::vector<std::string> CheckSwept(const Target& target, const LaunchParams& launch,
                                    const LoweredCol2im& l) {
  std::vector<std::string> why;
  if (l.path == Col2imPath::kTmaSwept) {
    if (!target.HasTma()) why.push_back(absl::StrCat(target.ArchName(), " has no TMA (sm_90+)"));
    if (l.hints.disable_tma) why.push_back("disable_tma is set");
  } else if (!target.HasCpAsync()) {
    why.push_back(absl::StrCat(target.ArchName(), " has no cp.async (sm_80+)"));
  }
  if (!launch.through_shared) {
    why.push_back("through_shared=false: the swept form sums from shared buffers; set "
                  "through_shared=true");
  }
  if (launch.stages < 2) {
    why.push_back(absl::StrCat("stages=", launch.stages,
                               ": the swept form fills the next window row's buffer while it "
                               "sums the current one; use stages >= 2"));
  }
  if (l.sums_per_thread > kMaxSimtItemsPerThread) {
    why.push_back(absl::StrCat(
        "tile ", l.tile_h, "x", l.tile_w, " with ", l.launch.threads, " threads: ",
        l.sums_per_thread, " f32 sums per thread, the swept form keeps at most ",
        kMaxSimtItemsPerThread, " in registers; use a smaller tile or more threads"));
  }
  // 32-bit offsets into the matrix rows of one window row.
  if (l.sweep.chunks * 16 >= kTwoTo31) {
    why.push_back(absl::StrCat(l.sweep.chunks * 16, " B of matrix rows per window row must be "
                               "below 2^31"));
  }
  CheckSharedFit(l.sweep.buffers * l.sweep.BufferBytes(), launch.ctas_per_sm, target, why);
  for (std::string& reason : CheckPositions(l.geometry)) why.push_back(std::move(reason));
  return why;
}

std::vector<std::string> CheckSimt(const Target& target, const LaunchParams& launch,
                                   const LoweredCol2im& l) {
  std::vector<std::string> why;
  if (launch.stages != 1) {
    why.push_back(
        absl::StrCat("stages=", launch.stages, ": simt_col2im is not pipelined; use stages=1"));
  }
  if (l.path == Col2imPath::kSimtStaged) {
    CheckSharedFit(StageBytes(l), launch.ctas_per_sm, target, why);
  }
  for (std::string& reason : CheckPositions(l.geometry)) why.push_back(std::move(reason));
  return why;
}

// The planes form's loads, as the emitter's PlanesKernel and tt_sum make them, for the first
// warp of the middle tile: thread j sums vector j's pixels one by one (the tile's run of
// whole image rows, or its rows of part rows), each pixel loading its window positions
// (i, j) of the SpanH x SpanW that can reach it, a position that does not reach it its
// plane's first element (or, dilated, one clamped into the plane), in one instruction per
// (pixel, position); a wide window's loop loads the reaching positions only, in order.
std::optional<double> PlanesWarpLoadSectors(const LoweredCol2im& l) {
  const Im2colGeometry& g = l.geometry;
  const int64_t v = l.vector_elems;
  const int64_t span_h = CeilDiv(g.EffectiveKh(), g.sh), span_w = CeilDiv(g.EffectiveKw(), g.sw);
  const bool loop = span_h * span_w > kCol2imMaxUnrolledSpan;
  const bool dilated = g.dh != 1 || g.dw != 1;
  const int64_t plane_bytes = g.kh * g.kw * l.k * l.element_bytes;
  const int64_t tile = l.num_tiles / 2;
  // Instruction (e, i, j): pixel e of the vector, window position (oh0 + i, ow0 + j); the
  // loop visits the same positions in lockstep, loading the reaching ones only. A wide
  // window's first kWalkedSpan x kWalkedSpan positions stand for the rest.
  constexpr int64_t kWalkedSpan = 8;
  const int64_t walk_h = std::min(span_h, kWalkedSpan), walk_w = std::min(span_w, kWalkedSpan);
  const int64_t span = walk_h * walk_w;
  std::vector<std::vector<std::optional<int64_t>>> loads(v * span);
  const int64_t per_plane = l.tiles_h * l.tiles_w, row_vectors = CeilDiv(l.tile_w, v);
  for (int64_t lane = 0; lane < kWarpLanes; ++lane) {
    // The lane's pixels: how many it sums, and the plane, row and column of its e-th.
    int64_t valid = 0;
    if (l.flat_rows) {
      const int64_t r0 = tile * l.tile_h;
      valid = std::clamp<int64_t>(std::min(l.tile_h, g.n * g.c * g.h - r0) * g.w - lane * v, 0, v);
    } else {
      const int64_t t = tile % per_plane;
      const int64_t h = t / l.tiles_w * l.tile_h + lane / row_vectors;
      const int64_t w = t % l.tiles_w * l.tile_w + lane % row_vectors * v;
      valid = lane < l.tile_h * row_vectors && h < g.h && w < g.w ? v : 0;
    }
    for (int64_t e = 0; e < valid; ++e) {
      int64_t plane = tile / per_plane, h = 0, w = 0;
      if (l.flat_rows) {
        const int64_t at = tile * l.tile_h * g.w + lane * v + e;
        plane = at / (g.h * g.w);
        h = at / g.w % g.h;
        w = at % g.w;
      } else {
        const int64_t t = tile % per_plane;
        h = t / l.tiles_w * l.tile_h + lane / row_vectors;
        w = t % l.tiles_w * l.tile_w + lane % row_vectors * v + e;
      }
      const int64_t h_im = h + g.ph, w_im = w + g.pw;
      const int64_t oh0 = h_im < g.EffectiveKh() ? 0 : (h_im - g.EffectiveKh()) / g.sh + 1;
      const int64_t oh1 = std::min(h_im / g.sh + 1, l.oh);
      const int64_t ow0 = w_im < g.EffectiveKw() ? 0 : (w_im - g.EffectiveKw()) / g.sw + 1;
      const int64_t ow1 = std::min(w_im / g.sw + 1, l.ow);
      const int64_t from = plane * plane_bytes;
      // Window position (oh, ow): its tap's matrix row, clamped into the plane.
      auto at = [&](int64_t oh, int64_t ow) {
        const int64_t hk = std::max<int64_t>(h_im - oh * g.sh, 0) / g.dh;
        const int64_t wk = std::max<int64_t>(w_im - ow * g.sw, 0) / g.dw;
        return from + ((hk * g.kw + wk) * l.k + std::min(oh, l.oh - 1) * l.ow +
                       std::min(ow, l.ow - 1)) * l.element_bytes;
      };
      auto reaches = [&](int64_t oh, int64_t ow) {
        return oh < oh1 && ow < ow1 && (h_im - oh * g.sh) % g.dh == 0 &&
               (w_im - ow * g.sw) % g.dw == 0;
      };
      // Undilated, a pixel no window reaches loads nothing; otherwise each position loads: a
      // reaching one its element, another its plane's first (dilated: clamped into the
      // plane), or, in the loop, nothing.
      if (!dilated && !loop && (oh1 <= oh0 || ow1 <= ow0)) continue;
      for (int64_t i = 0; i < walk_h; ++i) {
        for (int64_t j = 0; j < walk_w; ++j) {
          const int64_t oh = oh0 + i, ow = ow0 + j;
          std::vector<std::optional<int64_t>>& instruction = loads[e * span + i * walk_w + j];
          if (reaches(oh, ow)) {
            instruction.push_back(at(oh, ow));
          } else if (!loop) {
            instruction.push_back(dilated ? at(oh, ow) : from);
          }
        }
      }
    }
  }
  return MeanWarpLoadSectors(loads);
}

// What every form ends with: the widest access (the shared-memory forms copy 16-byte
// chunks), the L2 policies and the kernel's name.
void FinishLowering(const Target& target, LoweredCol2im& l) {
  const bool planes = l.path == Col2imPath::kSimtPlanes ||
                      l.path == Col2imPath::kSimtPlanesStaged ||
                      l.path == Col2imPath::kSimtPatches;
  l.vector_bytes = l.path == Col2imPath::kSimtDirect || planes ? l.vector_elems * l.element_bytes
                                                               : 16;
  if (planes) {
    // The taps reaching a pixel along an axis: kh with kh * D = h + P (mod S), one in every
    // S / gcd(S, D) of the K taps, so ceil(K * gcd(S, D) / S) at most.
    const Im2colGeometry& g = l.geometry;
    auto taps = [](int64_t k, int64_t s, int64_t d) { return CeilDiv(k * std::gcd(s, d), s); };
    l.gather_reads = taps(g.kh, g.sh, g.dh) * taps(g.kw, g.sw, g.dw);
    // The staged form's warps load 32 neighbouring elements of a run; the patches form's
    // neighbouring threads load neighbouring vectors (warp_load_sectors unset).
    if (l.path == Col2imPath::kSimtPlanes) {
      l.warp_load_sectors = PlanesWarpLoadSectors(l);
    } else if (l.path == Col2imPath::kSimtPlanesStaged) {
      l.warp_load_sectors = std::max(1.0, l.element_bytes * 32 / 32.0);
    }
  }
  l.col_policy = ChooseL2Policy(l.hints.EvictionFor("col"), target, "column loads",
                                l.decision_log);
  l.img_policy = ChooseL2Policy(l.hints.EvictionFor("img"), target, "image stores",
                                l.decision_log);
  l.kernel_name = absl::StrCat("tt_col2im_", l.form_name);
}

// The window rows oh reaching image rows [h0, h1): [first, last), as the emitted kernel
// computes them (the bounds of rows h0 and h1 - 1).
std::pair<int64_t, int64_t> WindowRowsReaching(const Im2colGeometry& g, int64_t oh_count,
                                               int64_t h0, int64_t h1) {
  const int64_t ekh = g.EffectiveKh();
  const int64_t first = h0 + g.ph < ekh ? 0 : (h0 + g.ph - ekh) / g.sh + 1;
  const int64_t last = std::min((h1 - 1 + g.ph) / g.sh + 1, oh_count);
  return {first, last};
}

// The planes_staged form's stage: the most window rows any tile of tile_h rows needs.
int64_t PlanesStageRows(const LoweredCol2im& l) {
  int64_t most = 0;
  for (int64_t h0 = 0; h0 < l.geometry.h; h0 += l.tile_h) {
    const auto [first, last] =
        WindowRowsReaching(l.geometry, l.oh, h0, std::min(h0 + l.tile_h, l.geometry.h));
    most = std::max(most, last - first);
  }
  return std::max<int64_t>(most, 1);
}

// The planes form (channel-row columns): tiles over every (n, c) plane, the vector along
// W, and the path (the swept paths refused by the chain with the reason).
absl::Status LowerPlanes(const Target& target, const LaunchParams& launch, LoweredCol2im& l) {
  const Im2colGeometry& g = l.geometry;
  l.m = g.n * g.c * g.kh * g.kw;
  l.k = l.oh * l.ow;
  if (l.k >= kTwoTo31) {
    return absl::InvalidArgumentError(absl::StrCat(
        "channel_rows columns of OH*OW=", l.k, " per row: the planes form needs below 2^31"));
  }
  const int64_t image_rows = g.n * g.c * g.h;
  const bool staged = launch.through_shared;
  // A dense NCHW image is the matrix [N*C*H, W]: tiles of whole rows of it are runs.
  l.flat_rows = !staged && l.img_strides == NchwStrides(g) && launch.tile[1] >= g.w;
  if (staged) {
    // Tiles of whole rows of one plane.
    l.tile_h = std::min(launch.tile[0], g.h);
    l.tile_w = g.w;
    l.tiles_h = CeilDiv(g.h, l.tile_h);
    l.tiles_w = 1;
    l.stage_rows = PlanesStageRows(l);
  }
  std::vector<VectorConstraint> constraints;
  std::string limit;
  int legal = 1;
  if (l.flat_rows) {
    l.tile_h = std::min(launch.tile[0], image_rows);
    l.tile_w = g.w;
    l.tiles_h = CeilDiv(image_rows, l.tile_h);
    l.tiles_w = 1;
    l.num_tiles = l.tiles_h;
    constraints = {{"tile_h x W=", l.tile_h * g.w}};
    legal = WidestVector(l.element_bytes, true, "", constraints, &limit);
    if (l.tile_h * g.w >= kTwoTo31) {
      return absl::InvalidArgumentError(absl::StrCat(
          "a tile of ", l.tile_h, " rows of ", g.w,
          " pixels: the planes form needs its runs below 2^31 elements; use a smaller tile"));
    }
  } else {
    if (g.n * g.c > kTwoTo31 / l.tiles_h / l.tiles_w) {
      return absl::InvalidArgumentError(absl::StrCat(
          g.n * g.c, " planes x ", l.tiles_h, " x ", l.tiles_w,
          " tiles exceed the 2^31-1 CTA grid; use a larger tile"));
    }
    l.num_tiles = g.n * g.c * l.tiles_h * l.tiles_w;
    constraints = {{"W=", g.w},
                   {"tile_w=", l.tile_w},
                   {"image N stride", l.img_strides[0]},
                   {"image H stride", l.img_strides[1]},
                   {"image C stride", l.img_strides[3]}};
    legal = WidestVector(l.element_bytes, l.img_strides[2] == 1,
                         absl::StrCat("image W stride ", l.img_strides[2]), constraints, &limit);
  }
  l.tile_bytes = l.tile_h * l.tile_w * l.element_bytes;
  TT_ASSIGN_OR_RETURN(l.vector_elems, ChooseVectorWidth(l.hints, legal, l.element_bytes, limit,
                                                        " along W", l.decision_log));
  l.items_per_thread = CeilDiv(l.tile_h * CeilDiv(l.tile_w, l.vector_elems), launch.threads);
  if (staged) {
    // The stage, then each warp's 32 vectors.
    l.shared_bytes = PlanesStageBytes(l) + launch.threads * l.vector_elems * l.element_bytes;
  }
  const std::string no_copy =
      "channel_rows columns (F.fold's layout) have only the SIMT planes form";
  auto swept = [&](bool tma) {
    std::vector<std::string> why = {no_copy};
    if (tma && !target.HasTma()) why.push_back(absl::StrCat(target.ArchName(), " has no TMA (sm_90+)"));
    return why;
  };
  auto simt = [&] {
    std::vector<std::string> why;
    if (launch.stages != 1) {
      why.push_back(absl::StrCat("stages=", launch.stages,
                                 ": simt_col2im is not pipelined; use stages=1"));
    }
    if (staged) {
      if (launch.tile[1] < g.w) {
        why.push_back(absl::StrCat("tile_w=", launch.tile[1], " < W=", g.w,
                                   ": the planes_staged form stages whole rows; set tile_w >= W"));
      }
      CheckSharedFit(l.shared_bytes, launch.ctas_per_sm, target, why);
    }
    for (std::string& reason : CheckPositions(g)) why.push_back(std::move(reason));
    return why;
  };
  const PathOption chain[] = {
      {Instruction::kTma, Col2imPathName(Col2imPath::kTmaSwept), [&] { return swept(true); }},
      {Instruction::kCpAsync, Col2imPathName(Col2imPath::kCpAsyncSwept),
       [&] { return swept(false); }},
      {Instruction::kSync, Col2imPathName(Col2imPath::kSimtPlanes), simt},
  };
  TT_ASSIGN_OR_RETURN(size_t chosen, ChoosePath(chain, l.hints, "col2im", target, l.decision_log));
  l.path = staged ? Col2imPath::kSimtPlanesStaged : Col2imPath::kSimtPlanes;
  l.instruction = chain[chosen].instruction;
  if (staged) {
    l.decision_log.push_back(absl::StrCat(
        "col2im ", DataTypeName(l.dtype), " ", Im2colGeometryToString(g),
        " from channel_rows columns [N, C*KH*KW, OH*OW]; planes_staged form: ", g.n * g.c,
        " planes x ", l.tiles_h, " = ", l.num_tiles, " tiles of ", l.tile_h,
        " whole rows; each tile first copies, for each of its ", g.kh * g.kw,
        " taps, the run of up to ", l.stage_rows, " window rows x ", l.ow,
        " columns reaching it into shared memory (", PlanesStageBytes(l),
        " B, neighbouring threads loading neighbouring elements); then each warp takes 32 "
        "vectors of ", l.vector_elems, " pixel(s), its lanes summing neighbouring pixels from "
        "the stage (oh then ow ascending) into the warp's slice of shared memory (",
        l.shared_bytes - PlanesStageBytes(l), " B in all), and each lane stores its own "
        "vector, at most ", l.items_per_thread, " per thread per tile"));
    return absl::OkStatus();
  }
  l.decision_log.push_back(absl::StrCat(
      "col2im ", DataTypeName(l.dtype), " ", Im2colGeometryToString(g),
      " from channel_rows columns [N, C*KH*KW, OH*OW]; planes form: ",
      l.flat_rows ? absl::StrCat("the dense NCHW image as [N*C*H, W] = [", image_rows, ", ", g.w,
                                 "] in runs of ", l.tile_h, " whole rows, ", l.num_tiles,
                                 " tiles")
                  : absl::StrCat(g.n * g.c, " planes x ", l.tiles_h, " x ", l.tiles_w, " = ",
                                 l.num_tiles, " tiles of ", l.tile_h, "x", l.tile_w, " pixels"),
      "; each thread sums ", l.vector_elems,
      " neighbouring pixel(s) straight from the column matrix (for each, the window positions "
      "reaching it, oh then ow ascending) and stores them, at most ", l.items_per_thread,
      " per thread per tile"));
  return absl::OkStatus();
}

// The patches form (planes_gather=patches): tiles of patch_rows kernel rows x patch_oh
// window rows of one plane, staged whole in shared memory and stored as whole image rows.
absl::Status LowerPatches(const Col2imOp& op, const Target& target, const LaunchParams& launch,
                          LoweredCol2im& l) {
  const Im2colGeometry& g = l.geometry;
  if (const std::string blocker = PatchesBlocker(op); !blocker.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        kCol2imPlanesGatherKey, "=patches: ", blocker, "; use ", kCol2imPlanesGatherKey,
        "=element"));
  }
  TT_ASSIGN_OR_RETURN(const PatchesPlan plan, PlanPatches(g, launch.tile, l.element_bytes));
  l.m = g.n * g.c * g.kh * g.kw;
  l.k = l.oh * l.ow;
  l.patch_rows = plan.rows;
  l.patch_oh = plan.oh;
  l.patch_row_tiles = plan.row_tiles;
  l.patch_oh_tiles = plan.oh_tiles;
  l.num_tiles = plan.tiles;
  // The image rows a tile stores, whole.
  l.tile_h = l.patch_rows * l.patch_oh;
  l.tile_w = g.w;
  l.tiles_h = l.patch_row_tiles * l.patch_oh_tiles;
  l.tiles_w = 1;
  l.tile_bytes = l.tile_h * g.w * l.element_bytes;
  // Loads: the plan's span or runs of the matrix rows.
  const int64_t e = l.element_bytes;
  l.patch_load_elems = static_cast<int>(std::max<int64_t>(1, plan.matrix_align_bytes / e));
  // Stores: whole image rows of W elements.
  std::string limit;
  const int legal = WidestVector(l.element_bytes, true, "", {{"W=", g.w}}, &limit);
  TT_ASSIGN_OR_RETURN(l.vector_elems, ChooseVectorWidth(l.hints, legal, l.element_bytes, limit,
                                                        " along W", l.decision_log));
  l.items_per_thread = CeilDiv(l.tile_h * (g.w / l.vector_elems), launch.threads);
  l.shared_bytes = plan.stage_bytes;
  auto swept = [&](bool tma) {
    std::vector<std::string> why = {
        "channel_rows columns (F.fold's layout) have only the SIMT planes and patches forms"};
    if (tma && !target.HasTma()) why.push_back(absl::StrCat(target.ArchName(), " has no TMA (sm_90+)"));
    return why;
  };
  auto simt = [&] {
    std::vector<std::string> why;
    if (launch.stages != 1) {
      why.push_back(absl::StrCat("stages=", launch.stages,
                                 ": simt_col2im is not pipelined; use stages=1"));
    }
    CheckSharedFit(l.shared_bytes, launch.ctas_per_sm, target, why);
    for (std::string& reason : CheckPositions(g)) why.push_back(std::move(reason));
    return why;
  };
  const PathOption chain[] = {
      {Instruction::kTma, Col2imPathName(Col2imPath::kTmaSwept), [&] { return swept(true); }},
      {Instruction::kCpAsync, Col2imPathName(Col2imPath::kCpAsyncSwept),
       [&] { return swept(false); }},
      {Instruction::kSync, Col2imPathName(Col2imPath::kSimtPatches), simt},
  };
  TT_ASSIGN_OR_RETURN(size_t chosen, ChoosePath(chain, l.hints, "col2im", target, l.decision_log));
  l.path = Col2imPath::kSimtPatches;
  l.instruction = chain[chosen].instruction;
  l.decision_log.push_back(absl::StrCat(
      "col2im ", DataTypeName(l.dtype), " ", Im2colGeometryToString(g),
      " from channel_rows columns [N, C*KH*KW, OH*OW]; patches form (the windows tile the "
      "image exactly: each pixel is one column-matrix element): ",
      g.n * g.c, " planes x ", l.patch_row_tiles, " x ", l.patch_oh_tiles, " = ", l.num_tiles,
      " tiles of ", l.patch_rows, " kernel row(s) x ", l.patch_oh,
      " window row(s); each tile loads the ", l.patch_rows * g.kw, " matrix rows of its taps (",
      l.patch_oh == l.oh ? "one contiguous span" : absl::StrCat("runs of ", l.patch_oh * l.ow,
                                                                 " elements"),
      ") in ", l.patch_load_elems * e, "-byte vectors into shared memory (",
      plan.stage_bytes, " B), then stores its ", l.tile_h, " whole image rows in ",
      l.vector_elems * e, "-byte vectors, at most ", l.items_per_thread,
      " per thread per tile"));
  return absl::OkStatus();
}

}  // namespace

std::string Col2imPathName(Col2imPath path) {
  switch (path) {
    case Col2imPath::kCpAsyncSwept: return "cp_async_col2im";
    case Col2imPath::kTmaSwept: return "tma_col2im";
    default: return "simt_col2im";
  }
}

std::string Col2imFormName(Col2imPath path) {
  switch (path) {
    case Col2imPath::kSimtStaged: return "staged";
    case Col2imPath::kSimtPlanes: return "planes";
    case Col2imPath::kSimtPlanesStaged: return "planes_staged";
    case Col2imPath::kSimtPatches: return "patches";
    case Col2imPath::kCpAsyncSwept:
    case Col2imPath::kTmaSwept: return "swept";
    default: return "direct";
  }
}

int64_t PlanesStageBytes(const LoweredCol2im& l) {
  return RoundUp(l.geometry.kh * l.geometry.kw * l.stage_rows * l.ow * l.element_bytes, 16);
}

std::string PatchesBlocker(const Col2imOp& op) {
  if (op.order != ColumnOrder::kChannelRows) {
    return "the windows must tile a dense NCHW image exactly, but the columns are not "
           "channel_rows";
  }
  return ExactPatchesBlocker(op.geometry, op.img.strides);
}

bool Col2imSwept(Col2imPath path) {
  return path == Col2imPath::kCpAsyncSwept || path == Col2imPath::kTmaSwept;
}

int64_t Col2imChannelsPerThread(const LoweredCol2im& l) {
  return l.geometry.c * l.element_bytes <= 16 ? l.geometry.c : l.vector_elems;
}

absl::StatusOr<LoweredCol2im> LowerCol2im(const Col2imOp& op, const Target& target,
                                          const LaunchParams& launch) {
  TT_RETURN_IF_ERROR(ValidateCol2imOp(op));
  TT_RETURN_IF_ERROR(CheckLaunch(launch, target));
  LoweredCol2im l;
  l.op = Col2imOp::Name();
  l.input_name = "col";
  l.output_name = "img";
  l.target = target;
  l.dtype = op.img.dtype;
  l.element_bytes = DataTypeBytes(l.dtype);
  TT_ASSIGN_OR_RETURN(l.hints, ResolveHints(op.hints, Col2imHintScope()));
  l.launch = launch;
  l.stages = launch.stages;
  const std::string hint_text = HintsToString(l.hints);
  l.decision_log.push_back(absl::StrCat("target ", target.ArchName(), "; hints: ",
                                        hint_text.empty() ? "none" : hint_text));
  TT_RETURN_IF_ERROR(PlaceTiles(op, launch, l));
  if (op.order == ColumnOrder::kChannelRows) {
    l.order = op.order;
    const auto gather = l.hints.choices.find(kCol2imPlanesGatherKey);
    if (gather != l.hints.choices.end() && gather->second == "patches") {
      TT_RETURN_IF_ERROR(LowerPatches(op, target, launch, l));
    } else {
      TT_RETURN_IF_ERROR(LowerPlanes(target, launch, l));
    }
    l.path_name = Col2imPathName(l.path);
    l.form_name = Col2imFormName(l.path);
    FinishLowering(target, l);
    return l;
  }

  if (const auto gather = l.hints.choices.find(kCol2imPlanesGatherKey);
      gather != l.hints.choices.end() && gather->second != "element") {
    return absl::InvalidArgumentError(absl::StrCat(
        kCol2imPlanesGatherKey, "=", gather->second,
        " applies to channel_rows columns (F.fold's layout) only; these are pixel rows"));
  }
  std::string vector_limit;
  const int legal = LegalVectorElems(l, &vector_limit);
  TT_ASSIGN_OR_RETURN(l.vector_elems, ChooseVectorWidth(l.hints, legal, l.element_bytes,
                                                        vector_limit, " along C", l.decision_log));
  l.items_per_thread =
      CeilDiv(l.tile_h * l.tile_w * (l.geometry.c / l.vector_elems), launch.threads);
  // The simt path's form follows through_shared; the swept form's plan is checked by its
  // own path.
  const Col2imPath simt =
      launch.through_shared ? Col2imPath::kSimtStaged : Col2imPath::kSimtDirect;
  l.path = simt;
  if (simt == Col2imPath::kSimtStaged) l.stage = PlanStage(l);
  LoweredCol2im tma = l;
  tma.path = Col2imPath::kTmaSwept;
  PlanSweep(tma);
  LoweredCol2im cp_async = l;
  cp_async.path = Col2imPath::kCpAsyncSwept;
  PlanSweep(cp_async);

  const PathOption chain[] = {
      {Instruction::kTma, Col2imPathName(Col2imPath::kTmaSwept),
       [&] { return CheckSwept(target, launch, tma); }},
      {Instruction::kCpAsync, Col2imPathName(Col2imPath::kCpAsyncSwept),
       [&] { return CheckSwept(target, launch, cp_async); }},
      {Instruction::kSync, Col2imPathName(simt), [&] { return CheckSimt(target, launch, l); }},
  };
  TT_ASSIGN_OR_RETURN(size_t chosen, ChoosePath(chain, l.hints, "col2im", target, l.decision_log));
  if (chosen == 0) l = std::move(tma);
  if (chosen == 1) l = std::move(cp_async);
  l.instruction = chain[chosen].instruction;
  l.path_name = Col2imPathName(l.path);
  l.form_name = Col2imFormName(l.path);
  const Im2colGeometry& g = l.geometry;
  if (l.path == Col2imPath::kSimtStaged) {
    l.shared_bytes = StageBytes(l);
    l.decision_log.push_back(absl::StrCat(
        "staged form (through_shared): per tile, up to ", l.stage.rows, " window rows x ",
        l.stage.cols, " window columns reach it; of each matrix row the taps kh landing in "
        "its rows (up to ", l.stage.taps_h, " of ", g.kh, ": a run of up to ",
        l.stage.run_elems, " elements) is copied to shared memory as the up to ",
        l.stage.chunks, " aligned 16-byte chunks covering it (", l.shared_bytes, " B)"));
    l.decision_log.push_back(absl::StrCat(
        "then each thread sums its pixels' taps from shared memory, ", l.vector_elems,
        " channel(s) at a time, at most ", l.items_per_thread, " vectors per thread per tile"));
  } else if (Col2imSwept(l.path)) {
    l.shared_bytes = l.sweep.buffers * l.sweep.BufferBytes();
    const bool tma = l.path == Col2imPath::kTmaSwept;
    if (tma) l.barriers = static_cast<int>(2 * l.sweep.buffers);  // full and empty
    l.decision_log.push_back(absl::StrCat(
        "swept form: per tile the window rows reaching it, last to first; of each, the "
        "matrix rows of up to ", l.sweep.cols, " window columns (contiguous, up to ",
        l.sweep.chunks, " aligned 16-byte chunks), ",
        tma ? "every tap row, copied by one 1-D bulk copy completing on the buffer's full "
              "mbarrier; one thread refills a buffer once every warp has arrived on its empty "
              "mbarrier"
            : "what holds a tap landing in the tile, copied as 16-byte chunks by cp.async; a "
              "CTA barrier closes each window row",
        ", into one of ", l.sweep.buffers, " rotating buffers (", l.shared_bytes, " B)",
        tma && l.launch.ctas_per_sm > 0 ? "; the persistent grid's producer runs ahead into "
                                          "the CTA's next tile"
                                        : ""));
    l.decision_log.push_back(absl::StrCat(
        l.sweep.row_groups, " band(s) of ", l.sweep.group_rows, " tile rows, ",
        l.sweep.group_threads, " threads each, ", l.sweep.per_row, " of a row's ",
        l.sweep.row_items, " items per thread; each thread keeps ", l.sums_per_thread,
        " f32 sums in registers over the sweep and adds a buffer's taps ", l.vector_elems,
        " channel(s) at a time"));
  } else {
    l.decision_log.push_back(absl::StrCat(
        "direct form: each thread sums its pixel's taps straight from the column matrix, ",
        l.vector_elems, " channel(s) per load, consecutive threads on consecutive channels; at "
        "most ", l.items_per_thread, " vectors per thread per tile"));
  }
  if (l.hints.loop_layout.has_value()) {
    l.decision_log.push_back("loop_layout does not apply: col2im's threads walk channels fastest");
  }
  FinishLowering(target, l);
  return l;
}

std::string DescribeCol2imPlan(const LoweredCol2im& l) {
  const Im2colGeometry& g = l.geometry;
  std::string out = PlanHeader(l);
  if (l.order == ColumnOrder::kChannelRows) {
    absl::StrAppend(&out, "columns     [", g.n, ", ", g.c * g.kh * g.kw, ", ", l.k,
                    "] (channel_rows: [N, C*KH*KW, OH*OW], F.fold's layout), read\n");
  } else {
    absl::StrAppend(&out, "columns     [", l.m, ", ", l.k, "] (M = N*OH*OW, K = KH*KW*C), read\n");
  }
  absl::StrAppend(&out, "image       NHWC [", g.n, ", ", g.h, ", ", g.w, ", ", g.c, "], strides [",
                  absl::StrJoin(l.img_strides, ", "), "], written\n");
  absl::StrAppend(&out, "window      kernel ", g.kh, "x", g.kw, ", stride ", g.sh, "x", g.sw,
                  ", dilation ", g.dh, "x", g.dw, ", pad ", g.ph, "x", g.pw, " -> output ", l.oh,
                  "x", l.ow, "\n");
  if (l.path == Col2imPath::kSimtPatches) {
    absl::StrAppend(&out, "tile        ", l.patch_rows, " kernel row(s) x ", l.patch_oh,
                    " window row(s) of one plane: ", l.tile_h, " whole image rows (",
                    l.tile_bytes, " B), ", g.n * g.c, " x ", l.patch_row_tiles, " x ",
                    l.patch_oh_tiles, " = ", l.num_tiles, " tiles\n");
  } else if (l.order == ColumnOrder::kChannelRows && l.flat_rows) {
    absl::StrAppend(&out, "tile        ", l.tile_h, " rows of the image as [N*C*H, W] (",
                    l.tile_bytes, " B), ", l.num_tiles, " tiles\n");
  } else if (l.order == ColumnOrder::kChannelRows) {
    absl::StrAppend(&out, "tile        ", l.tile_h, "x", l.tile_w, " pixels of one plane (",
                    l.tile_bytes, " B), ", g.n * g.c, " x ", l.tiles_h, " x ", l.tiles_w, " = ",
                    l.num_tiles, " tiles\n");
  } else {
    absl::StrAppend(&out, "tile        ", l.tile_h, "x", l.tile_w, " pixels x ", g.c,
                    " channels (", l.tile_bytes, " B), ", g.n, " x ", l.tiles_h, " x ",
                    l.tiles_w, " = ", l.num_tiles, " tiles\n");
  }
  absl::StrAppend(&out, "threads     ", l.launch.threads, "\n");
  const bool planes = l.order == ColumnOrder::kChannelRows;
  absl::StrAppend(&out, "vector      ", l.vector_elems, " elements (",
                  l.vector_elems * l.element_bytes, " B) along ", planes ? "W" : "C",
                  ", at most ", l.items_per_thread, " per thread per tile\n");
  absl::StrAppend(&out, planes ? "order       kh descending, then kw (F.fold's); f32 sums, one "
                                 "rounding\n"
                               : "order       kh ascending, then kw; f32 sums, one rounding\n");
  if (Col2imSwept(l.path)) {
    absl::StrAppend(&out, "sweep       ", l.sweep.buffers, " buffers of ", l.sweep.chunks,
                    " 16-byte chunks (one window row, up to ", l.sweep.cols,
                    " window columns), ", l.sweep.row_groups, " band(s) of ",
                    l.sweep.group_rows, " rows x ", l.sweep.group_threads, " threads, ",
                    l.sums_per_thread, " f32 sums per thread\n");
  }
  if (l.path == Col2imPath::kSimtPatches) {
    absl::StrAppend(&out, "stage       ", l.patch_rows * g.kw, " matrix rows x ", l.patch_oh * l.ow,
                    " elements (", l.shared_bytes, " B), loaded in ",
                    l.patch_load_elems * l.element_bytes, "-byte vectors\n");
  }
  if (l.path == Col2imPath::kSimtPlanesStaged) {
    absl::StrAppend(&out, "stage       ", l.geometry.kh * l.geometry.kw, " taps x ", l.stage_rows,
                    " window rows x ", l.ow, " columns (", PlanesStageBytes(l),
                    " B), then each warp's 32 vectors\n");
  }
  if (l.path == Col2imPath::kSimtStaged) {
    absl::StrAppend(&out, "stage       ", l.stage.rows, " window rows x ", l.stage.cols,
                    " columns x runs of up to ", l.stage.run_elems, " elements (", l.stage.taps_h,
                    " tap rows), ", l.stage.chunks, " 16-byte chunks per slot\n");
  }
  absl::StrAppend(&out, PlanFooter(l, absl::StrCat("columns ",
                                                   l.col_policy ? EvictionPolicyName(*l.col_policy)
                                                                : std::string("none"),
                                                   ", image ",
                                                   l.img_policy ? EvictionPolicyName(*l.img_policy)
                                                                : std::string("none"))));
  return out;
}

}  // namespace tiletune

#include "compiler/ops/im2col/im2col_lowering.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
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
constexpr int64_t kTwoTo32 = int64_t{1} << 32;
constexpr int64_t kTwoTo40 = int64_t{1} << 40;
// Rows one TMA store box may span.
constexpr int64_t kMaxTmaBoxDim = 256;
// The planes form's span gather holds a vector's blocks in registers: at most this many.
constexpr int64_t kMaxSpanBlocks = 3;

// Largest channel box for TMA: a divisor of gcd(C, block_K), at most 256 channels, whose
// bytes are a multiple of 16. 0 if there is none.
int64_t TmaChannelBox(int64_t c, int64_t block_k, int element_bytes) {
  int64_t g = std::gcd(c, block_k);
  for (int64_t d = std::min<int64_t>(g, kTmaIm2colMaxChannelsPerPixel); d >= 1; --d) {
    if (g % d == 0 && (d * element_bytes) % 16 == 0) return d;
  }
  return 0;
}

// Per-path feasibility: the reasons a path cannot be used, empty when it can.
class PathChecks {
 public:
  PathChecks(const Target& target, const LaunchParams& launch, const LoweredIm2col& lowered)
      : target_(target), launch_(launch), l_(lowered) {}

  std::vector<std::string> Tma() const {
    std::vector<std::string> why;
    const Im2colGeometry& g = l_.geometry;
    const int e = l_.element_bytes;
    if (!target_.HasTma()) why.push_back(absl::StrCat(target_.ArchName(), " has no TMA (sm_90+)"));
    if (l_.hints.disable_tma) why.push_back("disable_tma is set");
    if (l_.img_strides[3] != 1) {
      why.push_back(absl::StrCat("the image's C stride is ", l_.img_strides[3],
                                 " (TMA needs contiguous channels)"));
    }
    const char* names[] = {"N", "H", "W"};
    for (int d = 0; d < 3; ++d) {
      int64_t bytes = l_.img_strides[d] * e;
      if (bytes % 16 != 0 || bytes >= kTwoTo40) {
        why.push_back(absl::StrCat("the image's ", names[d], " stride is ", bytes,
                                   " B (TMA needs a multiple of 16 B below 2^40)"));
      }
    }
    for (int64_t extent : {g.n, g.h, g.w, g.c}) {
      if (extent > kTwoTo32) {
        why.push_back(absl::StrCat("image extent ", extent, " exceeds 2^32"));
        break;
      }
    }
    if (l_.m >= kTwoTo31 || l_.k >= kTwoTo31) {
      why.push_back(absl::StrCat("column matrix [", l_.m, ", ", l_.k,
                                 "] needs coordinates below 2^31"));
    }
    int64_t box = TmaChannelBox(g.c, l_.block_k, e);
    if (box == 0) {
      why.push_back(absl::StrCat(
          "no channel box fits: TMA im2col loads a multiple of 16 B of channels (",
          16 / std::min(e, 16), " ", DataTypeName(l_.dtype), " elements) dividing both C=", g.c,
          " and block_K=", l_.block_k));
    } else if (l_.block_k / box > kTmaIm2colMaxChunksPerTile) {
      why.push_back(absl::StrCat("block_K=", l_.block_k, " in channel boxes of ", box, " is ",
                                 l_.block_k / box, " TMA loads per tile (at most ",
                                 kTmaIm2colMaxChunksPerTile, ")"));
    }
    if (l_.block_m > kTmaIm2colMaxPixelsPerColumn) {
      why.push_back(absl::StrCat("block_M=", l_.block_m, " exceeds the ",
                                 kTmaIm2colMaxPixelsPerColumn, " pixels per column of TMA im2col"));
    } else if (l_.block_m > kMaxTmaBoxDim && l_.block_m % kMaxTmaBoxDim != 0) {
      why.push_back(absl::StrCat("block_M=", l_.block_m,
                                 " above 256 must be a multiple of 256 (TMA store box rows)"));
    }
    for (auto [axis, stride] : {std::pair<const char*, int64_t>{"h", g.sh}, {"w", g.sw}}) {
      if (stride > kTmaIm2colMaxTraversalStride) {
        why.push_back(absl::StrCat("stride s", axis, "=", stride,
                                   " exceeds the TMA traversal stride limit of ",
                                   kTmaIm2colMaxTraversalStride));
      }
    }
    Im2colBoxCorners corners = TmaIm2colBoxCorners(g);
    for (auto [name, value] : {std::pair<const char*, int64_t>{"lower h", corners.lower_h},
                               {"lower w", corners.lower_w},
                               {"upper h", corners.upper_h},
                               {"upper w", corners.upper_w}}) {
      if (value < kTmaIm2colMinCorner || value > kTmaIm2colMaxCorner) {
        why.push_back(absl::StrCat("box corner ", name, " = ", value,
                                   " is outside the [-128, 127] a rank-4 im2col map encodes"));
      }
    }
    for (auto [axis, offset] : {std::pair<const char*, int64_t>{"h", (g.kh - 1) * g.dh},
                                {"w", (g.kw - 1) * g.dw}}) {
      if (offset > kTmaIm2colMaxOffset) {
        why.push_back(absl::StrCat("largest im2col offset (k", axis, "-1)*d", axis, " = ", offset,
                                   " exceeds the 8-bit offsets of a rank-4 im2col load (255)"));
      }
    }
    if (box != 0) {
      int64_t chunk = RoundUp(l_.block_m * box * e, 128);
      CheckSharedFit(chunk * (l_.block_k / box) * launch_.stages, launch_.ctas_per_sm, target_,
                     why);
    }
    return why;
  }

  std::vector<std::string> Simt() const {
    std::vector<std::string> why;
    if (launch_.stages != 1) {
      why.push_back(absl::StrCat("stages=", launch_.stages,
                                 ": simt_im2col is not pipelined; use stages=1"));
    }
    if (l_.path == Im2colPath::kSimtRow && l_.items_per_thread > kMaxSimtItemsPerThread) {
      why.push_back(absl::StrCat(l_.items_per_thread, " vector accesses per thread exceeds ",
                                 kMaxSimtItemsPerThread, "; use more threads or a smaller tile"));
    }
    return why;
  }

 private:
  const Target& target_;
  const LaunchParams& launch_;
  const LoweredIm2col& l_;
};

// Widest vector along C (elements, power of two, <= 16 B) that C, block_K and the image
// strides allow; the column matrix's row stride K = KH*KW*C follows from C.
int LegalVectorElems(const LoweredIm2col& l, std::string* limit) {
  const std::vector<VectorConstraint> constraints = {{"C=", l.geometry.c},
                                                     {"block_K=", l.block_k},
                                                     {"image N stride", l.img_strides[0]},
                                                     {"image H stride", l.img_strides[1]},
                                                     {"image W stride", l.img_strides[2]}};
  return WidestVector(l.element_bytes, l.img_strides[3] == 1,
                      absl::StrCat("image C stride ", l.img_strides[3]), constraints, limit);
}

// row_vector=window_row: the widest vector along a kernel row (LoweredIm2col::
// window_row_vector), or 0 with `blocker` saying why the image's layout rules it out.
int WindowRowVectorElems(const LoweredIm2col& l, std::string* limit, std::string* blocker) {
  const Im2colGeometry& g = l.geometry;
  std::vector<std::string> unmet;
  if (l.img_strides[3] != 1) {
    unmet.push_back(absl::StrCat("the image's C stride 1 (not ", l.img_strides[3], ")"));
  }
  if (l.img_strides[2] != g.c) {
    unmet.push_back(absl::StrCat("W stride C=", g.c, " (not ", l.img_strides[2], ")"));
  }
  if (g.dw != 1) unmet.push_back(absl::StrCat("dilation_w 1 (not ", g.dw, ")"));
  if (!unmet.empty()) {
    *blocker = absl::StrCat("it needs ", absl::StrJoin(unmet, ", "));
    return 0;
  }
  const std::vector<VectorConstraint> constraints = {{"KW x C=", g.kw * g.c},
                                                     {"stride_w x C=", g.sw * g.c},
                                                     {"pad_w x C=", g.pw * g.c},
                                                     {"W x C=", g.w * g.c},
                                                     {"block_K=", l.block_k},
                                                     {"image N stride", l.img_strides[0]},
                                                     {"image H stride", l.img_strides[1]}};
  return WidestVector(l.element_bytes, true, "", constraints, limit);
}

// The row form's vector along a kernel row where row_vector=window_row asks for it and it
// is wider than along C: sets window_row_vector and replaces `legal` and `limit` with the
// kernel row's; otherwise the log says why not.
bool ChooseWindowRow(LoweredIm2col& l, int& legal, std::string& limit) {
  auto choice = l.hints.choices.find(kRowVectorKey);
  if (choice == l.hints.choices.end() || choice->second != "window_row") return false;
  std::string run_limit, blocker;
  const int run = WindowRowVectorElems(l, &run_limit, &blocker);
  if (blocker.empty() && run <= legal) {
    blocker = absl::StrCat("along a kernel row a vector gets ", run, " element(s)",
                           run_limit.empty() ? "" : absl::StrCat(" (limited by ", run_limit, ")"),
                           ", no more than along C");
  }
  if (!blocker.empty()) {
    l.decision_log.push_back(absl::StrCat(kRowVectorKey, "=window_row not taken: ", blocker));
    return false;
  }
  l.window_row_vector = true;
  legal = run;
  limit = run_limit;
  return true;
}

// Widest store (elements, power of two, <= 16 B) that divides a tile's run of
// block_M * K elements, so every tile starts aligned.
int FlatVectorElems(const LoweredIm2col& l) {
  int v = 16 / l.element_bytes;
  while (v > 1 && (l.block_m * l.k) % v != 0) v /= 2;
  return v;
}

// Shared memory of the flat form: the tile's block_M rows.
int64_t FlatSharedBytes(const LoweredIm2col& l) { return RoundUp(l.block_m * l.k * l.element_bytes, 16); }

// x with a x = 1 modulo m, for a coprime to m (0 when m is 1).
int64_t InverseModulo(int64_t a, int64_t m) {
  int64_t r0 = m, r1 = a % m, t0 = 0, t1 = 1;
  while (r1 != 0) {
    const int64_t q = r0 / r1;
    std::tie(r0, r1) = std::make_pair(r1, r0 - q * r1);
    std::tie(t0, t1) = std::make_pair(t1, t0 - q * t1);
  }
  return ((t0 % m) + m) % m;
}

// The staged form's input box, when the tile is whole output rows of an image with
// contiguous pixels; none otherwise. Its vector (at least 4 B, wider than C allows) must
// repeat its pattern within an output row: the run's vectors repeat their (row, column)
// phase every period_rows = V / gcd(K, V) rows, which must divide OW. With
// staged_gather=row_phase and a tile of one output row, the 16-byte vector at each row's
// own phase instead (InputBox::row_phase), whatever OW.
std::optional<LoweredIm2col::InputBox> PlanInputBox(const LoweredIm2col& l) {
  LoweredIm2col::InputBox box;
  const Im2colGeometry& g = l.geometry;
  const int64_t e = l.element_bytes;
  if (l.block_m % l.ow != 0 || l.img_strides[3] != 1 || l.img_strides[2] != g.c) {
    return std::nullopt;
  }
  int64_t vector = 16 / e;
  auto choice = l.hints.choices.find(kStagedGatherKey);
  if (choice != l.hints.choices.end() && choice->second == "row_phase" && l.block_m == l.ow &&
      vector > l.vector_elems && l.ow * l.k >= 2 * vector) {
    // Each row at its own phase, with the widest vector, whether or not a period divides OW.
    box.row_phase = true;
    box.phase_unit = std::gcd(l.k, vector);
    box.period_vectors = l.k / box.phase_unit;
    box.vector_inverse = InverseModulo(vector / box.phase_unit, box.period_vectors);
  } else {
    while (vector * e >= 4 && l.ow % (vector / std::gcd(l.k, vector)) != 0) vector /= 2;
    if (vector * e < 4 || vector <= l.vector_elems) return std::nullopt;
    box.period_rows = vector / std::gcd(l.k, vector);
    box.period_vectors = l.k / std::gcd(l.k, vector);
  }
  box.vector_elems = static_cast<int>(vector);
  box.unit_bytes = static_cast<int>(std::min<int64_t>(e, 4));
  box.pixels = (l.ow - 1) * g.sw + (g.kw - 1) * g.dw + 1;
  box.copy_pixels = std::max<int64_t>(0, std::min(g.w, box.pixels - g.pw));
  // Every image row starts at a multiple of the load width.
  int load = 16;
  while (load > e && ((l.img_strides[0] * e) % load != 0 || (l.img_strides[1] * e) % load != 0)) {
    load /= 2;
  }
  box.load_bytes = std::max<int>(load, static_cast<int>(e));
  const int64_t lead_bytes = (box.load_bytes - (g.pw * g.c * e) % box.load_bytes) % box.load_bytes;
  box.lead_elems = lead_bytes / e;
  box.pitch_elems = RoundUp(lead_bytes + box.pixels * g.c * e, box.load_bytes) / e;
  // The offset table (one entry per unit of each vector of a period, or of each column a
  // vector starts at) comes first. An offset used stays within one output row's KH box
  // rows; with row_phase, entries no vector of the row uses may reach past it, and the
  // largest entry decides. 16 bits hold them when they fit.
  int64_t largest = g.kh * box.pitch_elems * e;
  if (box.row_phase) {
    const int64_t pixels_on = (l.k - 1 + vector - 1) / l.k;  // past the vector's first pixel
    largest = std::max(largest, ((g.kh - 1) * box.pitch_elems + box.lead_elems +
                                 (pixels_on * g.sw + (g.kw - 1) * g.dw + 1) * g.c) * e);
  }
  box.entry_bytes = largest <= 0xffff ? 2 : 4;
  box.offset_bytes =
      RoundUp(box.period_vectors * vector * e / box.unit_bytes * box.entry_bytes, 16);
  box.rows_per_tile = l.block_m / l.ow;
  return box;
}

int64_t InputBoxBytes(const LoweredIm2col& l, const LoweredIm2col::InputBox& box) {
  return box.rows_per_tile * l.geometry.kh * box.pitch_elems * l.element_bytes;
}

// How far ahead the bulk fill prefetches image rows into L2, in waves of resident CTAs, so
// a CTA's rows were fetched from DRAM while the CTAs before it stored (two to four waves
// measure alike; none is slower).
constexpr int kPrefetchWaves = 3;
// 32-bit registers per SM (sm_70 to sm_121), allocated to a thread in units of 8.
constexpr int64_t kRegistersPerSm = 65536;
constexpr int64_t kRegisterUnit = 8;
// The fewest registers per thread the bulk-filled kernel is held to: fewer registers ran
// faster down to this cap, with no spills, even where the occupancy did not change
// (registers that would hold one more CTA let the next CTA start sooner, it seems).
constexpr int64_t kMinRegisterCap = 24;

// Bytes from the image's first element to one past its farthest, whatever its strides.
int64_t ImageSpanBytes(const LoweredIm2col& l) {
  const Im2colGeometry& g = l.geometry;
  return ((g.n - 1) * l.img_strides[0] + (g.h - 1) * l.img_strides[1] +
          (g.w - 1) * l.img_strides[2] + (g.c - 1) * l.img_strides[3] + 1) *
         l.element_bytes;
}

// The staged form's fill engine: bulk copies where the target has TMA, the hints allow it
// and each box row's in-image part is whole 16-byte units (16-byte aligned rows).
void ChooseBoxFill(const Target& target, const LaunchParams& launch, LoweredIm2col& l) {
  LoweredIm2col::InputBox& box = l.box;
  box.bulk_fill = target.HasTma() && !l.hints.disable_tma && box.load_bytes == 16 &&
                  StagedRowCopyBytes(l) >= 16;
  if (!box.bulk_fill) return;
  int64_t resident =
      ResidentCtasPerSm(target, launch.threads, box.offset_bytes + InputBoxBytes(l, box));
  if (launch.ctas_per_sm > 0) resident = std::min<int64_t>(resident, launch.ctas_per_sm);
  box.resident_ctas = static_cast<int>(resident);
  box.prefetch_waves = kPrefetchWaves;
  box.image_span_bytes = ImageSpanBytes(l);
  auto choice = l.hints.choices.find(kImgPrefetchKey);
  const int64_t l2 = target.MinL2Bytes();
  box.prefetch_all = choice != l.hints.choices.end()
                         ? choice->second == "all"
                         : l2 > 0 && box.image_span_bytes <= l2 / kPrefetchAllL2Fraction &&
                               l.m * l.k * l.element_bytes >= l2;
  const int64_t room = kRegistersPerSm / ((box.resident_ctas + 1) * launch.threads) /
                       kRegisterUnit * kRegisterUnit;
  box.max_registers = room >= kMinRegisterCap ? static_cast<int>(std::min<int64_t>(room, 255)) : 0;
}

// Why the phase gather cannot serve this staged kernel ("" when it can); sets its groups,
// lead and shared bytes when it can.
std::string PlanPhaseGather(const Target& target, const LaunchParams& launch, LoweredIm2col& l) {
  LoweredIm2col::InputBox& box = l.box;
  const Im2colGeometry& g = l.geometry;
  const int64_t e = l.element_bytes;
  if (!box.bulk_fill) return "it needs the bulk fill";
  if (box.rows_per_tile != 1 || launch.ctas_per_sm != 0) {
    return "it needs one output row per tile and one tile per CTA";
  }
  if (l.img_strides[1] != g.w * g.c) return "it needs image rows back to back (H stride = W x C)";
  if (g.dh != 1) return "it needs dilation_h = 1 (the kernel rows consecutive image rows)";
  if (e != 2) return "it needs 2-byte elements";
  if (g.kh >= 32) return "it needs fewer than 32 kernel rows (a bit mask of them)";
  const int64_t periods = l.ow / box.period_rows;
  int64_t groups = 0;
  for (int64_t d = 1; d <= periods; ++d) {
    if (periods % d == 0 && d * box.period_vectors < launch.threads) groups = d;
  }
  if (groups == 0) {
    return absl::StrCat("a period of ", box.period_vectors, " vectors needs more than the ",
                        launch.threads, " threads (one fills the box)");
  }
  // Pixels with units left of the image must all lie in the first period, those right of
  // it in the last.
  const int64_t left = CeilDiv(g.pw, g.sw);
  const int64_t reach = (g.kw - 1) * g.dw - g.pw;  // rightmost tap of pixel 0, from iw = 0
  const int64_t right = g.w - reach <= 0 ? 0 : CeilDiv(g.w - reach, g.sw);  // first pixel past
  if (left > box.period_rows || (right < l.ow && right < l.ow - box.period_rows)) {
    return "it needs the padding columns within the first and last period of a row";
  }
  const int64_t row_bytes = g.w * g.c * e;
  const int64_t lead = RoundUp(g.pw * g.c * e, 16);
  const int64_t last_pixel = (l.ow - 1) * g.sw + (g.kw - 1) * g.dw - g.pw;  // from iw = 0
  const int64_t slack = RoundUp(std::max<int64_t>(0, (last_pixel + 1 - g.w) * g.c * e), 16);
  // The largest offset: period 0's last unit in kernel row KH - 1.
  const int64_t x_max = ((box.period_rows - 1) * g.sw + (g.kw - 1) * g.dw) * g.c + g.c - 1;
  if (lead + ((g.kh - 1) * g.w * g.c + x_max - g.pw * g.c) * e > 0xffff) {
    return "its offsets within the box do not fit 16 bits";
  }
  const int64_t bytes = lead + g.kh * row_bytes + slack;
  if (bytes > target.MaxSharedBytesPerBlock() - kReservedShared) {
    return absl::StrCat("its ", g.kh, " whole image rows (", bytes,
                        " B) do not fit in shared memory");
  }
  box.phase_groups = static_cast<int>(groups);
  box.phase_lead_bytes = lead;
  box.phase_bytes = bytes;
  return "";
}

// The staged form's gather: the phase form where the annotation asks for it and it applies,
// the table otherwise (at each row's own phase where staged_gather=row_phase planned it).
// The phase form ties with the table on some layers and loses on others
// (bench/im2col_benchmark has both), so it is the tuner's choice, not the default.
void ChooseGather(const Target& target, const LaunchParams& launch, LoweredIm2col& l) {
  LoweredIm2col::InputBox& box = l.box;
  auto choice = l.hints.choices.find(kStagedGatherKey);
  const bool asked = choice != l.hints.choices.end();
  if (asked && choice->second == "row_phase") {
    box.gather_reason =
        box.row_phase ? "staged_gather=row_phase"
                      : "staged_gather=row_phase not taken: it needs one output row per tile "
                        "(block_M = OW) of at least two 16-byte vectors wider than C allows";
    return;
  }
  const std::string blocker = PlanPhaseGather(target, launch, l);
  if (!blocker.empty()) {
    box.gather_reason = absl::StrCat(asked && choice->second == "phase"
                                         ? "staged_gather=phase not taken: "
                                         : "not the phase gather: ",
                                     blocker);
    return;
  }
  if (asked) {
    box.phase_gather = choice->second == "phase";
    box.gather_reason = absl::StrCat(kStagedGatherKey, "=", choice->second);
  } else {
    box.gather_reason = "the default; staged_gather=phase would apply here";
  }
}

absl::Status CheckLaunch(const LaunchParams& launch, const Target& target) {
  if (launch.tile.size() != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "im2col tile [", absl::StrJoin(launch.tile, ", "),
        "]: give two extents, block_M (rows, output pixels) and block_K (columns, "
        "kernel taps x channels), e.g. --tile=128,64"));
  }
  return ValidateLaunchParams(launch, target);
}

// The column matrix, the tile over it and the tile counts.
absl::Status PlaceTiles(const Im2colOp& op, const LaunchParams& launch, LoweredIm2col& l) {
  const Im2colGeometry& g = op.geometry;
  l.geometry = g;
  l.img_strides = op.img.strides;
  l.oh = g.OH();
  l.ow = g.OW();
  l.m = g.M();
  l.k = g.K();
  l.block_m = launch.tile[0];
  l.block_k = launch.tile[1];
  l.tiles_m = CeilDiv(l.m, l.block_m);
  l.tiles_k = CeilDiv(l.k, l.block_k);
  l.num_tiles = l.tiles_m * l.tiles_k;
  l.tile_bytes = l.block_m * l.block_k * l.element_bytes;
  if (l.num_tiles >= kTwoTo31) {
    return absl::InvalidArgumentError(
        absl::StrCat(l.num_tiles, " tiles exceed the 2^31-1 CTA grid; use a larger tile"));
  }
  l.decision_log.push_back(absl::StrCat(
      "im2col ", DataTypeName(l.dtype), " ", Im2colGeometryToString(g), " with tile [",
      l.block_m, ", ", l.block_k, "]: ", l.tiles_m, " x ", l.tiles_k, " tiles of ", l.tile_bytes,
      " B", l.m % l.block_m ? ", M tail guarded" : "", l.k % l.block_k ? ", K tail guarded" : ""));
  return absl::OkStatus();
}

// The planes form's element gather, as the emitter's PlanesKernel runs it, for the first
// warp of the middle tile: thread j gathers vector j of the tile (the tile's run of whole
// matrix rows, or its segments of part rows), element e of every thread's vector in load
// instruction e; an element past the matrix, the run, or the image loads the image's first,
// and a thread with no vector of the tile makes no load.
std::optional<double> PlanesWarpLoadSectors(const LoweredIm2col& l) {
  const Im2colGeometry& g = l.geometry;
  const int64_t taps = g.kh * g.kw, v = l.vector_elems;
  const int64_t tile = l.num_tiles / 2;
  const int64_t m0 = tile / l.tiles_k * l.block_m, k0 = tile % l.tiles_k * l.block_k;
  const bool whole = l.block_k == l.k;
  const int64_t run = std::min(l.block_m, l.m - m0) * l.k;
  const int64_t seg_vectors = l.segment_elems / v;
  std::vector<std::vector<std::optional<int64_t>>> loads(v);
  for (int64_t j = 0; j < kWarpLanes; ++j) {
    // The vector's first element as (matrix row, column), and its elements in the matrix.
    int64_t r = 0, p = 0, valid = 0;
    if (whole ? j * v >= run : j >= l.segments * seg_vectors) {
      for (int64_t e = 0; e < v; ++e) loads[e].push_back(std::nullopt);
      continue;
    }
    if (whole) {
      r = m0 + j * v / l.k;
      p = j * v % l.k;
      valid = std::min(run - j * v, v);
    } else {
      r = m0 + j / seg_vectors;
      p = k0 + j % seg_vectors * v;
      valid = r < l.m && p < l.k ? v : 0;
    }
    for (int64_t e = 0; e < v; ++e) {
      // Element e steps along the matrix row, wrapping to the next as the kernel does.
      const int64_t at = r * l.k + p + e;
      const int64_t row = at / l.k, column = at % l.k;
      const int64_t plane = row / taps, kh = row % taps / g.kw, kw = row % taps % g.kw;
      const int64_t ih = column / l.ow * g.sh + kh * g.dh - g.ph;
      const int64_t iw = column % l.ow * g.sw + kw * g.dw - g.pw;
      const bool inside = e < valid && ih >= 0 && ih < g.h && iw >= 0 && iw < g.w;
      loads[e].push_back(inside ? (plane / g.c * l.img_strides[0] + plane % g.c * l.img_strides[3] +
                                   ih * l.img_strides[1] + iw * l.img_strides[2]) *
                                      l.element_bytes
                                : 0);
    }
  }
  return MeanWarpLoadSectors(loads);
}

// What every form ends with: the widest access, the L2 policies and the kernel's name.
void FinishLowering(const Target& target, LoweredIm2col& l) {
  l.vector_bytes = (l.path == Im2colPath::kSimtFlat || l.path == Im2colPath::kSimtStaged
                        ? l.flat_vector_elems
                        : l.vector_elems) *
                   l.element_bytes;
  if (l.path == Im2colPath::kSimtPlanes && l.patches) {
    // One read per element; warp_load_sectors stays unset: neighbouring threads load
    // neighbouring vectors of image rows.
    l.gather_reads = 1;
  } else if (l.path == Im2colPath::kSimtPlanes && !l.shared_gather && !l.span_gather) {
    l.gather_reads = 1;
    l.warp_load_sectors = PlanesWarpLoadSectors(l);
  }
  l.img_policy = ChooseL2Policy(l.hints.EvictionFor("img"), target, "image loads",
                                l.decision_log);
  l.col_policy = ChooseL2Policy(l.hints.EvictionFor("col"), target, "column stores",
                                l.decision_log);
  l.kernel_name = absl::StrCat("tt_im2col_", l.path_name);
}

// Why the planes form's span gather cannot serve this kernel ("" when it can); sets the
// blocks per vector and the image's bytes when it can.
std::string PlanSpanGather(LoweredIm2col& l) {
  const Im2colGeometry& g = l.geometry;
  const int64_t e = l.element_bytes;
  if (l.img_strides[2] != 1) {
    return absl::StrCat("it needs the image's W stride 1 (an image row's elements side by side), "
                        "not ", l.img_strides[2]);
  }
  if (l.vector_elems < 2) return "it needs vectors of 2 elements or more";
  // The worst start within a block: its last element slot.
  const int64_t blocks = CeilDiv(16 - e + ((l.vector_elems - 1) * g.sw + 1) * e, 16);
  if (blocks > kMaxSpanBlocks) {
    return absl::StrCat("a vector's ", l.vector_elems, " elements at stride_w ", g.sw,
                        " can span ", blocks, " aligned 16-B blocks, more than ",
                        kMaxSpanBlocks);
  }
  l.span_blocks = static_cast<int>(blocks);
  l.image_bytes = ImageSpanBytes(l);
  return "";
}

// Why the planes form's shared gather cannot serve this kernel ("" when it can); sets its
// box and shared memory when it can. A tile's rows reach box_planes planes at most (its
// block_M rows, from any row), its columns band_rows output rows at most.
std::string PlanSharedGather(const Target& target, LoweredIm2col& l) {
  const Im2colGeometry& g = l.geometry;
  const int64_t taps = g.kh * g.kw;
  if (taps <= g.sh * g.sw) {
    return absl::StrCat("its ", g.kh, "x", g.kw, " windows at stride ", g.sh, "x", g.sw,
                        " read each image element at most once: nothing to share");
  }
  const auto [planes, band] = SharedGatherReachOf(g, l.block_m, l.block_k);
  const int64_t rows = PlanesWindowRows(g, band), cols = PlanesWindowCols(g);
  const int64_t bytes = RoundUp(planes * rows * cols * l.element_bytes, 16);
  if (bytes > target.MaxSharedBytesPerBlock() - kReservedShared) {
    return absl::StrCat("the image windows of a tile's ", planes, " plane(s) and ", band,
                        " output row(s), ", rows, " x ", cols, " elements each (", bytes,
                        " B), do not fit in shared memory");
  }
  if (l.m >= kTwoTo31 || planes * rows * cols >= kTwoTo31) {
    return "it needs the matrix rows and the windows below 2^31 elements";
  }
  l.box_planes = planes;
  l.band_rows = band;
  l.box_rows = rows;
  l.box_cols = cols;
  l.shared_bytes = bytes;
  return "";
}

// Why the shared gather's vectors cannot be read as runs of the box ("" when they can).
std::string PlanBoxRuns(const LoweredIm2col& l) {
  return BoxRunsBlocker(l.geometry, l.element_bytes, l.vector_elems);
}

// The planes form's gather: span or shared where the hint asks for it and it applies,
// element by element otherwise (the default, so kernels tuned before the choice existed
// are unchanged); shared_runs is the shared gather with its vectors read as runs of the
// box where they can be, element by element from the box where they cannot.
void ChoosePlanesGather(const Target& target, LoweredIm2col& l) {
  auto choice = l.hints.choices.find(kPlanesGatherKey);
  if (choice == l.hints.choices.end() || choice->second == "element") return;
  bool runs = choice->second == "shared_runs";
  if (runs) {
    // Where the runs cannot serve, the shared gather still can: a record tuned with them
    // keeps its shared memory on problems whose rows its vectors would cross.
    const std::string no_runs = PlanBoxRuns(l);
    if (!no_runs.empty()) {
      l.decision_log.push_back(absl::StrCat(kPlanesGatherKey, "=shared_runs: no runs (", no_runs,
                                            "); the shared gather reads element by element"));
      runs = false;
    }
  }
  const std::string blocker =
      choice->second == "span" ? PlanSpanGather(l) : PlanSharedGather(target, l);
  if (blocker.empty() && runs) {
    if (l.shared_bytes + 16 > target.MaxSharedBytesPerBlock() - kReservedShared) {
      l.decision_log.push_back(absl::StrCat(
          kPlanesGatherKey, "=shared_runs not taken: its box and one more vector (",
          l.shared_bytes + 16, " B) do not fit in shared memory; the shared gather reads "
          "element by element"));
    } else {
      l.box_runs = true;
      l.shared_bytes += 16;
    }
  }
  if (!blocker.empty()) {
    l.decision_log.push_back(
        absl::StrCat(kPlanesGatherKey, "=", choice->second, " not taken: ", blocker));
    return;
  }
  (choice->second == "span" ? l.span_gather : l.shared_gather) = true;
}

// The planes form with planes_gather=patches: tiles of patch_rows kernel rows x patch_oh
// window rows of one plane, the image rows they read loaded whole into their taps' runs in
// shared memory, the runs stored whole.
absl::Status LowerPatches(const Target& target, const LaunchParams& launch, LoweredIm2col& l) {
  const Im2colGeometry& g = l.geometry;
  if (const std::string blocker = ExactPatchesBlocker(g, l.img_strides); !blocker.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(kPlanesGatherKey, "=patches: ", blocker,
                                                   "; use ", kPlanesGatherKey, "=element"));
  }
  const int64_t e = l.element_bytes;
  TT_ASSIGN_OR_RETURN(const PatchesPlan plan, PlanPatches(g, launch.tile, e));
  l.m = g.n * g.c * g.kh * g.kw;
  l.k = l.oh * l.ow;
  l.patch_rows = plan.rows;
  l.patch_oh = plan.oh;
  l.patch_row_tiles = plan.row_tiles;
  l.patch_oh_tiles = plan.oh_tiles;
  l.block_m = l.patch_rows * g.kw;
  l.block_k = l.patch_oh * l.ow;
  l.tiles_m = g.n * g.c * l.patch_row_tiles;
  l.tiles_k = l.patch_oh_tiles;
  l.num_tiles = plan.tiles;
  l.tile_bytes = l.block_m * l.block_k * e;
  const bool whole = plan.whole;
  l.segments = whole ? 1 : l.block_m;
  l.segment_elems = whole ? l.block_m * l.k : l.block_k;
  // Loads: whole image rows of W elements.
  l.patch_load_elems = static_cast<int>(std::max<int64_t>(1, std::gcd<int64_t>(16, g.w * e) / e));
  // Stores: the plan's span or runs of the matrix rows.
  const int legal = static_cast<int>(std::max<int64_t>(1, plan.matrix_align_bytes / e));
  TT_ASSIGN_OR_RETURN(
      l.vector_elems,
      ChooseVectorWidth(l.hints, legal, e,
                        whole ? absl::StrCat("the span of ", l.block_m, " matrix rows of ", l.k)
                              : absl::StrCat("runs of ", l.block_k, " elements from rows of ", l.k),
                        " along the matrix rows", l.decision_log));
  l.items_per_thread =
      static_cast<int>(CeilDiv(l.block_m * l.block_k / l.vector_elems, launch.threads));
  l.shared_bytes = plan.stage_bytes;
  auto tma = [&] {
    std::vector<std::string> why = {
        "channel_rows columns (F.unfold's layout) have no TMA lowering; the planes form is SIMT"};
    if (!target.HasTma()) why.push_back(absl::StrCat(target.ArchName(), " has no TMA (sm_90+)"));
    return why;
  };
  auto simt = [&] {
    std::vector<std::string> why;
    if (launch.stages != 1) {
      why.push_back(absl::StrCat("stages=", launch.stages,
                                 ": simt_im2col is not pipelined; use stages=1"));
    }
    CheckSharedFit(l.shared_bytes, launch.ctas_per_sm, target, why);
    return why;
  };
  const PathOption chain[] = {
      {Instruction::kTma, Im2colPathName(Im2colPath::kTma), tma},
      {Instruction::kSync, Im2colPathName(Im2colPath::kSimtPlanes), simt},
  };
  TT_ASSIGN_OR_RETURN(size_t chosen, ChoosePath(chain, l.hints, "im2col", target, l.decision_log));
  l.path = Im2colPath::kSimtPlanes;
  l.instruction = chain[chosen].instruction;
  l.patches = true;
  l.decision_log.push_back(absl::StrCat(
      "im2col ", DataTypeName(l.dtype), " ", Im2colGeometryToString(g),
      " in channel_rows order, planes form with ", kPlanesGatherKey,
      "=patches (the windows tile the image exactly: each pixel is one matrix element): ",
      g.n * g.c, " planes x ", l.patch_row_tiles, " x ", l.patch_oh_tiles, " = ", l.num_tiles,
      " tiles of ", l.patch_rows, " kernel row(s) x ", l.patch_oh, " window row(s); each loads "
      "its ", l.patch_rows * l.patch_oh, " whole image rows in ", l.patch_load_elems * e,
      "-byte vectors into its ", l.block_m, " taps' runs in shared memory (", l.shared_bytes,
      " B), then stores them (", whole ? "one contiguous span" : absl::StrCat("runs of ", l.block_k, " elements"),
      ") in ", l.vector_elems * e, "-byte vectors, at most ", l.items_per_thread,
      " per thread per tile"));
  return absl::OkStatus();
}

// The planes form (channel-row columns): the tile over [N*C*KH*KW, OH*OW], the vector, the
// items per thread and the path (TMA refused by the chain, so prefer_instruction=tma is an
// error naming why).
absl::Status LowerPlanes(const Target& target, const LaunchParams& launch, LoweredIm2col& l) {
  const Im2colGeometry& g = l.geometry;
  if (l.hints.loop_layout) {
    return absl::InvalidArgumentError(
        "loop_layout does not apply to channel_rows columns: the planes form's threads walk "
        "each matrix row's run; leave it unset");
  }
  // The kernel's positions within a plane are 32-bit.
  if (g.h >= kTwoTo31 || g.w >= kTwoTo31 || l.oh * l.ow >= kTwoTo31 ||
      (l.oh - 1) * g.sh + (g.kh - 1) * g.dh >= kTwoTo31 ||
      (l.ow - 1) * g.sw + (g.kw - 1) * g.dw >= kTwoTo31) {
    return absl::InvalidArgumentError(absl::StrCat(
        "channel_rows columns need H, W, OH*OW and the window's reach below 2^31; got H=", g.h,
        ", W=", g.w, ", OH*OW=", l.oh * l.ow));
  }
  if (const auto gather = l.hints.choices.find(kPlanesGatherKey);
      gather != l.hints.choices.end() && gather->second == "patches") {
    return LowerPatches(target, launch, l);
  }
  const int64_t taps = g.kh * g.kw;
  l.m = g.n * g.c * taps;
  l.k = l.oh * l.ow;
  l.block_m = std::min(launch.tile[0], l.m);
  l.block_k = std::min(launch.tile[1], l.k);
  l.tiles_m = CeilDiv(l.m, l.block_m);
  l.tiles_k = CeilDiv(l.k, l.block_k);
  if (l.tiles_m > kTwoTo31 / l.tiles_k) {
    return absl::InvalidArgumentError(absl::StrCat(
        l.tiles_m, " x ", l.tiles_k, " tiles exceed the 2^31-1 CTA grid; use a larger tile"));
  }
  l.num_tiles = l.tiles_m * l.tiles_k;
  l.tile_bytes = l.block_m * l.block_k * l.element_bytes;
  const bool whole = l.block_k == l.k;
  l.segments = whole ? 1 : l.block_m;
  l.segment_elems = whole ? l.block_m * l.k : l.block_k;
  l.decision_log.push_back(absl::StrCat(
      "im2col ", DataTypeName(l.dtype), " ", Im2colGeometryToString(g),
      " in channel_rows order: matrix [N*C*KH*KW, OH*OW] = [", l.m, ", ", l.k, "], tile [",
      l.block_m, ", ", l.block_k, "]: ", l.tiles_m, " x ", l.tiles_k, " tiles",
      whole ? ", each one contiguous run of whole rows" : "",
      l.m % l.block_m ? ", row tail guarded" : "", l.k % l.block_k ? ", column tail guarded" : "",
      launch.tile[0] > l.m || launch.tile[1] > l.k ? " (tile clipped to the matrix)" : ""));
  std::vector<VectorConstraint> constraints;
  if (whole) {
    constraints.push_back({"block_M x OH*OW=", l.segment_elems});
  } else {
    constraints.push_back({"OH*OW=", l.k});
    constraints.push_back({"block_K=", l.block_k});
  }
  std::string limit;
  const int legal = WidestVector(l.element_bytes, true, "", constraints, &limit);
  TT_ASSIGN_OR_RETURN(l.vector_elems, ChooseVectorWidth(l.hints, legal, l.element_bytes, limit,
                                                        " along the matrix rows", l.decision_log));
  const int64_t items = l.segments * CeilDiv(l.segment_elems, l.vector_elems);
  if (l.segment_elems >= kTwoTo31 || items >= kTwoTo31) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a tile of ", l.segments, " x ", l.segment_elems,
        " elements: the planes form needs its runs below 2^31 elements; use a smaller tile"));
  }
  l.items_per_thread = static_cast<int>(CeilDiv(items, launch.threads));

  auto tma = [&] {
    std::vector<std::string> why = {
        "channel_rows columns (F.unfold's layout) have no TMA lowering; the planes form is SIMT"};
    if (!target.HasTma()) why.push_back(absl::StrCat(target.ArchName(), " has no TMA (sm_90+)"));
    return why;
  };
  auto simt = [&] {
    std::vector<std::string> why;
    if (launch.stages != 1) {
      why.push_back(absl::StrCat("stages=", launch.stages,
                                 ": simt_im2col is not pipelined; use stages=1"));
    }
    return why;
  };
  const PathOption chain[] = {
      {Instruction::kTma, Im2colPathName(Im2colPath::kTma), tma},
      {Instruction::kSync, Im2colPathName(Im2colPath::kSimtPlanes), simt},
  };
  TT_ASSIGN_OR_RETURN(size_t chosen, ChoosePath(chain, l.hints, "im2col", target, l.decision_log));
  l.path = Im2colPath::kSimtPlanes;
  l.instruction = chain[chosen].instruction;
  ChoosePlanesGather(target, l);
  l.decision_log.push_back(absl::StrCat(
      "planes form: ", l.launch.threads, " threads store ", l.vector_elems * l.element_bytes,
      "-byte vectors of the tile's ", l.segments, " run(s) of ", l.segment_elems, " elements, ",
      l.items_per_thread, " per thread per tile at most, ",
      l.span_gather ? absl::StrCat("reading each vector's image elements as up to ",
                                   l.span_blocks, " aligned 16-B blocks where they share a row")
      : l.shared_gather
          ? absl::StrCat("reading their elements from shared memory, where the tile's ",
                         l.box_planes, " plane(s) first copy the ", l.box_rows, " x ",
                         l.box_cols, " image window of their ", l.band_rows,
                         " output row(s) (", l.shared_bytes, " B)")
          : "gathering their elements from the image one by one"));
  return absl::OkStatus();
}

// The SIMT path's form. Flat: only without the hints that shape the row form, when the
// tile holds whole rows and the run of block_M * K elements allows a wider store than C
// does; staged when its input box plans too. Either must fit in shared memory.
void ChooseSimtForm(const Target& target, const LaunchParams& launch, LoweredIm2col& l) {
  l.path = Im2colPath::kSimtRow;
  if (l.hints.coalesced_width || l.hints.loop_layout || l.block_k < l.k || l.window_row_vector) {
    return;
  }
  auto fits = [&](int64_t bytes) {
    return bytes <= target.MaxSharedBytesPerBlock() - kReservedShared &&
           (launch.ctas_per_sm == 0 || bytes * launch.ctas_per_sm <= target.MaxSharedBytesPerSm());
  };
  std::optional<LoweredIm2col::InputBox> box = PlanInputBox(l);
  const int flat = FlatVectorElems(l);
  if (box.has_value() && fits(box->offset_bytes + InputBoxBytes(l, *box))) {
    l.path = Im2colPath::kSimtStaged;
    l.box = *box;
    l.flat_vector_elems = box->vector_elems;
    ChooseBoxFill(target, launch, l);
    ChooseGather(target, launch, l);
    return;
  }
  if (box.has_value() && box->row_phase) {
    l.decision_log.push_back(absl::StrCat(
        "staged_gather=row_phase not taken: its table and box (",
        box->offset_bytes + InputBoxBytes(l, *box), " B) do not fit in shared memory"));
  }
  if (flat > l.vector_elems && fits(FlatSharedBytes(l))) {
    l.path = Im2colPath::kSimtFlat;
    l.flat_vector_elems = flat;
  }
}

// The row form's thread layout, and the vector accesses per thread of the chosen form.
absl::Status ChooseLayout(const LaunchParams& launch, LoweredIm2col& l) {
  const int64_t vectors_per_row = l.block_k / l.vector_elems;
  TT_ASSIGN_OR_RETURN(l.layout, ChooseLoopLayout(l.hints, launch.threads, vectors_per_row));
  const int64_t items =
      l.path == Im2colPath::kSimtRow
          ? CeilDiv(l.block_m, l.layout.rows) * CeilDiv(vectors_per_row, l.layout.cols)
          : CeilDiv(l.block_m * l.k / l.flat_vector_elems,
                    l.box.phase_gather ? l.box.phase_groups * l.box.period_vectors
                                       : int64_t{launch.threads});
  l.items_per_thread = static_cast<int>(std::min<int64_t>(items, 1 << 30));
  return absl::OkStatus();
}

// Shared memory and decision log of the SIMT forms.
void DescribeSimt(const std::string& vector_limit, int legal, LoweredIm2col& l) {
  const Im2colGeometry& g = l.geometry;
  if (l.path == Im2colPath::kSimtRow) {
    l.decision_log.push_back(absl::StrCat(
        "row form: loop layout ", LoopLayoutName(l.layout),
        l.hints.loop_layout ? " (hint)" : ": consecutive threads take consecutive vectors",
        "; ", l.items_per_thread, " accesses per thread per tile"));
    l.decision_log.push_back("gather global -> registers -> global; padding reads as zero");
    l.shared_bytes = 0;
    return;
  }
  l.layout = LoopLayout{l.launch.threads, 1};
  l.decision_log.push_back(absl::StrCat(
      l.path == Im2colPath::kSimtStaged ? "staged" : "flat", " form: the tile is ", l.block_m,
      " whole rows (block_K=", l.block_k, " >= K=", l.k, "), one run of ", l.block_m * l.k,
      " elements written in ", l.flat_vector_elems, "-element (",
      l.flat_vector_elems * l.element_bytes, " B) vectors; along C only ", legal,
      " element(s) would fit", vector_limit.empty() ? "" : absl::StrCat(" (", vector_limit, ")")));
  if (l.path == Im2colPath::kSimtStaged) {
    const LoweredIm2col::InputBox& box = l.box;
    l.shared_bytes = box.phase_gather ? box.phase_bytes : box.offset_bytes + InputBoxBytes(l, box);
    l.decision_log.push_back(absl::StrCat(
        "input staged: the tile is ", box.rows_per_tile, " whole output row(s); their ", g.kh,
        " input rows each copied to shared memory ",
        box.bulk_fill ? "by one thread with 1-D cp.async.bulk copies (TMA engine) on an mbarrier"
                      : absl::StrCat("with ", box.load_bytes, "-byte loads"),
        box.phase_gather ? absl::StrCat(" at the image's row pitch (", box.copy_pixels,
                                        " of their pixels used)")
                         : absl::StrCat(" as ", box.pixels, "-pixel box rows (", box.copy_pixels,
                                        " from the image, the rest zero)")));
    if (box.bulk_fill) {
      l.barriers = 1;
      const bool chosen = l.hints.choices.count(kImgPrefetchKey) > 0;
      const int64_t l2 = l.target.MinL2Bytes();
      const int64_t columns = l.m * l.k * l.element_bytes;
      const std::string why =
          chosen ? absl::StrCat(kImgPrefetchKey, "=", box.prefetch_all ? "all" : "ahead")
          : l2 == 0
              ? absl::StrCat("the L2 of ", l.target.ArchName(), " parts varies too much to plan for")
          : box.image_span_bytes > l2 / kPrefetchAllL2Fraction
              ? absl::StrCat(box.image_span_bytes, " B of image exceed 1/", kPrefetchAllL2Fraction,
                             " of the ", l2, " B L2 of ", l.target.ArchName())
          : columns < l2
              ? absl::StrCat("the ", columns, " B of columns fit in the ", l2, " B L2 of ",
                             l.target.ArchName())
              : absl::StrCat(box.image_span_bytes, " B of image are at most 1/",
                             kPrefetchAllL2Fraction, " of the ", l2, " B L2 of ",
                             l.target.ArchName(), ", and the ", columns,
                             " B of columns stream through more than it holds");
      l.decision_log.push_back(
          box.prefetch_all
              ? absl::StrCat("L2 prefetch (cp.async.bulk.prefetch) of the whole image at the "
                             "start, an equal share by each CTA of the first wave (%nsmid x ",
                             box.resident_ctas, " resident CTAs per SM): ", why)
              : absl::StrCat("L2 prefetch (cp.async.bulk.prefetch) of the image rows of the "
                             "tile ", box.prefetch_waves, " waves ahead (a wave: %nsmid x ",
                             box.resident_ctas,
                             " resident CTAs per SM, estimated from threads and shared memory): ",
                             why));
      l.decision_log.push_back(
          box.max_registers > 0
              ? absl::StrCat("registers held to ", box.max_registers,
                             " per thread: room for the registers of one CTA more than the ",
                             box.resident_ctas, " resident")
              : absl::StrCat("registers held to what ", box.resident_ctas,
                             " resident CTAs per SM allow (launch bounds)"));
    } else if (l.target.HasTma() && box.load_bytes == 16) {
      l.decision_log.push_back("box fill by the threads' loads: disable_tma is set");
    } else if (l.target.HasTma()) {
      l.decision_log.push_back(absl::StrCat(
          "box fill by the threads' loads: bulk copies need 16-byte aligned image rows (",
          box.load_bytes, "-byte loads here)"));
    }
    if (box.phase_gather) {
      l.decision_log.push_back(absl::StrCat(
          "gather by phase (", l.shared_bytes, " B of shared memory, ", box.phase_lead_bytes,
          " B before the box rows): the run's vectors repeat their pattern every ",
          box.period_rows, " row(s) (", box.period_vectors, " vectors); ",
          box.phase_groups * box.period_vectors, " threads, ", box.phase_groups,
          " period(s) side by side, each keep their vector's ",
          box.vector_elems * l.element_bytes / box.unit_bytes,
          " offsets in registers and gather at most ", l.items_per_thread,
          " vectors; the output row's ", g.kh,
          " image rows arrive by one bulk copy at the image's row pitch, padding units are "
          "masked to zero (", box.gather_reason, ")"));
      return;
    }
    l.decision_log.push_back(absl::StrCat(
        "gather by table (", l.shared_bytes, " B of shared memory): ",
        box.row_phase
            ? absl::StrCat("each output row's vectors start at the row's own phase, one of the ",
                           box.period_vectors, " columns ", box.vector_elems,
                           " t mod K a vector may start at (table entry t), and the row's "
                           "elements before its first whole vector and after its last go one "
                           "by one")
            : absl::StrCat("the run's vectors repeat their pattern every ", box.period_rows,
                           " row(s) (", box.period_vectors, " vectors)"),
        "; each thread reads its vector's ",
        box.vector_elems * l.element_bytes / box.unit_bytes,
        " offsets from a table built once, loads the elements from the boxes and stores the "
        "vector, at most ", l.items_per_thread, " per thread per tile",
        box.gather_reason.empty() ? "" : absl::StrCat(" (", box.gather_reason, ")")));
    return;
  }
  l.shared_bytes = FlatSharedBytes(l);
  l.decision_log.push_back(
      "input not staged (needs block_M a multiple of OW, contiguous pixels, a vector of at "
      "least 4 B whose row period divides OW or staged_gather=row_phase with block_M = OW, "
      "and room in shared memory)");
  l.decision_log.push_back(absl::StrCat(
      "gather into shared (", l.shared_bytes, " B): consecutive threads take consecutive "
      "pixels of one kernel tap, C elements each, padding reads as zero; then shared -> "
      "global in vectors, at most ", l.items_per_thread, " per thread per tile"));
}

// Channel boxes, shared memory, barriers and the two tensor maps of the TMA path.
void PlaceTma(LoweredIm2col& l) {
  const Im2colGeometry& g = l.geometry;
  const Im2colBoxCorners corners = TmaIm2colBoxCorners(g);
  const int64_t box = TmaChannelBox(g.c, l.block_k, l.element_bytes);
  l.channels_per_pixel = static_cast<int>(box);
  l.chunks_per_tile = static_cast<int>(l.block_k / box);
  l.store_rows = static_cast<int>(std::min(l.block_m, kMaxTmaBoxDim));
  const int64_t chunk_bytes = RoundUp(l.block_m * box * l.element_bytes, 128);
  l.shared_bytes = chunk_bytes * l.chunks_per_tile * l.stages;
  l.barriers = l.stages;
  const uint64_t e = static_cast<uint64_t>(l.element_bytes);
  TensorMapSpec img;
  img.operand = TensorMapSpec::Operand::kInput;
  img.element_bytes = l.element_bytes;
  img.dims = {static_cast<uint64_t>(g.c), static_cast<uint64_t>(g.w),
              static_cast<uint64_t>(g.h), static_cast<uint64_t>(g.n)};
  img.strides_bytes = {static_cast<uint64_t>(l.img_strides[2]) * e,
                       static_cast<uint64_t>(l.img_strides[1]) * e,
                       static_cast<uint64_t>(l.img_strides[0]) * e};
  img.element_strides = {1, static_cast<uint32_t>(g.sw), static_cast<uint32_t>(g.sh), 1};
  TensorMapSpec::Im2colBox window;
  window.lower_corner = {static_cast<int>(corners.lower_w), static_cast<int>(corners.lower_h)};
  window.upper_corner = {static_cast<int>(corners.upper_w), static_cast<int>(corners.upper_h)};
  window.channels_per_pixel = static_cast<uint32_t>(box);
  window.pixels_per_column = static_cast<uint32_t>(l.block_m);
  img.im2col = window;
  TensorMapSpec col;
  col.operand = TensorMapSpec::Operand::kOutput;
  col.element_bytes = l.element_bytes;
  col.dims = {static_cast<uint64_t>(l.k), static_cast<uint64_t>(l.m)};
  col.strides_bytes = {static_cast<uint64_t>(l.k) * e};
  col.box = {static_cast<uint32_t>(box), static_cast<uint32_t>(l.store_rows)};
  l.tensor_maps = {img, col};
  l.decision_log.push_back(absl::StrCat(
      "im2col box corners: lower (h, w) = (", corners.lower_h, ", ", corners.lower_w,
      ") = -pad, upper (h, w) = (", corners.upper_h, ", ", corners.upper_w,
      ") = pad - (kernel-1)*dilation"));
  l.decision_log.push_back(absl::StrCat(
      l.chunks_per_tile, " TMA im2col load(s) per tile of ", box, " channels x ", l.block_m,
      " pixels; traversal stride (h, w) = (", g.sh, ", ", g.sw, "), tap offsets up to (",
      (g.kh - 1) * g.dh, ", ", (g.kw - 1) * g.dw, ")"));
  l.decision_log.push_back(absl::StrCat(l.stages, " stage(s), one mbarrier each; TMA store of ",
                                        l.store_rows, "-row boxes (tails clipped by the map)"));
  if (l.hints.coalesced_width.has_value() || l.hints.loop_layout.has_value()) {
    l.decision_log.push_back("coalesced_width and loop_layout do not apply to TMA transfers");
  }
}

}  // namespace

Im2colBoxCorners TmaIm2colBoxCorners(const Im2colGeometry& g) {
  Im2colBoxCorners corners;
  corners.lower_h = -g.ph;
  corners.lower_w = -g.pw;
  corners.upper_h = g.ph - (g.kh - 1) * g.dh;
  corners.upper_w = g.pw - (g.kw - 1) * g.dw;
  return corners;
}

std::string Im2colPathName(Im2colPath path) {
  return path == Im2colPath::kTma ? "tma_im2col" : "simt_im2col";
}

std::string Im2colFormName(Im2colPath path) {
  switch (path) {
    case Im2colPath::kTma: return "";
    case Im2colPath::kSimtRow: return "row";
    case Im2colPath::kSimtFlat: return "flat";
    case Im2colPath::kSimtStaged: return "staged";
    case Im2colPath::kSimtPlanes: return "planes";
  }
  return "";
}

bool IsSimt(Im2colPath path) { return path != Im2colPath::kTma; }

std::string DescribeImagePrefetch(const LoweredIm2col::InputBox& box) {
  return box.prefetch_all ? "L2 prefetch of the whole image at the start"
                          : absl::StrCat("L2 prefetch ", box.prefetch_waves, " waves ahead");
}

std::string BoxRunsBlocker(const Im2colGeometry& g, int64_t element_bytes,
                           int64_t vector_elems) {
  const int64_t vector_bytes = vector_elems * element_bytes;
  if (g.sw != 1) {
    return absl::StrCat("at column stride ", g.sw, " a vector's elements are not consecutive in "
                        "the box (stride 1 only)");
  }
  if (vector_elems < 2 || vector_bytes < 4) {
    return absl::StrCat("its ", vector_bytes, "-byte vectors hold one element or are narrower "
                        "than 4 bytes: nothing to gain over element loads");
  }
  if (g.OW() % vector_elems != 0) {
    return absl::StrCat("vectors of ", vector_elems, " elements cross its output rows of ",
                        g.OW(), " (rows must be a whole number of vectors)");
  }
  return "";
}

SharedGatherReach SharedGatherReachOf(const Im2colGeometry& g, int64_t tile_rows,
                                      int64_t tile_cols) {
  auto reach = [](int64_t span, int64_t unit) {
    return span % unit == 0 ? span / unit : CeilDiv(span - 1, unit) + 1;
  };
  SharedGatherReach r;
  r.planes = std::min(reach(tile_rows, g.kh * g.kw), g.n * g.c);
  r.band = tile_cols >= g.OH() * g.OW() ? g.OH() : std::min(reach(tile_cols, g.OW()), g.OH());
  return r;
}

absl::StatusOr<LoweredIm2col> LowerIm2col(const Im2colOp& op, const Target& target,
                                          const LaunchParams& launch) {
  TT_RETURN_IF_ERROR(ValidateIm2colOp(op));
  TT_RETURN_IF_ERROR(CheckLaunch(launch, target));
  LoweredIm2col l;
  l.op = Im2colOp::Name();
  l.input_name = "img";
  l.output_name = "col";
  l.target = target;
  l.dtype = op.img.dtype;
  l.element_bytes = DataTypeBytes(l.dtype);
  TT_ASSIGN_OR_RETURN(l.hints, ResolveHints(op.hints, Im2colHintScope()));
  l.launch = launch;
  l.stages = launch.stages;
  const std::string hint_text = HintsToString(l.hints);
  l.decision_log.push_back(absl::StrCat("target ", target.ArchName(), "; hints: ",
                                        hint_text.empty() ? "none" : hint_text));
  if (op.order == ColumnOrder::kChannelRows) {
    l.order = op.order;
    l.geometry = op.geometry;
    l.img_strides = op.img.strides;
    l.oh = op.geometry.OH();
    l.ow = op.geometry.OW();
    TT_RETURN_IF_ERROR(LowerPlanes(target, launch, l));
    l.path_name = Im2colPathName(l.path);
    l.form_name = l.shared_gather ? kPlanesSharedForm
                  : l.patches     ? kPlanesPatchesForm
                                  : Im2colFormName(l.path);
    FinishLowering(target, l);
    return l;
  }
  TT_RETURN_IF_ERROR(PlaceTiles(op, launch, l));

  std::string vector_limit;
  int legal = LegalVectorElems(l, &vector_limit);
  const bool window = ChooseWindowRow(l, legal, vector_limit);
  TT_ASSIGN_OR_RETURN(
      l.vector_elems,
      ChooseVectorWidth(l.hints, legal, l.element_bytes, vector_limit,
                        window ? " along a kernel row (row_vector=window_row: the row form, a "
                                 "vector over pixels)"
                               : " along C",
                        l.decision_log));
  ChooseSimtForm(target, launch, l);
  TT_RETURN_IF_ERROR(ChooseLayout(launch, l));

  const Im2colPath simt = l.path;
  PathChecks checks(target, launch, l);
  const PathOption chain[] = {
      {Instruction::kTma, Im2colPathName(Im2colPath::kTma), [&] { return checks.Tma(); }},
      {Instruction::kSync, Im2colPathName(simt), [&] { return checks.Simt(); }},
  };
  TT_ASSIGN_OR_RETURN(size_t chosen,
                      ChoosePath(chain, l.hints, "im2col", target, l.decision_log));
  l.path = chosen == 0 ? Im2colPath::kTma : simt;
  l.instruction = chain[chosen].instruction;
  l.path_name = Im2colPathName(l.path);
  l.form_name = Im2colFormName(l.path);
  if (IsSimt(l.path)) {
    DescribeSimt(vector_limit, legal, l);
  } else {
    l.flat_vector_elems = 0;
    l.box = LoweredIm2col::InputBox{};
    PlaceTma(l);
  }
  FinishLowering(target, l);
  return l;
}

std::string DescribeIm2colPlan(const LoweredIm2col& l) {
  const Im2colGeometry& g = l.geometry;
  std::string out = PlanHeader(l);
  absl::StrAppend(&out, "image       NHWC [", g.n, ", ", g.h, ", ", g.w, ", ", g.c, "], strides [",
                  absl::StrJoin(l.img_strides, ", "), "]\n");
  absl::StrAppend(&out, "window      kernel ", g.kh, "x", g.kw, ", stride ", g.sh, "x", g.sw,
                  ", dilation ", g.dh, "x", g.dw, ", pad ", g.ph, "x", g.pw, " -> output ", l.oh,
                  "x", l.ow, "\n");
  if (l.path == Im2colPath::kSimtPlanes) {
    absl::StrAppend(&out, "columns     [", g.n, ", ", g.c * g.kh * g.kw, ", ", l.k,
                    "] (channel_rows: [N, C*KH*KW, OH*OW], F.unfold's layout)\n");
    absl::StrAppend(&out, "tile        [", l.block_m, ", ", l.block_k, "] of [", l.m, ", ", l.k,
                    "], ", l.tiles_m, " x ", l.tiles_k, " = ", l.num_tiles, " tiles\n");
    absl::StrAppend(&out, "threads     ", l.launch.threads, "\n");
    absl::StrAppend(&out, "vector      ", l.vector_elems, " elements (",
                    l.vector_elems * l.element_bytes, " B) along the matrix rows, ",
                    l.items_per_thread, " per thread per tile at most\n");
    absl::StrAppend(
        &out, "gather      ",
        l.span_gather ? absl::StrCat("span: up to ", l.span_blocks,
                                     " aligned 16-B blocks per vector in one image row, "
                                     "element by element otherwise\n")
        : l.shared_gather
            ? absl::StrCat("shared: ", l.box_planes, " plane window(s) of ", l.box_rows, " x ",
                           l.box_cols, " elements per tile (", l.band_rows,
                           " output rows), ", l.shared_bytes, " B\n")
        : l.patches
            ? absl::StrCat("patches: ", l.patch_rows, " kernel row(s) x ", l.patch_oh,
                           " window row(s) of one plane per tile, its image rows loaded whole in ",
                           l.patch_load_elems * l.element_bytes,
                           "-B vectors into the taps' runs in shared memory, ", l.shared_bytes,
                           " B\n")
            : "element by element\n");
  } else {
    absl::StrAppend(&out, "columns     [", l.m, ", ", l.k, "] (M = N*OH*OW, K = KH*KW*C)\n");
    absl::StrAppend(&out, "tile        [", l.block_m, ", ", l.block_k, "] (", l.tile_bytes,
                    " B), ", l.tiles_m, " x ", l.tiles_k, " = ", l.num_tiles, " tiles\n");
    absl::StrAppend(&out, "threads     ", l.launch.threads, "\n");
  }
  switch (l.path) {
    case Im2colPath::kSimtFlat:
    case Im2colPath::kSimtStaged:
      absl::StrAppend(&out, "vector      ", l.flat_vector_elems, " elements (",
                      l.flat_vector_elems * l.element_bytes, " B) of the flat run of whole rows\n");
      absl::StrAppend(&out, "layout      flat, ", l.items_per_thread,
                      " vectors per thread per tile at most\n");
      if (l.path == Im2colPath::kSimtStaged) {
        absl::StrAppend(&out, "input box   ", l.box.rows_per_tile, " output row(s) x ", g.kh,
                        " input rows of ", l.box.pixels, " pixels (", l.box.copy_pixels,
                        " from the image), ",
                        l.box.bulk_fill
                            ? absl::StrCat("bulk copies, ", DescribeImagePrefetch(l.box))
                            : absl::StrCat(l.box.load_bytes, "-byte loads"),
                        ", pitch ", l.box.pitch_elems, " elements\n");
        if (l.box.phase_gather) {
          absl::StrAppend(&out, "gather      by phase: ", l.box.phase_groups, " x ",
                          l.box.period_vectors, " threads, ",
                          l.box.vector_elems * l.element_bytes / l.box.unit_bytes,
                          " offsets each in registers, repeating every ", l.box.period_rows,
                          " row(s)\n");
        } else {
          absl::StrAppend(&out, "gather      by a table of ", l.box.period_vectors, " vectors x ",
                          l.box.vector_elems * l.element_bytes / l.box.unit_bytes, " offsets (",
                          l.box.unit_bytes, "-byte units), ",
                          l.box.row_phase
                              ? "one per column a vector starts at (each row at its own phase)"
                              : absl::StrCat("repeating every ", l.box.period_rows, " row(s)"),
                          "\n");
        }
      }
      break;
    case Im2colPath::kSimtRow:
      absl::StrAppend(&out, "vector      ", l.vector_elems, " elements (",
                      l.vector_elems * l.element_bytes, " B) along ",
                      l.window_row_vector ? "a kernel row (row_vector=window_row)" : "C", "\n");
      absl::StrAppend(&out, "layout      ", LoopLayoutName(l.layout), ", ", l.items_per_thread,
                      " accesses per thread per tile\n");
      break;
    case Im2colPath::kTma: {
      Im2colBoxCorners c = TmaIm2colBoxCorners(g);
      absl::StrAppend(&out, "tma loads   ", l.chunks_per_tile, " per tile, ",
                      l.channels_per_pixel, " channels x ", l.block_m, " pixels each\n");
      absl::StrAppend(&out, "box corners lower (h, w) = (", c.lower_h, ", ", c.lower_w,
                      "), upper (h, w) = (", c.upper_h, ", ", c.upper_w, ")\n");
      absl::StrAppend(&out, "tma stores  ", l.store_rows, "-row boxes\n");
      break;
    }
    case Im2colPath::kSimtPlanes:
      break;  // described above
  }
  absl::StrAppend(&out, PlanFooter(l, absl::StrCat("image ",
                                                   l.img_policy ? EvictionPolicyName(*l.img_policy)
                                                                : std::string("none"),
                                                   ", columns ",
                                                   l.col_policy ? EvictionPolicyName(*l.col_policy)
                                                                : std::string("none"))));
  return out;
}

}  // namespace tiletune

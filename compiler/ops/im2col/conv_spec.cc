#include "compiler/ops/im2col/conv_spec.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/lower/lowering_rules.h"
#include "absl/strings/str_split.h"
#include "compiler/base/status_macros.h"
#include "compiler/ir/buffer.h"
#include "compiler/ops/op_util.h"
#include "compiler/tuning_db/tuning_db.pb.h"

namespace tiletune {
namespace {

// The window options of a spec or the flags: kernel, stride, dilation, pad per axis.
struct WindowOption {
  const char* spec_key;
  const char* flag;
  int64_t min_value;
  int64_t Im2colGeometry::*h;
  int64_t Im2colGeometry::*w;
};
constexpr WindowOption kWindowOptions[] = {
    {"k", "kernel", 1, &Im2colGeometry::kh, &Im2colGeometry::kw},
    {"s", "stride", 1, &Im2colGeometry::sh, &Im2colGeometry::sw},
    {"d", "dilation", 1, &Im2colGeometry::dh, &Im2colGeometry::dw},
    {"p", "pad", 0, &Im2colGeometry::ph, &Im2colGeometry::pw},
};

Im2colGeometry ImageGeometry(const std::vector<int64_t>& shape) {
  Im2colGeometry g;
  g.n = shape[0];
  g.h = shape[1];
  g.w = shape[2];
  g.c = shape[3];
  return g;
}

absl::StatusOr<ConvLayout> ParseLayout(absl::string_view where, absl::string_view text) {
  if (text == "nhwc") return ConvLayout::kNhwc;
  if (text == "nchw") return ConvLayout::kNchw;
  return absl::InvalidArgumentError(absl::StrCat(
      where, "='", text,
      "': accepted are nhwc (an NHWC image, columns [N*OH*OW, KH*KW*C]) and nchw (an NCHW "
      "image, columns [N, C*KH*KW, OH*OW] as PyTorch's unfold and fold)"));
}

// The bytes a patches-form tile of `rows` kernel rows (clipped to KH) x `band` window rows
// stages: its taps' matrix rows over those window rows, before rounding.
int64_t PatchesStage(const Im2colGeometry& g, int64_t rows, int64_t band, int64_t element_bytes) {
  return std::min(rows, g.kh) * g.kw * band * g.OW() * element_bytes;
}

}  // namespace

std::vector<int64_t> NchwStrides(const Im2colGeometry& g) {
  return {g.c * g.h * g.w, g.w, 1, g.h * g.w};
}

Buffer ConvImage(const std::string& name, DataType dtype, const Im2colGeometry& g,
                 ConvLayout layout) {
  Buffer img = Buffer::RowMajor(name, dtype, Scope::kGlobal, {g.n, g.h, g.w, g.c});
  if (layout == ConvLayout::kNchw) img.strides = NchwStrides(g);
  return img;
}

ColumnOrder ConvColumnOrder(ConvLayout layout) {
  return layout == ConvLayout::kNchw ? ColumnOrder::kChannelRows : ColumnOrder::kPixelRows;
}

std::optional<ConvLayout> ConvLayoutOf(const Buffer& img, ColumnOrder order) {
  if (img.shape.size() != 4) return std::nullopt;
  const Im2colGeometry g = ImageGeometry(img.shape);
  for (ConvLayout layout : {ConvLayout::kNhwc, ConvLayout::kNchw}) {
    if (order == ConvColumnOrder(layout) &&
        img.strides == ConvImage(img.name, img.dtype, g, layout).strides) {
      return layout;
    }
  }
  return std::nullopt;
}

absl::StatusOr<ColumnOrder> ColumnOrderFromProblem(int value) {
  switch (value) {
    case tuning::COLUMN_ORDER_PIXEL_ROWS: return ColumnOrder::kPixelRows;
    case tuning::COLUMN_ORDER_CHANNEL_ROWS: return ColumnOrder::kChannelRows;
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "col_order ", value, " is not a column order this reader knows; accepted are 0 "
          "(COLUMN_ORDER_PIXEL_ROWS) and 1 (COLUMN_ORDER_CHANNEL_ROWS)"));
  }
}

int ColumnOrderToProblem(ColumnOrder order) {
  return order == ColumnOrder::kChannelRows ? tuning::COLUMN_ORDER_CHANNEL_ROWS
                                            : tuning::COLUMN_ORDER_PIXEL_ROWS;
}

std::string ConvSpecSyntax() {
  return "N,H,W,C[:k=KH[xKW]][:s=SH[xSW]][:d=DH[xDW]][:p=PH[xPW]][:layout=nhwc|nchw]";
}

absl::StatusOr<ConvSpec> ParseConvSpec(absl::string_view op,
                                       absl::Span<const absl::string_view> parts) {
  if (parts.empty()) return absl::InvalidArgumentError("give the image N,H,W,C");
  TT_ASSIGN_OR_RETURN(std::vector<int64_t> shape,
                      ParseIntList("image", parts[0], 1, kMaxIm2colElements, 4));
  if (shape.size() != 4) {
    return absl::InvalidArgumentError(absl::StrCat("an ", op, " image is N,H,W,C (four extents)"));
  }
  ConvSpec spec;
  Im2colGeometry& g = spec.geometry;
  g = ImageGeometry(shape);
  std::set<std::string> seen;
  for (size_t i = 1; i < parts.size(); ++i) {
    std::vector<absl::string_view> kv = absl::StrSplit(parts[i], absl::MaxSplits('=', 1));
    if (kv.size() != 2) {
      return absl::InvalidArgumentError(absl::StrCat("option '", parts[i], "' is not key=value"));
    }
    if (kv[0] == "layout") {
      if (!seen.insert("layout").second) {
        return absl::InvalidArgumentError("option 'layout' is given twice");
      }
      TT_ASSIGN_OR_RETURN(spec.layout, ParseLayout("layout", kv[1]));
      continue;
    }
    const WindowOption* option = nullptr;
    for (const WindowOption& o : kWindowOptions) {
      if (kv[0] == o.spec_key) option = &o;
    }
    if (option == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown option '", kv[0], "'; accepted are k, s, d, p, layout"));
    }
    if (!seen.insert(std::string(kv[0])).second) {
      return absl::InvalidArgumentError(absl::StrCat("option '", kv[0], "' is given twice"));
    }
    TT_ASSIGN_OR_RETURN(auto values, ParseAxisPair(kv[0], kv[1], option->min_value,
                                                   kMaxIm2colWindowParam, 'x'));
    g.*(option->h) = values.first;
    g.*(option->w) = values.second;
  }
  TT_RETURN_IF_ERROR(ValidateConvGeometry(g, op));
  return spec;
}

absl::StatusOr<std::string> FormatConvSpec(const Im2colGeometry& g, const Buffer& img,
                                           ColumnOrder order) {
  const std::optional<ConvLayout> layout = ConvLayoutOf(img, order);
  if (!layout.has_value()) {
    return absl::UnimplementedError(absl::StrCat(
        "the image has strides [", absl::StrJoin(img.strides, ", "), "] and the columns ",
        ColumnOrderName(order),
        ": a problem spec names dense NHWC images with pixel_rows columns and dense NCHW "
        "images with channel_rows columns only"));
  }
  std::string spec = absl::StrCat(DataTypeName(img.dtype), ":", g.n, ",", g.h, ",", g.w, ",", g.c);
  auto pair = [&](absl::string_view key, int64_t a, int64_t b, int64_t fallback) {
    if (a == fallback && b == fallback) return;
    absl::StrAppend(&spec, ":", key, "=", a);
    if (b != a) absl::StrAppend(&spec, "x", b);
  };
  pair("k", g.kh, g.kw, 1);
  pair("s", g.sh, g.sw, 1);
  pair("d", g.dh, g.dw, 1);
  pair("p", g.ph, g.pw, 0);
  if (*layout == ConvLayout::kNchw) absl::StrAppend(&spec, ":layout=nchw");
  return spec;
}

std::vector<OpFlag> ConvFlags() {
  return {{"shape", "N,H,W,C: the image's extents (required)"},
          {"kernel", "KH[,KW]: the filter size (required)"},
          {"stride", "SH[,SW]: the window's stride (default 1)"},
          {"dilation", "DH[,DW]: the distance between taps (default 1)"},
          {"pad", "PH[,PW]: zero padding on both sides (default 0)"},
          {"layout", "nhwc (default: a dense NHWC image, columns [N*OH*OW, KH*KW*C]) or nchw "
                     "(a dense NCHW image, columns [N, C*KH*KW, OH*OW] as PyTorch's "
                     "unfold/fold)"}};
}

absl::StatusOr<ConvSpec> ConvSpecFromFlags(absl::string_view op, const FlagValues& flags) {
  auto get = [&](const std::string& name, const std::string& fallback) {
    auto it = flags.find(name);
    return it == flags.end() ? fallback : it->second;
  };
  if (!flags.count("shape")) {
    return absl::InvalidArgumentError(
        "--shape is required: the NHWC image as N,H,W,C, e.g. --shape=64,56,56,64");
  }
  TT_ASSIGN_OR_RETURN(std::vector<int64_t> shape,
                      ParseIntList("--shape", get("shape", ""), 1, kMaxIm2colElements, kMaxRank));
  if (shape.size() != 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--shape=", get("shape", ""), ": ", op,
        " takes the image's extents as four values N,H,W,C, e.g. --shape=64,56,56,64"));
  }
  if (!flags.count("kernel")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--kernel is required for --op=", op, ": KH[,KW], e.g. --kernel=3 or --kernel=3,5"));
  }
  ConvSpec spec;
  Im2colGeometry& g = spec.geometry;
  g = ImageGeometry(shape);
  if (flags.count("layout")) {
    TT_ASSIGN_OR_RETURN(spec.layout, ParseLayout("--layout", get("layout", "")));
  }
  for (const WindowOption& option : kWindowOptions) {
    const std::string text = get(option.flag, option.min_value == 0 ? "0" : "1");
    TT_ASSIGN_OR_RETURN(auto values, ParseAxisPair(absl::StrCat("--", option.flag), text,
                                                   option.min_value, kMaxIm2colWindowParam, ','));
    g.*(option.h) = values.first;
    g.*(option.w) = values.second;
  }
  TT_RETURN_IF_ERROR(ValidateConvGeometry(g, op));
  return spec;
}

int ConvPixelAlignment(const Im2colGeometry& g, int element_bytes) {
  const int64_t pixel = g.c * element_bytes;
  int align = 16;
  while (align > 1 && pixel % align != 0) align /= 2;
  return align;
}

std::string ExactPatchesBlocker(const Im2colGeometry& g, const std::vector<int64_t>& img_strides) {
  std::vector<std::string> why;
  if (img_strides != NchwStrides(g)) why.push_back("the image is not dense NCHW");
  if (g.kh != g.sh || g.kw != g.sw) {
    why.push_back(absl::StrCat("kernel ", g.kh, "x", g.kw, " differs from stride ", g.sh, "x",
                               g.sw));
  }
  if (g.dh != 1 || g.dw != 1) why.push_back(absl::StrCat("dilation ", g.dh, "x", g.dw));
  if (g.ph != 0 || g.pw != 0) why.push_back(absl::StrCat("padding ", g.ph, "x", g.pw));
  if (why.empty() && (g.h % g.kh != 0 || g.w % g.kw != 0)) {
    why.push_back(absl::StrCat("image ", g.h, "x", g.w, " is not whole ", g.kh, "x", g.kw,
                               " windows"));
  }
  if (why.empty()) return "";
  return absl::StrCat("the windows must tile a dense NCHW image exactly (kernel = stride, no "
                      "dilation or padding), but ",
                      absl::StrJoin(why, ", "));
}

std::vector<std::pair<int64_t, int64_t>> PatchesTiles(const Im2colGeometry& g,
                                                      int64_t element_bytes) {
  constexpr int64_t kMinTiles = 256;
  const int64_t oh = g.OH();
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int64_t rows = 1; rows <= 8 && rows <= g.kh; rows *= 2) {
    int64_t band = oh;
    auto stage = [&] { return PatchesStage(g, rows, band, element_bytes); };
    auto tiles = [&] { return g.n * g.c * CeilDiv(g.kh, rows) * CeilDiv(oh, band); };
    while (band > 1 && (stage() > kPatchesStageBytes || tiles() < kMinTiles)) {
      band = CeilDiv(band, 2);
    }
    if (stage() <= kPatchesStageBytes) out.push_back({rows, band});
  }
  return out;
}

LaunchParams FitWholeRunTile(const LaunchParams& tuned, int64_t their_run, int64_t our_run,
                             int64_t max_growth) {
  if (tuned.tile.size() != 2 || their_run <= 0 || our_run <= 0 || max_growth <= 0 ||
      tuned.tile[1] < their_run) {
    return tuned;
  }
  LaunchParams fitted = tuned;
  fitted.tile[1] = our_run;
  const int64_t rows = (max_growth * tuned.tile[0] * their_run + our_run / 2) / our_run;
  fitted.tile[0] = std::clamp<int64_t>(rows, 1, tuned.tile[0]);
  return fitted;
}

absl::StatusOr<PatchesPlan> PlanPatches(const Im2colGeometry& g, absl::Span<const int64_t> tile,
                                        int64_t element_bytes) {
  constexpr int64_t kTwoTo31 = int64_t{1} << 31;
  if (tile.size() != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the patches forms' tile is [kernel rows, window rows]; got ", tile.size(), " extents"));
  }
  const int64_t oh = g.OH(), ow = g.OW(), l = oh * ow;
  if (l >= kTwoTo31) {
    return absl::InvalidArgumentError(absl::StrCat(
        "channel_rows columns of OH*OW=", l, " per row: the patches forms need below 2^31"));
  }
  PatchesPlan plan;
  plan.rows = std::clamp<int64_t>(tile[0], 1, g.kh);
  plan.oh = std::clamp<int64_t>(tile[1], 1, oh);
  plan.row_tiles = CeilDiv(g.kh, plan.rows);
  plan.oh_tiles = CeilDiv(oh, plan.oh);
  if (g.n * g.c >= kTwoTo31 / plan.row_tiles / plan.oh_tiles) {
    return absl::InvalidArgumentError(absl::StrCat(
        g.n * g.c, " planes x ", plan.row_tiles, " x ", plan.oh_tiles,
        " tiles exceed the 2^31-1 CTA grid; use a larger tile"));
  }
  plan.tiles = g.n * g.c * plan.row_tiles * plan.oh_tiles;
  plan.whole = plan.oh == oh;
  const int64_t e = element_bytes;
  plan.matrix_align_bytes = plan.whole ? std::gcd<int64_t>(16, g.kw * l * e)
                                       : std::gcd(std::gcd<int64_t>(16, l * e), ow * e);
  plan.stage_bytes = RoundUp(PatchesStage(g, plan.rows, plan.oh, e), 16);
  return plan;
}

LaunchParams FitPatchesTile(const LaunchParams& tuned, const Im2colGeometry& theirs,
                            const Im2colGeometry& ours, int64_t element_bytes) {
  if (tuned.tile.size() != 2 || tuned.tile[0] < 1 || tuned.tile[1] < 1 || theirs.OH() < 1 ||
      theirs.OW() < 1 || ours.OH() < 1 || ours.OW() < 1 || element_bytes < 1) {
    return tuned;
  }
  const int64_t tuned_stage =
      PatchesStage(theirs, tuned.tile[0], std::min(tuned.tile[1], theirs.OH()), element_bytes);
  LaunchParams fitted = tuned;
  fitted.tile[1] = tuned.tile[1] >= theirs.OH() ? ours.OH() : std::min(tuned.tile[1], ours.OH());
  const int64_t per_window_row = PatchesStage(ours, tuned.tile[0], 1, element_bytes);
  const int64_t most =
      std::max<int64_t>(1, std::max(kPatchesStageBytes, tuned_stage) / per_window_row);
  fitted.tile[1] = std::min(fitted.tile[1], most);
  return fitted;
}

std::string ConvTransferFamily(const Im2colGeometry& g, bool channel_rows) {
  const bool tiles = g.kh > 0 && g.kw > 0 && g.kh == g.sh && g.kw == g.sw && g.dh == 1 &&
                     g.dw == 1 && g.ph == 0 && g.pw == 0 && g.h % g.kh == 0 && g.w % g.kw == 0;
  return channel_rows && tiles ? "patches" : "";
}

std::vector<double> ConvTransferFeatures(const Im2colGeometry& g, int element_bytes,
                                         bool channel_rows) {
  auto lg = [](int64_t v) { return std::log2(static_cast<double>(std::max<int64_t>(v, 1))); };
  const int64_t align = ConvPixelAlignment(g, element_bytes);
  // A geometry read from a file may be invalid (the caller checks); keep the logs finite.
  const int64_t m = std::max<int64_t>(g.n, 1) * std::max<int64_t>(g.OH(), 1) *
                    std::max<int64_t>(g.OW(), 1);
  const int64_t k = g.K();
  // The patches forms apply only where the windows tile the image exactly; a record of that
  // geometry carries a kernel no other problem can run, and the planes records' kernels
  // leave such problems at up to twice their tuned time (bench/results/heldout_fresh6_miss.md).
  const bool patches = !ConvTransferFamily(g, channel_rows).empty();
  return {lg(g.n), lg(g.h), lg(g.w), lg(g.c),
          // The window and how it moves: kernel area, stride and dilation classes.
          lg(g.kh * g.kw), 2.0 * lg(std::max(g.sh, g.sw)), 2.0 * lg(std::max(g.dh, g.dw)),
          // The widest vector along C (pixel bytes' alignment) and the matrix's shape.
          2.0 * lg(align), 0.5 * lg(m), 0.5 * lg(k),
          // Launch-bound: a column matrix under 8 MiB.
          m * k * element_bytes < (int64_t{8} << 20) ? 2.0 : 0.0,
          // Another kernel family altogether.
          channel_rows ? 64.0 : 0.0,
          // Among those, the exact patches geometry.
          patches ? 16.0 : 0.0};
}

std::string DescribeConvOp(const std::string& op, const Im2colGeometry& g, const Buffer& img,
                           ColumnOrder order) {
  std::string text =
      absl::StrCat(op, " ", DataTypeName(img.dtype), " N", g.n, " C", g.c, " ", g.h, "x", g.w,
                   " k", g.kh, "x", g.kw, " s", g.sh, "x", g.sw, " d", g.dh, "x", g.dw, " p",
                   g.ph, "x", g.pw);
  if (img.shape.size() == 4 && img.strides == NchwStrides(g)) {
    absl::StrAppend(&text, " NCHW");
  } else if (!img.IsRowMajor()) {
    absl::StrAppend(&text, " img strides [", absl::StrJoin(img.strides, ", "), "]");
  }
  if (order != ColumnOrder::kPixelRows) absl::StrAppend(&text, " ", ColumnOrderName(order));
  return text;
}

void AppendConvKey(const std::string& op, const Im2colGeometry& g, const Buffer& img,
                   ColumnOrder order, const Hints& hints, std::string& key) {
  key.append(op);
  key.push_back(static_cast<char>(img.dtype));
  key.push_back(order == ColumnOrder::kChannelRows ? 'c' : 'p');
  AppendKeyInts(key, img.shape);
  AppendKeyInts(key, img.strides);
  AppendKeyInts(key, {g.n, g.h, g.w, g.c, g.kh, g.kw, g.sh, g.sw, g.dh, g.dw, g.ph, g.pw});
  AppendHintsKey(hints, key);
}

}  // namespace tiletune

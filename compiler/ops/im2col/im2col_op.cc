#include "compiler/ops/im2col/im2col_op.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/base/status_macros.h"

namespace tiletune {
namespace {

int64_t OutputExtent(int64_t size, int64_t pad, int64_t effective_kernel, int64_t stride) {
  int64_t span = size + 2 * pad - effective_kernel;
  if (span < 0 || stride <= 0) return 0;
  return span / stride + 1;
}

}  // namespace

int64_t Im2colGeometry::OH() const { return OutputExtent(h, ph, EffectiveKh(), sh); }

int64_t Im2colGeometry::OW() const { return OutputExtent(w, pw, EffectiveKw(), sw); }

absl::Status ValidateConvGeometry(const Im2colGeometry& g, absl::string_view op) {
  struct Field {
    const char* name;
    int64_t value;
    int64_t min;
    int64_t max;
    const char* what;
  };
  const Field fields[] = {
      {"n", g.n, 1, kMaxIm2colElements, "the batch size must be positive"},
      {"h", g.h, 1, kMaxIm2colElements, "the image height must be positive"},
      {"w", g.w, 1, kMaxIm2colElements, "the image width must be positive"},
      {"c", g.c, 1, kMaxIm2colElements, "the channel count must be positive"},
      {"kh", g.kh, 1, kMaxIm2colWindowParam, "kernel sizes (--kernel) must be positive"},
      {"kw", g.kw, 1, kMaxIm2colWindowParam, "kernel sizes (--kernel) must be positive"},
      {"sh", g.sh, 1, kMaxIm2colWindowParam, "strides (--stride) must be positive"},
      {"sw", g.sw, 1, kMaxIm2colWindowParam, "strides (--stride) must be positive"},
      {"dh", g.dh, 1, kMaxIm2colWindowParam, "dilations (--dilation) must be positive"},
      {"dw", g.dw, 1, kMaxIm2colWindowParam, "dilations (--dilation) must be positive"},
      {"ph", g.ph, 0, kMaxIm2colWindowParam, "pads (--pad) must be zero or more"},
      {"pw", g.pw, 0, kMaxIm2colWindowParam, "pads (--pad) must be zero or more"},
  };
  for (const Field& f : fields) {
    if (f.value < f.min || f.value > f.max) {
      return absl::InvalidArgumentError(absl::StrCat(op, " ", f.name, "=", f.value, ": ",
                                                     f.what, "; accepted are ", f.min, " to ",
                                                     f.max));
    }
  }
  struct Axis {
    const char* name;
    int64_t size, kernel, dilation, pad, effective, out;
  };
  const Axis axes[] = {{"h", g.h, g.kh, g.dh, g.ph, g.EffectiveKh(), g.OH()},
                       {"w", g.w, g.kw, g.dw, g.pw, g.EffectiveKw(), g.OW()}};
  for (const Axis& a : axes) {
    if (a.pad >= a.effective) {
      return absl::InvalidArgumentError(absl::StrCat(
          op, " p", a.name, "=", a.pad, " with k", a.name, "=", a.kernel, " and d", a.name, "=",
          a.dilation, ": the pad must be smaller than the effective kernel (k", a.name, "-1)*d",
          a.name, "+1 = ", a.effective, ", i.e. 0 to ", a.effective - 1,
          "; a larger pad gives windows of padding only"));
    }
    if (a.out < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          op, " output ", a.name, " is 0: ", a.name, "=", a.size, " plus twice p", a.name, "=",
          a.pad, " is ", a.size + 2 * a.pad, ", smaller than the effective kernel ", a.effective,
          " = (k", a.name, "-1)*d", a.name, "+1; enlarge the image or the pad, or shrink the "
          "kernel or dilation"));
    }
  }
  // Sizes are each below 2^40 here, so pairwise products fit in 128 bits; check in steps
  // that cannot overflow 64 bits.
  auto product_fits = [](std::vector<int64_t> factors) {
    int64_t p = 1;
    for (int64_t f : factors) {
      if (p > kMaxIm2colElements / f) return false;
      p *= f;
    }
    return true;
  };
  if (!product_fits({g.n, g.h, g.w, g.c})) {
    return absl::InvalidArgumentError(absl::StrCat(
        op, " image ", g.n, "x", g.h, "x", g.w, "x", g.c, " exceeds 2^40 elements"));
  }
  if (!product_fits({g.kh, g.kw, g.c}) || !product_fits({g.n, g.OH(), g.OW()}) ||
      !product_fits({g.n, g.OH(), g.OW(), g.kh, g.kw, g.c})) {
    return absl::InvalidArgumentError(absl::StrCat(
        op, " column matrix [N*OH*OW, KH*KW*C] = [", g.n, "*", g.OH(), "*", g.OW(), ", ", g.kh,
        "*", g.kw, "*", g.c, "] exceeds 2^40 elements; tile the problem over batches"));
  }
  return absl::OkStatus();
}

absl::Status ValidateIm2colGeometry(const Im2colGeometry& geometry) {
  return ValidateConvGeometry(geometry, "im2col");
}

std::string Im2colGeometryToString(const Im2colGeometry& g) {
  return absl::StrCat("n", g.n, " h", g.h, " w", g.w, " c", g.c, " kernel ", g.kh, "x", g.kw,
                      " stride ", g.sh, "x", g.sw, " dilation ", g.dh, "x", g.dw, " pad ", g.ph,
                      "x", g.pw, " -> [", g.M(), ", ", g.K(), "]");
}

std::string ColumnOrderName(ColumnOrder order) {
  return order == ColumnOrder::kChannelRows ? "channel_rows" : "pixel_rows";
}

const std::string& Im2colOp::Name() {
  static const std::string* const name = new std::string("im2col");
  return *name;
}

HintScope Im2colHintScope() {
  HintScope scope{Im2colOp::Name(), {"img", "col"}};
  scope.choices = {{kImgPrefetchKey, {"ahead", "all"}},
                   {kStagedGatherKey, {"table", "phase", "row_phase"}},
                   {kPlanesGatherKey, {"element", "span", "shared", "shared_runs", "patches"}},
                   {kRowVectorKey, {"channels", "window_row"}}};
  return scope;
}

Im2colOp Im2colOp::Dense(DataType dtype, const Im2colGeometry& geometry) {
  Im2colOp op;
  op.img = Buffer::RowMajor("img", dtype, Scope::kGlobal,
                            {geometry.n, geometry.h, geometry.w, geometry.c});
  op.geometry = geometry;
  return op;
}

absl::Status ValidateIm2colOp(const Im2colOp& op) {
  TT_RETURN_IF_ERROR(ValidateIm2colGeometry(op.geometry));
  TT_RETURN_IF_ERROR(ValidateBuffer(op.img));
  if (op.img.scope != Scope::kGlobal) {
    return absl::InvalidArgumentError(absl::StrCat(
        "im2col image ", op.img.name, " is in ", ScopeName(op.img.scope),
        " memory; the im2col kernel reads a global image"));
  }
  const Im2colGeometry& g = op.geometry;
  std::vector<int64_t> expected = {g.n, g.h, g.w, g.c};
  if (op.img.shape != expected) {
    return absl::InvalidArgumentError(absl::StrCat(
        "im2col image ", op.img.name, " has shape [", absl::StrJoin(op.img.shape, ", "),
        "] but the geometry says NHWC [", absl::StrJoin(expected, ", "),
        "]; give the image as a rank-4 NHWC buffer of that shape"));
  }
  return ResolveHints(op.hints, Im2colHintScope()).status();
}

}  // namespace tiletune

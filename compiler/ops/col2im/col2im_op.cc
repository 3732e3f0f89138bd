#include "compiler/ops/col2im/col2im_op.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/base/status_macros.h"

namespace tiletune {
const std::string& Col2imOp::Name() {
  static const std::string* const name = new std::string("col2im");
  return *name;
}

HintScope Col2imHintScope() {
  HintScope scope{Col2imOp::Name(), {"col", "img"}};
  scope.choices = {{kCol2imPlanesGatherKey, {"element", "patches"}}};
  return scope;
}

Col2imOp Col2imOp::Dense(DataType dtype, const Im2colGeometry& geometry) {
  Col2imOp op;
  op.img = Buffer::RowMajor("img", dtype, Scope::kGlobal,
                            {geometry.n, geometry.h, geometry.w, geometry.c});
  op.geometry = geometry;
  return op;
}

absl::Status ValidateCol2imOp(const Col2imOp& op) {
  TT_RETURN_IF_ERROR(ValidateConvGeometry(op.geometry, Col2imOp::Name()));
  const DataType dtype = op.img.dtype;
  if (dtype != DataType::kF32 && dtype != DataType::kF16 && dtype != DataType::kBF16) {
    return absl::InvalidArgumentError(absl::StrCat(
        "col2im dtype ", DataTypeName(dtype),
        ": col2im sums column entries, so it takes floating-point data; accepted are f32, f16, "
        "bf16"));
  }
  TT_RETURN_IF_ERROR(ValidateBuffer(op.img));
  if (op.img.scope != Scope::kGlobal) {
    return absl::InvalidArgumentError(absl::StrCat(
        "col2im image ", op.img.name, " is in ", ScopeName(op.img.scope),
        " memory; the col2im kernel writes a global image"));
  }
  const Im2colGeometry& g = op.geometry;
  const std::vector<int64_t> expected = {g.n, g.h, g.w, g.c};
  if (op.img.shape != expected) {
    return absl::InvalidArgumentError(absl::StrCat(
        "col2im image ", op.img.name, " has shape [", absl::StrJoin(op.img.shape, ", "),
        "] but the geometry says NHWC [", absl::StrJoin(expected, ", "),
        "]; give the image as a rank-4 NHWC buffer of that shape"));
  }
  if (!op.img.ElementsAreDistinct()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "col2im image ", op.img.name, " strides [", absl::StrJoin(op.img.strides, ", "),
        "] make two elements of shape [", absl::StrJoin(op.img.shape, ", "),
        "] share an address; an output's elements must be distinct"));
  }
  return ResolveHints(op.hints, Col2imHintScope()).status();
}

int64_t Col2imColumnBytes(const Col2imOp& op) {
  return op.geometry.M() * op.geometry.K() * DataTypeBytes(op.img.dtype);
}

}  // namespace tiletune

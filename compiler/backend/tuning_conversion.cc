#include "compiler/backend/tuning_conversion.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/base/status_macros.h"
#include "compiler/ir/buffer.h"

namespace tiletune {

autotune::Problem ProblemFromCopyOp(const CopyOp& op) {
  autotune::Problem problem;
  problem.set_op("copy");
  problem.set_dtype(DataTypeName(op.src.buffer.dtype));
  for (int64_t e : op.src.extents) problem.add_shape(e);
  for (int64_t s : op.src.buffer.strides) problem.add_src_strides(s);
  for (int64_t s : op.dst.buffer.strides) problem.add_dst_strides(s);
  for (int64_t o : op.src.offsets) problem.add_src_offset(o);
  for (int64_t o : op.dst.offsets) problem.add_dst_offset(o);
  return problem;
}

absl::StatusOr<CopyOp> CopyOpFromProblem(const autotune::Problem& problem) {
  if (problem.op() != "copy") {
    return absl::InvalidArgumentError(
        absl::StrCat("problem op '", problem.op(), "' is not a copy"));
  }
  TT_ASSIGN_OR_RETURN(DataType dtype, ParseDataType(problem.dtype()));
  std::vector<int64_t> shape(problem.shape().begin(), problem.shape().end());
  int rank = static_cast<int>(shape.size());
  auto side = [&](const std::string& name, const auto& strides,
                  const auto& offsets) -> absl::StatusOr<Region> {
    std::vector<int64_t> offset(rank, 0);
    if (offsets.size() == rank) offset.assign(offsets.begin(), offsets.end());
    else if (!offsets.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(name, " offset has ", offsets.size(),
                                                     " values for a rank-", rank, " problem"));
    }
    std::vector<int64_t> buffer_shape(rank);
    for (int d = 0; d < rank; ++d) buffer_shape[d] = offset[d] + shape[d];
    Buffer buffer = Buffer::RowMajor(name, dtype, Scope::kGlobal, buffer_shape);
    if (strides.size() == rank) buffer.strides.assign(strides.begin(), strides.end());
    else if (!strides.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(name, " strides have ", strides.size(),
                                                     " values for a rank-", rank, " problem"));
    }
    return Region::Box(buffer, offset, shape);
  };
  CopyOp op;
  TT_ASSIGN_OR_RETURN(op.src, side("src", problem.src_strides(), problem.src_offset()));
  TT_ASSIGN_OR_RETURN(op.dst, side("dst", problem.dst_strides(), problem.dst_offset()));
  TT_RETURN_IF_ERROR(ValidateCopyOp(op));
  return op;
}

autotune::Variant VariantFromLowered(const CopyHints& hints, const LoweredCopy& lowered,
                                     const std::string& source_sha256) {
  autotune::Variant variant;
  autotune::Hints* h = variant.mutable_hints();
  if (hints.coalesced_width) h->set_coalesced_width(*hints.coalesced_width);
  h->set_disable_tma(hints.disable_tma);
  if (hints.eviction_policy) h->set_eviction_policy(EvictionPolicyName(*hints.eviction_policy));
  if (hints.prefer_instruction) {
    h->set_prefer_instruction(InstructionName(*hints.prefer_instruction));
  }
  if (hints.loop_layout) h->set_loop_layout(LoopLayoutName(*hints.loop_layout));
  for (const auto& [key, value] : hints.annotations) (*h->mutable_annotations())[key] = value;
  autotune::Lowering* l = variant.mutable_lowering();
  l->set_path(LoweringPathName(lowered.path));
  for (int64_t t : lowered.launch.tile) l->add_tile(t);
  l->set_threads(lowered.launch.threads);
  l->set_stages(lowered.launch.stages);
  l->set_vector_bytes(lowered.vector_elems * lowered.element_bytes);
  l->set_through_shared(lowered.launch.through_shared);
  l->set_ctas_per_sm(lowered.launch.ctas_per_sm);
  variant.set_source_sha256(source_sha256);
  return variant;
}

autotune::Problem ProblemFromIm2colOp(const Im2colOp& op) {
  autotune::Problem problem;
  problem.set_op("im2col");
  problem.set_dtype(DataTypeName(op.img.dtype));
  for (int64_t e : op.img.shape) problem.add_shape(e);
  for (int64_t s : op.img.strides) problem.add_src_strides(s);
  const Im2colGeometry& g = op.geometry;
  autotune::Im2colGeometry* p = problem.mutable_im2col();
  p->set_n(g.n);
  p->set_h(g.h);
  p->set_w(g.w);
  p->set_c(g.c);
  p->set_kh(g.kh);
  p->set_kw(g.kw);
  p->set_sh(g.sh);
  p->set_sw(g.sw);
  p->set_dh(g.dh);
  p->set_dw(g.dw);
  p->set_ph(g.ph);
  p->set_pw(g.pw);
  p->set_block_m(std::max<int64_t>(1, g.M()));
  p->set_block_k(std::max<int64_t>(1, g.K()));
  return problem;
}

absl::StatusOr<Im2colOp> Im2colOpFromProblem(const autotune::Problem& problem) {
  if (problem.op() != "im2col" || !problem.has_im2col()) {
    return absl::InvalidArgumentError(
        absl::StrCat("problem op '", problem.op(), "' is not an im2col with a geometry"));
  }
  TT_ASSIGN_OR_RETURN(DataType dtype, ParseDataType(problem.dtype()));
  const autotune::Im2colGeometry& p = problem.im2col();
  Im2colGeometry g;
  g.n = p.n();
  g.h = p.h();
  g.w = p.w();
  g.c = p.c();
  g.kh = p.kh();
  g.kw = p.kw();
  g.sh = p.sh();
  g.sw = p.sw();
  g.dh = p.dh();
  g.dw = p.dw();
  g.ph = p.ph();
  g.pw = p.pw();
  Im2colOp op = Im2colOp::Dense(dtype, g);
  if (problem.src_strides_size() == 4) {
    op.img.strides.assign(problem.src_strides().begin(), problem.src_strides().end());
  }
  return op;
}

autotune::Variant VariantFromLoweredIm2col(const CopyHints& hints, const LoweredIm2col& lowered,
                                           const std::string& source_sha256) {
  LoweredCopy shape;
  shape.path = lowered.path;
  shape.launch = lowered.launch;
  // The width of the stores: the flat form writes wider vectors than C allows.
  shape.vector_elems =
      lowered.flat_vector_elems > 0 ? lowered.flat_vector_elems : lowered.vector_elems;
  shape.element_bytes = lowered.element_bytes;
  return VariantFromLowered(hints, shape, source_sha256);
}

absl::Status ApplyVariant(const autotune::Variant& variant, CopyHints* hints,
                          LaunchParams* launch) {
  const autotune::Hints& h = variant.hints();
  CopyHints out;
  if (h.coalesced_width() != 0) out.coalesced_width = h.coalesced_width();
  out.disable_tma = h.disable_tma();
  if (!h.eviction_policy().empty()) {
    TT_ASSIGN_OR_RETURN(out.eviction_policy, ParseEvictionPolicy(h.eviction_policy()));
  }
  if (!h.prefer_instruction().empty()) {
    TT_ASSIGN_OR_RETURN(out.prefer_instruction, ParseInstruction(h.prefer_instruction()));
  }
  if (!h.loop_layout().empty()) {
    TT_ASSIGN_OR_RETURN(out.loop_layout, ParseLoopLayout(h.loop_layout()));
  }
  for (const auto& [key, value] : h.annotations()) out.annotations[key] = value;
  TT_RETURN_IF_ERROR(ResolveHints(out).status());
  const autotune::Lowering& l = variant.lowering();
  LaunchParams params;
  params.tile.assign(l.tile().begin(), l.tile().end());
  params.threads = l.threads();
  params.stages = l.stages() > 0 ? l.stages() : 1;
  params.through_shared = l.through_shared();
  params.ctas_per_sm = l.ctas_per_sm();
  if (params.tile.empty() || params.threads <= 0) {
    return absl::InvalidArgumentError("stored variant has no tile or thread count");
  }
  *hints = std::move(out);
  *launch = std::move(params);
  return absl::OkStatus();
}

}  // namespace tiletune

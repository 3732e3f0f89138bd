// Test helpers of the convolution operators (im2col, col2im):
// - G: an Im2colGeometry from its twelve numbers, in the order the geometry string prints
//   them (image, kernel, stride, dilation, pad; h before w);
//
//     Im2colGeometry stem = G(32, 224, 224, 3, 7, 7, 2, 2, 1, 1, 3, 3);
//
// - HeuristicForm: the form the operator's heuristic kernel takes for an op with `hints`.
#ifndef COMPILER_OPS_IM2COL_IM2COL_TEST_UTIL_H_
#define COMPILER_OPS_IM2COL_IM2COL_TEST_UTIL_H_

#include <cstdint>
#include <memory>
#include <string>

#include "compiler/ir/hints.h"
#include "compiler/ops/im2col/im2col_op.h"
#include "compiler/ops/tile_op_definition.h"
#include "compiler/target/target.h"

namespace tiletune {

inline Im2colGeometry G(int64_t n, int64_t h, int64_t w, int64_t c, int64_t kh, int64_t kw,
                        int64_t sh = 1, int64_t sw = 1, int64_t dh = 1, int64_t dw = 1,
                        int64_t ph = 0, int64_t pw = 0) {
  Im2colGeometry g;
  g.n = n;
  g.h = h;
  g.w = w;
  g.c = c;
  g.kh = kh;
  g.kw = kw;
  g.sh = sh;
  g.sw = sw;
  g.dh = dh;
  g.dw = dw;
  g.ph = ph;
  g.pw = pw;
  return g;
}

// The form name of the kernel `definition`'s heuristic lowers to for `op` with `hints`
// in place of its own, or the lowering's error message.
inline std::string HeuristicForm(const TileOpDefinition& definition, const TileOp& op,
                                 const Hints& hints, const Target& target) {
  std::unique_ptr<TileOp> with = op.Clone();
  with->hints = hints;
  const Trial trial = definition.Heuristic(*with, target);
  with->hints = trial.hints;
  auto lowered = definition.Lower(*with, target, trial.launch);
  return lowered.ok() ? (*lowered)->form_name : std::string(lowered.status().message());
}

}  // namespace tiletune

#endif  // COMPILER_OPS_IM2COL_IM2COL_TEST_UTIL_H_

// Test helper: an Im2colGeometry from its twelve numbers, in the order the geometry
// string prints them (image, kernel, stride, dilation, pad; h before w).
//
//   Im2colGeometry stem = G(32, 224, 224, 3, 7, 7, 2, 2, 1, 1, 3, 3);
#ifndef COMPILER_OPS_IM2COL_IM2COL_TEST_UTIL_H_
#define COMPILER_OPS_IM2COL_IM2COL_TEST_UTIL_H_

#include <cstdint>

#include "compiler/ops/im2col/im2col_op.h"

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

}  // namespace tiletune

#endif  // COMPILER_OPS_IM2COL_IM2COL_TEST_UTIL_H_

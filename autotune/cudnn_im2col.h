// cudnnIm2Col as the tuner's im2col baseline, with cuDNN loaded at run time: the tuner
// neither links cuDNN nor needs it, and says why when it cannot load it.
//
//   absl::StatusOr<std::unique_ptr<CudnnIm2col>> cudnn =
//       CudnnIm2col::Create(DataType::kF16, geometry);
//   if (!cudnn.ok()) ... the baseline is unavailable: cudnn.status().message() says why
//   TT_RETURN_IF_ERROR((*cudnn)->Run(img, col));  // on the null stream
//
// cuDNN takes an NCHW image and writes its own column layout ((c, kh, kw) per row); as a
// baseline it reads the same image bytes and writes the same column bytes as tiletune's
// NHWC im2col, which is all a timing needs. It runs on the calling thread's current
// context, which must be the device's primary context (the one cuDNN's runtime uses).
#ifndef AUTOTUNE_CUDNN_IM2COL_H_
#define AUTOTUNE_CUDNN_IM2COL_H_

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/ir/data_type.h"
#include "compiler/ops/im2col/im2col_op.h"

namespace tiletune {
namespace autotune {

class CudnnIm2col {
 public:
  // Loads libcudnn.so.9 (once per process; $TILETUNE_CUDNN names another file) and sets up
  // a handle and descriptors for `dtype` images of `geometry`. Unavailable naming the
  // library and the loader's error when cuDNN cannot be loaded; InvalidArgument for a
  // dtype cuDNN has no type for or a geometry beyond its int sizes; Internal naming the
  // cuDNN call and its error otherwise.
  static absl::StatusOr<std::unique_ptr<CudnnIm2col>> Create(DataType dtype,
                                                             const Im2colGeometry& geometry);
  ~CudnnIm2col();
  CudnnIm2col(const CudnnIm2col&) = delete;
  CudnnIm2col& operator=(const CudnnIm2col&) = delete;

  // cudnnIm2Col of the NCHW image at device address `img` into `col`, on the null stream.
  absl::Status Run(uint64_t img, uint64_t col);

 private:
  struct State;
  explicit CudnnIm2col(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace autotune
}  // namespace tiletune

#endif  // AUTOTUNE_CUDNN_IM2COL_H_

#include "kernels/im2col_verify.h"

#include <cstdint>
#include <random>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/base/status_macros.h"
#include "kernels/copy_reference.h"
#include "kernels/im2col_reference.h"

namespace tiletune {

absl::Status VerifyIm2col(const Context& context, Im2colKernel& kernel, const Im2colOp& op,
                          std::mt19937_64& rng) {
  const size_t guard = kIm2colGuardBytes;
  size_t img_span = SpanBytes(op.img);
  size_t col_span = Im2colColumnBytes(op);
  std::vector<uint8_t> img(img_span + 2 * guard);
  for (size_t i = 0; i < img.size(); i += 8) {
    uint64_t word = rng();
    for (size_t j = 0; j < 8 && i + j < img.size(); ++j) img[i + j] = uint8_t(word >> (8 * j));
  }
  // A non-zero poison, so padding written as zero is told apart from an untouched byte.
  uint8_t poison = static_cast<uint8_t>(1 + rng() % 255);
  std::vector<uint8_t> expected(col_span + 2 * guard, poison);
  TT_RETURN_IF_ERROR(Im2colReference(op, img.data() + guard, img_span, expected.data() + guard,
                                     col_span));

  TT_ASSIGN_OR_RETURN(DeviceBuffer img_device, DeviceBuffer::Allocate(context, img.size()));
  TT_ASSIGN_OR_RETURN(DeviceBuffer col_device, DeviceBuffer::Allocate(context, expected.size()));
  TT_RETURN_IF_ERROR(img_device.CopyFromHost(img.data(), img.size()));
  TT_RETURN_IF_ERROR(col_device.Fill(poison));
  TT_RETURN_IF_ERROR(
      kernel.Launch(img_device.ptr() + guard, col_device.ptr() + guard, /*stream=*/nullptr));
  TT_RETURN_IF_ERROR(context.Synchronize());
  std::vector<uint8_t> got(expected.size());
  TT_RETURN_IF_ERROR(col_device.CopyToHost(got.data(), got.size()));
  std::vector<uint8_t> img_after(img.size());
  TT_RETURN_IF_ERROR(img_device.CopyToHost(img_after.data(), img_after.size()));
  if (img_after != img) return absl::DataLossError("the kernel wrote to its image buffer");
  const int e = DataTypeBytes(op.img.dtype);
  const int64_t k_count = op.geometry.K();
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] == expected[i]) continue;
    std::string where;
    if (i < guard) {
      where = absl::StrCat("guard zone before col, ", guard - i, " B before the buffer");
    } else if (i >= guard + col_span) {
      where = absl::StrCat("guard zone after col, ", i - guard - col_span, " B past its end");
    } else {
      int64_t element = static_cast<int64_t>((i - guard) / e);
      where = absl::StrCat("col byte ", i - guard, " (row m=", element / k_count, ", column k=",
                           element % k_count, ")");
    }
    size_t wrong = 0;
    for (size_t j = i; j < got.size(); ++j) wrong += got[j] != expected[j];
    return absl::DataLossError(absl::StrCat(kernel.lowered().kernel_name, " wrote 0x",
                                            absl::Hex(got[i]), " at ", where, "; expected 0x",
                                            absl::Hex(expected[i]), " (poison 0x",
                                            absl::Hex(poison), "); ", wrong,
                                            " wrong byte(s) from there on"));
  }
  return absl::OkStatus();
}

}  // namespace tiletune

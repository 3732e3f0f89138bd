#include "kernels/copy_verify.h"

#include <cstdint>
#include <random>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/base/status_macros.h"
#include "kernels/copy_reference.h"

namespace tiletune {

absl::Status VerifyCopy(const Context& context, CopyKernel& kernel, const CopyOp& op,
                        std::mt19937_64& rng) {
  size_t src_span = SpanBytes(op.src.buffer);
  size_t dst_span = SpanBytes(op.dst.buffer);
  std::vector<uint8_t> src(src_span + 2 * kGuardBytes);
  for (size_t i = 0; i < src.size(); i += 8) {
    uint64_t word = rng();
    for (size_t j = 0; j < 8 && i + j < src.size(); ++j) src[i + j] = uint8_t(word >> (8 * j));
  }
  uint8_t poison = static_cast<uint8_t>(rng());
  std::vector<uint8_t> expected(dst_span + 2 * kGuardBytes, poison);
  TT_RETURN_IF_ERROR(CopyReference(op, src.data() + kGuardBytes, src_span,
                                   expected.data() + kGuardBytes, dst_span));

  TT_ASSIGN_OR_RETURN(DeviceBuffer src_device, DeviceBuffer::Allocate(context, src.size()));
  TT_ASSIGN_OR_RETURN(DeviceBuffer dst_device, DeviceBuffer::Allocate(context, expected.size()));
  TT_RETURN_IF_ERROR(src_device.CopyFromHost(src.data(), src.size()));
  TT_RETURN_IF_ERROR(dst_device.Fill(poison));
  TT_RETURN_IF_ERROR(kernel.Launch(src_device.ptr() + kGuardBytes,
                                   dst_device.ptr() + kGuardBytes, /*stream=*/nullptr));
  TT_RETURN_IF_ERROR(context.Synchronize());
  std::vector<uint8_t> got(expected.size());
  TT_RETURN_IF_ERROR(dst_device.CopyToHost(got.data(), got.size()));
  std::vector<uint8_t> src_after(src.size());
  TT_RETURN_IF_ERROR(src_device.CopyToHost(src_after.data(), src_after.size()));
  if (src_after != src) return absl::DataLossError("the kernel wrote to its source buffer");
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] == expected[i]) continue;
    std::string where;
    if (i < kGuardBytes) {
      where = absl::StrCat("guard zone before dst, ", kGuardBytes - i, " B before the buffer");
    } else if (i >= kGuardBytes + dst_span) {
      where = absl::StrCat("guard zone after dst, ", i - kGuardBytes - dst_span, " B past its end");
    } else {
      where = absl::StrCat("dst byte ", i - kGuardBytes, " (element ",
                           (i - kGuardBytes) / DataTypeBytes(op.dst.buffer.dtype), ")");
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

// Byte-exact comparisons on the GPU, for verifying large outputs without copying them to
// the host: counts differing bytes and finds the first one.
//
//   TT_ASSIGN_OR_RETURN(auto check, DeviceCheck::Create(context, compiler));
//   TT_ASSIGN_OR_RETURN(Mismatch m, check->Compare(got.ptr(), expected.ptr(), bytes, stream));
//   if (m.count > 0) ... m.first ...
#ifndef KERNELS_DEVICE_CHECK_H_
#define KERNELS_DEVICE_CHECK_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "compiler/cuda/compilation_provider.h"
#include "cuda.h"
#include "kernels/runtime/runtime.h"

namespace tiletune {

struct Mismatch {
  uint64_t count = 0;
  // Byte offset of the first difference; meaningful when count > 0.
  uint64_t first = 0;
};

class DeviceCheck {
 public:
  static absl::StatusOr<std::unique_ptr<DeviceCheck>> Create(const Context& context,
                                                             CompilationProvider& compiler);

  // Compares `bytes` bytes of `got` and `expected`; synchronises `stream`.
  absl::StatusOr<Mismatch> Compare(CUdeviceptr got, CUdeviceptr expected, uint64_t bytes,
                                   CUstream stream);

 private:
  DeviceCheck(std::unique_ptr<Module> module, Kernel kernel, DeviceBuffer result)
      : module_(std::move(module)), kernel_(std::move(kernel)), result_(std::move(result)) {}

  std::unique_ptr<Module> module_;
  Kernel kernel_;
  // Two u64: mismatch count and first mismatch offset.
  DeviceBuffer result_;
};

}  // namespace tiletune

#endif  // KERNELS_DEVICE_CHECK_H_

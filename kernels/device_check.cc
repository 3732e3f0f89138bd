#include "kernels/device_check.h"

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "compiler/base/status_macros.h"
#include "kernels/runtime/driver_api.h"

namespace tiletune {
namespace {

constexpr char kCompareSource[] = R"cuda(
typedef unsigned char u8;
typedef unsigned long long u64;
// result[0] += differing bytes; result[1] = min offset of a difference.
extern "C" __global__ void tt_compare_bytes(const u8* __restrict__ got,
                                            const u8* __restrict__ expected, u64 bytes,
                                            u64* result) {
  u64 local = 0, first = ~0ull;
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < bytes;
       i += (u64)gridDim.x * blockDim.x) {
    if (got[i] != expected[i]) {
      ++local;
      if (i < first) first = i;
    }
  }
  if (local != 0) {
    atomicAdd(&result[0], local);
    atomicMin(&result[1], first);
  }
}
)cuda";

}  // namespace

absl::StatusOr<std::unique_ptr<DeviceCheck>> DeviceCheck::Create(const Context& context,
                                                                 CompilationProvider& compiler) {
  CompileOptions options;
  options.arch = context.info().ArchName();
  TT_ASSIGN_OR_RETURN(Cubin cubin,
                      compiler.CompileToCubin({"tt_compare_bytes", kCompareSource}, options));
  TT_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, Module::Load(context, cubin.bytes));
  TT_ASSIGN_OR_RETURN(Kernel kernel, module->GetKernel("tt_compare_bytes", 4));
  TT_ASSIGN_OR_RETURN(DeviceBuffer result, DeviceBuffer::Allocate(context, 16));
  return std::unique_ptr<DeviceCheck>(
      new DeviceCheck(std::move(module), std::move(kernel), std::move(result)));
}

absl::StatusOr<Mismatch> DeviceCheck::Compare(CUdeviceptr got, CUdeviceptr expected,
                                              uint64_t bytes, CUstream stream) {
  uint64_t init[2] = {0, ~0ull};
  TT_RETURN_IF_ERROR(result_.CopyFromHost(init, sizeof(init)));
  CUdeviceptr result = result_.ptr();
  LaunchConfig config;
  config.grid = {1024, 1, 1};
  config.block = {256, 1, 1};
  config.stream = stream;
  TT_RETURN_IF_ERROR(kernel_.Launch(config, {&got, &expected, &bytes, &result}));
  TT_ASSIGN_OR_RETURN(const DriverApi* cu, LoadDriver());
  TT_RETURN_IF_ERROR(ToStatus(cu->cuStreamSynchronize(stream), "cuStreamSynchronize"));
  uint64_t out[2];
  TT_RETURN_IF_ERROR(result_.CopyToHost(out, sizeof(out)));
  return Mismatch{out[0], out[1]};
}

}  // namespace tiletune

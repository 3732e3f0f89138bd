// CompilationProvider backed by NVRTC. Works on machines with no GPU and no driver.
//
//   TT_ASSIGN_OR_RETURN(auto nvrtc, NvrtcCompilationProvider::Create());
//   TT_ASSIGN_OR_RETURN(Ptx ptx, nvrtc->CompileToPtx(source, {.arch = "sm_90a"}));
#ifndef COMPILER_CUDA_NVRTC_COMPILATION_PROVIDER_H_
#define COMPILER_CUDA_NVRTC_COMPILATION_PROVIDER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "compiler/cuda/compilation_provider.h"
#include "compiler/cuda/nvrtc_api.h"

namespace tiletune {

class NvrtcCompilationProvider : public CompilationProvider {
 public:
  // Unavailable when NVRTC cannot be loaded (see nvrtc_api.h for where it is looked for).
  static absl::StatusOr<std::unique_ptr<NvrtcCompilationProvider>> Create();

  std::string Name() const override;
  absl::StatusOr<Ptx> CompileToPtx(const CudaSource& source,
                                   const CompileOptions& options) override;
  absl::StatusOr<Cubin> CompileToCubin(const CudaSource& source,
                                       const CompileOptions& options) override;

 private:
  explicit NvrtcCompilationProvider(const NvrtcApi* api) : api_(api) {}

  enum class Output { kPtx, kCubin };
  // Compiles and returns {output, log}.
  absl::StatusOr<std::pair<std::string, std::string>> Compile(const CudaSource& source,
                                                              const CompileOptions& options,
                                                              Output output);

  const NvrtcApi* api_;
};

}  // namespace tiletune

#endif  // COMPILER_CUDA_NVRTC_COMPILATION_PROVIDER_H_

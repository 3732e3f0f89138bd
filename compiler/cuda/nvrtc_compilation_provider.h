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
  absl::Status CheckArch(absl::string_view arch) const override;
  absl::StatusOr<Ptx> CompileToPtx(const CudaSource& source,
                                   const CompileOptions& options) override;
  absl::StatusOr<Cubin> CompileToCubin(const CudaSource& source,
                                       const CompileOptions& options) override;

 private:
  NvrtcCompilationProvider(const NvrtcApi* api, bool line_info)
      : api_(api), line_info_(line_info) {}

  enum class Output { kPtx, kCubin };
  // Compiles and returns {output, log}.
  absl::StatusOr<std::pair<std::string, std::string>> Compile(const CudaSource& source,
                                                              const CompileOptions& options,
                                                              Output output);

  const NvrtcApi* api_;
  // $TILETUNE_LINE_INFO=1: every kernel with line info, for compute-sanitizer reports that
  // name source lines (Name() says so, so cached kernels without it are not reused).
  bool line_info_ = false;
};

}  // namespace tiletune

#endif  // COMPILER_CUDA_NVRTC_COMPILATION_PROVIDER_H_

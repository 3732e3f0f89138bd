#include "compiler/backend/cuda_codegens.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/base/status_macros.h"
#include "compiler/codegen/copy_emitter.h"
#include "compiler/codegen/im2col_emitter.h"
#include "compiler/lower/copy_lowering.h"
#include "compiler/lower/im2col_lowering.h"

namespace tiletune {
namespace {

class CudaFamilyCodegen : public DeviceCodegen {
 public:
  CudaFamilyCodegen(std::string name, int min_arch, int max_arch, bool tma, bool cp_async)
      : name_(std::move(name)), min_arch_(min_arch), max_arch_(max_arch), tma_(tma),
        cp_async_(cp_async) {}

  std::string name() const override { return name_; }

  bool SupportsTarget(const Target& target) const override {
    return target.kind() == "cuda" && target.arch() >= min_arch_ && target.arch() <= max_arch_;
  }

  absl::StatusOr<BuiltKernel> BuildWithoutCompile(const KernelRequest& request) const override {
    if (!SupportsTarget(request.target)) {
      return absl::InvalidArgumentError(absl::StrCat("codegen ", name_, " does not support ",
                                                     request.target.ToString()));
    }
    TT_ASSIGN_OR_RETURN(LoweredCopy lowered,
                        LowerCopy(request.op, request.target, request.launch));
    bool allowed = lowered.path == LoweringPath::kSyncSimt ||
                   (lowered.path == LoweringPath::kCpAsync && cp_async_) ||
                   ((lowered.path == LoweringPath::kTma || lowered.path == LoweringPath::kBulk1d) &&
                    tma_);
    if (!allowed) {
      return absl::InvalidArgumentError(absl::StrCat("codegen ", name_, " does not emit the ",
                                                     LoweringPathName(lowered.path), " path"));
    }
    BuiltKernel built;
    built.codegen = name_;
    built.source = EmitCopyKernel(lowered);
    built.lowered = std::move(lowered);
    return built;
  }

  absl::StatusOr<BuiltKernel> Build(const KernelRequest& request,
                                    CompilationProvider& compiler) const override {
    TT_ASSIGN_OR_RETURN(BuiltKernel built, BuildWithoutCompile(request));
    CompileOptions options;
    options.arch = request.target.ArchName();
    TT_ASSIGN_OR_RETURN(built.cubin, compiler.CompileToCubin(built.source, options));
    return built;
  }

  absl::StatusOr<BuiltIm2col> BuildIm2colWithoutCompile(
      const Im2colRequest& request) const override {
    if (!SupportsTarget(request.target)) {
      return absl::InvalidArgumentError(absl::StrCat("codegen ", name_, " does not support ",
                                                     request.target.ToString()));
    }
    TT_ASSIGN_OR_RETURN(LoweredIm2col lowered,
                        LowerIm2col(request.op, request.target, request.launch));
    if (lowered.path == LoweringPath::kTmaIm2col && !tma_) {
      return absl::InvalidArgumentError(
          absl::StrCat("codegen ", name_, " does not emit the tma_im2col path"));
    }
    BuiltIm2col built;
    built.codegen = name_;
    built.source = EmitIm2colKernel(lowered);
    built.lowered = std::move(lowered);
    return built;
  }

  absl::StatusOr<BuiltIm2col> BuildIm2col(const Im2colRequest& request,
                                          CompilationProvider& compiler) const override {
    TT_ASSIGN_OR_RETURN(BuiltIm2col built, BuildIm2colWithoutCompile(request));
    CompileOptions options;
    options.arch = request.target.ArchName();
    TT_ASSIGN_OR_RETURN(built.cubin, compiler.CompileToCubin(built.source, options));
    return built;
  }

 private:
  std::string name_;
  int min_arch_;
  int max_arch_;
  bool tma_;
  bool cp_async_;
};

}  // namespace

std::vector<std::shared_ptr<const DeviceCodegen>> BuiltinCudaCodegens() {
  return {
      std::make_shared<CudaFamilyCodegen>("cuda.hopper", 90, 100, /*tma=*/true, /*cp_async=*/true),
      std::make_shared<CudaFamilyCodegen>("cuda.ampere", 80, 89, false, true),
      std::make_shared<CudaFamilyCodegen>("cuda.simt", 70, 75, false, false),
  };
}

absl::Status RegisterBuiltinCudaCodegens(DeviceCodegenRegistry& registry) {
  for (auto& codegen : BuiltinCudaCodegens()) {
    TT_RETURN_IF_ERROR(registry.Register("cuda", std::move(codegen)));
  }
  return absl::OkStatus();
}

}  // namespace tiletune

#include "compiler/backend/cuda/cuda_codegens.h"

#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/base/status_macros.h"

namespace tiletune {
namespace {

class CudaFamilyCodegen : public DeviceCodegen {
 public:
  // A family serves the targets whose features (Target, from compiler/target's table of
  // architectures) are exactly these: TMA, and cp.async.
  CudaFamilyCodegen(std::string name, bool tma, bool cp_async,
                    std::set<Instruction> instructions, const TileOpRegistry& ops)
      : name_(std::move(name)),
        tma_(tma),
        cp_async_(cp_async),
        instructions_(std::move(instructions)),
        ops_(ops) {}

  std::string name() const override { return name_; }

  bool SupportsTarget(const Target& target) const override {
    return target.kind() == "cuda" && target.HasTma() == tma_ && target.HasCpAsync() == cp_async_;
  }

  absl::StatusOr<BuiltKernel> BuildWithoutCompile(const CodegenRequest& request) const override {
    if (request.op == nullptr) return absl::InvalidArgumentError("codegen request has no op");
    if (!SupportsTarget(request.target)) {
      return absl::InvalidArgumentError(absl::StrCat("codegen ", name_, " does not support ",
                                                     request.target.ToString()));
    }
    TT_ASSIGN_OR_RETURN(const TileOpDefinition* definition, ops_.For(*request.op));
    TT_ASSIGN_OR_RETURN(std::shared_ptr<const LoweredTileKernel> lowered,
                        definition->Lower(*request.op, request.target, request.launch));
    if (!instructions_.count(lowered->instruction)) {
      return absl::InvalidArgumentError(absl::StrCat("codegen ", name_, " does not emit the ",
                                                     lowered->path_name, " path (",
                                                     InstructionName(lowered->instruction), ")"));
    }
    BuiltKernel built;
    built.codegen = name_;
    built.source = definition->Emit(*lowered);
    built.lowered = std::move(lowered);
    return built;
  }

  absl::StatusOr<BuiltKernel> Build(const CodegenRequest& request,
                                    CompilationProvider& compiler) const override {
    TT_ASSIGN_OR_RETURN(BuiltKernel built, BuildWithoutCompile(request));
    CompileOptions options;
    options.arch = request.target.ArchName();
    TT_ASSIGN_OR_RETURN(built.cubin, compiler.CompileToCubin(built.source, options));
    return built;
  }

 private:
  std::string name_;
  bool tma_;
  bool cp_async_;
  std::set<Instruction> instructions_;
  const TileOpRegistry& ops_;
};

}  // namespace

std::vector<std::shared_ptr<const DeviceCodegen>> BuiltinCudaCodegens(const TileOpRegistry& ops) {
  using I = Instruction;
  return {
      std::make_shared<CudaFamilyCodegen>("cuda.tma", true, true,
                                          std::set<I>{I::kTma, I::kCpAsync, I::kSync}, ops),
      std::make_shared<CudaFamilyCodegen>("cuda.cp_async", false, true,
                                          std::set<I>{I::kCpAsync, I::kSync}, ops),
      std::make_shared<CudaFamilyCodegen>("cuda.simt", false, false, std::set<I>{I::kSync}, ops),
  };
}

absl::Status RegisterBuiltinCudaCodegens(DeviceCodegenRegistry& registry,
                                         const TileOpRegistry& ops) {
  for (auto& codegen : BuiltinCudaCodegens(ops)) {
    TT_RETURN_IF_ERROR(registry.Register("cuda", std::move(codegen)));
  }
  return absl::OkStatus();
}

}  // namespace tiletune

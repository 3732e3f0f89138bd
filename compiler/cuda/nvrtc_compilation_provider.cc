#include "compiler/cuda/nvrtc_compilation_provider.h"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "compiler/base/status_macros.h"
#include "compiler/cuda/compilation_provider.h"
#include "compiler/cuda/nvrtc_api.h"

namespace tiletune {
namespace {

// Owns an nvrtcProgram for the duration of one compile.
class ProgramGuard {
 public:
  ProgramGuard(const NvrtcApi* api, nvrtcProgram program) : api_(api), program_(program) {}
  ~ProgramGuard() { api_->nvrtcDestroyProgram(&program_); }
  ProgramGuard(const ProgramGuard&) = delete;
  ProgramGuard& operator=(const ProgramGuard&) = delete;

 private:
  const NvrtcApi* api_;
  nvrtcProgram program_;
};

std::string ReadLog(const NvrtcApi* api, nvrtcProgram program) {
  size_t size = 0;
  if (api->nvrtcGetProgramLogSize(program, &size) != NVRTC_SUCCESS || size <= 1) return "";
  std::string log(size, '\0');
  if (api->nvrtcGetProgramLog(program, log.data()) != NVRTC_SUCCESS) return "";
  log.resize(size - 1);  // Drop the terminating NUL.
  return std::string(absl::StripTrailingAsciiWhitespace(log));
}

}  // namespace

absl::StatusOr<std::unique_ptr<NvrtcCompilationProvider>> NvrtcCompilationProvider::Create() {
  TT_ASSIGN_OR_RETURN(const NvrtcApi* api, LoadNvrtc());
  const char* line_info = std::getenv("TILETUNE_LINE_INFO");
  return std::unique_ptr<NvrtcCompilationProvider>(new NvrtcCompilationProvider(
      api, line_info != nullptr && std::string(line_info) == "1"));
}

std::string NvrtcCompilationProvider::Name() const {
  return absl::StrCat("nvrtc-", api_->version_major, ".", api_->version_minor,
                      line_info_ ? "+lineinfo" : "");
}

absl::Status NvrtcCompilationProvider::CheckArch(absl::string_view arch_name) const {
  TT_ASSIGN_OR_RETURN(ArchName arch, ParseArchName(arch_name));
  const std::vector<int>& supported = api_->supported_archs;
  if (std::find(supported.begin(), supported.end(), arch.number) == supported.end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "architecture ", arch_name, " is not supported by ", Name(), "; it compiles for sm_",
        absl::StrJoin(supported, ", sm_")));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::pair<std::string, std::string>> NvrtcCompilationProvider::Compile(
    const CudaSource& source, const CompileOptions& options, Output output) {
  TT_RETURN_IF_ERROR(CheckArch(options.arch));
  TT_ASSIGN_OR_RETURN(ArchName arch, ParseArchName(options.arch));
  // PTX is virtual-architecture code; a CUBIN is for the real architecture.
  std::string arch_flag = absl::StrCat("--gpu-architecture=",
                                       output == Output::kPtx ? "compute_" : "sm_", arch.number,
                                       arch.suffix);
  std::vector<std::string> flags = {arch_flag, "--std=c++17", "--device-int128"};
  if (options.line_info || line_info_) flags.push_back("--generate-line-info");
  flags.insert(flags.end(), options.extra_flags.begin(), options.extra_flags.end());
  std::vector<const char*> flag_pointers;
  for (const std::string& flag : flags) flag_pointers.push_back(flag.c_str());

  nvrtcProgram program = nullptr;
  TT_RETURN_IF_ERROR(ToStatus(api_->nvrtcCreateProgram(&program, source.text.c_str(),
                                                       source.name.c_str(), 0, nullptr, nullptr),
                              absl::StrCat("nvrtcCreateProgram(", source.name, ")")));
  ProgramGuard guard(api_, program);
  nvrtcResult compiled =
      api_->nvrtcCompileProgram(program, static_cast<int>(flag_pointers.size()),
                                flag_pointers.data());
  std::string log = ReadLog(api_, program);
  if (compiled != NVRTC_SUCCESS) {
    return ToStatus(compiled,
                    absl::StrCat("compiling ", source.name, " for ", options.arch, " with ",
                                 Name(), " [", absl::StrJoin(flags, " "), "]\n", log));
  }
  std::string result;
  size_t size = 0;
  if (output == Output::kPtx) {
    TT_RETURN_IF_ERROR(ToStatus(api_->nvrtcGetPTXSize(program, &size), "nvrtcGetPTXSize"));
    result.resize(size);
    TT_RETURN_IF_ERROR(ToStatus(api_->nvrtcGetPTX(program, result.data()), "nvrtcGetPTX"));
    if (!result.empty() && result.back() == '\0') result.pop_back();
  } else {
    TT_RETURN_IF_ERROR(ToStatus(api_->nvrtcGetCUBINSize(program, &size), "nvrtcGetCUBINSize"));
    result.resize(size);
    TT_RETURN_IF_ERROR(ToStatus(api_->nvrtcGetCUBIN(program, result.data()), "nvrtcGetCUBIN"));
  }
  return std::make_pair(std::move(result), std::move(log));
}

absl::StatusOr<Ptx> NvrtcCompilationProvider::CompileToPtx(const CudaSource& source,
                                                           const CompileOptions& options) {
  TT_ASSIGN_OR_RETURN(auto compiled, Compile(source, options, Output::kPtx));
  return Ptx{std::move(compiled.first), options.arch, std::move(compiled.second)};
}

absl::StatusOr<Cubin> NvrtcCompilationProvider::CompileToCubin(const CudaSource& source,
                                                               const CompileOptions& options) {
  TT_ASSIGN_OR_RETURN(auto compiled, Compile(source, options, Output::kCubin));
  return Cubin{std::move(compiled.first), options.arch, std::move(compiled.second)};
}

}  // namespace tiletune

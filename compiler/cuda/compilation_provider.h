// The typed compile pipeline: CUDA C++ source -> PTX or CUBIN for one architecture.
//
//   TT_ASSIGN_OR_RETURN(std::unique_ptr<CompilationProvider> nvrtc,
//                       NvrtcCompilationProvider::Create());
//   TT_ASSIGN_OR_RETURN(Cubin cubin, nvrtc->CompileToCubin(
//       CudaSource{"copy_kernel", text}, CompileOptions{.arch = "sm_90a"}));
//
// Implementations are thread-safe: many threads may compile through one provider.
#ifndef COMPILER_CUDA_COMPILATION_PROVIDER_H_
#define COMPILER_CUDA_COMPILATION_PROVIDER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "compiler/cuda/artifacts.h"

namespace tiletune {

struct CompileOptions {
  // Real architecture: "sm_<major><minor>" with an optional "a" or "f" suffix ("sm_90a").
  std::string arch = "sm_90a";
  // Emit line information for profilers (-lineinfo).
  bool line_info = false;
  // Further NVRTC flags, passed through verbatim after tiletune's own.
  std::vector<std::string> extra_flags;
};

class CompilationProvider {
 public:
  virtual ~CompilationProvider() = default;

  // Identifies the compiler and its version (e.g. "nvrtc-13.0"); part of cache keys.
  virtual std::string Name() const = 0;
  // The compiler whose code this provider returns ("nvrtc-13.0"): the same as Name() but
  // for wrappers (a cache), which return the wrapped compiler's. Recorded in databases.
  virtual std::string CompilerName() const { return Name(); }

  // OK when this provider compiles for `arch` ("sm_90a"); otherwise InvalidArgument naming
  // the architectures it does compile for. Callers check a user's target with it before
  // any work, so a target the compiler cannot build is a usage error, not a compile error.
  virtual absl::Status CheckArch(absl::string_view arch) const;

  // Compile errors are InvalidArgument and carry the compiler's full log.
  virtual absl::StatusOr<Ptx> CompileToPtx(const CudaSource& source,
                                           const CompileOptions& options) = 0;
  virtual absl::StatusOr<Cubin> CompileToCubin(const CudaSource& source,
                                               const CompileOptions& options) = 0;
};

// An architecture string split into its parts: "sm_90a" -> {90, "a"}.
struct ArchName {
  int number = 0;
  std::string suffix;
};

// Parses "sm_<number>[a|f]"; InvalidArgument names the value and the accepted form.
absl::StatusOr<ArchName> ParseArchName(absl::string_view arch);

}  // namespace tiletune

#endif  // COMPILER_CUDA_COMPILATION_PROVIDER_H_

// What the CUDA compile pipeline passes along: a source, and the PTX or CUBIN made of it.
// Emitters produce CudaSource without depending on any compiler; a CompilationProvider
// (compilation_provider.h) turns it into Ptx or Cubin.
#ifndef COMPILER_CUDA_ARTIFACTS_H_
#define COMPILER_CUDA_ARTIFACTS_H_

#include <string>

namespace tiletune {

// A self-contained CUDA C++ translation unit.
struct CudaSource {
  // Program name, shown in compiler diagnostics (e.g. "copy_f16_tma").
  std::string name;
  // The complete source text.
  std::string text;
};

struct Ptx {
  std::string text;
  // The architecture it was generated for ("sm_90a").
  std::string arch;
  // The compiler's log (warnings); empty when it had nothing to say.
  std::string log;
};

struct Cubin {
  // The ELF image, ready for cuModuleLoadData.
  std::string bytes;
  std::string arch;
  std::string log;
};

}  // namespace tiletune

#endif  // COMPILER_CUDA_ARTIFACTS_H_

// Helpers shared by the emitters' CPU tests: one NVRTC provider with a memory cache, and
// golden-file comparison with a one-flag regeneration.
//
//   ExpectMatchesGolden("compiler/ops/copy/testdata", "copy_tma_f16", text,
//                       "//compiler/ops/copy:copy_codegen_test");
//
// With TILETUNE_UPDATE_GOLDENS=1 under `bazel run` (which sets BUILD_WORKSPACE_DIRECTORY)
// the golden is rewritten instead of compared.
#ifndef COMPILER_CODEGEN_CODEGEN_TEST_UTIL_H_
#define COMPILER_CODEGEN_CODEGEN_TEST_UTIL_H_

#include <string>

#include "compiler/cuda/compilation_provider.h"

namespace tiletune {

// Process-wide NVRTC provider behind a memory cache; fails the test if NVRTC is missing.
CompilationProvider& TestCompiler();

// The PTX of `source` for `arch` (e.g. "sm_90a") through TestCompiler(); a compile error
// fails the test and gives "".
std::string TestPtx(const CudaSource& source, const std::string& arch);

// Compares `text` with <folder>/<name>.cu (`folder` relative to the workspace, or
// rewrites it, see above); `test_target` is named in the regeneration hint.
void ExpectMatchesGolden(const std::string& folder, const std::string& name,
                         const std::string& text, const std::string& test_target);

// The emitters' element loads (tt_ld_elem, tt_ld_col) are non-volatile asm, which the
// compiler may hoist above the test that guards them. Expects `text` (a kernel's source) to
// give each such load an address valid on every path: never as an arm of `?:` nor as the
// body of a one-line `if`. `what` names the kernel in failures.
void ExpectGuardedLoadsTakeSafeAddresses(const std::string& text, const std::string& what);

}  // namespace tiletune

#endif  // COMPILER_CODEGEN_CODEGEN_TEST_UTIL_H_

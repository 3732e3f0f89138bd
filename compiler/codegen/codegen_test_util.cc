#include "compiler/codegen/codegen_test_util.h"

#include <cstdlib>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/cuda/caching_compilation_provider.h"
#include "compiler/cuda/nvrtc_compilation_provider.h"
#include "gtest/gtest.h"

namespace tiletune {

CompilationProvider& TestCompiler() {
  static CompilationProvider* compiler = [] {
    CachingCompilationProvider::Options options;
    auto nvrtc = NvrtcCompilationProvider::Create();
    EXPECT_TRUE(nvrtc.ok()) << nvrtc.status();
    options.inner = std::move(nvrtc).value();
    return std::move(CachingCompilationProvider::Create(std::move(options))).value().release();
  }();
  return *compiler;
}

std::string TestPtx(const CudaSource& source, const std::string& arch) {
  CompileOptions options;
  options.arch = arch;
  auto ptx = TestCompiler().CompileToPtx(source, options);
  EXPECT_TRUE(ptx.ok()) << ptx.status();
  return ptx.ok() ? ptx->text : "";
}

void ExpectMatchesGolden(const std::string& folder, const std::string& name,
                         const std::string& text, const std::string& test_target) {
  std::string relative = absl::StrCat(folder, "/", name, ".cu");
  std::string regenerate =
      absl::StrCat("TILETUNE_UPDATE_GOLDENS=1 bazel run ", test_target);
  const char* update = std::getenv("TILETUNE_UPDATE_GOLDENS");
  const char* workspace = std::getenv("BUILD_WORKSPACE_DIRECTORY");
  if (update != nullptr && workspace != nullptr) {
    std::ofstream(absl::StrCat(workspace, "/", relative)) << text;
    return;
  }
  std::ifstream in(relative);
  ASSERT_TRUE(in.good()) << relative << " is missing; regenerate with " << regenerate;
  std::stringstream golden;
  golden << in.rdbuf();
  EXPECT_EQ(text, golden.str()) << name << " differs from " << relative
                                << "; if intended, regenerate with " << regenerate;
}

void ExpectGuardedLoadsTakeSafeAddresses(const std::string& text, const std::string& what) {
  static const std::regex arm(R"(\?\s*tt_ld_(elem|col)\()");
  static const std::regex guarded(R"(^\s*if \(.*\)\s*[^;{]*=\s*tt_ld_(elem|col)\()");
  std::istringstream lines(text);
  std::string line;
  for (int n = 1; std::getline(lines, line); ++n) {
    EXPECT_FALSE(std::regex_search(line, arm) || std::regex_search(line, guarded))
        << what << ", line " << n << ": a guarded load, hoistable above its test: " << line;
  }
}

}  // namespace tiletune

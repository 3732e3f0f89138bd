// Every architecture tiletune knows, and NVRTC 13 compiles for, resolves to a codegen
// that emits its instruction set; and a sample of each operator's search space (one
// kernel per path and form, plus the operator's heuristic) lowers for it within its
// limits, compiles with NVRTC, and runs bit-exact against the operator's reference on
// the CPU (kernels/emulate). Issue 38: an RTX 50-series GPU (sm_120) or DGX Spark (sm_121)
// resolved to no codegen at all.
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/backend/cuda/cuda_codegens.h"
#include "compiler/backend/registry.h"
#include "compiler/cuda/nvrtc_compilation_provider.h"
#include "compiler/ops/builtin_ops.h"
#include "compiler/ops/candidates.h"
#include "compiler/target/target.h"
#include "kernels/emulate/host_emulator.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace {

const std::vector<std::string>& Problems() {
  static const std::vector<std::string>* const problems = new std::vector<std::string>{
      "copy:f16:512,1024",
      "copy:u8:src=300x4097[0:300,3:4000]",
      "im2col:f16:2,16,16,64:k=3:p=1",
      "im2col:f32:2,20,20,3:k=7:s=2:p=3",
      "col2im:bf16:2,16,16,64:k=3:p=1",
      "col2im:f16:2,16,16,8:k=3:p=1:layout=nchw",  // F.fold's layout: the planes forms
  };
  return *problems;
}

TEST(EveryArchitectureTest, ResolvesAndCompilesEachOperatorsSearchSpaceSample) {
  auto nvrtc = NvrtcCompilationProvider::Create();
  ASSERT_TRUE(nvrtc.ok()) << nvrtc.status();
  DeviceCodegenRegistry registry;
  ASSERT_TRUE(RegisterBuiltinCudaCodegens(registry, BuiltinTileOps()).ok());
  const TileOpRegistry& ops = BuiltinTileOps();
  int compiled_archs = 0;
  for (const std::string& arch : Target::KnownArchs()) {
    SCOPED_TRACE(arch);
    absl::StatusOr<Target> target = Target::Parse(arch);
    ASSERT_TRUE(target.ok()) << target.status();
    absl::StatusOr<std::shared_ptr<const DeviceCodegen>> codegen = registry.Resolve(*target);
    ASSERT_TRUE(codegen.ok()) << codegen.status();
    if (!(*nvrtc)->CheckArch(arch).ok()) {
      // NVRTC 13 dropped Volta; its records still read, and it still resolves.
      EXPECT_EQ(target->arch(), 70) << (*nvrtc)->CheckArch(arch);
      continue;
    }
    ++compiled_archs;
    std::set<std::string> paths_seen;
    // What this architecture's codegen built, to run on the CPU.
    std::vector<HostKernel> built_kernels;
    std::vector<std::pair<const TileOpDefinition*, std::shared_ptr<TileOp>>> built_ops;
    std::vector<std::string> built_names;  // spec and path/form, for messages
    for (const std::string& spec : Problems()) {
      SCOPED_TRACE(spec);
      absl::StatusOr<std::unique_ptr<TileOp>> op = ops.ParseSpec(spec);
      ASSERT_TRUE(op.ok()) << op.status();
      const TileOpDefinition* definition = *ops.For(**op);
      const SearchSpace space = definition->Search(**op, *target);
      std::vector<Trial> trials = space.first;
      trials.push_back(definition->Heuristic(**op, *target));
      absl::StatusOr<CandidateSet> set = BuildCandidates(*definition, **op, *target, trials);
      ASSERT_TRUE(set.ok()) << set.status();
      // One kernel per path and form: the sample compiled.
      std::map<std::string, const Candidate*> sample;
      for (const Candidate& c : set->candidates) {
        sample.emplace(absl::StrCat(c.lowered->path_name, "/", c.lowered->form_name), &c);
      }
      for (const auto& [path, candidate] : sample) {
        SCOPED_TRACE(path);
        paths_seen.insert(candidate->lowered->path_name);
        EXPECT_LE(candidate->lowered->shared_bytes, target->MaxSharedBytesPerBlock());
        // The architecture's codegen emits the path (its family has the instruction).
        std::shared_ptr<TileOp> tuned(candidate->lowered == nullptr ? nullptr : (*op)->Clone());
        tuned->hints = candidate->hints;
        CodegenRequest request{tuned, candidate->lowered->launch, *target};
        absl::StatusOr<BuiltKernel> built = (*codegen)->Build(request, **nvrtc);
        EXPECT_TRUE(built.ok()) << built.status();
        if (built.ok()) {
          built_kernels.push_back({built->lowered, built->source.text});
          built_ops.emplace_back(definition, tuned);
          built_names.push_back(absl::StrCat(spec, " ", path));
        }
      }
    }
    absl::StatusOr<std::unique_ptr<HostEmulator>> emulator =
        HostEmulator::Create(built_kernels, {});
    ASSERT_TRUE(emulator.ok()) << emulator.status();
    std::mt19937_64 rng(target->arch());
    for (int i = 0; i < (*emulator)->size(); ++i) {
      const absl::Status verified =
          (*emulator)->Verify(i, *built_ops[i].first, *built_ops[i].second, rng);
      EXPECT_TRUE(verified.ok()) << built_names[i] << ": " << verified;
    }
    // Hopper and Blackwell lower copies and im2col through TMA in the search's first
    // phase (so a tuning measures TMA on them, 100 KB of shared memory or 228); earlier
    // architectures never do.
    EXPECT_EQ(paths_seen.count("tma") > 0, target->HasTma());
    EXPECT_EQ(paths_seen.count("tma_im2col") > 0, target->HasTma());
  }
  EXPECT_GE(compiled_archs, 12);  // sm_75 .. sm_121, the "a" variants included
}

}  // namespace
}  // namespace tiletune

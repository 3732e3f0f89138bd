#include "autotune/rank_command.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "autotune/fit_command.h"
#include "compiler/backend/cost_model/cost_model.h"
#include "compiler/backend/tuned_resolver.h"
#include "compiler/base/abbreviate.h"
#include "compiler/base/command_line.h"
#include "compiler/cuda/compilation_provider.h"
#include "compiler/cuda/kernel_resources.h"
#include "compiler/cuda/nvrtc_compilation_provider.h"
#include "compiler/ir/hints.h"
#include "compiler/lower/lowering_rules.h"
#include "compiler/ops/builtin_ops.h"
#include "compiler/ops/candidates.h"
#include "compiler/target/target.h"
#include "compiler/tuning_db/tuning_db.h"
#include "kernels/builtin_cost_models.h"
#include "kernels/library.h"

namespace tiletune {
namespace autotune {
namespace {

constexpr char kUsage[] =
    "usage: autotune rank SPEC... [--target=sm_XY] [--sm_count=N] [--cost_model=FILE] "
    "[--top=K] [--registers]";

std::string DescribeCandidate(const Candidate& c) {
  const LoweredTileKernel& l = *c.lowered;
  const std::string hints = HintsToString(l.hints);
  return absl::StrCat(l.path_name, l.form_name.empty() ? "" : "/", l.form_name, " tile=[",
                      absl::StrJoin(l.launch.tile, ","), "] threads=", l.launch.threads,
                      " stages=", l.launch.stages,
                      l.launch.ctas_per_sm > 0 ? absl::StrCat(" ctas/sm=", l.launch.ctas_per_sm)
                                               : std::string(),
                      " vec=", l.vector_bytes, "B", hints.empty() ? "" : " ", hints);
}

// ", 40 registers, 6 CTAs/SM" for `c` compiled for `arch` by `compiler`; ", resources: ..."
// where it does not compile or ptxas says nothing.
std::string Resources(CompilationProvider* compiler, const Candidate& c, const Target& target) {
  if (compiler == nullptr) return "";
  absl::StatusOr<KernelResources> r = CompileForResources(*compiler, c.source, target.ArchName());
  if (!r.ok()) return absl::StrCat(", resources: ", BoundedMessage(r.status().message()));
  const LoweredTileKernel& l = *c.lowered;
  return absl::StrCat(", ", r->registers, " registers",
                      r->spill_bytes > 0 ? absl::StrCat(" (", r->spill_bytes, " B spilled)") : "",
                      ", ",
                      ResidentCtasPerSm(target, l.launch.threads, l.shared_bytes + r->static_shared,
                                        r->registers),
                      " CTAs/SM");
}

}  // namespace

int RunRankCommand(const std::vector<std::string>& args, std::FILE* out, std::FILE* err) {
  const std::vector<FlagSpec> flags = {
      {"target", FlagType::kString, "sm_XY: the architecture to rank for (default sm_90a)"},
      {"sm_count", FlagType::kInt, "N: its multiprocessors, 1 to 1024 (default 132)", 0, 1,
       1024},
      {"cost_model", FlagType::kString, "FILE: a model (autotune fit -o); default the built-in one"},
      {"top", FlagType::kInt, "K: candidates printed per problem, 1 to 100000 (default 10)", 0, 1,
       100000},
      {"registers", FlagType::kBool,
       "also compile each printed kernel (NVRTC, no GPU) and show its registers a thread and the "
       "CTAs an SM holds (by registers, threads and shared memory; sm_70 and newer)"},
  };
  absl::StatusOr<CommandLine> line = ParseCommandLine(args, flags, 1 << 16);
  if (line.ok() && line->help()) {
    std::fprintf(out,
                 "%s\n  Ranks each problem's candidates by the cost model's estimate for a GPU "
                 "of --target\n  with --sm_count SMs, with no GPU.\n\nflags:\n%s\nenvironment:\n%s\n"
                 "exit codes: 0 ranked; 2 usage error; 3 the model does not read\n",
                 kUsage, FlagHelp(flags).c_str(), EnvironmentHelp().c_str());
    return 0;
  }
  if (line.ok() && line->positional().empty()) {
    line = absl::InvalidArgumentError(absl::StrCat("give at least one problem spec; ", kUsage));
  }
  if (!line.ok()) {
    std::fprintf(err, "autotune rank: %s\n", BoundedMessage(line.status().message()).c_str());
    return 2;
  }
  absl::StatusOr<Target> target = Target::Parse(line->String("target", "sm_90a"));
  if (!target.ok()) {
    std::fprintf(err, "autotune rank: --target: %s\n",
                 BoundedMessage(target.status().message()).c_str());
    return 2;
  }
  std::string origin;
  absl::StatusOr<CostModel> model = absl::UnknownError("");
  // The GPU a built-in model was fitted on: the library's view is shown for it.
  std::optional<tuning::DeviceIdentity> model_gpu;
  if (line->Has("cost_model")) {
    const std::string path = UserPath(line->String("cost_model"));
    model = ReadCostModelFile(path);
    origin = Printable(path);
  } else {
    absl::StatusOr<std::vector<GpuCostModel>> builtin = BuiltinCostModels();
    if (!builtin.ok()) {
      model = builtin.status();
    } else if (builtin->empty()) {
      model = absl::NotFoundError("no cost model is built in; give --cost_model");
    } else {
      model = std::move(builtin->front().model);
      origin = builtin->front().origin;
      model_gpu = builtin->front().device;
    }
  }
  if (!model.ok()) {
    std::fprintf(err, "autotune rank: %s\n", BoundedMessage(model.status().message()).c_str());
    return 3;
  }
  const int sm_count = static_cast<int>(line->Int("sm_count", 132));
  const int top = static_cast<int>(line->Int("top", 10));
  std::unique_ptr<CompilationProvider> compiler;
  if (line->Bool("registers", false)) {
    absl::StatusOr<std::unique_ptr<CompilationProvider>> nvrtc = NvrtcCompilationProvider::Create();
    if (!nvrtc.ok()) {
      std::fprintf(err, "autotune rank: --registers: %s\n",
                   BoundedMessage(nvrtc.status().message()).c_str());
      return 3;
    }
    compiler = *std::move(nvrtc);
  }
  const DeviceConstants gpu = DeviceConstantsFor(*target, sm_count);
  const TileOpRegistry& ops = BuiltinTileOps();
  std::fprintf(out, "autotune rank: model %s; %s with %d SMs\n", origin.c_str(),
               target->ArchName().c_str(), sm_count);
  // On the model's own GPU (its architecture is --target), what the library weighs too:
  // its databases' nearest records' variants, as the model predicts them.
  std::unique_ptr<Library> library;
  if (model_gpu.has_value() && TargetOf(*model_gpu).ok() &&
      TargetOf(*model_gpu)->ArchName() == target->ArchName()) {
    model_gpu->set_sm_count(sm_count);
    LibraryOptions options;
    options.record_misses_from_environment = false;
    absl::StatusOr<std::unique_ptr<Library>> made = Library::Create(std::move(options));
    if (made.ok()) library = *std::move(made);
  }
  for (const std::string& spec : line->positional()) {
    absl::StatusOr<std::unique_ptr<TileOp>> op = ops.ParseSpec(spec);
    if (!op.ok()) {
      std::fprintf(err, "autotune rank: %s\n", BoundedMessage(op.status().message()).c_str());
      return 2;
    }
    const TileOpDefinition& definition = **ops.For(**op);
    absl::StatusOr<CandidateSet> set =
        BuildCandidates(definition, **op, *target, SearchTrials(definition, **op, *target));
    if (!set.ok()) {
      std::fprintf(err, "autotune rank: %s: %s\n", spec.c_str(),
                   BoundedMessage(set.status().message()).c_str());
      return 2;
    }
    std::vector<std::pair<double, const Candidate*>> ranked;
    for (const Candidate& c : set->candidates) {
      ranked.emplace_back(model->EstimateUs(TermsOf(*c.lowered, gpu)), &c);
    }
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::fprintf(out, "%s: %zu candidates; a tuning with this model measures the first %d\n",
                 definition.Describe(**op).c_str(), ranked.size(),
                 model->TopKFor(definition.name()));
    for (size_t i = 0; i < ranked.size() && static_cast<int>(i) < top; ++i) {
      std::fprintf(out, "  %3zu %10.2f us  %s%s\n", i + 1, ranked[i].first,
                   DescribeCandidate(*ranked[i].second).c_str(),
                   Resources(compiler.get(), *ranked[i].second, *target).c_str());
    }
    if (library == nullptr) continue;
    absl::StatusOr<Explanation> chosen = library->Explain(**op, *model_gpu);
    absl::StatusOr<std::vector<TunedResolver::NearbyEstimate>> nearby =
        library->Estimates(**op, *model_gpu);
    if (!chosen.ok() || !nearby.ok()) continue;
    std::fprintf(out, "  the library on %s launches (%s): %s\n", Printable(model_gpu->name(), 80).c_str(),
                 ResolutionLevelName(chosen->level).c_str(), chosen->detail.c_str());
    std::string resources;
    if (compiler != nullptr) {
      absl::StatusOr<CandidateSet> launched =
          BuildCandidates(definition, **op, *target, {Trial{chosen->hints, chosen->launch}});
      if (launched.ok() && !launched->candidates.empty()) {
        resources = Resources(compiler.get(), launched->candidates.front(), *target);
      }
    }
    std::fprintf(out, "  fitted to this problem: %s%s\n", chosen->variant.c_str(), resources.c_str());
    std::fprintf(out, "  its %zu nearest records' variants, as the model predicts them:\n",
                 nearby->size());
    for (size_t i = 0; i < nearby->size(); ++i) {
      const TunedResolver::NearbyEstimate& e = (*nearby)[i];
      std::fprintf(out, "  %3zu %10s  distance %5.2f  %s\n", i + 1,
                   e.predicted_us.has_value() ? absl::StrFormat("%.2f us", *e.predicted_us).c_str()
                                              : "-",
                   e.distance, e.variant.c_str());
    }
  }
  return 0;
}

}  // namespace autotune
}  // namespace tiletune

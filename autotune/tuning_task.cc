#include "autotune/tuning_task.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "autotune/copy_search_space.h"
#include "compiler/backend/tuning_conversion.h"
#include "compiler/base/sha256.h"
#include "compiler/base/status_macros.h"
#include "compiler/codegen/im2col_emitter.h"
#include "compiler/lower/im2col_lowering.h"
#include "kernels/copy_kernel.h"
#include "kernels/copy_reference.h"
#include "kernels/im2col_kernel.h"
#include "kernels/im2col_reference.h"

namespace tiletune {
namespace autotune {
namespace {

// The longest column-matrix row for which the search adds tiles of whole rows.
constexpr int64_t kWholeRowTileMaxK = 1024;

class CopyLauncher : public Launcher {
 public:
  explicit CopyLauncher(std::unique_ptr<CopyKernel> kernel) : kernel_(std::move(kernel)) {}
  absl::Status Launch(CUdeviceptr input, CUdeviceptr output, CUstream stream) override {
    return kernel_->Launch(input, output, stream);
  }

 private:
  std::unique_ptr<CopyKernel> kernel_;
};

class Im2colLauncher : public Launcher {
 public:
  explicit Im2colLauncher(std::unique_ptr<Im2colKernel> kernel) : kernel_(std::move(kernel)) {}
  absl::Status Launch(CUdeviceptr input, CUdeviceptr output, CUstream stream) override {
    return kernel_->Launch(input, output, stream);
  }

 private:
  std::unique_ptr<Im2colKernel> kernel_;
};

void Merge(SearchStats* into, const CopySearchSpace& space) {
  into->enumerated += space.enumerated;
  into->pruned += space.pruned;
  into->duplicates += space.duplicates;
  for (const std::string& e : space.pruned_examples) {
    if (into->pruned_examples.size() < 20) into->pruned_examples.push_back(e);
  }
}

}  // namespace

absl::StatusOr<TuningTask> CopyTask(const CopyOp& op, const Target& target) {
  TT_RETURN_IF_ERROR(ValidateCopyOp(op));
  TuningTask task;
  task.description = absl::StrCat("copy ", DataTypeName(op.src.buffer.dtype), " [",
                                  absl::StrJoin(op.src.extents, ", "), "]");
  task.problem = ProblemFromCopyOp(op);
  task.input_bytes = SpanBytes(op.src.buffer);
  task.output_bytes = SpanBytes(op.dst.buffer);
  task.bytes_moved = 2 * op.src.NumElements() * DataTypeBytes(op.src.buffer.dtype);
  task.reference = [op, in = task.input_bytes, out = task.output_bytes](const uint8_t* input,
                                                                         uint8_t* output) {
    return CopyReference(op, input, in, output, out);
  };
  task.build = [op, target](const std::vector<CopyHints>& hints,
                            const std::vector<LaunchParams>& launches,
                            SearchStats* stats) -> absl::StatusOr<std::vector<Candidate>> {
    absl::StatusOr<CopySearchSpace> space = BuildCopySearchSpace(op, target, hints, launches);
    if (!space.ok()) return space.status();
    Merge(stats, *space);
    std::vector<Candidate> out;
    for (CopyCandidate& c : space->candidates) {
      Candidate candidate;
      candidate.hints = c.hints;
      candidate.path = c.lowered.path;
      candidate.source = c.source;
      candidate.source_sha256 = c.source_sha256;
      candidate.variant = c.variant;
      candidate.load = [lowered = c.lowered, text = c.source.text](
                           const Context& context,
                           const Cubin& cubin) -> absl::StatusOr<std::unique_ptr<Launcher>> {
        TT_ASSIGN_OR_RETURN(auto kernel, CopyKernel::CreateFromCubin(context, lowered, text, cubin));
        return std::unique_ptr<Launcher>(new CopyLauncher(std::move(kernel)));
      };
      out.push_back(std::move(candidate));
    }
    return out;
  };
  std::vector<int64_t> extents = SqueezedExtents(op.src);
  int element = DataTypeBytes(op.src.buffer.dtype);
  task.all_hints = AllCopyHints();
  task.representative_launches = RepresentativeCopyLaunches(extents, element, target);
  task.all_launches = CopyLaunchCandidates(extents, element, target);
  return task;
}

std::vector<CopyHints> AllIm2colHints() {
  std::vector<CopyHints> all;
  std::vector<std::optional<int>> widths = {std::nullopt, 1, 2, 4, 8};
  std::vector<std::optional<EvictionPolicy>> policies = {std::nullopt, EvictionPolicy::kEvictFirst,
                                                         EvictionPolicy::kEvictLast};
  std::vector<std::optional<Instruction>> instructions = {std::nullopt, Instruction::kTma,
                                                          Instruction::kSync};
  for (auto width : widths) {
    for (bool disable_tma : {false, true}) {
      for (auto policy : policies) {
        for (auto instruction : instructions) {
          for (bool split : {false, true}) {
            CopyHints hints;
            hints.coalesced_width = width;
            hints.disable_tma = disable_tma;
            hints.eviction_policy = policy;
            hints.prefer_instruction = instruction;
            if (split) {
              hints.annotations["img_eviction_policy"] = "evict_last";
              hints.annotations["col_eviction_policy"] = "evict_first";
            }
            all.push_back(hints);
          }
        }
      }
    }
  }
  return all;
}

absl::StatusOr<TuningTask> Im2colTask(const Im2colOp& op, const Target& target) {
  TuningTask task;
  const ::tiletune::Im2colGeometry& g = op.geometry;
  task.description = absl::StrCat("im2col ", DataTypeName(op.img.dtype), " N", g.n, " C", g.c,
                                  " ", g.h, "x", g.w, " k", g.kh, "x", g.kw, " s", g.sh, "x",
                                  g.sw, " d", g.dh, "x", g.dw, " p", g.ph, "x", g.pw);
  task.problem = ProblemFromIm2colOp(op);
  task.input_bytes = SpanBytes(op.img);
  task.output_bytes = Im2colColumnBytes(op);
  int element = DataTypeBytes(op.img.dtype);
  task.bytes_moved = static_cast<int64_t>(g.n * g.h * g.w * g.c * element) +
                     static_cast<int64_t>(task.output_bytes);
  task.reference = [op, in = task.input_bytes, out = task.output_bytes](const uint8_t* input,
                                                                         uint8_t* output) {
    return Im2colReference(op, input, in, output, out);
  };
  task.build = [op, target](const std::vector<CopyHints>& hints,
                            const std::vector<LaunchParams>& launches,
                            SearchStats* stats) -> absl::StatusOr<std::vector<Candidate>> {
    std::vector<Candidate> out;
    absl::flat_hash_set<std::string> seen;
    std::set<std::string> reasons;
    for (const CopyHints& h : hints) {
      for (const LaunchParams& launch : launches) {
        ++stats->enumerated;
        Im2colOp candidate_op = op;
        candidate_op.hints = h;
        absl::StatusOr<LoweredIm2col> lowered = LowerIm2col(candidate_op, target, launch);
        if (!lowered.ok()) {
          ++stats->pruned;
          std::string reason(lowered.status().message().substr(0, 40));
          if (reasons.insert(reason).second && stats->pruned_examples.size() < 20) {
            stats->pruned_examples.push_back(std::string(lowered.status().message()));
          }
          continue;
        }
        CudaSource source = EmitIm2colKernel(*lowered);
        std::string sha = Sha256Hex(source.text);
        if (!seen.insert(sha).second) {
          ++stats->duplicates;
          continue;
        }
        Candidate candidate;
        candidate.hints = h;
        candidate.path = lowered->path;
        candidate.variant = VariantFromLoweredIm2col(h, *lowered, sha);
        candidate.source_sha256 = sha;
        candidate.source = source;
        candidate.load = [l = *lowered, text = source.text](
                             const Context& context,
                             const Cubin& cubin) -> absl::StatusOr<std::unique_ptr<Launcher>> {
          TT_ASSIGN_OR_RETURN(auto kernel, Im2colKernel::CreateFromCubin(context, l, text, cubin));
          return std::unique_ptr<Launcher>(new Im2colLauncher(std::move(kernel)));
        };
        out.push_back(std::move(candidate));
      }
    }
    if (out.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "no variant lowers for this im2col on ", target.ArchName(), "; e.g. ",
          stats->pruned_examples.empty() ? "" : stats->pruned_examples[0]));
    }
    return out;
  };
  auto launch = [](int64_t m, int64_t k, int threads, int stages, int ctas) {
    LaunchParams p;
    p.tile = {m, k};
    p.threads = threads;
    p.stages = stages;
    p.ctas_per_sm = ctas;
    return p;
  };
  task.all_hints = AllIm2colHints();
  task.representative_launches = {launch(128, 64, 256, 1, 0), launch(128, 64, 128, 2, 0)};
  std::vector<std::pair<int64_t, int64_t>> tiles = {{64, 64},  {128, 64}, {256, 64},
                                                    {128, 128}, {32, 128}, {64, 32}};
  // Tiles of whole rows when rows are short: the SIMT flat form stores 16-byte vectors of
  // them even where C allows only narrow ones (the C=3 stem).
  const int64_t k = op.geometry.K();
  if (k <= kWholeRowTileMaxK) {
    task.representative_launches.push_back(launch(64, k, 256, 1, 0));
    for (int64_t m : {16, 32, 64, 128}) tiles.push_back({m, k});
    // Whole output rows too: the flat form then stages its input rows in shared memory.
    const int64_t ow = op.geometry.OW();
    if (ow <= 512) {
      task.representative_launches.push_back(launch(ow, k, 256, 1, 0));
      tiles.push_back({ow, k});
      tiles.push_back({2 * ow, k});
    }
  }
  for (auto [m, k] : tiles) {
    for (int threads : {128, 256}) {
      for (int stages : {1, 2, 3}) {
        for (int ctas : {0, 2}) task.all_launches.push_back(launch(m, k, threads, stages, ctas));
      }
    }
  }
  return task;
}

}  // namespace autotune
}  // namespace tiletune

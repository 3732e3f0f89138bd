// Tuned resolution: which codegen, hints and launch parameters to use for a problem on a
// particular GPU, through a declared fallback chain.
//
//   1. exact      a database record for this device (name + compute capability) and
//                 this exact problem;
//   2. nearest    a record for the same compute capability, op, dtype and rank whose
//                 problem is nearest (sum over dimensions of |log2 of the extent ratio|)
//                 and whose variant lowers for this problem;
//   3. heuristic  tiletune's built-in choice for the target.
//
// Every answer says which level produced it and why the levels above did not.
//
//   TunedResolver::Options options;
//   options.registry = &registry;
//   options.databases = {std::move(db)};
//   TT_ASSIGN_OR_RETURN(auto resolver, TunedResolver::Create(std::move(options)));
//   TT_ASSIGN_OR_RETURN(Resolution r, resolver->Resolve(device, op));
//   if (r.level != ResolutionLevel::kExact) LOG << r.detail;
//
// Thread-safe after Create.
#ifndef COMPILER_BACKEND_TUNED_RESOLVER_H_
#define COMPILER_BACKEND_TUNED_RESOLVER_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "autotune/tuning_db.pb.h"
#include "compiler/backend/device_codegen.h"
#include "compiler/backend/registry.h"
#include "compiler/ir/copy_op.h"
#include "compiler/lower/lowered_kernel.h"
#include "compiler/target/target.h"

namespace tiletune {

enum class ResolutionLevel { kExact, kNearest, kHeuristic };
std::string ResolutionLevelName(ResolutionLevel level);  // "exact", "nearest", "heuristic"

template <typename Request>
struct BasicResolution {
  ResolutionLevel level = ResolutionLevel::kHeuristic;
  std::shared_ptr<const DeviceCodegen> codegen;
  // The request to build: the op with the resolved hints, the launch, the target.
  Request request;
  // Which record answered (exact, nearest), or why none did.
  std::string detail;
};
using Resolution = BasicResolution<KernelRequest>;
using Im2colResolution = BasicResolution<Im2colRequest>;

// The built-in launch parameters for `op` on `target`: a direct SIMT copy of about 16 KiB
// tiles, 256 threads, one CTA per tile (the best family measured on the H200; see
// bench/copy_benchmark.cc).
LaunchParams HeuristicCopyLaunch(const CopyOp& op, const Target& target);

// The built-in launch for im2col: SIMT, 128 x 64 tiles (K narrower when it is), 256
// threads, the image kept in L2 (evict_last) while the column matrix streams out
// (evict_first) where the op sets no policy.
LaunchParams HeuristicIm2colLaunch(const Im2colOp& op, const Target& target);

class TunedResolver {
 public:
  struct Options {
    // Where codegens come from. Required; must outlive the resolver.
    DeviceCodegenRegistry* registry = nullptr;
    // Tuning databases to consult; records of all of them are used.
    std::vector<autotune::TuningDatabase> databases;
  };

  static absl::StatusOr<std::unique_ptr<TunedResolver>> Create(Options options);

  // `device` needs name, cc_major and cc_minor. The op's own hints, where set, win over
  // tuned ones; the tuned launch parameters are used as stored.
  absl::StatusOr<Resolution> Resolve(const autotune::DeviceIdentity& device,
                                     const CopyOp& op) const;
  absl::StatusOr<Im2colResolution> ResolveIm2col(const autotune::DeviceIdentity& device,
                                                 const Im2colOp& op) const;

  size_t record_count() const { return records_.size(); }

 private:
  explicit TunedResolver(Options options);

  // The chain for either op: `base` holds the op, target and heuristic launch;
  // `lowers` says whether a request lowers; `heuristic_hints` adds the heuristic's hints
  // at the last level.
  template <typename Request>
  absl::StatusOr<BasicResolution<Request>> ResolveChain(
      const autotune::DeviceIdentity& device, Request base, const autotune::Problem& problem,
      const std::function<absl::Status(const DeviceCodegen&, const Request&)>& lowers,
      const std::function<void(Request&)>& heuristic_hints) const;

  DeviceCodegenRegistry* registry_;
  std::vector<autotune::TuningRecord> records_;
  // RecordKey -> index into records_.
  absl::flat_hash_map<std::string, size_t> by_key_;
};

}  // namespace tiletune

#endif  // COMPILER_BACKEND_TUNED_RESOLVER_H_

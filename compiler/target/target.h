// A compilation target: the CUDA target kind and an architecture, with capability queries.
//
//   TT_ASSIGN_OR_RETURN(Target target, Target::Parse("cuda -arch=sm_90a"));
//   if (target.HasTma()) { ... }
#ifndef COMPILER_TARGET_TARGET_H_
#define COMPILER_TARGET_TARGET_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tiletune {

class Target {
 public:
  // Accepts "sm_90a", "cuda -arch=sm_90a", "cuda --arch=sm_90a" and "cuda" (= sm_90a).
  // Architectures: sm_70, sm_75, sm_80, sm_86, sm_87, sm_89, sm_90, sm_90a, sm_100,
  // sm_100a, sm_120. InvalidArgument lists them.
  static absl::StatusOr<Target> Parse(absl::string_view text);
  // Every architecture Parse accepts, oldest first.
  static const std::vector<std::string>& KnownArchs();
  // The architecture to compile for on a device of compute capability major.minor: its
  // architecture-specific variant ("sm_90a") where one exists (9.0 and 10.x), else the
  // plain one ("sm_89"). Not checked against KnownArchs().
  static std::string ArchNameForDevice(int cc_major, int cc_minor);

  // "cuda".
  const std::string& kind() const { return kind_; }
  // 90 for sm_90a.
  int arch() const { return arch_; }
  // "sm_90a".
  std::string ArchName() const;
  // "cuda -arch=sm_90a".
  std::string ToString() const;

  // The architecture's features, from one table (target.cc) that the codegen families and
  // the lowering's limits share.
  // cp.async (sm_80+).
  bool HasCpAsync() const;
  // L2 cache-policy hints: createpolicy and .L2::cache_hint (sm_80+).
  bool HasL2CacheHints() const;
  // Tensor Memory Accelerator: tensor maps, cp.async.bulk(.tensor), mbarrier tx counts
  // (sm_90+: Hopper and Blackwell).
  bool HasTma() const;
  // Largest dynamic shared memory one block may opt into, in bytes.
  int MaxSharedBytesPerBlock() const;
  // Shared memory of one multiprocessor, in bytes.
  int MaxSharedBytesPerSm() const;
  // The L2 bytes every datacenter part of the architecture has at least (sm_90: 50 MB, the
  // H100's); 0 where the architecture's parts differ too much to say. A device may have
  // more (it reports its own); lowering uses this to size what it keeps in L2.
  int64_t MinL2Bytes() const;
  // Resident threads one multiprocessor can hold.
  int MaxThreadsPerSm() const;

 private:
  Target(std::string kind, int arch, std::string suffix)
      : kind_(std::move(kind)), arch_(arch), suffix_(std::move(suffix)) {}

  std::string kind_;
  int arch_;
  std::string suffix_;
};

}  // namespace tiletune

#endif  // COMPILER_TARGET_TARGET_H_

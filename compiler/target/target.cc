#include "compiler/target/target.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace tiletune {

namespace {

// What tiletune's lowering needs to know of each architecture, in one table: the codegen
// families (compiler/backend/cuda) and the lowering's limits both read it. Where parts of
// an architecture differ (sm_110, Jetson Thor), the values are the smallest, so a kernel
// planned with them fits every part.
struct ArchFeatures {
  int arch;                  // 90 for sm_90
  bool specific;             // a device of it is compiled for the "a" variant (sm_90a)
  bool cp_async;             // cp.async, L2 cache-policy hints (sm_80+)
  bool tma;                  // tensor maps, cp.async.bulk(.tensor), mbarrier tx counts
  int shared_per_block_kib;  // largest dynamic shared memory a block may opt into
  int shared_per_sm_kib;
  int threads_per_sm;
  int min_l2_mb;             // every datacenter part has at least this much L2; 0: unknown
};

constexpr ArchFeatures kArchitectures[] = {
    {70, false, false, false, 96, 96, 2048, 0},   // Volta
    {75, false, false, false, 64, 64, 1024, 0},   // Turing
    {80, false, true, false, 163, 164, 2048, 0},  // A100
    {86, false, true, false, 99, 100, 1536, 0},   // Ampere GeForce / RTX A-series
    {87, false, true, false, 163, 164, 2048, 0},  // Jetson Orin
    {88, false, true, false, 99, 100, 1536, 0},
    {89, false, true, false, 99, 100, 1536, 0},   // Ada
    {90, true, true, true, 227, 228, 2048, 50},   // H100, H200
    {100, true, true, true, 227, 228, 2048, 50},  // B200
    {103, true, true, true, 227, 228, 2048, 50},  // B300
    {110, false, true, true, 99, 100, 1536, 0},   // Jetson Thor
    {120, false, true, true, 99, 100, 1536, 0},   // RTX 50-series, RTX PRO Blackwell
    {121, false, true, true, 99, 100, 1536, 0},   // DGX Spark
};

const ArchFeatures& FeaturesOf(int arch) {
  for (const ArchFeatures& f : kArchitectures) {
    if (f.arch == arch) return f;
  }
  // Targets are made by Parse from the table only.
  return kArchitectures[0];
}

}  // namespace

const std::vector<std::string>& Target::KnownArchs() {
  static const std::vector<std::string>* const archs = [] {
    auto* names = new std::vector<std::string>;
    for (const ArchFeatures& f : kArchitectures) {
      names->push_back(absl::StrCat("sm_", f.arch));
      if (f.specific) names->push_back(absl::StrCat("sm_", f.arch, "a"));
    }
    return names;
  }();
  return *archs;
}

absl::StatusOr<Target> Target::Parse(absl::string_view text) {
  absl::string_view arch_text = absl::StripAsciiWhitespace(text);
  if (arch_text == "cuda") arch_text = "sm_90a";
  if (absl::ConsumePrefix(&arch_text, "cuda")) {
    arch_text = absl::StripLeadingAsciiWhitespace(arch_text);
    if (!absl::ConsumePrefix(&arch_text, "--arch=") && !absl::ConsumePrefix(&arch_text, "-arch=")) {
      return absl::InvalidArgumentError(absl::StrCat(
          "invalid target '", text, "': expected 'cuda -arch=sm_XX' or 'sm_XX'"));
    }
  }
  for (const std::string& known : KnownArchs()) {
    if (arch_text == known) {
      absl::string_view digits = absl::string_view(known).substr(3);
      std::string suffix;
      if (absl::EndsWith(digits, "a")) {
        suffix = "a";
        digits.remove_suffix(1);
      }
      int arch = 0;
      absl::SimpleAtoi(digits, &arch);
      return Target("cuda", arch, suffix);
    }
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown target '", text, "': accepted are ",
                                                 absl::StrJoin(KnownArchs(), ", "),
                                                 " (optionally as 'cuda -arch=sm_XX')"));
}

std::string Target::ArchNameForDevice(int cc_major, int cc_minor) {
  const int arch = cc_major * 10 + cc_minor;
  bool specific = false;
  for (const ArchFeatures& f : kArchitectures) specific |= f.arch == arch && f.specific;
  return absl::StrCat("sm_", arch, specific ? "a" : "");
}

std::string Target::ArchName() const { return absl::StrCat("sm_", arch_, suffix_); }

std::string Target::ToString() const { return absl::StrCat(kind_, " -arch=", ArchName()); }

bool Target::HasCpAsync() const { return FeaturesOf(arch_).cp_async; }

bool Target::HasL2CacheHints() const { return FeaturesOf(arch_).cp_async; }

bool Target::HasTma() const { return FeaturesOf(arch_).tma; }

int Target::MaxSharedBytesPerBlock() const { return FeaturesOf(arch_).shared_per_block_kib * 1024; }

int Target::MaxSharedBytesPerSm() const { return FeaturesOf(arch_).shared_per_sm_kib * 1024; }

int64_t Target::MinL2Bytes() const { return int64_t{FeaturesOf(arch_).min_l2_mb} * 1000 * 1000; }

int Target::MaxThreadsPerSm() const { return FeaturesOf(arch_).threads_per_sm; }

}  // namespace tiletune

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

const std::vector<std::string>& Target::KnownArchs() {
  static const std::vector<std::string>* const archs = new std::vector<std::string>{
      "sm_70", "sm_75",  "sm_80", "sm_86",   "sm_87", "sm_89",
      "sm_90", "sm_90a", "sm_100", "sm_100a", "sm_120"};
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
  const bool arch_specific = (cc_major == 9 && cc_minor == 0) || cc_major == 10;
  return absl::StrCat("sm_", cc_major, cc_minor, arch_specific ? "a" : "");
}

std::string Target::ArchName() const { return absl::StrCat("sm_", arch_, suffix_); }

std::string Target::ToString() const { return absl::StrCat(kind_, " -arch=", ArchName()); }

int Target::MaxSharedBytesPerBlock() const {
  switch (arch_) {
    case 70: return 96 * 1024;
    case 75: return 64 * 1024;
    case 80:
    case 87: return 163 * 1024;
    case 86:
    case 89:
    case 120: return 99 * 1024;
    default: return 227 * 1024;  // sm_90, sm_100
  }
}

int Target::MaxSharedBytesPerSm() const {
  switch (arch_) {
    case 70: return 96 * 1024;
    case 75: return 64 * 1024;
    case 80:
    case 87: return 164 * 1024;
    case 86:
    case 89:
    case 120: return 100 * 1024;
    default: return 228 * 1024;
  }
}

int64_t Target::MinL2Bytes() const {
  switch (arch_) {
    case 90:   // H100 (PCIe and SXM), H200: 50 MB
    case 100:  // B200: larger
      return int64_t{50} * 1000 * 1000;
    default: return 0;
  }
}

int Target::MaxThreadsPerSm() const {
  switch (arch_) {
    case 75: return 1024;
    case 86:
    case 89:
    case 120: return 1536;
    default: return 2048;
  }
}

}  // namespace tiletune

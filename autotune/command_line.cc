#include "autotune/command_line.h"

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace tiletune {
namespace autotune {
namespace {

const FlagSpec* Find(absl::Span<const FlagSpec> specs, absl::string_view name) {
  for (const FlagSpec& spec : specs) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

absl::Status Usage(const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(what, "; see --help"));
}

}  // namespace

absl::StatusOr<ParsedCommandLine> ParseCommandLineFlags(const std::vector<std::string>& args,
                                                        absl::Span<const FlagSpec> specs) {
  ParsedCommandLine parsed;
  for (const std::string& arg : args) {
    if (arg == "--help" || arg == "-h" || arg == "--helpfull" || absl::StartsWith(arg, "--help=")) {
      parsed.help = true;
      return parsed;
    }
  }
  std::set<std::string> seen;
  for (const std::string& arg : args) {
    if (!absl::StartsWith(arg, "--") || arg == "--") {
      return Usage(absl::StrCat("unexpected argument '", Abbreviate(arg),
                                "': give flags as --name=value"));
    }
    const absl::string_view body = absl::string_view(arg).substr(2);
    const size_t equals = body.find('=');
    std::string name(body.substr(0, equals));
    std::string value;
    bool has_value = equals != absl::string_view::npos;
    if (has_value) value = std::string(body.substr(equals + 1));
    const FlagSpec* spec = Find(specs, name);
    absl::CommandLineFlag* flag = spec ? absl::FindCommandLineFlag(name) : nullptr;
    // --noNAME for a bool flag.
    if (flag == nullptr && !has_value && absl::StartsWith(name, "no")) {
      const FlagSpec* negated = Find(specs, name.substr(2));
      absl::CommandLineFlag* negated_flag =
          negated ? absl::FindCommandLineFlag(name.substr(2)) : nullptr;
      if (negated_flag != nullptr && negated_flag->IsOfType<bool>()) {
        spec = negated;
        flag = negated_flag;
        name = name.substr(2);
        value = "false";
        has_value = true;
      }
    }
    if (flag == nullptr) return Usage(absl::StrCat("unknown flag --", Abbreviate(name)));
    if (!seen.insert(name).second) return Usage(absl::StrCat("flag --", name, " is given twice"));
    if (!has_value) {
      if (!flag->IsOfType<bool>()) {
        return Usage(absl::StrCat("--", name, " needs a value: --", name, "=VALUE"));
      }
      value = "true";
    }
    std::string error;
    if (!flag->ParseFrom(value, &error)) {
      // absl's error repeats the value: cut it too.
      return Usage(absl::StrCat("--", name, "=", Abbreviate(value), ": ", Abbreviate(error, 120)));
    }
    if (flag->IsOfType<int>() || flag->IsOfType<int64_t>()) {
      int64_t number = 0;
      if (!absl::SimpleAtoi(value, &number) || number < spec->min || number > spec->max) {
        return Usage(absl::StrCat("--", name, "=", Abbreviate(value), ": accepted are ",
                                  spec->min, " to ", spec->max));
      }
    }
  }
  return parsed;
}

std::string FlagHelp(absl::Span<const FlagSpec> specs) {
  size_t width = 0;
  for (const FlagSpec& spec : specs) {
    if (!spec.help.empty()) width = std::max(width, spec.name.size());
  }
  std::string out;
  for (const FlagSpec& spec : specs) {
    if (spec.help.empty()) continue;
    absl::StrAppend(&out, "  --", spec.name, std::string(width - spec.name.size() + 2, ' '),
                    spec.help, "\n");
  }
  return out;
}

}  // namespace autotune
}  // namespace tiletune

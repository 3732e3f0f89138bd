#include "compiler/base/command_line.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/base/abbreviate.h"
#include "compiler/base/version.h"

namespace tiletune {
namespace {

absl::Status Usage(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(what, "; see --help"));
}

const FlagSpec* Find(absl::Span<const FlagSpec> specs, absl::string_view name) {
  for (const FlagSpec& spec : specs) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

const FlagSpec* FindShort(absl::Span<const FlagSpec> specs, char letter) {
  for (const FlagSpec& spec : specs) {
    if (spec.short_name != 0 && spec.short_name == letter) return &spec;
  }
  return nullptr;
}

std::string Accepted(absl::Span<const FlagSpec> specs) {
  std::vector<std::string> names;
  for (const FlagSpec& spec : specs) {
    if (!spec.help.empty()) names.push_back(absl::StrCat("--", spec.name));
  }
  names.push_back("--help");
  names.push_back("--version");
  return absl::StrJoin(names, ", ");
}

// Checks `value` for `spec` and returns it as stored.
absl::StatusOr<std::string> Checked(const FlagSpec& spec, const std::string& value) {
  const std::string flag = absl::StrCat("--", spec.name);
  switch (spec.type) {
    case FlagType::kBool:
      if (value == "true" || value == "1") return std::string("true");
      if (value == "false" || value == "0") return std::string("false");
      return Usage(absl::StrCat(flag, "=", Abbreviate(value), ": accepted are true and false"));
    case FlagType::kInt: {
      int64_t number = 0;
      if (!absl::SimpleAtoi(value, &number) || number < spec.min || number > spec.max) {
        return Usage(absl::StrCat(flag, "=", Abbreviate(value), ": accepted are integers ",
                                  spec.min, " to ", spec.max));
      }
      return absl::StrCat(number);
    }
    case FlagType::kString:
      if (value.empty() && !spec.allow_empty) {
        return Usage(absl::StrCat(flag, " is empty; give it a value or leave it out"));
      }
      return value;
  }
  return value;
}

}  // namespace

bool CommandLine::Has(absl::string_view name) const { return values_.count(std::string(name)) > 0; }

std::string CommandLine::String(absl::string_view name, absl::string_view fallback) const {
  auto it = values_.find(std::string(name));
  return it == values_.end() ? std::string(fallback) : it->second;
}

int64_t CommandLine::Int(absl::string_view name, int64_t fallback) const {
  auto it = values_.find(std::string(name));
  int64_t value = fallback;
  if (it != values_.end() && !absl::SimpleAtoi(it->second, &value)) value = fallback;
  return value;
}

bool CommandLine::Bool(absl::string_view name, bool fallback) const {
  auto it = values_.find(std::string(name));
  return it == values_.end() ? fallback : it->second == "true";
}

absl::StatusOr<CommandLine> ParseCommandLine(const std::vector<std::string>& args,
                                             absl::Span<const FlagSpec> specs,
                                             int max_positional) {
  CommandLine line;
  for (const std::string& arg : args) {
    if (arg == "--") break;
    if (arg == "--help" || arg == "-h" || arg == "--helpfull") {
      line.help_ = true;
      return line;
    }
  }
  for (const std::string& arg : args) {
    if (arg == "--") break;
    if (arg == "--version") {
      line.version_ = true;
      return line;
    }
  }
  bool flags_done = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (flags_done || arg.size() < 2 || arg[0] != '-') {
      if (static_cast<int>(line.positional_.size()) >= max_positional) {
        return Usage(absl::StrCat(
            "unexpected argument '", Abbreviate(arg), "'",
            max_positional == 0 ? ": this command takes only flags, as --name=value"
                                : absl::StrCat(": at most ", max_positional, " accepted")));
      }
      line.positional_.push_back(arg);
      continue;
    }
    if (arg == "--") {
      flags_done = true;
      continue;
    }
    // -o VALUE / -o=VALUE, or --name[=VALUE].
    const bool is_short = arg[1] != '-';
    const absl::string_view body = absl::string_view(arg).substr(is_short ? 1 : 2);
    const size_t equals = body.find('=');
    std::string name(body.substr(0, equals));
    bool has_value = equals != absl::string_view::npos;
    std::string value = has_value ? std::string(body.substr(equals + 1)) : "";
    const FlagSpec* spec = nullptr;
    if (is_short) {
      spec = name.size() == 1 ? FindShort(specs, name[0]) : nullptr;
      if (spec == nullptr) {
        return Usage(absl::StrCat("unknown option -", Abbreviate(name), "; accepted are ",
                                  Accepted(specs)));
      }
    } else {
      spec = Find(specs, name);
      if (spec == nullptr && !has_value && absl::StartsWith(name, "no")) {
        const FlagSpec* negated = Find(specs, name.substr(2));
        if (negated != nullptr && negated->type == FlagType::kBool) {
          spec = negated;
          value = "false";
          has_value = true;
        }
      }
      if (spec == nullptr) {
        return Usage(absl::StrCat("unknown flag --", Abbreviate(name), "; accepted are ",
                                  Accepted(specs)));
      }
    }
    const std::string flag = absl::StrCat("--", spec->name);
    if (!has_value) {
      if (spec->type == FlagType::kBool) {
        value = "true";
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return Usage(absl::StrCat(flag, " needs a value: ", flag, "=VALUE or ", flag, " VALUE"));
      }
    }
    absl::StatusOr<std::string> checked = Checked(*spec, value);
    if (!checked.ok()) return checked.status();
    if (!line.values_.emplace(spec->name, *std::move(checked)).second) {
      return Usage(absl::StrCat(flag, " is given twice"));
    }
  }
  return line;
}

std::string FlagHelp(absl::Span<const FlagSpec> specs) {
  std::vector<std::pair<std::string, std::string>> rows;
  for (const FlagSpec& spec : specs) {
    if (spec.help.empty()) continue;
    std::string names = absl::StrCat("--", spec.name);
    if (spec.short_name != 0) absl::StrAppend(&names, ", -", std::string(1, spec.short_name));
    rows.emplace_back(names, spec.help);
  }
  rows.emplace_back("--help, -h", "this text");
  rows.emplace_back("--version", "the version");
  size_t width = 0;
  for (const auto& row : rows) width = std::max(width, row.first.size());
  std::string out;
  for (const auto& [names, help] : rows) {
    absl::StrAppend(&out, "  ", names, std::string(width - names.size() + 2, ' '), help, "\n");
  }
  return out;
}

std::string VersionLine(absl::string_view tool) {
  return absl::StrCat(tool, " (tiletune ", kVersion, ")");
}

std::string EnvironmentHelp() {
  static const std::pair<const char*, const char*> kVariables[] = {
      {"TILETUNE_DB", "databases to stack on the built-in ones, ':'-separated; the first "
                      "that holds a problem answers"},
      {"TILETUNE_DB_DIR", "the user database folder, read automatically (default "
                          "$XDG_DATA_HOME/tiletune, else ~/.local/share/tiletune)"},
      {"TILETUNE_BUILTIN_DB", "0 leaves the built-in databases out"},
      {"TILETUNE_COST_MODEL", "1: a problem with no exact record runs the kernel the cost "
                              "model predicts fastest of the nearby records' variants (and, for "
                              "a model with trees, the operator's search space; default 0: the "
                              "nearest record's)"},
      {"TILETUNE_COST_MODEL_FILE", "FILE: a cost model (autotune fit -o, e.g. with --trees) "
                                   "that answers for its GPU before the built-in one"},
      {"TILETUNE_RECORD_MISSES", "FILE: append each problem that had no exact record (or one "
                                 "that timed another kernel than today's), once, as a suite "
                                 "line for autotune --suite"},
      {"TILETUNE_TUNE_ON_MISS", "milliseconds (or on) to tune a problem with no exact record "
                                "(or one that timed another kernel than today's) once its "
                                "candidates compiled in the background; records go to the "
                                "user database folder"},
      {"TILETUNE_JIT", "0: never compile; launch only what was baked into the program"},
      {"TILETUNE_CACHE_DIR", "the compile-cache folder (default $XDG_CACHE_HOME/tiletune/"
                             "kernels, else ~/.cache/tiletune/kernels)"},
      {"TILETUNE_NVRTC_LIBRARY", "the NVRTC library to load, and no other (default: "
                                 "$CUDA_PATH/lib64, /usr/local/cuda/lib64, the loader path)"},
      {"TILETUNE_CUDA_DRIVER_LIBRARY", "the CUDA driver library to load (default libcuda.so.1)"},
      {"TILETUNE_CUDNN", "cuDNN for autotune's cudnnIm2Col baseline (default libcudnn.so.9)"},
      {"TILETUNE_LINE_INFO", "1: compile every kernel with line information, for "
                             "compute-sanitizer and profilers"},
      {"SLURM_ARRAY_TASK_ID, _COUNT", "autotune's shard in a Slurm job array, when --shard is "
                                      "not given"},
      {"JOB_COMPLETION_INDEX, TILETUNE_SHARD_COUNT",
       "autotune's shard in a Kubernetes indexed Job, likewise"},
  };
  size_t width = 0;
  for (const auto& [name, what] : kVariables) width = std::max(width, std::string(name).size());
  std::string out;
  for (const auto& [name, what] : kVariables) {
    absl::StrAppend(&out, "  ", name, std::string(width - std::string(name).size() + 2, ' '),
                    what, "\n");
  }
  return out;
}

std::string UserPath(absl::string_view path) {
  const char* cwd = std::getenv("BUILD_WORKING_DIRECTORY");  // set by `bazel run`
  if (path.empty() || path[0] == '/' || cwd == nullptr || cwd[0] == '\0') {
    return std::string(path);
  }
  return absl::StrCat(cwd, "/", path);
}

}  // namespace tiletune

// The command line every tiletune tool shares (compiler, autotune and its subcommands,
// bake): one strict parser, so that every tool takes the same spellings and fails alike.
//
//   --name=VALUE or --name VALUE   a string or integer flag
//   --name, --noname, --name=true|false   a boolean flag (a bare --name never takes the
//                                  next argument)
//   -o VALUE, -o=VALUE             a flag's one-letter alias, where it has one
//   --                             ends the flags; what follows is positional
//   --help, -h                     the tool's help (exit 0); nothing else is parsed
//   --version                      the tool's version (exit 0)
//
// Every usage error is InvalidArgument with one line naming the argument (cut to 80
// characters) and what is accepted; callers print it and exit 2. A flag given twice, an
// unknown flag, an empty value (unless the flag allows one), an integer out of range, and a
// positional argument where the tool takes none are all usage errors.
//
//   const std::vector<FlagSpec> flags = {
//       {"output", FlagType::kString, "PATH: where to write", 'o'},
//       {"samples", FlagType::kInt, "N: samples per variant, 1 to 1000", 0, 1, 1000}};
//   TT_ASSIGN_OR_RETURN(CommandLine line, ParseCommandLine(args, flags));
//   if (line.help()) ...;
//   const int64_t samples = line.Int("samples", 5);
#ifndef COMPILER_BASE_COMMAND_LINE_H_
#define COMPILER_BASE_COMMAND_LINE_H_

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace tiletune {

enum class FlagType { kString, kInt, kBool };

// One flag a tool accepts.
struct FlagSpec {
  std::string name;
  FlagType type = FlagType::kString;
  // "VALUE: what it does (default ...)", one line for --help; empty for a flag that is
  // accepted but never listed (between a tool and its own child processes).
  std::string help;
  // A one-letter alias ("-o"), or 0.
  char short_name = 0;
  // kInt: the accepted range, inclusive.
  int64_t min = std::numeric_limits<int64_t>::min();
  int64_t max = std::numeric_limits<int64_t>::max();
  // kString: whether --name= (empty) is accepted.
  bool allow_empty = false;
};

// What a command line says.
class CommandLine {
 public:
  bool help() const { return help_; }
  bool version() const { return version_; }
  // Whether the flag was given.
  bool Has(absl::string_view name) const;
  // The flag's value, or `fallback` when it was not given.
  std::string String(absl::string_view name, absl::string_view fallback = "") const;
  int64_t Int(absl::string_view name, int64_t fallback) const;
  bool Bool(absl::string_view name, bool fallback) const;
  // Every given flag and its value, as given (booleans as "true"/"false").
  const std::map<std::string, std::string>& values() const { return values_; }
  // The positional arguments, in order.
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  friend absl::StatusOr<CommandLine> ParseCommandLine(const std::vector<std::string>&,
                                                      absl::Span<const FlagSpec>, int);
  bool help_ = false;
  bool version_ = false;
  std::map<std::string, std::string> values_;
  std::vector<std::string> positional_;
};

// Parses `args` (argv without the program name, and without a subcommand's name) against
// `specs`. `max_positional` arguments that are not flags are accepted (0: none).
absl::StatusOr<CommandLine> ParseCommandLine(const std::vector<std::string>& args,
                                             absl::Span<const FlagSpec> specs,
                                             int max_positional = 0);

// `path` as the user meant it: a relative path is taken from $BUILD_WORKING_DIRECTORY (where
// `bazel run` was started) when that is set, else left as it is.
std::string UserPath(absl::string_view path);

// "  --name, -o  help" lines for the flags with help text, aligned, plus --help and
// --version.
std::string FlagHelp(absl::Span<const FlagSpec> specs);

// What --version prints for `tool`: "autotune (tiletune 0.3.0)".
std::string VersionLine(absl::string_view tool);

// The environment variables tiletune reads, one aligned line each: the same table in every
// tool's --help and in README.md (a test keeps them equal).
std::string EnvironmentHelp();

}  // namespace tiletune

#endif  // COMPILER_BASE_COMMAND_LINE_H_

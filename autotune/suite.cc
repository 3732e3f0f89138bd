#include "autotune/suite.h"

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace tiletune {
namespace autotune {

const std::vector<std::string>& DefaultSuiteSpecs() {
  static const std::vector<std::string>* const specs = new std::vector<std::string>{
      "copy:f16:8192,8192",                // 128 MiB
      "copy:bf16:16384,16384",             // 512 MiB
      "copy:f32:4096,4096",                // 64 MiB
      "copy:u8:2048,2048",                 // 4 MiB
      "im2col:f16:64,56,56,64:k=3:p=1",
      "im2col:f16:64,14,14,256:k=3:p=1",
      "im2col:f16:64,56,56,128:k=3:s=2:p=1",
      "im2col:f16:32,224,224,3:k=7:s=2:p=3",
  };
  return *specs;
}

absl::StatusOr<std::vector<SuiteProblem>> ParseProblems(const TileOpRegistry& ops,
                                                        absl::string_view specs) {
  std::vector<SuiteProblem> problems;
  for (absl::string_view spec : absl::StrSplit(specs, ';', absl::SkipWhitespace())) {
    absl::StatusOr<std::unique_ptr<TileOp>> op = ops.ParseSpec(absl::StripAsciiWhitespace(spec));
    if (!op.ok()) return op.status();
    problems.push_back(*std::move(op));
  }
  if (problems.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("no problems given; expected ';'-separated ", ops.SpecSyntax()));
  }
  return problems;
}

absl::StatusOr<std::vector<SuiteProblem>> ParseSuiteFile(const TileOpRegistry& ops,
                                                         absl::string_view text,
                                                         absl::string_view origin) {
  std::vector<SuiteProblem> problems;
  int number = 0;
  // Editors on some systems start a UTF-8 file with a byte-order mark; it is not a problem's.
  absl::ConsumePrefix(&text, "\xef\xbb\xbf");
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++number;
    const size_t comment = line.find('#');
    if (comment != absl::string_view::npos) line = line.substr(0, comment);
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) continue;
    absl::StatusOr<std::unique_ptr<TileOp>> op = ops.ParseSpec(line);
    if (!op.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(origin, ":", number, ": ", op.status().message()));
    }
    problems.push_back(*std::move(op));
  }
  if (problems.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        origin, ": no problems; expected one spec per line ('#' comments), ", ops.SpecSyntax()));
  }
  return problems;
}

std::vector<SuiteProblem> UniqueProblems(const TileOpRegistry& ops,
                                         std::vector<SuiteProblem> problems,
                                         std::vector<std::string>* repeats) {
  std::vector<SuiteProblem> unique;
  std::vector<std::string> order;  // first-seen order of the repeated keys
  absl::flat_hash_map<std::string, int> seen;
  for (SuiteProblem& problem : problems) {
    absl::StatusOr<std::string> spec = ops.FormatSpec(*problem);
    const std::string key = spec.ok() ? *spec : DescribeProblem(ops, *problem);
    int& count = seen[key];
    if (++count == 1) {
      unique.push_back(std::move(problem));
    } else if (count == 2) {
      order.push_back(key);
    }
  }
  if (repeats != nullptr) {
    for (const std::string& key : order) {
      repeats->push_back(absl::StrCat(key, " (", seen[key], " times)"));
    }
  }
  return unique;
}

absl::StatusOr<std::vector<SuiteProblem>> DefaultSuite(const TileOpRegistry& ops) {
  absl::StatusOr<std::vector<SuiteProblem>> suite =
      ParseProblems(ops, absl::StrJoin(DefaultSuiteSpecs(), ";"));
  if (!suite.ok()) {
    return absl::InternalError(
        absl::StrCat("the default suite does not parse: ", suite.status().message()));
  }
  return suite;
}

std::string DescribeProblem(const TileOpRegistry& ops, const TileOp& problem) {
  absl::StatusOr<const TileOpDefinition*> definition = ops.For(problem);
  return definition.ok() ? (*definition)->Describe(problem) : problem.op_name();
}

}  // namespace autotune
}  // namespace tiletune

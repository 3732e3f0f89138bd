#include "autotune/suite.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "compiler/base/status_macros.h"

namespace tiletune {
namespace autotune {
namespace {

CopyOp WholeCopy(DataType dtype, std::vector<int64_t> shape) {
  Buffer src = Buffer::RowMajor("src", dtype, Scope::kGlobal, shape);
  Buffer dst = Buffer::RowMajor("dst", dtype, Scope::kGlobal, shape);
  return CopyOp{Region::Whole(src), Region::Whole(dst)};
}

}  // namespace

std::vector<CopyOp> DefaultCopySuite() {
  return {
      WholeCopy(DataType::kF16, {8192, 8192}),    // 128 MiB
      WholeCopy(DataType::kBF16, {16384, 16384}), // 512 MiB
      WholeCopy(DataType::kF32, {4096, 4096}),    // 64 MiB
      WholeCopy(DataType::kU8, {2048, 2048}),     // 4 MiB
  };
}

absl::StatusOr<std::vector<CopyOp>> ParseProblems(absl::string_view specs) {
  std::vector<CopyOp> problems;
  for (absl::string_view spec : absl::StrSplit(specs, ';', absl::SkipWhitespace())) {
    spec = absl::StripAsciiWhitespace(spec);
    std::vector<absl::string_view> parts = absl::StrSplit(spec, ':');
    auto bad = [&](absl::string_view why) {
      return absl::InvalidArgumentError(absl::StrCat(
          "problem '", spec, "': ", why, "; expected copy:DTYPE:D0,D1,... e.g. copy:f16:8192,8192"));
    };
    if (parts.size() != 3) return bad("needs three ':'-separated parts");
    if (parts[0] != "copy") return bad(absl::StrCat("op '", parts[0], "' is not copy"));
    absl::StatusOr<DataType> dtype = ParseDataType(parts[1]);
    if (!dtype.ok()) return bad(dtype.status().message());
    std::vector<int64_t> shape;
    for (absl::string_view d : absl::StrSplit(parts[2], ',')) {
      int64_t v = 0;
      if (!absl::SimpleAtoi(d, &v) || v < 1 || v > (int64_t{1} << 34)) {
        return bad(absl::StrCat("extent '", d, "' is not an integer from 1 to 2^34"));
      }
      shape.push_back(v);
    }
    if (shape.empty() || shape.size() > kMaxRank) return bad("give 1 to 5 extents");
    problems.push_back(WholeCopy(*dtype, shape));
  }
  if (problems.empty()) return absl::InvalidArgumentError("no problems given");
  return problems;
}

std::string DescribeProblem(const CopyOp& op) {
  return absl::StrCat("copy ", DataTypeName(op.src.buffer.dtype), " [",
                      absl::StrJoin(op.src.extents, ", "), "]");
}

}  // namespace autotune
}  // namespace tiletune

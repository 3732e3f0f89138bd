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

SuiteProblem WholeCopy(DataType dtype, std::vector<int64_t> shape) {
  Buffer src = Buffer::RowMajor("src", dtype, Scope::kGlobal, shape);
  Buffer dst = Buffer::RowMajor("dst", dtype, Scope::kGlobal, shape);
  return SuiteProblem{CopyOp{Region::Whole(src), Region::Whole(dst)}, std::nullopt};
}

SuiteProblem Conv(int64_t n, int64_t hw, int64_t c, int64_t k, int64_t s, int64_t p) {
  ::tiletune::Im2colGeometry g;
  g.n = n;
  g.h = g.w = hw;
  g.c = c;
  g.kh = g.kw = k;
  g.sh = g.sw = s;
  g.ph = g.pw = p;
  return SuiteProblem{std::nullopt, Im2colOp::Dense(DataType::kF16, g)};
}

// "3" -> {3, 3}; "3x2" -> {3, 2}.
absl::StatusOr<std::pair<int64_t, int64_t>> Pair(absl::string_view text, int64_t min_value) {
  std::vector<absl::string_view> parts = absl::StrSplit(text, 'x');
  int64_t a = 0, b = 0;
  if (parts.empty() || parts.size() > 2 || !absl::SimpleAtoi(parts[0], &a) ||
      (parts.size() == 2 && !absl::SimpleAtoi(parts[1], &b)) || a < min_value) {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "' is not N or HxW with values >= ",
                                                   min_value));
  }
  if (parts.size() == 1) b = a;
  if (b < min_value) {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "' has a value below ", min_value));
  }
  return std::make_pair(a, b);
}

}  // namespace

std::vector<SuiteProblem> DefaultSuite() {
  return {
      WholeCopy(DataType::kF16, {8192, 8192}),     // 128 MiB
      WholeCopy(DataType::kBF16, {16384, 16384}),  // 512 MiB
      WholeCopy(DataType::kF32, {4096, 4096}),     // 64 MiB
      WholeCopy(DataType::kU8, {2048, 2048}),      // 4 MiB
      Conv(64, 56, 64, 3, 1, 1),
      Conv(64, 14, 256, 3, 1, 1),
      Conv(64, 56, 128, 3, 2, 1),
      Conv(32, 224, 3, 7, 2, 3),
  };
}

absl::StatusOr<std::vector<SuiteProblem>> ParseProblems(absl::string_view specs) {
  std::vector<SuiteProblem> problems;
  for (absl::string_view spec : absl::StrSplit(specs, ';', absl::SkipWhitespace())) {
    spec = absl::StripAsciiWhitespace(spec);
    std::vector<absl::string_view> parts = absl::StrSplit(spec, ':');
    auto bad = [&](absl::string_view why) {
      return absl::InvalidArgumentError(absl::StrCat(
          "problem '", spec, "': ", why,
          "; expected copy:DTYPE:D0,D1,... or im2col:DTYPE:N,H,W,C[:k=KH[xKW]][:s=..][:d=..][:p=..]"));
    };
    if (parts.size() < 3) return bad("needs at least three ':'-separated parts");
    if (parts[0] != "copy" && parts[0] != "im2col") {
      return bad(absl::StrCat("op '", parts[0], "' is not copy or im2col"));
    }
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
    if (parts[0] == "copy") {
      if (parts.size() != 3) return bad("a copy takes no options");
      if (shape.empty() || shape.size() > kMaxRank) return bad("give 1 to 5 extents");
      problems.push_back(WholeCopy(*dtype, shape));
      continue;
    }
    if (shape.size() != 4) return bad("an im2col image is N,H,W,C");
    ::tiletune::Im2colGeometry g;
    g.n = shape[0];
    g.h = shape[1];
    g.w = shape[2];
    g.c = shape[3];
    for (size_t i = 3; i < parts.size(); ++i) {
      std::vector<absl::string_view> kv = absl::StrSplit(parts[i], absl::MaxSplits('=', 1));
      if (kv.size() != 2) return bad(absl::StrCat("option '", parts[i], "' is not key=value"));
      int64_t min_value = kv[0] == "p" ? 0 : 1;
      absl::StatusOr<std::pair<int64_t, int64_t>> v = Pair(kv[1], min_value);
      if (!v.ok()) return bad(absl::StrCat("option ", kv[0], ": ", v.status().message()));
      if (kv[0] == "k") std::tie(g.kh, g.kw) = *v;
      else if (kv[0] == "s") std::tie(g.sh, g.sw) = *v;
      else if (kv[0] == "d") std::tie(g.dh, g.dw) = *v;
      else if (kv[0] == "p") std::tie(g.ph, g.pw) = *v;
      else return bad(absl::StrCat("unknown option '", kv[0], "'; accepted are k, s, d, p"));
    }
    Im2colOp op = Im2colOp::Dense(*dtype, g);
    absl::Status valid = ValidateIm2colOp(op);
    if (!valid.ok()) return bad(valid.message());
    problems.push_back(SuiteProblem{std::nullopt, op});
  }
  if (problems.empty()) return absl::InvalidArgumentError("no problems given");
  return problems;
}

std::string DescribeProblem(const SuiteProblem& problem) {
  if (problem.copy) {
    return absl::StrCat("copy ", DataTypeName(problem.copy->src.buffer.dtype), " [",
                        absl::StrJoin(problem.copy->src.extents, ", "), "]");
  }
  const ::tiletune::Im2colGeometry& g = problem.im2col->geometry;
  return absl::StrCat("im2col ", DataTypeName(problem.im2col->img.dtype), " N", g.n, " C", g.c,
                      " ", g.h, "x", g.w, " k", g.kh, "x", g.kw, " s", g.sh, "x", g.sw, " d",
                      g.dh, "x", g.dw, " p", g.ph, "x", g.pw);
}

absl::StatusOr<TuningTask> MakeTask(const SuiteProblem& problem, const Target& target) {
  if (problem.copy) return CopyTask(*problem.copy, target);
  return Im2colTask(*problem.im2col, target);
}

}  // namespace autotune
}  // namespace tiletune

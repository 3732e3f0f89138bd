#include "compiler/base/status_macros.h"

#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace {

int evaluations = 0;

absl::Status Check(bool ok) {
  ++evaluations;
  return ok ? absl::OkStatus() : absl::InvalidArgumentError("bad");
}

absl::StatusOr<std::unique_ptr<int>> Make(int v) {
  ++evaluations;
  if (v < 0) return absl::OutOfRangeError("negative");
  return std::make_unique<int>(v);
}

absl::Status UseCheck(bool ok, int* reached) {
  TT_RETURN_IF_ERROR(Check(ok));
  *reached = 1;
  return absl::OkStatus();
}

absl::StatusOr<int> UseMake(int a, int b) {
  TT_ASSIGN_OR_RETURN(std::unique_ptr<int> x, Make(a));
  TT_ASSIGN_OR_RETURN(std::unique_ptr<int> y, Make(b));
  return *x + *y;
}

TEST(StatusMacrosTest, ReturnIfErrorStopsAtFirstError) {
  int reached = 0;
  evaluations = 0;
  EXPECT_EQ(UseCheck(false, &reached).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(reached, 0);
  EXPECT_EQ(evaluations, 1);
  EXPECT_TRUE(UseCheck(true, &reached).ok());
  EXPECT_EQ(reached, 1);
}

TEST(StatusMacrosTest, AssignOrReturnMovesValuesAndPropagates) {
  evaluations = 0;
  EXPECT_EQ(*UseMake(2, 3), 5);
  EXPECT_EQ(evaluations, 2);
  evaluations = 0;
  absl::StatusOr<int> failed = UseMake(-1, 3);
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(evaluations, 1);
}

}  // namespace
}  // namespace tiletune

#include "autotune/copy_search_space.h"

#include <cstdio>
#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace autotune {
namespace {

using ::testing::HasSubstr;

CopyOp Op(DataType dtype, std::vector<int64_t> shape) {
  Buffer src = Buffer::RowMajor("src", dtype, Scope::kGlobal, shape);
  Buffer dst = Buffer::RowMajor("dst", dtype, Scope::kGlobal, shape);
  return CopyOp{Region::Whole(src), Region::Whole(dst)};
}

TEST(CopySearchSpaceTest, PrunesAndDeduplicates) {
  auto space = BuildCopySearchSpace(Op(DataType::kF16, {8192, 8192}), *Target::Parse("sm_90a"));
  ASSERT_TRUE(space.ok()) << space.status();
  EXPECT_EQ(space->enumerated, static_cast<int>(AllCopyHints().size()) *
                                   static_cast<int>(CopyLaunchCandidates({8192, 8192}, 2,
                                                                         *Target::Parse("sm_90a"))
                                                        .size()));
  EXPECT_EQ(space->enumerated,
            space->pruned + space->duplicates + static_cast<int>(space->candidates.size()));
  EXPECT_GT(space->pruned, 0);
  EXPECT_GT(space->duplicates, static_cast<int>(space->candidates.size()));
  std::printf("enumerated %d, pruned %d, duplicates %d, distinct %zu\n", space->enumerated,
              space->pruned, space->duplicates, space->candidates.size());
  // Every kept source is distinct, and every path is represented.
  std::set<std::string> shas;
  std::set<LoweringPath> paths;
  for (const CopyCandidate& c : space->candidates) {
    EXPECT_TRUE(shas.insert(c.source_sha256).second);
    paths.insert(c.lowered.path);
    EXPECT_EQ(c.variant.source_sha256(), c.source_sha256);
    EXPECT_EQ(c.variant.lowering().path(), LoweringPathName(c.lowered.path));
  }
  EXPECT_EQ(paths, (std::set<LoweringPath>{LoweringPath::kTma, LoweringPath::kBulk1d,
                                            LoweringPath::kCpAsync, LoweringPath::kSyncSimt}));
  EXPECT_FALSE(space->pruned_examples.empty());
}

TEST(CopySearchSpaceTest, OlderTargetsOnlyGetTheirPaths) {
  auto space = BuildCopySearchSpace(Op(DataType::kF32, {1000, 1000}), *Target::Parse("sm_75"));
  ASSERT_TRUE(space.ok());
  for (const CopyCandidate& c : space->candidates) {
    EXPECT_EQ(c.lowered.path, LoweringPath::kSyncSimt);
    EXPECT_FALSE(c.lowered.l2_policy.has_value());  // No L2 hints before sm_80.
  }
}

TEST(CopySearchSpaceTest, EvictionHintsMultiplyDistinctKernelsOnlyWhereTheyMatter) {
  auto sm90 = BuildCopySearchSpace(Op(DataType::kF16, {4096, 4096}), *Target::Parse("sm_90a"));
  auto sm75 = BuildCopySearchSpace(Op(DataType::kF16, {4096, 4096}), *Target::Parse("sm_75"));
  ASSERT_TRUE(sm90.ok() && sm75.ok());
  int with_policy = 0;
  for (const CopyCandidate& c : sm90->candidates) with_policy += c.lowered.l2_policy.has_value();
  EXPECT_GT(with_policy, 0);
  EXPECT_LT(sm75->candidates.size(), sm90->candidates.size());
}

}  // namespace
}  // namespace autotune
}  // namespace tiletune

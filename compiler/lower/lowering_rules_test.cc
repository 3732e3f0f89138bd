// The lowering rules every operator shares, on made-up path chains.
#include "compiler/lower/lowering_rules.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

Target T(const char* arch) { return *Target::Parse(arch); }

// A chain of three paths whose checks fail with the given reasons ("" passes).
std::vector<PathOption> Chain(std::string tma, std::string cp, std::string sync) {
  auto check = [](std::string why) {
    return [why] { return why.empty() ? std::vector<std::string>{} : std::vector<std::string>{why}; };
  };
  return {{Instruction::kTma, "fast", check(tma)},
          {Instruction::kCpAsync, "middle", check(cp)},
          {Instruction::kSync, "plain", check(sync)}};
}

// The CTAs an SM holds take the tightest of its threads, shared memory, block slots and,
// given a thread's registers, its registers (64 Ki, to warps in units of 256).
TEST(ResidentCtasPerSmTest, TakesTheTightestLimitRegistersIncluded) {
  EXPECT_EQ(ResidentCtasPerSm(T("sm_90a"), 256, 16502), 8);           // threads
  EXPECT_EQ(ResidentCtasPerSm(T("sm_90a"), 256, 16502, 255), 1);      // 256 a thread once allocated
  EXPECT_EQ(ResidentCtasPerSm(T("sm_90a"), 256, 0, 40), 6);           // 10 Ki a CTA
  EXPECT_EQ(ResidentCtasPerSm(T("sm_90a"), 256, 16502, 64), 4);       // 16 Ki a CTA
  EXPECT_EQ(ResidentCtasPerSm(T("sm_90a"), 256, 65536, 32), 3);       // shared memory
  EXPECT_EQ(ResidentCtasPerSm(T("sm_90a"), 32, 0, 16), 32);           // block slots
  // Each architecture's own limits: an RTX 50-series SM runs 1536 threads, 100 KiB shared.
  EXPECT_EQ(ResidentCtasPerSm(T("sm_120"), 256, 0, 32), 6);
  EXPECT_EQ(ResidentCtasPerSm(T("sm_120"), 128, 32768, 32), 3);
}

TEST(ChoosePathTest, AutoChainTakesTheFirstThatFitsAndLogsTheRest) {
  std::vector<std::string> log;
  auto chosen = ChoosePath(Chain("no TMA here", "", ""), ResolvedHints{}, "op", T("sm_90a"), log);
  ASSERT_TRUE(chosen.ok());
  EXPECT_EQ(*chosen, 1u);
  EXPECT_THAT(log, ElementsAre("fast rejected: no TMA here; falling back", "path middle"));
  log.clear();
  auto none = ChoosePath(Chain("a", "b", "c"), ResolvedHints{}, "op", T("sm_90a"), log);
  // Each path tried, with its reasons.
  EXPECT_THAT(none.status().message(),
              HasSubstr("no lowering path fits this op and launch: fast: a | middle: b | plain: c"));
}

TEST(ChoosePathTest, AnExplicitPreferenceIsHonouredOrAnError) {
  ResolvedHints hints;
  hints.prefer_instruction = Instruction::kCpAsync;
  std::vector<std::string> log;
  auto chosen = ChoosePath(Chain("", "", ""), hints, "op", T("sm_90a"), log);
  ASSERT_TRUE(chosen.ok());
  EXPECT_EQ(*chosen, 1u);
  EXPECT_THAT(log, ElementsAre("path middle (preferred)"));
  auto refused = ChoosePath(Chain("", "too big", ""), hints, "op", T("sm_80"), log);
  EXPECT_THAT(refused.status().message(),
              AllOf(HasSubstr("prefer_instruction=cp_async cannot be honoured for this op on "
                              "sm_80: too big"),
                    HasSubstr("annotate fallback=auto")));
  hints.fallback = FallbackMode::kAuto;
  log.clear();
  auto fallback = ChoosePath(Chain("", "too big", ""), hints, "op", T("sm_80"), log);
  ASSERT_TRUE(fallback.ok());
  EXPECT_EQ(*fallback, 2u);
  EXPECT_THAT(log, ElementsAre("middle rejected: too big; falling back", "path plain"));
}

TEST(ChoosePathTest, AFamilyTheOperatorLacks) {
  std::vector<PathOption> chain = Chain("", "", "");
  chain.erase(chain.begin() + 1);  // no cp_async path
  ResolvedHints hints;
  hints.prefer_instruction = Instruction::kCpAsync;
  std::vector<std::string> log;
  EXPECT_THAT(ChoosePath(chain, hints, "im2col", T("sm_90a"), log).status().message(),
              AllOf(HasSubstr("prefer_instruction=cp_async cannot be honoured for im2col: it has "
                              "no cp_async lowering (accepted are tma, sync)")));
  hints.fallback = FallbackMode::kAuto;
  auto next = ChoosePath(chain, hints, "im2col", T("sm_90a"), log);
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(chain[*next].name, "plain");  // The next family, not the first.
  EXPECT_THAT(log, ElementsAre("cp_async rejected: im2col has no cp_async lowering; falling back",
                               "path plain"));
}

TEST(ChoosePathTest, TmaWithDisableTmaIsAlwaysAnError) {
  ResolvedHints hints;
  hints.prefer_instruction = Instruction::kTma;
  hints.disable_tma = true;
  hints.fallback = FallbackMode::kAuto;
  std::vector<std::string> log;
  EXPECT_THAT(ChoosePath(Chain("", "", ""), hints, "op", T("sm_90a"), log).status().message(),
              HasSubstr("conflicts with disable_tma"));
}

TEST(ChooseL2PolicyTest, OnlyRealPoliciesOnTargetsThatHaveThem) {
  std::vector<std::string> log;
  EXPECT_FALSE(ChooseL2Policy(std::nullopt, T("sm_90a"), "loads", log).has_value());
  EXPECT_TRUE(log.empty());
  EXPECT_FALSE(ChooseL2Policy(EvictionPolicy::kEvictFirst, T("sm_75"), "loads", log).has_value());
  EXPECT_FALSE(ChooseL2Policy(EvictionPolicy::kEvictNormal, T("sm_90a"), "loads", log));
  EXPECT_EQ(ChooseL2Policy(EvictionPolicy::kEvictLast, T("sm_80"), "loads", log),
            EvictionPolicy::kEvictLast);
  EXPECT_THAT(absl::StrJoin(log, "\n"),
              AllOf(HasSubstr("sm_75 has no L2 cache hints"), HasSubstr("default L2 priority"),
                    HasSubstr("L2 evict_last on loads via createpolicy")));
}

TEST(VectorTest, WidestVectorAndTheHint) {
  std::string limit;
  EXPECT_EQ(WidestVector(2, true, "", {{"inner extent", 64}, {"C=", 64}}, &limit), 8);
  EXPECT_EQ(limit, "");
  EXPECT_EQ(WidestVector(2, true, "", {{"inner extent", 64}, {"C=", 6}}, &limit), 2);
  EXPECT_EQ(limit, "C=6");
  EXPECT_EQ(WidestVector(1, true, "", {{"inner extent", 60}}, &limit), 4);
  EXPECT_EQ(limit, "inner extent 60");
  EXPECT_EQ(WidestVector(4, false, "strided", {}, &limit), 1);
  EXPECT_EQ(limit, "strided");
  EXPECT_EQ(WidestVector(8, true, "", {}, &limit), 2);
  std::vector<std::string> log;
  ResolvedHints hints;
  EXPECT_EQ(*ChooseVectorWidth(hints, 4, 2, "C=12", " along C", log), 4);
  hints.coalesced_width = 2;
  EXPECT_EQ(*ChooseVectorWidth(hints, 4, 2, "C=12", " along C", log), 2);
  hints.coalesced_width = 8;
  EXPECT_THAT(ChooseVectorWidth(hints, 4, 2, "C=12", " along C", log).status().message(),
              AllOf(HasSubstr("coalesced_width=8 does not divide the widest aligned vector along "
                              "C here, 4 element(s) (limited by C=12); use a divisor of 4")));
}

TEST(LoopLayoutTest, HintOrConsecutiveThreadsAlongRows) {
  ResolvedHints hints;
  EXPECT_EQ(*ChooseLoopLayout(hints, 256, 16), (LoopLayout{16, 16}));
  EXPECT_EQ(*ChooseLoopLayout(hints, 128, 1024), (LoopLayout{1, 128}));
  EXPECT_EQ(*ChooseLoopLayout(hints, 96, 64), (LoopLayout{3, 32}));
  hints.loop_layout = LoopLayout{8, 32};
  EXPECT_EQ(*ChooseLoopLayout(hints, 256, 4), (LoopLayout{8, 32}));
  EXPECT_THAT(ChooseLoopLayout(hints, 128, 4).status().message(),
              HasSubstr("arranges 256 threads but the launch has 128"));
}

TEST(SharedFitTest, NamesTheLimitThatIsExceeded) {
  std::vector<std::string> why;
  CheckSharedFit(48 * 1024, 0, T("sm_90a"), why);
  EXPECT_TRUE(why.empty());
  CheckSharedFit(300 * 1024, 0, T("sm_90a"), why);
  ASSERT_EQ(why.size(), 1u);
  EXPECT_THAT(why[0], HasSubstr("a block may use on sm_90a"));
  why.clear();
  CheckSharedFit(100 * 1024, 3, T("sm_90a"), why);
  ASSERT_EQ(why.size(), 1u);
  EXPECT_THAT(why[0], HasSubstr("3 CTAs per SM"));
}

// A warp load's sectors: the distinct 32-byte sectors its lanes touch, averaged over the
// instructions some lane makes.
TEST(MeanWarpLoadSectorsTest, CountsDistinctSectorsPerInstruction) {
  std::vector<std::optional<int64_t>> packed, apart, half;
  for (int64_t lane = 0; lane < kWarpLanes; ++lane) {
    packed.push_back(lane * 2);   // 64 B: 2 sectors
    apart.push_back(lane * 32);   // a sector each
    half.push_back(lane % 2 == 0 ? std::optional<int64_t>(lane * 4) : std::nullopt);  // 16 lanes over 124 B
  }
  EXPECT_EQ(MeanWarpLoadSectors({packed}), 2);
  EXPECT_EQ(MeanWarpLoadSectors({apart}), 32);
  EXPECT_EQ(MeanWarpLoadSectors({half}), 4);
  EXPECT_EQ(MeanWarpLoadSectors({packed, apart}), 17);
  // An instruction no lane makes does not count; none at all is 0.
  EXPECT_EQ(MeanWarpLoadSectors({packed, std::vector<std::optional<int64_t>>(32)}), 2);
  EXPECT_EQ(MeanWarpLoadSectors({}), std::nullopt);
  // Offsets 31 and 32 lie in neighbouring sectors; -1 in the one before 0.
  EXPECT_EQ(MeanWarpLoadSectors({{31, 32}}), 2);
  EXPECT_EQ(MeanWarpLoadSectors({{-1, 0}}), 2);
}

}  // namespace
}  // namespace tiletune

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "compiler/ir/buffer.h"
#include "compiler/ir/hints.h"
#include "compiler/ir/data_type.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace {

using ::testing::HasSubstr;

TEST(DataTypeTest, NamesRoundTripAndSizesAreRight) {
  for (DataType dtype : AllDataTypes()) {
    auto parsed = ParseDataType(DataTypeName(dtype));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, dtype);
  }
  EXPECT_EQ(DataTypeBytes(DataType::kF64), 8);
  EXPECT_EQ(DataTypeBytes(DataType::kF32), 4);
  EXPECT_EQ(DataTypeBytes(DataType::kBF16), 2);
  EXPECT_EQ(DataTypeBytes(DataType::kF8E4M3), 1);
  EXPECT_EQ(*ParseDataType("bfloat16"), DataType::kBF16);
  EXPECT_THAT(ParseDataType("f12").status().message(), HasSubstr("accepted are f64, f32"));
}

TEST(BufferTest, RowMajorStridesAndSpan) {
  Buffer b = Buffer::RowMajor("x", DataType::kF16, Scope::kGlobal, {2, 3, 5});
  EXPECT_EQ(b.strides, (std::vector<int64_t>{15, 5, 1}));
  EXPECT_EQ(b.SpanElements(), 30);
  EXPECT_TRUE(ValidateBuffer(b).ok());
  Region r = Region::Box(b, {1, 1, 2}, {1, 2, 3});
  EXPECT_EQ(r.NumElements(), 6);
  EXPECT_EQ(r.BaseOffsetElements(), 15 + 5 + 2);
  EXPECT_EQ(RegionToString(r), "x[1:2, 1:3, 2:5]");
  EXPECT_TRUE(ValidateRegion(r).ok());
  EXPECT_EQ(Region::Element(b, {1, 2, 4}).NumElements(), 1);
}

TEST(BufferTest, ElementsAreDistinctUnlessStridesOverlap) {
  Buffer b = Buffer::RowMajor("b", DataType::kF16, Scope::kGlobal, {4, 5, 6});
  EXPECT_TRUE(b.ElementsAreDistinct());
  b.strides = {40, 8, 1};  // padded rows
  EXPECT_TRUE(b.ElementsAreDistinct());
  b.strides = {1, 4, 20};  // transposed, still one element per index
  EXPECT_TRUE(b.ElementsAreDistinct());
  b.strides = {30, 5, 1};  // rows of 6 at a pitch of 5: neighbours share an element
  EXPECT_FALSE(b.ElementsAreDistinct());
  b.strides = {30, 0, 1};
  EXPECT_FALSE(b.ElementsAreDistinct());
  b.shape = {4, 1, 6};  // an extent-1 dimension's stride does not matter
  EXPECT_TRUE(b.ElementsAreDistinct());
}

TEST(BufferTest, RejectsBadBuffersAndRegions) {
  Buffer b = Buffer::RowMajor("x", DataType::kF32, Scope::kGlobal, {4, 8});
  Buffer bad = b;
  bad.shape = {4, 0};
  EXPECT_THAT(ValidateBuffer(bad).message(), HasSubstr("dimension 1 has extent 0"));
  bad = Buffer::RowMajor("x", DataType::kF32, Scope::kGlobal, {1, 1, 1, 1, 1, 1});
  EXPECT_THAT(ValidateBuffer(bad).message(), HasSubstr("rank 6"));
  bad = b;
  bad.strides = {8};
  EXPECT_THAT(ValidateBuffer(bad).message(), HasSubstr("1 strides for 2 dimensions"));
  bad = b;
  bad.name = "";
  EXPECT_FALSE(ValidateBuffer(bad).ok());
  bad = b;
  bad.strides = {-8, 1};
  EXPECT_THAT(ValidateBuffer(bad).message(), HasSubstr("stride -8"));
  EXPECT_EQ(ValidateRegion(Region::Box(b, {3, 0}, {2, 8})).code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(ValidateRegion(Region::Box(b, {0, 0}, {4, 0})).message(), HasSubstr("extent 0"));
  EXPECT_THAT(ValidateRegion(Region::Box(b, {0}, {4})).message(), HasSubstr("rank-2"));
}

// Products that wrap int64 are errors naming the value, not wrapped sizes (issue 17: a
// 2^40 x 2^40 copy used to emit a kernel of 0 tiles, a 2^34-square one 42 kernels).
TEST(BufferTest, SpansAndCountsCannotOverflow) {
  const int64_t big = int64_t{1} << 40;
  Buffer huge = Buffer::RowMajor("src", DataType::kF16, Scope::kGlobal, {big, big});
  absl::Status span = ValidateBuffer(huge);
  EXPECT_EQ(span.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(span.message()),
              ::testing::HasSubstr("buffer src of shape [1099511627776, 1099511627776] and "
                                   "strides [1099511627776, 1] spans more than 2^48 bytes"));
  const int64_t side = int64_t{1} << 34;
  EXPECT_FALSE(ValidateBuffer(Buffer::RowMajor("src", DataType::kF16, Scope::kGlobal,
                                               {side, side})).ok());
  // 2^47 bytes is fine; 2^48 + 1 elements of a byte is not.
  EXPECT_TRUE(ValidateBuffer(Buffer::RowMajor("b", DataType::kU8, Scope::kGlobal,
                                              {int64_t{1} << 24, int64_t{1} << 23})).ok());
  EXPECT_FALSE(ValidateBuffer(Buffer::RowMajor("b", DataType::kU8, Scope::kGlobal,
                                               {(int64_t{1} << 24) + 1, int64_t{1} << 24})).ok());
  // A stride-0 (broadcast) buffer spans little but a region of it may count many elements.
  Buffer broadcast{"b", DataType::kF32, Scope::kGlobal, {big, big, big}, {0, 0, 0}};
  EXPECT_TRUE(ValidateBuffer(broadcast).ok());
  absl::Status count = ValidateRegion(Region::Whole(broadcast));
  EXPECT_THAT(std::string(count.message()), ::testing::HasSubstr("more than 2^48 elements"));
  // offset + extent past INT64_MAX is outside the buffer, not a wrapped small number.
  Buffer small = Buffer::RowMajor("s", DataType::kF32, Scope::kGlobal, {8, 8});
  Region far = Region::Box(small, {INT64_MAX, 0}, {2, 8});
  EXPECT_EQ(ValidateRegion(far).code(), absl::StatusCode::kOutOfRange);
}

TEST(ScopeTest, ParsesNames) {
  EXPECT_EQ(*ParseScope("shared"), Scope::kShared);
  EXPECT_EQ(*ParseScope("shared.dyn"), Scope::kShared);
  EXPECT_EQ(*ParseScope("fragment"), Scope::kFragment);
  EXPECT_THAT(ParseScope("texture").status().message(), HasSubstr("accepted are global"));
}

TEST(HintsTest, AnnotationsTakePrecedenceOverKeywords) {
  Hints hints;
  hints.coalesced_width = 8;
  hints.eviction_policy = EvictionPolicy::kEvictLast;
  hints.prefer_instruction = Instruction::kSync;
  hints.annotations = {{"eviction_policy", "evict_first"},
                       {"prefer_instruction", "tma"},
                       {"disable_tma", "false"},
                       {"coalesced_width", "4"},
                       {"loop_layout", "4x64"},
                       {"fallback", "auto"}};
  auto resolved = ResolveHints(hints, HintScope{"copy", {}});
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(*resolved->coalesced_width, 4);
  EXPECT_EQ(*resolved->eviction_policy, EvictionPolicy::kEvictFirst);
  EXPECT_EQ(*resolved->prefer_instruction, Instruction::kTma);
  EXPECT_EQ(*resolved->loop_layout, (LoopLayout{4, 64}));
  EXPECT_EQ(resolved->fallback, FallbackMode::kAuto);
  EXPECT_EQ(HintsToString(*resolved),
            "coalesced_width=4,eviction_policy=evict_first,prefer_instruction=tma,"
            "loop_layout=4x64,fallback=auto");
  EXPECT_EQ(HintsToString(ResolvedHints{}), "");
}

TEST(HintsTest, RejectsBadValuesNamingWhatIsAccepted) {
  struct Case {
    const char* key;
    const char* value;
    const char* expected;
  };
  for (const Case& c : {Case{"coalesced_width", "3", "accepted are 1, 2, 4, 8, 16"},
                        Case{"coalesced_width", "x", "invalid coalesced_width 'x'"},
                        Case{"disable_tma", "maybe", "accepted are true, false"},
                        Case{"eviction_policy", "evict_sometimes", "evict_normal, evict_first"},
                        Case{"prefer_instruction", "wgmma", "accepted are tma, cp_async, sync"},
                        Case{"loop_layout", "8by32", "expected ROWSxCOLS"},
                        Case{"loop_layout", "64x64", "ROWS*COLS <= 1024"},
                        Case{"fallback", "sometimes", "accepted are error, auto"},
                        Case{"swizzle", "128B", "unknown copy annotation 'swizzle'"}}) {
    Hints hints;
    hints.annotations[c.key] = c.value;
    auto resolved = ResolveHints(hints, HintScope{"copy", {}});
    ASSERT_FALSE(resolved.ok()) << c.key << "=" << c.value;
    EXPECT_EQ(resolved.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(resolved.status().message(), HasSubstr(c.expected));
  }
  Hints width;
  width.coalesced_width = 32;
  EXPECT_FALSE(ResolveHints(width, HintScope{"copy", {}}).ok());
}

TEST(HintsTest, OperandPoliciesAreTheOperatorsOwnKeys) {
  const HintScope im2col{"im2col", {"img", "col"}};
  Hints hints;
  hints.eviction_policy = EvictionPolicy::kEvictNormal;
  hints.annotations = {{"img_eviction_policy", "evict_last"}};
  auto resolved = ResolveHints(hints, im2col);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(resolved->EvictionFor("img"), EvictionPolicy::kEvictLast);
  EXPECT_EQ(resolved->EvictionFor("col"), EvictionPolicy::kEvictNormal);
  EXPECT_EQ(HintsToString(*resolved), "eviction_policy=evict_normal,img_eviction_policy=evict_last");
  // The same policy as eviction_policy is not repeated.
  hints.annotations["col_eviction_policy"] = "evict_normal";
  EXPECT_EQ(HintsToString(*ResolveHints(hints, im2col)),
            "eviction_policy=evict_normal,img_eviction_policy=evict_last");
  // Another operator does not know them, and says which keys it does.
  auto copy = ResolveHints(hints, HintScope{"copy", {}});
  EXPECT_THAT(copy.status().message(),
              HasSubstr("unknown copy annotation 'col_eviction_policy': accepted keys are "
                        "coalesced_width, disable_tma, eviction_policy, prefer_instruction, "
                        "loop_layout, fallback"));
  hints.annotations = {{"col_eviction_policy", "evict_never"}};
  EXPECT_THAT(ResolveHints(hints, im2col).status().message(),
              HasSubstr("unknown eviction_policy 'evict_never'"));
}

TEST(HintsTest, OperatorChoicesTakeOnlyTheirValues) {
  HintScope scope{"im2col", {"img", "col"}};
  scope.choices = {{"img_prefetch", {"ahead", "all"}}};
  Hints hints;
  hints.annotations = {{"img_prefetch", "all"}, {"img_eviction_policy", "evict_last"}};
  auto resolved = ResolveHints(hints, scope);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(resolved->choices.at("img_prefetch"), "all");
  EXPECT_EQ(HintsToString(*resolved), "img_eviction_policy=evict_last,img_prefetch=all");
  hints.annotations = {{"img_prefetch", "everything"}};
  EXPECT_THAT(ResolveHints(hints, scope).status().message(),
              HasSubstr("invalid im2col img_prefetch 'everything': accepted are ahead, all"));
  // Another operator does not know the key, and lists the ones it does.
  EXPECT_THAT(ResolveHints(hints, HintScope{"copy", {}}).status().message(),
              HasSubstr("unknown copy annotation 'img_prefetch'"));
  hints.annotations = {{"img_prefetc", "all"}};
  EXPECT_THAT(ResolveHints(hints, scope).status().message(),
              HasSubstr("accepted keys are coalesced_width, disable_tma, eviction_policy, "
                        "prefer_instruction, loop_layout, fallback, img_eviction_policy, "
                        "col_eviction_policy, img_prefetch"));
}

TEST(HintsTest, MergeLetsTheCallersHintsWin) {
  Hints tuned;
  tuned.prefer_instruction = Instruction::kSync;
  tuned.coalesced_width = 4;
  tuned.annotations = {{"img_eviction_policy", "evict_last"}, {"fallback", "auto"}};
  Hints mine;
  mine.prefer_instruction = Instruction::kTma;
  mine.annotations = {{"fallback", "error"}};
  Hints merged = MergeHints(tuned, mine);
  EXPECT_EQ(merged.prefer_instruction, Instruction::kTma);
  EXPECT_EQ(merged.coalesced_width, 4);
  EXPECT_EQ(merged.annotations.at("fallback"), "error");
  EXPECT_EQ(merged.annotations.at("img_eviction_policy"), "evict_last");
}

TEST(HintsTest, KeysTellEveryHintApart) {
  auto key = [](const Hints& hints) {
    std::string k;
    AppendHintsKey(hints, k);
    return k;
  };
  const Hints base;
  std::vector<Hints> variants(8, base);
  variants[0].coalesced_width = 4;
  variants[1].disable_tma = true;
  variants[2].eviction_policy = EvictionPolicy::kEvictFirst;
  variants[3].prefer_instruction = Instruction::kSync;
  variants[4].loop_layout = LoopLayout{8, 32};
  variants[5].annotations["a"] = "bc";
  variants[6].annotations["ab"] = "c";
  variants[7].loop_layout = LoopLayout{32, 8};
  std::set<std::string> keys = {key(base)};
  for (const Hints& h : variants) keys.insert(key(h));
  EXPECT_EQ(keys.size(), variants.size() + 1);
}

}  // namespace
}  // namespace tiletune

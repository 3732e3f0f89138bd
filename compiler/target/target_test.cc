#include "compiler/target/target.h"

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace {

using ::testing::HasSubstr;

TEST(TargetTest, ParsesEverySpelling) {
  for (const char* text : {"sm_90a", "cuda -arch=sm_90a", "cuda --arch=sm_90a", "cuda",
                           "  sm_90a "}) {
    auto target = Target::Parse(text);
    ASSERT_TRUE(target.ok()) << text << ": " << target.status();
    EXPECT_EQ(target->ArchName(), "sm_90a");
    EXPECT_EQ(target->ToString(), "cuda -arch=sm_90a");
    EXPECT_EQ(target->kind(), "cuda");
  }
}

TEST(TargetTest, CapabilitiesFollowTheArchitecture) {
  struct Case {
    const char* arch;
    bool cp_async, l2_hints, tma;
  };
  for (const Case& c : {Case{"sm_70", false, false, false}, Case{"sm_75", false, false, false},
                        Case{"sm_80", true, true, false}, Case{"sm_86", true, true, false},
                        Case{"sm_89", true, true, false}, Case{"sm_90", true, true, true},
                        Case{"sm_90a", true, true, true}, Case{"sm_100a", true, true, true}}) {
    auto target = Target::Parse(c.arch);
    ASSERT_TRUE(target.ok());
    EXPECT_EQ(target->HasCpAsync(), c.cp_async) << c.arch;
    EXPECT_EQ(target->HasL2CacheHints(), c.l2_hints) << c.arch;
    EXPECT_EQ(target->HasTma(), c.tma) << c.arch;
    EXPECT_EQ(target->ArchName(), c.arch);
  }
  EXPECT_EQ(Target::Parse("sm_90a")->MaxSharedBytesPerBlock(), 227 * 1024);
  EXPECT_EQ(Target::Parse("sm_86")->MaxSharedBytesPerBlock(), 99 * 1024);
  EXPECT_EQ(Target::Parse("sm_90a")->MinL2Bytes(), int64_t{50} * 1000 * 1000);
  EXPECT_EQ(Target::Parse("sm_86")->MinL2Bytes(), 0);
}

TEST(TargetTest, RejectsUnknownTargetsNamingAcceptedOnes) {
  for (const char* text : {"", "sm_91", "sm90", "rocm -arch=gfx90a", "cuda -arch=", "sm_90b",
                           "cuda sm_90"}) {
    auto target = Target::Parse(text);
    ASSERT_FALSE(target.ok()) << text;
    EXPECT_EQ(target.status().code(), absl::StatusCode::kInvalidArgument);
  }
  EXPECT_THAT(Target::Parse("sm_91").status().message(), HasSubstr("sm_70, sm_75"));
}

}  // namespace
}  // namespace tiletune

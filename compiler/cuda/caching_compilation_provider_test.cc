#include "compiler/cuda/caching_compilation_provider.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace {

// Compiles by decorating the source, and counts its calls.
class CountingProvider : public CompilationProvider {
 public:
  explicit CountingProvider(std::atomic<int>* calls) : calls_(calls) {}
  std::string Name() const override { return "counting-1.0"; }
  absl::StatusOr<Ptx> CompileToPtx(const CudaSource& source,
                                   const CompileOptions& options) override {
    ++*calls_;
    if (source.text == "bad") return absl::InvalidArgumentError("does not compile");
    return Ptx{absl::StrCat("ptx(", options.arch, ":", source.text, ")"), options.arch, "warn"};
  }
  absl::StatusOr<Cubin> CompileToCubin(const CudaSource& source,
                                       const CompileOptions& options) override {
    ++*calls_;
    return Cubin{absl::StrCat(std::string("\0\1", 2), source.text), options.arch, ""};
  }

 private:
  std::atomic<int>* calls_;
};

class CachingCompilationProviderTest : public ::testing::Test {
 protected:
  std::unique_ptr<CachingCompilationProvider> Make(bool disk) {
    CachingCompilationProvider::Options options;
    options.inner = std::make_unique<CountingProvider>(&calls_);
    if (disk) options.disk_directory = dir_;
    auto provider = CachingCompilationProvider::Create(std::move(options));
    EXPECT_TRUE(provider.ok()) << provider.status();
    return *std::move(provider);
  }
  std::string EntryFile(CachingCompilationProvider& p, absl::string_view kind,
                        const CudaSource& source, const CompileOptions& options) {
    return absl::StrCat(dir_, "/", p.Key(kind, source, options), ".entry");
  }

  std::atomic<int> calls_{0};
  std::string dir_ = absl::StrCat(::testing::TempDir(), "/cache_", getpid(), "_",
                                  ::testing::UnitTest::GetInstance()->current_test_info()->name(),
                                  "/nested");
};

// Issue 17: a cache folder that is a file turned caching off with no word.
TEST_F(CachingCompilationProviderTest, ACacheFolderThatIsAFileIsAnError) {
  const std::string file = absl::StrCat(::testing::TempDir(), "/cache_file_", getpid());
  ASSERT_TRUE(std::ofstream(file).good());
  CachingCompilationProvider::Options options;
  options.inner = std::make_unique<CountingProvider>(&calls_);
  options.disk_directory = file;
  auto provider = CachingCompilationProvider::Create(std::move(options));
  ASSERT_FALSE(provider.ok());
  EXPECT_THAT(std::string(provider.status().message()),
              ::testing::HasSubstr("cache folder " + file + " exists and is not a folder"));
}

TEST_F(CachingCompilationProviderTest, NamesItselfAndTheCompilerItWraps) {
  auto cache = Make(/*disk=*/false);
  EXPECT_EQ(cache->Name(), "cached-counting-1.0");
  EXPECT_EQ(cache->CompilerName(), "counting-1.0");  // what databases record
}

TEST_F(CachingCompilationProviderTest, MemoryHitSkipsTheCompiler) {
  auto cache = Make(/*disk=*/false);
  CompileOptions options;
  for (int i = 0; i < 3; ++i) {
    auto ptx = cache->CompileToPtx({"k", "src"}, options);
    ASSERT_TRUE(ptx.ok());
    EXPECT_EQ(ptx->text, "ptx(sm_90a:src)");
    EXPECT_EQ(ptx->log, "warn");
  }
  EXPECT_EQ(calls_, 1);
  EXPECT_EQ(cache->stats().memory_hits, 2);
  EXPECT_EQ(cache->stats().misses, 1);
}

TEST_F(CachingCompilationProviderTest, KeySeparatesArchOptionsSourceAndKind) {
  auto cache = Make(false);
  CompileOptions a, b, c;
  b.arch = "sm_80";
  c.extra_flags = {"-G"};
  std::string base = cache->Key("ptx", {"k", "src"}, a);
  EXPECT_NE(base, cache->Key("ptx", {"k", "src"}, b));
  EXPECT_NE(base, cache->Key("ptx", {"k", "src"}, c));
  EXPECT_NE(base, cache->Key("ptx", {"k", "src2"}, a));
  EXPECT_NE(base, cache->Key("cubin", {"k", "src"}, a));
  EXPECT_EQ(base, cache->Key("ptx", {"other_name", "src"}, a));
  EXPECT_EQ(base.size(), 64u);
}

TEST_F(CachingCompilationProviderTest, DiskEntriesSurviveANewProvider) {
  CompileOptions options;
  {
    auto cache = Make(true);
    ASSERT_TRUE(cache->CompileToCubin({"k", "src"}, options).ok());
  }
  auto cache = Make(true);
  auto cubin = cache->CompileToCubin({"k", "src"}, options);
  ASSERT_TRUE(cubin.ok());
  EXPECT_EQ(cubin->bytes, absl::StrCat(std::string("\0\1", 2), "src"));
  EXPECT_EQ(calls_, 1);
  EXPECT_EQ(cache->stats().disk_hits, 1);
}

TEST_F(CachingCompilationProviderTest, CorruptOrTruncatedEntriesAreRecompiled) {
  CompileOptions options;
  CudaSource source{"k", "src"};
  {
    auto cache = Make(true);
    ASSERT_TRUE(cache->CompileToPtx(source, options).ok());
  }
  auto damage = [&](auto edit) {
    auto cache = Make(true);
    std::string path = EntryFile(*cache, "ptx", source, options);
    std::ifstream in(path, std::ios::binary);
    std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    in.close();
    edit(data);
    std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
    int before = calls_;
    auto ptx = cache->CompileToPtx(source, options);
    ASSERT_TRUE(ptx.ok());
    EXPECT_EQ(ptx->text, "ptx(sm_90a:src)");
    EXPECT_EQ(calls_, before + 1);
    EXPECT_EQ(cache->stats().corrupt_entries, 1);
  };
  damage([](std::string& d) { d[d.size() - 6] ^= 0x20; });     // Flipped payload bit.
  damage([](std::string& d) { d.resize(d.size() - 3); });      // Truncated.
  damage([](std::string& d) { d = "garbage"; });               // Not an entry at all.
  damage([](std::string& d) { d.replace(d.find("key ") + 4, 1, "z"); });  // Wrong key.
  // The rewritten entry is good again.
  auto cache = Make(true);
  int before = calls_;
  ASSERT_TRUE(cache->CompileToPtx(source, options).ok());
  EXPECT_EQ(calls_, before);
}

TEST_F(CachingCompilationProviderTest, ErrorsAreNotCached) {
  auto cache = Make(true);
  EXPECT_FALSE(cache->CompileToPtx({"k", "bad"}, CompileOptions{}).ok());
  EXPECT_FALSE(cache->CompileToPtx({"k", "bad"}, CompileOptions{}).ok());
  EXPECT_EQ(calls_, 2);
}

TEST_F(CachingCompilationProviderTest, ConcurrentCompilesAgree) {
  auto cache = Make(true);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        CudaSource source{"k", absl::StrCat("src", i % 5)};
        auto ptx = cache->CompileToPtx(source, CompileOptions{});
        if (!ptx.ok() || ptx->text != absl::StrCat("ptx(sm_90a:src", i % 5, ")")) ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures, 0);
  auto stats = cache->stats();
  EXPECT_EQ(stats.memory_hits + stats.disk_hits + stats.misses, 400);
  EXPECT_EQ(stats.write_failures, 0);
}

TEST(CachingCompilationProviderCreateTest, NeedsAnInnerProvider) {
  EXPECT_EQ(CachingCompilationProvider::Create({}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tiletune

#include "compiler/cuda/caching_compilation_provider.h"

#include <sys/stat.h>
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
#include "compiler/base/sha256.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace {

// What the fake compiler makes of `text`: PTX for `arch` that names the source.
std::string FakePtx(const std::string& arch, const std::string& text) {
  return absl::StrCat("//\n.version 9.0\n.target ", arch, "\n// ptx(", arch, ":", text, ")\n");
}

// A 64-bit ELF header for CUDA (EM_CUDA, ABI version 8, the SM in flags bits 8-15), then
// `text`.
std::string FakeCubin(int sm, const std::string& text) {
  std::string header(64, '\0');
  header.replace(0, 4, "\x7f" "ELF");
  header[4] = 2;
  header[8] = 8;
  header[18] = static_cast<char>(190);
  header[49] = static_cast<char>(sm);
  return header + text;
}

// Compiles by decorating the source, and counts its calls.
class CountingProvider : public CompilationProvider {
 public:
  explicit CountingProvider(std::atomic<int>* calls, std::string name = "counting-1.0")
      : calls_(calls), name_(std::move(name)) {}
  std::string Name() const override { return name_; }
  absl::StatusOr<Ptx> CompileToPtx(const CudaSource& source,
                                   const CompileOptions& options) override {
    ++*calls_;
    if (source.text == "bad") return absl::InvalidArgumentError("does not compile");
    return Ptx{FakePtx(options.arch, source.text), options.arch, "warn"};
  }
  absl::StatusOr<Cubin> CompileToCubin(const CudaSource& source,
                                       const CompileOptions& options) override {
    ++*calls_;
    return Cubin{FakeCubin(options.arch == "sm_80" ? 80 : 90, source.text), options.arch, ""};
  }

 private:
  std::atomic<int>* calls_;
  std::string name_;
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

// Issue 34: the key viewed the compiler's name through a temporary, so a name longer than
// the short-string buffer ("nvrtc-13.0+lineinfo") was read after it was freed, and under
// compute-sanitizer the allocator handed that memory to the key itself.
TEST_F(CachingCompilationProviderTest, TheKeyHashesEveryFieldLengthPrefixed) {
  const std::string name = "a-compiler-name-well-past-the-short-string-buffer+lineinfo";
  CachingCompilationProvider::Options options;
  options.inner = std::make_unique<CountingProvider>(&calls_, name);
  auto cache = *CachingCompilationProvider::Create(std::move(options));
  CompileOptions compile;
  compile.arch = "sm_90";
  compile.extra_flags = {"-DX=1"};
  const std::string expected =
      Sha256Hex(absl::StrCat("3:ptx;5:sm_90;1:0;", name.size(), ":", name, ";3:src;5:-DX=1;"));
  EXPECT_EQ(cache->Key("ptx", {"k", "src"}, compile), expected);
}

// Issue 17: a cache folder that is a file turned caching off with no word. Now it costs
// the disk cache, with a reason, never the compile.
TEST_F(CachingCompilationProviderTest, ACacheFolderThatIsAFileTurnsTheDiskCacheOffSaying) {
  const std::string file = absl::StrCat(::testing::TempDir(), "/cache_file_", getpid());
  ASSERT_TRUE(std::ofstream(file).good());
  CachingCompilationProvider::Options options;
  options.inner = std::make_unique<CountingProvider>(&calls_);
  options.disk_directory = file;
  options.quiet = true;
  auto provider = CachingCompilationProvider::Create(std::move(options));
  ASSERT_TRUE(provider.ok()) << provider.status();
  EXPECT_THAT(std::string((*provider)->disk_status().message()),
              ::testing::HasSubstr("cache folder " + file + " exists and is not a folder"));
  EXPECT_TRUE((*provider)->CompileToPtx({"k", "src"}, CompileOptions{}).ok());
}

// Issue 34: a world-writable cache folder owned by another user could hold planted
// kernels.
TEST_F(CachingCompilationProviderTest, AWorldWritableFolderOfAnotherUserIsNotTrusted) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give a folder to another user";
  ASSERT_TRUE(Make(true) != nullptr);  // Creates dir_.
  ASSERT_EQ(chown(dir_.c_str(), 12345, 12345), 0);
  ASSERT_EQ(chmod(dir_.c_str(), 0777), 0);
  CachingCompilationProvider::Options options;
  options.inner = std::make_unique<CountingProvider>(&calls_);
  options.disk_directory = dir_;
  options.quiet = true;
  auto cache = *CachingCompilationProvider::Create(std::move(options));
  EXPECT_THAT(std::string(cache->disk_status().message()),
              ::testing::HasSubstr("writable by everyone and owned by user 12345"));
  ASSERT_TRUE(cache->CompileToPtx({"k", "src"}, CompileOptions{}).ok());
  EXPECT_EQ(cache->stats().disk_hits + cache->stats().write_failures, 0);
  // The same folder owned by this user, or not world-writable, is used.
  ASSERT_EQ(chmod(dir_.c_str(), 0755), 0);
  EXPECT_TRUE(Make(true)->disk_status().ok());
}

// Issue 34: a FIFO entry hung the run, a link to /dev/zero aborted it, a 3 GB entry cost
// 6 GB of memory, and a garbage payload with the right size and hash was loaded. Each is
// skipped and recompiled now.
TEST_F(CachingCompilationProviderTest, EntriesThatAreNotWhatTheyClaimAreRecompiled) {
  CudaSource source{"k", "src"};
  CompileOptions options;
  auto cache = Make(true);
  const std::string ptx_path = EntryFile(*cache, "ptx", source, options);
  const std::string cubin_path = EntryFile(*cache, "cubin", source, options);
  auto fresh = [&](auto plant) {
    std::remove(ptx_path.c_str());
    std::remove(cubin_path.c_str());
    plant();
    auto again = Make(true);
    const int before = calls_;
    auto ptx = again->CompileToPtx(source, options);
    auto cubin = again->CompileToCubin(source, options);
    EXPECT_TRUE(ptx.ok() && cubin.ok());
    EXPECT_EQ(calls_, before + 2);
    EXPECT_EQ(again->stats().corrupt_entries, 2);
    EXPECT_EQ(ptx->text, FakePtx("sm_90a", "src"));
  };
  fresh([&] {
    ASSERT_EQ(mkfifo(ptx_path.c_str(), 0600), 0);
    ASSERT_EQ(mkfifo(cubin_path.c_str(), 0600), 0);
  });
  fresh([&] {
    ASSERT_EQ(symlink("/dev/zero", ptx_path.c_str()), 0);
    ASSERT_EQ(symlink("/dev/zero", cubin_path.c_str()), 0);
  });
  fresh([&] {  // Sparse: 3 GB that costs no disk, and must cost no memory.
    for (const std::string& path : {ptx_path, cubin_path}) {
      ASSERT_TRUE(std::ofstream(path).good());
      ASSERT_EQ(truncate(path.c_str(), int64_t{3} << 30), 0);
    }
  });
  // Well-formed entries (right key, sizes and hash) whose payloads are not a CUBIN of
  // sm_90 or PTX for it.
  auto entry = [&](const std::string& kind, const std::string& payload) {
    std::string data = absl::StrCat("tiletune-kernel-cache v1\nkey ", cache->Key(kind, source, options),
                                    "\npayload ", payload.size(), "\nlog 0\nsha256 ",
                                    Sha256Hex(payload), "\n\n", payload);
    std::ofstream(kind == "ptx" ? ptx_path : cubin_path, std::ios::binary) << data;
  };
  fresh([&] {
    entry("ptx", "garbage that hashes right");
    entry("cubin", "garbage that hashes right");
  });
  fresh([&] {
    entry("ptx", FakePtx("sm_80", "src"));
    entry("cubin", FakeCubin(80, "src"));
  });
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
    EXPECT_EQ(ptx->text, FakePtx("sm_90a", "src"));
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
  EXPECT_EQ(cubin->bytes, FakeCubin(90, "src"));
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
    EXPECT_EQ(ptx->text, FakePtx("sm_90a", "src"));
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
        if (!ptx.ok() || ptx->text != FakePtx("sm_90a", absl::StrCat("src", i % 5))) ++failures;
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

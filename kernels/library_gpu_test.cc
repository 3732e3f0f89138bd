// The tuned kernel is what users get: a hand-written database makes the library launch a
// different variant than its heuristic would, and that variant's output is bit-exact.
#include "kernels/library.h"

#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <set>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "compiler/ops/builtin_ops.h"
#include "compiler/ops/col2im/col2im_op.h"
#include "compiler/ops/col2im/col2im_reference.h"
#include "compiler/ops/copy/copy_op.h"
#include "compiler/ops/im2col/im2col_op.h"
#include "compiler/ops/im2col/im2col_reference.h"
#include "compiler/tuning_db/tuning_db.h"
#include "kernels/runtime/driver_api.h"
#include "kernels/runtime/gpu_test_util.h"

namespace tiletune {
namespace {

using ::testing::HasSubstr;

CopyOp Op(int64_t rows, int64_t cols) {
  Buffer src = Buffer::RowMajor("src", DataType::kF16, Scope::kGlobal, {rows, cols});
  Buffer dst = Buffer::RowMajor("dst", DataType::kF16, Scope::kGlobal, {rows, cols});
  return CopyOp{Region::Whole(src), Region::Whole(dst)};
}

// A database with one record, for this device, choosing a TMA variant.
constexpr char kDatabase[] = R"pb(
schema_version: 1
records {
  device { name: "$NAME" cc_major: $MAJOR cc_minor: $MINOR }
  problem {
    op: "copy"
    dtype: "f16"
    shape: [ 1000, 768 ]
    src_strides: [ 768, 1 ]
    dst_strides: [ 768, 1 ]
    src_offset: [ 0, 0 ]
    dst_offset: [ 0, 0 ]
  }
  winner {
    hints { prefer_instruction: "tma" eviction_policy: "evict_first" }
    lowering { path: "tma" tile: [ 32, 128 ] threads: 32 stages: 3 ctas_per_sm: 2 through_shared: true }
  }
  winner_statistics { median_us: 5 sample_count: 9 }
}
record_count: 1
)pb";

class LibraryGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TT_SKIP_WITHOUT_GPU(context_);
    TT_SKIP_UNLESS(context_->info().cc_major >= 9, "the database's TMA variant needs sm_90");
  }

  std::string WriteDatabase() {
    std::string path = absl::StrCat(::testing::TempDir(), "/hand_written.txtpb");
    std::ofstream(path) << absl::StrReplaceAll(
        kDatabase, {{"$NAME", context_->info().name},
                    {"$MAJOR", absl::StrCat(context_->info().cc_major)},
                    {"$MINOR", absl::StrCat(context_->info().cc_minor)}});
    return path;
  }

  // Copies op through the library on fresh random data and checks every byte.
  void CheckCopy(Library& library, const CopyOp& op, std::mt19937_64& rng) {
    size_t bytes = SpanBytes(op.src.buffer);
    std::vector<uint8_t> host(bytes);
    for (auto& b : host) b = static_cast<uint8_t>(rng());
    auto src = DeviceBuffer::Allocate(*context_, bytes);
    auto dst = DeviceBuffer::Allocate(*context_, bytes);
    ASSERT_TRUE(src.ok() && dst.ok());
    ASSERT_TRUE(src->CopyFromHost(host.data(), bytes).ok());
    ASSERT_TRUE(dst->Fill(0xEE).ok());
    ASSERT_TRUE(context_->Activate().ok());
    absl::Status copied = library.Launch(op, src->ptr(), dst->ptr(), nullptr);
    ASSERT_TRUE(copied.ok()) << copied;
    ASSERT_TRUE(context_->Synchronize().ok());
    std::vector<uint8_t> out(bytes);
    ASSERT_TRUE(dst->CopyToHost(out.data(), bytes).ok());
    ASSERT_TRUE(out == host) << "library copy is not bit-exact";
  }

  // Launches the copy `op` (through CheckCopy: bit-exact every time) until a launch has
  // measured its tuning on a miss; Inspect's answer then.
  absl::StatusOr<LaunchInfo> LaunchUntilTuned(Library& library, const CopyOp& op,
                                              std::mt19937_64& rng) {
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<LaunchInfo> info = library.Inspect(op);
    while (info.ok() && info->tuning_pending) {
      if (std::chrono::steady_clock::now() - start > std::chrono::minutes(2)) {
        return absl::DeadlineExceededError("tuning on a miss still pending after 2 minutes");
      }
      CheckCopy(library, op, rng);
      if (::testing::Test::HasFatalFailure()) return absl::InternalError("the copy failed");
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      info = library.Inspect(op);
    }
    return info;
  }

  std::unique_ptr<Context> context_;
};

TEST_F(LibraryGpuTest, HandWrittenDatabaseChangesTheLaunchedVariant) {
  std::mt19937_64 rng(std::random_device{}());
  LibraryOptions plain_options;
  plain_options.builtin = false;
  plain_options.user_directory = "";
  auto plain = Library::Create(plain_options);
  ASSERT_TRUE(plain.ok());
  auto heuristic = (*plain)->Inspect(Op(1000, 768));
  ASSERT_TRUE(heuristic.ok()) << heuristic.status();
  EXPECT_EQ(heuristic->level, ResolutionLevel::kHeuristic);
  EXPECT_EQ(heuristic->path, "sync_simt");
  CheckCopy(**plain, Op(1000, 768), rng);

  LibraryOptions options;
  options.databases = {WriteDatabase()};
  options.builtin = false;
  options.user_directory = "";
  options.verbosity = 1;
  auto tuned = Library::Create(options);
  ASSERT_TRUE(tuned.ok());
  ASSERT_TRUE((*tuned)->database_status().ok()) << (*tuned)->database_status();
  auto info = (*tuned)->Inspect(Op(1000, 768));
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->level, ResolutionLevel::kExact);
  EXPECT_EQ(info->path, "tma");
  EXPECT_EQ(info->kernel_name, "tt_copy_tma");  // The loaded function's own name.
  EXPECT_EQ(info->launch.tile, (std::vector<int64_t>{32, 128}));
  EXPECT_EQ(info->launch.stages, 3);
  CheckCopy(**tuned, Op(1000, 768), rng);

  // A nearby problem resolves at the next level, still through the record's variant.
  auto near = (*tuned)->Inspect(Op(1024, 1024));
  ASSERT_TRUE(near.ok());
  EXPECT_EQ(near->level, ResolutionLevel::kNearest);
  EXPECT_EQ(near->path, "tma");
  CheckCopy(**tuned, Op(1024, 1024), rng);
}

// Tuning on a miss: the first call of an unseen problem launches the nearest record's
// kernel at once (bit-exact) while the candidates compile; a later call measures verified
// variants, uses the fastest (bit-exact), appends it to the user's database, and the next
// library finds it exact there.
TEST_F(LibraryGpuTest, TuneOnMissMeasuresOnALaterCallSavesAndIsExactNextTime) {
  std::mt19937_64 rng(std::random_device{}());
  const std::string saved = absl::StrCat(::testing::TempDir(), "/tuned_on_miss.txtpb");
  std::remove(saved.c_str());
  LibraryOptions options;
  options.tune_on_miss_ms = 50;
  options.tune_on_miss_database = saved;
  options.verbosity = 1;
  auto library = Library::Create(options);
  ASSERT_TRUE(library.ok()) << library.status();
  const CopyOp op = Op(3001, 997);
  auto first = (*library)->Inspect(op);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(first->tuning_pending);
  EXPECT_FALSE(first->tuned_on_miss);
  EXPECT_NE(first->level, ResolutionLevel::kExact);
  // Inspect never measures; launches do, once the candidates are in.
  auto info = LaunchUntilTuned(**library, op, rng);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_TRUE(info->tuned_on_miss);
  EXPECT_FALSE(info->tuning_pending);
  EXPECT_THAT(info->resolution_detail, HasSubstr("tuned on a miss"));
  EXPECT_EQ(info->first_call_ms, first->first_call_ms);
  EXPECT_GT(info->tuning_ms, 0);
  std::printf("tune on miss, copy f16 [3001, 997]: first call %.1f ms, measuring call %.1f ms: "
              "%s\n",
              info->first_call_ms, info->tuning_ms, info->resolution_detail.c_str());
  CheckCopy(**library, op, rng);
  auto db = tuning::ReadTuningDatabase(saved);
  ASSERT_TRUE(db.ok()) << db.status();
  ASSERT_EQ(db->records_size(), 1);
  EXPECT_EQ(db->records(0).device().name(), context_->info().name);

  auto next = Library::Create(options);
  ASSERT_TRUE(next.ok()) << next.status();
  auto again = (*next)->Inspect(op);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->level, ResolutionLevel::kExact) << again->resolution_detail;
  EXPECT_FALSE(again->tuned_on_miss);
  EXPECT_FALSE(again->tuning_pending);
  EXPECT_EQ(again->kernel_name, info->kernel_name);
  EXPECT_EQ(again->launch.tile, info->launch.tile);
  CheckCopy(**next, op, rng);

  // An im2col miss too (its variants verified inside; Inspect reports them).
  Im2colGeometry g;
  g.n = 3;
  g.h = 19;
  g.w = 23;
  g.c = 40;
  g.kh = 3;
  g.kw = 5;
  g.sh = 1;
  g.sw = 2;
  g.ph = 1;
  g.pw = 2;
  const Im2colOp conv_op = Im2colOp::Dense(DataType::kF16, g);
  auto conv = (*library)->Inspect(conv_op);
  ASSERT_TRUE(conv.ok()) << conv.status();
  EXPECT_TRUE(conv->tuning_pending);
  {
    const OperandSizes sizes = (*BuiltinTileOps().For(conv_op))->Sizes(conv_op);
    auto image = DeviceBuffer::Allocate(*context_, sizes.input_bytes);
    auto cols = DeviceBuffer::Allocate(*context_, sizes.output_bytes);
    ASSERT_TRUE(image.ok() && cols.ok());
    ASSERT_TRUE(image->Fill(0).ok());
    const auto start = std::chrono::steady_clock::now();
    while (conv->tuning_pending &&
           std::chrono::steady_clock::now() - start < std::chrono::minutes(2)) {
      ASSERT_TRUE((*library)->Launch(conv_op, image->ptr(), cols->ptr(), nullptr).ok());
      ASSERT_TRUE(context_->Synchronize().ok());
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      conv = (*library)->Inspect(conv_op);
      ASSERT_TRUE(conv.ok()) << conv.status();
    }
  }
  EXPECT_TRUE(conv->tuned_on_miss);
  std::printf(
      "tune on miss, im2col f16 N3 C40 19x23 k3x5 s1x2 p1x2: first call %.1f ms, "
      "measuring call %.1f ms\n",
      conv->first_call_ms, conv->tuning_ms);
  auto both = tuning::ReadTuningDatabase(saved);
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(both->records_size(), 2);
}

// A launch on a stream that is capturing a CUDA graph never measures (synchronizing would
// break the capture): the kernel running meanwhile is captured, and the graph replays it
// bit-exact, before the tuning and after a later launch has swapped the winner in (the
// replaced kernel stays loaded).
TEST_F(LibraryGpuTest, TuneOnMissNeverMeasuresInAGraphCaptureAndTheGraphOutlivesTheSwap) {
  // The graph calls come straight from the driver library the runtime loaded.
  auto driver = LoadDriver();
  ASSERT_TRUE(driver.ok()) << driver.status();
  void* handle = dlopen((*driver)->library_path.c_str(), RTLD_NOW);
  ASSERT_NE(handle, nullptr) << dlerror();
  auto begin = reinterpret_cast<CUresult (*)(CUstream, CUstreamCaptureMode)>(
      dlsym(handle, "cuStreamBeginCapture_v2"));
  auto end =
      reinterpret_cast<CUresult (*)(CUstream, CUgraph*)>(dlsym(handle, "cuStreamEndCapture"));
  auto instantiate = reinterpret_cast<CUresult (*)(CUgraphExec*, CUgraph, unsigned long long)>(
      dlsym(handle, "cuGraphInstantiateWithFlags"));
  auto launch =
      reinterpret_cast<CUresult (*)(CUgraphExec, CUstream)>(dlsym(handle, "cuGraphLaunch"));
  auto destroy_exec =
      reinterpret_cast<CUresult (*)(CUgraphExec)>(dlsym(handle, "cuGraphExecDestroy"));
  auto destroy = reinterpret_cast<CUresult (*)(CUgraph)>(dlsym(handle, "cuGraphDestroy"));
  ASSERT_TRUE(begin && end && instantiate && launch && destroy_exec && destroy);

  LibraryOptions options;
  options.tune_on_miss_ms = 20;
  options.tune_on_miss_database = absl::StrCat(::testing::TempDir(), "/captured.txtpb");
  std::remove(options.tune_on_miss_database.c_str());
  auto library = Library::Create(options);
  ASSERT_TRUE(library.ok()) << library.status();
  const CopyOp op = Op(2999, 1001);
  auto first = (*library)->Inspect(op);  // The kernel that runs meanwhile; compiles start.
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(first->tuning_pending);
  const auto start = std::chrono::steady_clock::now();
  while (!first->tuning_ready &&
         std::chrono::steady_clock::now() - start < std::chrono::minutes(2)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    first = (*library)->Inspect(op);  // Never measures.
    ASSERT_TRUE(first.ok()) << first.status();
  }
  ASSERT_TRUE(first->tuning_ready);
  ASSERT_TRUE(first->tuning_pending);

  const size_t bytes = SpanBytes(op.src.buffer);
  std::mt19937_64 rng(std::random_device{}());
  auto src = DeviceBuffer::Allocate(*context_, bytes);
  auto dst = DeviceBuffer::Allocate(*context_, bytes);
  ASSERT_TRUE(src.ok() && dst.ok());
  auto stream = Stream::Create(*context_);
  ASSERT_TRUE(stream.ok());
  ASSERT_TRUE(context_->Activate().ok());
  ASSERT_EQ(begin((*stream)->get(), CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  absl::Status launched = (*library)->Launch(op, src->ptr(), dst->ptr(), (*stream)->get());
  CUgraph graph = nullptr;
  ASSERT_EQ(end((*stream)->get(), &graph), CUDA_SUCCESS) << "the capture was broken";
  ASSERT_TRUE(launched.ok()) << launched;
  CUgraphExec exec = nullptr;
  ASSERT_EQ(instantiate(&exec, graph, 0), CUDA_SUCCESS);
  auto after = (*library)->Inspect(op);
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(after->tuning_pending) << "measured inside the capture";

  // Replays the graph on fresh data and checks every byte.
  auto replay = [&] {
    std::vector<uint8_t> host(bytes);
    for (auto& b : host) b = static_cast<uint8_t>(rng());
    ASSERT_TRUE(src->CopyFromHost(host.data(), bytes).ok());
    ASSERT_TRUE(dst->Fill(0xEE).ok());
    ASSERT_EQ(launch(exec, (*stream)->get()), CUDA_SUCCESS);
    ASSERT_TRUE((*stream)->Synchronize().ok());
    std::vector<uint8_t> out(bytes);
    ASSERT_TRUE(dst->CopyToHost(out.data(), bytes).ok());
    EXPECT_TRUE(out == host) << "the captured copy is not bit-exact";
  };
  replay();
  // Outside the capture, a launch measures and swaps the winner in.
  auto info = LaunchUntilTuned(**library, op, rng);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_TRUE(info->tuned_on_miss) << info->resolution_detail;
  replay();  // The graph still holds the first kernel, still loaded.
  EXPECT_EQ(destroy_exec(exec), CUDA_SUCCESS);
  EXPECT_EQ(destroy(graph), CUDA_SUCCESS);
}

// Slicing one buffer at 1000 offsets builds one kernel per alignment of the starts, not
// one per offset; every slice is bit-exact (checked at a sample), and a region outside its
// buffer is refused before anything launches.
TEST_F(LibraryGpuTest, OneKernelPerAlignmentAcrossAThousandOffsets) {
  LibraryOptions options;
  options.builtin = false;
  options.user_directory = "";
  auto library = Library::Create(options);
  ASSERT_TRUE(library.ok());
  constexpr int64_t kRows = 512, kCols = 1024, kSliceRows = 256, kSliceCols = 600;
  const Buffer src_buffer = Buffer::RowMajor("src", DataType::kF16, Scope::kGlobal, {kRows, kCols});
  const Buffer dst_buffer =
      Buffer::RowMajor("dst", DataType::kF16, Scope::kGlobal, {kSliceRows, kSliceCols});
  const size_t src_bytes = SpanBytes(src_buffer), dst_bytes = SpanBytes(dst_buffer);
  std::mt19937_64 rng(std::random_device{}());
  std::vector<uint8_t> host(src_bytes);
  for (auto& b : host) b = static_cast<uint8_t>(rng());
  auto src = DeviceBuffer::Allocate(*context_, src_bytes);
  auto dst = DeviceBuffer::Allocate(*context_, dst_bytes);
  ASSERT_TRUE(src.ok() && dst.ok());
  ASSERT_TRUE(src->CopyFromHost(host.data(), src_bytes).ok());
  ASSERT_TRUE(context_->Activate().ok());
  std::set<std::pair<int64_t, int64_t>> offsets;
  while (offsets.size() < 1000) {
    offsets.insert({static_cast<int64_t>(rng() % (kRows - kSliceRows + 1)),
                    static_cast<int64_t>(rng() % (kCols - kSliceCols + 1))});
  }
  int launched = 0;
  int64_t builds_after_100 = 0;
  for (const auto& [row, col] : offsets) {
    CopyOp op{Region::Box(src_buffer, {row, col}, {kSliceRows, kSliceCols}),
              Region::Whole(dst_buffer)};
    const bool check = launched % 97 == 0;
    if (check) {
      ASSERT_TRUE(dst->Fill(0xEE).ok());
    }
    absl::Status status = (*library)->Launch(op, src->ptr(), dst->ptr(), nullptr);
    ASSERT_TRUE(status.ok()) << status << " at offset " << row << ", " << col;
    if (check) {
      ASSERT_TRUE(context_->Synchronize().ok());
      std::vector<uint8_t> out(dst_bytes);
      ASSERT_TRUE(dst->CopyToHost(out.data(), dst_bytes).ok());
      for (int64_t r = 0; r < kSliceRows; ++r) {
        ASSERT_EQ(0, std::memcmp(out.data() + r * kSliceCols * 2,
                                 host.data() + ((row + r) * kCols + col) * 2, kSliceCols * 2))
            << "slice at " << row << ", " << col << ", row " << r;
      }
    }
    if (++launched == 100) builds_after_100 = (*library)->stats().builds;
  }
  ASSERT_TRUE(context_->Synchronize().ok());
  const LibraryStats stats = (*library)->stats();
  std::printf("1000 offsets: %lld kernels built (%lld after 100), %lld hits\n",
              static_cast<long long>(stats.builds), static_cast<long long>(builds_after_100),
              static_cast<long long>(stats.hits));
  // f16 starts fall in 8 alignment classes of 16 bytes at most.
  EXPECT_LE(stats.builds, 8);
  EXPECT_EQ(stats.builds, builds_after_100);
  EXPECT_EQ(stats.hits + stats.builds, 1000);
  // A slice past the buffer's end: refused, naming the region, nothing launched.
  CopyOp outside{Region::Box(src_buffer, {kRows - kSliceRows + 1, 0}, {kSliceRows, kSliceCols}),
                 Region::Whole(dst_buffer)};
  absl::Status refused = (*library)->Launch(outside, src->ptr(), dst->ptr(), nullptr);
  EXPECT_THAT(std::string(refused.message()), HasSubstr("leaves buffer src in dimension 0"));
  // Overlapping operands: refused too.
  CopyOp self{Region::Box(src_buffer, {0, 0}, {kSliceRows, kSliceCols}),
              Region::Box(src_buffer, {1, 0}, {kSliceRows, kSliceCols})};
  absl::Status overlap = (*library)->Launch(self, src->ptr(), src->ptr(), nullptr);
  EXPECT_THAT(std::string(overlap.message()), HasSubstr("overlaps dst"));
  ASSERT_TRUE(context_->Synchronize().ok());
}

TEST_F(LibraryGpuTest, KernelCacheEvictsTheLeastRecentlyUsed) {
  LibraryOptions options;
  options.builtin = false;
  options.user_directory = "";
  options.max_kernels = 2;
  auto library = Library::Create(options);
  ASSERT_TRUE(library.ok());
  std::mt19937_64 rng(std::random_device{}());
  CheckCopy(**library, Op(100, 64), rng);
  CheckCopy(**library, Op(200, 64), rng);
  CheckCopy(**library, Op(100, 64), rng);  // hit; 200 is now the least recent
  CheckCopy(**library, Op(300, 64), rng);  // evicts 200
  CheckCopy(**library, Op(100, 64), rng);  // still cached
  CheckCopy(**library, Op(200, 64), rng);  // rebuilt
  const LibraryStats stats = (*library)->stats();
  EXPECT_EQ(stats.builds, 4);
  EXPECT_EQ(stats.hits, 2);
  EXPECT_EQ(stats.evictions, 2);
  EXPECT_EQ(stats.cached, 2);
}

TEST_F(LibraryGpuTest, ConcurrentCallersShareOneCompiledKernel) {
  LibraryOptions options;
  options.databases = {WriteDatabase()};
  options.builtin = false;
  options.user_directory = "";
  auto library = Library::Create(options);
  ASSERT_TRUE(library.ok());
  CopyOp op = Op(1000, 768);
  size_t bytes = SpanBytes(op.src.buffer);
  auto src = DeviceBuffer::Allocate(*context_, bytes);
  ASSERT_TRUE(src.ok());
  std::vector<DeviceBuffer> dsts;
  for (int t = 0; t < 8; ++t) dsts.push_back(std::move(DeviceBuffer::Allocate(*context_, bytes)).value());
  std::vector<uint8_t> host(bytes);
  std::mt19937_64 rng(std::random_device{}());
  for (auto& b : host) b = static_cast<uint8_t>(rng());
  ASSERT_TRUE(src->CopyFromHost(host.data(), bytes).ok());
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      if (!context_->Activate().ok()) ++failures;
      for (int i = 0; i < 20; ++i) {
        if (!(*library)->Launch(op, src->ptr(), dsts[t].ptr(), nullptr).ok()) ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures, 0);
  ASSERT_TRUE(context_->Synchronize().ok());
  for (int t = 0; t < 8; ++t) {
    std::vector<uint8_t> out(bytes);
    ASSERT_TRUE(dsts[t].CopyToHost(out.data(), bytes).ok());
    EXPECT_TRUE(out == host) << "thread " << t;
  }
}

TEST_F(LibraryGpuTest, Im2colThroughTheLibraryIsBitExact) {
  LibraryOptions options;
  options.builtin = false;
  options.user_directory = "";
  auto library = Library::Create(options);
  ASSERT_TRUE(library.ok());
  Im2colGeometry g;
  g.n = 3;
  g.h = 19;
  g.w = 23;
  g.c = 40;
  g.kh = 3;
  g.kw = 2;
  g.sh = 2;
  g.dw = 2;
  g.ph = 1;
  g.pw = 2;
  // Wide channels (the row form), then narrow ones, where the heuristic takes tiles of whole
  // output rows (the staged form) or whole rows (the flat form).
  Im2colGeometry narrow = g;  // 19 x 24 output pixels of 147 taps x channels
  narrow.h = 37;
  narrow.w = 48;
  narrow.c = 3;
  narrow.kh = narrow.kw = 7;
  narrow.sh = narrow.sw = 2;
  narrow.dw = 1;
  narrow.ph = narrow.pw = 3;
  Im2colGeometry odd = narrow;  // rows of 27 elements: the default 128 x 27 tile, flat
  odd.h = odd.w = 17;
  odd.kh = odd.kw = 3;
  odd.sh = odd.sw = 1;
  odd.ph = odd.pw = 1;
  const std::pair<Im2colGeometry, const char*> cases[] = {
      {g, "row"}, {narrow, "staged"}, {odd, "flat"}};
  for (const auto& [geometry, form] : cases) {
    Im2colOp op = Im2colOp::Dense(DataType::kF16, geometry);
    auto info = (*library)->Inspect(op);
    ASSERT_TRUE(info.ok()) << info.status();
    EXPECT_EQ(info->level, ResolutionLevel::kHeuristic);
    EXPECT_EQ(info->form, form) << info->resolution_detail;
    size_t img_bytes = SpanBytes(op.img);
    size_t col_bytes = Im2colColumnBytes(op);
    std::mt19937_64 rng(std::random_device{}());
    std::vector<uint8_t> img(img_bytes), expected(col_bytes), got(col_bytes);
    for (auto& b : img) b = static_cast<uint8_t>(rng());
    ASSERT_TRUE(Im2colReference(op, img.data(), img_bytes, expected.data(), col_bytes).ok());
    auto img_device = DeviceBuffer::Allocate(*context_, img_bytes);
    auto col_device = DeviceBuffer::Allocate(*context_, col_bytes);
    ASSERT_TRUE(img_device.ok() && col_device.ok());
    ASSERT_TRUE(img_device->CopyFromHost(img.data(), img_bytes).ok());
    ASSERT_TRUE(col_device->Fill(0x77).ok());
    ASSERT_TRUE(context_->Synchronize().ok());
    absl::Status done = (*library)->Launch(op, img_device->ptr(), col_device->ptr(), nullptr);
    ASSERT_TRUE(done.ok()) << done;
    ASSERT_TRUE(context_->Synchronize().ok());
    ASSERT_TRUE(col_device->CopyToHost(got.data(), col_bytes).ok());
    EXPECT_TRUE(got == expected) << "library im2col is not bit-exact (" << info->kernel_name
                                 << ", " << info->resolution_detail << ")";
  }
}

TEST_F(LibraryGpuTest, TunedCol2imThroughTheLibraryIsBitExact) {
  // A database (written through the schema, as the tuner does) whose record picks the
  // direct form with a tile the heuristic would not: the library must launch it.
  Im2colGeometry g;
  g.n = 2;
  g.h = 21;
  g.w = 17;
  g.c = 24;
  g.kh = 3;
  g.kw = 5;
  g.sh = 2;
  g.dw = 2;
  g.ph = 1;
  g.pw = 3;
  Col2imOp op = Col2imOp::Dense(DataType::kBF16, g);
  tuning::TuningDatabase database;
  tuning::TuningRecord* record = database.add_records();
  record->mutable_device()->set_name(context_->info().name);
  record->mutable_device()->set_cc_major(context_->info().cc_major);
  record->mutable_device()->set_cc_minor(context_->info().cc_minor);
  auto problem = (*BuiltinTileOps().Find("col2im"))->ToProblem(op);
  ASSERT_TRUE(problem.ok()) << problem.status();
  *record->mutable_problem() = *problem;
  tuning::Lowering* lowering = record->mutable_winner()->mutable_lowering();
  lowering->set_path("simt_col2im");
  lowering->set_form("direct");
  lowering->add_tile(3);
  lowering->add_tile(5);
  lowering->set_threads(64);
  lowering->set_stages(1);
  lowering->set_through_shared(false);
  record->mutable_winner()->mutable_hints()->set_eviction_policy("evict_first");
  record->mutable_winner_statistics()->set_median_us(3);
  record->mutable_winner_statistics()->set_sample_count(5);
  const std::string path = absl::StrCat(::testing::TempDir(), "/col2im.txtpb");
  ASSERT_TRUE(
      tuning::WriteTuningDatabase(database, path, BuiltinTileOps().RecordValidator()).ok());
  LibraryOptions options;
  options.databases = {path};
  options.builtin = false;
  options.user_directory = "";
  auto library = Library::Create(options);
  ASSERT_TRUE(library.ok()) << library.status();
  auto info = (*library)->Inspect(op);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->level, ResolutionLevel::kExact);
  EXPECT_EQ(info->form, "direct");
  EXPECT_EQ(info->launch.tile, (std::vector<int64_t>{3, 5}));
  const size_t col_bytes = static_cast<size_t>(Col2imColumnBytes(op));
  const size_t img_bytes = SpanBytes(op.img);
  std::mt19937_64 rng(std::random_device{}());
  std::vector<uint8_t> col(col_bytes), expected(img_bytes, 0x5a), got(img_bytes);
  for (auto& b : col) b = static_cast<uint8_t>(rng());
  ASSERT_TRUE(Col2imReference(op, col.data(), col_bytes, expected.data(), img_bytes).ok());
  auto col_device = DeviceBuffer::Allocate(*context_, col_bytes);
  auto img_device = DeviceBuffer::Allocate(*context_, img_bytes);
  ASSERT_TRUE(col_device.ok() && img_device.ok());
  ASSERT_TRUE(col_device->CopyFromHost(col.data(), col_bytes).ok());
  ASSERT_TRUE(img_device->Fill(0x5a).ok());
  ASSERT_TRUE(context_->Synchronize().ok());
  absl::Status done = (*library)->Launch(op, col_device->ptr(), img_device->ptr(), nullptr);
  ASSERT_TRUE(done.ok()) << done;
  ASSERT_TRUE(context_->Synchronize().ok());
  ASSERT_TRUE(img_device->CopyToHost(got.data(), img_bytes).ok());
  EXPECT_TRUE(got == expected) << "library col2im is not bit-exact (" << info->kernel_name << ")";
}

}  // namespace
}  // namespace tiletune

#include "autotune/report.h"

#include <cstdlib>
#include <set>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "compiler/tuning_db/atomic_file.h"
#include "compiler/base/sha256.h"
#include "compiler/base/test_folder.h"
#include "compiler/ops/builtin_ops.h"
#include "compiler/tuning_db/tuning_db.h"
#include "compiler/tuning_db/tuning_db.pb.h"
#include "compiler/tuning_db/tuning_db_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace autotune {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

int Count(const std::string& text, const std::string& part) {
  int count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) {
    ++count;
  }
  return count;
}

tuning::Statistics Stats(double median_us, double gbps) {
  tuning::Statistics s;
  s.set_median_us(median_us);
  s.set_min_us(median_us * 0.99);
  s.set_spread(0.02);
  s.set_sample_count(30);
  s.set_gbps(gbps);
  s.set_ceiling_gbps(4000);
  s.set_fraction_of_ceiling(gbps / 4000);
  return s;
}

// One copy problem: winner at 3800 GB/s, an OK loser at 3000, a cache artefact at 5000,
// a verification failure that was timed at 2000 and a compile error.
tuning::TuningDatabase ChartDatabase() {
  tuning::TuningRecord record = tuning::TestRecord("NVIDIA H200", {8192, 8192}, 70.5);
  *record.mutable_winner_statistics() = Stats(70.5, 3800);
  record.clear_candidates();
  tuning::CandidateResult* ok = record.add_candidates();
  *ok->mutable_variant() = tuning::TestVariant("sync_simt", 256);
  *ok->mutable_statistics() = Stats(90, 3000);
  ok->set_status(tuning::CandidateResult::OK);
  tuning::CandidateResult* artefact = record.add_candidates();
  *artefact->mutable_variant() = tuning::TestVariant("bulk_1d");
  (*artefact->mutable_variant()->mutable_hints()->mutable_annotations())["odd"] = "<&>";
  *artefact->mutable_statistics() = Stats(50, 5000);
  artefact->set_status(tuning::CandidateResult::REJECTED_CACHE_ARTEFACT);
  artefact->set_detail("5000.0 GB/s is above the ceiling");
  tuning::CandidateResult* wrong = record.add_candidates();
  *wrong->mutable_variant() = tuning::TestVariant("cp_async", 128, 2);
  *wrong->mutable_statistics() = Stats(130, 2000);
  wrong->set_status(tuning::CandidateResult::FAILED_VERIFICATION);
  wrong->set_detail("element 7 | differs\nbadly");
  tuning::CandidateResult* broken = record.add_candidates();
  *broken->mutable_variant() = tuning::TestVariant("cp_async", 128, 4);
  broken->set_status(tuning::CandidateResult::COMPILE_ERROR);
  broken->set_detail("ptxas error");
  tuning::TuningDatabase database;
  database.set_schema_version(tuning::kCurrentSchemaVersion);
  *database.add_records() = record;
  database.set_record_count(1);
  return database;
}

tuning::Baseline MeasuredBaseline(const std::string& name, double median_us, double gbps,
                                  double winner_median_us) {
  tuning::Baseline baseline;
  baseline.set_name(name);
  *baseline.mutable_statistics() = Stats(median_us, gbps);
  baseline.set_speedup(median_us / winner_median_us);
  return baseline;
}

// ChartDatabase's copy with cudaMemcpy of the same bytes at 76.14 us (3518.5 GB/s), and
// an im2col record whose winner beats cudnnIm2Col 2.5 times and reaches 0.9 of cudaMemcpy.
tuning::TuningDatabase BaselineDatabase() {
  tuning::TuningDatabase database = ChartDatabase();
  tuning::TuningRecord* copy = database.mutable_records(0);
  *copy->add_baselines() = MeasuredBaseline("cudaMemcpy", 76.14, 3518.5, 70.5);
  copy->set_vs_baseline(76.14 / 70.5);
  copy->set_size_matched_ceiling_gbps(3518.5);
  copy->set_fraction_of_size_matched_ceiling(76.14 / 70.5);

  tuning::TuningRecord im2col = database.records(0);
  tuning::Im2colProblem* p = im2col.mutable_problem()->mutable_im2col();
  p->set_n(32), p->set_h(56), p->set_w(56), p->set_c(64), p->set_kh(3), p->set_kw(3);
  p->set_sh(1), p->set_sw(1), p->set_dh(1), p->set_dw(1), p->set_ph(1), p->set_pw(1);
  for (int64_t stride : {56 * 56 * 64, 56 * 64, 64, 1}) p->add_img_strides(stride);
  *im2col.mutable_winner_statistics() = Stats(100, 2700);
  im2col.clear_baselines();
  *im2col.add_baselines() = MeasuredBaseline("cudaMemcpy", 90, 3000, 100);
  *im2col.add_baselines() = MeasuredBaseline("cudnnIm2Col", 250, 1080, 100);
  im2col.set_vs_baseline(2.5);
  im2col.set_size_matched_ceiling_gbps(3000);
  im2col.set_fraction_of_size_matched_ceiling(0.9);
  *database.add_records() = im2col;

  tuning::TuningRecord no_cudnn = im2col;
  no_cudnn.mutable_problem()->mutable_im2col()->set_n(16);
  no_cudnn.mutable_baselines()->RemoveLast();
  no_cudnn.add_baselines()->set_name("cudnnIm2Col");
  no_cudnn.mutable_baselines(1)->set_unavailable("cuDNN could not be loaded (libcudnn.so.9)");
  no_cudnn.set_vs_baseline(0.9);
  *database.add_records() = no_cudnn;
  database.set_record_count(3);
  return database;
}

TEST(ReportPathsForTest, ReplacesTheExtension) {
  EXPECT_EQ(ReportPathsFor("out/h200.txtpb").markdown, "out/h200.report.md");
  EXPECT_EQ(ReportPathsFor("out/h200.txtpb").svg, "out/h200.report.svg");
  EXPECT_EQ(ReportPathsFor("h200.pb").markdown, "h200.report.md");
  EXPECT_EQ(ReportPathsFor("db").markdown, "db.report.md");
  EXPECT_EQ(ReportPathsFor("runs.v2/db").markdown, "runs.v2/db.report.md");
  EXPECT_EQ(ReportPathsFor("runs/.db").markdown, "runs/.db.report.md");
}

TEST(MarkdownReportTest, SummaryRowHasWinnerBandwidthSpreadAndCounts) {
  const tuning::TuningDatabase database = ChartDatabase();
  const std::string md = RenderMarkdownReport(database, "chart.svg", BuiltinTileOps());
  EXPECT_TRUE(absl::StartsWith(md, "# Tuning report\n\n1 problems, 5 candidates")) << md;
  EXPECT_THAT(md, HasSubstr("![Winner per problem against cudaMemcpy of the same bytes]"
                            "(chart.svg)"));
  // A record measured without baselines shows none, and its DRAM fraction.
  const std::string row =
      absl::StrCat("| 0 | NVIDIA H200 (sm_9.0) | copy f16 [8192, 8192] | ",
                   tuning::DescribeVariant(database.records(0).winner()),
                   " | 70.500 | 3800.0 | — | — | 95.0% | 70.500–90.000 µs (1.28×, 2 measured) | OK 2, "
                   "FAILED_VERIFICATION 1, COMPILE_ERROR 1, REJECTED_CACHE_ARTEFACT 1 |\n");
  EXPECT_THAT(md, HasSubstr(row)) << md;
}

TEST(MarkdownReportTest, OnlyNonDenseStridesAreShown) {
  tuning::TuningDatabase database = ChartDatabase();
  EXPECT_THAT(RenderMarkdownReport(database, "c.svg", BuiltinTileOps()), Not(HasSubstr("strides [")));
  tuning::CopyProblem* problem = database.mutable_records(0)->mutable_problem()->mutable_copy();
  problem->set_src_strides(0, 8200);  // Rows padded by 8 elements.
  EXPECT_THAT(RenderMarkdownReport(database, "c.svg", BuiltinTileOps()),
              HasSubstr("copy f16 [8192, 8192] src[0:8192, 0:8192] strides [8200, 1]"));
}

// The Markdown stays one line per problem; each candidate is a CSV row.
TEST(MarkdownReportTest, CandidatesAreInTheCsvAndTheMarkdownStaysShort) {
  const tuning::TuningDatabase database = ChartDatabase();
  const std::string md = RenderMarkdownReport(database, "", BuiltinTileOps());
  EXPECT_THAT(md, Not(HasSubstr("![")));
  EXPECT_THAT(md, Not(HasSubstr("## ")));
  const std::string csv = RenderCandidatesCsv(database, BuiltinTileOps());
  std::vector<std::string> lines = absl::StrSplit(csv, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 6u) << csv;  // the header and five candidates
  EXPECT_TRUE(absl::StartsWith(lines[0], "record,device,problem,status,variant,median_us,"));
  EXPECT_THAT(lines[1], HasSubstr(",\"WINNER\",\"tma "));
  EXPECT_THAT(csv, HasSubstr(",90.0000,89.1000,0.0200,30,3000.00,,0.7500,"));
  EXPECT_THAT(csv, HasSubstr("\"REJECTED_CACHE_ARTEFACT\",\"bulk_1d "));
  EXPECT_THAT(csv, HasSubstr("\"COMPILE_ERROR\",\"cp_async tile=[64,128] threads=128 stages=4"));
  EXPECT_THAT(csv, HasSubstr(",,,,,,,\"\",,\"tiletune test\",\"testhost\",1796000000,\"ptxas error\""));
  EXPECT_THAT(csv, HasSubstr("element 7 | differs badly"));  // one row, whatever the detail holds
}

// Issue 34: database strings reached the Markdown raw (headings, <script>, <img onerror>).
TEST(MarkdownReportTest, DatabaseStringsAreEscaped) {
  tuning::TuningDatabase database = ChartDatabase();
  database.mutable_records(0)->mutable_device()->set_name(
      "<script>alert(1)</script>\n# heading | *bold* [x](javascript:y) `code`");
  const std::string md = RenderMarkdownReport(database, "", BuiltinTileOps());
  EXPECT_THAT(md, Not(HasSubstr("<script>")));
  EXPECT_THAT(md, Not(HasSubstr("\n# heading")));
  EXPECT_THAT(md, HasSubstr("&lt;script&gt;alert(1)&lt;/script&gt; # heading \\| \\*bold\\* "
                            "[x]\\(javascript:y) \\`code\\`"));
  std::vector<std::string> lines = absl::StrSplit(md, '\n');
  for (const std::string& line : lines) {
    if (absl::StartsWith(line, "| 0 |")) {
      EXPECT_EQ(Count(line, "|") - Count(line, "\\|"), 12) << line;
    }
  }
}

TEST(MarkdownReportTest, BaselinesAndSizeMatchedCeilingAreShown) {
  const tuning::TuningDatabase database = BaselineDatabase();
  ASSERT_TRUE(tuning::ValidateTuningDatabase(database, "test").ok());
  const std::string md = RenderMarkdownReport(database, "", BuiltinTileOps());
  // The copy: vs cudaMemcpy of the same bytes, which is also the size-matched ceiling.
  EXPECT_THAT(md, HasSubstr(" | 70.500 | 3800.0 | 1.08× cudaMemcpy | 108.0% (3518.5 GB/s) | "
                            "95.0% | "));
  // im2col: vs cudnnIm2Col, and its fraction of cudaMemcpy of the same bytes.
  EXPECT_THAT(md, HasSubstr(" | 100.000 | 2700.0 | 2.50× cudnnIm2Col | 90.0% (3000.0 GB/s) | "
                            "67.5% | "));
  // Without cuDNN, the speedup is over cudaMemcpy.
  EXPECT_THAT(md, HasSubstr(" | 100.000 | 2700.0 | 0.90× cudaMemcpy | 90.0% (3000.0 GB/s) | "));
  // The summary: geomeans over the problems.
  EXPECT_THAT(md, HasSubstr("- Of cudaMemcpy of the same bytes: geomean 0.956, lowest 0.900, "
                            "highest 1.080 (3 problems)\n"));
  EXPECT_THAT(md, HasSubstr("- Against cudnnIm2Col: geomean 2.50×, lowest 2.50× (1 problems)\n"));
  // Candidates' fraction of the size-matched ceiling: 3000 of 3518.5 GB/s.
  EXPECT_THAT(RenderCandidatesCsv(database, BuiltinTileOps()), HasSubstr(",3000.00,0.8526,0.7500,"));
}

// Issue 35: the chart printed 0.96 of memcpy where the table said 0.941 for one record.
TEST(SvgChartTest, TheChartShowsTheTablesFigure) {
  tuning::TuningDatabase database = BaselineDatabase();
  database.mutable_records(0)->set_fraction_of_size_matched_ceiling(0.941);
  EXPECT_THAT(RenderMarkdownReport(database, "", BuiltinTileOps()), HasSubstr("| 94.1% (3518.5 GB/s) |"));
  EXPECT_THAT(RenderSvgChart(database, BuiltinTileOps()), HasSubstr(">0.94 of memcpy, "));
}

TEST(SvgChartTest, BarsAreAgainstTheSizeMatchedCeilingWithTheLibraryBaselineTicked) {
  const std::string svg = RenderSvgChart(BaselineDatabase(), BuiltinTileOps());
  EXPECT_EQ(Count(svg, "<g class=\"row\">"), 3);
  EXPECT_THAT(svg, HasSubstr("1.08 of memcpy, 3800 GB/s, 70.50 us, tma"));
  EXPECT_THAT(svg, HasSubstr("0.90 of memcpy, 2.50x cudnnIm2Col, 2700 GB/s, 100.00 us, tma"));
  // Only the record whose cuDNN baseline was measured has a tick.
  EXPECT_EQ(Count(svg, "<line class=\"baseline\""), 1);
  EXPECT_THAT(svg, HasSubstr("cudaMemcpy of the same bytes (dashed)"));
}

// A database of `n` records with long problem names and candidates of three families.
tuning::TuningDatabase ManyRecords(int n) {
  tuning::TuningDatabase database;
  database.set_schema_version(tuning::kCurrentSchemaVersion);
  for (int i = 0; i < n; ++i) {
    tuning::TuningRecord record = ChartDatabase().records(0);
    tuning::CopyProblem* copy = record.mutable_problem()->mutable_copy();
    copy->set_shape(0, 1000 + i);
    record.mutable_winner_statistics()->set_gbps(1000 + 60 * i);
    *database.add_records() = record;
  }
  return database;
}

TEST(SvgChartTest, OneRowPerProblemWithWinnerBarSpansAndCeiling) {
  const std::string svg = RenderSvgChart(ChartDatabase(), BuiltinTileOps());
  EXPECT_TRUE(absl::StartsWith(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_TRUE(absl::EndsWith(svg, "</svg>\n"));
  EXPECT_EQ(Count(svg, "<g class=\"row\">"), 1);
  EXPECT_EQ(Count(svg, "<rect class=\"bar winner\""), 1);
  // The winner's family (tma) and the OK loser's (sync_simt) have spans; the cache
  // artefact and the failed candidate do not.
  EXPECT_EQ(Count(svg, "<line class=\"span\""), 2);
  // The scale runs to 1.1 of the ceiling over 480 units: the winner at 3800 of 4000 GB/s
  // is 480 * 0.95 / 1.1 = 414.5 wide.
  EXPECT_THAT(svg, HasSubstr("width=\"414.5\" height=\"10.0\""));
  EXPECT_EQ(Count(svg, "<line class=\"ceiling\""), 1);
  EXPECT_THAT(svg, HasSubstr("0.95 of DRAM ceiling, 3800 GB/s, 70.50 us, tma"));
  EXPECT_EQ(Count(svg, "<line class=\"baseline\""), 0);
  EXPECT_THAT(svg, HasSubstr("copy f16 [8192, 8192] on NVIDIA H200 (sm_9.0)"));
  EXPECT_EQ(Count(svg, "<g "), Count(svg, "</g>"));
  EXPECT_THAT(svg, Not(HasSubstr("nan")));
  EXPECT_THAT(svg, Not(HasSubstr("inf")));
  EXPECT_THAT(RenderSvgChart(tuning::TuningDatabase(), BuiltinTileOps()),
              HasSubstr("empty tuning database"));
}

// 50 problems make a chart of 50 rows, not one bar per candidate: its height grows by a
// row per problem.
TEST(SvgChartTest, FiftyProblemsStayCompact) {
  const std::string one = RenderSvgChart(ManyRecords(1), BuiltinTileOps());
  const std::string fifty = RenderSvgChart(ManyRecords(50), BuiltinTileOps());
  EXPECT_EQ(Count(fifty, "<g class=\"row\">"), 50);
  auto height = [](const std::string& svg) {
    const size_t at = svg.find("height=\"") + 8;
    return std::stoi(svg.substr(at, svg.find('"', at) - at));
  };
  EXPECT_EQ(height(fifty) - height(one), 49 * 24);
  EXPECT_LT(height(fifty), 1400);
}

TEST(WriteReportTest, WritesMarkdownAndSvgNextToTheDatabase) {
  const std::string folder = MakeTestFolder();
  const tuning::TuningDatabase database = ChartDatabase();
  ASSERT_TRUE(tuning::WriteTuningDatabase(database, folder + "/h200.txtpb").ok());
  ASSERT_TRUE(WriteReport(database, "db bytes", folder + "/h200.txtpb", BuiltinTileOps()).ok());
  const std::set<std::string> names = ListFolder(folder);
  EXPECT_THAT(names, ElementsAre("h200.candidates.csv", "h200.report.md", "h200.report.svg", "h200.txtpb"));
  EXPECT_EQ(*tuning::ReadFileToString(folder + "/h200.report.md"),
            RenderMarkdownReport(database, "h200.report.svg", BuiltinTileOps(), Sha256Hex("db bytes")));
  EXPECT_EQ(*tuning::ReadFileToString(folder + "/h200.report.svg"), RenderSvgChart(database, BuiltinTileOps()));
  EXPECT_FALSE(WriteReport(database, "db bytes", folder + "/missing/h200.txtpb", BuiltinTileOps()).ok());
  // The report names the bytes it describes: other bytes are flagged, naming both files.
  EXPECT_TRUE(CheckReport(folder + "/h200.txtpb", "db bytes").ok());
  const absl::Status other = CheckReport(folder + "/h200.txtpb", "other bytes");
  EXPECT_TRUE(absl::IsFailedPrecondition(other)) << other;
  EXPECT_THAT(std::string(other.message()), HasSubstr("h200.report.md describes another version of"));
  EXPECT_THAT(std::string(other.message()), HasSubstr("autotune merge"));
  EXPECT_TRUE(CheckReport(folder + "/none.txtpb", "anything").ok());
}

}  // namespace
}  // namespace autotune
}  // namespace tiletune

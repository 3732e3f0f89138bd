#include "autotune/report.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "compiler/tuning_db/atomic_file.h"
#include "compiler/tuning_db/tuning_db.h"
#include "compiler/tuning_db/tuning_db.pb.h"
#include "compiler/base/status_macros.h"

namespace tiletune {
namespace autotune {
namespace {

// One bar or table row: the winner or one of the other candidates.
struct Entry {
  const tuning::Variant* variant;
  const tuning::Statistics* statistics;  // null when not measured
  tuning::CandidateResult::Status status;
  const std::string* detail;
  bool winner;
};

std::vector<Entry> Entries(const tuning::TuningRecord& record) {
  static const std::string kNoDetail;
  std::vector<Entry> entries = {
      {&record.winner(), &record.winner_statistics(), tuning::CandidateResult::OK, &kNoDetail, true}};
  for (const tuning::CandidateResult& c : record.candidates()) {
    entries.push_back({&c.variant(), c.has_statistics() ? &c.statistics() : nullptr, c.status(),
                       &c.detail(), false});
  }
  return entries;
}

std::string ShortDevice(const tuning::DeviceIdentity& d) {
  return absl::StrCat(d.name(), " (sm_", d.cc_major(), ".", d.cc_minor(), ")");
}

std::string Gbps(double gbps) { return gbps > 0 ? absl::StrFormat("%.1f", gbps) : "—"; }

std::string Fraction(const tuning::Statistics& s) {
  return s.ceiling_gbps() > 0 && s.gbps() > 0
             ? absl::StrFormat("%.1f%%", 100 * s.fraction_of_ceiling())
             : "—";
}

// Markdown table cell text: no line breaks, pipes escaped.
std::string Cell(absl::string_view text) {
  return absl::StrReplaceAll(text, {{"|", "\\|"}, {"\r", " "}, {"\n", " "}});
}

// "12.100–15.300 µs (1.26×)" over the measured, OK candidates and the winner.
std::string MedianSpread(const std::vector<Entry>& entries) {
  double low = 0, high = 0;
  int measured = 0;
  for (const Entry& e : entries) {
    if (e.statistics == nullptr || e.status != tuning::CandidateResult::OK) continue;
    const double median = e.statistics->median_us();
    low = measured == 0 ? median : std::min(low, median);
    high = measured == 0 ? median : std::max(high, median);
    ++measured;
  }
  if (measured < 2) return "—";
  return absl::StrFormat("%.3f–%.3f µs (%.2f×, %d measured)", low, high, high / low, measured);
}

std::string StatusCounts(const std::vector<Entry>& entries) {
  std::map<int, int> counts;  // ordered by enum value: OK first
  for (const Entry& e : entries) ++counts[e.status];
  std::vector<std::string> parts;
  for (const auto& [status, count] : counts) {
    parts.push_back(absl::StrCat(tuning::CandidateStatusName(static_cast<tuning::CandidateResult::Status>(status)),
                                 " ", count));
  }
  return absl::StrJoin(parts, ", ");
}

// "- Measured by tiletune 0.1 on gpu-a, 2026-11-30 00:00:00 UTC\n", with what is known.
std::string MeasuredLine(const tuning::Provenance& p) {
  std::string line;
  if (!p.tool_version().empty()) absl::StrAppend(&line, " by ", p.tool_version());
  if (!p.host().empty()) absl::StrAppend(&line, " on ", p.host());
  if (p.unix_time_s() > 0) {
    absl::StrAppend(&line, line.empty() ? " " : ", ",
                    absl::FormatTime("%Y-%m-%d %H:%M:%S UTC",
                                     absl::FromUnixSeconds(p.unix_time_s()), absl::UTCTimeZone()));
  }
  return line.empty() ? "" : absl::StrCat("- Measured", line, "\n");
}

std::string XmlEscape(absl::string_view text) {
  return absl::StrReplaceAll(
      text, {{"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}, {"\"", "&quot;"}, {"'", "&apos;"}});
}

// Chart geometry, in SVG user units.
constexpr double kWidth = 960;
constexpr double kLabelWidth = 330;  // variant names, left of the bars
constexpr double kBarLeft = 340;
constexpr double kBarRight = 860;  // values are written right of the bars
constexpr double kRowHeight = 18;
constexpr double kBarHeight = 13;
constexpr double kTitleHeight = 34;
constexpr double kPanelGap = 18;

const char* BarClass(const Entry& e) {
  if (e.winner) return "bar winner";
  switch (e.status) {
    case tuning::CandidateResult::OK:
      return "bar ok";
    case tuning::CandidateResult::REJECTED_CACHE_ARTEFACT:
      return "bar artefact";
    default:
      return "bar failed";
  }
}

}  // namespace

ReportPaths ReportPathsFor(absl::string_view database_path) {
  absl::string_view stem = database_path;
  const size_t slash = stem.rfind('/');
  const size_t dot = stem.rfind('.');
  if (dot != absl::string_view::npos && (slash == absl::string_view::npos || dot > slash + 1)) {
    stem = stem.substr(0, dot);
  }
  return ReportPaths{absl::StrCat(stem, ".report.md"), absl::StrCat(stem, ".report.svg")};
}

std::string RenderMarkdownReport(const tuning::TuningDatabase& database, absl::string_view svg_link,
                                 const TileOpRegistry& ops) {
  int candidates = 0;
  for (const tuning::TuningRecord& record : database.records()) {
    candidates += 1 + record.candidates_size();
  }
  std::string md =
      absl::StrCat("# Tuning report\n\n", database.records_size(), " problems, ", candidates,
                   " candidates (schema version ", database.schema_version(), ").\n\n");
  if (!svg_link.empty()) {
    absl::StrAppend(&md, "![Bandwidth of every candidate, per problem](", svg_link, ")\n\n");
  }
  absl::StrAppend(&md,
                  "| # | device | problem | winner | median µs | GB/s | of ceiling | "
                  "candidates' medians | statuses |\n"
                  "|---|---|---|---|---:|---:|---:|---|---|\n");
  for (int i = 0; i < database.records_size(); ++i) {
    const tuning::TuningRecord& r = database.records(i);
    const std::vector<Entry> entries = Entries(r);
    absl::StrAppend(&md, "| ", i, " | ", Cell(ShortDevice(r.device())), " | ",
                    Cell(ops.DescribeProblem(r.problem())), " | ", Cell(tuning::DescribeVariant(r.winner())),
                    " | ", absl::StrFormat("%.3f", r.winner_statistics().median_us()), " | ",
                    Gbps(r.winner_statistics().gbps()), " | ", Fraction(r.winner_statistics()),
                    " | ", MedianSpread(entries), " | ", StatusCounts(entries), " |\n");
  }
  for (int i = 0; i < database.records_size(); ++i) {
    const tuning::TuningRecord& r = database.records(i);
    absl::StrAppend(&md, "\n## ", i, ". ", ops.DescribeProblem(r.problem()), " on ",
                    ShortDevice(r.device()), "\n\n- Key: `", tuning::RecordKey(r), "`\n");
    if (r.winner_statistics().ceiling_gbps() > 0) {
      absl::StrAppend(&md, absl::StrFormat("- DRAM ceiling: %.1f GB/s\n",
                                           r.winner_statistics().ceiling_gbps()));
    }
    absl::StrAppend(&md, MeasuredLine(r.provenance()));
    absl::StrAppend(&md,
                    "\n| status | variant | median µs | min µs | spread | samples | GB/s | "
                    "of ceiling | detail |\n"
                    "|---|---|---:|---:|---:|---:|---:|---:|---|\n");
    for (const Entry& e : Entries(r)) {
      const std::string status = e.winner ? "**winner**" : tuning::CandidateStatusName(e.status);
      if (e.statistics != nullptr) {
        const tuning::Statistics& s = *e.statistics;
        absl::StrAppend(
            &md, absl::StrFormat("| %s | %s | %.3f | %.3f | %.1f%% | %d | %s | %s | %s |\n", status,
                                 Cell(tuning::DescribeVariant(*e.variant)), s.median_us(), s.min_us(),
                                 100 * s.spread(), s.sample_count(), Gbps(s.gbps()), Fraction(s),
                                 Cell(*e.detail)));
      } else {
        absl::StrAppend(&md, "| ", status, " | ", Cell(tuning::DescribeVariant(*e.variant)),
                        " | — | — | — | — | — | — | ", Cell(*e.detail), " |\n");
      }
    }
  }
  return md;
}

std::string RenderSvgChart(const tuning::TuningDatabase& database, const TileOpRegistry& ops) {
  std::string body;
  double y = 10;
  for (int i = 0; i < database.records_size(); ++i) {
    const tuning::TuningRecord& r = database.records(i);
    std::vector<Entry> bars;
    for (const Entry& e : Entries(r)) {
      if (e.statistics != nullptr && e.statistics->gbps() > 0) bars.push_back(e);
    }
    // Winner first, then by bandwidth, highest first (stable: database order on ties).
    std::stable_sort(
        bars.begin() + (bars.empty() || !bars[0].winner ? 0 : 1), bars.end(),
        [](const Entry& a, const Entry& b) { return a.statistics->gbps() > b.statistics->gbps(); });
    const double ceiling = r.winner_statistics().ceiling_gbps();
    double scale_max = ceiling;
    for (const Entry& e : bars) scale_max = std::max(scale_max, e.statistics->gbps());
    scale_max *= 1.1;
    auto x_of = [&](double gbps) { return kBarLeft + (kBarRight - kBarLeft) * gbps / scale_max; };
    const double rows = std::max<size_t>(bars.size(), 1);
    const double bars_bottom = kTitleHeight + rows * kRowHeight;
    // The ceiling's label goes under the bars, clear of the title.
    const double panel_height = bars_bottom + (ceiling > 0 ? kRowHeight : 0);
    absl::StrAppend(&body,
                    absl::StrFormat("<g class=\"panel\" transform=\"translate(0,%.1f)\">\n", y));
    absl::StrAppend(
        &body,
        absl::StrFormat("<text class=\"title\" x=\"10\" y=\"16\">%d. %s on %s</text>\n", i,
                        XmlEscape(ops.DescribeProblem(r.problem())), XmlEscape(ShortDevice(r.device()))));
    if (bars.empty()) {
      absl::StrAppend(&body,
                      absl::StrFormat("<text class=\"note\" x=\"%.1f\" y=\"%.1f\">no bandwidth "
                                      "recorded</text>\n",
                                      kBarLeft, kTitleHeight + kBarHeight - 2));
    }
    for (size_t b = 0; b < bars.size(); ++b) {
      const Entry& e = bars[b];
      const double top = kTitleHeight + b * kRowHeight;
      const double gbps = e.statistics->gbps();
      std::string label = tuning::DescribeVariant(*e.variant);
      const std::string title = XmlEscape(label);
      if (label.size() > 60) label = absl::StrCat(label.substr(0, 57), "...");
      label = XmlEscape(label);
      absl::StrAppend(
          &body,
          absl::StrFormat("<text class=\"label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s"
                          "</text>\n",
                          kLabelWidth, top + kBarHeight - 2, label),
          absl::StrFormat("<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                          "height=\"%.1f\"><title>%s: %.1f GB/s, %.3f us (%s)</title></rect>\n",
                          BarClass(e), kBarLeft, top, x_of(gbps) - kBarLeft, kBarHeight, title,
                          gbps, e.statistics->median_us(),
                          e.winner ? "winner" : tuning::CandidateStatusName(e.status)),
          absl::StrFormat("<text class=\"value\" x=\"%.1f\" y=\"%.1f\">%.1f</text>\n",
                          x_of(gbps) + 4, top + kBarHeight - 2, gbps));
    }
    if (ceiling > 0) {
      const double x = x_of(ceiling);
      absl::StrAppend(&body,
                      absl::StrFormat("<line class=\"ceiling\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                                      "y2=\"%.1f\"/>\n",
                                      x, kTitleHeight - 4, x, bars_bottom),
                      absl::StrFormat("<text class=\"ceiling-label\" x=\"%.1f\" y=\"%.1f\" "
                                      "text-anchor=\"middle\">DRAM ceiling %.1f GB/s</text>\n",
                                      x, bars_bottom + 12, ceiling));
    }
    absl::StrAppend(&body, "</g>\n");
    y += panel_height + kPanelGap;
  }
  const double height = std::max(y, 40.0);
  std::string svg = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
      "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"11\">\n",
      kWidth, height, kWidth, height);
  absl::StrAppend(&svg,
                  "<style>\n"
                  ".title { font-size: 13px; font-weight: bold; }\n"
                  ".bar.winner { fill: #2a9d8f; }\n"
                  ".bar.ok { fill: #8da0cb; }\n"
                  ".bar.artefact { fill: #e76f51; }\n"
                  ".bar.failed { fill: #bbbbbb; }\n"
                  ".ceiling { stroke: #d62828; stroke-width: 1.5; stroke-dasharray: 5 3; }\n"
                  ".ceiling-label { fill: #d62828; font-size: 10px; }\n"
                  "</style>\n",
                  "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
  if (database.records_size() == 0) {
    absl::StrAppend(&svg, "<text x=\"10\" y=\"24\">empty tuning database</text>\n");
  }
  absl::StrAppend(&svg, body, "</svg>\n");
  return svg;
}

std::vector<tuning::FileWrite> ReportFiles(const tuning::TuningDatabase& database,
                                           absl::string_view database_path,
                                           const TileOpRegistry& ops) {
  const ReportPaths paths = ReportPathsFor(database_path);
  const size_t slash = paths.svg.rfind('/');
  const std::string svg_link = slash == std::string::npos ? paths.svg : paths.svg.substr(slash + 1);
  return {{paths.svg, RenderSvgChart(database, ops)},
          {paths.markdown, RenderMarkdownReport(database, svg_link, ops)}};
}

absl::Status WriteReport(const tuning::TuningDatabase& database, absl::string_view database_path,
                         const TileOpRegistry& ops) {
  return tuning::WriteFilesAtomically(ReportFiles(database, database_path, ops));
}

}  // namespace autotune
}  // namespace tiletune

#include "autotune/report.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"
#include "compiler/tuning_db/atomic_file.h"
#include "compiler/tuning_db/tuning_db.h"
#include "compiler/tuning_db/tuning_db.pb.h"
#include "compiler/base/sha256.h"
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

// The operator's own baseline, measured: the library call (not cudaMemcpy) when there
// is one, else cudaMemcpy; null when none was measured.
const tuning::Baseline* MainBaseline(const tuning::TuningRecord& r) {
  const tuning::Baseline* main = nullptr;
  for (const tuning::Baseline& b : r.baselines()) {
    if (!b.has_statistics()) continue;
    if (main == nullptr || (main->name() == "cudaMemcpy" && b.name() != "cudaMemcpy")) main = &b;
  }
  return main;
}

// "2.41× cudnnIm2Col", "—" when no baseline was measured.
std::string VsBaseline(const tuning::TuningRecord& r) {
  const tuning::Baseline* b = MainBaseline(r);
  return b == nullptr ? "—" : absl::StrFormat("%.2f× %s", b->speedup(), b->name());
}

// "97.1% (3021.4 GB/s)" of cudaMemcpy of the same bytes; "—" when not measured.
std::string OfSizeMatched(const tuning::TuningRecord& r) {
  if (r.size_matched_ceiling_gbps() <= 0) return "—";
  return absl::StrFormat("%.1f%% (%.1f GB/s)", 100 * r.fraction_of_size_matched_ceiling(),
                         r.size_matched_ceiling_gbps());
}

// Database text in a Markdown table cell: cut to 300 characters, control characters
// dropped, HTML (<script>, <img onerror>) and the Markdown that could act (emphasis, code,
// pipes, a link's "](") escaped, so a database string shows as the text it is.
std::string Cell(absl::string_view text) {
  std::string out;
  const absl::string_view kept = text.substr(0, 300);
  for (size_t i = 0; i < kept.size(); ++i) {
    const char c = kept[i];
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      out.push_back(' ');
    } else if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else if (c == '&') {
      out += "&amp;";
    } else if (std::string("\\`*|").find(c) != std::string::npos ||
               (c == '(' && i > 0 && kept[i - 1] == ']')) {
      out.push_back('\\');
      out.push_back(c);
    } else {
      out.push_back(c);
    }
  }
  return text.size() > 300 ? absl::StrCat(out, "...") : out;
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

std::string XmlEscape(absl::string_view text) {
  return absl::StrReplaceAll(
      text, {{"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}, {"\"", "&quot;"}, {"'", "&apos;"}});
}

// Summary chart geometry, in SVG user units (font-size 11). Text widths are estimated
// generously (kCharWidth per character) so that no label leaves the canvas.
constexpr double kMargin = 12;
constexpr double kCharWidth = 6.6;
constexpr double kChartWidth = 480;
constexpr double kRowHeight = 24;
constexpr double kBarHeight = 10;
constexpr size_t kMaxLabel = 80;  // longer problem names are cut, the whole name in a tooltip
constexpr const char* kFamilyColors[] = {"#2a9d8f", "#e76f51", "#457b9d", "#e9c46a",
                                        "#8d5a97", "#6a994e", "#bc4749", "#577590",
                                        "#f4a261", "#264653", "#c77dff", "#90be6d"};
constexpr size_t kColors = sizeof(kFamilyColors) / sizeof(kFamilyColors[0]);

double TextWidth(absl::string_view text) { return kCharWidth * static_cast<double>(text.size()); }

std::string Cut(const std::string& text, size_t max) {
  return text.size() <= max ? text : absl::StrCat(text.substr(0, max - 3), "...");
}

// The path family of a variant: its lowering path and form ("simt_im2col/row").
std::string Family(const tuning::Variant& variant) {
  const tuning::Lowering& l = variant.lowering();
  return l.form().empty() ? l.path() : absl::StrCat(l.path(), "/", l.form());
}

}  // namespace

// Starts the line of the Markdown that names the database's SHA-256.
constexpr char kDescribesPrefix[] = "Describes the database file with sha256 `";

ReportPaths ReportPathsFor(absl::string_view database_path) {
  absl::string_view stem = database_path;
  const size_t slash = stem.rfind('/');
  const size_t dot = stem.rfind('.');
  if (dot != absl::string_view::npos && (slash == absl::string_view::npos || dot > slash + 1)) {
    stem = stem.substr(0, dot);
  }
  return ReportPaths{absl::StrCat(stem, ".report.md"), absl::StrCat(stem, ".report.svg"),
                     absl::StrCat(stem, ".candidates.csv")};
}

std::string RenderMarkdownReport(const tuning::TuningDatabase& database, absl::string_view svg_link,
                                 const TileOpRegistry& ops, absl::string_view database_sha256) {
  int candidates = 0;
  std::map<std::string, std::vector<double>> speedups;  // baseline -> winner's speedups
  std::vector<double> of_memcpy;
  for (const tuning::TuningRecord& record : database.records()) {
    candidates += 1 + record.candidates_size();
    if (const tuning::Baseline* b = MainBaseline(record); b != nullptr && b->speedup() > 0) {
      speedups[b->name()].push_back(b->speedup());
    }
    if (record.size_matched_ceiling_gbps() > 0) {
      of_memcpy.push_back(record.fraction_of_size_matched_ceiling());
    }
  }
  std::string md = "# Tuning report\n\n";
  if (!database_sha256.empty()) {
    absl::StrAppend(&md, kDescribesPrefix, database_sha256, "`.\n\n");
  }
  absl::StrAppend(&md, database.records_size(), " problems, ", candidates,
                  " candidates measured or tried (schema version ", database.schema_version(),
                  "); each candidate's figures are in the .candidates.csv beside this file.\n\n");
  auto geomean = [](const std::vector<double>& values) {
    double log_sum = 0;
    for (double v : values) log_sum += std::log(v);
    return std::exp(log_sum / static_cast<double>(values.size()));
  };
  if (!of_memcpy.empty()) {
    absl::StrAppend(&md, absl::StrFormat(
                             "- Of cudaMemcpy of the same bytes: geomean %.3f, lowest %.3f, "
                             "highest %.3f (%d problems)\n",
                             geomean(of_memcpy), *std::min_element(of_memcpy.begin(), of_memcpy.end()),
                             *std::max_element(of_memcpy.begin(), of_memcpy.end()),
                             static_cast<int>(of_memcpy.size())));
  }
  for (const auto& [name, values] : speedups) {
    absl::StrAppend(&md, absl::StrFormat("- Against %s: geomean %.2f×, lowest %.2f× (%d problems)\n",
                                         Cell(name), geomean(values),
                                         *std::min_element(values.begin(), values.end()),
                                         static_cast<int>(values.size())));
  }
  if (!svg_link.empty()) {
    absl::StrAppend(&md, "\n![Winner per problem against cudaMemcpy of the same bytes](", svg_link,
                    ")\n");
  }
  absl::StrAppend(&md,
                  "\nBaselines were measured in the same run, on the same rotated buffers, in "
                  "rounds interleaved with the winner: \"vs baseline\" is the library call the "
                  "problem replaces (cudnnIm2Col for im2col; cudaMemcpy of the same bytes "
                  "otherwise), its time over the winner's (above 1 the winner is faster); "
                  "\"of memcpy\" is the winner's fraction of cudaMemcpy of the same bytes in "
                  "those rounds (the chart shows the same figure); \"of DRAM\" its fraction of "
                  "one large copy.\n\n");
  absl::StrAppend(&md,
                  "| # | device | problem | winner | median µs | GB/s | vs baseline | of memcpy | "
                  "of DRAM | candidates' medians | statuses |\n"
                  "|---|---|---|---|---:|---:|---:|---:|---:|---|---|\n");
  for (int i = 0; i < database.records_size(); ++i) {
    const tuning::TuningRecord& r = database.records(i);
    const std::vector<Entry> entries = Entries(r);
    absl::StrAppend(&md, "| ", i, " | ", Cell(ShortDevice(r.device())), " | ",
                    Cell(ops.DescribeProblem(r.problem())), " | ", Cell(tuning::DescribeVariant(r.winner())),
                    " | ", absl::StrFormat("%.3f", r.winner_statistics().median_us()), " | ",
                    Gbps(r.winner_statistics().gbps()), " | ", Cell(VsBaseline(r)), " | ",
                    OfSizeMatched(r), " | ", Fraction(r.winner_statistics()), " | ",
                    MedianSpread(entries), " | ", StatusCounts(entries), " |\n");
  }
  return md;
}

std::string RenderCandidatesCsv(const tuning::TuningDatabase& database, const TileOpRegistry& ops) {
  auto cell = [](absl::string_view text) {
    std::string value(text);
    // A leading = + - @ could start a spreadsheet formula.
    if (!value.empty() && std::string("=+-@").find(value[0]) != std::string::npos) value = "'" + value;
    return absl::StrCat(
        "\"", absl::StrReplaceAll(value, {{"\"", "\"\""}, {"\n", " "}, {"\r", " "}}), "\"");
  };
  std::string csv =
      "record,device,problem,status,variant,median_us,min_us,spread,samples,gbps,of_memcpy,"
      "of_dram,baseline,baseline_median_us,measured_by,host,unix_time_s,detail\n";
  for (int i = 0; i < database.records_size(); ++i) {
    const tuning::TuningRecord& r = database.records(i);
    const tuning::Baseline* baseline = MainBaseline(r);
    const double memcpy_gbps = r.size_matched_ceiling_gbps();
    for (const Entry& e : Entries(r)) {
      const tuning::Statistics* s = e.statistics;
      std::string figures = ",,,,,,";
      if (s != nullptr) {
        figures = absl::StrFormat(
            "%.4f,%.4f,%.4f,%d,%.2f,%s,%s", s->median_us(), s->min_us(), s->spread(),
            s->sample_count(), s->gbps(),
            // The winner's is the interleaved figure of the report; a candidate's, its GB/s
            // over memcpy's.
            e.winner && memcpy_gbps > 0 ? absl::StrFormat("%.4f", r.fraction_of_size_matched_ceiling())
            : memcpy_gbps > 0 && s->gbps() > 0 ? absl::StrFormat("%.4f", s->gbps() / memcpy_gbps)
                                                : "",
            s->ceiling_gbps() > 0 ? absl::StrFormat("%.4f", s->fraction_of_ceiling()) : "");
      }
      absl::StrAppend(&csv, i, ",", cell(ShortDevice(r.device())), ",",
                      cell(ops.DescribeProblem(r.problem())), ",",
                      cell(e.winner ? "WINNER" : tuning::CandidateStatusName(e.status)), ",",
                      cell(tuning::DescribeVariant(*e.variant)), ",", figures, ",",
                      cell(baseline != nullptr ? baseline->name() : ""), ",",
                      baseline != nullptr ? absl::StrFormat("%.4f", baseline->statistics().median_us())
                                          : "",
                      ",", cell(r.provenance().tool_version()), ",", cell(r.provenance().host()), ",",
                      r.provenance().unix_time_s(), ",", cell(*e.detail), "\n");
    }
  }
  return csv;
}

std::string RenderSvgChart(const tuning::TuningDatabase& database, const TileOpRegistry& ops) {
  // One row per record: the problem, a bar to the winner's fraction of the size-matched
  // ceiling (cudaMemcpy of the same bytes; the DRAM ceiling for records without one), a tick
  // at the library baseline's, under the bar the range each path family's measured
  // candidates spanned, and the winner's figures at the right.
  struct Row {
    std::string label, tooltip, value;
    double winner = 0;  // fraction of the reference: memcpy of the same bytes, or as below
    double baseline = -1;  // the library baseline's fraction of it; < 0 for none
    std::string winner_family;
    std::map<std::string, std::pair<double, double>> spans;  // family -> min, max
  };
  std::vector<Row> rows;
  std::vector<std::string> families;  // in order of first appearance
  auto family_index = [&](const std::string& family) {
    auto it = std::find(families.begin(), families.end(), family);
    if (it != families.end()) return static_cast<size_t>(it - families.begin());
    families.push_back(family);
    return families.size() - 1;
  };
  double scale = 1.1;
  for (const tuning::TuningRecord& r : database.records()) {
    Row row;
    const std::string name =
        absl::StrCat(ops.DescribeProblem(r.problem()), " on ", ShortDevice(r.device()));
    row.tooltip = name;
    row.label = Cut(name, kMaxLabel);
    const tuning::Statistics& w = r.winner_statistics();
    // The size-matched ceiling; for records without one, the DRAM ceiling, else the
    // fastest candidate.
    const bool size_matched = r.size_matched_ceiling_gbps() > 0;
    double reference = size_matched ? r.size_matched_ceiling_gbps() : w.ceiling_gbps();
    if (reference <= 0) {
      for (const Entry& e : Entries(r)) {
        if (e.statistics != nullptr) reference = std::max(reference, e.statistics->gbps());
      }
    }
    row.winner_family = Family(r.winner());
    family_index(row.winner_family);
    if (reference > 0) {
      // The table's figure: the winner's fraction of memcpy in the interleaved rounds; the
      // candidates scaled alike, by their GB/s over the winner's.
      row.winner = size_matched && r.fraction_of_size_matched_ceiling() > 0
                       ? r.fraction_of_size_matched_ceiling()
                       : w.gbps() / reference;
      const double per_gbps = w.gbps() > 0 ? row.winner / w.gbps() : 1 / reference;
      for (const Entry& e : Entries(r)) {
        if (e.statistics == nullptr || e.statistics->gbps() <= 0) continue;
        if (!e.winner && e.status != tuning::CandidateResult::OK) continue;
        const double f = e.statistics->gbps() * per_gbps;
        const std::string family = Family(*e.variant);
        family_index(family);
        auto [it, fresh] = row.spans.emplace(family, std::make_pair(f, f));
        if (!fresh) {
          it->second.first = std::min(it->second.first, f);
          it->second.second = std::max(it->second.second, f);
        }
        scale = std::max(scale, std::min(f, 2.0) + 0.05);
      }
    }
    const tuning::Baseline* main = MainBaseline(r);
    std::string vs;
    if (main != nullptr && main->name() != "cudaMemcpy") {
      vs = absl::StrFormat(", %.2fx %s", main->speedup(), main->name());
      if (reference > 0 && main->speedup() > 0) {
        // Its speedup is measured in the same rounds as the winner's figure.
        row.baseline = row.winner / main->speedup();
        scale = std::max(scale, std::min(row.baseline, 2.0) + 0.05);
      }
    }
    row.value = size_matched ? absl::StrFormat("%.2f of memcpy%s, %.0f GB/s, %.2f us, %s",
                                               row.winner, vs, w.gbps(), w.median_us(),
                                               row.winner_family)
                : w.ceiling_gbps() > 0
                    ? absl::StrFormat("%.2f of DRAM ceiling%s, %.0f GB/s, %.2f us, %s", row.winner,
                                      vs, w.gbps(), w.median_us(), row.winner_family)
                    : absl::StrFormat("%.0f GB/s (no ceiling)%s, %.2f us, %s", w.gbps(), vs,
                                      w.median_us(), row.winner_family);
    rows.push_back(std::move(row));
  }
  double label_width = TextWidth("problem");
  double value_width = 0;
  for (const Row& row : rows) {
    label_width = std::max(label_width, TextWidth(row.label));
    value_width = std::max(value_width, TextWidth(row.value));
  }
  const char* const title =
      "Winner of each problem as a fraction of cudaMemcpy of the same bytes (dashed); black "
      "tick: the library baseline (cudnnIm2Col); under each bar, the range of each path "
      "family's candidates";
  const double chart_left = kMargin + label_width + 12;
  const double chart_right = chart_left + kChartWidth;
  const double width = std::max({chart_right + 10 + value_width + kMargin,
                                 2 * kMargin + TextWidth(title) * 13 / 11, 600.0});
  auto x_of = [&](double fraction) {
    return chart_left + kChartWidth * std::clamp(fraction, 0.0, scale) / scale;
  };
  std::string body;
  double y = kMargin + 14;
  absl::StrAppend(&body, absl::StrFormat("<text class=\"title\" x=\"%.1f\" y=\"%.1f\">%s</text>\n",
                                         kMargin, y, XmlEscape(title)));
  // The legend, wrapped to the canvas.
  y += 20;
  double x = kMargin;
  for (size_t k = 0; k < families.size(); ++k) {
    const double item = 16 + TextWidth(families[k]) + 14;
    if (x + item > width - kMargin && x > kMargin) {
      x = kMargin;
      y += 16;
    }
    absl::StrAppend(&body,
                    absl::StrFormat("<rect x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"10\" "
                                    "fill=\"%s\"/><text x=\"%.1f\" y=\"%.1f\">%s</text>\n",
                                    x, y - 9, kFamilyColors[k % kColors], x + 14, y,
                                    XmlEscape(families[k])));
    x += item;
  }
  // The axis: fractions of the ceiling, the ceiling itself dashed.
  y += 22;
  const double axis_y = y;
  const double rows_top = axis_y + 8;
  const double rows_bottom =
      rows_top + kRowHeight * static_cast<double>(std::max<size_t>(rows.size(), 1));
  for (double tick = 0; tick <= scale + 1e-9; tick += 0.25) {
    absl::StrAppend(&body, absl::StrFormat("<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" "
                                           "x2=\"%.1f\" y2=\"%.1f\"/><text class=\"tick\" "
                                           "x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.2f"
                                           "</text>\n",
                                           x_of(tick), rows_top, x_of(tick), rows_bottom,
                                           x_of(tick), axis_y, tick));
  }
  absl::StrAppend(&body, absl::StrFormat("<line class=\"ceiling\" x1=\"%.1f\" y1=\"%.1f\" "
                                         "x2=\"%.1f\" y2=\"%.1f\"/>\n",
                                         x_of(1.0), rows_top, x_of(1.0), rows_bottom));
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& row = rows[i];
    const double top = rows_top + kRowHeight * static_cast<double>(i);
    const double text_y = top + kBarHeight;
    absl::StrAppend(
        &body, absl::StrFormat("<g class=\"row\"><title>%s</title>\n", XmlEscape(row.tooltip)),
        absl::StrFormat("<text class=\"label\" x=\"%.1f\" y=\"%.1f\">%s</text>\n", kMargin,
                        text_y, XmlEscape(row.label)),
        absl::StrFormat("<rect class=\"bar winner\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                        "height=\"%.1f\" fill=\"%s\"/>\n",
                        chart_left, top + 2, x_of(row.winner) - chart_left, kBarHeight,
                        kFamilyColors[family_index(row.winner_family) % kColors]));
    if (row.baseline >= 0) {
      absl::StrAppend(&body, absl::StrFormat("<line class=\"baseline\" x1=\"%.1f\" y1=\"%.1f\" "
                                             "x2=\"%.1f\" y2=\"%.1f\"/>\n",
                                             x_of(row.baseline), top, x_of(row.baseline),
                                             top + kBarHeight + 4));
    }
    size_t k = 0;
    for (const auto& [family, span] : row.spans) {
      const double line_y = top + kBarHeight + 5 + 2.5 * static_cast<double>(k++ % 3);
      absl::StrAppend(&body, absl::StrFormat("<line class=\"span\" x1=\"%.1f\" y1=\"%.1f\" "
                                             "x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n",
                                             x_of(span.first), line_y,
                                             std::max(x_of(span.second), x_of(span.first) + 1.5),
                                             line_y, kFamilyColors[family_index(family) % kColors]));
    }
    absl::StrAppend(&body,
                    absl::StrFormat("<text class=\"value\" x=\"%.1f\" y=\"%.1f\">%s</text>\n",
                                    chart_right + 10, text_y, XmlEscape(row.value)),
                    "</g>\n");
  }
  if (rows.empty()) {
    absl::StrAppend(&body, absl::StrFormat("<text x=\"%.1f\" y=\"%.1f\">empty tuning database"
                                           "</text>\n",
                                           kMargin, rows_top + 14));
  }
  const double height = rows_bottom + kMargin;
  std::string svg = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
      "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"11\">\n",
      std::ceil(width), std::ceil(height), std::ceil(width), std::ceil(height));
  absl::StrAppend(&svg,
                  "<style>\n"
                  ".title { font-size: 13px; font-weight: bold; }\n"
                  ".grid { stroke: #dddddd; stroke-width: 1; }\n"
                  ".tick { fill: #555555; font-size: 10px; }\n"
                  ".ceiling { stroke: #d62828; stroke-width: 1.5; stroke-dasharray: 5 3; }\n"
                  ".span { stroke-width: 2; }\n"
                  ".baseline { stroke: #000000; stroke-width: 2.5; }\n"
                  "</style>\n",
                  "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n", body, "</svg>\n");
  return svg;
}

std::vector<tuning::FileWrite> ReportFiles(const tuning::TuningDatabase& database,
                                           absl::string_view database_bytes,
                                           absl::string_view database_path,
                                           const TileOpRegistry& ops) {
  const ReportPaths paths = ReportPathsFor(database_path);
  const size_t slash = paths.svg.rfind('/');
  const std::string svg_link = slash == std::string::npos ? paths.svg : paths.svg.substr(slash + 1);
  return {{paths.svg, RenderSvgChart(database, ops)},
          {paths.candidates, RenderCandidatesCsv(database, ops)},
          {paths.markdown,
           RenderMarkdownReport(database, svg_link, ops, Sha256Hex(database_bytes))}};
}

absl::Status WriteReport(const tuning::TuningDatabase& database, absl::string_view database_bytes,
                         absl::string_view database_path, const TileOpRegistry& ops) {
  return tuning::WriteFilesAtomically(ReportFiles(database, database_bytes, database_path, ops));
}

absl::Status CheckReport(absl::string_view database_path, absl::string_view database_bytes) {
  const std::string markdown = ReportPathsFor(database_path).markdown;
  // The line sits near the top: a bounded read of the start suffices.
  absl::StatusOr<std::string> head = tuning::ReadFileToString(markdown, int64_t{64} << 20);
  if (absl::IsNotFound(head.status())) return absl::OkStatus();
  const std::string regenerate = absl::StrCat(
      "; rewrite it with `autotune merge ", database_path, " -o ", database_path, " --report`");
  if (!head.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        markdown, " cannot be checked against ", database_path, ": ", head.status().message()));
  }
  const size_t at = head->find(kDescribesPrefix);
  const std::string actual = Sha256Hex(database_bytes);
  if (at == std::string::npos) {
    return absl::FailedPreconditionError(absl::StrCat(
        markdown, " names no database checksum, so it may not describe ", database_path,
        regenerate));
  }
  const std::string named = head->substr(at + std::strlen(kDescribesPrefix), 64);
  if (named != actual) {
    return absl::FailedPreconditionError(absl::StrCat(
        markdown, " describes another version of ", database_path, " (sha256 ",
        named.substr(0, 16), "..., the file's is ", actual.substr(0, 16),
        "...): a write was interrupted between the two", regenerate));
  }
  return absl::OkStatus();
}

}  // namespace autotune
}  // namespace tiletune

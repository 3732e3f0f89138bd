// A human-readable report of a tuning database: Markdown, an SVG summary chart and a CSV
// of every candidate. Problems are described by their operators' definitions (`ops`).
//
// The Markdown is short: the database's checksum, a summary (geomean fraction of memcpy
// and speedup over each baseline), the chart, and one table line per record (one problem
// on one device): the winner, its GB/s, its speedup over the baseline the problem replaces
// (cudnnIm2Col for im2col, cudaMemcpy otherwise), its fraction of the size-matched ceiling
// (cudaMemcpy of the same bytes, in the interleaved rounds: the chart's figure too) and of
// the DRAM ceiling, the spread of the measured candidates' medians and how many
// candidates ended in each status. Every database string is escaped (HTML and Markdown).
// Per-candidate figures are in the CSV.
// The SVG is read at a glance: one row per problem, a bar to the winner's fraction of the
// size-matched ceiling (dashed line at 1; the DRAM ceiling for records measured without
// baselines) coloured by its path family, a black tick at the library baseline's
// fraction, under the bar the range each family's measured candidates spanned, and the
// winner's figures at the right; the canvas is as wide as its longest label (names
// beyond 80 characters are cut, whole in a tooltip), so no text leaves it. Per-candidate
// detail is in the Markdown. Both are plain text built here, deterministic for a given
// database.
//
//   TT_ASSIGN_OR_RETURN(TuningDatabase db, ReadTuningDatabase("out/h200.txtpb"));
//   TT_RETURN_IF_ERROR(WriteReport(db, "out/h200.txtpb", BuiltinTileOps()));
//   // wrote out/h200.report.md and out/h200.report.svg
#ifndef AUTOTUNE_REPORT_H_
#define AUTOTUNE_REPORT_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "compiler/ops/registry.h"
#include "compiler/tuning_db/atomic_file.h"
#include "compiler/tuning_db/tuning_db.pb.h"

namespace tiletune {
namespace autotune {

struct ReportPaths {
  std::string markdown;    // <database path without extension>.report.md
  std::string svg;         // <database path without extension>.report.svg
  std::string candidates;  // <database path without extension>.candidates.csv
};

// The report files that belong next to the database at `database_path`.
ReportPaths ReportPathsFor(absl::string_view database_path);

// The Markdown report. `svg_link` is the chart's path relative to the Markdown file
// (embedded as an image); empty for none. `database_sha256`, when given, is the SHA-256
// (hex) of the database file the report describes, named in its second line.
std::string RenderMarkdownReport(const tuning::TuningDatabase& database, absl::string_view svg_link,
                                 const TileOpRegistry& ops,
                                 absl::string_view database_sha256 = "");

// The SVG chart: a row per record, in database order.
std::string RenderSvgChart(const tuning::TuningDatabase& database, const TileOpRegistry& ops);

// Every candidate of every record, the winner first: status, variant, statistics, the
// record's main baseline and provenance (RFC 4180 CSV; a cell that could start a
// spreadsheet formula is prefixed with a quote mark).
std::string RenderCandidatesCsv(const tuning::TuningDatabase& database, const TileOpRegistry& ops);

// The two files of the report (ReportPathsFor(database_path)) with their contents, for
// WriteFilesAtomically beside the database they describe, after it and in this order (the
// chart, then the Markdown). `database_bytes` are the database file's bytes: the Markdown
// names their SHA-256, so that CheckReport can tell a report left describing another
// version of the file (a write interrupted between the database and its report).
std::vector<tuning::FileWrite> ReportFiles(const tuning::TuningDatabase& database,
                                           absl::string_view database_bytes,
                                           absl::string_view database_path,
                                           const TileOpRegistry& ops);

// Writes both files (ReportPathsFor(database_path)) atomically. Errors name the path.
absl::Status WriteReport(const tuning::TuningDatabase& database, absl::string_view database_bytes,
                         absl::string_view database_path, const TileOpRegistry& ops);

// Whether the report beside `database_path` describes the database file whose bytes are
// `database_bytes`: OK when it does or there is no report; FailedPrecondition naming both
// files and the command that rewrites the report when it names another SHA-256 or none.
absl::Status CheckReport(absl::string_view database_path, absl::string_view database_bytes);

}  // namespace autotune
}  // namespace tiletune

#endif  // AUTOTUNE_REPORT_H_

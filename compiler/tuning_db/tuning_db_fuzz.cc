// libFuzzer target for the tuning database reader: any bytes, read as binary and as text.
//
// The reader must never crash, and what it accepts must be a database that writes and
// reads back unchanged in both formats; the target traps otherwise. Errors must name
// their origin.
//
// A tt_fuzz_binary: with clang (.ci/fuzz.sh, which runs it in CI from fuzz_corpus/ for a
// bounded time) a libFuzzer binary; with gcc a main that replays the files it is given.
// tuning_db_fuzz_test runs this entry point over truncated and mutated databases in every
// `bazel test`. By hand, with Debian's clang 14 (a separate output base keeps the gcc
// build's cache and symlinks; the --copt instruments the reader's libraries too):
//
//   bazel --output_base=/tmp/tiletune-clang build --repo_env=CC=clang --symlink_prefix=/
//       --copt=-fsanitize=fuzzer-no-link,address //compiler/tuning_db:tuning_db_fuzz
//   /tmp/tiletune-clang/execroot/tiletune/bazel-out/k8-fastbuild/bin/compiler/tuning_db/tuning_db_fuzz
//       -max_total_time=120 $(mktemp -d) compiler/tuning_db/fuzz_corpus
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "compiler/tuning_db/tuning_db.h"
#include "compiler/tuning_db/tuning_db.pb.h"
#include "google/protobuf/util/message_differencer.h"

namespace {

using ::tiletune::tuning::DatabaseFormat;
using ::tiletune::tuning::ParseTuningDatabase;
using ::tiletune::tuning::SerializeTuningDatabase;
using ::tiletune::tuning::TuningDatabase;

void Check(bool condition) {
  if (!condition) __builtin_trap();
}

void ReadAs(absl::string_view bytes, DatabaseFormat format) {
  absl::StatusOr<TuningDatabase> database = ParseTuningDatabase(bytes, format, "<fuzz input>");
  if (!database.ok()) {
    Check(absl::StartsWith(database.status().message(), "<fuzz input>"));
    return;
  }
  for (DatabaseFormat out : {DatabaseFormat::kBinary, DatabaseFormat::kText}) {
    absl::StatusOr<std::string> written = SerializeTuningDatabase(*database, out);
    Check(written.ok());
    absl::StatusOr<TuningDatabase> again = ParseTuningDatabase(*written, out, "<round trip>");
    Check(again.ok());
    Check(google::protobuf::util::MessageDifferencer::Equals(*again, *database));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  ReadAs(bytes, DatabaseFormat::kBinary);
  ReadAs(bytes, DatabaseFormat::kText);
  return 0;
}

// The tuning databases a Library reads, stacked: where two hold a record of the same
// problem on the same GPU model, the one higher in the stack answers.
//
//   1. baked        kernels compiled into the program by the tiletune_kernels rule
//   2. listed       LibraryOptions::databases, else $TILETUNE_DB (':'-separated), in the
//                   order given
//   3. user folder  every database file (*.txtpb, *.textproto, *.pb) in the user database
//                   folder (DefaultUserDirectory()), by name, except that the records tuned on
//                   a miss (tuned_on_miss.txtpb) come after the folder's other files
//   4. built in     the databases compiled into the library (kernels/tuned/), unless
//                   LibraryOptions::builtin is false or $TILETUNE_BUILTIN_DB=0
//
// A file that does not read (missing, corrupt, another project's, a newer schema) is
// reported once, on stderr and in DatabaseStack::status, and left out; the rest serve. A
// file of records made by another tiletune version is noted once: its records are still
// used.
//
//   DatabaseStack stack = LoadDatabaseStack(options);
//   for (const DatabaseLayer& layer : stack.layers) printf("%s\n", layer.origin.c_str());
#ifndef KERNELS_DATABASE_STACK_H_
#define KERNELS_DATABASE_STACK_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "compiler/tuning_db/tuning_db.h"
#include "compiler/tuning_db/tuning_db.pb.h"
#include "kernels/prebuilt.h"
#include "kernels/shipped_databases.h"

namespace tiletune {

// Where records tuned on a miss go, inside the user database folder.
inline constexpr char kTunedOnMissFile[] = "tuned_on_miss.txtpb";

// $TILETUNE_DB_DIR, else $XDG_DATA_HOME/tiletune, else $HOME/.local/share/tiletune; empty
// when none of these can be formed.
std::string DefaultUserDirectory();

struct DatabaseLayer {
  enum class Kind { kBaked, kListed, kUserFolder, kBuiltIn };
  Kind kind = Kind::kBuiltIn;
  // A file path, "//pkg:kernels (baked)" or "kernels/tuned/h200.txtpb (built in)".
  std::string origin;
  tuning::TuningDatabase database;
};

struct DatabaseStackOptions {
  // Kernel sets baked into the program.
  std::vector<const PrebuiltKernelSet*> baked;
  // Files stacked over the user folder and the built-in databases, first wins.
  std::vector<std::string> listed;
  // The user database folder; empty for none. A folder that does not exist is no error.
  std::string user_directory;
  // Also read (in the user-folder place) when it lies outside the folder: where records
  // tuned on a miss are written.
  std::string tuned_on_miss_database;
  // The built-in databases; empty for none.
  std::vector<ShippedDatabase> builtin;
  // The operators' checks of each record.
  tuning::RecordValidator validator;
  // Messages go to stderr; off, they are only in DatabaseStack::messages.
  bool print = true;
};

struct DatabaseStack {
  // Highest precedence first.
  std::vector<DatabaseLayer> layers;
  // OK, or the first reason a database was left out.
  absl::Status status;
  // Everything reported (one line each, "tiletune: " left off).
  std::vector<std::string> messages;
};

DatabaseStack LoadDatabaseStack(const DatabaseStackOptions& options);

// "/a.txtpb, /b.pb, //x:k (baked), kernels/tuned/h200.txtpb (built in)".
std::string DescribeStack(const DatabaseStack& stack);

}  // namespace tiletune

#endif  // KERNELS_DATABASE_STACK_H_

// Whole-file reads and crash-safe whole-file writes.
//
// WriteFileAtomically writes to a temporary file in the destination's folder and renames
// it over the destination, so a reader sees the old contents or the new, never a partial
// file, and a failed write leaves no temporary file behind; WriteFilesAtomically does so
// for several files that belong together (a database and its report), renaming none until
// all are written. Thread-safe; concurrent
// writers of one path each install a complete file (the last rename wins).
//
//   TT_RETURN_IF_ERROR(WriteFileAtomically("out/report.md", markdown));
//   TT_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString("db.pb"));
#ifndef COMPILER_TUNING_DB_ATOMIC_FILE_H_
#define COMPILER_TUNING_DB_ATOMIC_FILE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tiletune {
namespace tuning {

// Reads without a size limit.
inline constexpr int64_t kNoSizeLimit = -1;

// The contents of `path`. NotFound naming the path when it does not exist; another error
// naming the path and the system's reason when it cannot be read (a folder, no
// permission); with `max_bytes` >= 0, ResourceExhausted naming the size and the limit for
// a file larger than that, checked before reading a regular file and while reading
// anything else (a pipe, /dev/zero), so a huge input costs no memory.
absl::StatusOr<std::string> ReadFileToString(absl::string_view path,
                                             int64_t max_bytes = kNoSizeLimit);

// One file of a WriteFilesAtomically call.
struct FileWrite {
  std::string path;
  std::string contents;
};

// Replaces each file's `path` with its `contents`: every target is checked (a folder there
// is an error), then every new file is written to `<folder>/.<name>.tmp-<host>-<pid>-<n>` and
// flushed to disk, and only then are they renamed into place, in order, each folder
// synced. A failure before the renames leaves every old file as it was and no temporary
// behind; the error says so. A path that is a symbolic link is written through (its
// target is replaced, the link kept); a replaced file keeps its mode (new files get 0666
// minus the umask; a symlink loop is an error). Temporaries of this name left on this host
// by processes that no longer exist (killed writes) are removed first. The folders must
// exist.
absl::Status WriteFilesAtomically(const std::vector<FileWrite>& files);

// WriteFilesAtomically of one file.
absl::Status WriteFileAtomically(absl::string_view path, absl::string_view contents);

}  // namespace tuning
}  // namespace tiletune

#endif  // COMPILER_TUNING_DB_ATOMIC_FILE_H_

// Whole-file reads and crash-safe whole-file writes.
//
// WriteFileAtomically writes to a temporary file in the destination's folder and renames
// it over the destination, so a reader sees the old contents or the new, never a partial
// file, and a failed write leaves no temporary file behind; WriteFilesAtomically does so
// for several files that belong together (a database and its report), renaming none until
// all are written. What is at a destination is never destroyed: a device node or a pipe
// is written through (or refused), never replaced by a regular file. Thread-safe;
// concurrent writers of one path each install a complete file (the last rename wins:
// writers that must merge take a FileLock, file_lock.h).
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

// What a write to a path meets there (symbolic links followed).
enum class OutputKind {
  kNew,      // nothing there yet: a new regular file is created
  kRegular,  // a regular file: replaced atomically
  kStream,   // a character device or a pipe (/dev/null, /dev/stdout | ...): written
             // through, in place, with the device's own semantics (/dev/null discards,
             // /dev/full fails with ENOSPC); nothing there can be resumed or locked
};

// What a write to `path` would meet, or an error naming the path and what is there when
// tiletune refuses to write it: a folder, a block device, a socket, a memory device
// (/dev/mem, /dev/kmem, /dev/port), or a symbolic-link loop.
absl::StatusOr<OutputKind> ClassifyOutput(absl::string_view path);

// `<folder>/.<name><suffix>` for the file `<folder>/<name>` at `path`: where tiletune
// keeps what belongs to a file (its temporaries, its lock). When that name would pass
// NAME_MAX (255 bytes), `name` is cut and 16 hex digits of its SHA-256 stand in for the
// rest, so every legal file name has one, and different names different ones.
std::string SiblingPath(absl::string_view path, absl::string_view suffix);

// Replaces each file's `path` with its `contents`: every target is checked
// (ClassifyOutput: a folder, block device or socket there is an error), then every new
// file is written to a temporary `SiblingPath(target, ".tmp-<16 random hex digits>")`
// held under an exclusive flock while it exists, and flushed to disk; only then are they
// renamed into place, in order, each folder synced. A failure before the renames leaves
// every old file as it was and no temporary behind; the error says so. A path that is a
// symbolic link is written through (its target is replaced, the link kept); a replaced
// file keeps its mode (new files get 0666 minus the umask). A kStream target is written
// through in its turn, not replaced. Temporaries of the same target that no live writer
// holds (what a killed write left, on any host or in any PID namespace sharing the
// folder) are removed first; one that a writer holds is never touched. The folders must
// exist.
absl::Status WriteFilesAtomically(const std::vector<FileWrite>& files);

// WriteFilesAtomically of one file.
absl::Status WriteFileAtomically(absl::string_view path, absl::string_view contents);

}  // namespace tuning
}  // namespace tiletune

#endif  // COMPILER_TUNING_DB_ATOMIC_FILE_H_

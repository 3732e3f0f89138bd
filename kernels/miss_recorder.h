// Capture for "my workload -> a tuned database for it": every problem a program resolves
// without an exact record, appended once to a suite file that `autotune --suite` tunes.
//
//   TILETUNE_RECORD_MISSES=misses.txt ./my_program        # or LibraryOptions::record_misses
//   bazel run //autotune -- --suite=misses.txt --output=mine.txtpb
//   bazel run //autotune -- merge mine.txtpb --winners_only -o ~/.local/share/tiletune/mine.txtpb
//
// Each line is a problem spec and a comment saying how it resolved and on which GPU:
//   copy:f16:src=300x4097[0:300,3:4000]:dst=300x3997   # nearest on NVIDIA H200: ...
// A problem is written once per file: the file is read and appended under an exclusive
// lock (flock), so concurrent processes neither duplicate nor lose lines. Only a problem's
// first resolution in a process touches the file. A file that cannot be written costs one
// warning on stderr, never a launch.
#ifndef KERNELS_MISS_RECORDER_H_
#define KERNELS_MISS_RECORDER_H_

#include <set>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace tiletune {

class MissRecorder {
 public:
  // Records to `path`. Thread-safe.
  explicit MissRecorder(std::string path) : path_(std::move(path)) {}

  // Appends `spec` with `comment` unless the file (or this process) has it already.
  void Record(absl::string_view spec, absl::string_view comment);

  const std::string& path() const { return path_; }

 private:
  const std::string path_;
  absl::Mutex mutex_;
  std::set<std::string> seen_ ABSL_GUARDED_BY(mutex_);
  bool warned_ ABSL_GUARDED_BY(mutex_) = false;
};

}  // namespace tiletune

#endif  // KERNELS_MISS_RECORDER_H_

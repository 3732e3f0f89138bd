// The identity of a generated kernel, as tuning records name it: the SHA-256 of its CUDA
// source's code, with comments dropped and every run of whitespace made one space. Two
// sources that differ only in comments or layout are one kernel, so rewording an emitter's
// comment does not invalidate the records that timed its kernels; any change to the code
// does.
//
//   variant.set_source_sha256(KernelDigest(source.text));
#ifndef COMPILER_CUDA_KERNEL_DIGEST_H_
#define COMPILER_CUDA_KERNEL_DIGEST_H_

#include <string>

#include "absl/strings/string_view.h"

namespace tiletune {

// `source` without its // and /* */ comments (string and character literals kept whole)
// and with each run of whitespace one space, leading and trailing space dropped.
std::string KernelCode(absl::string_view source);

// Sha256Hex(KernelCode(source)): 64 hex digits.
std::string KernelDigest(absl::string_view source);

}  // namespace tiletune

#endif  // COMPILER_CUDA_KERNEL_DIGEST_H_

// Buffers and regions: what a tile operator reads and writes.
//
// A Buffer is a strided tensor of one DataType in one memory Scope. A Region is a box of a
// buffer: per-dimension offsets and extents, rank 1 to 5. The whole buffer and a single
// element are regions too.
//
//   Buffer image = Buffer::RowMajor("img", DataType::kF16, Scope::kGlobal, {8192, 8192});
//   Region slice = Region::Box(image, /*offsets=*/{0, 64}, /*extents=*/{8192, 4096});
//   TT_RETURN_IF_ERROR(ValidateRegion(slice));
#ifndef COMPILER_IR_BUFFER_H_
#define COMPILER_IR_BUFFER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "compiler/ir/data_type.h"

namespace tiletune {

enum class Scope {
  kGlobal,
  kShared,
  kFragment,
  kLocal,
};

// "global", "shared", "fragment", "local".
std::string ScopeName(Scope scope);
absl::StatusOr<Scope> ParseScope(absl::string_view name);

inline constexpr int kMaxRank = 5;

struct Buffer {
  std::string name;
  DataType dtype = DataType::kF32;
  Scope scope = Scope::kGlobal;
  // Extent of each dimension, outermost first.
  std::vector<int64_t> shape;
  // Distance in elements between neighbours along each dimension, outermost first.
  std::vector<int64_t> strides;

  // A dense buffer whose last dimension is contiguous.
  static Buffer RowMajor(std::string name, DataType dtype, Scope scope,
                         std::vector<int64_t> shape);
  int rank() const { return static_cast<int>(shape.size()); }
  // Whether the strides are those of RowMajor(shape).
  bool IsRowMajor() const;
  // Whether no two indices reach the same element (what an output buffer needs): ordered
  // by stride, each stride is at least the span of the dimensions inside it, extent-1
  // dimensions aside.
  bool ElementsAreDistinct() const;
  // One past the farthest element any index can reach, in elements.
  int64_t SpanElements() const;
};

struct Region {
  Buffer buffer;
  std::vector<int64_t> offsets;
  std::vector<int64_t> extents;

  static Region Whole(const Buffer& buffer);
  static Region Element(const Buffer& buffer, std::vector<int64_t> index);
  static Region Box(const Buffer& buffer, std::vector<int64_t> offsets,
                    std::vector<int64_t> extents);
  int rank() const { return static_cast<int>(extents.size()); }
  int64_t NumElements() const;
  // Element offset of the region's first element from the buffer's start.
  int64_t BaseOffsetElements() const;
};

// Bytes from a buffer's first element to one past its farthest element.
size_t SpanBytes(const Buffer& buffer);

// The most bytes a buffer may span (256 TiB: beyond any GPU, and far enough inside int64
// that sizes, offsets and tile counts derived from it cannot overflow).
inline constexpr int64_t kMaxBufferBytes = int64_t{1} << 48;

// Rank 1..5, positive extents, non-negative strides that fit the shape, a span of at most
// kMaxBufferBytes (computed without overflow), and a non-empty name. Errors name the
// buffer, the dimension and the bad value.
absl::Status ValidateBuffer(const Buffer& buffer);
// The buffer is valid, offsets + extents stay inside it, and it has at most 2^48 elements.
absl::Status ValidateRegion(const Region& region);

// "name[0:8192, 64:4160]" for messages and logs.
std::string RegionToString(const Region& region);

}  // namespace tiletune

#endif  // COMPILER_IR_BUFFER_H_

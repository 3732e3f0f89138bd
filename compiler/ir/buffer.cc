#include "compiler/ir/buffer.h"

#include <algorithm>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tiletune {
namespace {

// a * b and a + b, saturating at INT64_MAX (and INT64_MIN) instead of overflowing: sizes of
// hostile buffers stay ordered and past every limit, so validation names them instead of
// a wrapped value.
int64_t SaturatingMul(int64_t a, int64_t b) {
  int64_t product = 0;
  if (!__builtin_mul_overflow(a, b, &product)) return product;
  return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
}

int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b < 0 ? INT64_MIN : INT64_MAX;
}

}  // namespace

std::string ScopeName(Scope scope) {
  switch (scope) {
    case Scope::kGlobal: return "global";
    case Scope::kShared: return "shared";
    case Scope::kFragment: return "fragment";
    case Scope::kLocal: return "local";
  }
  return "unknown";
}

absl::StatusOr<Scope> ParseScope(absl::string_view name) {
  for (Scope scope : {Scope::kGlobal, Scope::kShared, Scope::kFragment, Scope::kLocal}) {
    if (name == ScopeName(scope)) return scope;
  }
  if (name == "shared.dyn") return Scope::kShared;
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown scope '", name, "': accepted are global, shared, fragment, local"));
}

Buffer Buffer::RowMajor(std::string name, DataType dtype, Scope scope,
                        std::vector<int64_t> shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i) {
    strides[i] = SaturatingMul(strides[i + 1], shape[i + 1]);
  }
  return Buffer{std::move(name), dtype, scope, std::move(shape), std::move(strides)};
}

bool Buffer::IsRowMajor() const {
  if (strides.size() != shape.size()) return false;
  int64_t expected = 1;
  for (int i = rank() - 1; i >= 0; --i) {
    if (strides[i] != expected) return false;
    expected = SaturatingMul(expected, shape[i]);
  }
  return true;
}

bool Buffer::ElementsAreDistinct() const {
  std::vector<int> dims;
  for (int d = 0; d < rank(); ++d) {
    if (shape[d] > 1) dims.push_back(d);
  }
  std::sort(dims.begin(), dims.end(), [&](int a, int b) { return strides[a] < strides[b]; });
  int64_t span = 1;  // elements covered by the dimensions so far
  for (int d : dims) {
    if (strides[d] < span) return false;
    span = SaturatingAdd(span, SaturatingMul(strides[d], shape[d] - 1));
  }
  return true;
}

int64_t Buffer::SpanElements() const {
  int64_t span = 1;
  for (int i = 0; i < rank(); ++i) span = SaturatingAdd(span, SaturatingMul(shape[i] - 1, strides[i]));
  return span;
}

Region Region::Whole(const Buffer& buffer) {
  return Region{buffer, std::vector<int64_t>(buffer.shape.size(), 0), buffer.shape};
}

Region Region::Element(const Buffer& buffer, std::vector<int64_t> index) {
  std::vector<int64_t> extents(index.size(), 1);
  return Region{buffer, std::move(index), std::move(extents)};
}

Region Region::Box(const Buffer& buffer, std::vector<int64_t> offsets,
                   std::vector<int64_t> extents) {
  return Region{buffer, std::move(offsets), std::move(extents)};
}

int64_t Region::NumElements() const {
  int64_t n = 1;
  for (int64_t e : extents) n = SaturatingMul(n, e);
  return n;
}

int64_t Region::BaseOffsetElements() const {
  int64_t offset = 0;
  for (int i = 0; i < rank(); ++i) {
    offset = SaturatingAdd(offset, SaturatingMul(offsets[i], buffer.strides[i]));
  }
  return offset;
}

size_t SpanBytes(const Buffer& buffer) {
  return static_cast<size_t>(buffer.SpanElements()) * DataTypeBytes(buffer.dtype);
}

absl::Status ValidateBuffer(const Buffer& buffer) {
  if (buffer.name.empty()) return absl::InvalidArgumentError("buffer has no name");
  if (buffer.rank() < 1 || buffer.rank() > kMaxRank) {
    return absl::InvalidArgumentError(absl::StrCat("buffer ", buffer.name, " has rank ",
                                                   buffer.rank(), "; accepted ranks are 1 to ",
                                                   kMaxRank));
  }
  if (buffer.strides.size() != buffer.shape.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "buffer ", buffer.name, " has ", buffer.strides.size(), " strides for ",
        buffer.shape.size(), " dimensions; give one stride per dimension"));
  }
  constexpr int64_t kMaxExtent = int64_t{1} << 40;
  for (int i = 0; i < buffer.rank(); ++i) {
    if (buffer.shape[i] <= 0 || buffer.shape[i] > kMaxExtent) {
      return absl::InvalidArgumentError(absl::StrCat("buffer ", buffer.name, " dimension ", i,
                                                     " has extent ", buffer.shape[i],
                                                     "; extents must be 1 to 2^40"));
    }
    if (buffer.strides[i] < 0 || buffer.strides[i] > kMaxExtent) {
      // A row-major stride past int64 saturates: say so rather than print INT64_MAX.
      const std::string stride = buffer.strides[i] == INT64_MAX
                                     ? std::string("of 2^63 or more (the product of the extents "
                                                   "inside it)")
                                     : absl::StrCat(buffer.strides[i]);
      return absl::InvalidArgumentError(absl::StrCat(
          "buffer ", buffer.name, " of shape [", absl::StrJoin(buffer.shape, ", "),
          "] has in dimension ", i, " a stride ", stride, "; strides must be 0 to 2^40 elements"));
    }
  }
  // The span in bytes, computed without overflow: extents and strides of 2^40 each would
  // wrap int64 in SpanElements().
  int64_t span = 1;
  for (int i = 0; i < buffer.rank(); ++i) {
    int64_t reach = 0;
    if (__builtin_mul_overflow(buffer.shape[i] - 1, buffer.strides[i], &reach) ||
        __builtin_add_overflow(span, reach, &span)) {
      span = kMaxBufferBytes + 1;
      break;
    }
  }
  int64_t bytes = 0;
  if (__builtin_mul_overflow(span, int64_t{DataTypeBytes(buffer.dtype)}, &bytes) ||
      bytes > kMaxBufferBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "buffer ", buffer.name, " of shape [", absl::StrJoin(buffer.shape, ", "), "] and strides [",
        absl::StrJoin(buffer.strides, ", "), "] spans more than 2^48 bytes; a buffer must fit "
        "in 2^48 bytes"));
  }
  return absl::OkStatus();
}

absl::Status ValidateRegion(const Region& region) {
  if (auto status = ValidateBuffer(region.buffer); !status.ok()) return status;
  const Buffer& b = region.buffer;
  if (region.rank() != b.rank() || static_cast<int>(region.offsets.size()) != b.rank()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "region of ", b.name, " has ", region.offsets.size(), " offsets and ",
        region.extents.size(), " extents for a rank-", b.rank(), " buffer; give one of each per "
        "dimension"));
  }
  int64_t elements = 1;
  for (int i = 0; i < b.rank(); ++i) {
    if (region.extents[i] > 0 && __builtin_mul_overflow(elements, region.extents[i], &elements)) {
      elements = kMaxBufferBytes + 1;
    }
    if (region.extents[i] <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("region of ", b.name, " dimension ", i,
                                                     " has extent ", region.extents[i],
                                                     "; extents must be positive"));
    }
    // Compared by subtraction: offset + extent could overflow.
    if (region.offsets[i] < 0 || region.offsets[i] > b.shape[i] - region.extents[i]) {
      return absl::OutOfRangeError(absl::StrCat(
          "region ", RegionToString(region), " leaves buffer ", b.name, " in dimension ", i,
          ": offset ", region.offsets[i], " + extent ", region.extents[i], " > shape ",
          b.shape[i]));
    }
  }
  if (elements > kMaxBufferBytes) {
    return absl::InvalidArgumentError(absl::StrCat("region ", RegionToString(region),
                                                   " has more than 2^48 elements"));
  }
  return absl::OkStatus();
}

std::string RegionToString(const Region& region) {
  std::vector<std::string> dims;
  for (int i = 0; i < region.rank() && i < static_cast<int>(region.offsets.size()); ++i) {
    // Hostile offsets must not overflow the message that reports them.
    int64_t end = 0;
    dims.push_back(__builtin_add_overflow(region.offsets[i], region.extents[i], &end)
                       ? absl::StrCat(region.offsets[i], ":+", region.extents[i])
                       : absl::StrCat(region.offsets[i], ":", end));
  }
  return absl::StrCat(region.buffer.name, "[", absl::StrJoin(dims, ", "), "]");
}

}  // namespace tiletune

#include "kernels/verify.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/base/parallel.h"
#include "compiler/base/status_macros.h"

namespace tiletune {

absl::StatusOr<VerificationImages> MakeVerificationImages(const TileOpDefinition& definition,
                                                          const TileOp& op,
                                                          std::mt19937_64& rng) {
  const OperandSizes sizes = definition.Sizes(op);
  VerificationImages images;
  images.input.resize(sizes.input_bytes + 2 * kGuardBytes);
  HostBytes& input = images.input;
  // Filled in pieces of 32 MiB, each from its own generator seeded by `rng`, on several
  // threads (tuning on a miss waits for this on a first call).
  constexpr size_t kChunk = size_t{32} << 20;
  const size_t chunks = (input.size() + kChunk - 1) / kChunk;
  std::vector<uint64_t> seeds(chunks);
  for (uint64_t& seed : seeds) seed = rng();
  ParallelFor(chunks, 1, [&](int64_t first, int64_t last) {
    for (size_t c = first; c < static_cast<size_t>(last); ++c) {
      std::mt19937_64 local(seeds[c]);
      const size_t end = std::min(input.size(), (c + 1) * kChunk);
      for (size_t i = c * kChunk; i < end; i += 8) {
        const uint64_t word = local();
        for (size_t j = 0; j < 8 && i + j < end; ++j) input[i + j] = uint8_t(word >> (8 * j));
      }
    }
  });
  // A non-zero poison, so an output written as zero is told apart from one left alone.
  images.poison = static_cast<uint8_t>(1 + rng() % 255);
  images.expected.resize(sizes.output_bytes + 2 * kGuardBytes);
  const size_t pieces = (images.expected.size() + kChunk - 1) / kChunk;
  ParallelFor(pieces, 1, [&](int64_t first, int64_t last) {
    const size_t from = first * kChunk;
    const size_t to = std::min(images.expected.size(), last * kChunk);
    std::memset(images.expected.data() + from, images.poison, to - from);
  });
  TT_RETURN_IF_ERROR(definition.Reference(
      op, absl::MakeConstSpan(input).subspan(kGuardBytes, sizes.input_bytes),
      absl::MakeSpan(images.expected).subspan(kGuardBytes, sizes.output_bytes)));
  return images;
}

absl::StatusOr<DeviceItems> UploadExampleItems(const Context& context,
                                               const TileOpDefinition& definition,
                                               const TileOp& op) {
  DeviceItems items;
  const ItemTableImage example = definition.ExampleItems(op);
  if (example.bytes.empty()) return items;
  TT_ASSIGN_OR_RETURN(DeviceBuffer table, DeviceBuffer::Allocate(context, example.bytes.size()));
  TT_RETURN_IF_ERROR(table.CopyFromHost(example.bytes.data(), example.bytes.size()));
  items.args = ItemArgs{table.ptr(), example.count};
  items.table = std::move(table);
  return items;
}

absl::Status VerifyTileKernel(const Context& context, TileKernel& kernel,
                              const TileOpDefinition& definition, const TileOp& op,
                              std::mt19937_64& rng) {
  TT_ASSIGN_OR_RETURN(VerificationImages images, MakeVerificationImages(definition, op, rng));
  TT_ASSIGN_OR_RETURN(DeviceBuffer input, DeviceBuffer::Allocate(context, images.input.size()));
  TT_ASSIGN_OR_RETURN(DeviceBuffer output,
                      DeviceBuffer::Allocate(context, images.expected.size()));
  TT_RETURN_IF_ERROR(input.CopyFromHost(images.input.data(), images.input.size()));
  TT_RETURN_IF_ERROR(output.Fill(images.poison));
  // Items listed at run time: the op's example, which the reference applied.
  TT_ASSIGN_OR_RETURN(DeviceItems items, UploadExampleItems(context, definition, op));
  // The op's own region offsets: `op` may be another op of the kernel's key.
  TT_ASSIGN_OR_RETURN(RegionOffsets offsets, definition.Offsets(op));
  TT_RETURN_IF_ERROR(kernel.Launch(input.ptr() + kGuardBytes, output.ptr() + kGuardBytes, offsets,
                                   /*stream=*/nullptr, items.get()));
  TT_RETURN_IF_ERROR(context.Synchronize());
  HostBytes got(images.expected.size());
  TT_RETURN_IF_ERROR(output.CopyToHost(got.data(), got.size()));
  HostBytes input_after(images.input.size());
  TT_RETURN_IF_ERROR(input.CopyToHost(input_after.data(), input_after.size()));
  return FirstMismatch(definition, op, images, got, input_after, kernel.lowered().kernel_name);
}

absl::Status FirstMismatch(const TileOpDefinition& definition, const TileOp& op,
                           const VerificationImages& images, const HostBytes& got,
                           const HostBytes& input_after, const std::string& name) {
  const OperandSizes sizes = definition.Sizes(op);
  const std::vector<std::string> names = definition.operand_names();
  const HostBytes& expected = images.expected;
  const uint8_t poison = images.poison;
  if (got.size() != expected.size() || input_after.size() != images.input.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "compared ", got.size(), " output and ", input_after.size(), " input bytes with images of ",
        expected.size(), " and ", images.input.size()));
  }
  if (input_after != images.input) {
    return absl::DataLossError(absl::StrCat(name, " wrote to its input buffer ", names[0]));
  }
  const std::string& out = names[1];
  const int element_bytes = DataTypeBytes(op.dtype());
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] == expected[i]) continue;
    std::string where;
    if (i < kGuardBytes) {
      where = absl::StrCat("guard zone before ", out, ", ", kGuardBytes - i, " B before the buffer");
    } else if (i >= kGuardBytes + sizes.output_bytes) {
      where = absl::StrCat("guard zone after ", out, ", ", i - kGuardBytes - sizes.output_bytes,
                           " B past its end");
    } else {
      const int64_t element = static_cast<int64_t>((i - kGuardBytes) / element_bytes);
      where = absl::StrCat(out, " byte ", i - kGuardBytes, " (",
                           definition.DescribeOutputElement(op, element), ")");
    }
    size_t wrong = 0;
    for (size_t j = i; j < got.size(); ++j) wrong += got[j] != expected[j];
    return absl::DataLossError(absl::StrCat(name, " wrote 0x", absl::Hex(got[i]), " at ", where,
                                            "; expected 0x", absl::Hex(expected[i]), " (poison 0x",
                                            absl::Hex(poison), "); ", wrong,
                                            " wrong byte(s) from there on"));
  }
  return absl::OkStatus();
}

}  // namespace tiletune

#include "compiler/ops/batch_copy/batch_copy_op.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/base/status_macros.h"

namespace tiletune {

const std::string& BatchCopyOp::Name() {
  static const std::string* const name = new std::string("batch_copy");
  return *name;
}

std::string BatchFormName(BatchForm form) {
  return form == BatchForm::kBlocks ? "blocks" : "regions";
}

int BatchEntryBytes(BatchForm form) { return form == BatchForm::kBlocks ? 16 : 24; }

HintScope BatchCopyHintScope() { return HintScope{BatchCopyOp::Name(), {}, {}}; }

absl::Status ValidateBatchCopyOp(const BatchCopyOp& op) {
  constexpr int64_t kMaxElements = int64_t{1} << 40;
  constexpr int64_t kMaxCount = int64_t{1} << 22;
  auto positive = [](const char* what, int64_t value, int64_t max) -> absl::Status {
    if (value < 1 || value > max) {
      return absl::InvalidArgumentError(absl::StrCat("batch_copy ", what, " ", value,
                                                     ": accepted are 1 to ", max));
    }
    return absl::OkStatus();
  };
  TT_RETURN_IF_ERROR(positive("item (elements per item)", op.item, kMaxElements));
  TT_RETURN_IF_ERROR(positive("src_items (items in the source pool)", op.src_items,
                              kMaxElements / op.item));
  TT_RETURN_IF_ERROR(positive("dst_items (items in the destination pool)", op.dst_items,
                              kMaxElements / op.item));
  // A launch may list more; tuning and verification build tables of `count` entries.
  TT_RETURN_IF_ERROR(positive("count (items per launch)", op.count,
                              std::min<int64_t>(op.dst_items, kMaxCount)));
  TT_RETURN_IF_ERROR(ResolveHints(op.hints, BatchCopyHintScope()).status());
  return absl::OkStatus();
}

std::vector<uint8_t> ExampleBatchTable(const BatchCopyOp& op, uint64_t seed) {
  std::mt19937_64 rng(seed ^ (static_cast<uint64_t>(op.count) * 0x9e3779b97f4a7c15ull) ^
                      static_cast<uint64_t>(op.item));
  // Distinct destination slots: a random sample (partial Fisher-Yates over at most 2^22
  // slots spread over the pool), or, for more items than that, the first `count` in order.
  constexpr int64_t kShuffled = int64_t{1} << 22;
  std::vector<int64_t> slot_of(static_cast<size_t>(op.count));
  if (op.count <= kShuffled) {
    const int64_t slots = std::min(op.dst_items, kShuffled);
    const int64_t stride = op.dst_items / slots;
    std::vector<int64_t> pool(static_cast<size_t>(slots));
    std::iota(pool.begin(), pool.end(), 0);
    for (int64_t i = 0; i < op.count; ++i) {
      std::uniform_int_distribution<int64_t> pick(i, slots - 1);
      std::swap(pool[static_cast<size_t>(i)], pool[static_cast<size_t>(pick(rng))]);
      slot_of[static_cast<size_t>(i)] = pool[static_cast<size_t>(i)] * stride;
    }
  } else {
    std::iota(slot_of.begin(), slot_of.end(), 0);
  }
  std::vector<int64_t> entries;
  for (int64_t i = 0; i < op.count; ++i) {
    const int64_t slot = slot_of[static_cast<size_t>(i)];
    std::uniform_int_distribution<int64_t> src_item(0, op.src_items - 1);
    if (op.form == BatchForm::kBlocks) {
      entries.push_back(src_item(rng));
      entries.push_back(slot);
    } else {
      std::uniform_int_distribution<int64_t> size(1, op.item);
      const int64_t n = size(rng);
      std::uniform_int_distribution<int64_t> src_at(0, op.src_items * op.item - n);
      std::uniform_int_distribution<int64_t> dst_in_slot(0, op.item - n);
      int64_t from = src_at(rng), to = slot * op.item + dst_in_slot(rng);
      // Seven items of eight start where tensors do, at 16-byte multiples of the pools
      // (what a tuning should measure); the eighth anywhere (what verification must see).
      const int64_t align = std::max<int64_t>(1, 16 / DataTypeBytes(op.element_type));
      if (i % 8 != 7) {
        from -= from % align;
        to = std::max(slot * op.item, to - to % align);
        if (to % align != 0) to = slot * op.item;  // the slot's own start
      }
      entries.push_back(from);
      entries.push_back(to);
      entries.push_back(n);
    }
  }
  std::vector<uint8_t> bytes(entries.size() * sizeof(int64_t));
  if (!entries.empty()) std::memcpy(bytes.data(), entries.data(), bytes.size());
  return bytes;
}

absl::Status BatchCopyReference(const BatchCopyOp& op, const uint8_t* table, int64_t entries,
                                const uint8_t* src, size_t src_size, uint8_t* dst,
                                size_t dst_size) {
  const int64_t e = DataTypeBytes(op.element_type);
  const int64_t src_elements = op.src_items * op.item;
  const int64_t dst_elements = op.dst_items * op.item;
  if (static_cast<int64_t>(src_size) < src_elements * e ||
      static_cast<int64_t>(dst_size) < dst_elements * e) {
    return absl::InvalidArgumentError(absl::StrCat(
        "batch_copy reference: pools of ", src_size, " and ", dst_size, " bytes; the op needs ",
        src_elements * e, " and ", dst_elements * e));
  }
  const int fields = BatchEntryBytes(op.form) / 8;
  for (int64_t i = 0; i < entries; ++i) {
    int64_t f[3] = {0, 0, op.item};
    std::memcpy(f, table + i * fields * 8, static_cast<size_t>(fields) * 8);
    int64_t from = f[0], to = f[1], n = f[2];
    if (op.form == BatchForm::kBlocks) {
      if (from < 0 || from >= op.src_items || to < 0 || to >= op.dst_items) continue;
      from *= op.item;
      to *= op.item;
    } else if (from < 0 || to < 0 || n < 0 || n > src_elements - from || n > dst_elements - to) {
      continue;
    }
    std::memcpy(dst + to * e, src + from * e, static_cast<size_t>(n * e));
  }
  return absl::OkStatus();
}

}  // namespace tiletune

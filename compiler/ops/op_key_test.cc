// The operators' cache keys (TileOpDefinition::AppendKey): every field and hint that can
// change a kernel changes the key, and operators never share one.

#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "compiler/ops/copy/copy_definition.h"
#include "compiler/ops/copy/copy_op.h"
#include "compiler/ops/im2col/im2col_definition.h"
#include "compiler/ops/im2col/im2col_op.h"
#include "compiler/ops/im2col/im2col_test_util.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace {

// Changes to the hints that each lower to a different kernel somewhere.
std::vector<std::pair<std::string, std::function<void(Hints&)>>> HintChanges() {
  return {
      {"coalesced_width", [](Hints& h) { h.coalesced_width = 2; }},
      {"disable_tma", [](Hints& h) { h.disable_tma = true; }},
      {"eviction_policy", [](Hints& h) { h.eviction_policy = EvictionPolicy::kEvictFirst; }},
      {"eviction_policy_last", [](Hints& h) { h.eviction_policy = EvictionPolicy::kEvictLast; }},
      {"prefer_instruction", [](Hints& h) { h.prefer_instruction = Instruction::kSync; }},
      {"loop_layout", [](Hints& h) { h.loop_layout = LoopLayout{4, 32}; }},
      {"loop_layout_other", [](Hints& h) { h.loop_layout = LoopLayout{32, 4}; }},
      {"annotation", [](Hints& h) { h.annotations["img_eviction_policy"] = "evict_last"; }},
      {"annotation_value",
       [](Hints& h) { h.annotations["img_eviction_policy"] = "evict_first"; }},
      // Key and value boundaries are part of the key: "ab"="c" differs from "a"="bc".
      {"annotation_split_1", [](Hints& h) { h.annotations["ab"] = "c"; }},
      {"annotation_split_2", [](Hints& h) { h.annotations["a"] = "bc"; }},
  };
}

std::string CopyOpKey(const CopyOp& op) {
  std::string key;
  CopyDefinition().AppendKey(op, key);
  return key;
}

std::string Im2colOpKey(const Im2colOp& op) {
  std::string key;
  Im2colDefinition().AppendKey(op, key);
  return key;
}

TEST(OpKeyTest, EveryCopyFieldAndHintChangesTheKey) {
  auto base = [] {
    Buffer src = Buffer::RowMajor("src", DataType::kF16, Scope::kGlobal, {4, 1024});
    Buffer dst = Buffer::RowMajor("dst", DataType::kF16, Scope::kGlobal, {4, 1024});
    return CopyOp{Region::Whole(src), Region::Whole(dst)};
  };
  std::vector<std::pair<std::string, std::function<void(CopyOp&)>>> changes = {
      {"dtype", [](CopyOp& op) { op.src.buffer.dtype = op.dst.buffer.dtype = DataType::kBF16; }},
      {"src strides", [](CopyOp& op) { op.src.buffer.strides = {2048, 1}; }},
      {"dst strides", [](CopyOp& op) { op.dst.buffer.strides = {2048, 1}; }},
      // Offsets are kernel arguments: only the alignment of the starts (each, and of their
      // difference) is part of the key.
      {"src start alignment", [](CopyOp& op) { op.src.offsets = {0, 1}; }},
      {"dst start alignment", [](CopyOp& op) { op.dst.offsets = {0, 2}; }},
      {"both starts, their difference's alignment",
       [](CopyOp& op) { op.src.offsets = {0, 1}; op.dst.offsets = {0, 5}; }},
      {"extents", [](CopyOp& op) { op.src.extents = op.dst.extents = {2, 1024}; }},
  };
  for (auto& [name, change] : HintChanges()) {
    changes.push_back({name, [change = change](CopyOp& op) { change(op.hints); }});
  }
  const std::string reference = CopyOpKey(base());
  EXPECT_EQ(reference, CopyOpKey(base()));
  std::set<std::string> keys = {reference};
  for (const auto& [name, change] : changes) {
    CopyOp op = base();
    change(op);
    const std::string key = CopyOpKey(op);
    EXPECT_TRUE(keys.insert(key).second) << name << " does not change the key";
  }
  // Offsets that keep every alignment share the key (and the kernel).
  CopyOp moved = base();
  moved.src.offsets = {1, 0};
  moved.dst.offsets = {0, 8};
  EXPECT_EQ(CopyOpKey(moved), reference);
}

TEST(OpKeyTest, EveryIm2colFieldAndHintChangesTheKey) {
  const Im2colGeometry stem = G(2, 32, 32, 3, 7, 7, 2, 2, 1, 1, 3, 3);
  auto base = [&] { return Im2colOp::Dense(DataType::kF16, stem); };
  std::vector<std::pair<std::string, std::function<void(Im2colOp&)>>> changes = {
      {"dtype", [](Im2colOp& op) { op.img.dtype = DataType::kBF16; }},
      {"strides", [](Im2colOp& op) { op.img.strides[0] += 96; }},
      {"shape", [&](Im2colOp& op) { op.geometry = G(2, 32, 32, 4, 7, 7, 2, 2, 1, 1, 3, 3); }},
      {"kernel", [&](Im2colOp& op) { op.geometry = G(2, 32, 32, 3, 7, 5, 2, 2, 1, 1, 3, 3); }},
      {"stride", [&](Im2colOp& op) { op.geometry = G(2, 32, 32, 3, 7, 7, 2, 1, 1, 1, 3, 3); }},
      {"dilation", [&](Im2colOp& op) { op.geometry = G(2, 32, 32, 3, 7, 7, 2, 2, 2, 1, 3, 3); }},
      {"pad", [&](Im2colOp& op) { op.geometry = G(2, 32, 32, 3, 7, 7, 2, 2, 1, 1, 3, 2); }},
  };
  for (auto& [name, change] : HintChanges()) {
    changes.push_back({name, [change = change](Im2colOp& op) { change(op.hints); }});
  }
  const std::string reference = Im2colOpKey(base());
  std::set<std::string> keys = {reference};
  for (const auto& [name, change] : changes) {
    Im2colOp op = base();
    change(op);
    const std::string key = Im2colOpKey(op);
    EXPECT_TRUE(keys.insert(key).second) << name << " does not change the key";
  }
  // A copy and an im2col never share a key.
  Buffer src = Buffer::RowMajor("src", DataType::kF16, Scope::kGlobal, {4, 1024});
  EXPECT_EQ(keys.count(CopyOpKey(CopyOp{Region::Whole(src), Region::Whole(src)})), 0u);
}

}  // namespace
}  // namespace tiletune

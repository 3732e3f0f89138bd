#include "kernels/op_key.h"

#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "compiler/ir/im2col_test_util.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace {

// Changes to the hints that each lower to a different kernel somewhere.
std::vector<std::pair<std::string, std::function<void(CopyHints&)>>> HintChanges() {
  return {
      {"coalesced_width", [](CopyHints& h) { h.coalesced_width = 2; }},
      {"disable_tma", [](CopyHints& h) { h.disable_tma = true; }},
      {"eviction_policy", [](CopyHints& h) { h.eviction_policy = EvictionPolicy::kEvictFirst; }},
      {"eviction_policy_last", [](CopyHints& h) { h.eviction_policy = EvictionPolicy::kEvictLast; }},
      {"prefer_instruction", [](CopyHints& h) { h.prefer_instruction = Instruction::kSync; }},
      {"loop_layout", [](CopyHints& h) { h.loop_layout = LoopLayout{4, 32}; }},
      {"loop_layout_other", [](CopyHints& h) { h.loop_layout = LoopLayout{32, 4}; }},
      {"annotation", [](CopyHints& h) { h.annotations["img_eviction_policy"] = "evict_last"; }},
      {"annotation_value",
       [](CopyHints& h) { h.annotations["img_eviction_policy"] = "evict_first"; }},
      // Key and value boundaries are part of the key: "ab"="c" differs from "a"="bc".
      {"annotation_split_1", [](CopyHints& h) { h.annotations["ab"] = "c"; }},
      {"annotation_split_2", [](CopyHints& h) { h.annotations["a"] = "bc"; }},
  };
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
      {"src offsets", [](CopyOp& op) { op.src.offsets = {1, 0}; }},
      {"dst offsets", [](CopyOp& op) { op.dst.offsets = {0, 8}; }},
      {"extents", [](CopyOp& op) { op.src.extents = op.dst.extents = {2, 1024}; }},
  };
  for (auto& [name, change] : HintChanges()) {
    changes.push_back({name, [change = change](CopyOp& op) { change(op.hints); }});
  }
  std::string reference, again;
  CopyOpKey(base(), reference);
  CopyOpKey(base(), again);
  EXPECT_EQ(reference, again);
  std::set<std::string> keys = {reference};
  for (const auto& [name, change] : changes) {
    CopyOp op = base();
    change(op);
    std::string key = "stale contents of a reused buffer";
    CopyOpKey(op, key);
    EXPECT_TRUE(keys.insert(key).second) << name << " does not change the key";
  }
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
  std::string reference;
  Im2colOpKey(base(), reference);
  std::set<std::string> keys = {reference};
  for (const auto& [name, change] : changes) {
    Im2colOp op = base();
    change(op);
    std::string key = "stale contents of a reused buffer";
    Im2colOpKey(op, key);
    EXPECT_TRUE(keys.insert(key).second) << name << " does not change the key";
  }
  // A copy and an im2col never share a key.
  Buffer src = Buffer::RowMajor("src", DataType::kF16, Scope::kGlobal, {4, 1024});
  std::string copy_key;
  CopyOpKey(CopyOp{Region::Whole(src), Region::Whole(src)}, copy_key);
  EXPECT_EQ(keys.count(copy_key), 0u);
}

}  // namespace
}  // namespace tiletune

#include "kernels/op_key.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tiletune {
namespace {

void AppendInts(std::string& key, const std::vector<int64_t>& values) {
  int64_t n = static_cast<int64_t>(values.size());
  key.append(reinterpret_cast<const char*>(&n), sizeof(n));
  key.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(int64_t));
}

// Every hint, for both ops: an absent optional writes its own marker.
void AppendHints(std::string& key, const CopyHints& h) {
  key.push_back(h.coalesced_width ? static_cast<char>(*h.coalesced_width) : -1);
  key.push_back(h.disable_tma);
  key.push_back(h.eviction_policy ? static_cast<char>(*h.eviction_policy) : -1);
  key.push_back(h.prefer_instruction ? static_cast<char>(*h.prefer_instruction) : -1);
  key.push_back(h.loop_layout.has_value());
  if (h.loop_layout) AppendInts(key, {h.loop_layout->rows, h.loop_layout->cols});
  AppendInts(key, {static_cast<int64_t>(h.annotations.size())});
  for (const auto& [k, v] : h.annotations) {
    AppendInts(key, {static_cast<int64_t>(k.size()), static_cast<int64_t>(v.size())});
    key.append(k).append(v);
  }
}

}  // namespace

void CopyOpKey(const CopyOp& op, std::string& key) {
  key.assign("copy");
  key.push_back(static_cast<char>(op.src.buffer.dtype));
  for (const Region* r : {&op.src, &op.dst}) {
    AppendInts(key, r->buffer.strides);
    AppendInts(key, r->offsets);
    AppendInts(key, r->extents);
  }
  AppendHints(key, op.hints);
}

void Im2colOpKey(const Im2colOp& op, std::string& key) {
  key.assign("im2col");
  key.push_back(static_cast<char>(op.img.dtype));
  AppendInts(key, op.img.shape);
  AppendInts(key, op.img.strides);
  const Im2colGeometry& g = op.geometry;
  AppendInts(key, {g.n, g.h, g.w, g.c, g.kh, g.kw, g.sh, g.sw, g.dh, g.dw, g.ph, g.pw});
  AppendHints(key, op.hints);
}

}  // namespace tiletune

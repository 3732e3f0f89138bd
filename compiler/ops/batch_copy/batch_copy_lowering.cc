#include "compiler/ops/batch_copy/batch_copy_lowering.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/base/status_macros.h"
#include "compiler/codegen/ptx_snippets.h"

namespace tiletune {
namespace {

// The widest power of two up to 16 that divides both.
int CommonVector(int64_t a, int64_t b) {
  int v = 16;
  while (v > 1 && (a % v != 0 || b % v != 0)) v /= 2;
  return v;
}

}  // namespace

absl::StatusOr<LoweredBatchCopy> LowerBatchCopy(const BatchCopyOp& op, const Target& target,
                                                const LaunchParams& launch) {
  TT_RETURN_IF_ERROR(ValidateBatchCopyOp(op));
  TT_RETURN_IF_ERROR(ValidateLaunchParams(launch, target));
  TT_ASSIGN_OR_RETURN(ResolvedHints hints, ResolveHints(op.hints, BatchCopyHintScope()));
  LoweredBatchCopy l;
  l.op = BatchCopyOp::Name();
  l.input_name = "src";
  l.output_name = "dst";
  l.target = target;
  l.dtype = op.element_type;
  l.element_bytes = DataTypeBytes(op.element_type);
  l.hints = hints;
  l.launch = launch;
  l.form = op.form;
  l.item_table = true;
  l.path_name = "sync_simt";
  l.form_name = BatchFormName(op.form);
  l.instruction = Instruction::kSync;
  l.kernel_name = absl::StrCat("tt_batch_copy_", l.form_name);
  const int64_t e = l.element_bytes;
  l.item_elems = op.item;
  l.src_elems = op.src_items * op.item;
  l.dst_elems = op.dst_items * op.item;
  std::vector<std::string> refusals;
  if (hints.prefer_instruction.has_value() && *hints.prefer_instruction != Instruction::kSync) {
    const std::string why = absl::StrCat("prefer_instruction=",
                                         InstructionName(*hints.prefer_instruction),
                                         ": batch_copy has one path, SIMT loads and stores");
    if (hints.fallback == FallbackMode::kError) refusals.push_back(why);
    l.decision_log.push_back(absl::StrCat(why, "; fallback=auto takes it"));
  }
  if (hints.loop_layout.has_value()) {
    refusals.push_back("loop_layout does not apply to batch_copy (its threads walk each "
                       "chunk's vectors in order)");
  }
  if (launch.tile.size() > 1) {
    refusals.push_back(absl::StrCat("batch_copy tile [", absl::StrJoin(launch.tile, ", "),
                                    "]: give one extent, the elements of a chunk (at most the "
                                    "item's ", op.item, ")"));
  }
  l.tile_elems = launch.tile.empty() ? op.item : launch.tile[0];
  if (l.tile_elems > op.item) {
    refusals.push_back(absl::StrCat("batch_copy tile ", l.tile_elems, ": a chunk holds at most "
                                    "the item's ", op.item, " elements"));
  }
  if (launch.stages != 1) {
    refusals.push_back(absl::StrCat("batch_copy stages=", launch.stages,
                                    ": it does not pipeline; accepted is 1"));
  }
  if (!refusals.empty()) return absl::InvalidArgumentError(absl::StrJoin(refusals, "; "));
  l.chunks = (op.item + l.tile_elems - 1) / l.tile_elems;
  l.tile_bytes = l.tile_elems * e;
  if (op.form == BatchForm::kBlocks) {
    l.vector_bytes = CommonVector(op.item * e, l.tile_bytes);
    if (hints.coalesced_width.has_value()) {
      const int64_t asked = *hints.coalesced_width * e;
      if (asked > 16 || (op.item * e) % asked != 0 || l.tile_bytes % asked != 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "batch_copy coalesced_width=", *hints.coalesced_width, ": ", asked,
            "-byte vectors must divide the item's ", op.item * e, " and the chunk's ",
            l.tile_bytes, " bytes and be at most 16"));
      }
      l.vector_bytes = static_cast<int>(std::min<int64_t>(l.vector_bytes, asked));
    }
    l.input_align = l.output_align = l.vector_bytes;
    l.decision_log.push_back(absl::StrCat(
        "blocks: ", l.vector_bytes, "-byte vectors (the widest dividing the item's ",
        op.item * e, " bytes and the chunk's ", l.tile_bytes, "); the pools' starts must be ",
        l.vector_bytes, "-byte aligned"));
  } else {
    if (hints.coalesced_width.has_value()) {
      return absl::InvalidArgumentError(
          "batch_copy coalesced_width applies to the blocks form only (the regions form picks "
          "its vectors per item at run time)");
    }
    l.vector_bytes = 16;
    l.input_align = l.output_align = static_cast<int>(e);
    l.decision_log.push_back(
        "regions: 16-byte vectors between single-byte heads and tails where an item's source "
        "and destination agree modulo 16, elementwise where they do not (decided per item at "
        "run time)");
  }
  const std::optional<EvictionPolicy> policy = hints.EvictionFor("");
  if (policy.has_value() && *policy != EvictionPolicy::kEvictNormal) {
    l.policy = policy;
    l.decision_log.push_back(absl::StrCat("loads and stores take the L2 ",
                                          EvictionPolicyName(*policy), " policy"));
  }
  l.num_tiles = op.count * l.chunks;
  l.units_per_item = l.chunks;
  l.stages = 1;
  l.input_span_bytes = l.src_elems * e;
  l.output_span_bytes = l.dst_elems * e;
  l.decision_log.push_back(absl::StrCat(
      op.count, " items x ", l.chunks, " chunks of ", l.tile_elems, " elements: ", l.num_tiles,
      " units, ",
      launch.ctas_per_sm > 0 ? absl::StrCat(launch.ctas_per_sm, " CTAs per SM walking them")
                             : std::string("one CTA per unit of this count"),
      "; a launch of another count walks its own units grid-stride"));
  return l;
}

CudaSource EmitBatchCopyKernel(const LoweredBatchCopy& l) {
  const bool hint = l.policy.has_value();
  const int64_t e = l.element_bytes;
  std::string out = absl::StrCat("// batch_copy ", l.form_name, " ", DataTypeName(l.dtype),
                                 ": item ", l.item_elems, ", chunk ", l.tile_elems, ", ",
                                 l.launch.threads, " threads, ",
                                 l.launch.ctas_per_sm > 0
                                     ? absl::StrCat(l.launch.ctas_per_sm, " CTAs per SM")
                                     : std::string("one CTA per unit"),
                                 ".\n", PreludeSnippet());
  if (hint) absl::StrAppend(&out, PolicySnippet(*l.policy));
  absl::StrAppend(&out, VectorAccessSnippet(l.vector_bytes, hint, hint, "tt"));
  if (l.form == BatchForm::kRegions) {
    absl::StrAppend(&out, VectorAccessSnippet(static_cast<int>(e), hint, hint, "tt_e"));
  }
  absl::StrAppend(&out, ConstantDefinition("u32", "THREADS", l.launch.threads),
                  ConstantDefinition("u64", "ELEMENT", e),
                  ConstantDefinition("u64", "ITEM_BYTES", l.item_elems * e),
                  ConstantDefinition("u64", "CHUNKS", l.chunks),
                  ConstantDefinition("u64", "TILE_BYTES", l.tile_bytes),
                  ConstantDefinition("u64", "SRC_BYTES", l.src_elems * e),
                  ConstantDefinition("u64", "DST_BYTES", l.dst_elems * e),
                  ConstantDefinition("u32", "VEC", l.vector_bytes));
  const std::string policy_arg = hint ? ", policy" : "";
  // Copies `vectors` VEC-byte vectors from s to d, four in flight per thread.
  absl::StrAppend(&out, R"(
__device__ __forceinline__ void tt_copy_vectors(const u8* __restrict__ s, u8* __restrict__ d,
                                                u64 vectors)", hint ? ", u64 policy" : "", R"() {
  u64 v = threadIdx.x;
  for (; v + 3 * THREADS < vectors; v += 4 * THREADS) {
    const tt_vec a = tt_ld_global(s + v * VEC)", policy_arg, R"();
    const tt_vec b = tt_ld_global(s + (v + THREADS) * VEC)", policy_arg, R"();
    const tt_vec c = tt_ld_global(s + (v + 2 * THREADS) * VEC)", policy_arg, R"();
    const tt_vec f = tt_ld_global(s + (v + 3 * THREADS) * VEC)", policy_arg, R"();
    tt_st_global(d + v * VEC, a)", policy_arg, R"();
    tt_st_global(d + (v + THREADS) * VEC, b)", policy_arg, R"();
    tt_st_global(d + (v + 2 * THREADS) * VEC, c)", policy_arg, R"();
    tt_st_global(d + (v + 3 * THREADS) * VEC, f)", policy_arg, R"();
  }
  for (; v < vectors; v += THREADS) tt_st_global(d + v * VEC, tt_ld_global(s + v * VEC)", policy_arg, R"())", policy_arg, R"();
}
)");
  // A persistent grid asks for its CTAs per SM as the occupancy the registers must allow.
  absl::StrAppend(&out, "\nextern \"C\" __global__ void __launch_bounds__(", l.launch.threads,
                  l.launch.ctas_per_sm > 0 ? absl::StrCat(", ", l.launch.ctas_per_sm) : "",
                  ") ", l.kernel_name,
                  "(const u8* __restrict__ src, u8* __restrict__ dst,\n"
                  "    const long long* __restrict__ table, long long count) {\n",
                  hint ? "  const u64 policy = tt_make_policy();\n" : "",
                  "  const u64 units = count > 0 ? static_cast<u64>(count) * CHUNKS : 0;\n",
                  // Grid-stride in both: one CTA per unit runs one pass where the grid
                  // covers the units (it is capped at 2^31 - 1 CTAs).
                  "  for (u64 u = blockIdx.x; u < units; u += gridDim.x) {\n",
                  "    const u64 i = u / CHUNKS, c = u - i * CHUNKS;\n");
  if (l.form == BatchForm::kBlocks) {
    absl::StrAppend(&out, R"(    const long long from = table[2 * i], to = table[2 * i + 1];
    // An entry outside the pools is skipped.
    if (from < 0 || to < 0 || static_cast<u64>(from) >= SRC_BYTES / ITEM_BYTES ||
        static_cast<u64>(to) >= DST_BYTES / ITEM_BYTES) continue;
    const u64 start = c * TILE_BYTES;
    const u64 bytes = ITEM_BYTES - start < TILE_BYTES ? ITEM_BYTES - start : TILE_BYTES;
    tt_copy_vectors(src + static_cast<u64>(from) * ITEM_BYTES + start,
                    dst + static_cast<u64>(to) * ITEM_BYTES + start, bytes / VEC)", policy_arg,
                    R"();
  }
}
)");
  } else {
    absl::StrAppend(&out, R"(    const long long from = table[3 * i], to = table[3 * i + 1], n = table[3 * i + 2];
    // An entry outside the pools is skipped.
    if (from < 0 || to < 0 || n < 0 || static_cast<u64>(from) > SRC_BYTES / ELEMENT ||
        static_cast<u64>(to) > DST_BYTES / ELEMENT ||
        static_cast<u64>(n) > SRC_BYTES / ELEMENT - static_cast<u64>(from) ||
        static_cast<u64>(n) > DST_BYTES / ELEMENT - static_cast<u64>(to)) continue;
    const u64 item_bytes = static_cast<u64>(n) * ELEMENT;
    // Chunk c, then c + CHUNKS, ...: an item larger than the largest declared is copied too.
    for (u64 start = c * TILE_BYTES; start < item_bytes; start += CHUNKS * TILE_BYTES) {
      const u64 bytes = item_bytes - start < TILE_BYTES ? item_bytes - start : TILE_BYTES;
      const u8* s = src + static_cast<u64>(from) * ELEMENT + start;
      u8* d = dst + static_cast<u64>(to) * ELEMENT + start;
      const u64 misalign = reinterpret_cast<u64>(s) & 15;
      if (misalign == (reinterpret_cast<u64>(d) & 15)) {
        const u64 to_boundary = (16 - misalign) & 15;
        const u64 head = to_boundary < bytes ? to_boundary : bytes;
        if (threadIdx.x < head) d[threadIdx.x] = s[threadIdx.x];
        const u64 vectors = (bytes - head) / 16;
        tt_copy_vectors(s + head, d + head, vectors)", policy_arg, R"();
        for (u64 b = head + vectors * 16 + threadIdx.x; b < bytes; b += THREADS) d[b] = s[b];
      } else {
        for (u64 b = threadIdx.x * ELEMENT; b < bytes; b += THREADS * ELEMENT) {
          tt_e_st_global(d + b, tt_e_ld_global(s + b)", policy_arg, R"())", policy_arg, R"();
        }
      }
    }
  }
}
)");
  }
  return CudaSource{absl::StrCat("batch_copy_", l.form_name, "_", DataTypeName(l.dtype)), out};
}

std::string DescribeBatchCopyPlan(const LoweredBatchCopy& l) {
  std::string out = PlanHeader(l);
  absl::StrAppend(&out, "items       ", l.form_name, ": ", l.item_elems, " elements",
                  l.form == BatchForm::kRegions ? " at most" : "", ", ", l.chunks,
                  " chunk(s) of ", l.tile_elems, "\n");
  absl::StrAppend(&out, "pools       src ", l.src_elems, " elements, dst ", l.dst_elems,
                  " elements\n");
  absl::StrAppend(&out, "vectors     ", l.vector_bytes, " B\n");
  absl::StrAppend(&out, PlanFooter(l, l.policy ? EvictionPolicyName(*l.policy) : "default"));
  return out;
}

namespace {

// Chunk lengths in elements: 4 to 64 KiB and the whole item, each at most the item.
std::vector<int64_t> ChunkCandidates(const BatchCopyOp& op) {
  const int64_t e = DataTypeBytes(op.element_type);
  std::vector<int64_t> tiles;
  for (int64_t kib : {4, 8, 16, 32, 64}) {
    const int64_t elems = kib * 1024 / e;
    if (elems < op.item) tiles.push_back(elems);
  }
  tiles.push_back(op.item);
  return tiles;
}

}  // namespace

Trial BatchCopyHeuristic(const BatchCopyOp& op, const Target& target) {
  (void)target;
  Trial trial;
  trial.launch.tile = {std::min<int64_t>(op.item, 16 * 1024 / DataTypeBytes(op.element_type))};
  trial.launch.threads = 256;
  trial.launch.ctas_per_sm = 4;
  return trial;
}

SearchSpace BatchCopySearchSpace(const BatchCopyOp& op, const Target& target) {
  SearchSpace space;
  const Trial base = BatchCopyHeuristic(op, target);
  Hints streaming;
  streaming.eviction_policy = EvictionPolicy::kEvictFirst;
  space.first.push_back(base);
  space.first.push_back({streaming, base.launch});
  for (int64_t tile : ChunkCandidates(op)) {
    for (int threads : {128, 256, 512}) {
      for (int ctas : {0, 2, 4, 8}) {
        LaunchParams launch;
        launch.tile = {tile};
        launch.threads = threads;
        launch.ctas_per_sm = ctas;
        space.launches.push_back(launch);
      }
    }
  }
  return space;
}

}  // namespace tiletune

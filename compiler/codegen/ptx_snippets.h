// Device-side helpers shared by tiletune's emitters, as CUDA C++ text: L2 policies,
// vector global loads and stores with optional cache hints, cp.async, mbarrier and
// bulk/tensor TMA wrappers. Each function returns the definitions a kernel needs.
#ifndef COMPILER_CODEGEN_PTX_SNIPPETS_H_
#define COMPILER_CODEGEN_PTX_SNIPPETS_H_

#include <optional>
#include <string>

#include <cstdint>

#include "compiler/ir/hints.h"

namespace tiletune {

// `enum : <type> { <name> = <value>u };` (ull for u64): a problem constant that folds into
// the code and takes no storage. `type` is "u32" or "u64".
std::string ConstantDefinition(const std::string& type, const std::string& name, int64_t value);

// typedefs u8/u16/u32/u64 and the 64-byte tensor-map parameter type.
std::string PreludeSnippet();

// tt_make_policy(): a createpolicy for `policy` (which must not be evict_normal).
std::string PolicySnippet(EvictionPolicy policy);

// struct tt_vec of `vector_bytes` (1, 2, 4, 8, 16) and tt_ld_global (ld.global.nc) /
// tt_st_global / tt_ld_shared / tt_st_shared for it (the shared ones touch only the
// vector's own bytes); the global load takes a policy when `load_hint`, the store when
// `store_hint`. Another `prefix` names them <prefix>_vec, <prefix>_ld_global, ..., so a
// kernel can have two widths.
std::string VectorAccessSnippet(int vector_bytes, bool load_hint, bool store_hint,
                                const std::string& prefix = "tt");

// tt_cp_async(smem, gmem, valid[, policy]) for `vector_bytes` (4, 8, 16), zero-filling
// when !valid; tt_cp_async_commit(); tt_cp_async_wait<N>().
std::string CpAsyncSnippet(int vector_bytes, bool cache_hint);

// mbarrier init / expect_tx / parity wait, bulk-group commit and waits.
std::string MbarrierSnippet();

// tt_tma_load_<rank>d / tt_tma_store_<rank>d for a tensor map of `rank` dims.
std::string TmaTensorSnippet(int rank, bool cache_hint);

// tt_bulk_load / tt_bulk_store for 1-D cp.async.bulk.
std::string BulkSnippet(bool cache_hint);
// tt_bulk_prefetch_l2: cp.async.bulk.prefetch.L2 of a 16-byte aligned run of global memory
// (sm_90+), with an L2 policy operand when `cache_hint`.
std::string BulkPrefetchSnippet(bool cache_hint);


// tt_make_<name>_policy(): a createpolicy for `policy` (which must not be evict_normal),
// for kernels whose accesses take different L2 priorities (e.g. "img", "col").
std::string NamedPolicySnippet(const std::string& name, EvictionPolicy policy);

// tt_tma_load_im2col(smem, map, bar, c, w, h, n, offset_w, offset_h[, policy]): one
// im2col-mode TMA load of a rank-4 NHWC map, completing on `bar` (sm_90+). (c, w, h, n)
// is the first pixel's filter base, (offset_w, offset_h) the kernel tap's offset.
std::string TmaIm2colLoadSnippet(bool cache_hint);

// tt_tma_store_tile(map, smem, coords...[, policy]): a tile-mode TMA store of a `rank`-D
// map, committed by the caller with tt_bulk_commit (sm_90+).
std::string TmaStoreSnippet(int rank, bool cache_hint);

}  // namespace tiletune

#endif  // COMPILER_CODEGEN_PTX_SNIPPETS_H_

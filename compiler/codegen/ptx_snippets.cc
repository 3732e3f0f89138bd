#include "compiler/codegen/ptx_snippets.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"

namespace tiletune {

std::string ConstantDefinition(const std::string& type, const std::string& name, int64_t value) {
  return absl::StrCat("enum : ", type, " { ", name, " = ", value, type == "u64" ? "ull" : "u",
                      " };\n");
}

std::string PreludeSnippet() {
  return R"(typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;

// A CUtensorMap, passed by value as a __grid_constant__ kernel parameter.
struct __align__(64) tt_tensor_map {
  u64 opaque[16];
};

__device__ __forceinline__ u32 tt_smem_addr(const void* p) {
  return static_cast<u32>(__cvta_generic_to_shared(p));
}
)";
}

std::string PolicySnippet(EvictionPolicy policy) {
  return absl::StrReplaceAll(R"(
// L2 eviction priority for every global access of this kernel.
__device__ __forceinline__ u64 tt_make_policy() {
  u64 policy;
  asm volatile("createpolicy.fractional.L2::$POLICY.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}
)",
                             {{"$POLICY", EvictionPolicyName(policy)}});
}

std::string VectorAccessSnippet(int vector_bytes, bool load_hint, bool store_hint,
                                const std::string& prefix) {
  // PTX type, register constraint and field names per vector size.
  std::string type, constraint;
  std::vector<std::string> fields;
  switch (vector_bytes) {
    case 16: type = "v4.u32"; constraint = "r"; fields = {"x", "y", "z", "w"}; break;
    case 8: type = "v2.u32"; constraint = "r"; fields = {"x", "y"}; break;
    case 4: type = "u32"; constraint = "r"; fields = {"x"}; break;
    case 2: type = "u16"; constraint = "h"; fields = {"x"}; break;
    default: type = "u8"; constraint = "h"; fields = {"x"}; break;
  }
  const std::string vec = prefix + "_vec";
  std::string field_type = constraint == "r" ? "u32" : "u16";
  std::string out = absl::StrCat("\n// ", vector_bytes, "-byte vector accesses.\nstruct __align__(",
                                 vector_bytes >= 4 ? vector_bytes : 2, ") ", vec, " {\n  ",
                                 field_type, " ", absl::StrJoin(fields, ", "), ";\n};\n");
  auto hint = [](bool on) { return std::string(on ? ".L2::cache_hint" : ""); };
  auto policy_param = [](bool on) { return std::string(on ? ", u64 policy" : ""); };
  int n = static_cast<int>(fields.size());
  std::vector<std::string> regs, outs, ins;
  for (int i = 0; i < n; ++i) {
    regs.push_back(absl::StrCat("%", i));
    outs.push_back(absl::StrCat("\"=", constraint, "\"(v.", fields[i], ")"));
  }
  std::string reg_list = n > 1 ? absl::StrCat("{", absl::StrJoin(regs, ", "), "}") : regs[0];
  std::string load_operands =
      absl::StrCat("[%", n, "]", load_hint ? absl::StrCat(", %", n + 1) : "");
  absl::StrAppend(&out, "__device__ __forceinline__ ", vec, " ", prefix, "_ld_global(const u8* p",
                  policy_param(load_hint), ") {\n  ", vec, " v;\n  asm volatile(\"ld.global.nc",
                  hint(load_hint), ".", type, " ", reg_list, ", ", load_operands,
                  ";\"\n               : ", absl::StrJoin(outs, ", "), "\n               : \"l\"(p)",
                  load_hint ? ", \"l\"(policy)" : "", ");\n  return v;\n}\n");
  // Store: address first, then values.
  std::vector<std::string> store_regs;
  for (int i = 0; i < n; ++i) {
    store_regs.push_back(absl::StrCat("%", i + 1));
    ins.push_back(absl::StrCat("\"", constraint, "\"(v.", fields[i], ")"));
  }
  std::string store_list =
      n > 1 ? absl::StrCat("{", absl::StrJoin(store_regs, ", "), "}") : store_regs[0];
  absl::StrAppend(&out, "__device__ __forceinline__ void ", prefix, "_st_global(u8* p, const ", vec,
                  "& v", policy_param(store_hint), ") {\n  asm volatile(\"st.global",
                  hint(store_hint), ".", type, " [%0], ", store_list,
                  store_hint ? absl::StrCat(", %", n + 1) : "",
                  ";\"\n               :\n               : \"l\"(p), ", absl::StrJoin(ins, ", "),
                  store_hint ? ", \"l\"(policy)" : "", "\n               : \"memory\");\n}\n");
  // Shared accesses are plain C++ so the compiler orders them against barriers. Below 4
  // bytes the vector lives in a 16-bit register: only its own bytes go to memory.
  if (vector_bytes >= 4) {
    absl::StrAppend(&out, "__device__ __forceinline__ ", vec, " ", prefix,
                    "_ld_shared(const u8* p) { return *reinterpret_cast<const ", vec,
                    "*>(p); }\n__device__ __forceinline__ void ", prefix, "_st_shared(u8* p, const ",
                    vec, "& v) { *reinterpret_cast<", vec, "*>(p) = v; }\n");
  } else {
    std::string t = vector_bytes == 2 ? "u16" : "u8";
    absl::StrAppend(&out, "__device__ __forceinline__ ", vec, " ", prefix,
                    "_ld_shared(const u8* p) { ", vec, " v; v.x = *reinterpret_cast<const ", t,
                    "*>(p); return v; }\n__device__ __forceinline__ void ", prefix,
                    "_st_shared(u8* p, const ", vec, "& v) { *reinterpret_cast<", t,
                    "*>(p) = static_cast<", t, ">(v.x); }\n");
  }
  return out;
}

std::string CpAsyncSnippet(int vector_bytes, bool cache_hint) {
  // 16-byte copies bypass L1 (.cg); 4 and 8-byte copies must use .ca.
  std::string cache = vector_bytes == 16 ? "cg" : "ca";
  std::string out;
  if (!cache_hint) {
    absl::StrAppend(
        &out, "\n// cp.async of ", vector_bytes,
        " bytes; an invalid element is zero-filled (src-size 0), not read.\n"
        "__device__ __forceinline__ void tt_cp_async(u8* smem, const u8* gmem, bool valid) {\n"
        "  asm volatile(\"cp.async.", cache, ".shared.global [%0], [%1], ", vector_bytes, ", %2;\"\n"
        "               :\n"
        "               : \"r\"(tt_smem_addr(smem)), \"l\"(gmem), \"r\"(valid ? ", vector_bytes,
        "u : 0u)\n"
        "               : \"memory\");\n"
        "}\n");
  } else {
    // With an L2 policy the copy is predicated and invalid elements are zeroed by a plain
    // store. The shared address has %tid.y added (always 0: tile kernels launch 1-D
    // blocks) so that it lives in one register. ptxas of CUDA 13.0 otherwise splits
    // it into register + uniform base and encodes the first hinted cp.async as
    // LDGSTS [R+UR0], desc[UR1] (an odd descriptor register), which dies with
    // CUDA_ERROR_ILLEGAL_INSTRUCTION on an H200 (seen with cuobjdump -sass on the device;
    // predicating the copy, a run-time policy or a 64-bit address do not avoid it).
    // copy_gpu_test's cp_async_*_32x256 cases reproduce it.
    absl::StrAppend(
        &out, "\n// cp.async of ", vector_bytes,
        " bytes with an L2 policy; an invalid element is zeroed, not read.\n"
        "__device__ __forceinline__ void tt_cp_async(u8* smem, const u8* gmem, bool valid, "
        "u64 policy) {\n"
        "  if (valid) {\n"
        "    u32 zero;  // %tid.y of a 1-D block, opaque to the compilers.\n"
        "    asm(\"mov.u32 %0, %%tid.y;\" : \"=r\"(zero));\n"
        "    asm volatile(\"cp.async.", cache, ".shared.global.L2::cache_hint [%0], [%1], ",
        vector_bytes, ", %2;\"\n"
        "                 :\n"
        "                 : \"r\"(tt_smem_addr(smem) + zero), \"l\"(gmem), \"l\"(policy)\n"
        "                 : \"memory\");\n"
        "  } else {\n"
        "    tt_st_shared(smem, tt_vec{});\n"
        "  }\n"
        "}\n");
  }
  absl::StrAppend(&out,
                  "__device__ __forceinline__ void tt_cp_async_commit() {\n"
                  "  asm volatile(\"cp.async.commit_group;\" ::: \"memory\");\n"
                  "}\n"
                  "template <int kPending>\n"
                  "__device__ __forceinline__ void tt_cp_async_wait() {\n"
                  "  asm volatile(\"cp.async.wait_group %0;\" :: \"n\"(kPending) : \"memory\");\n"
                  "}\n");
  return out;
}

std::string MbarrierSnippet() {
  return R"(
__device__ __forceinline__ void tt_mbarrier_init(u64* bar, u32 count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(tt_smem_addr(bar)), "r"(count)
               : "memory");
}
// Makes barrier initialisation visible to the async proxy (the TMA unit).
__device__ __forceinline__ void tt_fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
__device__ __forceinline__ void tt_mbarrier_expect_tx(u64* bar, u32 bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
               :: "r"(tt_smem_addr(bar)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void tt_mbarrier_wait(u64* bar, u32 parity) {
  asm volatile(
      "{\n"
      "  .reg .pred done;\n"
      "TT_WAIT_%=:\n"
      "  mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "  @!done bra TT_WAIT_%=;\n"
      "}\n" :: "r"(tt_smem_addr(bar)), "r"(parity) : "memory");
}
__device__ __forceinline__ void tt_bulk_commit() {
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
// Waits until at most kPending bulk groups still read shared memory.
template <int kPending>
__device__ __forceinline__ void tt_bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" :: "n"(kPending) : "memory");
}
// Waits until every bulk group has completed, writes included.
__device__ __forceinline__ void tt_bulk_wait_all() {
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}
)";
}

std::string TmaTensorSnippet(int rank, bool cache_hint) {
  std::vector<std::string> coord_params, coord_regs, coord_operands;
  for (int d = 0; d < rank; ++d) {
    coord_params.push_back(absl::StrCat("int c", d));
    coord_operands.push_back(absl::StrCat("\"r\"(c", d, ")"));
  }
  // Load operands: smem %0, map %1, coords %2.., bar, policy.
  for (int d = 0; d < rank; ++d) coord_regs.push_back(absl::StrCat("%", d + 2));
  std::string hint = cache_hint ? ".L2::cache_hint" : "";
  int bar_reg = rank + 2;
  std::string out = absl::StrCat(
      "\n// ", rank, "-D tensor TMA; coordinates innermost first.\n"
      "__device__ __forceinline__ void tt_tma_load(u8* smem, const tt_tensor_map* map, u64* bar, ",
      absl::StrJoin(coord_params, ", "), cache_hint ? ", u64 policy" : "", ") {\n"
      "  asm volatile(\"cp.async.bulk.tensor.", rank,
      "d.shared::cluster.global.tile.mbarrier::complete_tx::bytes", hint, " [%0], [%1, {",
      absl::StrJoin(coord_regs, ", "), "}], [%", bar_reg, "]",
      cache_hint ? absl::StrCat(", %", bar_reg + 1) : "", ";\"\n"
      "               :\n"
      "               : \"r\"(tt_smem_addr(smem)), \"l\"(map), ", absl::StrJoin(coord_operands, ", "),
      ", \"r\"(tt_smem_addr(bar))", cache_hint ? ", \"l\"(policy)" : "", "\n"
      "               : \"memory\");\n"
      "}\n");
  // Store operands: map %0, coords %1.., smem, policy.
  std::vector<std::string> store_regs;
  for (int d = 0; d < rank; ++d) store_regs.push_back(absl::StrCat("%", d + 1));
  int smem_reg = rank + 1;
  absl::StrAppend(
      &out,
      "__device__ __forceinline__ void tt_tma_store(const tt_tensor_map* map, const u8* smem, ",
      absl::StrJoin(coord_params, ", "), cache_hint ? ", u64 policy" : "", ") {\n"
      "  asm volatile(\"cp.async.bulk.tensor.", rank, "d.global.shared::cta.tile.bulk_group", hint,
      " [%0, {", absl::StrJoin(store_regs, ", "), "}], [%", smem_reg, "]",
      cache_hint ? absl::StrCat(", %", smem_reg + 1) : "", ";\"\n"
      "               :\n"
      "               : \"l\"(map), ", absl::StrJoin(coord_operands, ", "),
      ", \"r\"(tt_smem_addr(smem))", cache_hint ? ", \"l\"(policy)" : "", "\n"
      "               : \"memory\");\n"
      "}\n");
  return out;
}

std::string BulkSnippet(bool cache_hint) {
  std::string hint = cache_hint ? ".L2::cache_hint" : "";
  return absl::StrCat(
      "\n// 1-D bulk copies; sizes and addresses are multiples of 16 bytes.\n"
      "__device__ __forceinline__ void tt_bulk_load(u8* smem, const u8* gmem, u32 bytes, u64* bar",
      cache_hint ? ", u64 policy" : "", ") {\n"
      "  asm volatile(\"cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes", hint,
      " [%0], [%1], %2, [%3]", cache_hint ? ", %4" : "", ";\"\n"
      "               :\n"
      "               : \"r\"(tt_smem_addr(smem)), \"l\"(gmem), \"r\"(bytes), "
      "\"r\"(tt_smem_addr(bar))", cache_hint ? ", \"l\"(policy)" : "", "\n"
      "               : \"memory\");\n"
      "}\n"
      "__device__ __forceinline__ void tt_bulk_store(u8* gmem, const u8* smem, u32 bytes",
      cache_hint ? ", u64 policy" : "", ") {\n"
      "  asm volatile(\"cp.async.bulk.global.shared::cta.bulk_group", hint, " [%0], [%1], %2",
      cache_hint ? ", %3" : "", ";\"\n"
      "               :\n"
      "               : \"l\"(gmem), \"r\"(tt_smem_addr(smem)), \"r\"(bytes)",
      cache_hint ? ", \"l\"(policy)" : "", "\n"
      "               : \"memory\");\n"
      "}\n");
}

std::string BulkPrefetchSnippet(bool cache_hint) {
  std::string hint = cache_hint ? ".L2::cache_hint" : "";
  return absl::StrCat(
      "\n// Prefetch into L2 (no data moves to the SM); address and size multiples of 16 B.\n"
      "__device__ __forceinline__ void tt_bulk_prefetch_l2(const u8* gmem, u32 bytes",
      cache_hint ? ", u64 policy" : "", ") {\n"
      "  asm volatile(\"cp.async.bulk.prefetch.L2.global", hint, " [%0], %1",
      cache_hint ? ", %2" : "", ";\"\n"
      "               :\n"
      "               : \"l\"(gmem), \"r\"(bytes)", cache_hint ? ", \"l\"(policy)" : "", "\n"
      "               : \"memory\");\n"
      "}\n");
}

std::string NamedPolicySnippet(const std::string& name, EvictionPolicy policy) {
  return absl::StrReplaceAll(R"(
// L2 eviction priority for the $NAME accesses of this kernel.
__device__ __forceinline__ u64 tt_make_$NAME_policy() {
  u64 policy;
  asm volatile("createpolicy.fractional.L2::$POLICY.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}
)",
                             {{"$NAME", name}, {"$POLICY", EvictionPolicyName(policy)}});
}

std::string TmaIm2colLoadSnippet(bool cache_hint) {
  return absl::StrCat(
      "\n// Im2col-mode tensor TMA of a rank-4 NHWC map; coordinates innermost first.\n"
      "__device__ __forceinline__ void tt_tma_load_im2col(u8* smem, const tt_tensor_map* map, "
      "u64* bar, int c, int w, int h, int n, u16 offset_w, u16 offset_h",
      cache_hint ? ", u64 policy" : "", ") {\n"
      "  asm volatile(\"cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_"
      "tx::bytes",
      cache_hint ? ".L2::cache_hint" : "",
      " [%0], [%1, {%2, %3, %4, %5}], [%6], {%7, %8}", cache_hint ? ", %9" : "", ";\"\n"
      "               :\n"
      "               : \"r\"(tt_smem_addr(smem)), \"l\"(map), \"r\"(c), \"r\"(w), \"r\"(h), "
      "\"r\"(n), \"r\"(tt_smem_addr(bar)),\n"
      "                 \"h\"(offset_w), \"h\"(offset_h)",
      cache_hint ? ", \"l\"(policy)" : "", "\n"
      "               : \"memory\");\n"
      "}\n");
}

std::string TmaStoreSnippet(int rank, bool cache_hint) {
  std::vector<std::string> params, regs, operands;
  for (int d = 0; d < rank; ++d) {
    params.push_back(absl::StrCat("int c", d));
    regs.push_back(absl::StrCat("%", d + 1));
    operands.push_back(absl::StrCat("\"r\"(c", d, ")"));
  }
  int smem_reg = rank + 1;
  return absl::StrCat(
      "\n// ", rank, "-D tile-mode TMA store; coordinates innermost first.\n"
      "__device__ __forceinline__ void tt_tma_store_tile(const tt_tensor_map* map, const u8* smem, ",
      absl::StrJoin(params, ", "), cache_hint ? ", u64 policy" : "", ") {\n"
      "  asm volatile(\"cp.async.bulk.tensor.", rank, "d.global.shared::cta.tile.bulk_group",
      cache_hint ? ".L2::cache_hint" : "", " [%0, {", absl::StrJoin(regs, ", "), "}], [%",
      smem_reg, "]", cache_hint ? absl::StrCat(", %", smem_reg + 1) : "", ";\"\n"
      "               :\n"
      "               : \"l\"(map), ", absl::StrJoin(operands, ", "), ", \"r\"(tt_smem_addr(smem))",
      cache_hint ? ", \"l\"(policy)" : "", "\n"
      "               : \"memory\");\n"
      "}\n");
}

}  // namespace tiletune

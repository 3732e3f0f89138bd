// Ablation, wrong on purpose (session 17; bench/RESULTS.md): the N32 C3 224x224 7x7 s2 p3 f16
// im2col stem's CTA structure (3584 CTAs of 512 threads, each writing its output row's
// contiguous 32928 bytes of columns as 2058 16-byte vectors with the stem's evict_first
// policy) storing constants: no image, no shared memory, no gather. The preamble is the
// 512-thread heuristic kernel's. On the H200: 27.9-28.3 us, against 34.5-35.3 for the
// generated stem in the same runs: the structure itself can write at the store ceiling.
//   im2col_benchmark --ablation_source=n32_c3_224x224_k7_s2_p3/heuristic=bench/stem_variants/store_only.cu \
//       --benchmark_filter=n32_c3_224x224_k7_s2_p3/heuristic
// The emitted kernel's description:
//   path simt_im2col, f16, n32 h224 w224 c3 kernel 7x7 stride 2x2 dilation 1x1 pad 3x3 -> [401408, 147], image strides [150528, 672, 3, 1]
//   tile [112, 147], 512 threads, flat runs of whole rows, vector 8 x 2 B, input staged (1 output row(s) x 7 input rows, bulk copies, L2 prefetch 3 waves ahead), 1 stage(s), L2 policy image evict_last, columns evict_first

typedef unsigned char u8;
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

// L2 eviction priority for the img accesses of this kernel.
__device__ __forceinline__ u64 tt_make_img_policy() {
  u64 policy;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}

// L2 eviction priority for the col accesses of this kernel.
__device__ __forceinline__ u64 tt_make_col_policy() {
  u64 policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}

// 16-byte vector accesses.
struct __align__(16) tt_vec {
  u32 x, y, z, w;
};
__device__ __forceinline__ tt_vec tt_ld_global(const u8* p) {
  tt_vec v;
  asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}
__device__ __forceinline__ void tt_st_global(u8* p, const tt_vec& v, u64 policy) {
  asm volatile("st.global.L2::cache_hint.v4.u32 [%0], {%1, %2, %3, %4}, %5;"
               :
               : "l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w), "l"(policy)
               : "memory");
}
__device__ __forceinline__ tt_vec tt_ld_shared(const u8* p) { return *reinterpret_cast<const tt_vec*>(p); }
__device__ __forceinline__ void tt_st_shared(u8* p, const tt_vec& v) { *reinterpret_cast<tt_vec*>(p) = v; }

// 16-byte vector accesses.
struct __align__(16) tt_box_vec {
  u32 x, y, z, w;
};
__device__ __forceinline__ tt_box_vec tt_box_ld_global(const u8* p, u64 policy) {
  tt_box_vec v;
  asm volatile("ld.global.nc.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p), "l"(policy));
  return v;
}
__device__ __forceinline__ void tt_box_st_global(u8* p, const tt_box_vec& v) {
  asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};"
               :
               : "l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}
__device__ __forceinline__ tt_box_vec tt_box_ld_shared(const u8* p) { return *reinterpret_cast<const tt_box_vec*>(p); }
__device__ __forceinline__ void tt_box_st_shared(u8* p, const tt_box_vec& v) { *reinterpret_cast<tt_box_vec*>(p) = v; }

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

// 1-D bulk copies; sizes and addresses are multiples of 16 bytes.
__device__ __forceinline__ void tt_bulk_load(u8* smem, const u8* gmem, u32 bytes, u64* bar, u64 policy) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;"
               :
               : "r"(tt_smem_addr(smem)), "l"(gmem), "r"(bytes), "r"(tt_smem_addr(bar)), "l"(policy)
               : "memory");
}
__device__ __forceinline__ void tt_bulk_store(u8* gmem, const u8* smem, u32 bytes, u64 policy) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint [%0], [%1], %2, %3;"
               :
               : "l"(gmem), "r"(tt_smem_addr(smem)), "r"(bytes), "l"(policy)
               : "memory");
}

// Prefetch into L2 (no data moves to the SM); address and size multiples of 16 B.
__device__ __forceinline__ void tt_bulk_prefetch_l2(const u8* gmem, u32 bytes, u64 policy) {
  asm volatile("cp.async.bulk.prefetch.L2.global.L2::cache_hint [%0], %1, %2;"
               :
               : "l"(gmem), "r"(bytes), "l"(policy)
               : "memory");
}

// One image element.
typedef u16 tt_elem;
__device__ __forceinline__ tt_elem tt_ld_elem(const u8* p, u64 policy) {
  u16 v;
  // Not volatile, so the loads of an unrolled loop may issue together; the
  // compiler may also hoist it above a branch: callers pass valid addresses only.
  asm("ld.global.nc.L2::cache_hint.u16 %0, [%1], %2;" : "=h"(v) : "l"(p), "l"(policy));
  return tt_elem(v);
}

// Problem constants; enumerators fold into the code and take no storage.
enum : u32 { kThreads = 512u };
enum : u64 { kNumTiles = 3584ull };
enum : u64 { kTilesK = 1ull };
enum : u64 { kBlockM = 112ull };
enum : u64 { kBlockK = 147ull };
enum : u64 { kM = 401408ull };
enum : u64 { kK = 147ull };
enum : u64 { kElementBytes = 2ull };
enum : u64 { kH = 224ull };
enum : u64 { kW = 224ull };
enum : u64 { kC = 3ull };
enum : u64 { kKW = 7ull };
enum : u64 { kSH = 2ull };
enum : u64 { kSW = 2ull };
enum : u64 { kDH = 1ull };
enum : u64 { kDW = 1ull };
enum : u64 { kPH = 3ull };
enum : u64 { kPW = 3ull };
enum : u64 { kOW = 112ull };
enum : u64 { kOHW = 12544ull };
enum : u64 { kImgStrideN = 150528ull };
enum : u64 { kImgStrideH = 672ull };
enum : u64 { kImgStrideW = 3ull };
enum : u64 { kImgStrideC = 1ull };
enum : u32 { kTaps = 49u };
enum : u32 { kFlatVector = 8u };
enum : u32 { kTileVectors = 2058u };
enum : u32 { kKH = 7u };
enum : u32 { kRowsPerTile = 1u };
enum : u32 { kPeriod = 147u };
enum : u32 { kPeriodRows = 8u };
enum : u32 { kUnits = 8u };
enum : u32 { kUnitsPerElem = 1u };
enum : u32 { kTableWords = 4u };
enum : u64 { kOH = 112ull };
enum : u64 { kOutRows = 3584ull };
enum : u32 { kBoxRows = 7u };
enum : u32 { kBoxPitch = 696u };
enum : u32 { kBoxLead = 7u };
enum : u32 { kBoxOffset = 2352u };
enum : u32 { kBoxStart = 9u };
enum : u32 { kBoxCopy = 672u };
enum : u32 { kPadElems = 15u };
enum : u32 { kLoad = 16u };
enum : u32 { kChunks = 84u };
enum : u32 { kTail = 0u };
enum : u32 { kPrefetchCtasPerSm = 12u };


// Ablation: the stem's CTA structure (one output row of 2058 vectors per CTA, 512 threads)
// storing constants: no shared memory, no copies, no gather.
extern "C" __global__ void __maxnreg__(24) tt_im2col_simt_im2col(const u8* __restrict__ img, u8* __restrict__ col) {
  const u64 col_policy = tt_make_col_policy();
  u8* const out = col + u64(blockIdx.x) * kBlockM * kK * kElementBytes;
  for (u32 v = threadIdx.x; v < kTileVectors; v += kThreads) {
    tt_st_global(out + v * u32(kFlatVector * kElementBytes), tt_vec{v, v, v, v}, col_policy);
  }
}

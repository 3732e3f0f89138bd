// tiletune copy kernel (generated; do not edit).
//   path tma, f16, extents [8192, 8192], tile [64, 128], 32 threads
//   3 stage(s), L2 policy evict_first

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

// L2 eviction priority for every global access of this kernel.
__device__ __forceinline__ u64 tt_make_policy() {
  u64 policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}

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

// 2-D tensor TMA; coordinates innermost first.
__device__ __forceinline__ void tt_tma_load(u8* smem, const tt_tensor_map* map, u64* bar, int c0, int c1, u64 policy) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, {%2, %3}], [%4], %5;"
               :
               : "r"(tt_smem_addr(smem)), "l"(map), "r"(c0), "r"(c1), "r"(tt_smem_addr(bar)), "l"(policy)
               : "memory");
}
__device__ __forceinline__ void tt_tma_store(const tt_tensor_map* map, const u8* smem, int c0, int c1, u64 policy) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group.L2::cache_hint [%0, {%1, %2}], [%3], %4;"
               :
               : "l"(map), "r"(c0), "r"(c1), "r"(tt_smem_addr(smem)), "l"(policy)
               : "memory");
}

// Problem constants; enumerators fold into the code and take no storage.
enum : u32 { kThreads = 32u };
enum : u64 { kNumTiles = 8192ull };
enum : u32 { kStages = 3u };
enum : u32 { kTileBytes = 16384u };
enum : u64 { kElementBytes = 2ull };
enum : u64 { kExtent0 = 8192ull };
enum : u64 { kTile0 = 64ull };
enum : u64 { kTiles0 = 128ull };
enum : u64 { kSrcStride0 = 8192ull };
enum : u64 { kDstStride0 = 8192ull };
enum : u64 { kExtent1 = 8192ull };
enum : u64 { kTile1 = 128ull };
enum : u64 { kTiles1 = 64ull };
enum : u64 { kSrcStride1 = 1ull };
enum : u64 { kDstStride1 = 1ull };
enum : u32 { kStageBytes = 16384u };

extern "C" __global__ void __launch_bounds__(kThreads) tt_copy_tma(const u8* __restrict__ src, u8* __restrict__ dst,
    const __grid_constant__ tt_tensor_map src_map, const __grid_constant__ tt_tensor_map dst_map) {
  const u64 policy = tt_make_policy();
  extern __shared__ __align__(128) u8 tt_smem[];
  __shared__ __align__(8) u64 tt_bar[kStages];
  // One thread drives the copy engine; the others have nothing to move.
  if (threadIdx.x != 0) return;
#pragma unroll
  for (u32 s = 0; s < kStages; ++s) tt_mbarrier_init(&tt_bar[s], 1);
  tt_fence_barrier_init();
  const u32 my_tiles = u32((kNumTiles - blockIdx.x + gridDim.x - 1) / gridDim.x);
  auto load = [&](u32 k) {
    u64 t = blockIdx.x + u64(k) * gridDim.x;
    const int c1 = int((t % kTiles1) * kTile1);
    t /= kTiles1;
    const int c0 = int(t * kTile0);
    u64* bar = &tt_bar[k % kStages];
    tt_mbarrier_expect_tx(bar, kTileBytes);
    tt_tma_load(tt_smem + (k % kStages) * kStageBytes, &src_map, bar, c1, c0, policy);
  };
  auto store = [&](u32 k) {
    u64 t = blockIdx.x + u64(k) * gridDim.x;
    const int c1 = int((t % kTiles1) * kTile1);
    t /= kTiles1;
    const int c0 = int(t * kTile0);
    tt_tma_store(&dst_map, tt_smem + (k % kStages) * kStageBytes, c1, c0, policy);
    tt_bulk_commit();
  };
  for (u32 k = 0; k < kStages - 1 && k < my_tiles; ++k) load(k);
  for (u32 k = 0; k < my_tiles; ++k) {
    tt_mbarrier_wait(&tt_bar[k % kStages], (k / kStages) & 1);
    store(k);
    if (k + kStages - 1 < my_tiles) {
      tt_bulk_wait_read<1>();  // Store k - 1 has left the stage we refill.
      load(k + kStages - 1);
    }
  }
  tt_bulk_wait_all();
}

// tiletune copy kernel (generated; do not edit).
//   path bulk_1d, bf16, extents [16777216], tile [16384], 32 threads
//   4 stage(s), L2 policy none

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
__device__ __forceinline__ void tt_bulk_load(u8* smem, const u8* gmem, u32 bytes, u64* bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
               :
               : "r"(tt_smem_addr(smem)), "l"(gmem), "r"(bytes), "r"(tt_smem_addr(bar))
               : "memory");
}
__device__ __forceinline__ void tt_bulk_store(u8* gmem, const u8* smem, u32 bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
               :
               : "l"(gmem), "r"(tt_smem_addr(smem)), "r"(bytes)
               : "memory");
}

// Problem constants; enumerators fold into the code and take no storage.
enum : u32 { kThreads = 32u };
enum : u64 { kNumTiles = 1024ull };
enum : u32 { kStages = 4u };
enum : u32 { kTileBytes = 32768u };
enum : u64 { kElementBytes = 2ull };
enum : u64 { kExtent0 = 16777216ull };
enum : u64 { kTile0 = 16384ull };
enum : u64 { kTiles0 = 1024ull };
enum : u64 { kSrcStride0 = 1ull };
enum : u64 { kDstStride0 = 1ull };
enum : u32 { kStageBytes = 32768u };
enum : u64 { kTotalBytes = 33554432ull };

extern "C" __global__ void __launch_bounds__(kThreads) tt_copy_bulk_1d(const u8* __restrict__ src, u8* __restrict__ dst) {
  extern __shared__ __align__(128) u8 tt_smem[];
  __shared__ __align__(8) u64 tt_bar[kStages];
  // One thread drives the copy engine; the others have nothing to move.
  if (threadIdx.x != 0) return;
#pragma unroll
  for (u32 s = 0; s < kStages; ++s) tt_mbarrier_init(&tt_bar[s], 1);
  tt_fence_barrier_init();
  const u32 my_tiles = u32((kNumTiles - blockIdx.x + gridDim.x - 1) / gridDim.x);
  auto bytes_of = [](u64 tile) -> u32 {
    const u64 start = tile * kTileBytes;
    return start + kTileBytes <= kTotalBytes ? kTileBytes : u32(kTotalBytes - start);
  };
  auto load = [&](u32 k) {
    const u64 tile = blockIdx.x + u64(k) * gridDim.x;
    u64* bar = &tt_bar[k % kStages];
    tt_mbarrier_expect_tx(bar, bytes_of(tile));
    tt_bulk_load(tt_smem + (k % kStages) * kStageBytes, src + tile * kTileBytes, bytes_of(tile), bar);
  };
  auto store = [&](u32 k) {
    const u64 tile = blockIdx.x + u64(k) * gridDim.x;
    tt_bulk_store(dst + tile * kTileBytes, tt_smem + (k % kStages) * kStageBytes, bytes_of(tile));
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

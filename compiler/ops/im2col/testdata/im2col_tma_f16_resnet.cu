// tiletune im2col kernel (generated; do not edit).
//   path tma_im2col, f16, n64 h56 w56 c64 kernel 3x3 stride 1x1 dilation 1x1 pad 1x1 -> [200704, 576], image strides [200704, 3584, 64, 1]
//   tile [128, 64], 32 threads, 1 load(s) of 64 channels per tile, 2 stage(s), L2 policy image none, columns none

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

// Im2col-mode tensor TMA of a rank-4 NHWC map; coordinates innermost first.
__device__ __forceinline__ void tt_tma_load_im2col(u8* smem, const tt_tensor_map* map, u64* bar, int c, int w, int h, int n, u16 offset_w, u16 offset_h) {
  asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6], {%7, %8};"
               :
               : "r"(tt_smem_addr(smem)), "l"(map), "r"(c), "r"(w), "r"(h), "r"(n), "r"(tt_smem_addr(bar)),
                 "h"(offset_w), "h"(offset_h)
               : "memory");
}

// 2-D tile-mode TMA store; coordinates innermost first.
__device__ __forceinline__ void tt_tma_store_tile(const tt_tensor_map* map, const u8* smem, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];"
               :
               : "l"(map), "r"(c0), "r"(c1), "r"(tt_smem_addr(smem))
               : "memory");
}

// Problem constants; enumerators fold into the code and take no storage.
enum : u32 { kThreads = 32u };
enum : u64 { kNumTiles = 14112ull };
enum : u64 { kTilesK = 9ull };
enum : u64 { kBlockM = 128ull };
enum : u64 { kBlockK = 64ull };
enum : u64 { kM = 200704ull };
enum : u64 { kK = 576ull };
enum : u64 { kElementBytes = 2ull };
enum : u64 { kH = 56ull };
enum : u64 { kW = 56ull };
enum : u64 { kC = 64ull };
enum : u64 { kKW = 3ull };
enum : u64 { kSH = 1ull };
enum : u64 { kSW = 1ull };
enum : u64 { kDH = 1ull };
enum : u64 { kDW = 1ull };
enum : u64 { kPH = 1ull };
enum : u64 { kPW = 1ull };
enum : u64 { kOW = 56ull };
enum : u64 { kOHW = 3136ull };
enum : u32 { kStages = 2u };
enum : u64 { kChannelBox = 64ull };
enum : u32 { kChunks = 1u };
enum : u32 { kChunkBytes = 16384u };
enum : u32 { kChunkStride = 16384u };
enum : u32 { kStageBytes = 16384u };
enum : u64 { kStoreRows = 128ull };
enum : u32 { kStorePieces = 1u };
enum : u32 { kStorePieceBytes = 16384u };

// Channel boxes of the tile starting at column k0 that lie inside the matrix.
__device__ __forceinline__ u32 tt_chunks_of(u64 k0) {
  return k0 + kBlockK <= kK ? kChunks : u32((kK - k0) / kChannelBox);
}

extern "C" __global__ void __launch_bounds__(kThreads) tt_im2col_tma_im2col(const u8* __restrict__ img, u8* __restrict__ col,
    const __grid_constant__ tt_tensor_map img_map, const __grid_constant__ tt_tensor_map col_map) {
  extern __shared__ __align__(128) u8 tt_smem[];
  __shared__ __align__(8) u64 tt_bar[kStages];
  // One thread drives the copy engine; the others have nothing to move.
  if (threadIdx.x != 0) return;
#pragma unroll
  for (u32 s = 0; s < kStages; ++s) tt_mbarrier_init(&tt_bar[s], 1);
  tt_fence_barrier_init();
  const u32 my_tiles = u32((kNumTiles - blockIdx.x + gridDim.x - 1) / gridDim.x);
  // Tile t of this CTA is the tile op at (nhw_step, c_step) = (tile / kTilesK,
  // tile % kTilesK); its rows are kBlockM consecutive output pixels (n, oh, ow).
  auto load = [&](u32 t) {
    const u64 tile = blockIdx.x + u64(t) * gridDim.x;
    const u64 m0 = tile / kTilesK * kBlockM;
    const u64 k0 = tile % kTilesK * kBlockK;
    u8* stage = tt_smem + (t % kStages) * kStageBytes;
    const u32 chunks = tt_chunks_of(k0);
    // The first pixel's window corner is the filter base the TMA starts from; it walks
    // the following pixels through the map's bounding box (lower = -pad, upper =
    // pad - (kernel-1)*dilation) with the stride, into the next image after the last
    // row. Positions outside the image, padding and pixels past the batch, read zero.
    const u64 n = m0 / kOHW;
    const int h = int(m0 % kOHW / kOW * kSH) - int(kPH);
    const int w = int(m0 % kOW * kSW) - int(kPW);
    u64* bar = &tt_bar[t % kStages];
    tt_mbarrier_expect_tx(bar, chunks * kChunkBytes);
    for (u32 j = 0; j < chunks; ++j) {
      const u64 k = k0 + u64(j) * kChannelBox;
      const u64 tap = k / kC;
      tt_tma_load_im2col(stage + j * kChunkStride, &img_map, bar, int(k % kC), w, h, int(n),
                         u16(tap % kKW * kDW), u16(tap / kKW * kDH));
    }
  };
  auto store = [&](u32 t) {
    const u64 tile = blockIdx.x + u64(t) * gridDim.x;
    const u64 m0 = tile / kTilesK * kBlockM;
    const u64 k0 = tile % kTilesK * kBlockK;
    u8* stage = tt_smem + (t % kStages) * kStageBytes;
    const u32 chunks = tt_chunks_of(k0);
    for (u32 j = 0; j < chunks; ++j) {
#pragma unroll
      for (u32 q = 0; q < kStorePieces; ++q) {
        const u64 m = m0 + q * kStoreRows;
        if (m < kM) {
          tt_tma_store_tile(&col_map, stage + j * kChunkStride + q * kStorePieceBytes,
                            int(k0 + j * kChannelBox), int(m));
        }
      }
    }
    tt_bulk_commit();
  };
  for (u32 t = 0; t < kStages - 1 && t < my_tiles; ++t) load(t);
  for (u32 t = 0; t < my_tiles; ++t) {
    tt_mbarrier_wait(&tt_bar[t % kStages], (t / kStages) & 1);
    store(t);
    if (t + kStages - 1 < my_tiles) {
      tt_bulk_wait_read<1>();  // Store t - 1 has left the stage we refill.
      load(t + kStages - 1);
    }
  }
  tt_bulk_wait_all();
}

// tiletune copy kernel (generated; do not edit).
//   path cp_async, f32, extents [1000, 1000], tile [32, 64], 128 threads
//   vector 4 x 4 B, layout 8x16, tile-origin addressing, 3 stage(s), L2 policy evict_last

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
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}

// 16-byte vector accesses.
struct __align__(16) tt_vec {
  u32 x, y, z, w;
};
__device__ __forceinline__ tt_vec tt_ld_global(const u8* p, u64 policy) {
  tt_vec v;
  asm volatile("ld.global.nc.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p), "l"(policy));
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

// cp.async of 16 bytes with an L2 policy; an invalid element is zeroed, not read.
__device__ __forceinline__ void tt_cp_async(u8* smem, const u8* gmem, bool valid, u64 policy) {
  if (valid) {
    u32 zero;  // %tid.y of a 1-D block, opaque to the compilers.
    asm("mov.u32 %0, %%tid.y;" : "=r"(zero));
    asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2;"
                 :
                 : "r"(tt_smem_addr(smem) + zero), "l"(gmem), "l"(policy)
                 : "memory");
  } else {
    tt_st_shared(smem, tt_vec{});
  }
}
__device__ __forceinline__ void tt_cp_async_commit() {
  asm volatile("cp.async.commit_group;" ::: "memory");
}
template <int kPending>
__device__ __forceinline__ void tt_cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" :: "n"(kPending) : "memory");
}

// Problem constants; enumerators fold into the code and take no storage.
enum : u32 { kThreads = 128u };
enum : u64 { kNumTiles = 512ull };
enum : u32 { kStages = 3u };
enum : u32 { kTileBytes = 8192u };
enum : u64 { kElementBytes = 4ull };
enum : u64 { kExtent0 = 1000ull };
enum : u64 { kTile0 = 32ull };
enum : u64 { kTiles0 = 32ull };
enum : u64 { kSrcStride0 = 1000ull };
enum : u64 { kDstStride0 = 1000ull };
enum : u64 { kExtent1 = 1000ull };
enum : u64 { kTile1 = 64ull };
enum : u64 { kTiles1 = 16ull };
enum : u64 { kSrcStride1 = 1ull };
enum : u64 { kDstStride1 = 1ull };
enum : u64 { kVector = 4ull };
enum : u32 { kRows = 8u };
enum : u32 { kCols = 16u };
enum : u32 { kTileRows = 32u };
enum : u32 { kRowVectors = 16u };
enum : u32 { kItemsCol = 1u };
enum : u32 { kItems = 4u };

// Elements of the copy from a tile's origin on, along the dimensions its vectors are tested on.
struct tt_limits { };
// Byte offsets of tile `tile`'s first element, and its limits. A last tile that moves back starts
// kTile before the end, overlapping its neighbour, which writes the same values.
__device__ __forceinline__ void tt_origin(u64 tile, u64& src_byte, u64& dst_byte, tt_limits& lim) {
  (void)lim;
  u64 t = tile;
  const u64 c1 = t % kTiles1;
  t /= kTiles1;
  const u64 c0 = t;
  const u64 o0 = (c0 + 1 == kTiles0 ? kExtent0 - kTile0 : c0 * kTile0);
  const u64 o1 = (c1 + 1 == kTiles1 ? kExtent1 - kTile1 : c1 * kTile1);
  src_byte = (o0 * kSrcStride0 + o1 * kSrcStride1) * kElementBytes;
  dst_byte = (o0 * kDstStride0 + o1 * kDstStride1) * kElementBytes;
}
// Byte offsets of row `row` of a tile from the tile's first element.
__device__ __forceinline__ void tt_row_offsets(u32 row, u64& src_byte, u64& dst_byte) {
  u32 rest = row;
  const u64 r0 = rest;
  src_byte = (r0 * kSrcStride0) * kElementBytes;
  dst_byte = (r0 * kDstStride0) * kElementBytes;
}
// Whether vector `vc` of row `row` is one of the tile's and of the copy's.
__device__ __forceinline__ bool tt_inside(u32 row, u32 vc, const tt_limits& lim) {
  (void)row;
  (void)vc;
  (void)lim;
  return true;
}
__device__ __forceinline__ u32 tt_shared_offset(u32 row, u32 vc) {
  return u32((u64(row) * kTile1 + u64(vc) * kVector) * kElementBytes);
}
__device__ __forceinline__ u64 tt_opaque(u64 a) {
  u64 r;
  asm("mov.b64 %0, %1;" : "=l"(r) : "l"(a));
  return r;
}
// Byte offsets of slot `i` (row `row`) from the thread's base, constants of the unrolled loop.
__device__ __forceinline__ void tt_slot(u32 i, u32 row, u64& src_byte, u64& dst_byte) {
  (void)row;
  tt_row_offsets((i / kItemsCol) * kRows, src_byte, dst_byte);
  src_byte += u64(i % kItemsCol) * kCols * kVector * kSrcStride1 * kElementBytes;
  dst_byte += u64(i % kItemsCol) * kCols * kVector * kDstStride1 * kElementBytes;
}
// Byte offsets of the thread's first slot of a tile from the tile's first element.
__device__ __forceinline__ void tt_thread_offsets(u32 tr, u32 tc, u64& src_byte, u64& dst_byte) {
  tt_row_offsets(tr, src_byte, dst_byte);
  src_byte += u64(tc) * kVector * kSrcStride1 * kElementBytes;
  dst_byte += u64(tc) * kVector * kDstStride1 * kElementBytes;
}

extern "C" __global__ void __launch_bounds__(kThreads) tt_copy_cp_async(const u8* __restrict__ src, u8* __restrict__ dst) {
  const u64 policy = tt_make_policy();
  extern __shared__ __align__(128) u8 tt_smem[];
  // threadIdx.x < kThreads; the modulo tells the compiler so.
  const u32 tr = threadIdx.x % kThreads / kCols;
  const u32 tc = threadIdx.x % kThreads % kCols;
  u64 src_thread, dst_thread;
  tt_thread_offsets(tr, tc, src_thread, dst_thread);
  const u32 my_tiles = u32((kNumTiles - blockIdx.x + gridDim.x - 1) / gridDim.x);
  // Stage k % kStages <- tile k of this CTA, by cp.async.
  auto issue = [&](u32 k) {
    const u64 tile = blockIdx.x + u64(k) * gridDim.x;
    u64 src_origin, dst_origin;
    tt_limits lim;
    tt_origin(tile, src_origin, dst_origin, lim);
    const u8* s = reinterpret_cast<const u8*>(tt_opaque(reinterpret_cast<u64>(src) + src_origin + src_thread));
    u8* d = reinterpret_cast<u8*>(tt_opaque(reinterpret_cast<u64>(dst) + dst_origin + dst_thread));
    (void)d;
    u8* stage = tt_smem + (k % kStages) * kTileBytes;
#pragma unroll
    for (u32 i = 0; i < kItems; ++i) {
      const u32 row = tr + (i / kItemsCol) * kRows;
      const u32 vc = tc + (i % kItemsCol) * kCols;
      if (!tt_inside(row, vc, lim)) continue;
      u64 so, dso;
      tt_slot(i, row, so, dso);
      (void)dso;
      tt_cp_async(stage + tt_shared_offset(row, vc), s + so, true, policy);
    }
  };
  // Global <- stage k % kStages, by vector stores.
  auto drain = [&](u32 k) {
    const u64 tile = blockIdx.x + u64(k) * gridDim.x;
    u64 src_origin, dst_origin;
    tt_limits lim;
    tt_origin(tile, src_origin, dst_origin, lim);
    const u8* s = reinterpret_cast<const u8*>(tt_opaque(reinterpret_cast<u64>(src) + src_origin + src_thread));
    u8* d = reinterpret_cast<u8*>(tt_opaque(reinterpret_cast<u64>(dst) + dst_origin + dst_thread));
    (void)s;
    const u8* stage = tt_smem + (k % kStages) * kTileBytes;
    tt_vec v[kItems];
#pragma unroll
    for (u32 i = 0; i < kItems; ++i) {
      const u32 row = tr + (i / kItemsCol) * kRows;
      const u32 vc = tc + (i % kItemsCol) * kCols;
      if (tt_inside(row, vc, lim)) v[i] = tt_ld_shared(stage + tt_shared_offset(row, vc));
    }
#pragma unroll
    for (u32 i = 0; i < kItems; ++i) {
      const u32 row = tr + (i / kItemsCol) * kRows;
      const u32 vc = tc + (i % kItemsCol) * kCols;
      if (!tt_inside(row, vc, lim)) continue;
      u64 so, dso;
      tt_slot(i, row, so, dso);
      (void)so;
      tt_st_global(d + dso, v[i], policy);
    }
  };
  // Keep kStages - 1 tiles in flight; one commit group per tile slot.
#pragma unroll
  for (u32 k = 0; k < kStages - 1; ++k) {
    if (k < my_tiles) issue(k);
    tt_cp_async_commit();
  }
  for (u32 k = 0; k < my_tiles; ++k) {
    tt_cp_async_wait<kStages - 2>();
    // Tile k has landed for every thread, and every thread has drained tile k - 1,
    // whose stage the next issue reuses.
    __syncthreads();
    if (k + kStages - 1 < my_tiles) issue(k + kStages - 1);
    tt_cp_async_commit();
    drain(k);
  }
}

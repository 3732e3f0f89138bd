// tiletune copy kernel (generated; do not edit).
//   path sync_simt, u8, extents [77, 150], tile [8, 64], 128 threads
//   vector 2 x 1 B, layout 8x16, through shared, tile-origin addressing, 1 stage(s), L2 policy none

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

// 2-byte vector accesses.
struct __align__(2) tt_vec {
  u16 x;
};
__device__ __forceinline__ tt_vec tt_ld_global(const u8* p) {
  tt_vec v;
  asm volatile("ld.global.nc.u16 %0, [%1];"
               : "=h"(v.x)
               : "l"(p));
  return v;
}
__device__ __forceinline__ void tt_st_global(u8* p, const tt_vec& v) {
  asm volatile("st.global.u16 [%0], %1;"
               :
               : "l"(p), "h"(v.x)
               : "memory");
}
__device__ __forceinline__ tt_vec tt_ld_shared(const u8* p) { tt_vec v; v.x = *reinterpret_cast<const u16*>(p); return v; }
__device__ __forceinline__ void tt_st_shared(u8* p, const tt_vec& v) { *reinterpret_cast<u16*>(p) = static_cast<u16>(v.x); }

// Problem constants; enumerators fold into the code and take no storage.
enum : u32 { kThreads = 128u };
enum : u64 { kNumTiles = 30ull };
enum : u32 { kStages = 1u };
enum : u32 { kTileBytes = 512u };
enum : u64 { kElementBytes = 1ull };
enum : u64 { kExtent0 = 77ull };
enum : u64 { kTile0 = 8ull };
enum : u64 { kTiles0 = 10ull };
enum : u64 { kSrcStride0 = 150ull };
enum : u64 { kDstStride0 = 150ull };
enum : u64 { kExtent1 = 150ull };
enum : u64 { kTile1 = 64ull };
enum : u64 { kTiles1 = 3ull };
enum : u64 { kSrcStride1 = 1ull };
enum : u64 { kDstStride1 = 1ull };
enum : u64 { kVector = 2ull };
enum : u32 { kRows = 8u };
enum : u32 { kCols = 16u };
enum : u32 { kTileRows = 8u };
enum : u32 { kRowVectors = 32u };
enum : u32 { kItemsCol = 2u };
enum : u32 { kItems = 2u };

// Elements of the copy from a tile's origin on, along the dimensions its vectors are tested on.
struct tt_limits { u32 e1; };
// Byte offsets of tile `tile`'s first element, and its limits. A last tile that moves back starts
// kTile before the end, overlapping its neighbour, which writes the same values.
__device__ __forceinline__ void tt_origin(u64 tile, u64& src_byte, u64& dst_byte, tt_limits& lim) {
  (void)lim;
  u64 t = tile;
  const u64 c1 = t % kTiles1;
  t /= kTiles1;
  const u64 c0 = t;
  const u64 o0 = (c0 + 1 == kTiles0 ? kExtent0 - kTile0 : c0 * kTile0);
  const u64 o1 = c1 * kTile1;
  lim.e1 = u32(kExtent1 - o1);
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
  return vc * u32(kVector) < lim.e1;
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

extern "C" __global__ void __launch_bounds__(kThreads) tt_copy_sync_simt(const u8* __restrict__ src, u8* __restrict__ dst) {
  extern __shared__ __align__(128) u8 tt_smem[];
  // threadIdx.x < kThreads; the modulo tells the compiler so.
  const u32 tr = threadIdx.x % kThreads / kCols;
  const u32 tc = threadIdx.x % kThreads % kCols;
  u64 src_thread, dst_thread;
  tt_thread_offsets(tr, tc, src_thread, dst_thread);
  for (u64 tile = blockIdx.x; tile < kNumTiles; tile += gridDim.x) {
    u64 src_origin, dst_origin;
    tt_limits lim;
    tt_origin(tile, src_origin, dst_origin, lim);
    const u8* s = reinterpret_cast<const u8*>(tt_opaque(reinterpret_cast<u64>(src) + src_origin + src_thread));
    u8* d = reinterpret_cast<u8*>(tt_opaque(reinterpret_cast<u64>(dst) + dst_origin + dst_thread));
    tt_vec v[kItems];
#pragma unroll
    for (u32 i = 0; i < kItems; ++i) {
      const u32 row = tr + (i / kItemsCol) * kRows;
      const u32 vc = tc + (i % kItemsCol) * kCols;
      if (!tt_inside(row, vc, lim)) continue;
      u64 so, dso;
      tt_slot(i, row, so, dso);
      (void)dso;
      v[i] = tt_ld_global(s + so);
    }
#pragma unroll
    for (u32 i = 0; i < kItems; ++i) {
      const u32 row = tr + (i / kItemsCol) * kRows;
      const u32 vc = tc + (i % kItemsCol) * kCols;
      if (tt_inside(row, vc, lim)) tt_st_shared(tt_smem + tt_shared_offset(row, vc), v[i]);
    }
    __syncthreads();
#pragma unroll
    for (u32 i = 0; i < kItems; ++i) {
      const u32 row = tr + (i / kItemsCol) * kRows;
      const u32 vc = tc + (i % kItemsCol) * kCols;
      if (tt_inside(row, vc, lim)) v[i] = tt_ld_shared(tt_smem + tt_shared_offset(row, vc));
    }
#pragma unroll
    for (u32 i = 0; i < kItems; ++i) {
      const u32 row = tr + (i / kItemsCol) * kRows;
      const u32 vc = tc + (i % kItemsCol) * kCols;
      if (!tt_inside(row, vc, lim)) continue;
      u64 so, dso;
      tt_slot(i, row, so, dso);
      (void)so;
      tt_st_global(d + dso, v[i]);
    }
    __syncthreads();
  }
}

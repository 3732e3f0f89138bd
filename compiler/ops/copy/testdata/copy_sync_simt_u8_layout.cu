// tiletune copy kernel (generated; do not edit).
//   path sync_simt, u8, extents [77, 150], tile [8, 64], 128 threads
//   vector 2 x 1 B, layout 8x16, through shared, 1 stage(s), L2 policy none

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

// Byte offsets of vector `vc` of row `row` of tile `tile`; false when it lies outside the copy.
__device__ __forceinline__ bool tt_locate(u64 tile, u32 row, u32 vc, u64& src_byte, u64& dst_byte) {
  u64 t = tile;
  const u64 c1 = t % kTiles1;
  t /= kTiles1;
  const u64 c0 = t;
  u32 rest = row;
  const u64 g0 = c0 * kTile0 + rest;
  const u64 g1 = c1 * kTile1 + u64(vc) * kVector;
  src_byte = (g0 * kSrcStride0 + g1 * kSrcStride1) * kElementBytes;
  dst_byte = (g0 * kDstStride0 + g1 * kDstStride1) * kElementBytes;
  return g0 < kExtent0 && g1 < kExtent1;
}
__device__ __forceinline__ bool tt_in_tile(u32 row, u32 vc) {
  (void)row;
  (void)vc;
  return true;
}
__device__ __forceinline__ u32 tt_shared_offset(u32 row, u32 vc) {
  return u32((u64(row) * kTile1 + u64(vc) * kVector) * kElementBytes);
}

extern "C" __global__ void __launch_bounds__(kThreads) tt_copy_sync_simt(const u8* __restrict__ src, u8* __restrict__ dst) {
  extern __shared__ __align__(128) u8 tt_smem[];
  const u32 tr = threadIdx.x / kCols;
  const u32 tc = threadIdx.x % kCols;
  for (u64 tile = blockIdx.x; tile < kNumTiles; tile += gridDim.x) {
    tt_vec v[kItems];
    bool ok[kItems];
    u64 dst_byte[kItems];
#pragma unroll
    for (u32 i = 0; i < kItems; ++i) {
      const u32 row = tr + (i / kItemsCol) * kRows;
      const u32 vc = tc + (i % kItemsCol) * kCols;
      u64 src_byte;
      ok[i] = tt_in_tile(row, vc) && tt_locate(tile, row, vc, src_byte, dst_byte[i]);
      if (ok[i]) v[i] = tt_ld_global(src + src_byte);
    }
#pragma unroll
    for (u32 i = 0; i < kItems; ++i) {
      const u32 row = tr + (i / kItemsCol) * kRows;
      const u32 vc = tc + (i % kItemsCol) * kCols;
      if (ok[i]) tt_st_shared(tt_smem + tt_shared_offset(row, vc), v[i]);
    }
    __syncthreads();
#pragma unroll
    for (u32 i = 0; i < kItems; ++i) {
      const u32 row = tr + (i / kItemsCol) * kRows;
      const u32 vc = tc + (i % kItemsCol) * kCols;
      if (ok[i]) v[i] = tt_ld_shared(tt_smem + tt_shared_offset(row, vc));
    }
#pragma unroll
    for (u32 i = 0; i < kItems; ++i) {
      if (ok[i]) tt_st_global(dst + dst_byte[i], v[i]);
    }
    __syncthreads();
  }
}

// tiletune copy kernel (generated; do not edit).
//   path sync_simt, f16, extents [200, 256], tile [16, 128], 256 threads
//   vector 8 x 2 B, layout 16x16, direct, 1 stage(s), L2 policy none

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
__device__ __forceinline__ void tt_st_global(u8* p, const tt_vec& v) {
  asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};"
               :
               : "l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}
__device__ __forceinline__ tt_vec tt_ld_shared(const u8* p) { return *reinterpret_cast<const tt_vec*>(p); }
__device__ __forceinline__ void tt_st_shared(u8* p, const tt_vec& v) { *reinterpret_cast<tt_vec*>(p) = v; }

// Problem constants; enumerators fold into the code and take no storage.
enum : u32 { kThreads = 256u };
enum : u64 { kNumTiles = 26ull };
enum : u32 { kStages = 1u };
enum : u32 { kTileBytes = 4096u };
enum : u64 { kElementBytes = 2ull };
enum : u64 { kExtent0 = 200ull };
enum : u64 { kTile0 = 16ull };
enum : u64 { kTiles0 = 13ull };
enum : u64 { kSrcStride0 = 512ull };
enum : u64 { kDstStride0 = 256ull };
enum : u64 { kExtent1 = 256ull };
enum : u64 { kTile1 = 128ull };
enum : u64 { kTiles1 = 2ull };
enum : u64 { kSrcStride1 = 1ull };
enum : u64 { kDstStride1 = 1ull };
enum : u64 { kVector = 8ull };
enum : u32 { kRows = 16u };
enum : u32 { kCols = 16u };
enum : u32 { kTileRows = 16u };
enum : u32 { kRowVectors = 16u };
enum : u32 { kItemsCol = 1u };
enum : u32 { kItems = 1u };

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
  return g0 < kExtent0;
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
      if (ok[i]) tt_st_global(dst + dst_byte[i], v[i]);
    }
  }
}

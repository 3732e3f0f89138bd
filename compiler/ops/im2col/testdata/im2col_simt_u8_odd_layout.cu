// tiletune im2col kernel (generated; do not edit).
//   path simt_im2col, u8, n3 h7 w9 c3 kernel 2x3 stride 1x2 dilation 2x1 pad 0x2 -> [90, 18], image strides [189, 27, 3, 1]
//   tile [16, 32], 64 threads, vector 1 x 1 B, layout 16x4, 1 stage(s), L2 policy image none, columns none

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

// 1-byte vector accesses.
struct __align__(2) tt_vec {
  u16 x;
};
__device__ __forceinline__ tt_vec tt_ld_global(const u8* p) {
  tt_vec v;
  asm volatile("ld.global.nc.u8 %0, [%1];"
               : "=h"(v.x)
               : "l"(p));
  return v;
}
__device__ __forceinline__ void tt_st_global(u8* p, const tt_vec& v) {
  asm volatile("st.global.u8 [%0], %1;"
               :
               : "l"(p), "h"(v.x)
               : "memory");
}
__device__ __forceinline__ tt_vec tt_ld_shared(const u8* p) { tt_vec v; v.x = *reinterpret_cast<const u8*>(p); return v; }
__device__ __forceinline__ void tt_st_shared(u8* p, const tt_vec& v) { *reinterpret_cast<u8*>(p) = static_cast<u8>(v.x); }

// Problem constants; enumerators fold into the code and take no storage.
enum : u32 { kThreads = 64u };
enum : u64 { kNumTiles = 6ull };
enum : u64 { kTilesK = 1ull };
enum : u64 { kBlockM = 16ull };
enum : u64 { kBlockK = 32ull };
enum : u64 { kM = 90ull };
enum : u64 { kK = 18ull };
enum : u64 { kElementBytes = 1ull };
enum : u64 { kH = 7ull };
enum : u64 { kW = 9ull };
enum : u64 { kC = 3ull };
enum : u64 { kKW = 3ull };
enum : u64 { kSH = 1ull };
enum : u64 { kSW = 2ull };
enum : u64 { kDH = 2ull };
enum : u64 { kDW = 1ull };
enum : u64 { kPH = 0ull };
enum : u64 { kPW = 2ull };
enum : u64 { kOW = 6ull };
enum : u64 { kOHW = 30ull };
enum : u64 { kImgStrideN = 189ull };
enum : u64 { kImgStrideH = 27ull };
enum : u64 { kImgStrideW = 3ull };
enum : u64 { kImgStrideC = 1ull };
enum : u64 { kVector = 1ull };
enum : u32 { kRows = 16u };
enum : u32 { kCols = 4u };
enum : u32 { kRowVectors = 32u };
enum : u32 { kItemsCol = 8u };
enum : u32 { kItems = 8u };

// Byte offset in the image of column-matrix element (m, k); false where the element
// lies in the padding. m = (n, oh, ow), k = (kh, kw, c) with c fastest.
__device__ __forceinline__ bool tt_gather(u64 m, u64 k, u64& img_byte) {
  const u64 n = m / kOHW;
  const u64 oh = m % kOHW / kOW;
  const u64 ow = m % kOW;
  const u64 tap = k / kC;
  const u64 c = k % kC;
  // Above or left of the image the subtraction wraps to a huge value: one compare
  // checks both edges.
  const u64 ih = oh * kSH + tap / kKW * kDH - kPH;
  const u64 iw = ow * kSW + tap % kKW * kDW - kPW;
  img_byte = (n * kImgStrideN + ih * kImgStrideH + iw * kImgStrideW + c * kImgStrideC) *
             kElementBytes;
  return iw < kW;
}

extern "C" __global__ void __launch_bounds__(kThreads) tt_im2col_simt_im2col(const u8* __restrict__ img, u8* __restrict__ col) {
  const u32 tr = threadIdx.x / kCols;
  const u32 tc = threadIdx.x % kCols;
  // Tile t is the tile op at (nhw_step, c_step) = (t / kTilesK, t % kTilesK).
  for (u64 tile = blockIdx.x; tile < kNumTiles; tile += gridDim.x) {
    const u64 m0 = tile / kTilesK * kBlockM;
    const u64 k0 = tile % kTilesK * kBlockK;
    tt_vec v[kItems];
    bool ok[kItems];
    u64 col_byte[kItems];
#pragma unroll
    for (u32 i = 0; i < kItems; ++i) {
      const u32 row = tr + (i / kItemsCol) * kRows;
      const u32 vc = tc + (i % kItemsCol) * kCols;
      const u64 m = m0 + row;
      const u64 k = k0 + u64(vc) * kVector;
      ok[i] = m < kM && k < kK;
      col_byte[i] = (m * kK + k) * kElementBytes;
      v[i] = tt_vec{};
      u64 img_byte;
      if (ok[i] && tt_gather(m, k, img_byte)) v[i] = tt_ld_global(img + img_byte);
    }
#pragma unroll
    for (u32 i = 0; i < kItems; ++i) {
      if (ok[i]) tt_st_global(col + col_byte[i], v[i]);
    }
  }
}

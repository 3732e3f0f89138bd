// tiletune im2col kernel (generated; do not edit).
//   path simt_im2col, f16, n2 h224 w224 c3 kernel 16x16 stride 16x16 dilation 1x1 pad 0x0 -> [392, 768], image strides [150528, 672, 3, 1]
//   tile [14, 768], 256 threads, vector 8 x 2 B along a kernel row (over pixels), layout 4x64, 1 stage(s), L2 policy image none, columns none

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
enum : u64 { kNumTiles = 28ull };
enum : u64 { kTilesK = 1ull };
enum : u64 { kBlockM = 14ull };
enum : u64 { kBlockK = 768ull };
enum : u64 { kM = 392ull };
enum : u64 { kK = 768ull };
enum : u64 { kElementBytes = 2ull };
enum : u64 { kH = 224ull };
enum : u64 { kW = 224ull };
enum : u64 { kC = 3ull };
enum : u64 { kKW = 16ull };
enum : u64 { kSH = 16ull };
enum : u64 { kSW = 16ull };
enum : u64 { kDH = 1ull };
enum : u64 { kDW = 1ull };
enum : u64 { kPH = 0ull };
enum : u64 { kPW = 0ull };
enum : u64 { kOW = 14ull };
enum : u64 { kOHW = 196ull };
enum : u64 { kImgStrideN = 150528ull };
enum : u64 { kImgStrideH = 672ull };
enum : u64 { kImgStrideW = 3ull };
enum : u64 { kImgStrideC = 1ull };
enum : u64 { kVector = 8ull };
enum : u32 { kRows = 4u };
enum : u32 { kCols = 64u };
enum : u32 { kRowVectors = 96u };
enum : u32 { kItemsCol = 2u };
enum : u32 { kItems = 8u };

// Byte offset in the image of column-matrix element (m, k); false where the element
// lies in the padding. m = (n, oh, ow), k = (kh, kw, c) with c fastest.
// A vector from (m, k) runs on along its kernel row, over pixels side by side in
// the image, and lies wholly inside the image or wholly in the padding.
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
  return true;
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
      ok[i] = row < kBlockM && vc < kRowVectors;
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

// tiletune im2col kernel (generated; do not edit).
//   path simt_im2col, f16, n2 h32 w32 c3 kernel 7x7 stride 2x2 dilation 1x1 pad 3x3 -> [512, 147], image strides [3072, 96, 3, 1]
//   tile [63, 147], 256 threads, vector 1 x 2 B, layout 2x128, 1 stage(s), L2 policy image evict_last, columns evict_first

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

// 2-byte vector accesses.
struct __align__(2) tt_vec {
  u16 x;
};
__device__ __forceinline__ tt_vec tt_ld_global(const u8* p, u64 policy) {
  tt_vec v;
  asm volatile("ld.global.nc.L2::cache_hint.u16 %0, [%1], %2;"
               : "=h"(v.x)
               : "l"(p), "l"(policy));
  return v;
}
__device__ __forceinline__ void tt_st_global(u8* p, const tt_vec& v, u64 policy) {
  asm volatile("st.global.L2::cache_hint.u16 [%0], %1, %2;"
               :
               : "l"(p), "h"(v.x), "l"(policy)
               : "memory");
}
__device__ __forceinline__ tt_vec tt_ld_shared(const u8* p) { tt_vec v; v.x = *reinterpret_cast<const u16*>(p); return v; }
__device__ __forceinline__ void tt_st_shared(u8* p, const tt_vec& v) { *reinterpret_cast<u16*>(p) = static_cast<u16>(v.x); }

// Problem constants; enumerators fold into the code and take no storage.
enum : u32 { kThreads = 256u };
enum : u64 { kNumTiles = 9ull };
enum : u64 { kTilesK = 1ull };
enum : u64 { kBlockM = 63ull };
enum : u64 { kBlockK = 147ull };
enum : u64 { kM = 512ull };
enum : u64 { kK = 147ull };
enum : u64 { kElementBytes = 2ull };
enum : u64 { kH = 32ull };
enum : u64 { kW = 32ull };
enum : u64 { kC = 3ull };
enum : u64 { kKW = 7ull };
enum : u64 { kSH = 2ull };
enum : u64 { kSW = 2ull };
enum : u64 { kDH = 1ull };
enum : u64 { kDW = 1ull };
enum : u64 { kPH = 3ull };
enum : u64 { kPW = 3ull };
enum : u64 { kOW = 16ull };
enum : u64 { kOHW = 256ull };
enum : u64 { kImgStrideN = 3072ull };
enum : u64 { kImgStrideH = 96ull };
enum : u64 { kImgStrideW = 3ull };
enum : u64 { kImgStrideC = 1ull };
enum : u64 { kVector = 1ull };
enum : u32 { kRows = 2u };
enum : u32 { kCols = 128u };
enum : u32 { kRowVectors = 147u };
enum : u32 { kItemsCol = 2u };
enum : u32 { kItems = 64u };

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
  return ih < kH && iw < kW;
}

extern "C" __global__ void __launch_bounds__(kThreads) tt_im2col_simt_im2col(const u8* __restrict__ img, u8* __restrict__ col) {
  const u64 img_policy = tt_make_img_policy();
  const u64 col_policy = tt_make_col_policy();
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
      ok[i] = row < kBlockM && vc < kRowVectors && m < kM;
      col_byte[i] = (m * kK + k) * kElementBytes;
      v[i] = tt_vec{};
      u64 img_byte;
      if (ok[i] && tt_gather(m, k, img_byte)) v[i] = tt_ld_global(img + img_byte, img_policy);
    }
#pragma unroll
    for (u32 i = 0; i < kItems; ++i) {
      if (ok[i]) tt_st_global(col + col_byte[i], v[i], col_policy);
    }
  }
}

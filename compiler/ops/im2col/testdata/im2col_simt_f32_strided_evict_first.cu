// tiletune im2col kernel (generated; do not edit).
//   path simt_im2col, f32, n2 h9 w9 c8 kernel 3x3 stride 2x2 dilation 1x1 pad 1x1 -> [50, 72], image strides [720, 80, 8, 1]
//   tile [64, 32], 256 threads, vector 4 x 4 B, layout 32x8, 1 stage(s), L2 policy image evict_first, columns evict_first

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
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}

// L2 eviction priority for the col accesses of this kernel.
__device__ __forceinline__ u64 tt_make_col_policy() {
  u64 policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
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

// Problem constants; enumerators fold into the code and take no storage.
enum : u32 { kThreads = 256u };
enum : u64 { kNumTiles = 3ull };
enum : u64 { kTilesK = 3ull };
enum : u64 { kBlockM = 64ull };
enum : u64 { kBlockK = 32ull };
enum : u64 { kM = 50ull };
enum : u64 { kK = 72ull };
enum : u64 { kElementBytes = 4ull };
enum : u64 { kH = 9ull };
enum : u64 { kW = 9ull };
enum : u64 { kC = 8ull };
enum : u64 { kKW = 3ull };
enum : u64 { kSH = 2ull };
enum : u64 { kSW = 2ull };
enum : u64 { kDH = 1ull };
enum : u64 { kDW = 1ull };
enum : u64 { kPH = 1ull };
enum : u64 { kPW = 1ull };
enum : u64 { kOW = 5ull };
enum : u64 { kOHW = 25ull };
enum : u64 { kImgStrideN = 720ull };
enum : u64 { kImgStrideH = 80ull };
enum : u64 { kImgStrideW = 8ull };
enum : u64 { kImgStrideC = 1ull };
enum : u64 { kVector = 4ull };
enum : u32 { kRows = 32u };
enum : u32 { kCols = 8u };
enum : u32 { kRowVectors = 8u };
enum : u32 { kItemsCol = 1u };
enum : u32 { kItems = 2u };

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
      ok[i] = m < kM && k < kK;
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

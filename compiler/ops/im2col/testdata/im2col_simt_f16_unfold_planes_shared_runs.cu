// tiletune im2col kernel (generated; do not edit).
//   path simt_im2col, f16, n64 h56 w56 c64 kernel 3x3 stride 1x1 dilation 1x1 pad 1x1 -> [200704, 576], image strides [200704, 56, 1, 3136]
//   tile [18, 448], 256 threads, channel_rows columns, vector 8 x 2 B, 1 stage(s), L2 policy image evict_last, columns evict_first

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
__device__ __forceinline__ void tt_st_global(u8* p, const tt_vec& v, u64 policy) {
  asm volatile("st.global.L2::cache_hint.v4.u32 [%0], {%1, %2, %3, %4}, %5;"
               :
               : "l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w), "l"(policy)
               : "memory");
}
__device__ __forceinline__ tt_vec tt_ld_shared(const u8* p) { return *reinterpret_cast<const tt_vec*>(p); }
__device__ __forceinline__ void tt_st_shared(u8* p, const tt_vec& v) { *reinterpret_cast<tt_vec*>(p) = v; }

// One image element.
typedef u16 tt_elem;
__device__ __forceinline__ tt_elem tt_ld_elem(const u8* p, u64 policy) {
  u16 v;
  // Not volatile, so the loads of an unrolled loop may issue together; the
  // compiler may also hoist it above a branch: callers pass valid addresses only.
  asm("ld.global.nc.L2::cache_hint.u16 %0, [%1], %2;" : "=h"(v) : "l"(p), "l"(policy));
  return tt_elem(v);
}

// Problem constants; enumerators fold into the code and take no storage.
enum : u32 { kThreads = 256u };
enum : u64 { kNumTiles = 14336ull };
enum : u64 { kTilesK = 7ull };
enum : u64 { kBlockM = 18ull };
enum : u64 { kBlockK = 448ull };
enum : u64 { kM = 36864ull };
enum : u64 { kK = 3136ull };
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
enum : u64 { kImgStrideN = 200704ull };
enum : u64 { kImgStrideH = 56ull };
enum : u64 { kImgStrideW = 1ull };
enum : u64 { kImgStrideC = 3136ull };
enum : u64 { kOH = 56ull };
enum : u64 { kTaps = 9ull };
enum : u32 { kKH = 3u };
enum : u32 { kVector = 8u };
enum : u32 { kSegVectors = 56u };
enum : u32 { kTileItems = 1008u };
enum : u64 { kPlanes = 4096ull };
enum : u32 { kBoxPlanes = 2u };
enum : u32 { kBand = 8u };
enum : u32 { kBoxCols = 58u };
enum : u32 { kBoxPlane = 580u };

// The vector of consecutive box elements from byte o of the box.
__device__ __forceinline__ tt_vec tt_box_run(const u8* box, u32 o) {
  const u32 s = o % u32(sizeof(tt_vec));
  const tt_vec lo = tt_ld_shared(box + (o - s));
  const tt_vec hi = tt_ld_shared(box + (o - s) + sizeof(tt_vec));
  u32 w[8];
  w[0] = lo.x;
  w[1] = lo.y;
  w[2] = lo.z;
  w[3] = lo.w;
  w[4] = hi.x;
  w[5] = hi.y;
  w[6] = hi.z;
  w[7] = hi.w;
  const u32 shift = s / 4, bits = s % 4 * 8;
  const u32 r0 = shift == 3 ? w[3] : shift == 2 ? w[2] : shift == 1 ? w[1] : w[0];
  const u32 r1 = shift == 3 ? w[4] : shift == 2 ? w[3] : shift == 1 ? w[2] : w[1];
  const u32 r2 = shift == 3 ? w[5] : shift == 2 ? w[4] : shift == 1 ? w[3] : w[2];
  const u32 r3 = shift == 3 ? w[6] : shift == 2 ? w[5] : shift == 1 ? w[4] : w[3];
  const u32 r4 = shift == 3 ? w[7] : shift == 2 ? w[6] : shift == 1 ? w[5] : w[4];
  tt_vec v;
  v.x = __funnelshift_r(r0, r1, bits);
  v.y = __funnelshift_r(r1, r2, bits);
  v.z = __funnelshift_r(r2, r3, bits);
  v.w = __funnelshift_r(r3, r4, bits);
  return v;
}

extern "C" __global__ void __launch_bounds__(kThreads) tt_im2col_simt_im2col(const u8* __restrict__ img, u8* __restrict__ col) {
  const u64 img_policy = tt_make_img_policy();
  const u64 col_policy = tt_make_col_policy();
  extern __shared__ __align__(16) u8 tt_smem[];
  tt_elem* const box = reinterpret_cast<tt_elem*>(tt_smem);
  constexpr u32 kBatch = 4;
  union Pack {
    tt_vec v;
    tt_elem e[kVector];
  };
  // Box offset of matrix row r's element at output row oh0 + ohl, column ow, for a
  // tile from plane plane0.
  auto offset = [](u32 r, u32 plane0, u32 ohl, u32 ow) {
    const u32 p = r / u32(kTaps) - plane0, tap = r % u32(kTaps);
    const u32 kh = tap / u32(kKW), kw = tap % u32(kKW);
    return p * kBoxPlane + (ohl * u32(kSH) + kh * u32(kDH)) * kBoxCols + ow * u32(kSW) +
           kw * u32(kDW);
  };
  for (u64 tile = blockIdx.x; tile < kNumTiles; tile += gridDim.x) {
    const u64 m0 = tile / kTilesK * kBlockM;
    const u32 k0 = u32(tile % kTilesK * kBlockK);
    const u32 plane0 = u32(m0 / kTaps);
    const u32 oh0 = k0 / u32(kOW);
    __syncthreads();  // the previous tile's reads of the box are done
    for (u32 i = threadIdx.x; i < kBoxPlanes * kBoxPlane; i += kThreads) {
      const u32 p = i / kBoxPlane, rest = i % kBoxPlane;
      const u32 plane = plane0 + p;
      // Above or left of the image the subtraction wraps: one compare per axis.
      const u32 ih = oh0 * u32(kSH) + rest / kBoxCols - u32(kPH);
      const u32 iw = rest % kBoxCols - u32(kPW);
      const bool inside = plane < u32(kPlanes) && ih < u32(kH) && iw < u32(kW);
      const tt_elem v = tt_ld_elem(inside ? img + (plane / u32(kC) * kImgStrideN + plane % u32(kC) * kImgStrideC + u64(ih) * kImgStrideH + u64(iw) * kImgStrideW) * kElementBytes : img, img_policy);
      box[i] = inside ? v : tt_elem(0);
    }
    __syncthreads();
    const u32 vectors = kTileItems;
    for (u32 j0 = threadIdx.x; j0 < vectors; j0 += kThreads * kBatch) {
      Pack pack[kBatch];
      u64 at[kBatch];
      u32 valid[kBatch];
#pragma unroll
      for (u32 b = 0; b < kBatch; ++b) {
        const u32 j = j0 + b * kThreads;
        const u32 q = j / kSegVectors, column = k0 + j % kSegVectors * kVector;
        valid[b] = j < vectors && m0 + q < kM && column < u32(kK) ? kVector : 0;
        at[b] = ((m0 + q) * kK + column) * kElementBytes;
        u32 ohl = column / u32(kOW) - oh0, ow = column % u32(kOW);
        u32 at_box = offset(u32(m0) + q, plane0, ohl, ow);
        // Every vector lies within one output row: a run of the box.
        pack[b].v = tt_box_run(tt_smem, (valid[b] == kVector ? at_box : 0u) * u32(kElementBytes));
      }
#pragma unroll
      for (u32 b = 0; b < kBatch; ++b) {
        if (valid[b] == kVector) {
          tt_st_global(col + at[b], pack[b].v, col_policy);
        } else {
          for (u32 e = 0; e < valid[b]; ++e) {
            reinterpret_cast<tt_elem*>(col + at[b])[e] = pack[b].e[e];
          }
        }
      }
    }
  }
}

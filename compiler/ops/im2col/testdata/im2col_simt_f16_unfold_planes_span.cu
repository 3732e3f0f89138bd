// tiletune im2col kernel (generated; do not edit).
//   path simt_im2col, f16, n64 h56 w56 c64 kernel 3x3 stride 1x1 dilation 1x1 pad 1x1 -> [200704, 576], image strides [200704, 56, 1, 3136]
//   tile [3, 3136], 256 threads, channel_rows columns, vector 8 x 2 B, 1 stage(s), L2 policy image evict_last, columns evict_first

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

// 16-byte vector accesses.
struct __align__(16) tt_blk_vec {
  u32 x, y, z, w;
};
__device__ __forceinline__ tt_blk_vec tt_blk_ld_global(const u8* p, u64 policy) {
  tt_blk_vec v;
  asm volatile("ld.global.nc.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p), "l"(policy));
  return v;
}
__device__ __forceinline__ void tt_blk_st_global(u8* p, const tt_blk_vec& v) {
  asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};"
               :
               : "l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}
__device__ __forceinline__ tt_blk_vec tt_blk_ld_shared(const u8* p) { return *reinterpret_cast<const tt_blk_vec*>(p); }
__device__ __forceinline__ void tt_blk_st_shared(u8* p, const tt_blk_vec& v) { *reinterpret_cast<tt_blk_vec*>(p) = v; }

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
enum : u64 { kNumTiles = 12288ull };
enum : u64 { kTilesK = 1ull };
enum : u64 { kBlockM = 3ull };
enum : u64 { kBlockK = 3136ull };
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
enum : u32 { kSegVectors = 1176u };
enum : u32 { kTileItems = 1176u };
enum : u32 { kSpanBlocks = 2u };
enum : u64 { kImageBytes = 25690112ull };

// The kVector elements kSW apart from element iw of the image row at byte `row` of
// img (iw may lie left of it; elements outside the row are zero), read as the aligned
// 16-B blocks that hold them (blocks holding none are not read). False, having read
// nothing, where the last block would pass the image's last byte.
__device__ __forceinline__ bool tt_span_gather(tt_elem (&out)[kVector], const u8* img,
                                               long long row, int iw, u64 img_policy) {
  const int lo_e = max(iw, 0);
  const int hi_e = min(iw + int((kVector - 1) * kSW), int(kW) - 1);
  if (lo_e > hi_e) {
#pragma unroll
    for (u32 e = 0; e < kVector; ++e) out[e] = tt_elem(0);
    return true;
  }
  // The first and last blocks holding an element of the row.
  const long long lo = (row + lo_e * (long long)kElementBytes) & ~15ll;
  const long long hi = (row + hi_e * (long long)kElementBytes) & ~15ll;
  const long long at = row + iw * (long long)kElementBytes;  // element 0's byte
  const long long a0 = at & ~15ll;
  u32 w[8];
#pragma unroll
  for (u32 i = 0; i < kSpanBlocks; ++i) {
    const long long a = a0 + 16 * i;
    tt_blk_vec x = {0u, 0u, 0u, 0u};
    if (a >= lo && a <= hi) x = tt_blk_ld_global(img + a, img_policy);
    w[4 * i] = x.x;
    w[4 * i + 1] = x.y;
    w[4 * i + 2] = x.z;
    w[4 * i + 3] = x.w;
  }
#pragma unroll
  for (u32 i = 4 * kSpanBlocks; i < 8; ++i) w[i] = 0;
  // Element 0 moved to byte 0: whole words by selects, then bytes by funnel shifts.
  const u32 q = u32(at - a0) >> 2;
  const u32 r = u32(at - a0) % 4 * 8;
  u32 x[5];
#pragma unroll
  for (u32 j = 0; j <= 4; ++j) {
    x[j] = q == 0 ? w[j] : q == 1 ? w[j + 1] : q == 2 ? w[j + 2] : w[j + 3];
  }
#pragma unroll
  for (u32 e = 0; e < kVector; ++e) {
    const u32 o = e * kSW * kElementBytes;  // element e's byte once shifted
    const u32 word = __funnelshift_r(x[o / 4], x[o / 4 + 1], r);
    const tt_elem v = tt_elem(word >> (o % 4 * 8));
    out[e] = u32(iw + int(e * kSW)) < u32(kW) ? v : tt_elem(0);
  }
  return true;
}

extern "C" __global__ void __launch_bounds__(kThreads) tt_im2col_simt_im2col(const u8* __restrict__ img, u8* __restrict__ col) {
  const u64 img_policy = tt_make_img_policy();
  const u64 col_policy = tt_make_col_policy();
  constexpr u32 kBatch = 4;
  union Pack {
    tt_vec v;
    tt_elem e[kVector];
  };
  for (u64 tile = blockIdx.x; tile < kNumTiles; tile += gridDim.x) {
    const u64 m0 = tile / kTilesK * kBlockM;
    const u32 k0 = u32(tile % kTilesK * kBlockK);
    // Whole rows: one run of the tile's rows (fewer in the last tile).
    const u32 run = u32(m0 + kBlockM <= kM ? kBlockM * kK : (kM - m0) * kK);
    const u32 vectors = (run + kVector - 1) / kVector;
    for (u32 j0 = threadIdx.x; j0 < vectors; j0 += kThreads * kBatch) {
      Pack pack[kBatch];
      u64 at[kBatch];
      u32 valid[kBatch];
#pragma unroll
      for (u32 b = 0; b < kBatch; ++b) {
        const u32 j = j0 + b * kThreads;
        const u32 f = j * kVector;  // element of the run
        valid[b] = j < vectors ? min(kVector, run - f) : 0;
        u64 r = m0 + f / u32(kK);
        u32 p = f % u32(kK);
        at[b] = (m0 * kK + f) * kElementBytes;
        // Where the vector starts: (plane, kh, kw) of its row, (oh, ow) of its column,
        // and the image position (ih, iw) they read; each then steps along the vector.
        u32 oh = p / u32(kOW), ow = p % u32(kOW);
        const u32 tap = u32(r % kTaps);
        u32 kh = tap / u32(kKW), kw = tap % u32(kKW);
        u64 plane = r / kTaps;
        const u8* from = img + (plane / kC * kImgStrideN + plane % kC * kImgStrideC) * kElementBytes;
        // Above or left of the image the subtraction wraps: one compare per axis.
        u32 ih = oh * u32(kSH) + kh * u32(kDH) - u32(kPH);
        u32 iw = ow * u32(kSW) + kw * u32(kDW) - u32(kPW);
        const u8* line = from + u64(ih) * (kImgStrideH * kElementBytes);
        if (valid[b] == kVector && ow + kVector <= u32(kOW)) {
          if (ih >= u32(kH)) {
#pragma unroll
            for (u32 e = 0; e < kVector; ++e) pack[b].e[e] = tt_elem(0);
            continue;
          }
          if (tt_span_gather(pack[b].e, img, (long long)(line - img), int(iw), img_policy)) continue;
        }
#pragma unroll
        for (u32 e = 0; e < kVector; ++e) {
          const bool inside = e < valid[b] && ih < kH && iw < kW;
          const tt_elem v = tt_ld_elem(
              inside ? line + u64(iw) * (kImgStrideW * kElementBytes) : img, img_policy);
          pack[b].e[e] = inside ? v : tt_elem(0);
          // The next element: the next column, wrapping to the next row.
          iw += u32(kSW);
          if (++ow == u32(kOW)) {
            ow = 0;
            ih += u32(kSH);
            if (++oh == u32(kOH)) {
              oh = 0;
              if (++kw == u32(kKW)) {
                kw = 0;
                if (++kh == u32(kKH)) {
                  kh = 0;
                  ++plane;
                  from = img + (plane / kC * kImgStrideN + plane % kC * kImgStrideC) * kElementBytes;
                }
              }
              ih = kh * u32(kDH) - u32(kPH);
            }
            iw = kw * u32(kDW) - u32(kPW);
            line = from + u64(ih) * (kImgStrideH * kElementBytes);
          }
        }
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

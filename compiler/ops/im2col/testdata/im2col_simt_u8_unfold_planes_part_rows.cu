// tiletune im2col kernel (generated; do not edit).
//   path simt_im2col, u8, n3 h7 w9 c3 kernel 2x3 stride 1x2 dilation 2x1 pad 0x2 -> [90, 18], image strides [189, 27, 3, 1]
//   tile [2, 4], 64 threads, channel_rows columns, vector 2 x 1 B, 1 stage(s), L2 policy image none, columns none

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

// One image element.
typedef u8 tt_elem;
__device__ __forceinline__ tt_elem tt_ld_elem(const u8* p) {
  u16 v;
  // Not volatile, so the loads of an unrolled loop may issue together; the
  // compiler may also hoist it above a branch: callers pass valid addresses only.
  asm("ld.global.nc.u8 %0, [%1];" : "=h"(v) : "l"(p));
  return tt_elem(v);
}

// Problem constants; enumerators fold into the code and take no storage.
enum : u32 { kThreads = 64u };
enum : u64 { kNumTiles = 216ull };
enum : u64 { kTilesK = 8ull };
enum : u64 { kBlockM = 2ull };
enum : u64 { kBlockK = 4ull };
enum : u64 { kM = 54ull };
enum : u64 { kK = 30ull };
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
enum : u64 { kOH = 5ull };
enum : u64 { kTaps = 6ull };
enum : u32 { kKH = 2u };
enum : u32 { kVector = 2u };
enum : u32 { kSegVectors = 2u };
enum : u32 { kTileItems = 4u };

extern "C" __global__ void __launch_bounds__(kThreads) tt_im2col_simt_im2col(const u8* __restrict__ img, u8* __restrict__ col) {
  constexpr u32 kBatch = 4;
  union Pack {
    tt_vec v;
    tt_elem e[kVector];
  };
  for (u64 tile = blockIdx.x; tile < kNumTiles; tile += gridDim.x) {
    const u64 m0 = tile / kTilesK * kBlockM;
    const u32 k0 = u32(tile % kTilesK * kBlockK);
    const u32 vectors = kTileItems;
    for (u32 j0 = threadIdx.x; j0 < vectors; j0 += kThreads * kBatch) {
      Pack pack[kBatch];
      u64 at[kBatch];
      u32 valid[kBatch];
#pragma unroll
      for (u32 b = 0; b < kBatch; ++b) {
        const u32 j = j0 + b * kThreads;
        const u32 row = j / kSegVectors, column = k0 + j % kSegVectors * kVector;
        u64 r = m0 + row;
        u32 p = column;
        valid[b] = j < vectors && r < kM && p < u32(kK) ? kVector : 0;
        at[b] = (r * kK + p) * kElementBytes;
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
#pragma unroll
        for (u32 e = 0; e < kVector; ++e) {
          const bool inside = e < valid[b] && iw < kW;
          const tt_elem v = tt_ld_elem(
              inside ? line + u64(iw) * (kImgStrideW * kElementBytes) : img);
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
          tt_st_global(col + at[b], pack[b].v);
        } else {
          for (u32 e = 0; e < valid[b]; ++e) {
            reinterpret_cast<tt_elem*>(col + at[b])[e] = pack[b].e[e];
          }
        }
      }
    }
  }
}

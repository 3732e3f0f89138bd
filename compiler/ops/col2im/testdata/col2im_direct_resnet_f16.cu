// tiletune col2im kernel (generated; do not edit).
//   simt_col2im (direct form), f16, n64 h56 w56 c64 kernel 3x3 stride 1x1 dilation 1x1 pad 1x1 -> [200704, 576], image strides [200704, 3584, 64, 1]
//   output tile 1x32, 256 threads, vector 8 x 2 B, 8 channel(s) per thread, L2 policy columns evict_first, image none
//   taps summed in f32, kh ascending then kw; one rounding; NaN canonical
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
__device__ __forceinline__ void tt_st_global(u8* p, const tt_vec& v) {
  asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};"
               :
               : "l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}
__device__ __forceinline__ tt_vec tt_ld_shared(const u8* p) { return *reinterpret_cast<const tt_vec*>(p); }
__device__ __forceinline__ void tt_st_shared(u8* p, const tt_vec& v) { *reinterpret_cast<tt_vec*>(p) = v; }

// f16 elements: exact widening, round to nearest even, canonical NaN.
typedef u16 tt_elem;
__device__ __forceinline__ float tt_widen(tt_elem b) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(b));
  return f;
}
__device__ __forceinline__ tt_elem tt_round(float f) {
  if (f != f) return 0x7fff;
  tt_elem b;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(b) : "f"(f));
  return b;
}
union tt_lanes {
  tt_vec v;
  tt_elem e[sizeof(tt_vec) / sizeof(tt_elem)];
};

// Problem constants; enumerators fold into the code and take no storage.
enum : u32 { kThreads = 256u };
enum : u64 { kNumTiles = 7168ull };
enum : u32 { kTilesH = 56u };
enum : u32 { kTilesW = 2u };
enum : u32 { kTileH = 1u };
enum : u32 { kTileW = 32u };
enum : u64 { kElementBytes = 2ull };
enum : u32 { kH = 56u };
enum : u32 { kW = 56u };
enum : u32 { kC = 64u };
enum : u32 { kKH = 3u };
enum : u32 { kKW = 3u };
enum : u32 { kSH = 1u };
enum : u32 { kSW = 1u };
enum : u32 { kDH = 1u };
enum : u32 { kDW = 1u };
enum : u32 { kPH = 1u };
enum : u32 { kPW = 1u };
enum : u32 { kStepH = 1u };
enum : u32 { kStepW = 1u };
enum : u32 { kOH = 56u };
enum : u32 { kOW = 56u };
enum : u64 { kK = 576ull };
enum : u64 { kImgStrideN = 200704ull };
enum : u64 { kImgStrideH = 3584ull };
enum : u64 { kImgStrideW = 64ull };
enum : u64 { kImgStrideC = 1ull };
enum : u32 { kVector = 8u };
enum : u32 { kPerThread = 8u };
enum : u32 { kGroups = 8u };
enum : u32 { kResW = 32u };
enum : u32 { kRowItems = 32u };
constexpr long long kColTapStep = -1024;  // bytes from one tap of a class to the next in the matrix
enum : u32 { kTileItems = 256u };

// The first tap t < step with t*d = x (mod s), or ~0 when none reaches x (x is not a
// multiple of gcd(d, s)); the others are t + step, t + 2*step, ...
__device__ __forceinline__ u32 tt_first_tap(u32 x, u32 d, u32 s, u32 step) {
  u32 t = 0;
  while (t < step && (x % s + s - t * d % s) % s != 0) ++t;
  return t < step ? t : 0xffffffffu;  // none: the tap loops do not start
}
// The first tap of t's class (t, t + step, ...) with tap*d >= need.
__device__ __forceinline__ u32 tt_skip(u32 t, u32 need, u32 d, u32 step) {
  const u32 least = (need + d - 1) / d;
  return t >= least ? t : t + (least - t + step - 1) / step * step;
}

extern "C" __global__ void __launch_bounds__(kThreads) tt_col2im_direct(const u8* __restrict__ col, u8* __restrict__ img) {
  const u64 col_policy = tt_make_col_policy();
  // Tile t: image n, rows from h0, columns from w0, every channel.
  for (u64 tile = blockIdx.x; tile < kNumTiles; tile += gridDim.x) {
    const u32 n = u32(tile / (u64(kTilesH) * kTilesW));
    const u32 h0 = u32(tile / kTilesW % kTilesH) * kTileH;
    const u32 w0 = u32(tile % kTilesW) * kTileW;
    for (u32 item = threadIdx.x; item < kTileItems; item += kThreads) {
      const u32 c0 = item % kGroups * kPerThread;
      const u32 pixel = item / kGroups;
      const u32 q = pixel % kRowItems;  // residue class q / kResW, its (q % kResW)-th column
      const u32 w_in = q / kResW + q % kResW * kSW;
      const u32 h = h0 + pixel / kRowItems;
      const u32 w = w0 + w_in;
      if (w_in >= kTileW || h >= kH || w >= kW) continue;
      float acc[kPerThread];
#pragma unroll
      for (u32 i = 0; i < kPerThread; ++i) acc[i] = 0.0f;
      u32 kw0 = tt_first_tap(w + kPW, kDW, kSW, kStepW);
      if (kw0 != 0xffffffffu && w + kPW > (kOW - 1) * kSW) {
        kw0 = tt_skip(kw0, w + kPW - (kOW - 1) * kSW, kDW, kStepW);  // ow < OW
      }
      u32 kh = tt_first_tap(h + kPH, kDH, kSH, kStepH);
      if (kh != 0xffffffffu && h + kPH > (kOH - 1) * kSH) {
        kh = tt_skip(kh, h + kPH - (kOH - 1) * kSH, kDH, kStepH);  // oh < OH
      }
      for (; kh < kKH && kh * kDH <= h + kPH; kh += kStepH) {
        const u32 oh = (h + kPH - kh * kDH) / kSH;
        u32 kw = kw0;
        const u32 ow = (w + kPW - kw * kDW) / kSW;
        const u8* p = col + (((u64(n) * kOH + oh) * kOW + ow) * kK +
                             (kh * kKW + kw) * kC + c0) * kElementBytes;
        for (; kw < kKW && kw * kDW <= w + kPW; kw += kStepW) {
#pragma unroll
          for (u32 v = 0; v < kPerThread / kVector; ++v) {
            tt_lanes lanes;
            lanes.v = tt_ld_global(p + v * kVector * kElementBytes, col_policy);
#pragma unroll
            for (u32 i = 0; i < kVector; ++i) acc[v * kVector + i] += tt_widen(lanes.e[i]);
          }
          p += kColTapStep;
        }
      }
      u8* out = img + (u64(n) * kImgStrideN + u64(h) * kImgStrideH + u64(w) * kImgStrideW +
                       u64(c0) * kImgStrideC) * kElementBytes;
#pragma unroll
      for (u32 v = 0; v < kPerThread / kVector; ++v) {
        tt_lanes lanes;
#pragma unroll
        for (u32 i = 0; i < kVector; ++i) lanes.e[i] = tt_round(acc[v * kVector + i]);
        tt_st_global(out + v * kVector * kImgStrideC * kElementBytes, lanes.v);
      }
    }
  }
}

// tiletune col2im kernel (generated; do not edit).
//   simt_col2im (planes form), f16, n64 h56 w56 c64 kernel 3x3 stride 1x1 dilation 1x1 pad 1x1 -> [200704, 576], image strides [200704, 56, 1, 3136]
//   output tile 8x56, 256 threads, vector 8 x 2 B, 8 channel(s) per thread, L2 policy columns evict_first, image none
//   channel_rows columns; taps summed in f32, kh descending then kw (F.fold's order); one rounding; NaN canonical
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
enum : u64 { kNumTiles = 28672ull };
enum : u32 { kTilesPerPlane = 7u };
enum : u32 { kTilesW = 1u };
enum : u32 { kTileH = 8u };
enum : u32 { kTileW = 56u };
enum : u64 { kElementBytes = 2ull };
enum : u32 { kH = 56u };
enum : u32 { kW = 56u };
enum : u64 { kC = 64ull };
enum : u32 { kKH = 3u };
enum : u32 { kKW = 3u };
enum : u32 { kSH = 1u };
enum : u32 { kSW = 1u };
enum : u32 { kDH = 1u };
enum : u32 { kDW = 1u };
enum : u32 { kPH = 1u };
enum : u32 { kPW = 1u };
enum : u32 { kOH = 56u };
enum : u32 { kOW = 56u };
enum : u64 { kL = 3136ull };
enum : u64 { kTaps = 9ull };
enum : u64 { kImgStrideN = 200704ull };
enum : u64 { kImgStrideH = 56ull };
enum : u64 { kImgStrideW = 1ull };
enum : u64 { kImgStrideC = 3136ull };
enum : u32 { kVector = 8u };
enum : u32 { kRowVectors = 7u };
enum : u32 { kItems = 56u };

// One column-matrix element by a non-coherent load.
__device__ __forceinline__ tt_elem tt_ld_col(const u8* p, u64 policy) {
  tt_elem v;
  asm("ld.global.nc.L2::cache_hint.u16 %0, [%1], %2;" : "=h"(v) : "l"(p), "l"(policy));
  return v;
}

extern "C" __global__ void __launch_bounds__(kThreads) tt_col2im_planes(const u8* __restrict__ col, u8* __restrict__ img) {
  const u64 col_policy = tt_make_col_policy();
  for (u64 tile = blockIdx.x; tile < kNumTiles; tile += gridDim.x) {
    const u64 plane = tile / kTilesPerPlane;
    const u32 t = u32(tile % kTilesPerPlane);
    const u32 h0 = t / kTilesW * kTileH, w0 = t % kTilesW * kTileW;
    const u64 n = plane / kC, c = plane % kC;
    const u8* const from = col + plane * kTaps * kL * kElementBytes;
    u8* const to = img + (n * kImgStrideN + c * kImgStrideC) * kElementBytes;
    for (u32 i = threadIdx.x; i < kItems; i += kThreads) {
      const u32 h = h0 + i / kRowVectors, w = w0 + i % kRowVectors * kVector;
      if (h >= kH || w >= kW) continue;
      float acc[kVector];
#pragma unroll
      for (u32 e = 0; e < kVector; ++e) acc[e] = 0.0f;
      for (int kh = int(kKH) - 1; kh >= 0; --kh) {
        const int th = int(h + kPH) - kh * int(kDH);
        if (th < 0 || th % int(kSH) != 0 || th / int(kSH) >= int(kOH)) continue;
        const u32 oh = u32(th) / kSH;
        for (int kw = int(kKW) - 1; kw >= 0; --kw) {
          const u8* const row =
              from + ((u64(kh) * kKW + u32(kw)) * kL + u64(oh) * kOW) * kElementBytes;
#pragma unroll
          for (u32 e = 0; e < kVector; ++e) {
            const int tw = int(w + e + kPW) - kw * int(kDW);
            if (tw >= 0 && tw % int(kSW) == 0 && tw / int(kSW) < int(kOW)) {
              acc[e] += tt_widen(tt_ld_col(row + u64(u32(tw) / kSW) * kElementBytes, col_policy));
            }
          }
        }
      }
      tt_lanes out;
#pragma unroll
      for (u32 e = 0; e < kVector; ++e) out.e[e] = tt_round(acc[e]);
      tt_st_global(to + (u64(h) * kImgStrideH + u64(w) * kImgStrideW) * kElementBytes, out.v);
    }
  }
}

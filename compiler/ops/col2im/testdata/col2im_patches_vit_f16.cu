// tiletune col2im kernel (generated; do not edit).
//   simt_col2im (patches form), f16, n2 h224 w224 c3 kernel 16x16 stride 16x16 dilation 1x1 pad 0x0 -> [392, 768], image strides [150528, 224, 1, 50176]
//   output tile 14x224, 256 threads, vector 8 x 2 B, 3 channel(s) per thread, L2 policy columns none, image none
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

// 16-byte vector accesses.
struct __align__(16) tp_vec {
  u32 x, y, z, w;
};
__device__ __forceinline__ tp_vec tp_ld_global(const u8* p) {
  tp_vec v;
  asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}
__device__ __forceinline__ void tp_st_global(u8* p, const tp_vec& v) {
  asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};"
               :
               : "l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}
__device__ __forceinline__ tp_vec tp_ld_shared(const u8* p) { return *reinterpret_cast<const tp_vec*>(p); }
__device__ __forceinline__ void tp_st_shared(u8* p, const tp_vec& v) { *reinterpret_cast<tp_vec*>(p) = v; }

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
enum : u64 { kNumTiles = 96ull };
enum : u32 { kPlaneTiles = 16u };
enum : u32 { kOhTiles = 1u };
enum : u32 { kPatchRows = 1u };
enum : u32 { kPatchOh = 14u };
enum : u32 { kKH = 16u };
enum : u32 { kKW = 16u };
enum : u32 { kOH = 14u };
enum : u32 { kOW = 14u };
enum : u64 { kL = 196ull };
enum : u64 { kW = 224ull };
enum : u32 { kPitch = 196u };
enum : u32 { kLoad = 8u };
enum : u32 { kVector = 8u };
enum : u32 { kRowVectors = 28u };
enum : u64 { kElementBytes = 2ull };

extern "C" __global__ void __launch_bounds__(kThreads) tt_col2im_patches(const u8* __restrict__ col, u8* __restrict__ img) {
  extern __shared__ __align__(16) u8 tt_smem[];
  const tt_elem* const stage = reinterpret_cast<const tt_elem*>(tt_smem);
  for (u64 tile = blockIdx.x; tile < kNumTiles; tile += gridDim.x) {
    const u64 plane = tile / kPlaneTiles;
    const u32 t = u32(tile % kPlaneTiles);
    const u32 kh0 = t / kOhTiles * kPatchRows, oh0 = t % kOhTiles * kPatchOh;
    const u32 rows = min(kPatchRows, kKH - kh0), ohs = min(kPatchOh, kOH - oh0);
    const u8* const from = col + ((plane * kKH + kh0) * kKW * kL + u64(oh0) * kOW) * kElementBytes;
    __syncthreads();  // the previous tile's stores are done with the stage
    // Every window row: the taps' matrix rows are one span.
    const u32 loads = rows * kKW * u32(kL) / kLoad;
    for (u32 i = threadIdx.x; i < loads; i += kThreads) {
      const u64 at = u64(i) * kLoad * kElementBytes;
      tp_st_shared(tt_smem + at, tp_ld_global(from + at));
    }
    __syncthreads();
    u8* const to = img + plane * kKH * kOH * kW * kElementBytes;
    const u32 items = rows * ohs * kRowVectors;
    for (u32 i = threadIdx.x; i < items; i += kThreads) {
      const u32 row = i / kRowVectors, x = i % kRowVectors * kVector;
      const u32 q = row % rows, o = row / rows;
      const tt_elem* const src = stage + q * kKW * kPitch + o * kOW;
      tt_lanes out;
#pragma unroll
      for (u32 e = 0; e < kVector; ++e) {
        // One element's sum, as the other forms start theirs: 0 + x, rounded back.
        const u32 w = x + e;
        out.e[e] = tt_round(0.0f + tt_widen(src[w % kKW * kPitch + w / kKW]));
      }
      tt_st_global(to + ((u64(oh0 + o) * kKH + kh0 + q) * kW + x) * kElementBytes, out.v);
    }
  }
}

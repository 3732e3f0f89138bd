// tiletune col2im kernel (generated; do not edit).
//   simt_col2im (patches form), bf16, n2 h12 w20 c3 kernel 2x4 stride 2x4 dilation 1x1 pad 0x0 -> [60, 24], image strides [720, 20, 1, 240]
//   output tile 8x20, 64 threads, vector 4 x 2 B, 3 channel(s) per thread, L2 policy columns evict_first, image none
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

// 8-byte vector accesses.
struct __align__(8) tt_vec {
  u32 x, y;
};
__device__ __forceinline__ tt_vec tt_ld_global(const u8* p) {
  tt_vec v;
  asm volatile("ld.global.nc.v2.u32 {%0, %1}, [%2];"
               : "=r"(v.x), "=r"(v.y)
               : "l"(p));
  return v;
}
__device__ __forceinline__ void tt_st_global(u8* p, const tt_vec& v) {
  asm volatile("st.global.v2.u32 [%0], {%1, %2};"
               :
               : "l"(p), "r"(v.x), "r"(v.y)
               : "memory");
}
__device__ __forceinline__ tt_vec tt_ld_shared(const u8* p) { return *reinterpret_cast<const tt_vec*>(p); }
__device__ __forceinline__ void tt_st_shared(u8* p, const tt_vec& v) { *reinterpret_cast<tt_vec*>(p) = v; }

// 2-byte vector accesses.
struct __align__(2) tp_vec {
  u16 x;
};
__device__ __forceinline__ tp_vec tp_ld_global(const u8* p, u64 policy) {
  tp_vec v;
  asm volatile("ld.global.nc.L2::cache_hint.u16 %0, [%1], %2;"
               : "=h"(v.x)
               : "l"(p), "l"(policy));
  return v;
}
__device__ __forceinline__ void tp_st_global(u8* p, const tp_vec& v) {
  asm volatile("st.global.u16 [%0], %1;"
               :
               : "l"(p), "h"(v.x)
               : "memory");
}
__device__ __forceinline__ tp_vec tp_ld_shared(const u8* p) { tp_vec v; v.x = *reinterpret_cast<const u16*>(p); return v; }
__device__ __forceinline__ void tp_st_shared(u8* p, const tp_vec& v) { *reinterpret_cast<u16*>(p) = static_cast<u16>(v.x); }

// bf16 elements: exact widening, round to nearest even, canonical NaN.
typedef u16 tt_elem;
__device__ __forceinline__ float tt_widen(tt_elem b) {
  return __uint_as_float(u32(b) << 16);
}
__device__ __forceinline__ tt_elem tt_round(float f) {
  const u32 x = __float_as_uint(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return 0x7fff;
  return tt_elem((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
union tt_lanes {
  tt_vec v;
  tt_elem e[sizeof(tt_vec) / sizeof(tt_elem)];
};

// Problem constants; enumerators fold into the code and take no storage.
enum : u32 { kThreads = 64u };
enum : u64 { kNumTiles = 12ull };
enum : u32 { kPlaneTiles = 2u };
enum : u32 { kOhTiles = 2u };
enum : u32 { kPatchRows = 2u };
enum : u32 { kPatchOh = 4u };
enum : u32 { kKH = 2u };
enum : u32 { kKW = 4u };
enum : u32 { kOH = 6u };
enum : u32 { kOW = 5u };
enum : u64 { kL = 30ull };
enum : u64 { kW = 20ull };
enum : u32 { kPitch = 20u };
enum : u32 { kLoad = 1u };
enum : u32 { kVector = 4u };
enum : u32 { kRowVectors = 5u };
enum : u64 { kElementBytes = 2ull };

extern "C" __global__ void __launch_bounds__(kThreads) tt_col2im_patches(const u8* __restrict__ col, u8* __restrict__ img) {
  const u64 col_policy = tt_make_col_policy();
  extern __shared__ __align__(16) u8 tt_smem[];
  const tt_elem* const stage = reinterpret_cast<const tt_elem*>(tt_smem);
  for (u64 tile = blockIdx.x; tile < kNumTiles; tile += gridDim.x) {
    const u64 plane = tile / kPlaneTiles;
    const u32 t = u32(tile % kPlaneTiles);
    const u32 kh0 = t / kOhTiles * kPatchRows, oh0 = t % kOhTiles * kPatchOh;
    const u32 rows = min(kPatchRows, kKH - kh0), ohs = min(kPatchOh, kOH - oh0);
    const u8* const from = col + ((plane * kKH + kh0) * kKW * kL + u64(oh0) * kOW) * kElementBytes;
    __syncthreads();  // the previous tile's stores are done with the stage
    // A run of ohs window rows from each of the taps' matrix rows.
    const u32 per_run = ohs * kOW / kLoad, loads = rows * kKW * per_run;
    for (u32 i = threadIdx.x; i < loads; i += kThreads) {
      const u32 r = i / per_run, j = i % per_run * kLoad;
      tp_st_shared(tt_smem + (u64(r) * kPitch + j) * kElementBytes,
                   tp_ld_global(from + (u64(r) * kL + j) * kElementBytes, col_policy));
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

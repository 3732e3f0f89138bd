// tiletune im2col kernel (generated; do not edit).
//   path simt_im2col, f16, n2 h224 w224 c3 kernel 16x16 stride 16x16 dilation 1x1 pad 0x0 -> [392, 768], image strides [150528, 224, 1, 50176]
//   tile [32, 196], 256 threads, channel_rows columns, vector 8 x 2 B, 1 stage(s), L2 policy image none, columns evict_first

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
__device__ __forceinline__ void tt_st_global(u8* p, const tt_vec& v, u64 policy) {
  asm volatile("st.global.L2::cache_hint.v4.u32 [%0], {%1, %2, %3, %4}, %5;"
               :
               : "l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w), "l"(policy)
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

// One image element.
typedef u16 tt_elem;
__device__ __forceinline__ tt_elem tt_ld_elem(const u8* p) {
  u16 v;
  // Not volatile, so the loads of an unrolled loop may issue together; the
  // compiler may also hoist it above a branch: callers pass valid addresses only.
  asm("ld.global.nc.u16 %0, [%1];" : "=h"(v) : "l"(p));
  return tt_elem(v);
}

// Problem constants; enumerators fold into the code and take no storage.
enum : u32 { kThreads = 256u };
enum : u64 { kNumTiles = 48ull };
enum : u64 { kTilesK = 1ull };
enum : u64 { kBlockM = 32ull };
enum : u64 { kBlockK = 196ull };
enum : u64 { kM = 1536ull };
enum : u64 { kK = 196ull };
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
enum : u64 { kImgStrideH = 224ull };
enum : u64 { kImgStrideW = 1ull };
enum : u64 { kImgStrideC = 50176ull };
enum : u64 { kOH = 14ull };
enum : u64 { kTaps = 256ull };
enum : u32 { kKH = 16u };
enum : u32 { kVector = 8u };
enum : u32 { kSegVectors = 784u };
enum : u32 { kTileItems = 784u };
enum : u32 { kPlaneTiles = 8u };
enum : u32 { kOhTiles = 1u };
enum : u32 { kPatchRows = 2u };
enum : u32 { kPatchOh = 14u };
enum : u32 { kPitch = 196u };
enum : u32 { kLoad = 8u };
enum : u32 { kRowLoads = 28u };

extern "C" __global__ void __launch_bounds__(kThreads) tt_im2col_simt_im2col(const u8* __restrict__ img, u8* __restrict__ col) {
  const u64 col_policy = tt_make_col_policy();
  extern __shared__ __align__(16) u8 tt_smem[];
  tt_elem* const stage = reinterpret_cast<tt_elem*>(tt_smem);
  union Loaded {
    tp_vec v;
    tt_elem e[kLoad];
  };
  for (u64 tile = blockIdx.x; tile < kNumTiles; tile += gridDim.x) {
    const u64 plane = tile / kPlaneTiles;
    const u32 t = u32(tile % kPlaneTiles);
    const u32 kh0 = t / kOhTiles * kPatchRows, oh0 = t % kOhTiles * kPatchOh;
    const u32 rows = min(kPatchRows, u32(kKH) - kh0), ohs = min(kPatchOh, u32(kOH) - oh0);
    const u8* const from = img + plane * kH * kW * kElementBytes;
    __syncthreads();  // the previous tile's stores are done with the stage
    const u32 loads = rows * ohs * kRowLoads;
    for (u32 i = threadIdx.x; i < loads; i += kThreads) {
      const u32 row = i / kRowLoads, x = i % kRowLoads * kLoad;
      const u32 q = row % rows, o = row / rows;
      Loaded in;
      in.v = tp_ld_global(from + ((u64(oh0 + o) * kKH + kh0 + q) * kW + x) * kElementBytes);
      tt_elem* const runs = stage + q * u32(kKW) * kPitch + o * u32(kOW);
#pragma unroll
      for (u32 e = 0; e < kLoad; ++e) {
        const u32 w = x + e;
        runs[w % u32(kKW) * kPitch + w / u32(kKW)] = in.e[e];
      }
    }
    __syncthreads();
    u8* const to = col + ((plane * kKH + kh0) * kKW * kOHW + u64(oh0) * kOW) * kElementBytes;
    // Every window row: the taps' runs are one span of the matrix.
    const u32 stores = rows * u32(kKW) * u32(kOHW) / kVector;
    for (u32 i = threadIdx.x; i < stores; i += kThreads) {
      const u64 at = u64(i) * kVector * kElementBytes;
      tt_st_global(to + at, tt_ld_shared(tt_smem + at), col_policy);
    }
  }
}

// tiletune copy kernel (generated; do not edit).
//   path sync_simt, f16, extents [100000, 3], tile [2048, 3], 128 threads
//   vector 8 x 2 B, layout 128x1, span form, 1 stage(s), L2 policy evict_first

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

// L2 eviction priority for every global access of this kernel.
__device__ __forceinline__ u64 tt_make_policy() {
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
enum : u32 { kThreads = 128u };
enum : u64 { kNumTiles = 49ull };
enum : u32 { kStages = 1u };
enum : u32 { kTileBytes = 12288u };
enum : u64 { kElementBytes = 2ull };
enum : u64 { kExtent0 = 100000ull };
enum : u64 { kTile0 = 2048ull };
enum : u64 { kTiles0 = 49ull };
enum : u64 { kSrcStride0 = 4ull };
enum : u64 { kDstStride0 = 5ull };
enum : u64 { kExtent1 = 3ull };
enum : u64 { kTile1 = 3ull };
enum : u64 { kTiles1 = 1ull };
enum : u64 { kSrcStride1 = 1ull };
enum : u64 { kDstStride1 = 1ull };
enum : u64 { kRowBytes = 6ull };
enum : u64 { kSrcPitch = 8ull };
enum : u64 { kDstPitch = 10ull };
enum : u64 { kTileRows = 2048ull };

extern "C" __global__ void __launch_bounds__(kThreads) tt_copy_sync_simt(const u8* __restrict__ src, u8* __restrict__ dst) {
  const u64 policy = tt_make_policy();
  extern __shared__ __align__(128) u8 tt_smem[];
  // The copy's whole src span: no load leaves it.
  const u64 span_first = reinterpret_cast<u64>(src);
  const u64 span_end = span_first + (kExtent0 - 1) * kSrcPitch + kRowBytes;
  for (u64 tile = blockIdx.x; tile < kNumTiles; tile += gridDim.x) {
    const u64 row0 = tile * kTileRows;
    const u64 rows = kExtent0 - row0 < kTileRows ? kExtent0 - row0 : kTileRows;
    const u64 first = span_first + row0 * kSrcPitch;
    const u64 lo = first & ~u64(15);
    const u64 end = first + (rows - 1) * kSrcPitch + kRowBytes;
    const u32 blocks = u32(((end + 15) & ~u64(15)) - lo) / 16;
    __syncthreads();  // the previous tile's reads of shared memory are done
    for (u32 b = threadIdx.x; b < blocks; b += kThreads) {
      const u64 a = lo + u64(b) * 16;
      if (a >= span_first && a + 16 <= span_end) {
        tt_st_shared(tt_smem + b * 16, tt_ld_global(reinterpret_cast<const u8*>(a), policy));
      } else {  // an end block of the span: only its bytes inside it
#pragma unroll
        for (u32 k = 0; k < 16; ++k) {
          if (a + k >= span_first && a + k < span_end) {
            tt_smem[b * 16 + k] = *reinterpret_cast<const u8*>(a + k);
          }
        }
      }
    }
    __syncthreads();
    const u8* stage = tt_smem + u32(first - lo);  // the tile's first src byte
    // dst rows are apart: element by element, each row's elements to consecutive
    // threads.
    typedef unsigned short tt_elem;
    const u32 elements = u32(rows) * u32(kExtent1);
    for (u32 i = threadIdx.x; i < elements; i += kThreads) {
      const u32 row = i / u32(kExtent1);
      const u32 col = (i % u32(kExtent1)) * u32(kElementBytes);
      *reinterpret_cast<tt_elem*>(dst + (row0 + row) * kDstPitch + col) =
          *reinterpret_cast<const tt_elem*>(stage + row * u32(kSrcPitch) + col);
    }
  }
}

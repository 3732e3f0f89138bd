// tiletune copy kernel (generated; do not edit).
//   path sync_simt, u8, extents [100000, 3], tile [4096, 3], 256 threads
//   vector 16 x 1 B, layout 256x1, span form, 1 stage(s), L2 policy none

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

// Problem constants; enumerators fold into the code and take no storage.
enum : u32 { kThreads = 256u };
enum : u64 { kNumTiles = 25ull };
enum : u32 { kStages = 1u };
enum : u32 { kTileBytes = 12288u };
enum : u64 { kElementBytes = 1ull };
enum : u64 { kExtent0 = 100000ull };
enum : u64 { kTile0 = 4096ull };
enum : u64 { kTiles0 = 25ull };
enum : u64 { kSrcStride0 = 4ull };
enum : u64 { kDstStride0 = 3ull };
enum : u64 { kExtent1 = 3ull };
enum : u64 { kTile1 = 3ull };
enum : u64 { kTiles1 = 1ull };
enum : u64 { kSrcStride1 = 1ull };
enum : u64 { kDstStride1 = 1ull };
enum : u64 { kRowBytes = 3ull };
enum : u64 { kSrcPitch = 4ull };
enum : u64 { kDstPitch = 3ull };
enum : u64 { kTileRows = 4096ull };

extern "C" __global__ void __launch_bounds__(kThreads) tt_copy_sync_simt(const u8* __restrict__ src, u8* __restrict__ dst) {
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
        tt_st_shared(tt_smem + b * 16, tt_ld_global(reinterpret_cast<const u8*>(a)));
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
    // dst rows are contiguous: the tile's dst bytes [dfirst, dend) in aligned 16-B
    // blocks, each gathered from the rows in shared memory in units of an element
    // (up to 4 B); an end block that other tiles (or other data) share is written
    // bytewise, only its own bytes.
    typedef u8 tt_unit;
    const u64 dfirst = reinterpret_cast<u64>(dst) + row0 * kRowBytes;
    const u64 dend = dfirst + rows * kRowBytes;
    const u64 dlo = dfirst & ~u64(15);
    const u32 dblocks = u32(((dend + 15) & ~u64(15)) - dlo) / 16;
    // Groups of 16 rows: 48 B of dst (whole vectors) from 64 B of src.
    const u32 groups = u32(rows) / 16u;
    for (u32 g = threadIdx.x; g < groups; g += kThreads) {
      const uint4* from = reinterpret_cast<const uint4*>(tt_smem + g * 64u);
      u32 s[16];
#pragma unroll
      for (u32 i = 0; i < 4u; ++i) {
        const uint4 q = from[i];
        s[4 * i] = q.x;
        s[4 * i + 1] = q.y;
        s[4 * i + 2] = q.z;
        s[4 * i + 3] = q.w;
      }
      u8* to = reinterpret_cast<u8*>(dfirst) + g * 48u;
      {
        tt_vec v;
        v.x = __byte_perm(s[0], s[1], 0x4210u);
        v.y = __byte_perm(s[1], s[2], 0x5421u);
        v.z = __byte_perm(s[2], s[3], 0x6542u);
        v.w = __byte_perm(s[4], s[5], 0x4210u);
        tt_st_global(to + 0, v);
      }
      {
        tt_vec v;
        v.x = __byte_perm(s[5], s[6], 0x5421u);
        v.y = __byte_perm(s[6], s[7], 0x6542u);
        v.z = __byte_perm(s[8], s[9], 0x4210u);
        v.w = __byte_perm(s[9], s[10], 0x5421u);
        tt_st_global(to + 16, v);
      }
      {
        tt_vec v;
        v.x = __byte_perm(s[10], s[11], 0x6542u);
        v.y = __byte_perm(s[12], s[13], 0x4210u);
        v.z = __byte_perm(s[13], s[14], 0x5421u);
        v.w = __byte_perm(s[14], s[15], 0x6542u);
        tt_st_global(to + 32, v);
      }
    }
    const u32 grouped = groups * 3u;
    for (u32 b = grouped + threadIdx.x; b < dblocks; b += kThreads) {
      const u64 a = dlo + u64(b) * 16;
      if (a >= dfirst && a + 16 <= dend) {
        const u32 j = u32(a - dfirst);  // the block's first byte in the tile's dst
        u32 col = j % u32(kRowBytes);
        u32 at = j / u32(kRowBytes) * u32(kSrcPitch) + col;
        u32 w[4] = {0, 0, 0, 0};
#pragma unroll
        for (u32 k = 0; k < 16; k += sizeof(tt_unit)) {
          w[k / 4] |= u32(*reinterpret_cast<const tt_unit*>(stage + at)) << (8 * (k % 4));
          at += sizeof(tt_unit);
          col += sizeof(tt_unit);
          if (col == u32(kRowBytes)) {
            col = 0;
            at += u32(kSrcPitch - kRowBytes);
          }
        }
        tt_vec v;
        v.x = w[0];
        v.y = w[1];
        v.z = w[2];
        v.w = w[3];
        tt_st_global(reinterpret_cast<u8*>(a), v);
      } else {
#pragma unroll
        for (u32 k = 0; k < 16; ++k) {
          if (a + k < dfirst || a + k >= dend) continue;
          const u32 j = u32(a + k - dfirst);
          *reinterpret_cast<u8*>(a + k) =
              stage[j / u32(kRowBytes) * u32(kSrcPitch) + j % u32(kRowBytes)];
        }
      }
    }
  }
}

// tiletune copy kernel (generated; do not edit).
//   path sync_simt, f8e4m3, extents [16793603], tile [16384], 256 threads
//   vector 16 x 1 B, layout 1x256, direct, head_tail form, 1 stage(s), L2 policy none

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
enum : u64 { kNumTiles = 1026ull };
enum : u32 { kStages = 1u };
enum : u32 { kTileBytes = 16384u };
enum : u64 { kElementBytes = 1ull };
enum : u64 { kExtent0 = 16793603ull };
enum : u64 { kTile0 = 16384ull };
enum : u64 { kTiles0 = 1026ull };
enum : u64 { kSrcStride0 = 1ull };
enum : u64 { kDstStride0 = 1ull };
enum : u64 { kSlotBytes = 16ull };
enum : u64 { kRowBytes = 16793603ull };
enum : u64 { kRowSlots = 1049602ull };
enum : u64 { kTileSlots = 1024ull };
enum : u64 { kVector = 16ull };
enum : u32 { kRows = 1u };
enum : u32 { kCols = 256u };
enum : u32 { kTileRows = 1u };
enum : u32 { kRowVectors = 1024u };
enum : u32 { kItemsCol = 4u };
enum : u32 { kItems = 4u };

// Row `row` of tile `tile`: byte offsets of its copy row from the start addresses, and the index
// of slot `sc` along it; false when either lies outside the copy.
__device__ __forceinline__ bool tt_locate(u64 tile, u32 row, u32 sc, u64& src_row, u64& dst_row, u64& slot) {
  u64 t = tile;
  const u64 c0 = t;
  (void)row;
  slot = c0 * kTileSlots + sc;
  src_row = (0) * kElementBytes;
  dst_row = (0) * kElementBytes;
  return slot < kRowSlots;
}
__device__ __forceinline__ bool tt_in_tile(u32 row, u32 sc) {
  (void)row;
  (void)sc;
  return true;
}
// Bytes [begin, end) of a partial slot, from src address = dst address + delta, in
// the widest pieces aligned on both sides.
__device__ __forceinline__ void tt_copy_piece(u64 begin, u64 end, long long delta) {
  while (begin < end) {
    const u64 n = end - begin;
    const u64 from_address = begin + delta;
    const u8* from = reinterpret_cast<const u8*>(from_address);
    u8* to = reinterpret_cast<u8*>(begin);
    const u64 both = begin | from_address;
    if ((both & 7) == 0 && n >= 8) {
      *reinterpret_cast<u64*>(to) = *reinterpret_cast<const u64*>(from);
      begin += 8;
    } else if ((both & 3) == 0 && n >= 4) {
      *reinterpret_cast<u32*>(to) = *reinterpret_cast<const u32*>(from);
      begin += 4;
    } else if ((both & 1) == 0 && n >= 2) {
      *reinterpret_cast<unsigned short*>(to) =
          *reinterpret_cast<const unsigned short*>(from);
      begin += 2;
    } else {
      *to = *from;
      begin += 1;
    }
  }
}

extern "C" __global__ void __launch_bounds__(kThreads) tt_copy_sync_simt(const u8* __restrict__ src, u8* __restrict__ dst) {
  const u32 tr = threadIdx.x / kCols;
  const u32 tc = threadIdx.x % kCols;
  for (u64 tile = blockIdx.x; tile < kNumTiles; tile += gridDim.x) {
    tt_vec v[kItems];
    bool full[kItems];
    u64 at[kItems];
#pragma unroll
    for (u32 i = 0; i < kItems; ++i) {
      full[i] = false;
      const u32 row = tr + (i / kItemsCol) * kRows;
      const u32 sc = tc + (i % kItemsCol) * kCols;
      u64 src_row, dst_row, slot;
      if (!tt_in_tile(row, sc) || !tt_locate(tile, row, sc, src_row, dst_row, slot)) {
        continue;
      }
      // The row's bytes in dst, and this slot's share of them.
      const u64 first = reinterpret_cast<u64>(dst) + dst_row;
      const u64 last = first + kRowBytes;
      const u64 lo = (first & ~(kSlotBytes - 1)) + slot * kSlotBytes;
      const u64 begin = lo > first ? lo : first;
      const u64 end = lo + kSlotBytes < last ? lo + kSlotBytes : last;
      if (begin >= end) continue;
      // src address = dst address + delta, a multiple of the slot.
      const long long delta =
          (long long)(reinterpret_cast<u64>(src) + src_row) - (long long)first;
      if (end - begin == kSlotBytes) {
        full[i] = true;
        at[i] = lo;
        v[i] = tt_ld_global(reinterpret_cast<const u8*>(lo + delta));
      } else {
        tt_copy_piece(begin, end, delta);
      }
    }
#pragma unroll
    for (u32 i = 0; i < kItems; ++i) {
      if (full[i]) tt_st_global(reinterpret_cast<u8*>(at[i]), v[i]);
    }
  }
}

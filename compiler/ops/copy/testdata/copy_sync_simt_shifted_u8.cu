// tiletune copy kernel (generated; do not edit).
//   path sync_simt, u8, extents [300, 3997], tile [4, 4096], 256 threads
//   vector 16 x 1 B, layout 1x256, direct, shifted form, 1 stage(s), L2 policy evict_first

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
enum : u32 { kThreads = 256u };
enum : u64 { kNumTiles = 75ull };
enum : u32 { kStages = 1u };
enum : u32 { kTileBytes = 16384u };
enum : u64 { kElementBytes = 1ull };
enum : u64 { kExtent0 = 300ull };
enum : u64 { kTile0 = 4ull };
enum : u64 { kTiles0 = 75ull };
enum : u64 { kSrcStride0 = 4097ull };
enum : u64 { kDstStride0 = 3997ull };
enum : u64 { kExtent1 = 3997ull };
enum : u64 { kTile1 = 4096ull };
enum : u64 { kTiles1 = 1ull };
enum : u64 { kSrcStride1 = 1ull };
enum : u64 { kDstStride1 = 1ull };
enum : u64 { kSlotBytes = 16ull };
enum : u64 { kRowBytes = 3997ull };
enum : u64 { kSrcSpanBytes = 1229000ull };
enum : u64 { kRowSlots = 251ull };
enum : u64 { kTileSlots = 256ull };
enum : u64 { kVector = 16ull };
enum : u32 { kRows = 1u };
enum : u32 { kCols = 256u };
enum : u32 { kTileRows = 4u };
enum : u32 { kRowVectors = 256u };
enum : u32 { kItemsCol = 1u };
enum : u32 { kItems = 4u };

// Row `row` of tile `tile`: byte offsets of its copy row from the start addresses, and the index
// of slot `sc` along it; false when either lies outside the copy.
__device__ __forceinline__ bool tt_locate(u64 tile, u32 row, u32 sc, u64& src_row, u64& dst_row, u64& slot) {
  u64 t = tile;
  const u64 c1 = t % kTiles1;
  t /= kTiles1;
  const u64 c0 = t;
  u32 rest = row;
  const u64 g0 = c0 * kTile0 + rest;
  slot = c1 * kTileSlots + sc;
  src_row = (g0 * kSrcStride0) * kElementBytes;
  dst_row = (g0 * kDstStride0) * kElementBytes;
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
// The 16 bytes at src address `s`, of any alignment: the two aligned 16-B blocks
// holding them (the second only when `s` is not aligned), funnel-shifted. Where a
// block would leave the copy's src span [first, end) (the first and last slots of
// the copy), the bytes are gathered one by one instead: no load leaves the span.
__device__ __forceinline__ tt_vec tt_ld_shifted(u64 s, u64 first, u64 end, u64 policy) {
  const u64 a = s & ~u64(15);
  const u32 m = u32(s & 15);
  if (a < first || a + (m == 0 ? 16 : 32) > end) {
    u32 b[4] = {0, 0, 0, 0};
#pragma unroll
    for (u32 k = 0; k < 16; ++k) {
      b[k / 4] |= u32(*reinterpret_cast<const u8*>(s + k)) << (8 * (k % 4));
    }
    tt_vec v;
    v.x = b[0];
    v.y = b[1];
    v.z = b[2];
    v.w = b[3];
    return v;
  }
  const tt_vec x = tt_ld_global(reinterpret_cast<const u8*>(a), policy);
  if (m == 0) return x;
  const tt_vec y = tt_ld_global(reinterpret_cast<const u8*>(a + 16), policy);
  const u32 w[8] = {x.x, x.y, x.z, x.w, y.x, y.y, y.z, y.w};
  // Words m/4 .. m/4+4 by selects (no local memory), then the byte shift.
  const u32 q = m >> 2;
  const u32 bits = (m & 3) * 8;
  u32 o[5];
#pragma unroll
  for (int i = 0; i < 5; ++i) {
    o[i] = q == 0 ? w[i] : q == 1 ? w[i + 1] : q == 2 ? w[i + 2] : w[i + 3];
  }
  tt_vec v;
  v.x = __funnelshift_r(o[0], o[1], bits);
  v.y = __funnelshift_r(o[1], o[2], bits);
  v.z = __funnelshift_r(o[2], o[3], bits);
  v.w = __funnelshift_r(o[3], o[4], bits);
  return v;
}

extern "C" __global__ void __launch_bounds__(kThreads) tt_copy_sync_simt(const u8* __restrict__ src, u8* __restrict__ dst) {
  const u64 policy = tt_make_policy();
  const u64 span_first = reinterpret_cast<u64>(src);
  const u64 span_end = span_first + kSrcSpanBytes;
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
      // src address = dst address + delta.
      const long long delta =
          (long long)(reinterpret_cast<u64>(src) + src_row) - (long long)first;
      if (end - begin == kSlotBytes) {
        full[i] = true;
        at[i] = lo;
        v[i] = tt_ld_shifted(lo + delta, span_first, span_end, policy);
      } else {
        tt_copy_piece(begin, end, delta);
      }
    }
#pragma unroll
    for (u32 i = 0; i < kItems; ++i) {
      if (full[i]) tt_st_global(reinterpret_cast<u8*>(at[i]), v[i], policy);
    }
  }
}

// tiletune im2col kernel (generated; do not edit).
//   path simt_im2col, f16, n2 h32 w32 c3 kernel 7x7 stride 2x2 dilation 1x1 pad 3x3 -> [512, 147], image strides [3072, 96, 3, 1]
//   tile [16, 147], 256 threads, flat runs of whole rows, vector 8 x 2 B, input staged (1 output row(s) x 7 input rows, bulk copies, L2 prefetch of the whole image at the start), 1 stage(s), L2 policy image evict_last, columns evict_first

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

// L2 eviction priority for the img accesses of this kernel.
__device__ __forceinline__ u64 tt_make_img_policy() {
  u64 policy;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
  return policy;
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
struct __align__(16) tt_box_vec {
  u32 x, y, z, w;
};
__device__ __forceinline__ tt_box_vec tt_box_ld_global(const u8* p, u64 policy) {
  tt_box_vec v;
  asm volatile("ld.global.nc.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p), "l"(policy));
  return v;
}
__device__ __forceinline__ void tt_box_st_global(u8* p, const tt_box_vec& v) {
  asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};"
               :
               : "l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}
__device__ __forceinline__ tt_box_vec tt_box_ld_shared(const u8* p) { return *reinterpret_cast<const tt_box_vec*>(p); }
__device__ __forceinline__ void tt_box_st_shared(u8* p, const tt_box_vec& v) { *reinterpret_cast<tt_box_vec*>(p) = v; }

__device__ __forceinline__ void tt_mbarrier_init(u64* bar, u32 count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(tt_smem_addr(bar)), "r"(count)
               : "memory");
}
// Makes barrier initialisation visible to the async proxy (the TMA unit).
__device__ __forceinline__ void tt_fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
__device__ __forceinline__ void tt_mbarrier_expect_tx(u64* bar, u32 bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
               :: "r"(tt_smem_addr(bar)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void tt_mbarrier_wait(u64* bar, u32 parity) {
  asm volatile(
      "{\n"
      "  .reg .pred done;\n"
      "TT_WAIT_%=:\n"
      "  mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "  @!done bra TT_WAIT_%=;\n"
      "}\n" :: "r"(tt_smem_addr(bar)), "r"(parity) : "memory");
}
__device__ __forceinline__ void tt_bulk_commit() {
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
// Waits until at most kPending bulk groups still read shared memory.
template <int kPending>
__device__ __forceinline__ void tt_bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" :: "n"(kPending) : "memory");
}
// Waits until every bulk group has completed, writes included.
__device__ __forceinline__ void tt_bulk_wait_all() {
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

// 1-D bulk copies; sizes and addresses are multiples of 16 bytes.
__device__ __forceinline__ void tt_bulk_load(u8* smem, const u8* gmem, u32 bytes, u64* bar, u64 policy) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;"
               :
               : "r"(tt_smem_addr(smem)), "l"(gmem), "r"(bytes), "r"(tt_smem_addr(bar)), "l"(policy)
               : "memory");
}
__device__ __forceinline__ void tt_bulk_store(u8* gmem, const u8* smem, u32 bytes, u64 policy) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint [%0], [%1], %2, %3;"
               :
               : "l"(gmem), "r"(tt_smem_addr(smem)), "r"(bytes), "l"(policy)
               : "memory");
}

// Prefetch into L2 (no data moves to the SM); address and size multiples of 16 B.
__device__ __forceinline__ void tt_bulk_prefetch_l2(const u8* gmem, u32 bytes, u64 policy) {
  asm volatile("cp.async.bulk.prefetch.L2.global.L2::cache_hint [%0], %1, %2;"
               :
               : "l"(gmem), "r"(bytes), "l"(policy)
               : "memory");
}

// One image element.
typedef u16 tt_elem;
__device__ __forceinline__ tt_elem tt_ld_elem(const u8* p, u64 policy) {
  u16 v;
  // Not volatile, so the loads of an unrolled loop may issue together; the
  // compiler may also hoist it above a branch: callers pass valid addresses only.
  asm("ld.global.nc.L2::cache_hint.u16 %0, [%1], %2;" : "=h"(v) : "l"(p), "l"(policy));
  return tt_elem(v);
}

// Problem constants; enumerators fold into the code and take no storage.
enum : u32 { kThreads = 256u };
enum : u64 { kNumTiles = 32ull };
enum : u64 { kTilesK = 1ull };
enum : u64 { kBlockM = 16ull };
enum : u64 { kBlockK = 147ull };
enum : u64 { kM = 512ull };
enum : u64 { kK = 147ull };
enum : u64 { kElementBytes = 2ull };
enum : u64 { kH = 32ull };
enum : u64 { kW = 32ull };
enum : u64 { kC = 3ull };
enum : u64 { kKW = 7ull };
enum : u64 { kSH = 2ull };
enum : u64 { kSW = 2ull };
enum : u64 { kDH = 1ull };
enum : u64 { kDW = 1ull };
enum : u64 { kPH = 3ull };
enum : u64 { kPW = 3ull };
enum : u64 { kOW = 16ull };
enum : u64 { kOHW = 256ull };
enum : u64 { kImgStrideN = 3072ull };
enum : u64 { kImgStrideH = 96ull };
enum : u64 { kImgStrideW = 3ull };
enum : u64 { kImgStrideC = 1ull };
enum : u32 { kTaps = 49u };
enum : u32 { kFlatVector = 8u };
enum : u32 { kTileVectors = 294u };
enum : u32 { kKH = 7u };
enum : u32 { kRowsPerTile = 1u };
enum : u32 { kPeriod = 147u };
enum : u32 { kPeriodRows = 8u };
enum : u32 { kUnits = 8u };
enum : u32 { kUnitsPerElem = 1u };
enum : u32 { kTableWords = 4u };
enum : u64 { kOH = 16ull };
enum : u64 { kOutRows = 32ull };
enum : u32 { kBoxRows = 7u };
enum : u32 { kBoxPitch = 120u };
enum : u32 { kBoxLead = 7u };
enum : u32 { kBoxOffset = 2352u };
enum : u32 { kBoxStart = 9u };
enum : u32 { kBoxCopy = 96u };
enum : u32 { kPadElems = 15u };
enum : u32 { kLoad = 16u };
enum : u32 { kChunks = 12u };
enum : u32 { kTail = 0u };
enum : u32 { kResidentCtas = 8u };
enum : u64 { kImageBytes = 12288ull };
enum : u32 { kPrefetchPiece = 1048576u };

// Byte offsets in the boxes of one vector's units (see the kernel).
struct __align__(16) tt_offsets {
  u32 at[kTableWords];  // two 16-bit offsets each, low half first
};
// One unit from shared memory, by a 32-bit shared address (volatile: it stays
// after the barrier that publishes the boxes).
__device__ __forceinline__ u32 tt_unit(u32 addr) {
  u32 v;
  asm volatile("ld.shared.u16 %0, [%1];" : "=r"(v) : "r"(addr));
  return v;
}

extern "C" __global__ void __maxnreg__(24) tt_im2col_simt_im2col(const u8* __restrict__ img, u8* __restrict__ col) {
  const u64 img_policy = tt_make_img_policy();
  const u64 col_policy = tt_make_col_policy();
  extern __shared__ __align__(16) u8 tt_smem[];
  const tt_offsets* const offsets = reinterpret_cast<const tt_offsets*>(tt_smem);
  tt_elem* const box = reinterpret_cast<tt_elem*>(tt_smem + kBoxOffset);
  // The last thread fills the boxes with bulk copies that complete on tt_bar (its warp
  // gets no more vectors or table entries than any other); the first tile's barrier
  // publishes its initialisation.
  __shared__ __align__(8) u64 tt_bar;
  if (threadIdx.x == kThreads - 1) {
    tt_mbarrier_init(&tt_bar, 1);
    tt_fence_barrier_init();
  }
  u32 phase = 0;
  // The whole image into L2 at the start: CTA b of the first wave (%nsmid x
  // kResidentCtas CTAs, or the whole grid when smaller) prefetches the b-th of as many
  // equal shares, in 16-byte units (a last partial unit is left to the copies).
  if (threadIdx.x == 0) {
    u32 sms;
    asm("mov.u32 %0, %%nsmid;" : "=r"(sms));
    const u64 parts = min(u64(gridDim.x), u64(kResidentCtas) * sms);
    const u64 share = ((kImageBytes + parts - 1) / parts + 15) / 16 * 16;
    const u64 end = kImageBytes / 16 * 16;
    for (u64 at = blockIdx.x * share, to = min(end, at + share); at < to;
         at += kPrefetchPiece) {
      tt_bulk_prefetch_l2(img + at, u32(min(to - at, u64(kPrefetchPiece))), img_policy);
    }
  }
  // Box row b of the tile whose first output row is `first` is input row kh of output
  // row first + b / kKH: whether it lies in the image (not padding, not past the last
  // output row), and where it starts there when it does. The bulk copies branch on
  // the first and never see a null address (one guarded by a null test read
  // address 0 on the H200 where every row of a tile was padding).
  auto inside = [&](u64 first, u32 b) -> bool {
    const u64 row = first + b / kKH;
    const u32 ih = u32(row % kOH) * u32(kSH) + b % kKH * u32(kDH) - u32(kPH);
    return row < kOutRows && ih < kH;
  };
  auto start = [&](u64 first, u32 b) -> const u8* {
    const u64 row = first + b / kKH;
    const u32 ih = u32(row % kOH) * u32(kSH) + b % kKH * u32(kDH) - u32(kPH);
    return img + (row / kOH * kImgStrideN + u64(ih) * kImgStrideH) * kElementBytes;
  };
  // The producer: one bulk copy per box row inside the image, its kChunks x kLoad bytes.
  auto fill = [&](u64 first) {
    u32 bytes = 0;
    for (u32 b = 0; b < kBoxRows; ++b) {
      if (inside(first, b)) bytes += kChunks * kLoad;
    }
    tt_mbarrier_expect_tx(&tt_bar, bytes);
    for (u32 b = 0; b < kBoxRows; ++b) {
      if (inside(first, b)) {
        tt_bulk_load(reinterpret_cast<u8*>(box + b * kBoxPitch + kBoxLead + kBoxStart),
                     start(first, b), kChunks * kLoad, &tt_bar, img_policy);
      }
    }
  };
  if (threadIdx.x == kThreads - 1) fill(u64(blockIdx.x) * kBlockM / kOW);
  // Unit u of vector p of a period: element f of the period's run, kPeriodRows rows of
  // kK columns. The first tile's barrier publishes the table.
  for (u32 i = threadIdx.x; i < kPeriod * kUnits; i += kThreads) {
    const u32 f = i / kUnitsPerElem, d = f / u32(kK), k = f % u32(kK);
    const u32 kh = k / u32(kKW * kC), kw = k / u32(kC) % u32(kKW), c = k % u32(kC);
    reinterpret_cast<u16*>(tt_smem)[i] =
        (kh * kBoxPitch + kBoxLead + (d * u32(kSW) + kw * u32(kDW)) * u32(kC) + c) *
            u32(kElementBytes) + i % kUnitsPerElem * 4;
  }
  {
    const u64 tile = blockIdx.x;
    const u64 m0 = tile * kBlockM;
    const u64 row0 = m0 / kOW;
    // Columns left of the image and right of the copied pixels.
    for (u32 i = threadIdx.x; i < kBoxRows * kPadElems; i += kThreads) {
      const u32 b = i / kPadElems, p = i % kPadElems;
      box[b * kBoxPitch + kBoxLead + (p < kBoxStart ? p : p + kBoxCopy)] = 0;
    }
    // Box rows outside the image read zero.
    for (u32 i = threadIdx.x; i < kBoxRows * kChunks; i += kThreads) {
      const u32 b = i / kChunks, j = i % kChunks;
      if (!inside(row0, b)) {
        tt_box_st_shared(
            reinterpret_cast<u8*>(box + b * kBoxPitch + kBoxLead + kBoxStart) + j * kLoad,
            tt_box_vec{});
      }
    }
    __syncthreads();
    tt_mbarrier_wait(&tt_bar, phase);
    phase ^= 1;
    u8* const out = col + m0 * kK * kElementBytes;
    const u32 boxes = tt_smem_addr(tt_smem) + kBoxOffset;
    const u32 vectors = kTileVectors;
    for (u32 v = threadIdx.x; v < vectors; v += kThreads) {
      const u32 p = v % u32(kPeriod), r = v / u32(kPeriod) * u32(kPeriodRows);
      const u32 at = boxes + r * u32(kSW * kC) * u32(kElementBytes);
      const tt_offsets o = offsets[p];
      tt_vec x;
      x.x = tt_unit(at + (o.at[0] & 0xffffu)) | tt_unit(at + (o.at[0] >> 16)) << 16;
      x.y = tt_unit(at + (o.at[1] & 0xffffu)) | tt_unit(at + (o.at[1] >> 16)) << 16;
      x.z = tt_unit(at + (o.at[2] & 0xffffu)) | tt_unit(at + (o.at[2] >> 16)) << 16;
      x.w = tt_unit(at + (o.at[3] & 0xffffu)) | tt_unit(at + (o.at[3] >> 16)) << 16;
      tt_st_global(out + v * u32(kFlatVector * kElementBytes), x, col_policy);
    }
  }
}

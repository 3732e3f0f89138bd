// tiletune im2col kernel (generated; do not edit).
//   path simt_im2col, f16, n2 h32 w32 c3 kernel 7x7 stride 2x2 dilation 1x1 pad 3x3 -> [512, 147], image strides [3072, 96, 3, 1]
//   tile [16, 147], 512 threads, flat runs of whole rows, vector 8 x 2 B, input staged (1 output row(s) x 7 input rows, bulk copies, L2 prefetch of the whole image at the start), 1 stage(s), L2 policy image evict_last, columns evict_first

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
enum : u32 { kThreads = 512u };
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
enum : u32 { kResidentCtas = 4u };
enum : u64 { kImageBytes = 12288ull };
enum : u32 { kPrefetchPiece = 1048576u };
enum : u32 { kGroups = 2u };
enum : u32 { kGatherThreads = 294u };
enum : u32 { kPeriods = 2u };
enum : u32 { kIters = 1u };
enum : u32 { kPeriodBytes = 96u };
enum : u32 { kPeriodCols = 48u };
enum : u32 { kRowElems = 96u };
enum : u32 { kRowBytes = 192u };
enum : u32 { kLeadBytes = 32u };

// One 2-byte unit from shared memory, by a 32-bit shared address (volatile: it stays
// after the wait on the bulk copy).
__device__ __forceinline__ u32 tt_unit(u32 addr) {
  u32 v;
  asm volatile("ld.shared.u16 %0, [%1];" : "=r"(v) : "r"(addr));
  return v;
}
// The column policy, not volatile: the compiler may make it again at each store
// rather than hold it in two registers.
__device__ __forceinline__ u64 tt_col_policy_nv() {
  u64 policy;
  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}
// Kernel rows of output row `row` outside the image: bit kh.
__device__ __forceinline__ u32 tt_zero_rows(u32 row) {
  const int top = int(row % u32(kOH) * u32(kSH)) - int(kPH);  // image row of kernel row 0
  const int above = min(max(-top, 0), int(kKH));
  const int below = min(max(int(kH) - top, 0), int(kKH));  // first kernel row past the image
  return ((1u << above) - 1u) | (((1u << kKH) - 1u) & ~((1u << below) - 1u));
}

extern "C" __global__ void __maxnreg__(24) tt_im2col_simt_im2col(const u8* __restrict__ img, u8* __restrict__ col) {
  extern __shared__ __align__(16) u8 tt_smem[];
  __shared__ __align__(8) u64 tt_bar;
  const u32 row = blockIdx.x;  // one output row per CTA
  if (threadIdx.x == kThreads - 1) {
    tt_mbarrier_init(&tt_bar, 1);
    tt_fence_barrier_init();
    const u64 img_policy = tt_make_img_policy();
    // The row's kernel rows inside the image are consecutive image rows: one copy.
    const u32 zero = tt_zero_rows(row);
    const u32 lo = __ffs(~zero) - 1, n = kKH - __popc(zero);
    const int top = int(row % u32(kOH) * u32(kSH)) - int(kPH);
    tt_mbarrier_expect_tx(&tt_bar, n * kRowBytes);
    if (n != 0) {
      tt_bulk_load(tt_smem + kLeadBytes + lo * kRowBytes,
                   img + (u64(row / u32(kOH)) * kImgStrideN + u64(top + int(lo)) * kImgStrideH) *
                             kElementBytes,
                   n * kRowBytes, &tt_bar, img_policy);
    }
    // The whole image into L2 at the start: CTA b of the first wave (%nsmid x
    // kResidentCtas CTAs) prefetches the b-th of as many equal shares, in 16-byte units
    // (a last partial unit is left to the copies).
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
  // Offsets of this thread's units past its period's box column, 16 bits each, low unit
  // first; masks: bits 0-7 units left of the image in period 0, bits 8-15 right of it
  // in the last period, bits 16-23 on kernel rows outside the image.
  u32 o[kUnits / 2] = {};
  u32 masks = 0, boxes = 0;
  const u32 g = threadIdx.x / kPeriod, p = threadIdx.x % kPeriod;
  if (threadIdx.x < kGatherThreads) {
    boxes = tt_smem_addr(tt_smem) + g * kPeriodBytes;
    const u32 zero = tt_zero_rows(row);
    // Unit j is element p * kUnits + j of the period's run: walk (d, kh, kw, c) from the first.
    const u32 f = p * kUnits, k = f % u32(kK);
    u32 d = f / u32(kK), kh = k / u32(kKW * kC), kw = k / u32(kC) % u32(kKW), c = k % u32(kC);
#pragma unroll
    for (u32 j = 0; j < kUnits; ++j) {
      const u32 x = (d * u32(kSW) + kw * u32(kDW)) * u32(kC) + c;  // column from iw = -kPW
      o[j / 2] |= (kLeadBytes + (kh * kRowElems + x - kBoxStart) * u32(kElementBytes)) << (j % 2 * 16);
      masks |= u32(x < kBoxStart) << j;
      masks |= u32(x + (kPeriods - 1) * kPeriodCols >= kBoxStart + kRowElems) << (8 + j);
      masks |= (zero >> kh & 1u) << (16 + j);
      if (++c == u32(kC)) {
        c = 0;
        if (++kw == u32(kKW)) {
          kw = 0;
          if (++kh == kKH) {
            kh = 0;
            ++d;
          }
        }
      }
    }
  }
  __syncthreads();  // publishes the mbarrier's initialisation
  if (threadIdx.x >= kGatherThreads) return;
  const u32 out = u32(row) * u32(kOW * kK * kElementBytes) + threadIdx.x * u32(kFlatVector * kElementBytes);
  const u32 rows = masks >> 16 & 0xffu;
  tt_mbarrier_wait(&tt_bar, 0);
#pragma unroll
  for (u32 i = 0; i < kIters; ++i) {
    const u32 q = g + kGroups * i;
    const u32 s = boxes + i * kGroups * kPeriodBytes;
    tt_vec x;
    u32* const w = reinterpret_cast<u32*>(&x);
#pragma unroll
    for (u32 j = 0; j < kUnits; j += 2) {
      w[j / 2] = tt_unit(s + (o[j / 2] & 0xffffu)) | tt_unit(s + (o[j / 2] >> 16)) << 16;
    }
    const u32 bad = rows | ((q == 0 ? masks : 0u) | (q == kPeriods - 1 ? masks >> 8 : 0u)) & 0xffu;
    if (bad != 0) {
#pragma unroll
      for (u32 j = 0; j < kUnits; j += 2) {
        w[j / 2] &= ((bad >> j & 1u) ? 0u : 0xffffu) | ((bad >> (j + 1) & 1u) ? 0u : 0xffff0000u);
      }
    }
    tt_st_global(col + (out + i * kGatherThreads * u32(kFlatVector * kElementBytes)), x, tt_col_policy_nv());
  }
}

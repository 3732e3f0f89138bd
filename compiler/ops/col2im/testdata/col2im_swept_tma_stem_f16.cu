// tiletune col2im kernel (generated; do not edit).
//   tma_col2im (swept form), f16, n32 h224 w224 c3 kernel 7x7 stride 2x2 dilation 1x1 pad 3x3 -> [401408, 147], image strides [150528, 672, 3, 1]
//   output tile 8x224, 512 threads, vector 1 x 2 B, 3 channel(s) per thread, 2 buffers of 2059 chunks (one window row, 112 window columns) filled by bulk copies, L2 policy columns none, image none
//   taps summed in f32, kh ascending then kw; one rounding; NaN canonical
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

// 2-byte vector accesses.
struct __align__(2) tt_vec {
  u16 x;
};
__device__ __forceinline__ tt_vec tt_ld_global(const u8* p) {
  tt_vec v;
  asm volatile("ld.global.nc.u16 %0, [%1];"
               : "=h"(v.x)
               : "l"(p));
  return v;
}
__device__ __forceinline__ void tt_st_global(u8* p, const tt_vec& v) {
  asm volatile("st.global.u16 [%0], %1;"
               :
               : "l"(p), "h"(v.x)
               : "memory");
}
__device__ __forceinline__ tt_vec tt_ld_shared(const u8* p) { tt_vec v; v.x = *reinterpret_cast<const u16*>(p); return v; }
__device__ __forceinline__ void tt_st_shared(u8* p, const tt_vec& v) { *reinterpret_cast<u16*>(p) = static_cast<u16>(v.x); }

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
__device__ __forceinline__ void tt_bulk_load(u8* smem, const u8* gmem, u32 bytes, u64* bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
               :
               : "r"(tt_smem_addr(smem)), "l"(gmem), "r"(bytes), "r"(tt_smem_addr(bar))
               : "memory");
}
__device__ __forceinline__ void tt_bulk_store(u8* gmem, const u8* smem, u32 bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
               :
               : "l"(gmem), "r"(tt_smem_addr(smem)), "r"(bytes)
               : "memory");
}

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
enum : u32 { kThreads = 512u };
enum : u64 { kNumTiles = 896ull };
enum : u32 { kTilesH = 28u };
enum : u32 { kTilesW = 1u };
enum : u32 { kTileH = 8u };
enum : u32 { kTileW = 224u };
enum : u64 { kElementBytes = 2ull };
enum : u32 { kH = 224u };
enum : u32 { kW = 224u };
enum : u32 { kC = 3u };
enum : u32 { kKH = 7u };
enum : u32 { kKW = 7u };
enum : u32 { kSH = 2u };
enum : u32 { kSW = 2u };
enum : u32 { kDH = 1u };
enum : u32 { kDW = 1u };
enum : u32 { kPH = 3u };
enum : u32 { kPW = 3u };
enum : u32 { kStepH = 2u };
enum : u32 { kStepW = 2u };
enum : u32 { kOH = 112u };
enum : u32 { kOW = 112u };
enum : u64 { kK = 147ull };
enum : u64 { kImgStrideN = 150528ull };
enum : u64 { kImgStrideH = 672ull };
enum : u64 { kImgStrideW = 3ull };
enum : u64 { kImgStrideC = 1ull };
enum : u32 { kVector = 1u };
enum : u32 { kPerThread = 3u };
enum : u32 { kGroups = 1u };
enum : u32 { kResW = 112u };
enum : u32 { kRowItems = 224u };
constexpr long long kColTapStep = -282;  // bytes from one tap of a class to the next in the matrix
enum : u32 { kTileItems = 1792u };
enum : u32 { kPerRow = 1u };
enum : u32 { kItems = 8u };
enum : u32 { kBuffers = 2u };
enum : u32 { kBufBytes = 32944u };
enum : u32 { kTapElems = 21u };
enum : u32 { kRowBytes = 294u };
enum : u64 { kWindowRowBytes = 32928ull };
enum : u64 { kColBytes = 118013952ull };

// The first tap t < step with t*d = x (mod s), or ~0 when none reaches x (x is not a
// multiple of gcd(d, s)); the others are t + step, t + 2*step, ...
__device__ __forceinline__ u32 tt_first_tap(u32 x, u32 d, u32 s, u32 step) {
  u32 t = 0;
  while (t < step && (x % s + s - t * d % s) % s != 0) ++t;
  return t < step ? t : 0xffffffffu;  // none: the tap loops do not start
}
// The first tap of t's class (t, t + step, ...) with tap*d >= need.
__device__ __forceinline__ u32 tt_skip(u32 t, u32 need, u32 d, u32 step) {
  const u32 least = (need + d - 1) / d;
  return t >= least ? t : t + (least - t + step - 1) / step * step;
}

// Window rows oh and columns ow whose taps reach a tile starting at (h0, w0).
__device__ __forceinline__ u32 tt_lo(u32 x0, u32 pad, u32 span, u32 s) {
  // ceil((x0 + pad - span) / s), at least 0
  return x0 + pad >= span ? (x0 + pad - span + s - 1) / s : 0;
}
// Byte offset in the column matrix of the run of window position (oh, ow) from tap
// row kh_lo.
__device__ __forceinline__ u64 tt_run_start(u32 n, u32 oh, u32 ow, u32 kh_lo) {
  return (((u64(n) * kOH + oh) * kOW + ow) * kK + u64(kh_lo) * kTapElems) * kElementBytes;
}
// The first tap kh of window row oh that lands in rows >= h0.
__device__ __forceinline__ u32 tt_kh_lo(u32 h0, u32 oh) {
  const u32 top = oh * kSH;  // the row of tap 0, plus kPH
  return h0 + kPH > top ? (h0 + kPH - top + kDH - 1) / kDH : 0;
}

// This thread's item i of a tile at (h0, w0): tile row i / kPerRow, and item
// j = threadIdx.x + (i % kPerRow) * kThreads of that row; its pixel (h, w) and first
// channel c0, false when it lies outside the tile or the image. Every thread has the
// same rows, so each window row gives every warp the same share of work. A row's
// pixels go one residue class of SW at a time (q / kResW): neighbouring threads share
// their tap pattern.
__device__ __forceinline__ bool tt_item(u32 i, u32 h0, u32 w0, u32& h, u32& w, u32& c0) {
  const u32 j = threadIdx.x + i % kPerRow * kThreads;
  if (j >= kRowItems * kGroups) return false;
  c0 = j % kGroups * kPerThread;
  const u32 q = j / kGroups;
  const u32 w_in = q / kResW + q % kResW * kSW;
  h = h0 + i / kPerRow;
  w = w0 + w_in;
  return w_in < kTileW && h < kH && w < kW;
}

extern "C" __global__ void __launch_bounds__(kThreads) tt_col2im_swept(const u8* __restrict__ col, u8* __restrict__ img) {
  extern __shared__ __align__(16) u8 stage[];
  __shared__ __align__(8) u64 tt_bar[kBuffers];  // one per buffer, an arrival per warp
  if (threadIdx.x == 0) {
#pragma unroll
    for (u32 b = 0; b < kBuffers; ++b) tt_mbarrier_init(&tt_bar[b], kThreads / 32);
    tt_fence_barrier_init();
  }
  __syncthreads();
  u32 sweep0 = 0;  // window rows this block swept before the tile
  for (u64 tile = blockIdx.x; tile < kNumTiles; tile += gridDim.x) {
    const u32 n = u32(tile / (u64(kTilesH) * kTilesW));
    const u32 h0 = u32(tile / kTilesW % kTilesH) * kTileH;
    const u32 w0 = u32(tile % kTilesW) * kTileW;
    const u32 h_end = min(h0 + kTileH, kH) - 1;  // last row of the tile
    const u32 w_end = min(w0 + kTileW, kW) - 1;
    const u32 oh_lo = tt_lo(h0, kPH, (kKH - 1) * kDH, kSH);
    const u32 oh_hi = min((h_end + kPH) / kSH, kOH - 1);
    const u32 ow_lo = tt_lo(w0, kPW, (kKW - 1) * kDW, kSW);
    const u32 ow_hi = min((w_end + kPW) / kSW, kOW - 1);
    // Window rows swept, oh_hi down to oh_lo: a pixel then meets its taps kh ascending.
    const u32 rows = oh_lo <= oh_hi && ow_lo <= ow_hi ? oh_hi - oh_lo + 1 : 0;
    // The matrix rows of window row oh and columns ow_lo..ow_hi are contiguous.
    const u64 row0 = (u64(n) * kOH * kOW + ow_lo) * kK * kElementBytes;
    const u32 span = rows ? (ow_hi - ow_lo + 1) * u32(kRowBytes) : 0;

    // Per item: its row (~0 when it has no pixel), the buffer offset of its first tap
    // (kw0 at window column ow0, channel c0) in tap row 0, and its taps per row.
    float acc[kItems][kPerThread];
    u32 hs[kItems], first[kItems], taps[kItems];
#pragma unroll
    for (u32 i = 0; i < kItems; ++i) {
#pragma unroll
      for (u32 j = 0; j < kPerThread; ++j) acc[i][j] = 0.0f;
      hs[i] = 0xffffffffu;
      first[i] = 0;
      taps[i] = 0;
      u32 h, w, c0;
      if (!tt_item(i, h0, w0, h, w, c0)) continue;
      hs[i] = h;
      u32 kw = tt_first_tap(w + kPW, kDW, kSW, kStepW);
      if (kw == 0xffffffffu) continue;
      if (w + kPW > (kOW - 1) * kSW) {
        kw = tt_skip(kw, w + kPW - (kOW - 1) * kSW, kDW, kStepW);  // ow < OW
      }
      u32 count = 0;
      for (u32 k = kw; k < kKW && k * kDW <= w + kPW; k += kStepW) ++count;
      taps[i] = count;
      if (count) {
        first[i] = (((w + kPW - kw * kDW) / kSW - ow_lo) * u32(kK) + kw * kC + c0) *
                   u32(kElementBytes);
      }
    }

    // Window row s of the sweep (the block's g-th) into buffer g % kBuffers: what of its
    // matrix rows holds a tap landing in the tile (taps kh_lo..kh_hi, bytes
    // [run_lo, run_hi) of each matrix row).
    auto fill = [&](u32 s) {
      if (s >= rows) return;
      const u32 g = sweep0 + s;
      const u32 oh = oh_hi - s;
      const u32 kh_lo = tt_kh_lo(h0, oh);
      const u32 kh_hi = min((h_end + kPH - oh * kSH) / kDH, kKH - 1);
      const u32 run_lo = kh_lo * kTapElems * u32(kElementBytes);
      const u32 run_hi = kh_lo <= kh_hi ? (kh_hi + 1) * kTapElems * u32(kElementBytes) : run_lo;
      const bool whole = run_lo == 0 && run_hi == kRowBytes;
      const u64 start = row0 + oh * kWindowRowBytes;
      const u64 base = start & ~u64(15);
      u8* buf = stage + g % kBuffers * kBufBytes;
      const u32 runs = run_lo == run_hi ? 0 : whole ? 1 : ow_hi - ow_lo + 1;
      const u32 run_bytes = whole ? span : run_hi - run_lo;
      constexpr u64 kLastWhole = kColBytes & ~u64(15);  // bulk copies stop here
      auto bounds = [&](u32 r, u64& from, u64& a, u64& b) {
        from = start + (whole ? 0 : u64(r) * kRowBytes + run_lo);
        a = from & ~u64(15);
        b = min((from + run_bytes + 15) & ~u64(15), kLastWhole);
      };
      u32 bytes = 0;
      for (u32 r = threadIdx.x; r < runs; r += kThreads) {
        u64 from, a, b;
        bounds(r, from, a, b);
        if (b > a) bytes += u32(b - a);
      }
      bytes = __reduce_add_sync(0xffffffffu, bytes);
      if (threadIdx.x % 32 == 0) tt_mbarrier_expect_tx(&tt_bar[g % kBuffers], bytes);
      __syncwarp();
      for (u32 r = threadIdx.x; r < runs; r += kThreads) {
        u64 from, a, b;
        bounds(r, from, a, b);
        if (b > a) {
          tt_bulk_load(buf + (a - base), col + a, u32(b - a), &tt_bar[g % kBuffers]);
        }
        for (u64 t = b > a ? b : a; t < from + run_bytes; ++t) buf[t - base] = col[t];
      }
    };

#pragma unroll 1
    for (u32 s = 0; s + 1 < kBuffers; ++s) {
      fill(s);
    }
    __syncthreads();  // bytes copied by hand are seen by every thread
#pragma unroll 1
    for (u32 s = 0; s < rows; ++s) {
      fill(s + kBuffers - 1);
      const u32 g = sweep0 + s;
      tt_mbarrier_wait(&tt_bar[g % kBuffers], g / kBuffers & 1);  // window row s landed
      const u32 oh = oh_hi - s;
      const u8* buf = stage + g % kBuffers * kBufBytes + u32(row0 + oh * kWindowRowBytes) % 16;
#pragma unroll
      for (u32 i = 0; i < kItems; ++i) {
        // tap row kh of this window row for the item's row: kh*DH = h + PH - oh*SH
        const u32 y = hs[i] + kPH;
        if (taps[i] == 0 || y < oh * kSH || (y - oh * kSH) % kDH != 0) continue;
        const u32 kh = (y - oh * kSH) / kDH;
        if (kh >= kKH) continue;
        const u8* p = buf + first[i] + kh * (kTapElems * u32(kElementBytes));
        for (u32 t = 0; t < taps[i]; ++t, p += kColTapStep) {
#pragma unroll
          for (u32 v = 0; v < kPerThread / kVector; ++v) {
            tt_lanes lanes;
            lanes.v = tt_ld_shared(p + v * kVector * kElementBytes);
#pragma unroll
            for (u32 j = 0; j < kVector; ++j) acc[i][v * kVector + j] += tt_widen(lanes.e[j]);
          }
        }
      }
      __syncthreads();  // buffer g % kBuffers refills next
    }
    sweep0 += rows;

#pragma unroll
    for (u32 i = 0; i < kItems; ++i) {
      u32 h, w, c0;
      if (!tt_item(i, h0, w0, h, w, c0)) continue;
      u8* out = img + (u64(n) * kImgStrideN + u64(h) * kImgStrideH + u64(w) * kImgStrideW +
                       u64(c0) * kImgStrideC) * kElementBytes;
#pragma unroll
      for (u32 v = 0; v < kPerThread / kVector; ++v) {
        tt_lanes lanes;
#pragma unroll
        for (u32 j = 0; j < kVector; ++j) lanes.e[j] = tt_round(acc[i][v * kVector + j]);
        tt_st_global(out + v * kVector * kImgStrideC * kElementBytes, lanes.v);
      }
    }
  }
}

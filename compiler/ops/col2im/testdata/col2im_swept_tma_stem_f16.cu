// tiletune col2im kernel (generated; do not edit).
//   tma_col2im (swept form), f16, n32 h224 w224 c3 kernel 7x7 stride 2x2 dilation 1x1 pad 3x3 -> [401408, 147], image strides [150528, 672, 3, 1]
//   output tile 8x224, 896 threads, vector 1 x 2 B, 3 channel(s) per thread, 5 buffers of 2072 chunks (one window row, 112 window columns) filled by bulk copies, L2 policy columns none, image none
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
enum : u32 { kThreads = 896u };
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
enum : u32 { kRowGroups = 4u };
enum : u32 { kGroupThreads = 224u };
enum : u32 { kGroupRows = 2u };
enum : u32 { kPerRow = 1u };
enum : u32 { kMaxTapsW = 4u };
enum : u32 { kBuffers = 5u };
enum : u32 { kBufBytes = 33152u };
enum : u32 { kBufAlign = 128u };
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

// A thread of band b = threadIdx.x / kGroupThreads sums the tile rows [b * kGroupRows,
// (b + 1) * kGroupRows) at kPerRow column slots: slot j is item lane + j * kGroupThreads
// of a row, its column w and first channel c0; false when it lies outside the tile or
// the image. Every thread of a band has the same rows, so each window row gives its
// warps the same share of work. A row's pixels go one residue class of SW at a time
// (q / kResW): neighbouring threads share their tap pattern.
__device__ __forceinline__ bool tt_column(u32 j, u32 w0, u32& w, u32& c0) {
  const u32 item = threadIdx.x % kGroupThreads + j * kGroupThreads;
  if (threadIdx.x / kGroupThreads >= kRowGroups || item >= kRowItems * kGroups) return false;
  c0 = item % kGroups * kPerThread;
  const u32 q = item / kGroups;
  const u32 w_in = q / kResW + q % kResW * kSW;
  w = w0 + w_in;
  return w_in < kTileW && w < kW;
}

// Tile t's place and the window rows reaching it: oh_hi down to oh_lo are swept (a
// pixel then meets its taps kh ascending), each one's matrix rows for window columns
// ow_lo..ow_hi being `span` contiguous bytes from row0 + oh * kWindowRowBytes.
struct tt_tile {
  u32 n, h0, w0, h_end, w_end, oh_lo, oh_hi, ow_lo, ow_hi, rows, span;
  u64 row0;
};
__device__ __forceinline__ tt_tile tt_tile_at(u64 tile) {
  tt_tile t;
  t.n = u32(tile / (u64(kTilesH) * kTilesW));
  t.h0 = u32(tile / kTilesW % kTilesH) * kTileH;
  t.w0 = u32(tile % kTilesW) * kTileW;
  t.h_end = min(t.h0 + kTileH, kH) - 1;  // last row of the tile
  t.w_end = min(t.w0 + kTileW, kW) - 1;
  t.oh_lo = tt_lo(t.h0, kPH, (kKH - 1) * kDH, kSH);
  t.oh_hi = min((t.h_end + kPH) / kSH, kOH - 1);
  t.ow_lo = tt_lo(t.w0, kPW, (kKW - 1) * kDW, kSW);
  t.ow_hi = min((t.w_end + kPW) / kSW, kOW - 1);
  t.rows = t.oh_lo <= t.oh_hi && t.ow_lo <= t.ow_hi ? t.oh_hi - t.oh_lo + 1 : 0;
  t.row0 = (u64(t.n) * kOH * kOW + t.ow_lo) * kK * kElementBytes;
  t.span = t.rows ? (t.ow_hi - t.ow_lo + 1) * u32(kRowBytes) : 0;
  return t;
}
__device__ __forceinline__ void tt_mbarrier_arrive(u64* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(tt_smem_addr(bar))
               : "memory");
}

extern "C" __global__ void __launch_bounds__(kThreads) tt_col2im_swept(const u8* __restrict__ col, u8* __restrict__ img) {
  extern __shared__ __align__(128) u8 stage[];
  __shared__ __align__(8) u64 tt_full[kBuffers];   // the bulk copy's bytes landed
  __shared__ __align__(8) u64 tt_empty[kBuffers];  // an arrival per warp that summed it
  if (threadIdx.x == 0) {
#pragma unroll
    for (u32 b = 0; b < kBuffers; ++b) {
      tt_mbarrier_init(&tt_full[b], 1);
      tt_mbarrier_init(&tt_empty[b], kThreads / 32);
    }
    tt_fence_barrier_init();
  }
  __syncthreads();
  u64 p_tile = blockIdx.x;  // the producer's place: window row p_s of tile p_tile
  u32 p_s = 0, p_g = 0;
  tt_tile pt = tt_tile_at(p_tile < kNumTiles ? p_tile : 0);
  auto produce = [&]() {
    while (p_tile < kNumTiles && p_s >= pt.rows) {
      p_tile += gridDim.x;
      p_s = 0;
      if (p_tile < kNumTiles) pt = tt_tile_at(p_tile);
    }
    if (p_tile >= kNumTiles) return;
    const u32 b = p_g % kBuffers;
    if (p_g >= kBuffers) tt_mbarrier_wait(&tt_empty[b], (p_g / kBuffers - 1) & 1);
    constexpr u64 kLastWhole = kColBytes & ~u64(15);  // bulk copies stop here
    const u64 start = pt.row0 + (pt.oh_hi - p_s) * kWindowRowBytes;
    const u64 base = start & ~u64(15), end = start + pt.span;
    const u64 stop = min((end + 15) & ~u64(15), kLastWhole);
    u8* buf = stage + b * kBufBytes + u32(base) % kBufAlign;  // holds `base` on
    if (stop < end) {
      for (u64 i = stop > base ? stop : base; i < end; ++i) buf[i - base] = col[i];
      // A later bulk copy into this buffer (the async proxy) writes after these stores.
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    }
    tt_mbarrier_expect_tx(&tt_full[b], stop > base ? u32(stop - base) : 0u);
    if (stop > base) tt_bulk_load(buf, col + base, u32(stop - base), &tt_full[b]);
    ++p_g;
    ++p_s;
  };
  if (threadIdx.x == 0) {
#pragma unroll 1
    for (u32 i = 0; i + 1 < kBuffers; ++i) produce();
  }
  u32 g = 0;  // window rows this block summed before the tile
  for (u64 tile = blockIdx.x; tile < kNumTiles; tile += gridDim.x) {
    const tt_tile t = tt_tile_at(tile);

    // This thread's first tile row, and per column slot the buffer offset of its first
    // tap (kw0 at window column ow0, channel c0) in tap row 0 and its taps per row (0:
    // none, or no pixel).
    const u32 h_band = t.h0 + threadIdx.x / kGroupThreads * kGroupRows;
    float acc[kGroupRows][kPerRow][kPerThread];
    u32 first[kPerRow], taps[kPerRow];
#pragma unroll
    for (u32 r = 0; r < kGroupRows; ++r) {
#pragma unroll
      for (u32 j = 0; j < kPerRow; ++j) {
#pragma unroll
        for (u32 e = 0; e < kPerThread; ++e) acc[r][j][e] = 0.0f;
      }
    }
#pragma unroll
    for (u32 j = 0; j < kPerRow; ++j) {
      first[j] = 0;
      taps[j] = 0;
      u32 w, c0;
      if (!tt_column(j, t.w0, w, c0)) continue;
      u32 kw = tt_first_tap(w + kPW, kDW, kSW, kStepW);
      if (kw == 0xffffffffu) continue;
      if (w + kPW > (kOW - 1) * kSW) {
        kw = tt_skip(kw, w + kPW - (kOW - 1) * kSW, kDW, kStepW);  // ow < OW
      }
      u32 count = 0;
      for (u32 k = kw; k < kKW && k * kDW <= w + kPW; k += kStepW) ++count;
      taps[j] = count;
      if (count) {
        first[j] = (((w + kPW - kw * kDW) / kSW - t.ow_lo) * u32(kK) + kw * kC + c0) *
                   u32(kElementBytes);
      }
    }

#pragma unroll 1
    for (u32 s = 0; s < t.rows; ++s, ++g) {
      if (threadIdx.x == 0) produce();  // the window row kBuffers - 1 ahead
      const u32 b = g % kBuffers;
      tt_mbarrier_wait(&tt_full[b], g / kBuffers & 1);  // window row s landed
      const u32 oh = t.oh_hi - s;
      const u8* buf = stage + b * kBufBytes + u32(t.row0 + oh * kWindowRowBytes) % kBufAlign;
#pragma unroll
      for (u32 r = 0; r < kGroupRows; ++r) {
        // tap row kh of this window row for tile row h: kh*DH = h + PH - oh*SH
        if (h_band + r > t.h_end) break;  // past the tile or the image
        const u32 y = h_band + r + kPH;
        if (y < oh * kSH || (y - oh * kSH) % kDH != 0) continue;
        const u32 kh = (y - oh * kSH) / kDH;
        if (kh >= kKH) continue;
#pragma unroll
        for (u32 j = 0; j < kPerRow; ++j) {
          const u8* p = buf + first[j] + kh * (kTapElems * u32(kElementBytes));
#pragma unroll
          for (u32 tap = 0; tap < kMaxTapsW; ++tap, p += kColTapStep) {
            if (tap >= taps[j]) break;
#pragma unroll
            for (u32 v = 0; v < kPerThread / kVector; ++v) {
              tt_lanes lanes;
              lanes.v = tt_ld_shared(p + v * kVector * kElementBytes);
#pragma unroll
              for (u32 e = 0; e < kVector; ++e) acc[r][j][v * kVector + e] += tt_widen(lanes.e[e]);
            }
          }
        }
      }
      __syncwarp();
      if (threadIdx.x % 32 == 0) tt_mbarrier_arrive(&tt_empty[b]);  // buffer b summed
    }

#pragma unroll
    for (u32 r = 0; r < kGroupRows; ++r) {
      const u32 h = h_band + r;
      if (h >= kH || h - t.h0 >= kTileH) continue;
#pragma unroll
      for (u32 j = 0; j < kPerRow; ++j) {
        u32 w, c0;
        if (!tt_column(j, t.w0, w, c0)) continue;
        u8* out = img + (u64(t.n) * kImgStrideN + u64(h) * kImgStrideH + u64(w) * kImgStrideW +
                         u64(c0) * kImgStrideC) * kElementBytes;
#pragma unroll
        for (u32 v = 0; v < kPerThread / kVector; ++v) {
          tt_lanes lanes;
#pragma unroll
          for (u32 e = 0; e < kVector; ++e) lanes.e[e] = tt_round(acc[r][j][v * kVector + e]);
          tt_st_global(out + v * kVector * kImgStrideC * kElementBytes, lanes.v);
        }
      }
    }
  }
}

// tiletune col2im kernel (generated; do not edit).
//   cp_async_col2im (swept form), f32, n2 h9 w9 c8 kernel 3x3 stride 2x2 dilation 1x1 pad 1x1 -> [50, 72], image strides [648, 72, 8, 1]
//   output tile 4x9, 64 threads, vector 4 x 4 B, 4 channel(s) per thread, 3 buffers of 91 chunks (one window row, 5 window columns) filled by cp.async, L2 policy columns evict_last, image evict_last
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

// L2 eviction priority for the col accesses of this kernel.
__device__ __forceinline__ u64 tt_make_col_policy() {
  u64 policy;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}

// L2 eviction priority for the img accesses of this kernel.
__device__ __forceinline__ u64 tt_make_img_policy() {
  u64 policy;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
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

// cp.async of 16 bytes with an L2 policy; an invalid element is zeroed, not read.
__device__ __forceinline__ void tt_cp_async(u8* smem, const u8* gmem, bool valid, u64 policy) {
  if (valid) {
    u32 zero;  // %tid.y of a 1-D block, opaque to the compilers.
    asm("mov.u32 %0, %%tid.y;" : "=r"(zero));
    asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2;"
                 :
                 : "r"(tt_smem_addr(smem) + zero), "l"(gmem), "l"(policy)
                 : "memory");
  } else {
    tt_st_shared(smem, tt_vec{});
  }
}
__device__ __forceinline__ void tt_cp_async_commit() {
  asm volatile("cp.async.commit_group;" ::: "memory");
}
template <int kPending>
__device__ __forceinline__ void tt_cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" :: "n"(kPending) : "memory");
}

// f32 elements.
typedef u32 tt_elem;
__device__ __forceinline__ float tt_widen(tt_elem b) { return __uint_as_float(b); }
__device__ __forceinline__ tt_elem tt_round(float f) {
  return f != f ? 0x7fffffffu : __float_as_uint(f);
}
union tt_lanes {
  tt_vec v;
  tt_elem e[sizeof(tt_vec) / sizeof(tt_elem)];
};

// Problem constants; enumerators fold into the code and take no storage.
enum : u32 { kThreads = 64u };
enum : u64 { kNumTiles = 6ull };
enum : u32 { kTilesH = 3u };
enum : u32 { kTilesW = 1u };
enum : u32 { kTileH = 4u };
enum : u32 { kTileW = 9u };
enum : u64 { kElementBytes = 4ull };
enum : u32 { kH = 9u };
enum : u32 { kW = 9u };
enum : u32 { kC = 8u };
enum : u32 { kKH = 3u };
enum : u32 { kKW = 3u };
enum : u32 { kSH = 2u };
enum : u32 { kSW = 2u };
enum : u32 { kDH = 1u };
enum : u32 { kDW = 1u };
enum : u32 { kPH = 1u };
enum : u32 { kPW = 1u };
enum : u32 { kStepH = 2u };
enum : u32 { kStepW = 2u };
enum : u32 { kOH = 5u };
enum : u32 { kOW = 5u };
enum : u64 { kK = 72ull };
enum : u64 { kImgStrideN = 648ull };
enum : u64 { kImgStrideH = 72ull };
enum : u64 { kImgStrideW = 8ull };
enum : u64 { kImgStrideC = 1ull };
enum : u32 { kVector = 4u };
enum : u32 { kPerThread = 4u };
enum : u32 { kGroups = 2u };
enum : u32 { kResW = 5u };
enum : u32 { kRowItems = 10u };
constexpr long long kColTapStep = -224;  // bytes from one tap of a class to the next in the matrix
enum : u32 { kTileItems = 80u };
enum : u32 { kRowGroups = 2u };
enum : u32 { kGroupThreads = 32u };
enum : u32 { kGroupRows = 2u };
enum : u32 { kPerRow = 1u };
enum : u32 { kMaxTapsW = 2u };
enum : u32 { kBuffers = 3u };
enum : u32 { kBufBytes = 1456u };
enum : u32 { kBufAlign = 16u };
enum : u32 { kTapElems = 24u };
enum : u32 { kRowBytes = 288u };
enum : u64 { kWindowRowBytes = 1440ull };
enum : u64 { kColBytes = 14400ull };

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

extern "C" __global__ void __launch_bounds__(kThreads) tt_col2im_swept(const u8* __restrict__ col, u8* __restrict__ img) {
  const u64 col_policy = tt_make_col_policy();
  const u64 img_policy = tt_make_img_policy();
  extern __shared__ __align__(128) u8 stage[];
  u32 sweep0 = 0;  // window rows this block swept before the tile
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

    // Window row s of the sweep (the block's g-th) into buffer g % kBuffers: what of its
    // matrix rows holds a tap landing in the tile (taps kh_lo..kh_hi, bytes
    // [run_lo, run_hi) of each matrix row).
    auto fill = [&](u32 s) {
      if (s >= t.rows) return;
      const u32 g = sweep0 + s;
      const u32 oh = t.oh_hi - s;
      const u32 kh_lo = tt_kh_lo(t.h0, oh);
      const u32 kh_hi = min((t.h_end + kPH - oh * kSH) / kDH, kKH - 1);
      const u32 run_lo = kh_lo * kTapElems * u32(kElementBytes);
      const u32 run_hi = kh_lo <= kh_hi ? (kh_hi + 1) * kTapElems * u32(kElementBytes) : run_lo;
      const bool whole = run_lo == 0 && run_hi == kRowBytes;
      const u64 start = t.row0 + oh * kWindowRowBytes;
      const u64 base = start & ~u64(15);
      u8* buf = stage + g % kBuffers * kBufBytes;
      const u32 shift = u32(start - base);
      const u32 chunks = run_lo < run_hi ? (shift + t.span + 15) / 16 : 0;
      for (u32 c = threadIdx.x; c < chunks; c += kThreads) {
        if (!whole) {  // bytes [lo, hi) from `start`; rows ra..rb of them
          const u32 lo = c ? c * 16 - shift : 0;
          const u32 hi = min(c * 16 + 16 - shift, t.span);
          const u32 ra = lo / kRowBytes, rb = (hi - 1) / kRowBytes;
          const bool need = rb > ra + 1 ||
                            (lo < ra * kRowBytes + run_hi && ra * kRowBytes + run_lo < hi) ||
                            (lo < rb * kRowBytes + run_hi && rb * kRowBytes + run_lo < hi);
          if (!need) continue;
        }
        const u64 at = base + u64(c) * 16;
        if (at + 16 <= kColBytes) {
          tt_cp_async(buf + c * 16, col + at, true, col_policy);
        } else {  // the matrix's last chunk: only its own bytes
          for (u32 b = 0; at + b < kColBytes; ++b) buf[c * 16 + b] = col[at + b];
        }
      }
    };

#pragma unroll 1
    for (u32 s = 0; s + 1 < kBuffers; ++s) {
      fill(s);
      tt_cp_async_commit();
    }
#pragma unroll 1
    for (u32 s = 0; s < t.rows; ++s) {
      fill(s + kBuffers - 1);
      tt_cp_async_commit();
      tt_cp_async_wait<kBuffers - 1>();  // window row s has landed
      __syncthreads();
      const u32 g = sweep0 + s;
      const u32 oh = t.oh_hi - s;
      const u8* buf = stage + g % kBuffers * kBufBytes + u32(t.row0 + oh * kWindowRowBytes) % kBufAlign;
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
      __syncthreads();  // buffer g % kBuffers refills next
    }
    sweep0 += t.rows;

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
          tt_st_global(out + v * kVector * kImgStrideC * kElementBytes, lanes.v, img_policy);
        }
      }
    }
  }
}

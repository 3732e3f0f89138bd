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
enum : u32 { kPerRow = 1u };
enum : u32 { kItems = 4u };
enum : u32 { kBuffers = 3u };
enum : u32 { kBufBytes = 1456u };
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
  const u64 col_policy = tt_make_col_policy();
  const u64 img_policy = tt_make_img_policy();
  extern __shared__ __align__(16) u8 stage[];
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
      const u32 shift = u32(start - base);
      const u32 chunks = run_lo < run_hi ? (shift + span + 15) / 16 : 0;
      for (u32 c = threadIdx.x; c < chunks; c += kThreads) {
        if (!whole) {  // bytes [lo, hi) from `start`; rows ra..rb of them
          const u32 lo = c ? c * 16 - shift : 0;
          const u32 hi = min(c * 16 + 16 - shift, span);
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
    for (u32 s = 0; s < rows; ++s) {
      fill(s + kBuffers - 1);
      tt_cp_async_commit();
      tt_cp_async_wait<kBuffers - 1>();  // window row s has landed
      __syncthreads();
      const u32 g = sweep0 + s;
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
        tt_st_global(out + v * kVector * kImgStrideC * kElementBytes, lanes.v, img_policy);
      }
    }
  }
}

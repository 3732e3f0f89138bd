// tiletune col2im kernel (generated; do not edit).
//   simt_col2im (staged form), f32, n2 h9 w9 c8 kernel 3x3 stride 2x2 dilation 1x1 pad 1x1 -> [50, 72], image strides [648, 72, 8, 1]
//   output tile 4x9, 64 threads, vector 4 x 4 B, 4 channel(s) per thread, stage 3 x 5 runs of 72 elements, L2 policy columns evict_last, image evict_last
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
struct __align__(16) tt_run_vec {
  u32 x, y, z, w;
};
__device__ __forceinline__ tt_run_vec tt_run_ld_global(const u8* p, u64 policy) {
  tt_run_vec v;
  asm volatile("ld.global.nc.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p), "l"(policy));
  return v;
}
__device__ __forceinline__ void tt_run_st_global(u8* p, const tt_run_vec& v) {
  asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};"
               :
               : "l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}
__device__ __forceinline__ tt_run_vec tt_run_ld_shared(const u8* p) { return *reinterpret_cast<const tt_run_vec*>(p); }
__device__ __forceinline__ void tt_run_st_shared(u8* p, const tt_run_vec& v) { *reinterpret_cast<tt_run_vec*>(p) = v; }

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
constexpr int kStageTapStep = -240;  // bytes from one tap of a class to the next in the stage
enum : u32 { kShiftStep = 0u };
enum : u32 { kTileItems = 80u };
enum : u32 { kStageRows = 3u };
enum : u32 { kStageCols = 5u };
enum : u32 { kChunks = 19u };
enum : u32 { kPitchBytes = 304u };
enum : u32 { kStageChunks = 285u };
enum : u32 { kUnroll = 4u };
enum : u32 { kTapElems = 24u };
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

extern "C" __global__ void __launch_bounds__(kThreads) tt_col2im_staged(const u8* __restrict__ col, u8* __restrict__ img) {
  const u64 col_policy = tt_make_col_policy();
  const u64 img_policy = tt_make_img_policy();
  extern __shared__ __align__(16) u8 stage[];
  // Tile t: image n, rows from h0, columns from w0, every channel.
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
    // Per window position (oh, ow): the taps kh in [kh_lo, kh_hi] land in the tile's
    // rows, one run of the matrix row (all kw and c), copied to its slot as the aligned
    // 16-byte chunks that cover it; kUnroll chunks per thread are loaded before any is
    // stored, so that several loads are in flight.
    for (u32 i0 = threadIdx.x; i0 < kStageChunks; i0 += kThreads * kUnroll) {
      tt_run_vec v[kUnroll];
      u32 at[kUnroll];
#pragma unroll
      for (u32 u = 0; u < kUnroll; ++u) {
        const u32 i = i0 + u * kThreads;
        at[u] = 0xffffffffu;
        if (i >= kStageChunks) continue;
        const u32 slot = i / kChunks;
        const u32 oh = oh_lo + slot / kStageCols;
        const u32 ow = ow_lo + slot % kStageCols;
        if (oh > oh_hi || ow > ow_hi) continue;
        const u32 kh_lo = tt_kh_lo(h0, oh);
        const u32 kh_hi = min((h_end + kPH - oh * kSH) / kDH, kKH - 1);
        if (kh_lo > kh_hi) continue;
        const u64 start = tt_run_start(n, oh, ow, kh_lo);
        const u64 end = start + u64(kh_hi - kh_lo + 1) * kTapElems * kElementBytes;
        const u64 chunk = (start & ~u64(15)) + u64(i % kChunks) * 16;
        if (chunk >= end) continue;
        at[u] = slot * kPitchBytes + i % kChunks * 16;
        if (chunk + 16 <= kColBytes) {
          v[u] = tt_run_ld_global(col + chunk, col_policy);
        } else {  // the matrix's last chunk: only its own bytes
          union { tt_run_vec v; u8 b[16]; } last;
          for (u32 b = 0; b < 16; ++b) last.b[b] = chunk + b < kColBytes ? col[chunk + b] : 0;
          v[u] = last.v;
        }
      }
#pragma unroll
      for (u32 u = 0; u < kUnroll; ++u) {
        if (at[u] != 0xffffffffu) tt_run_st_shared(stage + at[u], v[u]);
      }
    }
    __syncthreads();
    for (u32 item = threadIdx.x; item < kTileItems; item += kThreads) {
      const u32 c0 = item % kGroups * kPerThread;
      const u32 pixel = item / kGroups;
      const u32 q = pixel % kRowItems;  // residue class q / kResW, its (q % kResW)-th column
      const u32 w_in = q / kResW + q % kResW * kSW;
      const u32 h = h0 + pixel / kRowItems;
      const u32 w = w0 + w_in;
      if (w_in >= kTileW || h >= kH || w >= kW) continue;
      float acc[kPerThread];
#pragma unroll
      for (u32 i = 0; i < kPerThread; ++i) acc[i] = 0.0f;
      u32 kw0 = tt_first_tap(w + kPW, kDW, kSW, kStepW);
      if (kw0 != 0xffffffffu && w + kPW > (kOW - 1) * kSW) {
        kw0 = tt_skip(kw0, w + kPW - (kOW - 1) * kSW, kDW, kStepW);  // ow < OW
      }
      u32 kh = tt_first_tap(h + kPH, kDH, kSH, kStepH);
      if (kh != 0xffffffffu && h + kPH > (kOH - 1) * kSH) {
        kh = tt_skip(kh, h + kPH - (kOH - 1) * kSH, kDH, kStepH);  // oh < OH
      }
      for (; kh < kKH && kh * kDH <= h + kPH; kh += kStepH) {
        const u32 oh = (h + kPH - kh * kDH) / kSH;
        const u32 kh_lo = tt_kh_lo(h0, oh);
        // The slot row of oh at tap (kh, 0, c0); a slot's run starts at its matrix
        // offset mod 16, computed in 32 bits (which keep the low bits exact).
        const u8* slots = stage + (oh - oh_lo) * kStageCols * kPitchBytes +
                          ((kh - kh_lo) * kTapElems + c0) * kElementBytes;
        const u32 run0 = ((n * kOH + oh) * kOW) * u32(kK) + kh_lo * kTapElems;
        u32 kw = kw0;
        const u32 ow = (w + kPW - kw * kDW) / kSW;
        const u8* p = slots + (ow - ow_lo) * kPitchBytes + kw * kC * kElementBytes;
        u32 shift = (run0 + ow * u32(kK)) * u32(kElementBytes) % 16;
        for (; kw < kKW && kw * kDW <= w + kPW; kw += kStepW) {
#pragma unroll
          for (u32 v = 0; v < kPerThread / kVector; ++v) {
            tt_lanes lanes;
            lanes.v = tt_ld_shared((p + shift) + v * kVector * kElementBytes);
#pragma unroll
            for (u32 i = 0; i < kVector; ++i) acc[v * kVector + i] += tt_widen(lanes.e[i]);
          }
          p += kStageTapStep;
          shift = (shift + kShiftStep) % 16;
        }
      }
      u8* out = img + (u64(n) * kImgStrideN + u64(h) * kImgStrideH + u64(w) * kImgStrideW +
                       u64(c0) * kImgStrideC) * kElementBytes;
#pragma unroll
      for (u32 v = 0; v < kPerThread / kVector; ++v) {
        tt_lanes lanes;
#pragma unroll
        for (u32 i = 0; i < kVector; ++i) lanes.e[i] = tt_round(acc[v * kVector + i]);
        tt_st_global(out + v * kVector * kImgStrideC * kElementBytes, lanes.v, img_policy);
      }
    }
    __syncthreads();  // the next tile refills the stage
  }
}

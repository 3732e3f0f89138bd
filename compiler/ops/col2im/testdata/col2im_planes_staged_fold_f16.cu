// tiletune col2im kernel (generated; do not edit).
//   simt_col2im (planes_staged form), f16, n64 h56 w56 c64 kernel 3x3 stride 1x1 dilation 1x1 pad 1x1 -> [200704, 576], image strides [200704, 56, 1, 3136]
//   output tile 8x56, 256 threads, vector 8 x 2 B, 8 channel(s) per thread, L2 policy columns evict_first, image none
//   channel_rows columns; taps summed in f32, kh descending then kw (F.fold's order); one rounding; NaN canonical
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
__device__ __forceinline__ void tt_st_global(u8* p, const tt_vec& v) {
  asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};"
               :
               : "l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}
__device__ __forceinline__ tt_vec tt_ld_shared(const u8* p) { return *reinterpret_cast<const tt_vec*>(p); }
__device__ __forceinline__ void tt_st_shared(u8* p, const tt_vec& v) { *reinterpret_cast<tt_vec*>(p) = v; }

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
enum : u32 { kThreads = 256u };
enum : u64 { kNumTiles = 28672ull };
enum : u32 { kTilesPerPlane = 7u };
enum : u32 { kTilesW = 1u };
enum : u64 { kTileH = 8ull };
enum : u32 { kTileW = 56u };
enum : u64 { kElementBytes = 2ull };
enum : u32 { kH = 56u };
enum : u32 { kW = 56u };
enum : u64 { kC = 64ull };
enum : u64 { kRows = 229376ull };
enum : u32 { kKW = 3u };
constexpr int kSH = 1;
constexpr int kSW = 1;
constexpr int kDH = 1;
constexpr int kDW = 1;
constexpr int kPH = 1;
constexpr int kPW = 1;
constexpr int kEKH = 3;
constexpr int kEKW = 3;
constexpr int kOH = 56;
constexpr int kOW = 56;
constexpr int kSpanH = 3;
constexpr int kSpanW = 3;
constexpr long long kStepI = -18704;
constexpr long long kStepJ = -6270;
enum : u64 { kL = 3136ull };
enum : u64 { kTaps = 9ull };
enum : u64 { kImgStrideN = 200704ull };
enum : u64 { kImgStrideH = 56ull };
enum : u64 { kImgStrideW = 1ull };
enum : u64 { kImgStrideC = 3136ull };
enum : u32 { kVector = 8u };
enum : u32 { kRowVectors = 7u };
enum : u32 { kItems = 56u };
enum : u32 { kStageL = 560u };
enum : u32 { kStageBytes = 10080u };

// One column-matrix element by a non-coherent load.
__device__ __forceinline__ tt_elem tt_ld_col(const u8* p, u64 policy) {
  tt_elem v;
  asm("ld.global.nc.L2::cache_hint.u16 %0, [%1], %2;" : "=h"(v) : "l"(p), "l"(policy));
  return v;
}

// Pixel (h, w)'s sum from the stage, whose runs start at window row oh = pos0 / OW.
__device__ __forceinline__ float tt_sum(const tt_elem* stage, int pos0, int h, int w) {
  const int h_im = h + kPH, w_im = w + kPW;
  const int oh0 = h_im < kEKH ? 0 : (h_im - kEKH) / kSH + 1;
  const int oh1 = min(h_im / kSH + 1, kOH);
  const int ow0 = w_im < kEKW ? 0 : (w_im - kEKW) / kSW + 1;
  const int ow1 = min(w_im / kSW + 1, kOW);
  float acc = 0.0f;
#pragma unroll
  for (int i = 0; i < kSpanH; ++i) {
    const int oh = oh0 + i, hk = h_im - oh * kSH;
    if (oh >= oh1 || hk % kDH != 0) continue;
    const tt_elem* const row = stage + (hk / kDH) * kKW * int(kStageL) + oh * kOW - pos0;
#pragma unroll
    for (int j = 0; j < kSpanW; ++j) {
      const int ow = ow0 + j, wk = w_im - ow * kSW;
      if (ow >= ow1 || wk % kDW != 0) continue;
      acc += tt_widen(row[(wk / kDW) * int(kStageL) + ow]);
    }
  }
  return acc;
}

extern "C" __global__ void __launch_bounds__(kThreads) tt_col2im_planes_staged(const u8* __restrict__ col, u8* __restrict__ img) {
  const u64 col_policy = tt_make_col_policy();
  extern __shared__ __align__(16) u8 tt_smem[];
  tt_elem* const stage = reinterpret_cast<tt_elem*>(tt_smem);
  // The warp's 32 vectors, summed pixel by pixel before each lane stores its own.
  tt_elem* const slice = reinterpret_cast<tt_elem*>(tt_smem + kStageBytes) + threadIdx.x / 32 * 32 * kVector;
  const u32 lane = threadIdx.x % 32;
  for (u64 tile = blockIdx.x; tile < kNumTiles; tile += gridDim.x) {
    const u64 plane = tile / kTilesPerPlane;
    const int h0 = int(tile % kTilesPerPlane * kTileH);
    const int h1 = min(h0 + int(kTileH), int(kH));
    // The window rows reaching rows [h0, h1): [lo, hi).
    const int lo = h0 + kPH < kEKH ? 0 : (h0 + kPH - kEKH) / kSH + 1;
    const int hi = min((h1 - 1 + kPH) / kSH + 1, kOH);
    const int pos0 = lo * kOW;
    const u32 run = hi > lo ? u32(hi - lo) * u32(kOW) : 0u;
    const u64 n = plane / kC, c = plane % kC;
    const u8* const from = col + (plane * kTaps * kL + u64(pos0)) * kElementBytes;
    u8* const to = img + (n * kImgStrideN + c * kImgStrideC) * kElementBytes;
    __syncthreads();  // the previous tile's sums are done with the stage
    for (u32 i = threadIdx.x; i < u32(kTaps) * kStageL; i += kThreads) {
      const u32 tap = i / kStageL, q = i % kStageL;
      // Past the run the load reads the matrix's first element (tt_ld_col may be
      // hoisted above the test); nothing is staged.
      const tt_elem v =
          tt_ld_col(q < run ? from + (u64(tap) * kL + q) * kElementBytes : col, col_policy);
      if (q < run) stage[i] = v;
    }
    __syncthreads();
    // A warp takes 32 vectors at a time. Lane l sums the warp's pixels l, l + 32, ...
    // (neighbouring lanes read neighbouring stage elements: no bank conflicts), then
    // takes its own vector back from the warp's slice of shared memory and stores it.
    for (u32 i0 = threadIdx.x / 32 * 32; i0 < kItems; i0 += kThreads) {
#pragma unroll
      for (u32 e = 0; e < kVector; ++e) {
        const u32 f = e * 32 + lane, i = i0 + f / kVector;
        const int h = h0 + int(i / kRowVectors);
        const int w = int(i % kRowVectors * kVector + f % kVector);
        slice[f] = i < kItems && h < h1 ? tt_round(tt_sum(stage, pos0, h, w)) : tt_elem(0);
      }
      __syncwarp();
      const u32 i = i0 + lane;
      const int h = h0 + int(i / kRowVectors), w = int(i % kRowVectors * kVector);
      if (i < kItems && h < h1) {
        tt_st_global(to + (u64(h) * kImgStrideH + u64(w) * kImgStrideW) * kElementBytes,
                     *reinterpret_cast<const tt_vec*>(slice + lane * kVector));
      }
      __syncwarp();  // the slice is read before the next vectors are summed into it
    }
  }
}

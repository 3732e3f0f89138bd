// tiletune col2im kernel (generated; do not edit).
//   simt_col2im (planes form), f32, n2 h11 w10 c6 kernel 3x2 stride 2x1 dilation 1x2 pad 1x1 -> [120, 36], image strides [660, 60, 6, 1]
//   output tile 2x8, 64 threads, vector 1 x 4 B, 1 channel(s) per thread, L2 policy columns none, image none
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

// 4-byte vector accesses.
struct __align__(4) tt_vec {
  u32 x;
};
__device__ __forceinline__ tt_vec tt_ld_global(const u8* p) {
  tt_vec v;
  asm volatile("ld.global.nc.u32 %0, [%1];"
               : "=r"(v.x)
               : "l"(p));
  return v;
}
__device__ __forceinline__ void tt_st_global(u8* p, const tt_vec& v) {
  asm volatile("st.global.u32 [%0], %1;"
               :
               : "l"(p), "r"(v.x)
               : "memory");
}
__device__ __forceinline__ tt_vec tt_ld_shared(const u8* p) { return *reinterpret_cast<const tt_vec*>(p); }
__device__ __forceinline__ void tt_st_shared(u8* p, const tt_vec& v) { *reinterpret_cast<tt_vec*>(p) = v; }

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
enum : u64 { kNumTiles = 144ull };
enum : u32 { kTilesPerPlane = 12u };
enum : u32 { kTilesW = 2u };
enum : u64 { kTileH = 2ull };
enum : u32 { kTileW = 8u };
enum : u64 { kElementBytes = 4ull };
enum : u32 { kH = 11u };
enum : u32 { kW = 10u };
enum : u64 { kC = 6ull };
enum : u64 { kRows = 132ull };
enum : u32 { kKW = 2u };
constexpr int kSH = 2;
constexpr int kSW = 1;
constexpr int kDH = 1;
constexpr int kDW = 2;
constexpr int kPH = 1;
constexpr int kPW = 1;
constexpr int kEKH = 3;
constexpr int kEKW = 3;
constexpr int kOH = 6;
constexpr int kOW = 10;
constexpr int kSpanH = 2;
constexpr int kSpanW = 3;
enum : u64 { kL = 60ull };
enum : u64 { kTaps = 6ull };
enum : u64 { kImgStrideN = 660ull };
enum : u64 { kImgStrideH = 60ull };
enum : u64 { kImgStrideW = 6ull };
enum : u64 { kImgStrideC = 1ull };
enum : u32 { kVector = 1u };
enum : u32 { kRowVectors = 8u };
enum : u32 { kItems = 16u };

// One column-matrix element by a non-coherent load.
__device__ __forceinline__ tt_elem tt_ld_col(const u8* p) {
  tt_elem v;
  asm("ld.global.nc.u32 %0, [%1];" : "=r"(v) : "l"(p));
  return v;
}

__device__ __forceinline__ float tt_sum(const u8* from, int h, int w) {
  const int h_im = h + kPH, w_im = w + kPW;
  const int oh0 = h_im < kEKH ? 0 : (h_im - kEKH) / kSH + 1;
  const int oh1 = min(h_im / kSH + 1, kOH);
  const int ow0 = w_im < kEKW ? 0 : (w_im - kEKW) / kSW + 1;
  const int ow1 = min(w_im / kSW + 1, kOW);
  float acc = 0.0f;
  tt_elem v[kSpanH * kSpanW];
  bool ok[kSpanH * kSpanW];
#pragma unroll
  for (int i = 0; i < kSpanH; ++i) {
    const int oh = oh0 + i, hk = h_im - oh * kSH;
    const bool row_ok = oh < oh1 && hk % kDH == 0;
    const u64 row = u64(max(hk, 0) / kDH) * kKW * kL + u64(min(oh, kOH - 1)) * kOW;
#pragma unroll
    for (int j = 0; j < kSpanW; ++j) {
      const int ow = ow0 + j, wk = w_im - ow * kSW;
      ok[i * kSpanW + j] = row_ok && ow < ow1 && wk % kDW == 0;
      v[i * kSpanW + j] = tt_ld_col(from + (row + u64(max(wk, 0) / kDW) * kL + u64(min(ow, kOW - 1))) * kElementBytes);
    }
  }
#pragma unroll
  for (int t = 0; t < kSpanH * kSpanW; ++t) {
    if (ok[t]) acc += tt_widen(v[t]);
  }
  return acc;
}

extern "C" __global__ void __launch_bounds__(kThreads) tt_col2im_planes(const u8* __restrict__ col, u8* __restrict__ img) {
  for (u64 tile = blockIdx.x; tile < kNumTiles; tile += gridDim.x) {
    const u64 plane = tile / kTilesPerPlane;
    const u32 t = u32(tile % kTilesPerPlane);
    const u32 h0 = u32(t / kTilesW * kTileH), w0 = t % kTilesW * kTileW;
    const u64 n = plane / kC, c = plane % kC;
    const u8* const from = col + plane * kTaps * kL * kElementBytes;
    u8* const to = img + (n * kImgStrideN + c * kImgStrideC) * kElementBytes;
    for (u32 i = threadIdx.x; i < kItems; i += kThreads) {
      const u32 h = h0 + i / kRowVectors, w = w0 + i % kRowVectors * kVector;
      if (h >= kH || w >= kW) continue;
      tt_lanes out;
#pragma unroll
      for (u32 e = 0; e < kVector; ++e) {
        out.e[e] = tt_round(tt_sum(from, int(h), int(w + e)));
      }
      tt_st_global(to + (u64(h) * kImgStrideH + u64(w) * kImgStrideW) * kElementBytes, out.v);
    }
  }
}

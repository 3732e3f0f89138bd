// Ablation, wrong on purpose (session 17; bench/RESULTS.md): the N32 C3 224x224 7x7 s2 p3 f16
// im2col stem's CTA structure (3584 CTAs of 512 threads, each writing its output row's
// contiguous 32928 bytes of columns as 2058 16-byte vectors with the stem's evict_first
// policy) storing constants: no image, no shared memory, no gather. On the H200: 27.9-28.3 us,
// against 34.5-35.3 for the generated stem in the same runs: the structure itself can write
// at the store ceiling. (Measured with the heuristic kernel's whole preamble; this file keeps
// only what the kernel uses of it, which gives the same PTX.)
// The heuristic launched 512 threads then; since session 18 it takes 448 for this stem, so
// the command below restores the launch the file was written for.
//   im2col_benchmark --ablation_source=n32_c3_224x224_k7_s2_p3/heuristic,threads:512,shared_bytes:12096=bench/stem_variants/store_only.cu \
//       --benchmark_filter=n32_c3_224x224_k7_s2_p3/heuristic
typedef unsigned int u32;
typedef unsigned long long u64;
typedef unsigned char u8;

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
__device__ __forceinline__ void tt_st_global(u8* p, const tt_vec& v, u64 policy) {
  asm volatile("st.global.L2::cache_hint.v4.u32 [%0], {%1, %2, %3, %4}, %5;"
               :
               : "l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w), "l"(policy)
               : "memory");
}

enum : u32 { kThreads = 512u };
enum : u64 { kBlockM = 112ull };
enum : u64 { kK = 147ull };
enum : u64 { kElementBytes = 2ull };
enum : u32 { kFlatVector = 8u };
enum : u32 { kTileVectors = 2058u };

// Ablation: the stem's CTA structure (one output row of 2058 vectors per CTA, 512 threads)
// storing constants: no shared memory, no copies, no gather.
extern "C" __global__ void __maxnreg__(24) tt_im2col_simt_im2col(const u8* __restrict__ img, u8* __restrict__ col) {
  const u64 col_policy = tt_make_col_policy();
  u8* const out = col + u64(blockIdx.x) * kBlockM * kK * kElementBytes;
  for (u32 v = threadIdx.x; v < kTileVectors; v += kThreads) {
    tt_st_global(out + v * u32(kFlatVector * kElementBytes), tt_vec{v, v, v, v}, col_policy);
  }
}

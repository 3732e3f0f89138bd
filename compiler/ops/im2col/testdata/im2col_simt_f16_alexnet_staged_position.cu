// tiletune im2col kernel (generated; do not edit).
//   path simt_im2col, f16, n2 h227 w227 c3 kernel 11x11 stride 4x4 dilation 1x1 pad 0x0 -> [6050, 363], image strides [154587, 681, 3, 1]
//   tile [55, 363], 256 threads, flat runs of whole rows, vector 8 x 2 B, input staged (1 output row(s) x 11 input rows, 16-byte loads), 1 stage(s), L2 policy image none, columns none

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

// 16-byte vector accesses.
struct __align__(16) tt_box_vec {
  u32 x, y, z, w;
};
__device__ __forceinline__ tt_box_vec tt_box_ld_global(const u8* p) {
  tt_box_vec v;
  asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
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

// One image element.
typedef u16 tt_elem;
__device__ __forceinline__ tt_elem tt_ld_elem(const u8* p) {
  u16 v;
  // Not volatile, so the loads of an unrolled loop may issue together; the
  // compiler may also hoist it above a branch: callers pass valid addresses only.
  asm("ld.global.nc.u16 %0, [%1];" : "=h"(v) : "l"(p));
  return tt_elem(v);
}

// Problem constants; enumerators fold into the code and take no storage.
enum : u32 { kThreads = 256u };
enum : u64 { kNumTiles = 110ull };
enum : u64 { kTilesK = 1ull };
enum : u64 { kBlockM = 55ull };
enum : u64 { kBlockK = 363ull };
enum : u64 { kM = 6050ull };
enum : u64 { kK = 363ull };
enum : u64 { kElementBytes = 2ull };
enum : u64 { kH = 227ull };
enum : u64 { kW = 227ull };
enum : u64 { kC = 3ull };
enum : u64 { kKW = 11ull };
enum : u64 { kSH = 4ull };
enum : u64 { kSW = 4ull };
enum : u64 { kDH = 1ull };
enum : u64 { kDW = 1ull };
enum : u64 { kPH = 0ull };
enum : u64 { kPW = 0ull };
enum : u64 { kOW = 55ull };
enum : u64 { kOHW = 3025ull };
enum : u64 { kImgStrideN = 154587ull };
enum : u64 { kImgStrideH = 681ull };
enum : u64 { kImgStrideW = 3ull };
enum : u64 { kImgStrideC = 1ull };
enum : u32 { kTaps = 121u };
enum : u32 { kFlatVector = 8u };
enum : u32 { kKH = 11u };
enum : u32 { kRowsPerTile = 1u };
enum : u32 { kRun = 19965u };
enum : u32 { kUnits = 8u };
enum : u32 { kUnitsPerElem = 1u };
enum : u32 { kTableWords = 4u };
enum : u64 { kOH = 55ull };
enum : u64 { kOutRows = 110ull };
enum : u32 { kBoxRows = 11u };
enum : u32 { kBoxPitch = 689u };
enum : u32 { kBoxLead = 0u };
enum : u32 { kBoxOffset = 0u };
enum : u32 { kBoxStart = 0u };
enum : u32 { kBoxCopy = 681u };
enum : u32 { kPadElems = 0u };
enum : u32 { kLoad = 16u };
enum : u32 { kCopyBytes = 1362u };
enum : u32 { kRowBlocks = 87u };

// Byte offsets in the boxes of one vector's units (see the kernel).
struct __align__(16) tt_offsets {
  u32 at[kTableWords];  // two 16-bit offsets each, low half first
};
// Row j: the box offsets of the units of a vector starting at element j of a
// pixel's run of kK (past it, in the next pixel's), read through L1.
__device__ const tt_offsets tt_table[kK] = {
    {{0x00020000u, 0x00060004u, 0x000a0008u, 0x000e000cu}},
    {{0x00040002u, 0x00080006u, 0x000c000au, 0x0010000eu}},
    {{0x00060004u, 0x000a0008u, 0x000e000cu, 0x00120010u}},
    {{0x00080006u, 0x000c000au, 0x0010000eu, 0x00140012u}},
    {{0x000a0008u, 0x000e000cu, 0x00120010u, 0x00160014u}},
    {{0x000c000au, 0x0010000eu, 0x00140012u, 0x00180016u}},
    {{0x000e000cu, 0x00120010u, 0x00160014u, 0x001a0018u}},
    {{0x0010000eu, 0x00140012u, 0x00180016u, 0x001c001au}},
    {{0x00120010u, 0x00160014u, 0x001a0018u, 0x001e001cu}},
    {{0x00140012u, 0x00180016u, 0x001c001au, 0x0020001eu}},
    {{0x00160014u, 0x001a0018u, 0x001e001cu, 0x00220020u}},
    {{0x00180016u, 0x001c001au, 0x0020001eu, 0x00240022u}},
    {{0x001a0018u, 0x001e001cu, 0x00220020u, 0x00260024u}},
    {{0x001c001au, 0x0020001eu, 0x00240022u, 0x00280026u}},
    {{0x001e001cu, 0x00220020u, 0x00260024u, 0x002a0028u}},
    {{0x0020001eu, 0x00240022u, 0x00280026u, 0x002c002au}},
    {{0x00220020u, 0x00260024u, 0x002a0028u, 0x002e002cu}},
    {{0x00240022u, 0x00280026u, 0x002c002au, 0x0030002eu}},
    {{0x00260024u, 0x002a0028u, 0x002e002cu, 0x00320030u}},
    {{0x00280026u, 0x002c002au, 0x0030002eu, 0x00340032u}},
    {{0x002a0028u, 0x002e002cu, 0x00320030u, 0x00360034u}},
    {{0x002c002au, 0x0030002eu, 0x00340032u, 0x00380036u}},
    {{0x002e002cu, 0x00320030u, 0x00360034u, 0x003a0038u}},
    {{0x0030002eu, 0x00340032u, 0x00380036u, 0x003c003au}},
    {{0x00320030u, 0x00360034u, 0x003a0038u, 0x003e003cu}},
    {{0x00340032u, 0x00380036u, 0x003c003au, 0x0040003eu}},
    {{0x00360034u, 0x003a0038u, 0x003e003cu, 0x05620040u}},
    {{0x00380036u, 0x003c003au, 0x0040003eu, 0x05640562u}},
    {{0x003a0038u, 0x003e003cu, 0x05620040u, 0x05660564u}},
    {{0x003c003au, 0x0040003eu, 0x05640562u, 0x05680566u}},
    {{0x003e003cu, 0x05620040u, 0x05660564u, 0x056a0568u}},
    {{0x0040003eu, 0x05640562u, 0x05680566u, 0x056c056au}},
    {{0x05620040u, 0x05660564u, 0x056a0568u, 0x056e056cu}},
    {{0x05640562u, 0x05680566u, 0x056c056au, 0x0570056eu}},
    {{0x05660564u, 0x056a0568u, 0x056e056cu, 0x05720570u}},
    {{0x05680566u, 0x056c056au, 0x0570056eu, 0x05740572u}},
    {{0x056a0568u, 0x056e056cu, 0x05720570u, 0x05760574u}},
    {{0x056c056au, 0x0570056eu, 0x05740572u, 0x05780576u}},
    {{0x056e056cu, 0x05720570u, 0x05760574u, 0x057a0578u}},
    {{0x0570056eu, 0x05740572u, 0x05780576u, 0x057c057au}},
    {{0x05720570u, 0x05760574u, 0x057a0578u, 0x057e057cu}},
    {{0x05740572u, 0x05780576u, 0x057c057au, 0x0580057eu}},
    {{0x05760574u, 0x057a0578u, 0x057e057cu, 0x05820580u}},
    {{0x05780576u, 0x057c057au, 0x0580057eu, 0x05840582u}},
    {{0x057a0578u, 0x057e057cu, 0x05820580u, 0x05860584u}},
    {{0x057c057au, 0x0580057eu, 0x05840582u, 0x05880586u}},
    {{0x057e057cu, 0x05820580u, 0x05860584u, 0x058a0588u}},
    {{0x0580057eu, 0x05840582u, 0x05880586u, 0x058c058au}},
    {{0x05820580u, 0x05860584u, 0x058a0588u, 0x058e058cu}},
    {{0x05840582u, 0x05880586u, 0x058c058au, 0x0590058eu}},
    {{0x05860584u, 0x058a0588u, 0x058e058cu, 0x05920590u}},
    {{0x05880586u, 0x058c058au, 0x0590058eu, 0x05940592u}},
    {{0x058a0588u, 0x058e058cu, 0x05920590u, 0x05960594u}},
    {{0x058c058au, 0x0590058eu, 0x05940592u, 0x05980596u}},
    {{0x058e058cu, 0x05920590u, 0x05960594u, 0x059a0598u}},
    {{0x0590058eu, 0x05940592u, 0x05980596u, 0x059c059au}},
    {{0x05920590u, 0x05960594u, 0x059a0598u, 0x059e059cu}},
    {{0x05940592u, 0x05980596u, 0x059c059au, 0x05a0059eu}},
    {{0x05960594u, 0x059a0598u, 0x059e059cu, 0x05a205a0u}},
    {{0x05980596u, 0x059c059au, 0x05a0059eu, 0x0ac405a2u}},
    {{0x059a0598u, 0x059e059cu, 0x05a205a0u, 0x0ac60ac4u}},
    {{0x059c059au, 0x05a0059eu, 0x0ac405a2u, 0x0ac80ac6u}},
    {{0x059e059cu, 0x05a205a0u, 0x0ac60ac4u, 0x0aca0ac8u}},
    {{0x05a0059eu, 0x0ac405a2u, 0x0ac80ac6u, 0x0acc0acau}},
    {{0x05a205a0u, 0x0ac60ac4u, 0x0aca0ac8u, 0x0ace0accu}},
    {{0x0ac405a2u, 0x0ac80ac6u, 0x0acc0acau, 0x0ad00aceu}},
    {{0x0ac60ac4u, 0x0aca0ac8u, 0x0ace0accu, 0x0ad20ad0u}},
    {{0x0ac80ac6u, 0x0acc0acau, 0x0ad00aceu, 0x0ad40ad2u}},
    {{0x0aca0ac8u, 0x0ace0accu, 0x0ad20ad0u, 0x0ad60ad4u}},
    {{0x0acc0acau, 0x0ad00aceu, 0x0ad40ad2u, 0x0ad80ad6u}},
    {{0x0ace0accu, 0x0ad20ad0u, 0x0ad60ad4u, 0x0ada0ad8u}},
    {{0x0ad00aceu, 0x0ad40ad2u, 0x0ad80ad6u, 0x0adc0adau}},
    {{0x0ad20ad0u, 0x0ad60ad4u, 0x0ada0ad8u, 0x0ade0adcu}},
    {{0x0ad40ad2u, 0x0ad80ad6u, 0x0adc0adau, 0x0ae00adeu}},
    {{0x0ad60ad4u, 0x0ada0ad8u, 0x0ade0adcu, 0x0ae20ae0u}},
    {{0x0ad80ad6u, 0x0adc0adau, 0x0ae00adeu, 0x0ae40ae2u}},
    {{0x0ada0ad8u, 0x0ade0adcu, 0x0ae20ae0u, 0x0ae60ae4u}},
    {{0x0adc0adau, 0x0ae00adeu, 0x0ae40ae2u, 0x0ae80ae6u}},
    {{0x0ade0adcu, 0x0ae20ae0u, 0x0ae60ae4u, 0x0aea0ae8u}},
    {{0x0ae00adeu, 0x0ae40ae2u, 0x0ae80ae6u, 0x0aec0aeau}},
    {{0x0ae20ae0u, 0x0ae60ae4u, 0x0aea0ae8u, 0x0aee0aecu}},
    {{0x0ae40ae2u, 0x0ae80ae6u, 0x0aec0aeau, 0x0af00aeeu}},
    {{0x0ae60ae4u, 0x0aea0ae8u, 0x0aee0aecu, 0x0af20af0u}},
    {{0x0ae80ae6u, 0x0aec0aeau, 0x0af00aeeu, 0x0af40af2u}},
    {{0x0aea0ae8u, 0x0aee0aecu, 0x0af20af0u, 0x0af60af4u}},
    {{0x0aec0aeau, 0x0af00aeeu, 0x0af40af2u, 0x0af80af6u}},
    {{0x0aee0aecu, 0x0af20af0u, 0x0af60af4u, 0x0afa0af8u}},
    {{0x0af00aeeu, 0x0af40af2u, 0x0af80af6u, 0x0afc0afau}},
    {{0x0af20af0u, 0x0af60af4u, 0x0afa0af8u, 0x0afe0afcu}},
    {{0x0af40af2u, 0x0af80af6u, 0x0afc0afau, 0x0b000afeu}},
    {{0x0af60af4u, 0x0afa0af8u, 0x0afe0afcu, 0x0b020b00u}},
    {{0x0af80af6u, 0x0afc0afau, 0x0b000afeu, 0x0b040b02u}},
    {{0x0afa0af8u, 0x0afe0afcu, 0x0b020b00u, 0x10260b04u}},
    {{0x0afc0afau, 0x0b000afeu, 0x0b040b02u, 0x10281026u}},
    {{0x0afe0afcu, 0x0b020b00u, 0x10260b04u, 0x102a1028u}},
    {{0x0b000afeu, 0x0b040b02u, 0x10281026u, 0x102c102au}},
    {{0x0b020b00u, 0x10260b04u, 0x102a1028u, 0x102e102cu}},
    {{0x0b040b02u, 0x10281026u, 0x102c102au, 0x1030102eu}},
    {{0x10260b04u, 0x102a1028u, 0x102e102cu, 0x10321030u}},
    {{0x10281026u, 0x102c102au, 0x1030102eu, 0x10341032u}},
    {{0x102a1028u, 0x102e102cu, 0x10321030u, 0x10361034u}},
    {{0x102c102au, 0x1030102eu, 0x10341032u, 0x10381036u}},
    {{0x102e102cu, 0x10321030u, 0x10361034u, 0x103a1038u}},
    {{0x1030102eu, 0x10341032u, 0x10381036u, 0x103c103au}},
    {{0x10321030u, 0x10361034u, 0x103a1038u, 0x103e103cu}},
    {{0x10341032u, 0x10381036u, 0x103c103au, 0x1040103eu}},
    {{0x10361034u, 0x103a1038u, 0x103e103cu, 0x10421040u}},
    {{0x10381036u, 0x103c103au, 0x1040103eu, 0x10441042u}},
    {{0x103a1038u, 0x103e103cu, 0x10421040u, 0x10461044u}},
    {{0x103c103au, 0x1040103eu, 0x10441042u, 0x10481046u}},
    {{0x103e103cu, 0x10421040u, 0x10461044u, 0x104a1048u}},
    {{0x1040103eu, 0x10441042u, 0x10481046u, 0x104c104au}},
    {{0x10421040u, 0x10461044u, 0x104a1048u, 0x104e104cu}},
    {{0x10441042u, 0x10481046u, 0x104c104au, 0x1050104eu}},
    {{0x10461044u, 0x104a1048u, 0x104e104cu, 0x10521050u}},
    {{0x10481046u, 0x104c104au, 0x1050104eu, 0x10541052u}},
    {{0x104a1048u, 0x104e104cu, 0x10521050u, 0x10561054u}},
    {{0x104c104au, 0x1050104eu, 0x10541052u, 0x10581056u}},
    {{0x104e104cu, 0x10521050u, 0x10561054u, 0x105a1058u}},
    {{0x1050104eu, 0x10541052u, 0x10581056u, 0x105c105au}},
    {{0x10521050u, 0x10561054u, 0x105a1058u, 0x105e105cu}},
    {{0x10541052u, 0x10581056u, 0x105c105au, 0x1060105eu}},
    {{0x10561054u, 0x105a1058u, 0x105e105cu, 0x10621060u}},
    {{0x10581056u, 0x105c105au, 0x1060105eu, 0x10641062u}},
    {{0x105a1058u, 0x105e105cu, 0x10621060u, 0x10661064u}},
    {{0x105c105au, 0x1060105eu, 0x10641062u, 0x15881066u}},
    {{0x105e105cu, 0x10621060u, 0x10661064u, 0x158a1588u}},
    {{0x1060105eu, 0x10641062u, 0x15881066u, 0x158c158au}},
    {{0x10621060u, 0x10661064u, 0x158a1588u, 0x158e158cu}},
    {{0x10641062u, 0x15881066u, 0x158c158au, 0x1590158eu}},
    {{0x10661064u, 0x158a1588u, 0x158e158cu, 0x15921590u}},
    {{0x15881066u, 0x158c158au, 0x1590158eu, 0x15941592u}},
    {{0x158a1588u, 0x158e158cu, 0x15921590u, 0x15961594u}},
    {{0x158c158au, 0x1590158eu, 0x15941592u, 0x15981596u}},
    {{0x158e158cu, 0x15921590u, 0x15961594u, 0x159a1598u}},
    {{0x1590158eu, 0x15941592u, 0x15981596u, 0x159c159au}},
    {{0x15921590u, 0x15961594u, 0x159a1598u, 0x159e159cu}},
    {{0x15941592u, 0x15981596u, 0x159c159au, 0x15a0159eu}},
    {{0x15961594u, 0x159a1598u, 0x159e159cu, 0x15a215a0u}},
    {{0x15981596u, 0x159c159au, 0x15a0159eu, 0x15a415a2u}},
    {{0x159a1598u, 0x159e159cu, 0x15a215a0u, 0x15a615a4u}},
    {{0x159c159au, 0x15a0159eu, 0x15a415a2u, 0x15a815a6u}},
    {{0x159e159cu, 0x15a215a0u, 0x15a615a4u, 0x15aa15a8u}},
    {{0x15a0159eu, 0x15a415a2u, 0x15a815a6u, 0x15ac15aau}},
    {{0x15a215a0u, 0x15a615a4u, 0x15aa15a8u, 0x15ae15acu}},
    {{0x15a415a2u, 0x15a815a6u, 0x15ac15aau, 0x15b015aeu}},
    {{0x15a615a4u, 0x15aa15a8u, 0x15ae15acu, 0x15b215b0u}},
    {{0x15a815a6u, 0x15ac15aau, 0x15b015aeu, 0x15b415b2u}},
    {{0x15aa15a8u, 0x15ae15acu, 0x15b215b0u, 0x15b615b4u}},
    {{0x15ac15aau, 0x15b015aeu, 0x15b415b2u, 0x15b815b6u}},
    {{0x15ae15acu, 0x15b215b0u, 0x15b615b4u, 0x15ba15b8u}},
    {{0x15b015aeu, 0x15b415b2u, 0x15b815b6u, 0x15bc15bau}},
    {{0x15b215b0u, 0x15b615b4u, 0x15ba15b8u, 0x15be15bcu}},
    {{0x15b415b2u, 0x15b815b6u, 0x15bc15bau, 0x15c015beu}},
    {{0x15b615b4u, 0x15ba15b8u, 0x15be15bcu, 0x15c215c0u}},
    {{0x15b815b6u, 0x15bc15bau, 0x15c015beu, 0x15c415c2u}},
    {{0x15ba15b8u, 0x15be15bcu, 0x15c215c0u, 0x15c615c4u}},
    {{0x15bc15bau, 0x15c015beu, 0x15c415c2u, 0x15c815c6u}},
    {{0x15be15bcu, 0x15c215c0u, 0x15c615c4u, 0x1aea15c8u}},
    {{0x15c015beu, 0x15c415c2u, 0x15c815c6u, 0x1aec1aeau}},
    {{0x15c215c0u, 0x15c615c4u, 0x1aea15c8u, 0x1aee1aecu}},
    {{0x15c415c2u, 0x15c815c6u, 0x1aec1aeau, 0x1af01aeeu}},
    {{0x15c615c4u, 0x1aea15c8u, 0x1aee1aecu, 0x1af21af0u}},
    {{0x15c815c6u, 0x1aec1aeau, 0x1af01aeeu, 0x1af41af2u}},
    {{0x1aea15c8u, 0x1aee1aecu, 0x1af21af0u, 0x1af61af4u}},
    {{0x1aec1aeau, 0x1af01aeeu, 0x1af41af2u, 0x1af81af6u}},
    {{0x1aee1aecu, 0x1af21af0u, 0x1af61af4u, 0x1afa1af8u}},
    {{0x1af01aeeu, 0x1af41af2u, 0x1af81af6u, 0x1afc1afau}},
    {{0x1af21af0u, 0x1af61af4u, 0x1afa1af8u, 0x1afe1afcu}},
    {{0x1af41af2u, 0x1af81af6u, 0x1afc1afau, 0x1b001afeu}},
    {{0x1af61af4u, 0x1afa1af8u, 0x1afe1afcu, 0x1b021b00u}},
    {{0x1af81af6u, 0x1afc1afau, 0x1b001afeu, 0x1b041b02u}},
    {{0x1afa1af8u, 0x1afe1afcu, 0x1b021b00u, 0x1b061b04u}},
    {{0x1afc1afau, 0x1b001afeu, 0x1b041b02u, 0x1b081b06u}},
    {{0x1afe1afcu, 0x1b021b00u, 0x1b061b04u, 0x1b0a1b08u}},
    {{0x1b001afeu, 0x1b041b02u, 0x1b081b06u, 0x1b0c1b0au}},
    {{0x1b021b00u, 0x1b061b04u, 0x1b0a1b08u, 0x1b0e1b0cu}},
    {{0x1b041b02u, 0x1b081b06u, 0x1b0c1b0au, 0x1b101b0eu}},
    {{0x1b061b04u, 0x1b0a1b08u, 0x1b0e1b0cu, 0x1b121b10u}},
    {{0x1b081b06u, 0x1b0c1b0au, 0x1b101b0eu, 0x1b141b12u}},
    {{0x1b0a1b08u, 0x1b0e1b0cu, 0x1b121b10u, 0x1b161b14u}},
    {{0x1b0c1b0au, 0x1b101b0eu, 0x1b141b12u, 0x1b181b16u}},
    {{0x1b0e1b0cu, 0x1b121b10u, 0x1b161b14u, 0x1b1a1b18u}},
    {{0x1b101b0eu, 0x1b141b12u, 0x1b181b16u, 0x1b1c1b1au}},
    {{0x1b121b10u, 0x1b161b14u, 0x1b1a1b18u, 0x1b1e1b1cu}},
    {{0x1b141b12u, 0x1b181b16u, 0x1b1c1b1au, 0x1b201b1eu}},
    {{0x1b161b14u, 0x1b1a1b18u, 0x1b1e1b1cu, 0x1b221b20u}},
    {{0x1b181b16u, 0x1b1c1b1au, 0x1b201b1eu, 0x1b241b22u}},
    {{0x1b1a1b18u, 0x1b1e1b1cu, 0x1b221b20u, 0x1b261b24u}},
    {{0x1b1c1b1au, 0x1b201b1eu, 0x1b241b22u, 0x1b281b26u}},
    {{0x1b1e1b1cu, 0x1b221b20u, 0x1b261b24u, 0x1b2a1b28u}},
    {{0x1b201b1eu, 0x1b241b22u, 0x1b281b26u, 0x204c1b2au}},
    {{0x1b221b20u, 0x1b261b24u, 0x1b2a1b28u, 0x204e204cu}},
    {{0x1b241b22u, 0x1b281b26u, 0x204c1b2au, 0x2050204eu}},
    {{0x1b261b24u, 0x1b2a1b28u, 0x204e204cu, 0x20522050u}},
    {{0x1b281b26u, 0x204c1b2au, 0x2050204eu, 0x20542052u}},
    {{0x1b2a1b28u, 0x204e204cu, 0x20522050u, 0x20562054u}},
    {{0x204c1b2au, 0x2050204eu, 0x20542052u, 0x20582056u}},
    {{0x204e204cu, 0x20522050u, 0x20562054u, 0x205a2058u}},
    {{0x2050204eu, 0x20542052u, 0x20582056u, 0x205c205au}},
    {{0x20522050u, 0x20562054u, 0x205a2058u, 0x205e205cu}},
    {{0x20542052u, 0x20582056u, 0x205c205au, 0x2060205eu}},
    {{0x20562054u, 0x205a2058u, 0x205e205cu, 0x20622060u}},
    {{0x20582056u, 0x205c205au, 0x2060205eu, 0x20642062u}},
    {{0x205a2058u, 0x205e205cu, 0x20622060u, 0x20662064u}},
    {{0x205c205au, 0x2060205eu, 0x20642062u, 0x20682066u}},
    {{0x205e205cu, 0x20622060u, 0x20662064u, 0x206a2068u}},
    {{0x2060205eu, 0x20642062u, 0x20682066u, 0x206c206au}},
    {{0x20622060u, 0x20662064u, 0x206a2068u, 0x206e206cu}},
    {{0x20642062u, 0x20682066u, 0x206c206au, 0x2070206eu}},
    {{0x20662064u, 0x206a2068u, 0x206e206cu, 0x20722070u}},
    {{0x20682066u, 0x206c206au, 0x2070206eu, 0x20742072u}},
    {{0x206a2068u, 0x206e206cu, 0x20722070u, 0x20762074u}},
    {{0x206c206au, 0x2070206eu, 0x20742072u, 0x20782076u}},
    {{0x206e206cu, 0x20722070u, 0x20762074u, 0x207a2078u}},
    {{0x2070206eu, 0x20742072u, 0x20782076u, 0x207c207au}},
    {{0x20722070u, 0x20762074u, 0x207a2078u, 0x207e207cu}},
    {{0x20742072u, 0x20782076u, 0x207c207au, 0x2080207eu}},
    {{0x20762074u, 0x207a2078u, 0x207e207cu, 0x20822080u}},
    {{0x20782076u, 0x207c207au, 0x2080207eu, 0x20842082u}},
    {{0x207a2078u, 0x207e207cu, 0x20822080u, 0x20862084u}},
    {{0x207c207au, 0x2080207eu, 0x20842082u, 0x20882086u}},
    {{0x207e207cu, 0x20822080u, 0x20862084u, 0x208a2088u}},
    {{0x2080207eu, 0x20842082u, 0x20882086u, 0x208c208au}},
    {{0x20822080u, 0x20862084u, 0x208a2088u, 0x25ae208cu}},
    {{0x20842082u, 0x20882086u, 0x208c208au, 0x25b025aeu}},
    {{0x20862084u, 0x208a2088u, 0x25ae208cu, 0x25b225b0u}},
    {{0x20882086u, 0x208c208au, 0x25b025aeu, 0x25b425b2u}},
    {{0x208a2088u, 0x25ae208cu, 0x25b225b0u, 0x25b625b4u}},
    {{0x208c208au, 0x25b025aeu, 0x25b425b2u, 0x25b825b6u}},
    {{0x25ae208cu, 0x25b225b0u, 0x25b625b4u, 0x25ba25b8u}},
    {{0x25b025aeu, 0x25b425b2u, 0x25b825b6u, 0x25bc25bau}},
    {{0x25b225b0u, 0x25b625b4u, 0x25ba25b8u, 0x25be25bcu}},
    {{0x25b425b2u, 0x25b825b6u, 0x25bc25bau, 0x25c025beu}},
    {{0x25b625b4u, 0x25ba25b8u, 0x25be25bcu, 0x25c225c0u}},
    {{0x25b825b6u, 0x25bc25bau, 0x25c025beu, 0x25c425c2u}},
    {{0x25ba25b8u, 0x25be25bcu, 0x25c225c0u, 0x25c625c4u}},
    {{0x25bc25bau, 0x25c025beu, 0x25c425c2u, 0x25c825c6u}},
    {{0x25be25bcu, 0x25c225c0u, 0x25c625c4u, 0x25ca25c8u}},
    {{0x25c025beu, 0x25c425c2u, 0x25c825c6u, 0x25cc25cau}},
    {{0x25c225c0u, 0x25c625c4u, 0x25ca25c8u, 0x25ce25ccu}},
    {{0x25c425c2u, 0x25c825c6u, 0x25cc25cau, 0x25d025ceu}},
    {{0x25c625c4u, 0x25ca25c8u, 0x25ce25ccu, 0x25d225d0u}},
    {{0x25c825c6u, 0x25cc25cau, 0x25d025ceu, 0x25d425d2u}},
    {{0x25ca25c8u, 0x25ce25ccu, 0x25d225d0u, 0x25d625d4u}},
    {{0x25cc25cau, 0x25d025ceu, 0x25d425d2u, 0x25d825d6u}},
    {{0x25ce25ccu, 0x25d225d0u, 0x25d625d4u, 0x25da25d8u}},
    {{0x25d025ceu, 0x25d425d2u, 0x25d825d6u, 0x25dc25dau}},
    {{0x25d225d0u, 0x25d625d4u, 0x25da25d8u, 0x25de25dcu}},
    {{0x25d425d2u, 0x25d825d6u, 0x25dc25dau, 0x25e025deu}},
    {{0x25d625d4u, 0x25da25d8u, 0x25de25dcu, 0x25e225e0u}},
    {{0x25d825d6u, 0x25dc25dau, 0x25e025deu, 0x25e425e2u}},
    {{0x25da25d8u, 0x25de25dcu, 0x25e225e0u, 0x25e625e4u}},
    {{0x25dc25dau, 0x25e025deu, 0x25e425e2u, 0x25e825e6u}},
    {{0x25de25dcu, 0x25e225e0u, 0x25e625e4u, 0x25ea25e8u}},
    {{0x25e025deu, 0x25e425e2u, 0x25e825e6u, 0x25ec25eau}},
    {{0x25e225e0u, 0x25e625e4u, 0x25ea25e8u, 0x25ee25ecu}},
    {{0x25e425e2u, 0x25e825e6u, 0x25ec25eau, 0x2b1025eeu}},
    {{0x25e625e4u, 0x25ea25e8u, 0x25ee25ecu, 0x2b122b10u}},
    {{0x25e825e6u, 0x25ec25eau, 0x2b1025eeu, 0x2b142b12u}},
    {{0x25ea25e8u, 0x25ee25ecu, 0x2b122b10u, 0x2b162b14u}},
    {{0x25ec25eau, 0x2b1025eeu, 0x2b142b12u, 0x2b182b16u}},
    {{0x25ee25ecu, 0x2b122b10u, 0x2b162b14u, 0x2b1a2b18u}},
    {{0x2b1025eeu, 0x2b142b12u, 0x2b182b16u, 0x2b1c2b1au}},
    {{0x2b122b10u, 0x2b162b14u, 0x2b1a2b18u, 0x2b1e2b1cu}},
    {{0x2b142b12u, 0x2b182b16u, 0x2b1c2b1au, 0x2b202b1eu}},
    {{0x2b162b14u, 0x2b1a2b18u, 0x2b1e2b1cu, 0x2b222b20u}},
    {{0x2b182b16u, 0x2b1c2b1au, 0x2b202b1eu, 0x2b242b22u}},
    {{0x2b1a2b18u, 0x2b1e2b1cu, 0x2b222b20u, 0x2b262b24u}},
    {{0x2b1c2b1au, 0x2b202b1eu, 0x2b242b22u, 0x2b282b26u}},
    {{0x2b1e2b1cu, 0x2b222b20u, 0x2b262b24u, 0x2b2a2b28u}},
    {{0x2b202b1eu, 0x2b242b22u, 0x2b282b26u, 0x2b2c2b2au}},
    {{0x2b222b20u, 0x2b262b24u, 0x2b2a2b28u, 0x2b2e2b2cu}},
    {{0x2b242b22u, 0x2b282b26u, 0x2b2c2b2au, 0x2b302b2eu}},
    {{0x2b262b24u, 0x2b2a2b28u, 0x2b2e2b2cu, 0x2b322b30u}},
    {{0x2b282b26u, 0x2b2c2b2au, 0x2b302b2eu, 0x2b342b32u}},
    {{0x2b2a2b28u, 0x2b2e2b2cu, 0x2b322b30u, 0x2b362b34u}},
    {{0x2b2c2b2au, 0x2b302b2eu, 0x2b342b32u, 0x2b382b36u}},
    {{0x2b2e2b2cu, 0x2b322b30u, 0x2b362b34u, 0x2b3a2b38u}},
    {{0x2b302b2eu, 0x2b342b32u, 0x2b382b36u, 0x2b3c2b3au}},
    {{0x2b322b30u, 0x2b362b34u, 0x2b3a2b38u, 0x2b3e2b3cu}},
    {{0x2b342b32u, 0x2b382b36u, 0x2b3c2b3au, 0x2b402b3eu}},
    {{0x2b362b34u, 0x2b3a2b38u, 0x2b3e2b3cu, 0x2b422b40u}},
    {{0x2b382b36u, 0x2b3c2b3au, 0x2b402b3eu, 0x2b442b42u}},
    {{0x2b3a2b38u, 0x2b3e2b3cu, 0x2b422b40u, 0x2b462b44u}},
    {{0x2b3c2b3au, 0x2b402b3eu, 0x2b442b42u, 0x2b482b46u}},
    {{0x2b3e2b3cu, 0x2b422b40u, 0x2b462b44u, 0x2b4a2b48u}},
    {{0x2b402b3eu, 0x2b442b42u, 0x2b482b46u, 0x2b4c2b4au}},
    {{0x2b422b40u, 0x2b462b44u, 0x2b4a2b48u, 0x2b4e2b4cu}},
    {{0x2b442b42u, 0x2b482b46u, 0x2b4c2b4au, 0x2b502b4eu}},
    {{0x2b462b44u, 0x2b4a2b48u, 0x2b4e2b4cu, 0x30722b50u}},
    {{0x2b482b46u, 0x2b4c2b4au, 0x2b502b4eu, 0x30743072u}},
    {{0x2b4a2b48u, 0x2b4e2b4cu, 0x30722b50u, 0x30763074u}},
    {{0x2b4c2b4au, 0x2b502b4eu, 0x30743072u, 0x30783076u}},
    {{0x2b4e2b4cu, 0x30722b50u, 0x30763074u, 0x307a3078u}},
    {{0x2b502b4eu, 0x30743072u, 0x30783076u, 0x307c307au}},
    {{0x30722b50u, 0x30763074u, 0x307a3078u, 0x307e307cu}},
    {{0x30743072u, 0x30783076u, 0x307c307au, 0x3080307eu}},
    {{0x30763074u, 0x307a3078u, 0x307e307cu, 0x30823080u}},
    {{0x30783076u, 0x307c307au, 0x3080307eu, 0x30843082u}},
    {{0x307a3078u, 0x307e307cu, 0x30823080u, 0x30863084u}},
    {{0x307c307au, 0x3080307eu, 0x30843082u, 0x30883086u}},
    {{0x307e307cu, 0x30823080u, 0x30863084u, 0x308a3088u}},
    {{0x3080307eu, 0x30843082u, 0x30883086u, 0x308c308au}},
    {{0x30823080u, 0x30863084u, 0x308a3088u, 0x308e308cu}},
    {{0x30843082u, 0x30883086u, 0x308c308au, 0x3090308eu}},
    {{0x30863084u, 0x308a3088u, 0x308e308cu, 0x30923090u}},
    {{0x30883086u, 0x308c308au, 0x3090308eu, 0x30943092u}},
    {{0x308a3088u, 0x308e308cu, 0x30923090u, 0x30963094u}},
    {{0x308c308au, 0x3090308eu, 0x30943092u, 0x30983096u}},
    {{0x308e308cu, 0x30923090u, 0x30963094u, 0x309a3098u}},
    {{0x3090308eu, 0x30943092u, 0x30983096u, 0x309c309au}},
    {{0x30923090u, 0x30963094u, 0x309a3098u, 0x309e309cu}},
    {{0x30943092u, 0x30983096u, 0x309c309au, 0x30a0309eu}},
    {{0x30963094u, 0x309a3098u, 0x309e309cu, 0x30a230a0u}},
    {{0x30983096u, 0x309c309au, 0x30a0309eu, 0x30a430a2u}},
    {{0x309a3098u, 0x309e309cu, 0x30a230a0u, 0x30a630a4u}},
    {{0x309c309au, 0x30a0309eu, 0x30a430a2u, 0x30a830a6u}},
    {{0x309e309cu, 0x30a230a0u, 0x30a630a4u, 0x30aa30a8u}},
    {{0x30a0309eu, 0x30a430a2u, 0x30a830a6u, 0x30ac30aau}},
    {{0x30a230a0u, 0x30a630a4u, 0x30aa30a8u, 0x30ae30acu}},
    {{0x30a430a2u, 0x30a830a6u, 0x30ac30aau, 0x30b030aeu}},
    {{0x30a630a4u, 0x30aa30a8u, 0x30ae30acu, 0x30b230b0u}},
    {{0x30a830a6u, 0x30ac30aau, 0x30b030aeu, 0x35d430b2u}},
    {{0x30aa30a8u, 0x30ae30acu, 0x30b230b0u, 0x35d635d4u}},
    {{0x30ac30aau, 0x30b030aeu, 0x35d430b2u, 0x35d835d6u}},
    {{0x30ae30acu, 0x30b230b0u, 0x35d635d4u, 0x35da35d8u}},
    {{0x30b030aeu, 0x35d430b2u, 0x35d835d6u, 0x35dc35dau}},
    {{0x30b230b0u, 0x35d635d4u, 0x35da35d8u, 0x35de35dcu}},
    {{0x35d430b2u, 0x35d835d6u, 0x35dc35dau, 0x35e035deu}},
    {{0x35d635d4u, 0x35da35d8u, 0x35de35dcu, 0x35e235e0u}},
    {{0x35d835d6u, 0x35dc35dau, 0x35e035deu, 0x35e435e2u}},
    {{0x35da35d8u, 0x35de35dcu, 0x35e235e0u, 0x35e635e4u}},
    {{0x35dc35dau, 0x35e035deu, 0x35e435e2u, 0x35e835e6u}},
    {{0x35de35dcu, 0x35e235e0u, 0x35e635e4u, 0x35ea35e8u}},
    {{0x35e035deu, 0x35e435e2u, 0x35e835e6u, 0x35ec35eau}},
    {{0x35e235e0u, 0x35e635e4u, 0x35ea35e8u, 0x35ee35ecu}},
    {{0x35e435e2u, 0x35e835e6u, 0x35ec35eau, 0x35f035eeu}},
    {{0x35e635e4u, 0x35ea35e8u, 0x35ee35ecu, 0x35f235f0u}},
    {{0x35e835e6u, 0x35ec35eau, 0x35f035eeu, 0x35f435f2u}},
    {{0x35ea35e8u, 0x35ee35ecu, 0x35f235f0u, 0x35f635f4u}},
    {{0x35ec35eau, 0x35f035eeu, 0x35f435f2u, 0x35f835f6u}},
    {{0x35ee35ecu, 0x35f235f0u, 0x35f635f4u, 0x35fa35f8u}},
    {{0x35f035eeu, 0x35f435f2u, 0x35f835f6u, 0x35fc35fau}},
    {{0x35f235f0u, 0x35f635f4u, 0x35fa35f8u, 0x35fe35fcu}},
    {{0x35f435f2u, 0x35f835f6u, 0x35fc35fau, 0x360035feu}},
    {{0x35f635f4u, 0x35fa35f8u, 0x35fe35fcu, 0x36023600u}},
    {{0x35f835f6u, 0x35fc35fau, 0x360035feu, 0x36043602u}},
    {{0x35fa35f8u, 0x35fe35fcu, 0x36023600u, 0x36063604u}},
    {{0x35fc35fau, 0x360035feu, 0x36043602u, 0x36083606u}},
    {{0x35fe35fcu, 0x36023600u, 0x36063604u, 0x360a3608u}},
    {{0x360035feu, 0x36043602u, 0x36083606u, 0x360c360au}},
    {{0x36023600u, 0x36063604u, 0x360a3608u, 0x360e360cu}},
    {{0x36043602u, 0x36083606u, 0x360c360au, 0x3610360eu}},
    {{0x36063604u, 0x360a3608u, 0x360e360cu, 0x36123610u}},
    {{0x36083606u, 0x360c360au, 0x3610360eu, 0x36143612u}},
    {{0x360a3608u, 0x360e360cu, 0x36123610u, 0x00183614u}},
    {{0x360c360au, 0x3610360eu, 0x36143612u, 0x001a0018u}},
    {{0x360e360cu, 0x36123610u, 0x00183614u, 0x001c001au}},
    {{0x3610360eu, 0x36143612u, 0x001a0018u, 0x001e001cu}},
    {{0x36123610u, 0x00183614u, 0x001c001au, 0x0020001eu}},
    {{0x36143612u, 0x001a0018u, 0x001e001cu, 0x00220020u}},
    {{0x00183614u, 0x001c001au, 0x0020001eu, 0x00240022u}},
};
// One unit from shared memory, by a 32-bit shared address (volatile: it stays
// after the barrier that publishes the boxes).
__device__ __forceinline__ u32 tt_unit(u32 addr) {
  u32 v;
  asm volatile("ld.shared.u16 %0, [%1];" : "=r"(v) : "r"(addr));
  return v;
}

extern "C" __global__ void __launch_bounds__(kThreads) tt_im2col_simt_im2col(const u8* __restrict__ img, u8* __restrict__ col) {
  extern __shared__ __align__(16) u8 tt_smem[];
  tt_elem* const box = reinterpret_cast<tt_elem*>(tt_smem + kBoxOffset);
  // Image row of box row b of the tile whose first output row is `first` (input row
  // kh of output row first + b / kKH); null where that row is padding or past the last
  // output row.
  auto source = [&](u64 first, u32 b) -> const u8* {
    const u64 row = first + b / kKH;
    const u32 ih = u32(row % kOH) * u32(kSH) + b % kKH * u32(kDH) - u32(kPH);
    if (row >= kOutRows || ih >= kH) return nullptr;
    return img + (row / kOH * kImgStrideN + u64(ih) * kImgStrideH) * kElementBytes;
  };
  {
    const u64 tile = blockIdx.x;
    const u64 m0 = tile * kBlockM;
    const u64 row0 = m0 / kOW;
    // Elements the tile's box rows are shifted by: how far into its 16 bytes the first
    // box row's image row starts (one above the image too: only the address's low bits
    // count, and unsigned arithmetic keeps them).
    const u32 shift = u32((u64(img) + (row0 / kOH * kImgStrideN +
                                       (row0 % kOH * kSH - kPH) * kImgStrideH) *
                                          kElementBytes) & 15u) / u32(kElementBytes);
    // The image's pixels in 16-byte blocks: a box row starts as far into its 16 bytes as
    // its image row, so block j of row b (the j-th from the one holding the row's first
    // byte) is copied whole where it lies inside the row, element by element at the
    // row's two ends; nothing outside the row is read. A padding row gets zeros.
    for (u32 i = threadIdx.x; i < kBoxRows * kRowBlocks; i += kThreads) {
      const u32 b = i / kRowBlocks, j = i % kRowBlocks;
      const u8* const from = source(row0, b);
      u8* const to = reinterpret_cast<u8*>(box + b * kBoxPitch + kBoxLead + shift + kBoxStart);
      const int lo = int(j * 16) - int(tt_smem_addr(to) & 15u);  // row byte at the block
      if (lo >= 0 && lo + 16 <= int(kCopyBytes)) {
        tt_box_vec v{};
        if (from != nullptr) v = tt_box_ld_global(from + lo);
        tt_box_st_shared(to + lo, v);
      } else {
        for (int t = max(lo, 0); t < min(lo + 16, int(kCopyBytes)); t += int(kElementBytes)) {
          *reinterpret_cast<tt_elem*>(to + t) =
              from != nullptr ? tt_ld_elem(from + t) : tt_elem(0);
        }
      }
    }
    __syncthreads();
    // The column matrix's vectors that hold this output row's elements. The first and
    // last may hold a neighbouring row's too: their own elements go out one by one.
    const u64 run0 = m0 * kK;
    const u64 first = run0 / kFlatVector;
    const u32 vectors = u32((run0 + kRun - 1) / kFlatVector - first + 1);
    const u32 boxes = tt_smem_addr(tt_smem) + kBoxOffset + shift * u32(kElementBytes);
    for (u32 j = threadIdx.x; j < vectors; j += kThreads) {
      const u64 v = first + j;
      // Element 0 of vector v is element f0 of the row's run: pixel d = f0 / kK, run
      // element f0 % kK, whose table row holds the units' offsets past pixel d's box
      // column.
      const long long f0 = (long long)(v * kFlatVector) - (long long)run0;
      if (f0 >= 0 && f0 + kFlatVector <= kRun) {
        const u32 d = u32(f0) / u32(kK);
        const u32 at = boxes + d * u32(kSW * kC * kElementBytes);
        const tt_offsets o = tt_table[u32(f0) - d * u32(kK)];
        tt_vec x;
        x.x = tt_unit(at + (o.at[0] & 0xffffu)) | tt_unit(at + (o.at[0] >> 16)) << 16;
        x.y = tt_unit(at + (o.at[1] & 0xffffu)) | tt_unit(at + (o.at[1] >> 16)) << 16;
        x.z = tt_unit(at + (o.at[2] & 0xffffu)) | tt_unit(at + (o.at[2] >> 16)) << 16;
        x.w = tt_unit(at + (o.at[3] & 0xffffu)) | tt_unit(at + (o.at[3] >> 16)) << 16;
        tt_st_global(col + v * u64(kFlatVector * kElementBytes), x);
      } else {
        // Unit 0 of table row k is element k's own offset.
        for (u32 i = 0; i < kFlatVector; ++i) {
          const long long f = f0 + i;
          if (f < 0 || f >= (long long)kRun) continue;
          const u32 d = u32(f) / u32(kK);
          reinterpret_cast<tt_elem*>(col)[v * kFlatVector + i] = tt_elem(
              tt_unit(boxes + d * u32(kSW * kC * kElementBytes) +
                      (tt_table[u32(f) - d * u32(kK)].at[0] & 0xffffu)));
        }
      }
    }
  }
}

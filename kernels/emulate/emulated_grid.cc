#include "kernels/emulate/emulated_grid.h"

#include <ucontext.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "kernels/emulate/ptx_statement.h"

namespace tiletune {
namespace {

using host_abi::tt_emu_operand;
using host_abi::tt_emu_thread;

constexpr size_t kStackBytes = 256 * 1024;
constexpr int kWarpSize = 32;
// Shared addresses are offsets into the CTA's arena from here, so 0 is never one.
constexpr uint32_t kSharedBase = 0x400;
// Room for static __shared__ variables beyond the dynamic shared memory.
constexpr uint64_t kStaticSharedBytes = 4096;

using Transfer = std::function<void()>;

enum class ThreadState { kReady, kBlockBarrier, kWarpBarrier, kBarrierWait, kDone };

struct Fiber {
  ucontext_t context;
  std::unique_ptr<char[]> stack;
  tt_emu_thread thread;
  ThreadState state = ThreadState::kReady;
  uint32_t wait_barrier = 0;
  uint32_t wait_parity = 0;
  uint64_t static_cursor = 0;
  std::vector<Transfer> cp_open;
  std::deque<std::vector<Transfer>> cp_groups;
  std::vector<Transfer> bulk_open;
  std::deque<std::vector<Transfer>> bulk_groups;
};

struct Mbarrier {
  uint32_t count = 0;
  uint32_t pending = 0;
  int64_t tx = 0;
  uint32_t phase = 0;
  std::vector<std::pair<Transfer, int64_t>> transfers;  // land when a thread waits
};

int TypeBytes(const PtxStatement& s) {
  const std::string type = s.opcode.substr(s.opcode.rfind('.') + 1);
  if (absl::EndsWith(type, "8")) return 1;
  if (absl::EndsWith(type, "16")) return 2;
  if (absl::EndsWith(type, "32")) return 4;
  return 8;
}

int VectorCount(const PtxStatement& s) {
  if (s.HasModifier("v4")) return 4;
  if (s.HasModifier("v2")) return 2;
  return 1;
}

class Grid {
 public:
  explicit Grid(const GridLaunch& launch) : launch_(launch), fibers_(launch.threads) {
    for (Fiber& f : fibers_) f.stack.reset(new char[kStackBytes]);
    arena_.resize(static_cast<size_t>(launch.dynamic_shared_bytes + kStaticSharedBytes));
  }

  absl::Status Run();

  // The callbacks of the kernel library (through EmulatorHostApi).
  void Asm(const char* text, tt_emu_operand* operands, int outputs, int count);
  void Sync(int scope);
  void* DynamicShared() { return arena_.data(); }
  void* StaticShared(uint64_t bytes, uint64_t align);
  uint32_t SharedAddress(const void* pointer);

 private:
  absl::Status RunBlock(int64_t block);
  static void FiberMain(int hi, int lo, int index);
  bool Release();
  bool ReleaseBarrierWaits();
  bool ReleaseWarps();
  std::string DescribeWaits() const;
  void Yield(ThreadState state);
  void Fail(const std::string& message);
  Fiber& Self() { return fibers_[current_]; }

  // Operands.
  uint64_t In(const PtxOperand& o) const;
  void Out(int n, uint64_t value);
  bool CheckGlobal(uint64_t address, uint64_t bytes, const char* what);
  uint8_t* Shared(uint64_t address, uint64_t bytes, const char* what);
  Mbarrier* Barrier(uint64_t address, const char* what);
  void Drain(Mbarrier& barrier);
  static void Complete(Mbarrier& barrier);

  // Instructions.
  void Execute(const PtxStatement& s);
  void Load(const PtxStatement& s, bool shared);
  void Store(const PtxStatement& s, bool shared);
  void CpAsync(const PtxStatement& s);
  void WaitGroups(std::deque<std::vector<Transfer>>& groups, std::vector<Transfer>& open,
                  int64_t pending);
  void MbarrierOp(const PtxStatement& s);
  void BulkCopy(const PtxStatement& s);
  void TensorTile(const PtxStatement& s, bool load);
  void TensorIm2col(const PtxStatement& s);
  void AddToBarrier(uint64_t bar, int64_t bytes, Transfer transfer);
  const EmulatedTensorMap* Map(uint64_t address);

  const GridLaunch& launch_;
  std::vector<Fiber> fibers_;
  std::vector<uint8_t> arena_;
  uint64_t arena_used_ = 0;
  std::unordered_map<uint64_t, Mbarrier> barriers_;
  std::unordered_map<const char*, absl::StatusOr<PtxStatement>> parsed_;
  ucontext_t scheduler_;
  int current_ = 0;
  bool in_fiber_ = false;  // running a thread, not the scheduler
  int64_t block_ = 0;
  tt_emu_operand* operands_ = nullptr;
  int outputs_ = 0;
  int count_ = 0;
  absl::Status error_;
  std::mt19937_64 rng_;
};

thread_local Grid* running = nullptr;

// ---- Scheduling --------------------------------------------------------------------------

absl::Status Grid::Run() {
  Grid* outer = running;
  running = this;
  absl::Status status;
  for (int64_t block = 0; block < launch_.grid && status.ok(); ++block) status = RunBlock(block);
  running = outer;
  return status;
}

void Grid::FiberMain(int hi, int lo, int index) {
  Grid* grid = reinterpret_cast<Grid*>((static_cast<uintptr_t>(static_cast<uint32_t>(hi)) << 32) |
                                       static_cast<uint32_t>(lo));
  grid->launch_.entry(grid->launch_.args);
  // What is still in flight lands: the hardware completes a thread's copies.
  Fiber& self = grid->fibers_[index];
  grid->WaitGroups(self.cp_groups, self.cp_open, 0);
  grid->WaitGroups(self.bulk_groups, self.bulk_open, 0);
  self.state = ThreadState::kDone;
}  // returns to the scheduler through uc_link

absl::Status Grid::RunBlock(int64_t block) {
  block_ = block;
  rng_.seed(launch_.seed ^ (static_cast<uint64_t>(block) * 0x9e3779b97f4a7c15ull));
  for (uint8_t& b : arena_) b = static_cast<uint8_t>(rng_());
  arena_used_ = static_cast<uint64_t>(launch_.dynamic_shared_bytes);
  barriers_.clear();
  const uintptr_t self = reinterpret_cast<uintptr_t>(this);
  for (int t = 0; t < launch_.threads; ++t) {
    Fiber& f = fibers_[t];
    f = Fiber{ucontext_t{}, std::move(f.stack)};
    f.thread.thread_idx = {static_cast<unsigned>(t), 0, 0};
    f.thread.block_idx = {static_cast<unsigned>(block), 0, 0};
    f.thread.block_dim = {static_cast<unsigned>(launch_.threads), 1, 1};
    f.thread.grid_dim = {static_cast<unsigned>(launch_.grid), 1, 1};
    f.static_cursor = static_cast<uint64_t>(launch_.dynamic_shared_bytes);
    getcontext(&f.context);
    f.context.uc_stack.ss_sp = f.stack.get();
    f.context.uc_stack.ss_size = kStackBytes;
    f.context.uc_link = &scheduler_;
    makecontext(&f.context, reinterpret_cast<void (*)()>(&Grid::FiberMain), 3,
                static_cast<int>(self >> 32), static_cast<int>(self & 0xffffffffu), t);
  }
  std::vector<int> order(static_cast<size_t>(launch_.threads));
  std::iota(order.begin(), order.end(), 0);
  while (true) {
    std::shuffle(order.begin(), order.end(), rng_);
    for (int t : order) {
      if (fibers_[t].state != ThreadState::kReady) continue;
      current_ = t;
      *launch_.current = &fibers_[t].thread;
      in_fiber_ = true;
      swapcontext(&scheduler_, &fibers_[t].context);
      in_fiber_ = false;
      if (!error_.ok()) {
        return absl::Status(error_.code(), absl::StrCat("CTA ", block, ", thread ", t, ": ",
                                                        error_.message()));
      }
    }
    if (std::all_of(fibers_.begin(), fibers_.end(),
                    [](const Fiber& f) { return f.state == ThreadState::kDone; })) {
      return absl::OkStatus();
    }
    const bool released = Release();
    if (!error_.ok()) return absl::Status(error_.code(), absl::StrCat("CTA ", block, ": ", error_.message()));
    if (!released) {
      return absl::DeadlineExceededError(
          absl::StrCat("CTA ", block, " deadlocked: ", DescribeWaits()));
    }
  }
}

bool Grid::Release() {
  if (ReleaseBarrierWaits() || ReleaseWarps()) return true;
  bool any = false;
  for (const Fiber& f : fibers_) {
    if (f.state == ThreadState::kDone) continue;
    if (f.state != ThreadState::kBlockBarrier) return false;
    any = true;
  }
  for (Fiber& f : fibers_) {
    if (f.state == ThreadState::kBlockBarrier) f.state = ThreadState::kReady;
  }
  return any;
}

bool Grid::ReleaseBarrierWaits() {
  bool released = false;
  for (Fiber& f : fibers_) {
    if (f.state != ThreadState::kBarrierWait) continue;
    Mbarrier& bar = barriers_[f.wait_barrier];
    Drain(bar);
    if (bar.phase != f.wait_parity) {
      f.state = ThreadState::kReady;
      released = true;
    }
  }
  return released;
}

bool Grid::ReleaseWarps() {
  bool released = false;
  for (int first = 0; first < launch_.threads; first += kWarpSize) {
    const int last = std::min(first + kWarpSize, launch_.threads);
    bool all = true, any = false;
    for (int t = first; t < last; ++t) {
      const ThreadState s = fibers_[t].state;
      if (s == ThreadState::kDone) continue;
      any = any || s == ThreadState::kWarpBarrier;
      all = all && s == ThreadState::kWarpBarrier;
    }
    if (!all || !any) continue;
    for (int t = first; t < last; ++t) {
      if (fibers_[t].state == ThreadState::kWarpBarrier) fibers_[t].state = ThreadState::kReady;
    }
    released = true;
  }
  return released;
}

std::string Grid::DescribeWaits() const {
  std::vector<std::string> waits;
  for (size_t t = 0; t < fibers_.size() && waits.size() < 8; ++t) {
    const Fiber& f = fibers_[t];
    switch (f.state) {
      case ThreadState::kBlockBarrier: waits.push_back(absl::StrCat("thread ", t, " at __syncthreads")); break;
      case ThreadState::kWarpBarrier: waits.push_back(absl::StrCat("thread ", t, " at __syncwarp")); break;
      case ThreadState::kBarrierWait:
        waits.push_back(absl::StrCat("thread ", t, " waits on the mbarrier at shared 0x",
                                     absl::Hex(f.wait_barrier), " for parity ", f.wait_parity));
        break;
      default: break;
    }
  }
  return absl::StrJoin(waits, "; ");
}

void Grid::Yield(ThreadState state) {
  Fiber& f = Self();
  f.state = state;
  swapcontext(&f.context, &scheduler_);
}

void Grid::Sync(int scope) { Yield(scope == 0 ? ThreadState::kBlockBarrier : ThreadState::kWarpBarrier); }

void Grid::Fail(const std::string& message) {
  if (error_.ok()) error_ = absl::FailedPreconditionError(message);
  // A thread goes back to the scheduler, which stops at the error; the scheduler itself
  // (landing a copy on an mbarrier) only records it.
  if (in_fiber_) Yield(ThreadState::kReady);
}

// ---- Memory ------------------------------------------------------------------------------

void* Grid::StaticShared(uint64_t bytes, uint64_t align) {
  Fiber& f = Self();
  f.static_cursor = (f.static_cursor + align - 1) / align * align;
  if (f.static_cursor + bytes > arena_.size()) {
    Fail(absl::StrCat("static __shared__ variables take more than the emulator's ",
                      kStaticSharedBytes, " B"));
  }
  void* p = arena_.data() + f.static_cursor;
  f.static_cursor += bytes;
  arena_used_ = std::max(arena_used_, f.static_cursor);
  return p;
}

uint32_t Grid::SharedAddress(const void* pointer) {
  const uint8_t* p = static_cast<const uint8_t*>(pointer);
  if (p < arena_.data() || p > arena_.data() + arena_.size()) {
    Fail("__cvta_generic_to_shared of a pointer outside shared memory");
    return 0;
  }
  return kSharedBase + static_cast<uint32_t>(p - arena_.data());
}

bool Grid::CheckGlobal(uint64_t address, uint64_t bytes, const char* what) {
  for (const HostRange& r : launch_.buffers) {
    if (address >= r.begin && address + bytes <= r.end) return true;
  }
  std::vector<std::string> ranges;
  for (const HostRange& r : launch_.buffers) {
    ranges.push_back(absl::StrCat(r.name, " [0x", absl::Hex(r.begin), ", 0x", absl::Hex(r.end), ")"));
  }
  Fail(absl::StrCat(what, " of ", bytes, " B at 0x", absl::Hex(address),
                    " is outside every buffer: ", absl::StrJoin(ranges, ", ")));
  return false;
}

uint8_t* Grid::Shared(uint64_t address, uint64_t bytes, const char* what) {
  if (address < kSharedBase || address - kSharedBase + bytes > arena_used_) {
    Fail(absl::StrCat(what, " of ", bytes, " B at shared 0x", absl::Hex(address),
                      " is outside the CTA's ", arena_used_, " B of shared memory"));
    return nullptr;
  }
  return arena_.data() + (address - kSharedBase);
}

uint64_t Grid::In(const PtxOperand& o) const {
  if (o.kind == PtxOperand::Kind::kImmediate) return static_cast<uint64_t>(o.immediate);
  const tt_emu_operand& op = operands_[o.registers[0]];
  const uint64_t mask = op.bytes >= 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * op.bytes)) - 1;
  return op.in & mask;
}

void Grid::Out(int n, uint64_t value) {
  if (n >= outputs_) return Fail(absl::StrCat("PTX writes operand %", n, ", an input"));
  std::memcpy(operands_[n].out, &value, static_cast<size_t>(std::min(operands_[n].bytes, 8)));
}

Mbarrier* Grid::Barrier(uint64_t address, const char* what) {
  auto it = barriers_.find(address);
  if (it == barriers_.end()) {
    Fail(absl::StrCat(what, " on shared 0x", absl::Hex(address), ", which is no initialised mbarrier"));
    return nullptr;
  }
  return &it->second;
}

void Grid::Complete(Mbarrier& barrier) {
  if (barrier.pending == 0 && barrier.tx == 0) {
    barrier.phase ^= 1;
    barrier.pending = barrier.count;
  }
}

void Grid::Drain(Mbarrier& barrier) {
  std::vector<std::pair<Transfer, int64_t>> transfers;
  transfers.swap(barrier.transfers);
  for (auto& [transfer, bytes] : transfers) {
    transfer();
    barrier.tx -= bytes;
    Complete(barrier);
  }
}

void Grid::WaitGroups(std::deque<std::vector<Transfer>>& groups, std::vector<Transfer>& open,
                      int64_t pending) {
  if (pending == 0 && !open.empty()) {  // a wait for everything takes the uncommitted ones too
    groups.push_back(std::move(open));
    open.clear();
  }
  while (static_cast<int64_t>(groups.size()) > pending) {
    for (Transfer& t : groups.front()) t();
    groups.pop_front();
  }
}

// ---- Instructions ------------------------------------------------------------------------

void Grid::Asm(const char* text, tt_emu_operand* operands, int outputs, int count) {
  auto it = parsed_.find(text);
  if (it == parsed_.end()) it = parsed_.emplace(text, ParsePtxStatement(text)).first;
  if (!it->second.ok()) return Fail(std::string(it->second.status().message()));
  operands_ = operands;
  outputs_ = outputs;
  count_ = count;
  const PtxStatement& s = *it->second;
  for (const PtxOperand& o : s.operands) {
    for (const std::vector<int>* list : {&o.registers, &o.coordinates}) {
      for (int r : *list) {
        if (r >= count) return Fail(absl::StrCat("PTX '", text, "' names operand %", r, " of ", count));
      }
    }
  }
  Execute(s);
}

void Grid::Execute(const PtxStatement& s) {
  const std::string& op = s.opcode;
  if (s.wait_loop) return MbarrierOp(s);
  if (absl::StartsWith(op, "fence.")) return;
  if (absl::StartsWith(op, "createpolicy.")) return Out(0, 0x1c0ffee0ull);
  if (absl::StartsWith(op, "mov.")) {
    const std::string& reg = s.operands[1].special;
    return Out(0, reg == "nsmid" ? static_cast<uint64_t>(launch_.sm_count) : 0);
  }
  if (absl::StartsWith(op, "ld.global")) return Load(s, false);
  if (absl::StartsWith(op, "ld.shared")) return Load(s, true);
  if (absl::StartsWith(op, "st.global")) return Store(s, false);
  if (absl::StartsWith(op, "st.shared")) return Store(s, true);
  if (op == "cvt.f32.f16") {
    const float f = HalfToFloat(static_cast<uint16_t>(In(s.operands[1])));
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    return Out(s.operands[0].registers[0], bits);
  }
  if (op == "cvt.rn.f16.f32") {
    const uint32_t bits = static_cast<uint32_t>(In(s.operands[1]));
    float f;
    std::memcpy(&f, &bits, 4);
    return Out(s.operands[0].registers[0], FloatToHalf(f));
  }
  Fiber& self = Self();
  if (op == "cp.async.commit_group") {
    self.cp_groups.push_back(std::move(self.cp_open));
    self.cp_open.clear();
    return;
  }
  if (op == "cp.async.wait_group") return WaitGroups(self.cp_groups, self.cp_open, static_cast<int64_t>(In(s.operands[0])));
  if (op == "cp.async.wait_all") return WaitGroups(self.cp_groups, self.cp_open, 0);
  if (op == "cp.async.bulk.commit_group") {
    self.bulk_groups.push_back(std::move(self.bulk_open));
    self.bulk_open.clear();
    return;
  }
  if (absl::StartsWith(op, "cp.async.bulk.wait_group")) {
    return WaitGroups(self.bulk_groups, self.bulk_open, static_cast<int64_t>(In(s.operands[0])));
  }
  if (absl::StartsWith(op, "cp.async.bulk.prefetch")) {
    CheckGlobal(In(s.operands[0]), In(s.operands[1]), "cp.async.bulk.prefetch");
    return;
  }
  if (absl::StartsWith(op, "cp.async.bulk.tensor")) {
    if (s.HasModifier("im2col")) return TensorIm2col(s);
    return TensorTile(s, absl::StrContains(op, ".shared::cluster.global"));
  }
  if (absl::StartsWith(op, "cp.async.bulk.")) return BulkCopy(s);
  if (absl::StartsWith(op, "cp.async.")) return CpAsync(s);
  if (absl::StartsWith(op, "mbarrier.")) return MbarrierOp(s);
  Fail(absl::StrCat("the host emulator does not run PTX '", op, "'"));
}

void Grid::Load(const PtxStatement& s, bool shared) {
  const int bytes = TypeBytes(s);
  const int n = VectorCount(s);
  const uint64_t address = In(s.operands[1]);
  const uint8_t* from = nullptr;
  if (shared) {
    from = Shared(address, static_cast<uint64_t>(bytes * n), "ld.shared");
  } else if (CheckGlobal(address, static_cast<uint64_t>(bytes * n), "ld.global")) {
    from = reinterpret_cast<const uint8_t*>(address);
  }
  if (from == nullptr) return;
  for (int i = 0; i < n; ++i) {
    uint64_t v = 0;
    std::memcpy(&v, from + i * bytes, static_cast<size_t>(bytes));
    Out(s.operands[0].registers[static_cast<size_t>(i)], v);
  }
}

void Grid::Store(const PtxStatement& s, bool shared) {
  const int bytes = TypeBytes(s);
  const int n = VectorCount(s);
  const uint64_t address = In(s.operands[0]);
  uint8_t* to = nullptr;
  if (shared) {
    to = Shared(address, static_cast<uint64_t>(bytes * n), "st.shared");
  } else if (CheckGlobal(address, static_cast<uint64_t>(bytes * n), "st.global")) {
    to = reinterpret_cast<uint8_t*>(address);
  }
  if (to == nullptr) return;
  const PtxOperand& values = s.operands[1];
  for (int i = 0; i < n; ++i) {
    const uint64_t v = operands_[values.registers[static_cast<size_t>(i)]].in;
    std::memcpy(to + i * bytes, &v, static_cast<size_t>(bytes));
  }
}

void Grid::CpAsync(const PtxStatement& s) {
  // [dst], [src], cp-size[, src-size] (no src-size with an L2 hint: the last is the policy).
  const uint64_t dst = In(s.operands[0]);
  const uint64_t src = In(s.operands[1]);
  const uint64_t size = In(s.operands[2]);
  const uint64_t valid = !s.HasModifier("L2::cache_hint") && s.operands.size() > 3
                             ? In(s.operands[3])
                             : size;
  uint8_t* to = Shared(dst, size, "cp.async");
  if (to == nullptr || (valid > 0 && !CheckGlobal(src, valid, "cp.async"))) return;
  Self().cp_open.push_back([to, src, size, valid]() {
    std::memcpy(to, reinterpret_cast<const void*>(src), valid);
    std::memset(to + valid, 0, size - valid);
  });
}

void Grid::MbarrierOp(const PtxStatement& s) {
  const std::string& op = s.opcode;
  if (absl::StartsWith(op, "mbarrier.init")) {
    const uint64_t address = In(s.operands[0]);
    if (Shared(address, 8, "mbarrier.init") == nullptr) return;
    const uint32_t count = static_cast<uint32_t>(In(s.operands[1]));
    barriers_[address] = Mbarrier{count, count, 0, 0, {}};
    return;
  }
  if (s.wait_loop) {
    const uint64_t address = In(s.operands[0]);
    Mbarrier* bar = Barrier(address, "mbarrier.try_wait");
    if (bar == nullptr) return;
    Drain(*bar);
    const uint32_t parity = static_cast<uint32_t>(In(s.operands[1])) & 1;
    if (bar->phase != parity) return;
    Fiber& f = Self();
    f.wait_barrier = static_cast<uint32_t>(address);
    f.wait_parity = parity;
    return Yield(ThreadState::kBarrierWait);
  }
  if (absl::StartsWith(op, "mbarrier.arrive")) {
    // `_, [bar][, tx bytes]`
    Mbarrier* bar = Barrier(In(s.operands[1]), op.c_str());
    if (bar == nullptr) return;
    if (absl::StrContains(op, "expect_tx")) bar->tx += static_cast<int64_t>(In(s.operands[2]));
    if (bar->pending == 0) return Fail("mbarrier.arrive on a barrier with no arrivals left");
    --bar->pending;
    return Complete(*bar);
  }
  Fail(absl::StrCat("the host emulator does not run PTX '", op, "'"));
}

void Grid::AddToBarrier(uint64_t bar, int64_t bytes, Transfer transfer) {
  Mbarrier* barrier = Barrier(bar, "a copy completing");
  if (barrier != nullptr) barrier->transfers.emplace_back(std::move(transfer), bytes);
}

void Grid::BulkCopy(const PtxStatement& s) {
  const uint64_t bytes = In(s.operands[2]);
  if (absl::StrContains(s.opcode, ".shared::cluster.global")) {  // load: [smem], [gmem], n, [bar]
    uint8_t* to = Shared(In(s.operands[0]), bytes, "cp.async.bulk load");
    const uint64_t src = In(s.operands[1]);
    if (to == nullptr || !CheckGlobal(src, bytes, "cp.async.bulk load")) return;
    return AddToBarrier(In(s.operands[3]), static_cast<int64_t>(bytes), [to, src, bytes]() {
      std::memcpy(to, reinterpret_cast<const void*>(src), bytes);
    });
  }
  // store: [gmem], [smem], n
  const uint64_t dst = In(s.operands[0]);
  const uint8_t* from = Shared(In(s.operands[1]), bytes, "cp.async.bulk store");
  if (from == nullptr || !CheckGlobal(dst, bytes, "cp.async.bulk store")) return;
  Self().bulk_open.push_back([dst, from, bytes]() {
    std::memcpy(reinterpret_cast<void*>(dst), from, bytes);
  });
}

const EmulatedTensorMap* Grid::Map(uint64_t address) {
  const EmulatedTensorMap* map = reinterpret_cast<const EmulatedTensorMap*>(address);
  if (map == nullptr || map->magic != EmulatedTensorMap::kMagic) {
    Fail("a tensor copy whose map the emulator did not encode");
    return nullptr;
  }
  return map;
}

// A tiled tensor copy: every element of the box (traversal strides apply), out-of-bounds
// elements read as zero and are not written.
void Grid::TensorTile(const PtxStatement& s, bool load) {
  const PtxOperand& tensor = s.operands[load ? 1 : 0];
  const EmulatedTensorMap* map = Map(In(PtxOperand{PtxOperand::Kind::kRegister, tensor.registers}));
  if (map == nullptr) return;
  const int rank = static_cast<int>(map->rank);
  if (static_cast<int>(tensor.coordinates.size()) != rank) {
    return Fail(absl::StrCat("a ", tensor.coordinates.size(), "-D tensor copy of a rank-", rank, " map"));
  }
  std::vector<int64_t> start(rank), counts(rank);
  int64_t elements = 1;
  for (int d = 0; d < rank; ++d) {
    start[d] = static_cast<int32_t>(In(PtxOperand{PtxOperand::Kind::kRegister, {tensor.coordinates[d]}}));
    const int64_t stride = std::max<int64_t>(1, map->element_strides[d]);
    counts[d] = (map->box[d] + stride - 1) / stride;
    elements *= counts[d];
  }
  const int64_t eb = map->element_bytes;
  uint8_t* smem = Shared(In(s.operands[load ? 0 : 1]), static_cast<uint64_t>(elements * eb),
                         load ? "tensor load" : "tensor store");
  if (smem == nullptr) return;
  // Checked now: every in-bounds element's global address.
  Grid* grid = this;
  EmulatedTensorMap m = *map;
  Transfer transfer = [grid, m, start, counts, elements, eb, smem, load]() {
    std::vector<int64_t> index(start.size(), 0);
    for (int64_t e = 0; e < elements; ++e) {
      int64_t rest = e;
      bool inside = true;
      uint64_t address = m.base;
      for (size_t d = 0; d < start.size(); ++d) {
        index[d] = rest % counts[d];
        rest /= counts[d];
        const int64_t x = start[d] + index[d] * std::max<int64_t>(1, m.element_strides[d]);
        inside = inside && x >= 0 && x < static_cast<int64_t>(m.dims[d]);
        address += static_cast<uint64_t>(x) * (d == 0 ? eb : m.strides_bytes[d - 1]);
      }
      uint8_t* at = smem + e * eb;
      if (!inside) {
        if (load) std::memset(at, 0, static_cast<size_t>(eb));
        continue;
      }
      if (!grid->CheckGlobal(address, static_cast<uint64_t>(eb), load ? "tensor load" : "tensor store")) return;
      if (load) {
        std::memcpy(at, reinterpret_cast<const void*>(address), static_cast<size_t>(eb));
      } else {
        std::memcpy(reinterpret_cast<void*>(address), at, static_cast<size_t>(eb));
      }
    }
  };
  if (load) return AddToBarrier(In(s.operands[2]), elements * eb, std::move(transfer));
  Self().bulk_open.push_back(std::move(transfer));
}

// An im2col-mode load: pixels_per_column pixels from (w, h, n), stepping w by its traversal
// stride within the bounding box [lower, dim - 1 + upper], then h, then n; each pixel's
// channels_per_pixel channels from c, at the pixel shifted by the tap offsets. Pixels and
// channels outside the image read as zero.
void Grid::TensorIm2col(const PtxStatement& s) {
  const PtxOperand& tensor = s.operands[1];
  const EmulatedTensorMap* map = Map(In(PtxOperand{PtxOperand::Kind::kRegister, tensor.registers}));
  if (map == nullptr) return;
  if (map->rank != 4 || tensor.coordinates.size() != 4 || s.operands[3].registers.size() != 2) {
    return Fail("an im2col tensor copy that is not rank 4 with two offsets");
  }
  auto coordinate = [&](int i) {
    return static_cast<int64_t>(static_cast<int32_t>(
        In(PtxOperand{PtxOperand::Kind::kRegister, {tensor.coordinates[static_cast<size_t>(i)]}})));
  };
  const int64_t c0 = coordinate(0), w0 = coordinate(1), h0 = coordinate(2), n0 = coordinate(3);
  const int64_t off_w = static_cast<uint16_t>(In(PtxOperand{PtxOperand::Kind::kRegister, {s.operands[3].registers[0]}}));
  const int64_t off_h = static_cast<uint16_t>(In(PtxOperand{PtxOperand::Kind::kRegister, {s.operands[3].registers[1]}}));
  const EmulatedTensorMap m = *map;
  const int64_t eb = m.element_bytes;
  const int64_t bytes = int64_t{m.pixels_per_column} * m.channels_per_pixel * eb;
  uint8_t* smem = Shared(In(s.operands[0]), static_cast<uint64_t>(bytes), "im2col tensor load");
  if (smem == nullptr) return;
  Grid* grid = this;
  AddToBarrier(In(s.operands[2]), bytes, [grid, m, c0, w0, h0, n0, off_w, off_h, eb, smem]() {
    const int64_t sw = std::max<int64_t>(1, m.element_strides[1]);
    const int64_t sh = std::max<int64_t>(1, m.element_strides[2]);
    const int64_t last_w = static_cast<int64_t>(m.dims[1]) - 1 + m.upper_corner[0];
    const int64_t last_h = static_cast<int64_t>(m.dims[2]) - 1 + m.upper_corner[1];
    int64_t w = w0, h = h0, n = n0;
    uint8_t* at = smem;
    for (int p = 0; p < m.pixels_per_column; ++p) {
      const int64_t x = w + off_w, y = h + off_h;
      for (int ch = 0; ch < m.channels_per_pixel; ++ch, at += eb) {
        const int64_t c = c0 + ch;
        const bool inside = x >= 0 && x < static_cast<int64_t>(m.dims[1]) && y >= 0 &&
                            y < static_cast<int64_t>(m.dims[2]) && n >= 0 &&
                            n < static_cast<int64_t>(m.dims[3]) && c >= 0 &&
                            c < static_cast<int64_t>(m.dims[0]);
        if (!inside) {
          std::memset(at, 0, static_cast<size_t>(eb));
          continue;
        }
        const uint64_t address = m.base + static_cast<uint64_t>(c * eb) +
                                 static_cast<uint64_t>(x) * m.strides_bytes[0] +
                                 static_cast<uint64_t>(y) * m.strides_bytes[1] +
                                 static_cast<uint64_t>(n) * m.strides_bytes[2];
        if (!grid->CheckGlobal(address, static_cast<uint64_t>(eb), "im2col tensor load")) return;
        std::memcpy(at, reinterpret_cast<const void*>(address), static_cast<size_t>(eb));
      }
      w += sw;
      if (w > last_w) {
        w = m.lower_corner[0];
        h += sh;
        if (h > last_h) {
          h = m.lower_corner[1];
          ++n;
        }
      }
    }
  });
}

// ---- Callbacks ---------------------------------------------------------------------------

void HostRunAsm(const char* text, tt_emu_operand* operands, int outputs, int count) {
  running->Asm(text, operands, outputs, count);
}
void HostSync(int scope) { running->Sync(scope); }
void* HostDynamicShared() { return running->DynamicShared(); }
void* HostStaticShared(unsigned long long bytes, unsigned long long align) {
  return running->StaticShared(bytes, align);
}
unsigned HostSharedAddress(const void* pointer) { return running->SharedAddress(pointer); }

}  // namespace

absl::Status RunGrid(const GridLaunch& launch) {
  if (launch.entry == nullptr || launch.current == nullptr || launch.threads < 1 ||
      launch.threads > 1024 || launch.grid < 1) {
    return absl::InvalidArgumentError(absl::StrCat("an emulated launch of ", launch.grid, " CTAs of ",
                                                   launch.threads, " threads"));
  }
  Grid grid(launch);
  return grid.Run();
}

const host_abi::tt_emu_host& EmulatorHostApi() {
  static const host_abi::tt_emu_host api = {&HostRunAsm, &HostSync, &HostDynamicShared,
                                            &HostStaticShared, &HostSharedAddress};
  return api;
}

float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = mantissa != 0 ? 0x7fffffffu : sign | 0x7f800000u;  // NaNs become the canonical one
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {  // subnormal: normalise
    int e = -1;
    do {
      ++e;
      mantissa <<= 1;
    } while ((mantissa & 0x400u) == 0);
    bits = sign | (static_cast<uint32_t>(112 - e) << 23) | ((mantissa & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t FloatToHalf(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t abs = bits & 0x7fffffffu;
  if (abs > 0x7f800000u) return 0x7fffu;  // the canonical NaN
  if (abs >= 0x477ff000u) return sign | 0x7c00u;  // rounds to infinity
  if (abs < 0x38800000u) {  // a subnormal half (or zero): round at 2^-24
    const float magnitude = std::fabs(f);
    const float scaled = magnitude * 16777216.0f;  // exact: a power of two
    const float rounded = std::nearbyint(scaled);  // ties to even in the default mode
    return sign | static_cast<uint16_t>(rounded);
  }
  const uint32_t exponent = (abs >> 23) - 112;
  uint32_t half = (exponent << 10) | ((abs >> 13) & 0x3ffu);
  const uint32_t rest = abs & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
  return sign | static_cast<uint16_t>(half);
}

}  // namespace tiletune

#include "kernels/emulate/emulated_grid.h"

#include <sys/mman.h>
#include <ucontext.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
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
constexpr size_t kGuardPage = 4096;
constexpr int kWarpSize = 32;
// Shared addresses are offsets into the CTA's arena from here, so 0 is never one.
constexpr uint32_t kSharedBase = 0x400;
// The arena: static __shared__ variables first (up to this many bytes), then the dynamic
// shared memory, as CUDA lays them out.
constexpr uint64_t kStaticSharedBytes = 4096;

// A fiber's stack, with an inaccessible page below it so an overflow faults at once.
class Stack {
 public:
  Stack() {
    void* p = mmap(nullptr, kStackBytes + kGuardPage, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return;
    mprotect(p, kGuardPage, PROT_NONE);
    base_ = static_cast<char*>(p);
  }
  ~Stack() {
    if (base_ != nullptr) munmap(base_, kStackBytes + kGuardPage);
  }
  Stack(const Stack&) = delete;
  Stack& operator=(const Stack&) = delete;
  char* bottom() const { return base_ == nullptr ? nullptr : base_ + kGuardPage; }

 private:
  char* base_ = nullptr;
};

using Transfer = std::function<void()>;

enum class ThreadState { kReady, kBlockBarrier, kWarpBarrier, kBarrierWait, kDone };

// What one CUDA thread of the running CTA holds; reset for each CTA.
struct Fiber {
  ucontext_t context;
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
  if (absl::EndsWith(type, "128")) return 16;
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
  explicit Grid(const GridLaunch& launch)
      : launch_(launch), fibers_(launch.threads), stacks_(launch.threads) {
    arena_.resize(static_cast<size_t>(kStaticSharedBytes + launch.dynamic_shared_bytes));
  }

  absl::Status Run();

  // The callbacks of the kernel library (through EmulatorHostApi).
  void Asm(const char* text, tt_emu_operand* operands, int outputs, int count);
  void Sync(host_abi::tt_emu_scope scope);
  void* DynamicShared() { return arena_.data() + kStaticSharedBytes; }
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

  // Operands: an operand's value, and operand %n's.
  uint64_t In(const PtxOperand& o);
  uint64_t InRegister(int n);
  void Out(int n, uint64_t value);
  bool CheckGlobal(uint64_t address, uint64_t bytes, const char* what);
  bool CheckAligned(uint64_t address, uint64_t align, const char* what);
  uint8_t* Shared(uint64_t address, uint64_t bytes, const char* what);
  Mbarrier* Barrier(uint64_t address, const char* what);
  void Drain(Mbarrier& barrier);
  static void Complete(Mbarrier& barrier);

  // Instructions.
  void Execute(const PtxStatement& s);
  void Load(const PtxStatement& s, bool shared);
  void Store(const PtxStatement& s, bool shared);
  void CpAsync(const PtxStatement& s);
  static void WaitGroups(std::deque<std::vector<Transfer>>& groups, int64_t pending);
  void CheckNothingInFlight(Fiber& self);
  void MbarrierOp(const PtxStatement& s);
  void BulkCopy(const PtxStatement& s);
  enum class Direction { kLoad, kStore };
  void TensorTile(const PtxStatement& s, Direction direction);
  void TensorIm2col(const PtxStatement& s);
  void AddToBarrier(uint64_t bar, int64_t bytes, Transfer transfer);
  const EmulatedTensorMap* Map(uint64_t address);

  const GridLaunch& launch_;
  std::vector<Fiber> fibers_;
  std::vector<Stack> stacks_;
  std::vector<uint8_t> arena_;
  uint64_t static_used_ = 0;  // bytes of the static area the CTA's threads declared
  std::unordered_map<uint64_t, Mbarrier> barriers_;
  std::unordered_map<const char*, absl::StatusOr<PtxStatement>> parsed_;
  ucontext_t scheduler_;
  int current_ = 0;
  bool in_fiber_ = false;  // running a thread, not the scheduler
  int64_t block_ = 0;
  tt_emu_operand* operands_ = nullptr;
  int outputs_ = 0;
  int count_ = 0;
  const char* text_ = "";  // the running asm statement, for messages
  absl::Status error_;
  std::mt19937_64 rng_;
};

thread_local Grid* running = nullptr;

// ---- Scheduling --------------------------------------------------------------------------

absl::Status Grid::Run() {
  for (const Stack& stack : stacks_) {
    if (stack.bottom() == nullptr)
      return absl::ResourceExhaustedError("no memory for fiber stacks");
  }
  Grid* outer = running;
  running = this;
  std::vector<int64_t> order(static_cast<size_t>(launch_.grid));
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(launch_.seed);
  std::shuffle(order.begin(), order.end(), rng);
  absl::Status status;
  for (size_t i = 0; i < order.size() && status.ok(); ++i) status = RunBlock(order[i]);
  running = outer;
  return status;
}

void Grid::FiberMain(int hi, int lo, int index) {
  Grid* grid = reinterpret_cast<Grid*>((static_cast<uintptr_t>(static_cast<uint32_t>(hi)) << 32) |
                                       static_cast<uint32_t>(lo));
  grid->launch_.entry(grid->launch_.args);
  Fiber& self = grid->fibers_[index];
  grid->CheckNothingInFlight(self);
  self.state = ThreadState::kDone;
}  // returns to the scheduler through uc_link

// A thread that exits with copies it never waited for leaves them touching shared memory
// of a CTA that is gone.
void Grid::CheckNothingInFlight(Fiber& self) {
  size_t copies = self.cp_open.size() + self.bulk_open.size();
  for (const auto* groups : {&self.cp_groups, &self.bulk_groups}) {
    for (const std::vector<Transfer>& group : *groups) copies += group.size();
  }
  if (copies > 0) {
    Fail(absl::StrCat("the thread exited with ", copies,
                      " asynchronous copies it never waited for (cp.async.wait_group, "
                      "cp.async.bulk.wait_group)"));
  }
}

absl::Status Grid::RunBlock(int64_t block) {
  block_ = block;
  rng_.seed(launch_.seed ^ (static_cast<uint64_t>(block) * 0x9e3779b97f4a7c15ull));
  for (uint8_t& b : arena_) b = static_cast<uint8_t>(rng_());
  static_used_ = 0;
  barriers_.clear();
  const uintptr_t self = reinterpret_cast<uintptr_t>(this);
  for (int t = 0; t < launch_.threads; ++t) {
    Fiber& f = fibers_[t];
    f = Fiber{};
    f.thread.thread_idx = {static_cast<unsigned>(t), 0, 0};
    f.thread.block_idx = {static_cast<unsigned>(block), 0, 0};
    f.thread.block_dim = {static_cast<unsigned>(launch_.threads), 1, 1};
    f.thread.grid_dim = {static_cast<unsigned>(launch_.grid), 1, 1};
    getcontext(&f.context);
    f.context.uc_stack.ss_sp = stacks_[t].bottom();
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
        return absl::Status(error_.code(),
                            absl::StrCat("CTA ", block, ", thread ", t, ": ", error_.message()));
      }
    }
    if (std::all_of(fibers_.begin(), fibers_.end(),
                    [](const Fiber& f) { return f.state == ThreadState::kDone; })) {
      for (const auto& [address, barrier] : barriers_) {
        if (!barrier.transfers.empty()) {
          return absl::FailedPreconditionError(absl::StrCat(
              "CTA ", block, " ended with ", barrier.transfers.size(),
              " copies to the mbarrier at shared 0x", absl::Hex(address), " nobody waited for"));
        }
      }
      return absl::OkStatus();
    }
    const bool released = Release();
    if (!error_.ok())
      return absl::Status(error_.code(), absl::StrCat("CTA ", block, ": ", error_.message()));
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
      case ThreadState::kBlockBarrier:
        waits.push_back(absl::StrCat("thread ", t, " at __syncthreads"));
        break;
      case ThreadState::kWarpBarrier:
        waits.push_back(absl::StrCat("thread ", t, " at __syncwarp"));
        break;
      case ThreadState::kBarrierWait:
        waits.push_back(absl::StrCat("thread ", t, " waits on the mbarrier at shared 0x",
                                     absl::Hex(f.wait_barrier), " for parity ", f.wait_parity));
        break;
      default:
        break;
    }
  }
  return absl::StrJoin(waits, "; ");
}

void Grid::Yield(ThreadState state) {
  Fiber& f = Self();
  f.state = state;
  swapcontext(&f.context, &scheduler_);
}

void Grid::Sync(host_abi::tt_emu_scope scope) {
  Yield(scope == host_abi::tt_emu_block ? ThreadState::kBlockBarrier : ThreadState::kWarpBarrier);
}

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
  if (f.static_cursor + bytes > kStaticSharedBytes) {
    Fail(absl::StrCat("static __shared__ variables take more than the emulator's ",
                      kStaticSharedBytes, " B"));
    return arena_.data();
  }
  void* p = arena_.data() + f.static_cursor;
  f.static_cursor += bytes;
  static_used_ = std::max(static_used_, f.static_cursor);
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

bool Grid::CheckAligned(uint64_t address, uint64_t align, const char* what) {
  if (align <= 1 || address % align == 0) return true;
  Fail(absl::StrCat(what, " at 0x", absl::Hex(address), ", which is not ", align, "-byte aligned"));
  return false;
}

bool Grid::CheckGlobal(uint64_t address, uint64_t bytes, const char* what) {
  for (const HostRange& r : launch_.buffers) {
    if (address >= r.begin && address + bytes <= r.end) return true;
  }
  std::vector<std::string> ranges;
  for (const HostRange& r : launch_.buffers) {
    ranges.push_back(
        absl::StrCat(r.name, " [0x", absl::Hex(r.begin), ", 0x", absl::Hex(r.end), ")"));
  }
  Fail(absl::StrCat(what, " of ", bytes, " B at 0x", absl::Hex(address),
                    " is outside every buffer: ", absl::StrJoin(ranges, ", ")));
  return false;
}

// Shared memory in use: the static variables declared, and the dynamic shared memory.
uint8_t* Grid::Shared(uint64_t address, uint64_t bytes, const char* what) {
  const uint64_t offset = address - kSharedBase;
  const uint64_t dynamic_end =
      kStaticSharedBytes + static_cast<uint64_t>(launch_.dynamic_shared_bytes);
  const bool in_static = address >= kSharedBase && offset + bytes <= static_used_;
  const bool in_dynamic =
      address >= kSharedBase && offset >= kStaticSharedBytes && offset + bytes <= dynamic_end;
  if (!in_static && !in_dynamic) {
    Fail(absl::StrCat(what, " of ", bytes, " B at shared 0x", absl::Hex(address),
                      " is outside the CTA's shared memory (", static_used_, " B static, ",
                      launch_.dynamic_shared_bytes, " B dynamic)"));
    return nullptr;
  }
  return arena_.data() + offset;
}

uint64_t Grid::In(const PtxOperand& o) {
  if (o.kind == PtxOperand::Kind::kImmediate) return static_cast<uint64_t>(o.immediate);
  if (o.registers.empty()) {
    Fail(absl::StrCat("PTX '", text_, "' reads an operand that holds no value"));
    return 0;
  }
  return InRegister(o.registers[0]);
}

uint64_t Grid::InRegister(int n) {
  if (n < outputs_) {
    Fail(absl::StrCat("PTX '", text_, "' reads %", n, ", an output"));
    return 0;
  }
  const tt_emu_operand& op = operands_[n];
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
    Fail(absl::StrCat(what, " on shared 0x", absl::Hex(address),
                      ", which is no initialised mbarrier"));
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

// Lands the oldest committed groups until at most `pending` remain (a wait_group waits for
// committed groups only).
void Grid::WaitGroups(std::deque<std::vector<Transfer>>& groups, int64_t pending) {
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
  text_ = text;
  const PtxStatement& s = *it->second;
  for (const PtxOperand& o : s.operands) {
    for (const std::vector<int>* list : {&o.registers, &o.coordinates}) {
      for (int r : *list) {
        if (r >= count)
          return Fail(absl::StrCat("PTX '", text, "' names operand %", r, " of ", count));
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
  if (absl::StartsWith(op, "mov.") && s.operands.size() == 2 &&
      s.operands[1].kind == PtxOperand::Kind::kSpecial) {
    const std::string& reg = s.operands[1].special;
    if (reg == "nsmid") return Out(0, static_cast<uint64_t>(launch_.sm_count));
    if (reg == "tid.y" || reg == "tid.z") return Out(0, 0);  // tile kernels launch 1-D blocks
  }
  // A register copy (a value the compiler is to keep opaque).
  if ((op == "mov.b64" || op == "mov.b32") && s.operands.size() == 2 &&
      s.operands[0].kind == PtxOperand::Kind::kRegister &&
      s.operands[1].kind == PtxOperand::Kind::kRegister) {
    return Out(s.operands[0].registers[0], In(s.operands[1]));
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
  if (op == "cp.async.wait_group") {
    return WaitGroups(self.cp_groups, static_cast<int64_t>(In(s.operands[0])));
  }
  if (op == "cp.async.wait_all") {  // commits, then waits for everything
    self.cp_groups.push_back(std::move(self.cp_open));
    self.cp_open.clear();
    return WaitGroups(self.cp_groups, 0);
  }
  if (op == "cp.async.bulk.commit_group") {
    self.bulk_groups.push_back(std::move(self.bulk_open));
    self.bulk_open.clear();
    return;
  }
  if (absl::StartsWith(op, "cp.async.bulk.wait_group")) {
    return WaitGroups(self.bulk_groups, static_cast<int64_t>(In(s.operands[0])));
  }
  if (absl::StartsWith(op, "cp.async.bulk.prefetch")) {
    CheckGlobal(In(s.operands[0]), In(s.operands[1]), "cp.async.bulk.prefetch");
    return;
  }
  if (absl::StartsWith(op, "cp.async.bulk.tensor")) {
    if (s.HasModifier("im2col")) return TensorIm2col(s);
    return TensorTile(
        s, absl::StrContains(op, ".shared::cluster.global") ? Direction::kLoad : Direction::kStore);
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
  if (!CheckAligned(address, static_cast<uint64_t>(bytes * n), s.opcode.c_str())) return;
  const uint8_t* from = nullptr;
  if (shared) {
    from = Shared(address, static_cast<uint64_t>(bytes * n), "ld.shared");
  } else if (CheckGlobal(address, static_cast<uint64_t>(bytes * n), "ld.global")) {
    from = reinterpret_cast<const uint8_t*>(address);
  }
  if (from == nullptr) return;
  if (static_cast<int>(s.operands[0].registers.size()) != n) {
    return Fail(absl::StrCat("PTX '", text_, "' loads ", n, " values into ",
                             s.operands[0].registers.size(), " operands"));
  }
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
  if (!CheckAligned(address, static_cast<uint64_t>(bytes * n), s.opcode.c_str())) return;
  uint8_t* to = nullptr;
  if (shared) {
    to = Shared(address, static_cast<uint64_t>(bytes * n), "st.shared");
  } else if (CheckGlobal(address, static_cast<uint64_t>(bytes * n), "st.global")) {
    to = reinterpret_cast<uint8_t*>(address);
  }
  if (to == nullptr) return;
  const PtxOperand& values = s.operands[1];
  if (static_cast<int>(values.registers.size()) != n) {
    return Fail(
        absl::StrCat("PTX '", text_, "' stores ", values.registers.size(), " values as ", n));
  }
  for (int i = 0; i < n; ++i) {
    const uint64_t v = InRegister(values.registers[static_cast<size_t>(i)]);
    std::memcpy(to + i * bytes, &v, static_cast<size_t>(bytes));
  }
}

void Grid::CpAsync(const PtxStatement& s) {
  // [dst], [src], cp-size[, src-size] (no src-size with an L2 hint: the last is the policy).
  const uint64_t dst = In(s.operands[0]);
  const uint64_t src = In(s.operands[1]);
  const uint64_t size = In(s.operands[2]);
  const uint64_t valid =
      !s.HasModifier("L2::cache_hint") && s.operands.size() > 3 ? In(s.operands[3]) : size;
  if (valid > size) {
    return Fail(absl::StrCat("cp.async of ", size, " B with a source size of ", valid));
  }
  if (!CheckAligned(dst, size, "cp.async's shared address") ||
      !CheckAligned(src, size, "cp.async's global address")) {
    return;
  }
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
    if (!CheckAligned(address, 8, "mbarrier.init") ||
        Shared(address, 8, "mbarrier.init") == nullptr) {
      return;
    }
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
  if (bytes % 16 != 0)
    return Fail(absl::StrCat("a bulk copy of ", bytes, " B, not a multiple of 16"));
  if (!CheckAligned(In(s.operands[0]), 16, "a bulk copy's destination") ||
      !CheckAligned(In(s.operands[1]), 16, "a bulk copy's source")) {
    return;
  }
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
  Self().bulk_open.push_back(
      [dst, from, bytes]() { std::memcpy(reinterpret_cast<void*>(dst), from, bytes); });
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
void Grid::TensorTile(const PtxStatement& s, Direction direction) {
  const bool load = direction == Direction::kLoad;
  const PtxOperand& tensor = s.operands[load ? 1 : 0];
  const EmulatedTensorMap* map = Map(In(tensor));
  if (map == nullptr) return;
  const int rank = static_cast<int>(map->rank);
  if (static_cast<int>(tensor.coordinates.size()) != rank) {
    return Fail(
        absl::StrCat("a ", tensor.coordinates.size(), "-D tensor copy of a rank-", rank, " map"));
  }
  std::vector<int64_t> start(rank), counts(rank);
  int64_t elements = 1;
  for (int d = 0; d < rank; ++d) {
    start[d] = static_cast<int32_t>(InRegister(tensor.coordinates[static_cast<size_t>(d)]));
    // The innermost dimension's traversal stride is 1 without interleaving.
    const int64_t stride = d == 0 ? 1 : std::max<int64_t>(1, map->element_strides[d]);
    counts[d] = (map->box[d] + stride - 1) / stride;
    elements *= counts[d];
  }
  const int64_t eb = map->element_bytes;
  const uint64_t smem_address = In(s.operands[load ? 0 : 1]);
  if (!CheckAligned(smem_address, 16, "a tensor copy's shared memory")) return;
  uint8_t* smem = Shared(smem_address, static_cast<uint64_t>(elements * eb),
                         load ? "tensor load" : "tensor store");
  if (smem == nullptr) return;
  // Each in-bounds element's global address is checked as the copy lands.
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
        const int64_t x =
            start[d] + index[d] * (d == 0 ? 1 : std::max<int64_t>(1, m.element_strides[d]));
        inside = inside && x >= 0 && x < static_cast<int64_t>(m.dims[d]);
        address += static_cast<uint64_t>(x) * (d == 0 ? eb : m.strides_bytes[d - 1]);
      }
      uint8_t* at = smem + e * eb;
      if (!inside) {
        if (load) std::memset(at, 0, static_cast<size_t>(eb));
        continue;
      }
      if (!grid->CheckGlobal(address, static_cast<uint64_t>(eb),
                             load ? "tensor load" : "tensor store"))
        return;
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
  const EmulatedTensorMap* map = Map(In(tensor));
  if (map == nullptr) return;
  if (map->mode != EmulatedTensorMap::Mode::kIm2col || map->rank != 4 ||
      tensor.coordinates.size() != 4 || s.operands[3].registers.size() != 2) {
    return Fail("an im2col tensor copy that is not of a rank-4 im2col map with two offsets");
  }
  auto coordinate = [&](int i) {
    return static_cast<int64_t>(
        static_cast<int32_t>(InRegister(tensor.coordinates[static_cast<size_t>(i)])));
  };
  const int64_t c0 = coordinate(0), w0 = coordinate(1), h0 = coordinate(2), n0 = coordinate(3);
  const int64_t off_w = static_cast<uint16_t>(InRegister(s.operands[3].registers[0]));
  const int64_t off_h = static_cast<uint16_t>(InRegister(s.operands[3].registers[1]));
  const EmulatedTensorMap m = *map;
  const int64_t eb = m.element_bytes;
  const int64_t bytes = int64_t{m.pixels_per_column} * m.channels_per_pixel * eb;
  const uint64_t smem_address = In(s.operands[0]);
  if (!CheckAligned(smem_address, 16, "a tensor copy's shared memory")) return;
  uint8_t* smem = Shared(smem_address, static_cast<uint64_t>(bytes), "im2col tensor load");
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
void HostSync(host_abi::tt_emu_scope scope) { running->Sync(scope); }
void* HostDynamicShared() { return running->DynamicShared(); }
void* HostStaticShared(unsigned long long bytes, unsigned long long align) {
  return running->StaticShared(bytes, align);
}
unsigned HostSharedAddress(const void* pointer) { return running->SharedAddress(pointer); }

}  // namespace

absl::Status RunGrid(const GridLaunch& launch) {
  if (launch.entry == nullptr || launch.current == nullptr || launch.threads < 1 ||
      launch.threads > 1024 || launch.grid < 1) {
    return absl::InvalidArgumentError(absl::StrCat("an emulated launch of ", launch.grid,
                                                   " CTAs of ", launch.threads, " threads"));
  }
  static std::mutex* const serial = new std::mutex;
  std::lock_guard<std::mutex> lock(*serial);
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
  if (abs > 0x7f800000u) return 0x7fffu;          // the canonical NaN
  if (abs >= 0x477ff000u) return sign | 0x7c00u;  // rounds to infinity
  if (abs < 0x38800000u) {                        // a subnormal half (or zero): round at 2^-24
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

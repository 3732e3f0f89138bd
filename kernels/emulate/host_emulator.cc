#include "kernels/emulate/host_emulator.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "compiler/base/status_macros.h"
#include "kernels/emulate/host_source.h"
#include "kernels/tile_kernel.h"
#include "kernels/verify.h"

namespace tiletune {
namespace {

// Buffers aligned as cudaMalloc aligns them.
constexpr size_t kBufferAlign = 256;

struct FreeDeleter {
  void operator()(uint8_t* p) const { std::free(p); }
};
using AlignedBytes = std::unique_ptr<uint8_t[], FreeDeleter>;

AlignedBytes Allocate(size_t bytes) {
  const size_t rounded =
      (std::max<size_t>(bytes, 1) + kBufferAlign - 1) / kBufferAlign * kBufferAlign;
  return AlignedBytes(static_cast<uint8_t*>(std::aligned_alloc(kBufferAlign, rounded)));
}

// Runs `argv` with its output in `log_path`; returns its exit status and that output.
absl::StatusOr<std::pair<int, std::string>> RunCommand(const std::vector<std::string>& argv,
                                                       const std::string& log_path) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    return absl::InternalError(absl::StrCat("running ", argv[0], ": ", std::strerror(spawned)));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return absl::InternalError(absl::StrCat("waitpid: ", std::strerror(errno)));
  }
  std::ifstream in(log_path);
  std::string output((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return std::make_pair(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), output);
}

// The checks cuTensorMapEncodeTiled / Im2col make of what the emulator's maps hold.
absl::Status CheckMapSpec(const TensorMapSpec& spec, uint64_t base) {
  std::vector<std::string> faults;
  if (base % 16 != 0)
    faults.push_back(absl::StrCat("base 0x", absl::Hex(base), " is not 16-byte aligned"));
  if (spec.dims.empty() || spec.dims.size() > 5)
    faults.push_back(absl::StrCat("rank ", spec.dims.size()));
  for (uint64_t stride : spec.strides_bytes) {
    if (stride % 16 != 0)
      faults.push_back(absl::StrCat("stride ", stride, " B is not a multiple of 16"));
  }
  for (uint32_t box : spec.box) {
    if (box == 0 || box > 256) faults.push_back(absl::StrCat("box ", box, " is not in [1, 256]"));
  }
  if (!spec.im2col.has_value() && !spec.box.empty() &&
      spec.box[0] * static_cast<uint64_t>(spec.element_bytes) % 16 != 0) {
    faults.push_back(
        absl::StrCat("the inner box of ", spec.box[0], " elements is not a multiple of 16 B"));
  }
  if (faults.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("tensor map: ", absl::StrJoin(faults, "; ")));
}

absl::StatusOr<EmulatedTensorMap> EncodeMap(const TensorMapSpec& spec, uint64_t operand) {
  TT_RETURN_IF_ERROR(CheckMapSpec(spec, operand + static_cast<uint64_t>(spec.base_offset_bytes)));
  EmulatedTensorMap map;
  map.rank = static_cast<uint32_t>(spec.dims.size());
  map.base = operand + static_cast<uint64_t>(spec.base_offset_bytes);
  map.element_bytes = static_cast<uint32_t>(spec.element_bytes);
  for (size_t d = 0; d < spec.dims.size() && d < 5; ++d) map.dims[d] = spec.dims[d];
  for (size_t d = 0; d < spec.strides_bytes.size() && d < 4; ++d) {
    map.strides_bytes[d] = spec.strides_bytes[d];
  }
  for (size_t d = 0; d < spec.box.size() && d < 5; ++d)
    map.box[d] = static_cast<uint16_t>(spec.box[d]);
  for (size_t d = 0; d < 5; ++d) {
    map.element_strides[d] =
        d < spec.element_strides.size() ? static_cast<uint8_t>(spec.element_strides[d]) : 1;
  }
  if (spec.im2col.has_value()) {
    map.mode = EmulatedTensorMap::Mode::kIm2col;
    for (int i = 0; i < 2; ++i) {
      map.lower_corner[i] = static_cast<int8_t>(spec.im2col->lower_corner[static_cast<size_t>(i)]);
      map.upper_corner[i] = static_cast<int8_t>(spec.im2col->upper_corner[static_cast<size_t>(i)]);
    }
    map.channels_per_pixel = static_cast<uint16_t>(spec.im2col->channels_per_pixel);
    map.pixels_per_column = static_cast<uint16_t>(spec.im2col->pixels_per_column);
  }
  return map;
}

// A CUtensorMap parameter's storage.
struct alignas(64) MapParameter {
  unsigned char bytes[128];
};

}  // namespace

struct HostEmulator::Library {
  void* handle = nullptr;
  host_abi::tt_emu_thread** current = nullptr;
  ~Library() {
    if (handle != nullptr) dlclose(handle);
  }
};

absl::StatusOr<std::string> FindHostCompiler() {
  if (const char* env = std::getenv("TILETUNE_HOST_CXX"); env != nullptr && *env != '\0') {
    if (access(env, X_OK) == 0) return std::string(env);
    return absl::FailedPreconditionError(
        absl::StrCat("TILETUNE_HOST_CXX=", env, " is not an executable file"));
  }
  const char* path = std::getenv("PATH");
  for (absl::string_view dir : absl::StrSplit(path == nullptr ? "/usr/bin:/bin" : path, ':')) {
    const std::string candidate = absl::StrCat(dir.empty() ? "." : dir, "/c++");
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return absl::FailedPreconditionError(
      "the host emulator needs a C++ compiler: none is set in TILETUNE_HOST_CXX and there is no "
      "c++ on PATH");
}

HostEmulator::HostEmulator(std::vector<HostKernel> kernels, Options options)
    : kernels_(std::move(kernels)), options_(std::move(options)) {}

HostEmulator::~HostEmulator() {
  libraries_.clear();
  if (!directory_.empty()) {
    std::error_code ignored;  // a temporary folder left behind is no error
    std::filesystem::remove_all(directory_, ignored);
  }
}

absl::StatusOr<std::unique_ptr<HostEmulator>> HostEmulator::Create(std::vector<HostKernel> kernels,
                                                                   const Options& options) {
  Options resolved = options;
  if (resolved.compiler.empty()) {
    TT_ASSIGN_OR_RETURN(resolved.compiler, FindHostCompiler());
  }
  resolved.kernels_per_library = std::max(1, resolved.kernels_per_library);
  resolved.jobs = std::max(1, resolved.jobs);
  std::unique_ptr<HostEmulator> emulator(new HostEmulator(std::move(kernels), std::move(resolved)));
  TT_RETURN_IF_ERROR(emulator->Build());
  return emulator;
}

absl::Status HostEmulator::Build() {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string pattern = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/tiletune_emulate_XXXXXX");
  if (mkdtemp(pattern.data()) == nullptr) {
    return absl::InternalError(absl::StrCat("mkdtemp ", pattern, ": ", std::strerror(errno)));
  }
  directory_ = pattern;
  // The sources, several kernels each.
  const int per = options_.kernels_per_library;
  const int count = (size() + per - 1) / per;
  std::vector<std::string> sources(static_cast<size_t>(count));
  for (int i = 0; i < size(); ++i) {
    std::string& text = sources[static_cast<size_t>(i / per)];
    if (text.empty()) text = HostLibraryPrelude();
    absl::StatusOr<std::string> kernel = HostKernelText(
        kernels_[i].source, kernels_[i].lowered->kernel_name, absl::StrCat("tt_emu_entry_", i));
    if (!kernel.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "kernel ", i, " (", kernels_[i].lowered->kernel_name, "): ", kernel.status().message()));
    }
    absl::StrAppend(&text, *kernel);
  }
  // Compiled `jobs` at a time.
  std::vector<absl::Status> results(static_cast<size_t>(count));
  auto compile = [&](int lib) {
    const std::string base = absl::StrCat(directory_, "/kernels", lib);
    std::ofstream(base + ".cc") << sources[static_cast<size_t>(lib)];
    absl::StatusOr<std::pair<int, std::string>> run = RunCommand(
        {options_.compiler, "-std=c++17", "-O1", "-fPIC", "-shared", "-w", "-fno-strict-aliasing",
         "-fwrapv", "-ffp-contract=off", "-o", base + ".so", base + ".cc"},
        base + ".log");
    if (!run.ok()) {
      results[static_cast<size_t>(lib)] = run.status();
    } else if (run->first != 0) {
      results[static_cast<size_t>(lib)] =
          absl::InternalError(absl::StrCat(options_.compiler, " failed on ", base, ".cc (exit ",
                                           run->first, "):\n", run->second.substr(0, 4000)));
    }
  };
  for (int first = 0; first < count; first += options_.jobs) {
    std::vector<std::thread> threads;
    for (int lib = first; lib < std::min(count, first + options_.jobs); ++lib) {
      threads.emplace_back(compile, lib);
    }
    for (std::thread& t : threads) t.join();
  }
  for (const absl::Status& s : results) TT_RETURN_IF_ERROR(s);
  // Loaded, and the entries found.
  for (int lib = 0; lib < count; ++lib) {
    auto library = std::make_unique<Library>();
    const std::string path = absl::StrCat(directory_, "/kernels", lib, ".so");
    library->handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library->handle == nullptr) return absl::InternalError(absl::StrCat("dlopen: ", dlerror()));
    library->current =
        static_cast<host_abi::tt_emu_thread**>(dlsym(library->handle, kCurrentThreadSymbol));
    auto** api = static_cast<const host_abi::tt_emu_host**>(dlsym(library->handle, kHostApiSymbol));
    if (library->current == nullptr || api == nullptr) {
      return absl::InternalError(absl::StrCat(path, " lacks the emulator's symbols"));
    }
    *api = &EmulatorHostApi();
    libraries_.push_back(std::move(library));
  }
  for (int i = 0; i < size(); ++i) {
    const Library* library = libraries_[static_cast<size_t>(i / per)].get();
    const std::string name = absl::StrCat("tt_emu_entry_", i);
    void* entry = dlsym(library->handle, name.c_str());
    void* params = dlsym(library->handle, absl::StrCat(name, "_params").c_str());
    if (entry == nullptr || params == nullptr) {
      return absl::InternalError(absl::StrCat("no entry for kernel ", i));
    }
    // The kernel takes the arguments its lowering says a launch passes.
    const int taken = reinterpret_cast<int (*)()>(params)();
    if (taken != kernels_[i].lowered->param_count()) {
      return absl::InvalidArgumentError(
          absl::StrCat("kernel ", i, " (", kernels_[i].lowered->kernel_name, ") takes ", taken,
                       " arguments; its lowering passes ", kernels_[i].lowered->param_count()));
    }
    library_of_.push_back(library);
    entries_.push_back(reinterpret_cast<void (*)(void**)>(entry));
  }
  return absl::OkStatus();
}

absl::Status HostEmulator::Launch(int index, uint8_t* input, uint8_t* output,
                                  const RegionOffsets& offsets, const ItemTableImage* items,
                                  std::vector<HostRange> buffers, uint64_t seed) const {
  if (index < 0 || index >= size()) {
    return absl::InvalidArgumentError(absl::StrCat("kernel ", index, " of ", size()));
  }
  const LoweredTileKernel& lowered = *kernels_[static_cast<size_t>(index)].lowered;
  uint64_t input_start =
      reinterpret_cast<uint64_t>(input) + static_cast<uint64_t>(offsets.input_bytes);
  uint64_t output_start =
      reinterpret_cast<uint64_t>(output) + static_cast<uint64_t>(offsets.output_bytes);
  TT_RETURN_IF_ERROR(CheckTileOperands(lowered, input_start, output_start));
  std::vector<void*> args = {&input_start, &output_start};
  uint64_t table = 0;
  long long count = 0;
  int64_t grid = lowered.GridSize(options_.sm_count);
  if (lowered.item_table) {
    if (items == nullptr) return absl::InvalidArgumentError("an item-table kernel needs its items");
    table = reinterpret_cast<uint64_t>(items->bytes.data());
    count = items->count;
    TT_RETURN_IF_ERROR(CheckItemArgs(ItemArgs{table, count}));
    if (count == 0) return absl::OkStatus();
    grid = lowered.GridSizeForItems(options_.sm_count, items->count);
    args.push_back(&table);
    args.push_back(&count);
  }
  // Each map in a CUtensorMap parameter's 128 bytes.
  std::vector<MapParameter> parameters(lowered.tensor_maps.size());
  for (size_t i = 0; i < parameters.size(); ++i) {
    const TensorMapSpec& spec = lowered.tensor_maps[i];
    TT_ASSIGN_OR_RETURN(
        EmulatedTensorMap map,
        EncodeMap(spec,
                  spec.operand == TensorMapSpec::Operand::kInput ? input_start : output_start));
    std::memcpy(parameters[i].bytes, &map, sizeof(map));
    args.push_back(parameters[i].bytes);
  }
  GridLaunch launch;
  launch.entry = entries_[static_cast<size_t>(index)];
  launch.current = library_of_[static_cast<size_t>(index)]->current;
  launch.args = args.data();
  launch.grid = grid;
  launch.threads = lowered.launch.threads;
  launch.dynamic_shared_bytes = lowered.shared_bytes;
  launch.sm_count = options_.sm_count;
  launch.seed = seed;
  launch.buffers = std::move(buffers);
  return RunGrid(launch);
}

absl::Status HostEmulator::Verify(int index, const TileOpDefinition& definition, const TileOp& op,
                                  std::mt19937_64& rng) const {
  TT_ASSIGN_OR_RETURN(VerificationImages images, MakeVerificationImages(definition, op, rng));
  AlignedBytes input = Allocate(images.input.size());
  AlignedBytes output = Allocate(images.expected.size());
  std::memcpy(input.get(), images.input.data(), images.input.size());
  std::memset(output.get(), images.poison, images.expected.size());
  const ItemTableImage items = definition.ExampleItems(op);
  TT_ASSIGN_OR_RETURN(RegionOffsets offsets, definition.Offsets(op));
  // The buffers themselves, not their guard zones: on the GPU those are in the same
  // allocation, so an access there would not fault, but it reads or writes past the buffer.
  const OperandSizes sizes = definition.Sizes(op);
  const uint64_t in_start = reinterpret_cast<uint64_t>(input.get()) + kGuardBytes;
  const uint64_t out_start = reinterpret_cast<uint64_t>(output.get()) + kGuardBytes;
  std::vector<HostRange> buffers = {
      {definition.operand_names()[0], in_start, in_start + sizes.input_bytes},
      {definition.operand_names()[1], out_start, out_start + sizes.output_bytes}};
  if (!items.bytes.empty()) {
    buffers.push_back({"item table", reinterpret_cast<uint64_t>(items.bytes.data()),
                       reinterpret_cast<uint64_t>(items.bytes.data()) + items.bytes.size()});
  }
  TT_RETURN_IF_ERROR(Launch(index, input.get() + kGuardBytes, output.get() + kGuardBytes, offsets,
                            items.bytes.empty() ? nullptr : &items, std::move(buffers), rng()));
  HostBytes got(output.get(), output.get() + images.expected.size());
  HostBytes input_after(input.get(), input.get() + images.input.size());
  return FirstMismatch(definition, op, images, got, input_after, lowered(index).kernel_name);
}

}  // namespace tiletune

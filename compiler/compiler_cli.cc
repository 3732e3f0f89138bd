#include "compiler/compiler_cli.h"

#include <cstdint>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "compiler/base/abbreviate.h"
#include "compiler/base/command_line.h"
#include "compiler/base/status_macros.h"
#include "compiler/cuda/nvrtc_compilation_provider.h"
#include "compiler/ir/buffer.h"
#include "compiler/ops/builtin_ops.h"
#include "compiler/ops/op_util.h"
#include "compiler/target/target.h"

namespace tiletune {
namespace {

// The flags every operator shares.
const std::vector<OpFlag>& CommonFlags() {
  static const std::vector<OpFlag>* const flags = new std::vector<OpFlag>{
      {"op", "the tile operator (default copy)"},
      {"problem", "the op as a problem spec, as //autotune --problems takes it, instead of "
                  "--op, --dtype and the operator's flags (e.g. "
                  "copy:f16:src=4096x4096[0:4096,48:4048]:dst=4096x4000)"},
      {"dtype", "element type: f64, f32, f16, bf16, f8e4m3, i32, i8, u8 (default f32)"},
      {"tile", "the block tile, one extent per tiled dimension (required)"},
      {"threads", "threads per CTA, a multiple of 32 up to 1024 (default 128)"},
      {"stages", "pipeline stages, 1 to 8 (default 1)"},
      {"ctas_per_sm", "0: one CTA per tile; n: a persistent grid of n CTAs per SM"},
      {"target", "sm_70 .. sm_121 (sm_75 and up compile with NVRTC 13), as `cuda -arch=sm_90a` or sm_90a (default sm_90a)"},
      {"emit", "plan, cuda or ptx (default plan)"},
      {"coalesced_width", "elements per vector access: 1, 2, 4, 8, 16"},
      {"disable_tma", "never lower through TMA", /*boolean=*/true},
      {"eviction_policy", "evict_normal, evict_first or evict_last"},
      {"prefer_instruction", "tma, cp_async or sync"},
      {"loop_layout", "ROWSxCOLS threads on the SIMT path"},
      {"annotations", "key=value,... (win over the keywords; fallback=error|auto, and the "
                      "operator's <operand>_eviction_policy keys)"},
  };
  return *flags;
}

std::string Get(const std::map<std::string, std::string>& flags, const std::string& name,
                const std::string& fallback = "") {
  auto it = flags.find(name);
  return it == flags.end() ? fallback : it->second;
}

absl::StatusOr<int> ParseInt(const std::string& flag, const std::string& text, int min_value,
                             int max_value) {
  int value = 0;
  if (!absl::SimpleAtoi(text, &value) || value < min_value || value > max_value) {
    return absl::InvalidArgumentError(absl::StrCat("--", flag, "=", text, ": expected an integer from ",
                                                   min_value, " to ", max_value));
  }
  return value;
}

absl::StatusOr<bool> ParseBoolFlag(const std::string& flag, const std::string& text) {
  if (text == "true" || text == "1") return true;
  if (text == "false" || text == "0") return false;
  return absl::InvalidArgumentError(
      absl::StrCat("--", flag, "=", text, ": expected true or false"));
}

std::string Usage(const TileOpRegistry& ops) {
  std::string usage =
      "usage: compiler --op=OP --dtype=DTYPE [operator flags] --tile=T0,T1,.. [--target=sm_90a]\n"
      "                [--emit=plan|cuda|ptx] [hint flags]\n\ncommon flags:\n";
  for (const OpFlag& flag : CommonFlags()) {
    absl::StrAppend(&usage, "  --", flag.name, ": ", flag.help, "\n");
  }
  absl::StrAppend(&usage, "  --help: this text\n  --version: the version\n");
  for (const TileOpDefinition* definition : ops.All()) {
    absl::StrAppend(&usage, "\n--op=", definition->name(), " flags:\n");
    for (const OpFlag& flag : definition->flags()) {
      absl::StrAppend(&usage, "  --", flag.name, ": ", flag.help, "\n");
    }
  }
  absl::StrAppend(&usage, "\nFlags take --name=value or --name value; a true/false flag is also "
                          "--name and --noname.\n\nenvironment:\n",
                  EnvironmentHelp(),
                  "\nexit codes: 0 done; 1 a failure (NVRTC missing, an internal error); 2 "
                  "usage error\n");
  return usage;
}

bool Declares(const TileOpDefinition& definition, const std::string& name) {
  for (const OpFlag& flag : definition.flags()) {
    if (flag.name == name) return true;
  }
  return false;
}

// Flags of other operators that `definition` does not take.
absl::Status RejectForeignFlags(const std::map<std::string, std::string>& flags,
                                const TileOpDefinition& definition, const TileOpRegistry& ops) {
  for (const auto& [name, value] : flags) {
    bool common = false;
    for (const OpFlag& flag : CommonFlags()) common |= flag.name == name;
    if (common || Declares(definition, name)) continue;
    std::vector<std::string> owners;
    for (const TileOpDefinition* other : ops.All()) {
      if (Declares(*other, name)) owners.push_back(absl::StrCat("--op=", other->name()));
    }
    return absl::InvalidArgumentError(absl::StrCat("--", name, " applies to ",
                                                   absl::StrJoin(owners, ", "), " only, not --op=",
                                                   definition.name()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::map<std::string, std::string>> ParseFlags(const std::vector<std::string>& args,
                                                              const TileOpRegistry& ops) {
  std::vector<FlagSpec> specs;
  std::set<std::string> known;
  auto add = [&](const OpFlag& flag) {
    if (!known.insert(flag.name).second) return;
    specs.push_back({flag.name, flag.boolean ? FlagType::kBool : FlagType::kString,
                     flag.help});
  };
  for (const OpFlag& flag : CommonFlags()) add(flag);
  for (const TileOpDefinition* definition : ops.All()) {
    for (const OpFlag& flag : definition->flags()) add(flag);
  }
  TT_ASSIGN_OR_RETURN(CommandLine line, ParseCommandLine(args, specs));
  if (line.help()) return std::map<std::string, std::string>{{"help", "true"}};
  if (line.version()) return std::map<std::string, std::string>{{"version", "true"}};
  return line.values();
}

absl::StatusOr<Hints> HintsFromFlags(const std::map<std::string, std::string>& flags) {
  Hints hints;
  if (flags.count("coalesced_width")) {
    TT_ASSIGN_OR_RETURN(hints.coalesced_width,
                        ParseInt("coalesced_width", Get(flags, "coalesced_width"), 1, 16));
  }
  if (flags.count("disable_tma")) {
    TT_ASSIGN_OR_RETURN(hints.disable_tma, ParseBoolFlag("disable_tma", Get(flags, "disable_tma")));
  }
  if (flags.count("eviction_policy")) {
    TT_ASSIGN_OR_RETURN(hints.eviction_policy, ParseEvictionPolicy(Get(flags, "eviction_policy")));
  }
  if (flags.count("prefer_instruction")) {
    TT_ASSIGN_OR_RETURN(hints.prefer_instruction,
                        ParseInstruction(Get(flags, "prefer_instruction")));
  }
  if (flags.count("loop_layout")) {
    TT_ASSIGN_OR_RETURN(hints.loop_layout, ParseLoopLayout(Get(flags, "loop_layout")));
  }
  if (flags.count("annotations")) {
    for (absl::string_view pair : absl::StrSplit(Get(flags, "annotations"), ',')) {
      std::vector<std::string> kv = absl::StrSplit(pair, absl::MaxSplits('=', 1));
      if (kv.size() != 2 || kv[0].empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--annotations: '", pair, "' is not key=value; e.g. --annotations=fallback=auto"));
      }
      if (!hints.annotations.emplace(kv[0], kv[1]).second) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--annotations: key '", kv[0], "' is given twice ('", hints.annotations[kv[0]],
            "' and '", kv[1], "'); give each key once"));
      }
    }
  }
  return hints;
}

absl::StatusOr<LaunchParams> LaunchFromFlags(const std::map<std::string, std::string>& flags) {
  LaunchParams launch;
  if (flags.count("tile") == 0) {
    return absl::InvalidArgumentError("--tile is required, e.g. --tile=128,128");
  }
  TT_ASSIGN_OR_RETURN(launch.tile,
                      ParseIntList("--tile", Get(flags, "tile"), 1, int64_t{1} << 24, kMaxRank));
  TT_ASSIGN_OR_RETURN(launch.threads, ParseInt("threads", Get(flags, "threads", "128"), 32, 1024));
  TT_ASSIGN_OR_RETURN(launch.stages, ParseInt("stages", Get(flags, "stages", "1"), 1, 8));
  TT_ASSIGN_OR_RETURN(launch.ctas_per_sm,
                      ParseInt("ctas_per_sm", Get(flags, "ctas_per_sm", "0"), 0, 32));
  TT_ASSIGN_OR_RETURN(launch.through_shared,
                      ParseBoolFlag("through_shared", Get(flags, "through_shared", "true")));
  return launch;
}

int RunCompilerCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const TileOpRegistry& ops = BuiltinTileOps();
  auto fail = [&](const absl::Status& status) {
    err << "compiler: " << BoundedMessage(status.message()) << "\n";
    return absl::IsInvalidArgument(status) || absl::IsOutOfRange(status) ? 2 : 1;
  };
  absl::StatusOr<std::map<std::string, std::string>> flags = ParseFlags(args, ops);
  if (!flags.ok()) return fail(flags.status());
  if (flags->count("help")) {
    out << Usage(ops);
    return 0;
  }
  if (flags->count("version")) {
    out << VersionLine("compiler") << "\n";
    return 0;
  }
  // --problem: the op from a spec; its operator's name stands in for --op.
  std::unique_ptr<TileOp> spec_op;
  if (flags->count("problem")) {
    for (const auto& [name, value] : *flags) {
      // --through_shared is an operator flag of the launch, not of the op.
      bool op_flag = name == "op" || name == "dtype";
      for (const TileOpDefinition* any : ops.All()) {
        op_flag |= Declares(*any, name) && name != "through_shared";
      }
      if (op_flag) {
        return fail(absl::InvalidArgumentError(absl::StrCat(
            "--problem describes the op; drop --", name, " (or drop --problem)")));
      }
    }
    absl::StatusOr<std::unique_ptr<TileOp>> parsed = ops.ParseSpec(Get(*flags, "problem"));
    if (!parsed.ok()) return fail(parsed.status());
    spec_op = *std::move(parsed);
  }
  const std::string op_name = spec_op ? spec_op->op_name() : Get(*flags, "op", "copy");
  absl::StatusOr<const TileOpDefinition*> definition = ops.Find(op_name);
  if (!definition.ok()) {
    return fail(absl::InvalidArgumentError(
        absl::StrCat("--op=", op_name, ": accepted are ", ops.Names())));
  }
  std::string emit = Get(*flags, "emit", "plan");
  if (emit != "plan" && emit != "cuda" && emit != "ptx") {
    return fail(absl::InvalidArgumentError(
        absl::StrCat("--emit=", emit, ": accepted are plan, cuda, ptx")));
  }
  absl::StatusOr<Target> target = Target::Parse(Get(*flags, "target", "sm_90a"));
  if (!target.ok()) return fail(target.status());
  // PTX needs NVRTC, and NVRTC only some architectures: a target it cannot build is the
  // user's to change, said before anything is lowered.
  std::unique_ptr<CompilationProvider> nvrtc;
  if (emit == "ptx") {
    absl::StatusOr<std::unique_ptr<NvrtcCompilationProvider>> made =
        NvrtcCompilationProvider::Create();
    if (!made.ok()) return fail(made.status());
    nvrtc = *std::move(made);
    if (absl::Status arch = nvrtc->CheckArch(target->ArchName()); !arch.ok()) {
      return fail(absl::InvalidArgumentError(absl::StrCat("--target: ", arch.message())));
    }
  }
  if (absl::Status foreign = RejectForeignFlags(*flags, **definition, ops); !foreign.ok()) {
    return fail(foreign);
  }
  absl::StatusOr<DataType> dtype = ParseDataType(Get(*flags, "dtype", "f32"));
  if (!dtype.ok()) return fail(dtype.status());
  absl::StatusOr<Hints> hints = HintsFromFlags(*flags);
  if (!hints.ok()) return fail(hints.status());
  absl::StatusOr<std::unique_ptr<TileOp>> op = std::move(spec_op);
  if (*op != nullptr) {
    (**op).hints = *std::move(hints);
    if (absl::Status valid = (*definition)->Validate(**op); !valid.ok()) return fail(valid);
  } else {
    op = (*definition)->FromFlags(*flags, *dtype, *hints);
  }
  if (!op.ok()) return fail(op.status());
  absl::StatusOr<LaunchParams> launch = LaunchFromFlags(*flags);
  if (!launch.ok()) return fail(launch.status());
  absl::StatusOr<std::shared_ptr<const LoweredTileKernel>> lowered =
      (*definition)->Lower(**op, *target, *launch);
  if (!lowered.ok()) return fail(lowered.status());
  if (emit == "plan") {
    out << (*definition)->DescribePlan(**lowered);
    return 0;
  }
  CudaSource source = (*definition)->Emit(**lowered);
  if (emit == "cuda") {
    out << source.text;
    return 0;
  }
  CompileOptions options;
  options.arch = target->ArchName();
  absl::StatusOr<Ptx> ptx = nvrtc->CompileToPtx(source, options);
  if (!ptx.ok()) {
    err << "compiler: internal error: generated code failed to compile: " << BoundedMessage(ptx.status().message())
        << "\n";
    return 1;
  }
  out << ptx->text;
  return 0;
}

}  // namespace tiletune

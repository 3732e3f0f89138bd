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
#include "compiler/base/status_macros.h"
#include "compiler/codegen/copy_emitter.h"
#include "compiler/codegen/im2col_emitter.h"
#include "compiler/cuda/nvrtc_compilation_provider.h"
#include "compiler/ir/buffer.h"
#include "compiler/ir/copy_op.h"
#include "compiler/ir/im2col_op.h"
#include "compiler/lower/copy_lowering.h"
#include "compiler/lower/im2col_lowering.h"
#include "compiler/target/target.h"

namespace tiletune {
namespace {

const std::set<std::string>& KnownFlags() {
  static const std::set<std::string>* const known = new std::set<std::string>{
      "op", "dtype", "shape", "src_shape", "src_offset", "dst_shape", "dst_offset", "tile",
      "threads", "stages", "through_shared", "ctas_per_sm", "target", "emit",
      "coalesced_width", "disable_tma", "eviction_policy", "prefer_instruction", "loop_layout",
      "annotations", "help", "kernel", "stride", "dilation", "pad"};
  return *known;
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

constexpr char kUsage[] =
    "usage: compiler --op=copy --dtype=f16 --shape=8192,8192 --tile=128,128 --target=sm_90a\n"
    "                [--emit=plan|cuda|ptx] [--threads=N] [--stages=N] [--ctas_per_sm=N]\n"
    "                [--through_shared=true|false] [--src_shape=.. --src_offset=..]\n"
    "                [--dst_shape=.. --dst_offset=..] [--coalesced_width=N] [--disable_tma]\n"
    "                [--eviction_policy=evict_first] [--prefer_instruction=tma|cp_async|sync]\n"
    "                [--loop_layout=RxC] [--annotations=key=value,key=value]\n"
    "       compiler --op=im2col --dtype=f16 --shape=N,H,W,C --kernel=KH[,KW] [--stride=SH[,SW]]\n"
    "                [--dilation=DH[,DW]] [--pad=PH[,PW]] --tile=BLOCK_M,BLOCK_K --target=sm_90a\n"
    "                [--emit=plan|cuda|ptx] [--threads=N] [--stages=N] [--ctas_per_sm=N]\n"
    "                [hint flags as for copy; annotations also take img_eviction_policy=..,\n"
    "                col_eviction_policy=..]\n";

// Flags that only one operator takes.
const std::vector<std::string>& CopyOnlyFlags() {
  static const std::vector<std::string>* const flags = new std::vector<std::string>{
      "src_shape", "src_offset", "dst_shape", "dst_offset", "through_shared"};
  return *flags;
}
const std::vector<std::string>& Im2colOnlyFlags() {
  static const std::vector<std::string>* const flags =
      new std::vector<std::string>{"kernel", "stride", "dilation", "pad"};
  return *flags;
}

absl::Status RejectFlags(const std::map<std::string, std::string>& flags,
                         const std::vector<std::string>& names, const std::string& op,
                         const std::string& owner) {
  for (const std::string& name : names) {
    if (flags.count(name)) {
      return absl::InvalidArgumentError(absl::StrCat("--", name, " applies to --op=", owner,
                                                     " only, not --op=", op));
    }
  }
  return absl::OkStatus();
}

// The hint flags shared by every operator: --coalesced_width, --disable_tma,
// --eviction_policy, --prefer_instruction, --loop_layout, --annotations.
absl::StatusOr<CopyHints> HintsFromFlags(const std::map<std::string, std::string>& flags) {
  CopyHints hints;
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
      hints.annotations[kv[0]] = kv[1];
    }
  }
  return hints;
}

}  // namespace

absl::StatusOr<std::map<std::string, std::string>> ParseFlags(
    const std::vector<std::string>& args) {
  std::map<std::string, std::string> flags;
  for (const std::string& arg : args) {
    if (!absl::StartsWith(arg, "--") || arg.size() == 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("unexpected argument '", arg, "': flags are written --name=value"));
    }
    std::string body = arg.substr(2);
    size_t eq = body.find('=');
    std::string name = eq == std::string::npos ? body : body.substr(0, eq);
    std::string value = eq == std::string::npos ? "true" : body.substr(eq + 1);
    if (KnownFlags().count(name) == 0) {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag --", name, "; accepted are --",
                                                     absl::StrJoin(KnownFlags(), ", --")));
    }
    if (flags.count(name) != 0) {
      return absl::InvalidArgumentError(absl::StrCat("flag --", name, " given twice"));
    }
    flags[name] = value;
  }
  return flags;
}

absl::StatusOr<std::vector<int64_t>> ParseIntList(const std::string& flag, const std::string& text,
                                                  int64_t min_value, int64_t max_value) {
  std::vector<int64_t> values;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    int64_t value = 0;
    if (!absl::SimpleAtoi(part, &value) || value < min_value || value > max_value) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", flag, "=", text, ": '", part, "' is not an integer from ", min_value, " to ",
          max_value, "; give a comma-separated list such as 8192,8192"));
    }
    values.push_back(value);
  }
  if (values.empty() || values.size() > kMaxRank) {
    return absl::InvalidArgumentError(absl::StrCat("--", flag, "=", text, ": give 1 to ",
                                                   kMaxRank, " comma-separated integers"));
  }
  return values;
}

absl::StatusOr<CopyOp> CopyOpFromFlags(const std::map<std::string, std::string>& flags) {
  TT_ASSIGN_OR_RETURN(DataType dtype, ParseDataType(Get(flags, "dtype", "f32")));
  if (flags.count("shape") == 0) {
    return absl::InvalidArgumentError("--shape is required, e.g. --shape=8192,8192");
  }
  constexpr int64_t kMaxExtent = int64_t{1} << 40;
  TT_ASSIGN_OR_RETURN(std::vector<int64_t> shape,
                      ParseIntList("shape", Get(flags, "shape"), 1, kMaxExtent));
  auto side = [&](const std::string& prefix) -> absl::StatusOr<Region> {
    std::vector<int64_t> buffer_shape = shape;
    std::vector<int64_t> offsets(shape.size(), 0);
    if (flags.count(prefix + "_shape")) {
      TT_ASSIGN_OR_RETURN(buffer_shape, ParseIntList(prefix + "_shape",
                                                     Get(flags, prefix + "_shape"), 1, kMaxExtent));
    }
    if (flags.count(prefix + "_offset")) {
      TT_ASSIGN_OR_RETURN(offsets, ParseIntList(prefix + "_offset", Get(flags, prefix + "_offset"),
                                                0, kMaxExtent));
    }
    if (buffer_shape.size() != shape.size() || offsets.size() != shape.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", prefix, "_shape and --", prefix, "_offset need ", shape.size(),
          " values, one per dimension of --shape"));
    }
    Buffer buffer = Buffer::RowMajor(prefix, dtype, Scope::kGlobal, buffer_shape);
    Region region = Region::Box(buffer, offsets, shape);
    TT_RETURN_IF_ERROR(ValidateRegion(region));
    return region;
  };
  CopyOp op;
  TT_ASSIGN_OR_RETURN(op.src, side("src"));
  TT_ASSIGN_OR_RETURN(op.dst, side("dst"));
  TT_ASSIGN_OR_RETURN(op.hints, HintsFromFlags(flags));
  TT_RETURN_IF_ERROR(ValidateCopyOp(op));
  return op;
}

absl::StatusOr<Im2colOp> Im2colOpFromFlags(const std::map<std::string, std::string>& flags) {
  TT_RETURN_IF_ERROR(RejectFlags(flags, CopyOnlyFlags(), "im2col", "copy"));
  TT_ASSIGN_OR_RETURN(DataType dtype, ParseDataType(Get(flags, "dtype", "f32")));
  if (flags.count("shape") == 0) {
    return absl::InvalidArgumentError(
        "--shape is required: the NHWC image as N,H,W,C, e.g. --shape=64,56,56,64");
  }
  TT_ASSIGN_OR_RETURN(std::vector<int64_t> shape,
                      ParseIntList("shape", Get(flags, "shape"), 1, kMaxIm2colElements));
  if (shape.size() != 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--shape=", Get(flags, "shape"), ": im2col takes the NHWC image as four values N,H,W,C, "
        "e.g. --shape=64,56,56,64"));
  }
  if (flags.count("kernel") == 0) {
    return absl::InvalidArgumentError(
        "--kernel is required for --op=im2col: KH[,KW], e.g. --kernel=3 or --kernel=3,5");
  }
  // One value for both axes or two (h, then w).
  auto per_axis = [&](const std::string& name, const std::string& fallback, int64_t min_value,
                      int64_t* h, int64_t* w) -> absl::Status {
    std::string text = Get(flags, name, fallback);
    TT_ASSIGN_OR_RETURN(std::vector<int64_t> values,
                        ParseIntList(name, text, min_value, kMaxIm2colWindowParam));
    if (values.size() > 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", name, "=", text, ": give one value for both axes or two, h then w (e.g. --",
          name, "=3,1)"));
    }
    *h = values[0];
    *w = values.back();
    return absl::OkStatus();
  };
  Im2colGeometry g;
  g.n = shape[0];
  g.h = shape[1];
  g.w = shape[2];
  g.c = shape[3];
  TT_RETURN_IF_ERROR(per_axis("kernel", "1", 1, &g.kh, &g.kw));
  TT_RETURN_IF_ERROR(per_axis("stride", "1", 1, &g.sh, &g.sw));
  TT_RETURN_IF_ERROR(per_axis("dilation", "1", 1, &g.dh, &g.dw));
  TT_RETURN_IF_ERROR(per_axis("pad", "0", 0, &g.ph, &g.pw));
  TT_RETURN_IF_ERROR(ValidateIm2colGeometry(g));
  Im2colOp op = Im2colOp::Dense(dtype, g);
  TT_ASSIGN_OR_RETURN(op.hints, HintsFromFlags(flags));
  TT_RETURN_IF_ERROR(ValidateIm2colOp(op));
  return op;
}

absl::StatusOr<LaunchParams> LaunchFromFlags(const std::map<std::string, std::string>& flags) {
  LaunchParams launch;
  if (flags.count("tile") == 0) {
    return absl::InvalidArgumentError("--tile is required, e.g. --tile=128,128");
  }
  TT_ASSIGN_OR_RETURN(launch.tile, ParseIntList("tile", Get(flags, "tile"), 1, int64_t{1} << 24));
  TT_ASSIGN_OR_RETURN(launch.threads, ParseInt("threads", Get(flags, "threads", "128"), 32, 1024));
  TT_ASSIGN_OR_RETURN(launch.stages, ParseInt("stages", Get(flags, "stages", "1"), 1, 8));
  TT_ASSIGN_OR_RETURN(launch.ctas_per_sm,
                      ParseInt("ctas_per_sm", Get(flags, "ctas_per_sm", "0"), 0, 32));
  TT_ASSIGN_OR_RETURN(launch.through_shared,
                      ParseBoolFlag("through_shared", Get(flags, "through_shared", "true")));
  return launch;
}

int RunCompilerCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  auto fail = [&](const absl::Status& status) {
    err << "compiler: " << status.message() << "\n";
    return absl::IsInvalidArgument(status) || absl::IsOutOfRange(status) ? 2 : 1;
  };
  absl::StatusOr<std::map<std::string, std::string>> flags = ParseFlags(args);
  if (!flags.ok()) return fail(flags.status());
  if (flags->count("help")) {
    out << kUsage;
    return 0;
  }
  std::string op_name = Get(*flags, "op", "copy");
  if (op_name != "copy" && op_name != "im2col") {
    return fail(absl::InvalidArgumentError(
        absl::StrCat("--op=", op_name, ": accepted are copy, im2col")));
  }
  std::string emit = Get(*flags, "emit", "plan");
  if (emit != "plan" && emit != "cuda" && emit != "ptx") {
    return fail(absl::InvalidArgumentError(
        absl::StrCat("--emit=", emit, ": accepted are plan, cuda, ptx")));
  }
  absl::StatusOr<Target> target = Target::Parse(Get(*flags, "target", "sm_90a"));
  if (!target.ok()) return fail(target.status());
  CudaSource source;
  if (op_name == "im2col") {
    absl::StatusOr<Im2colOp> op = Im2colOpFromFlags(*flags);
    if (!op.ok()) return fail(op.status());
    absl::StatusOr<LaunchParams> launch = LaunchFromFlags(*flags);
    if (!launch.ok()) return fail(launch.status());
    absl::StatusOr<LoweredIm2col> lowered = LowerIm2col(*op, *target, *launch);
    if (!lowered.ok()) return fail(lowered.status());
    if (emit == "plan") {
      out << DescribePlan(*lowered);
      return 0;
    }
    source = EmitIm2colKernel(*lowered);
  } else {
    if (absl::Status status = RejectFlags(*flags, Im2colOnlyFlags(), "copy", "im2col");
        !status.ok()) {
      return fail(status);
    }
    absl::StatusOr<CopyOp> op = CopyOpFromFlags(*flags);
    if (!op.ok()) return fail(op.status());
    absl::StatusOr<LaunchParams> launch = LaunchFromFlags(*flags);
    if (!launch.ok()) return fail(launch.status());
    absl::StatusOr<LoweredCopy> lowered = LowerCopy(*op, *target, *launch);
    if (!lowered.ok()) return fail(lowered.status());
    if (emit == "plan") {
      out << DescribePlan(*lowered);
      return 0;
    }
    source = EmitCopyKernel(*lowered);
  }
  if (emit == "cuda") {
    out << source.text;
    return 0;
  }
  auto nvrtc = NvrtcCompilationProvider::Create();
  if (!nvrtc.ok()) return fail(nvrtc.status());
  CompileOptions options;
  options.arch = target->ArchName();
  absl::StatusOr<Ptx> ptx = (*nvrtc)->CompileToPtx(source, options);
  if (!ptx.ok()) {
    err << "compiler: internal error: generated code failed to compile: " << ptx.status().message()
        << "\n";
    return 1;
  }
  out << ptx->text;
  return 0;
}

}  // namespace tiletune

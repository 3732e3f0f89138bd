// The build-time half of the tiletune_kernels rule (kernels/tiletune_kernels.bzl): compiles
// the tuned kernels of a database with NVRTC (no GPU needed) and writes a C++ source that
// embeds their CUBINs and the records they came from, registering them with the library
// (kernels/prebuilt.h) when linked.
//
//   bake --database=h200.txtpb --targets=sm_90a --name=//pkg:kernels
//        [--problems='copy:f16:8192,8192;im2col:...'] [--ptx=false] --output=kernels.cc
//
// Each kernel is embedded as a CUBIN for its record's architecture and, unless
// --ptx=false, as PTX for the plain virtual architecture below it (compute_90 for
// sm_90a), which the driver compiles for a newer GPU that has no CUBIN of its own.
//
// Every record must be for one of --targets (a database for another architecture is an
// error naming the record and the targets); --problems keeps only the records of those
// problems, each of which must be in the database. A database that does not read fails
// with the reader's error. Exit codes: 0 written, 1 an error (one line on stderr), 2 usage.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "compiler/backend/cuda/cuda_codegens.h"
#include "compiler/backend/registry.h"
#include "compiler/backend/tuned_resolver.h"
#include "compiler/base/abbreviate.h"
#include "compiler/base/command_line.h"
#include "compiler/base/sha256.h"
#include "compiler/base/status_macros.h"
#include "compiler/cuda/nvrtc_compilation_provider.h"
#include "compiler/ops/builtin_ops.h"
#include "compiler/tuning_db/atomic_file.h"
#include "compiler/tuning_db/tuning_db.h"

namespace tiletune {
namespace {

struct BakeArguments {
  std::string database;
  std::vector<std::string> targets;
  std::string problems;
  std::string name;
  std::string output;
  bool ptx = true;
};

constexpr char kUsage[] =
    "usage: bake --database=PATH --targets=sm_90a[,sm_80...] --name=NAME "
    "[--problems=SPECS] [--ptx=true|false] --output=OUT.cc";

const std::vector<FlagSpec>& BakeFlags() {
  static const std::vector<FlagSpec>* const flags = new std::vector<FlagSpec>{
      {"database", FlagType::kString, "PATH: the tuning database (text or binary)"},
      {"targets", FlagType::kString, "sm_90a[,sm_80...]: every record must be for one of these"},
      {"name", FlagType::kString, "NAME: what the kernel set is called (the Bazel label)"},
      {"problems", FlagType::kString, "SPECS: bake only these problems (';'-separated)"},
      {"ptx", FlagType::kBool, "also embed PTX for newer GPUs (default true)"},
      {"output", FlagType::kString, "OUT.cc: the generated source", 'o'},
  };
  return *flags;
}

absl::StatusOr<BakeArguments> ParseArguments(const CommandLine& line) {
  BakeArguments args;
  args.database = line.String("database");
  args.targets = absl::StrSplit(line.String("targets"), ',', absl::SkipWhitespace());
  args.problems = line.String("problems");
  args.name = line.String("name");
  args.output = line.String("output");
  args.ptx = line.Bool("ptx", true);
  if (args.database.empty() || args.targets.empty() || args.name.empty() || args.output.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--database, --targets, --name and --output are required; ", kUsage));
  }
  for (const std::string& target : args.targets) {
    TT_RETURN_IF_ERROR(Target::Parse(target).status());
  }
  return args;
}

// `text` for a // comment of the generated source: control characters and backslashes
// (a trailing one would splice the next line into the comment) become '?', and it is cut.
std::string CommentSafe(absl::string_view text) {
  std::string out(Abbreviate(text, 200));
  for (char& c : out) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f || c == '\\') c = '?';
  }
  return out;
}

// A C++ string literal of `text` (raw strings cannot hold every byte sequence).
std::string CppString(const std::string& text) {
  std::string out = "\"";
  int column = 0;
  for (unsigned char c : text) {
    if (c == '\n') {
      out += "\\n\"\n    \"";
      column = 0;
      continue;
    }
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      absl::StrAppendFormat(&out, "\\%03o", c);
    }
    if (++column > 100) {
      out += "\"\n    \"";
      column = 0;
    }
  }
  return out + "\"";
}

std::string CppBytes(const std::string& bytes) {
  std::string out;
  for (size_t i = 0; i < bytes.size(); ++i) {
    absl::StrAppend(&out, static_cast<unsigned>(static_cast<unsigned char>(bytes[i])), ",");
    if (i % 24 == 23) out += "\n    ";
  }
  return out;
}

absl::Status Bake(const BakeArguments& args) {
  const TileOpRegistry& ops = BuiltinTileOps();
  tuning::ReadOptions read;
  read.semantics = ops.RecordValidator();
  TT_ASSIGN_OR_RETURN(tuning::TuningDatabase database, tuning::ReadTuningDatabase(args.database, read));
  // The problems kept: all, or those --problems names.
  std::set<std::string> wanted;
  std::map<std::string, std::string> wanted_specs;
  for (absl::string_view spec : absl::StrSplit(args.problems, ';', absl::SkipWhitespace())) {
    spec = absl::StripAsciiWhitespace(spec);
    TT_ASSIGN_OR_RETURN(std::unique_ptr<TileOp> op, ops.ParseSpec(spec));
    TT_ASSIGN_OR_RETURN(const TileOpDefinition* definition, ops.For(*op));
    TT_ASSIGN_OR_RETURN(tuning::Problem problem, definition->ToProblem(*op));
    wanted.insert(tuning::ProblemKey(problem));
    wanted_specs[tuning::ProblemKey(problem)] = std::string(spec);
  }
  tuning::TuningDatabase kept;
  kept.set_schema_version(tuning::kCurrentSchemaVersion);
  std::set<std::string> found;
  for (const tuning::TuningRecord& record : database.records()) {
    const std::string key = tuning::ProblemKey(record.problem());
    if (!wanted.empty() && wanted.count(key) == 0) continue;
    found.insert(key);
    TT_ASSIGN_OR_RETURN(Target target, TargetOf(record.device()));
    if (std::find(args.targets.begin(), args.targets.end(), target.ArchName()) == args.targets.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          args.database, ": record ", tuning::RecordKey(record).substr(0, 160), " is for ",
          target.ArchName(), " (", record.device().name(), "), not one of the targets ",
          absl::StrJoin(args.targets, ", ")));
    }
    *kept.add_records() = record;
  }
  for (const auto& [key, spec] : wanted_specs) {
    if (found.count(key) == 0) {
      return absl::NotFoundError(absl::StrCat("--problems: ", spec, " has no record in ", args.database));
    }
  }
  if (kept.records_size() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(args.database, " holds no record to bake"));
  }

  DeviceCodegenRegistry codegens;
  TT_RETURN_IF_ERROR(RegisterBuiltinCudaCodegens(codegens, ops));
  TunedResolver::Options resolver_options;
  resolver_options.registry = &codegens;
  resolver_options.ops = &ops;
  resolver_options.databases = {kept};
  TT_ASSIGN_OR_RETURN(std::unique_ptr<TunedResolver> resolver, TunedResolver::Create(resolver_options));
  TT_ASSIGN_OR_RETURN(std::unique_ptr<NvrtcCompilationProvider> nvrtc, NvrtcCompilationProvider::Create());

  std::string images;
  std::string arrays;
  std::set<std::string> baked;
  int count = 0;
  for (const tuning::TuningRecord& record : kept.records()) {
    TT_ASSIGN_OR_RETURN(const TileOpDefinition* definition, ops.Find(tuning::OperatorName(record.problem())));
    TT_ASSIGN_OR_RETURN(std::unique_ptr<TileOp> op, definition->FromProblem(record.problem()));
    TT_ASSIGN_OR_RETURN(Resolution resolution, resolver->Resolve(record.device(), *op));
    if (resolution.level != ResolutionLevel::kExact) {
      return absl::InternalError(absl::StrCat("record ", tuning::RecordKey(record).substr(0, 160),
                                              " does not resolve as exact: ", resolution.detail));
    }
    const BuiltKernel& built = resolution.built;
    const std::string arch = built.lowered->target.ArchName();
    const std::string sha = Sha256Hex(built.source.text);
    if (!baked.insert(absl::StrCat(arch, "|", sha)).second) continue;
    CompileOptions options;
    options.arch = arch;
    absl::StatusOr<Cubin> cubin = nvrtc->CompileToCubin(built.source, options);
    if (!cubin.ok()) {
      return absl::Status(cubin.status().code(), absl::StrCat(definition->Describe(*op), ": ",
                                                                cubin.status().message()));
    }
    absl::StrAppend(&arrays, "const char kSource", count, "[] =\n    ", CppString(built.source.text),
                    ";\n");
    absl::StrAppend(&arrays, "alignas(16) const unsigned char kCubin", count, "[] = {\n    ",
                    CppBytes(cubin->bytes), "\n};\n");
    const std::string& entry = built.lowered->kernel_name;
    absl::StrAppend(&images, "    {\"", arch, "\", \"", sha, "\", kSource", count, ", \"", entry,
                    "\", kCubin", count, ", sizeof(kCubin", count, ")},  // ",
                    definition->Describe(*op), "\n");
    if (args.ptx) {
      // The plain virtual architecture ("sm_90a" -> compute_90): its PTX runs on every
      // newer GPU, compiled by the driver when the kernel is loaded.
      CompileOptions virtual_arch;
      virtual_arch.arch = std::string(absl::StripSuffix(absl::StripSuffix(arch, "a"), "f"));
      absl::StatusOr<Ptx> ptx = nvrtc->CompileToPtx(built.source, virtual_arch);
      if (!ptx.ok()) {
        return absl::Status(ptx.status().code(), absl::StrCat(definition->Describe(*op), " as PTX: ",
                                                              ptx.status().message()));
      }
      const std::string compute =
          absl::StrCat("compute_", absl::StripPrefix(virtual_arch.arch, "sm_"));
      // NUL-terminated: the driver reads PTX as a C string.
      absl::StrAppend(&arrays, "alignas(16) const unsigned char kPtx", count, "[] = {\n    ",
                      CppBytes(ptx->text + std::string(1, '\0')), "\n};\n");
      absl::StrAppend(&images, "    {\"", compute, "\", \"", sha, "\", kSource", count, ", \"",
                      entry, "\", kPtx", count, ", sizeof(kPtx", count, ")},  // PTX of the above\n");
    }
    ++count;
  }
  TT_ASSIGN_OR_RETURN(std::string text, tuning::SerializeTuningDatabase(kept, tuning::DatabaseFormat::kText,
                                                                         ops.RecordValidator()));
  std::string cc = absl::StrCat(
      "// Generated by //kernels:bake for ", CommentSafe(args.name), " from ",
      CommentSafe(args.database), " (",
      kept.records_size(), " records, ", count, " kernels, targets ", absl::StrJoin(args.targets, ","),
      "). Do not edit.\n#include \"kernels/prebuilt.h\"\n\nnamespace {\n\n", arrays,
      "\nconst tiletune::PrebuiltKernelImage kImages[] = {\n", images, "};\n\n",
      "const char kDatabase[] =\n    ", CppString(text), ";\n\n",
      "const tiletune::PrebuiltKernelSet kSet = {", CppString(args.name),
      ", kDatabase, kImages, sizeof(kImages) / sizeof(kImages[0])};\n\n",
      "[[maybe_unused]] const bool kRegistered = tiletune::RegisterPrebuiltKernelSet(&kSet);\n\n}  // namespace\n");
  return tuning::WriteFileAtomically(args.output, cc);
}

}  // namespace
}  // namespace tiletune

int main(int argc, char** argv) {
  absl::StatusOr<tiletune::CommandLine> line = tiletune::ParseCommandLine(
      std::vector<std::string>(argv + 1, argv + argc), tiletune::BakeFlags());
  if (line.ok() && line->help()) {
    std::printf("%s\n\nCompiles a tuning database's tuned kernels with NVRTC (no GPU needed) "
                "into a C++ source\nthat registers them with the library when linked "
                "(kernels/tiletune_kernels.bzl).\n\nflags:\n%s\nenvironment:\n%s\nexit codes: 0 "
                "written; 1 an error; 2 usage error\n",
                tiletune::kUsage, tiletune::FlagHelp(tiletune::BakeFlags()).c_str(),
                tiletune::EnvironmentHelp().c_str());
    return 0;
  }
  if (line.ok() && line->version()) {
    std::printf("%s\n", tiletune::VersionLine("bake").c_str());
    return 0;
  }
  absl::StatusOr<tiletune::BakeArguments> args =
      line.ok() ? tiletune::ParseArguments(*line) : line.status();
  if (!args.ok()) {
    std::fprintf(stderr, "bake: %s\n", tiletune::BoundedMessage(args.status().message()).c_str());
    return 2;
  }
  absl::Status baked = tiletune::Bake(*args);
  if (!baked.ok()) {
    std::fprintf(stderr, "bake: %s\n", tiletune::BoundedMessage(baked.message()).c_str());
    return 1;
  }
  return 0;
}

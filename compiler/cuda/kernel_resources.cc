#include "compiler/cuda/kernel_resources.h"

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "compiler/base/status_macros.h"

namespace tiletune {
namespace {

// The number just before `unit` in `line` ("... 16 bytes smem" -> 16), if any.
bool NumberBefore(absl::string_view line, absl::string_view unit, int64_t& value) {
  const size_t at = line.find(unit);
  if (at == absl::string_view::npos || at < 2) return false;
  size_t end = at - 1;  // the space before the unit
  size_t begin = end;
  while (begin > 0 && line[begin - 1] >= '0' && line[begin - 1] <= '9') --begin;
  return begin < end && absl::SimpleAtoi(line.substr(begin, end - begin), &value);
}

}  // namespace

absl::StatusOr<KernelResources> ParsePtxasLog(absl::string_view log) {
  KernelResources out;
  bool found = false;
  for (absl::string_view rest = log; !rest.empty();) {
    const size_t eol = rest.find('\n');
    const absl::string_view line = rest.substr(0, eol);
    rest = eol == absl::string_view::npos ? absl::string_view() : rest.substr(eol + 1);
    int64_t value = 0;
    if (line.find("Used ") != absl::string_view::npos && NumberBefore(line, "registers", value)) {
      out.registers = static_cast<int>(value);
      found = true;
      if (NumberBefore(line, "bytes smem", value)) out.static_shared = value;
    }
    if (NumberBefore(line, "bytes spill stores", value)) out.spill_bytes = value;
  }
  if (!found) {
    return absl::InvalidArgumentError(
        absl::StrCat("no register count in the ptxas log: '", log.substr(0, 300), "'"));
  }
  return out;
}

absl::StatusOr<KernelResources> CompileForResources(CompilationProvider& compiler,
                                                    const CudaSource& source,
                                                    const std::string& arch) {
  CompileOptions options;
  options.arch = arch;
  options.extra_flags = {"--ptxas-options=-v"};
  TT_ASSIGN_OR_RETURN(Cubin cubin, compiler.CompileToCubin(source, options));
  return ParsePtxasLog(cubin.log);
}

}  // namespace tiletune

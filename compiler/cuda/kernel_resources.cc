#include "compiler/cuda/kernel_resources.h"

#include <algorithm>
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

int ResidentCtas(const KernelResources& resources, int threads, int64_t dynamic_shared,
                 int max_threads_per_sm, int64_t shared_per_sm, int max_ctas_per_sm) {
  if (threads <= 0) return 0;
  const int warps = (threads + 31) / 32;
  // Registers go to warps in units of 256 (8 a thread).
  const int per_warp = (std::max(resources.registers, 1) * 32 + 255) / 256 * 256;
  int ctas = std::min(65536 / (per_warp * warps), max_threads_per_sm / threads);
  ctas = std::min(ctas, max_ctas_per_sm);
  const int64_t shared = resources.static_shared + dynamic_shared;
  if (shared > 0) {
    ctas = std::min<int64_t>(ctas, shared_per_sm / (shared + 1024));
  }
  return std::max(ctas, 0);
}

}  // namespace tiletune

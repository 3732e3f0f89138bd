#include "kernels/emulate/host_source.h"

#include <cctype>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "compiler/base/status_macros.h"
#include "kernels/emulate/host_abi.h"

namespace tiletune {
namespace {

// CUDA's keywords, built-in variables and the integer intrinsics the emitters use, as host
// C++. Operand and shared-memory helpers for the rewritten statements follow.
constexpr char kPreludeBody[] = R"(
extern "C" {
tt_emu_thread* tt_emu_current;
const tt_emu_host* tt_emu_host_api;
}
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __launch_bounds__(...)
#define __maxnreg__(...)
#define __align__(n) alignas(n)
#define __restrict__ __restrict
#define __grid_constant__
#define threadIdx (tt_emu_current->thread_idx)
#define blockIdx (tt_emu_current->block_idx)
#define blockDim (tt_emu_current->block_dim)
#define gridDim (tt_emu_current->grid_dim)

struct alignas(8) uint2 { unsigned x, y; };
struct alignas(16) uint4 { unsigned x, y, z, w; };
struct alignas(8) int2 { int x, y; };
struct alignas(16) int4 { int x, y, z, w; };
struct alignas(8) float2 { float x, y; };
struct alignas(16) float4 { float x, y, z, w; };
struct alignas(4) ushort2 { unsigned short x, y; };
inline uint2 make_uint2(unsigned x, unsigned y) { return uint2{x, y}; }
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return uint4{x, y, z, w}; }

inline void __syncthreads() { tt_emu_host_api->sync(tt_emu_block); }
inline void __syncwarp(unsigned = 0xffffffffu) { tt_emu_host_api->sync(tt_emu_warp); }
inline unsigned __cvta_generic_to_shared(const void* p) { return tt_emu_host_api->shared_address(p); }
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  const unsigned long long v = (static_cast<unsigned long long>(y) << 32) | x;
  unsigned r = 0;
  for (int i = 0; i < 4; ++i) r |= static_cast<unsigned>((v >> (8 * ((s >> (4 * i)) & 7))) & 0xff) << (8 * i);
  return r;
}
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned shift) {
  const unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
  return static_cast<unsigned>(v >> (shift & 31));
}
inline unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned shift) {
  const unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
  return static_cast<unsigned>((v << (shift & 31)) >> 32);
}
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(static_cast<unsigned>(x)); }
inline unsigned __umulhi(unsigned a, unsigned b) {
  return static_cast<unsigned>((static_cast<unsigned long long>(a) * b) >> 32);
}
inline float __uint_as_float(unsigned u) { float f; memcpy(&f, &u, 4); return f; }
inline unsigned __float_as_uint(float f) { unsigned u; memcpy(&u, &f, 4); return u; }
inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
inline int __float_as_int(float f) { int i; memcpy(&i, &f, 4); return i; }
template <typename T> inline T __ldg(const T* p) { return *p; }
// CUDA's min and max: the usual arithmetic conversions, as its overloads apply them.
template <typename A, typename B>
inline typename std::common_type<A, B>::type min(A a, B b) {
  typedef typename std::common_type<A, B>::type C;
  return C(b) < C(a) ? C(b) : C(a);
}
template <typename A, typename B>
inline typename std::common_type<A, B>::type max(A a, B b) {
  typedef typename std::common_type<A, B>::type C;
  return C(a) < C(b) ? C(b) : C(a);
}

template <typename T>
inline tt_emu_operand tt_emu_out(T& v) {
  tt_emu_operand o;
  o.out = static_cast<void*>(&v);
  o.in = 0;
  o.bytes = static_cast<int>(sizeof(T));
  return o;
}
template <typename T>
inline tt_emu_operand tt_emu_in(const T& v) {
  tt_emu_operand o;
  o.out = 0;
  o.in = 0;
  o.bytes = static_cast<int>(sizeof(T));
  if constexpr (std::is_floating_point<T>::value) {
    memcpy(&o.in, &v, sizeof(T));
  } else if constexpr (std::is_integral<T>::value || std::is_enum<T>::value) {
    o.in = static_cast<unsigned long long>(v);
  } else {  // a pointer (restrict-qualified ones are not std::is_pointer)
    o.in = static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(v));
  }
  return o;
}
template <typename T>
inline T* tt_emu_dynamic_shared() { return static_cast<T*>(tt_emu_host_api->dynamic_shared()); }
template <typename T>
inline T& tt_emu_static_shared(unsigned long long align) {
  return *static_cast<T*>(tt_emu_host_api->static_shared(sizeof(T), align));
}
)";

bool IsIdentifierChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Walks CUDA text, telling code from string literals, character literals and comments.
class Scanner {
 public:
  explicit Scanner(absl::string_view text) : text_(text) {}

  // Position of the next code occurrence of identifier `word` at or after `from`; npos
  // when there is none.
  size_t FindWord(absl::string_view word, size_t from) const {
    for (size_t i = from; i < text_.size();) {
      const size_t skip = SkipNonCode(i);
      if (skip != i) {
        i = skip;
        continue;
      }
      if (text_.compare(i, word.size(), word) == 0 && (i == 0 || !IsIdentifierChar(text_[i - 1])) &&
          (i + word.size() == text_.size() || !IsIdentifierChar(text_[i + word.size()]))) {
        return i;
      }
      ++i;
    }
    return absl::string_view::npos;
  }

  // Past a literal or comment starting at `i`; `i` itself when code starts there.
  size_t SkipNonCode(size_t i) const {
    if (text_.compare(i, 2, "//") == 0) {
      const size_t end = text_.find('\n', i);
      return end == absl::string_view::npos ? text_.size() : end;
    }
    if (text_.compare(i, 2, "/*") == 0) {
      const size_t end = text_.find("*/", i + 2);
      return end == absl::string_view::npos ? text_.size() : end + 2;
    }
    if (text_[i] == '"' || text_[i] == '\'') {
      const char quote = text_[i];
      size_t j = i + 1;
      while (j < text_.size() && text_[j] != quote) j += text_[j] == '\\' ? 2 : 1;
      return std::min(j + 1, text_.size());
    }
    return i;
  }

  // The position of the bracket closing the one at `open`; npos when unbalanced.
  size_t MatchingClose(size_t open) const {
    int depth = 0;
    for (size_t i = open; i < text_.size();) {
      const size_t skip = SkipNonCode(i);
      if (skip != i) {
        i = skip;
        continue;
      }
      const char c = text_[i];
      if (c == '(' || c == '[' || c == '{') ++depth;
      if (c == ')' || c == ']' || c == '}') {
        if (--depth == 0) return i;
      }
      ++i;
    }
    return absl::string_view::npos;
  }

  // Splits [begin, end) at code occurrences of `separator` outside any brackets.
  std::vector<absl::string_view> SplitTopLevel(size_t begin, size_t end, char separator) const {
    std::vector<absl::string_view> parts;
    int depth = 0;
    size_t start = begin;
    for (size_t i = begin; i < end;) {
      const size_t skip = SkipNonCode(i);
      if (skip != i) {
        i = skip;
        continue;
      }
      const char c = text_[i];
      if (c == '(' || c == '[' || c == '{') ++depth;
      if (c == ')' || c == ']' || c == '}') --depth;
      if (c == separator && depth == 0) {
        parts.push_back(text_.substr(start, i - start));
        start = i + 1;
      }
      ++i;
    }
    parts.push_back(text_.substr(start, end - start));
    return parts;
  }

 private:
  absl::string_view text_;
};

// `"=r"(v.x)` -> tt_emu_out(v.x); `"l"(p)` -> tt_emu_in(p).
absl::StatusOr<std::string> OperandCall(absl::string_view operand) {
  operand = absl::StripAsciiWhitespace(operand);
  const size_t open = operand.find('(');
  if (operand.empty() || operand[0] != '"' || open == absl::string_view::npos ||
      operand.back() != ')') {
    return absl::InvalidArgumentError(
        absl::StrCat("asm operand '", operand, "' is not \"c\"(expr)"));
  }
  const absl::string_view constraint = operand.substr(0, open);
  const absl::string_view expression = operand.substr(open);  // with its parentheses
  if (constraint.find('+') != absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("asm operand '", operand, "' is read and written ('+'): not emulated"));
  }
  const bool output = constraint.find('=') != absl::string_view::npos;
  return absl::StrCat(output ? "tt_emu_out" : "tt_emu_in", expression);
}

// One asm statement `asm ... ( ... )` spanning [begin, close] as a call to the emulator.
absl::StatusOr<std::string> AsmCall(const Scanner& scanner, absl::string_view text, size_t open,
                                    size_t close) {
  std::vector<absl::string_view> sections = scanner.SplitTopLevel(open + 1, close, ':');
  if (sections.size() > 4) {
    return absl::InvalidArgumentError(absl::StrCat("asm statement with ", sections.size(),
                                                   " sections: ", text.substr(open, close - open)));
  }
  const std::string tmpl(absl::StripAsciiWhitespace(sections[0]));
  std::vector<std::string> operands;
  int outputs = 0;
  for (size_t s = 1; s < sections.size() && s <= 2; ++s) {
    const size_t at = sections[s].data() - text.data();
    for (absl::string_view operand : scanner.SplitTopLevel(at, at + sections[s].size(), ',')) {
      if (absl::StripAsciiWhitespace(operand).empty()) continue;
      TT_ASSIGN_OR_RETURN(std::string call, OperandCall(operand));
      operands.push_back(std::move(call));
      if (s == 1) ++outputs;
    }
  }
  if (operands.empty()) {
    return absl::StrCat("do { tt_emu_host_api->run_asm(", tmpl, ", 0, 0, 0); } while (0)");
  }
  return absl::StrCat("do { tt_emu_operand tt_emu_ops[] = {", absl::StrJoin(operands, ", "),
                      "}; tt_emu_host_api->run_asm(", tmpl, ", tt_emu_ops, ", outputs, ", ",
                      operands.size(), "); } while (0)");
}

// Every asm statement of `text` as a call to the emulator.
absl::StatusOr<std::string> RewriteAsm(absl::string_view text) {
  const Scanner scanner(text);
  std::string out;
  size_t copied = 0;
  for (size_t at = scanner.FindWord("asm", 0); at != absl::string_view::npos;
       at = scanner.FindWord("asm", copied)) {
    const size_t open = text.find('(', at);
    const size_t close = open == absl::string_view::npos ? open : scanner.MatchingClose(open);
    if (close == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("unbalanced asm statement at: ", text.substr(at, 80)));
    }
    TT_ASSIGN_OR_RETURN(std::string call, AsmCall(scanner, text, open, close));
    absl::StrAppend(&out, text.substr(copied, at - copied), call);
    copied = close + 1;
  }
  absl::StrAppend(&out, text.substr(copied));
  return out;
}

// `[extern] __shared__ [__align__(A)] T name[[N]];` as a reference into the block's
// emulated shared memory.
absl::StatusOr<std::string> SharedDeclaration(absl::string_view statement, bool is_extern) {
  std::string rest(absl::StripAsciiWhitespace(statement));
  std::string align;
  if (absl::StartsWith(rest, "__align__(")) {
    const size_t close = rest.find(')');
    align = rest.substr(10, close - 10);
    rest = std::string(absl::StripAsciiWhitespace(rest.substr(close + 1)));
  }
  std::string extent;
  const size_t bracket = rest.find('[');
  if (bracket != std::string::npos) {
    extent = rest.substr(bracket + 1, rest.rfind(']') - bracket - 1);
    rest = std::string(absl::StripAsciiWhitespace(rest.substr(0, bracket)));
  }
  size_t name_start = rest.size();
  while (name_start > 0 && IsIdentifierChar(rest[name_start - 1])) --name_start;
  const std::string name = rest.substr(name_start);
  const std::string type(absl::StripAsciiWhitespace(rest.substr(0, name_start)));
  if (name.empty() || type.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("cannot read __shared__ ", statement));
  }
  if (is_extern) {
    return absl::StrCat(type, "* const ", name, " = tt_emu_dynamic_shared<", type, ">()");
  }
  const std::string full_type = extent.empty() ? type : absl::StrCat(type, "[", extent, "]");
  return absl::StrCat("auto& ", name, " = tt_emu_static_shared<", full_type, ">(",
                      align.empty() ? absl::StrCat("alignof(", type, ")") : align, ")");
}

absl::StatusOr<std::string> RewriteShared(absl::string_view text) {
  const Scanner scanner(text);
  std::string out;
  size_t copied = 0;
  for (size_t at = scanner.FindWord("__shared__", 0); at != absl::string_view::npos;
       at = scanner.FindWord("__shared__", copied)) {
    size_t begin = at;
    bool is_extern = false;
    const size_t line = text.rfind('\n', at);
    const absl::string_view before =
        absl::StripAsciiWhitespace(text.substr(line + 1, at - line - 1));
    if (before == "extern") {
      is_extern = true;
      begin = text.find("extern", line + 1);
    }
    const size_t end = text.find(';', at);
    if (end == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat("unterminated __shared__ at ", at));
    }
    const size_t body = at + std::string("__shared__").size();
    TT_ASSIGN_OR_RETURN(std::string declaration,
                        SharedDeclaration(text.substr(body, end - body), is_extern));
    absl::StrAppend(&out, text.substr(copied, begin - copied), declaration);
    copied = end;  // keeps the ';'
  }
  absl::StrAppend(&out, text.substr(copied));
  return out;
}

// A parameter declaration's type, as the entry casts its argument pointer to.
std::string ParameterType(absl::string_view parameter) {
  std::string p(absl::StripAsciiWhitespace(parameter));
  size_t name_start = p.size();
  while (name_start > 0 && IsIdentifierChar(p[name_start - 1])) --name_start;
  std::string type = p.substr(0, name_start);
  type = absl::StrReplaceAll(type, {{"__restrict__", ""}, {"__grid_constant__", ""}});
  return std::string(absl::StripAsciiWhitespace(type));
}

// The extern "C" entry calling `kernel_name` with the launch's arguments.
absl::StatusOr<std::string> Entry(absl::string_view text, absl::string_view kernel_name,
                                  absl::string_view entry) {
  const Scanner scanner(text);
  const size_t global = scanner.FindWord("__global__", 0);
  const size_t at =
      global == absl::string_view::npos ? global : scanner.FindWord(kernel_name, global);
  const size_t open = at == absl::string_view::npos ? at : text.find('(', at);
  const size_t close = open == absl::string_view::npos ? open : scanner.MatchingClose(open);
  if (close == absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("no __global__ kernel ", kernel_name, " in the source"));
  }
  std::vector<std::string> arguments;
  const std::vector<absl::string_view> parameters = scanner.SplitTopLevel(open + 1, close, ',');
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (absl::StripAsciiWhitespace(parameters[i]).empty()) continue;
    arguments.push_back(
        absl::StrCat("*reinterpret_cast<", ParameterType(parameters[i]), "*>(args[", i, "])"));
  }
  return absl::StrCat("extern \"C\" void ", entry, "(void** args) {\n  (void)args;\n  ",
                      kernel_name, "(", absl::StrJoin(arguments, ", "), ");\n}\n",
                      "extern \"C\" int ", entry, "_params() { return ", arguments.size(), "; }\n");
}

}  // namespace

std::string HostLibraryPrelude() {
  return absl::StrCat("#include <cstdint>\n#include <cstring>\n#include <type_traits>\n",
                      "extern \"C\" {\n", kHostAbiText, "\n}\n", kPreludeBody);
}

absl::StatusOr<std::string> HostKernelText(absl::string_view cuda, absl::string_view kernel_name,
                                           absl::string_view entry) {
  // Several kernels share a translation unit: a macro would leak from one to the next.
  // And asm spelled otherwise would not be rewritten.
  const Scanner scanner(cuda);
  for (absl::string_view refused : {"#define", "__asm__", "__asm"}) {
    const size_t at = refused[0] == '#' ? cuda.find(refused) : scanner.FindWord(refused, 0);
    if (at != absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat("the host emulator does not rewrite '",
                                                     refused, "' (at: ", cuda.substr(at, 60), ")"));
    }
  }
  // extern "C" goes: the kernel keeps C++ linkage inside its namespace.
  const std::string plain = absl::StrReplaceAll(cuda, {{"extern \"C\" __global__", "__global__"}});
  TT_ASSIGN_OR_RETURN(std::string text, RewriteAsm(plain));
  TT_ASSIGN_OR_RETURN(text, RewriteShared(text));
  TT_ASSIGN_OR_RETURN(std::string call, Entry(text, kernel_name, entry));
  return absl::StrCat("namespace ", entry, "_ns {\n", text, "\n", call, "}  // namespace ", entry,
                      "_ns\n");
}

}  // namespace tiletune

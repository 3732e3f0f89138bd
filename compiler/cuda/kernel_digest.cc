#include "compiler/cuda/kernel_digest.h"

#include <string>

#include "compiler/base/sha256.h"

namespace tiletune {

std::string KernelCode(absl::string_view source) {
  std::string code;
  code.reserve(source.size());
  bool pending_space = false;
  auto emit = [&](char c) {
    if (pending_space && !code.empty()) code.push_back(' ');
    pending_space = false;
    code.push_back(c);
  };
  for (size_t i = 0; i < source.size(); ++i) {
    const char c = source[i];
    if (c == '/' && i + 1 < source.size() && source[i + 1] == '/') {
      while (i < source.size() && source[i] != '\n') ++i;
      pending_space = true;
      continue;
    }
    if (c == '/' && i + 1 < source.size() && source[i + 1] == '*') {
      const size_t end = source.find("*/", i + 2);
      i = end == absl::string_view::npos ? source.size() : end + 1;
      pending_space = true;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      pending_space = true;
      continue;
    }
    if (c == '"' || c == '\'') {
      // A literal, escapes included, up to its closing quote (or the end of the line).
      emit(c);
      for (++i; i < source.size() && source[i] != c && source[i] != '\n'; ++i) {
        code.push_back(source[i]);
        if (source[i] == '\\' && i + 1 < source.size()) code.push_back(source[++i]);
      }
      if (i < source.size()) code.push_back(source[i]);
      continue;
    }
    emit(c);
  }
  return code;
}

std::string KernelDigest(absl::string_view source) { return Sha256Hex(KernelCode(source)); }

}  // namespace tiletune

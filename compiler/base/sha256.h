// SHA-256 of a byte string, as 64 lowercase hex digits.
//
// Used wherever tiletune names content: compile-cache keys and the generated-source hash
// recorded in tuning databases. Pure function, thread-safe.
//
//   std::string key = Sha256Hex(source_text);
#ifndef COMPILER_BASE_SHA256_H_
#define COMPILER_BASE_SHA256_H_

#include <array>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace tiletune {

// The 32-byte digest of `data`.
std::array<uint8_t, 32> Sha256(absl::string_view data);

// The digest of `data` as 64 lowercase hexadecimal characters.
std::string Sha256Hex(absl::string_view data);

}  // namespace tiletune

#endif  // COMPILER_BASE_SHA256_H_

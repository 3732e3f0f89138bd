// tiletune's version: the one place it is written. Every tool's --version prints it and
// every record a tuning writes carries it (Provenance.tool_version), so a database says
// which release measured it.
#ifndef COMPILER_BASE_VERSION_H_
#define COMPILER_BASE_VERSION_H_

namespace tiletune {

// Semantic version: the major part changes when a database or the C API stops being
// readable by the previous release.
inline constexpr char kVersion[] = "0.3.0";

// What records carry: "tiletune 0.3.0".
inline constexpr char kVersionTag[] = "tiletune 0.3.0";

}  // namespace tiletune

#endif  // COMPILER_BASE_VERSION_H_

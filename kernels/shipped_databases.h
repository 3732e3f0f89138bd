// Tuning databases built into the library: tuned by //autotune on the suites checked in
// under autotune/suites/ and embedded from kernels/tuned/ at build time, so a program
// linking //kernels:library gets tuned kernels with no file and no environment variable.
// Records carry the device they were tuned on (name and compute capability): on that
// GPU they resolve as exact, on another GPU of the same architecture as nearest, and
// elsewhere not at all (kernels/library.h).
#ifndef KERNELS_SHIPPED_DATABASES_H_
#define KERNELS_SHIPPED_DATABASES_H_

#include <string>
#include <vector>

namespace tiletune {

struct ShippedDatabase {
  // Where it came from, for messages ("kernels/tuned/h200.txtpb").
  std::string origin;
  // The database in text format.
  std::string text;
};

// The built-in databases, in the order they are consulted.
const std::vector<ShippedDatabase>& ShippedDatabases();

// The built-in cost models (tuning::CostModel in text format, from `autotune fit`), one per
// GPU model, fitted to that GPU's tunings: the autotuner measures the top k of the one
// whose device is the GPU it tunes on.
const std::vector<ShippedDatabase>& ShippedCostModels();

}  // namespace tiletune

#endif  // KERNELS_SHIPPED_DATABASES_H_

// One definition per tile operator: everything the layers above need to know about an
// operator, so that none of them has a branch per operator. The registry, tuned
// resolution, the tuner, the library, the command lines, the suite parser, the report and
// merge all reach operators through this interface (compiler/ops/registry.h).
//
//   TT_ASSIGN_OR_RETURN(const TileOpDefinition* copy, BuiltinTileOps().Find("copy"));
//   TT_ASSIGN_OR_RETURN(std::unique_ptr<TileOp> op, copy->ParseSpec("f16:8192,8192"));
//   TT_ASSIGN_OR_RETURN(auto lowered, copy->Lower(*op, target, launch));
//   CudaSource source = copy->Emit(*lowered);
//
// Adding an operator: a package compiler/ops/<op>/ with its IR (a TileOp), lowering,
// emitter, CPU reference and search space behind a TileOpDefinition; a message in the
// tuning database's Problem oneof; one line in RegisterBuiltinTileOps (builtin_ops.cc).
//
// Implementations are immutable and thread-safe. Methods taking a `const TileOp&` require
// an op of this operator (op_name() == name()); they are InvalidArgument otherwise.
#ifndef COMPILER_OPS_TILE_OP_DEFINITION_H_
#define COMPILER_OPS_TILE_OP_DEFINITION_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "compiler/cuda/artifacts.h"
#include "compiler/ir/data_type.h"
#include "compiler/ir/hints.h"
#include "compiler/ir/tile_op.h"
#include "compiler/lower/lowered_kernel.h"
#include "compiler/target/target.h"
#include "compiler/tuning_db/tuning_db.pb.h"

namespace tiletune {

// One point to try: hints and a launch.
struct Trial {
  Hints hints;
  LaunchParams launch;
};

// What a tuning search tries for one problem.
struct SearchSpace {
  // First phase: every hint set at one representative launch per path family.
  std::vector<Trial> first;
  // Second phase: every launch candidate, each with the best hint sets of the first.
  std::vector<LaunchParams> launches;
};

// The buffers of a problem and the traffic of one run.
struct OperandSizes {
  // Bytes from each buffer's first element to one past its farthest element.
  size_t input_bytes = 0;
  size_t output_bytes = 0;
  // Bytes one run reads plus writes (for GB/s).
  int64_t bytes_moved = 0;
};

// Where an op's regions start in its buffers, in bytes.
struct RegionOffsets {
  int64_t input_bytes = 0;
  int64_t output_bytes = 0;
};

// An operator's own command-line flag (`--kernel` for im2col).
struct OpFlag {
  std::string name;
  // One line: the values it takes.
  std::string help;
  // A true/false flag: a bare --name means true, and never takes the next argument.
  bool boolean = false;
};

// The item table of an operator whose items a launch lists at run time (batch_copy): the
// table's bytes and its entries.
struct ItemTableImage {
  std::vector<uint8_t> bytes;
  int64_t count = 0;
};

// Flag name -> value, as the command line gave them.
using FlagValues = std::map<std::string, std::string>;

// The largest power of two below `t` (1 for t <= 2).
inline int64_t PowerOfTwoBelow(int64_t t) {
  int64_t power = 1;
  while (power * 2 < t) power *= 2;
  return power;
}

// Halves a tile's outermost dimension above 1 (rows before columns, so each CTA keeps its
// contiguous run) to the largest power of two below it: 55 rows become 32, not 28, whose
// run of 28 x K elements would start tiles off the 16-byte boundary a wide store needs.
// False when every dimension is 1.
inline bool HalveOutermostTile(std::vector<int64_t>& tile) {
  for (int64_t& t : tile) {
    if (t > 1) {
      t = PowerOfTwoBelow(t);
      return true;
    }
  }
  return false;
}

class TileOpDefinition {
 public:
  virtual ~TileOpDefinition() = default;

  // --- Identity and IR ------------------------------------------------------------------

  // "copy"; the op_name() of its ops, the name in problem specs and --op flags, and the
  // Problem oneof field of its database records.
  virtual const std::string& name() const = 0;
  // Names of its operands, input then output ("src", "dst"), and its hint scope.
  virtual std::vector<std::string> operand_names() const = 0;
  virtual HintScope hint_scope() const = 0;
  // Operands, geometry and hints valid; InvalidArgument naming the bad value.
  virtual absl::Status Validate(const TileOp& op) const = 0;
  // One line: "copy f16 [8192, 8192]".
  virtual std::string Describe(const TileOp& op) const = 0;
  // Appends everything about `op` that can change its kernel, hints included, so that two
  // ops get the same key only when they lower to the same kernel (cache keys; no
  // allocation once `key` has grown).
  virtual void AppendKey(const TileOp& op, std::string& key) const = 0;

  // --- Problems in tuning databases -----------------------------------------------------

  // The problem in canonical form (every list written out).
  virtual absl::StatusOr<tuning::Problem> ToProblem(const TileOp& op) const = 0;
  // The op a problem of this operator describes (hints empty); InvalidArgument for one
  // that is not a valid problem.
  virtual absl::StatusOr<std::unique_ptr<TileOp>> FromProblem(
      const tuning::Problem& problem) const = 0;
  // Whether `lowering` names one of this operator's paths and forms.
  virtual absl::Status CheckLowering(const tuning::Lowering& lowering) const = 0;
  // Sizes in log space and shape classes of a problem: records whose features are near
  // transfer best (same length for every problem of the operator).
  virtual std::vector<double> TransferFeatures(const tuning::Problem& problem) const = 0;

  // --- Text -----------------------------------------------------------------------------

  // The problem-spec grammar after "<name>:", e.g. "DTYPE:D0,D1,...".
  virtual std::string SpecSyntax() const = 0;
  // Parses a spec (the text after "<name>:"); InvalidArgument naming the fault.
  virtual absl::StatusOr<std::unique_ptr<TileOp>> ParseSpec(absl::string_view spec) const = 0;
  // The spec (after "<name>:") that ParseSpec reads back as `op` with its hints left out:
  // the same ProblemKey. Unimplemented, saying why, where the grammar cannot express `op`
  // (a buffer that is not dense row-major).
  virtual absl::StatusOr<std::string> FormatSpec(const TileOp& op) const = 0;
  // Its own flags of `//compiler` (besides the common ones: --op, --dtype, --tile,
  // --threads, --stages, --ctas_per_sm, --target, --emit and the hint flags).
  virtual std::vector<OpFlag> flags() const = 0;
  // The op the flags describe, with `dtype` and `hints` already parsed.
  virtual absl::StatusOr<std::unique_ptr<TileOp>> FromFlags(const FlagValues& flags,
                                                            DataType dtype,
                                                            Hints hints) const = 0;

  // --- Compile --------------------------------------------------------------------------

  // Instruction selection under the op's hints for `target` and `launch`; InvalidArgument
  // naming every constraint that fails.
  virtual absl::StatusOr<std::shared_ptr<const LoweredTileKernel>> Lower(
      const TileOp& op, const Target& target, const LaunchParams& launch) const = 0;
  // The CUDA source of a kernel this operator lowered: a pure function of the lowering.
  virtual CudaSource Emit(const LoweredTileKernel& lowered) const = 0;
  // A multi-line plan: path, tiles, vectors, resources, then the decision log.
  virtual std::string DescribePlan(const LoweredTileKernel& lowered) const = 0;

  // --- Run ------------------------------------------------------------------------------

  virtual OperandSizes Sizes(const TileOp& op) const = 0;
  // Bytes from the input and output buffer pointers to the start addresses its kernels
  // take (a lowered kernel's input_offset_bytes, output_offset_bytes): a launch passes
  // them per op, so ops whose keys leave them out share one kernel. Since the key does
  // not cover them, this checks that the op's regions lie inside their buffers
  // (InvalidArgument or OutOfRange naming the region otherwise). Operators whose kernels
  // index whole buffers keep the default, 0 and 0.
  virtual absl::StatusOr<RegionOffsets> Offsets(const TileOp& op) const {
    return RegionOffsets{};
  }
  // Operators whose kernels take an item table (LoweredTileKernel::item_table): the table
  // tuning and verification launch `op` with, the same on every call, which Reference
  // applies. Others: empty.
  virtual ItemTableImage ExampleItems(const TileOp& op) const {
    (void)op;
    return {};
  }
  // Writes the expected output over `output` (which holds the caller's poison wherever
  // the op writes nothing), from host images of the input and output buffers.
  virtual absl::Status Reference(const TileOp& op, absl::Span<const uint8_t> input,
                                 absl::Span<uint8_t> output) const = 0;
  // Where output element `element` lies, for verification messages ("row m=3, column
  // k=17").
  virtual std::string DescribeOutputElement(const TileOp& op, int64_t element) const = 0;

  // --- Tune -----------------------------------------------------------------------------

  virtual SearchSpace Search(const TileOp& op, const Target& target) const = 0;
  // The built-in choice when nothing is tuned: hints (the op's own where it sets them)
  // and a launch that lowers for `op` on `target`.
  virtual Trial Heuristic(const TileOp& op, const Target& target) const = 0;
  // The widest vector, in bytes, that the op's fixed alignments (strides, starts, pixel
  // sizes) allow a plain access. When a record transfers, its coalesced_width is kept
  // where it is at least this wide for `op` (the tuner chose it over the wider forms);
  // where `op` allows wider, see TunedResolver's TransferredWidth (compiler/backend).
  virtual int WidestVectorBytes(const TileOp& op) const {
    (void)op;
    return 16;
  }
  // The kernel family a problem's records belong to, where some kernels run on one kind of
  // problem only (NCHW patches): a record of another family does not take over from the
  // nearest record for the wider vectors its kernel moves (TunedResolver). By default one
  // family.
  virtual std::string TransferFamily(const tuning::Problem& problem) const {
    (void)problem;
    return "";
  }
  // Whether records of another element size transfer to this operator's problems: then its
  // TransferFeatures tell the element sizes apart and AdaptLaunch converts their tiles. By
  // default only records of the problem's own element size do (tiles, vectors and
  // alignments are counted in elements).
  virtual bool TransfersAcrossElementSizes() const { return false; }
  // Halves a transferred tile's work once, for a tile that does not lower or leaves too
  // few tiles (TunedResolver): true with `tile` changed, false when it cannot shrink.
  // `tuned_form` is the record's form, as for AdaptLaunch. By default the outermost
  // dimension above 1 (HalveOutermostTile); an operator whose form gives a dimension a
  // structure (whole planes of taps) keeps it.
  virtual bool HalveTile(const TileOp& op, absl::string_view tuned_form,
                         std::vector<int64_t>& tile) const {
    (void)op;
    (void)tuned_form;
    return HalveOutermostTile(tile);
  }
  // A launch tuned for problem `from`, made to fit `op` when it transfers (tuned
  // resolution tries this first, then the launch as stored). `op` carries the hints it
  // will lower with: the record's, merged with the caller's. `tuned_form` is the form the
  // record's kernel took on its own problem (its lowering's form name, "" for none). By
  // default unchanged.
  virtual LaunchParams AdaptLaunch(const TileOp& op, const tuning::Problem& from,
                                   const LaunchParams& tuned,
                                   absl::string_view /*tuned_form*/) const {
    (void)op;
    (void)from;
    return tuned;
  }
};

// `op` as the operator's type, after checking it is one: InvalidArgument naming both
// operators otherwise. The definitions' Status-returning methods use it.
template <typename Op>
absl::StatusOr<const Op*> OpAs(const TileOp& op) {
  if (op.op_name() != Op::Name()) {
    return absl::InvalidArgumentError(
        std::string("a ") + op.op_name() + " op was given to the " + Op::Name() + " definition");
  }
  return static_cast<const Op*>(&op);
}

// `op` as the operator's type for methods that cannot return an error (Describe, AppendKey,
// Sizes, Search, ...): handing a definition another operator's op is a programming error
// (callers find the definition with TileOpRegistry::For), reported and aborted here
// rather than read as the wrong type.
template <typename Op>
const Op& OpRef(const TileOp& op) {
  if (op.op_name() != Op::Name()) {
    std::fprintf(stderr, "tiletune: internal error: a %s op was given to the %s definition\n",
                 op.op_name().c_str(), Op::Name().c_str());
    std::abort();
  }
  return static_cast<const Op&>(op);
}

// The same check for a lowered kernel, whose `op` names its operator.
template <typename Lowered>
const Lowered& LoweredRef(const LoweredTileKernel& lowered, const std::string& op_name) {
  if (lowered.op != op_name) {
    std::fprintf(stderr,
                 "tiletune: internal error: a lowered %s kernel was given to the %s definition\n",
                 lowered.op.c_str(), op_name.c_str());
    std::abort();
  }
  return static_cast<const Lowered&>(lowered);
}

}  // namespace tiletune

#endif  // COMPILER_OPS_TILE_OP_DEFINITION_H_

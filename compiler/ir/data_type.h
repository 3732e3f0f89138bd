// Element types of tiletune buffers.
//
// Data-movement kernels move bits: a type matters for its size (vector widths, TMA
// element formats) and its name, never for arithmetic.
//
//   TT_ASSIGN_OR_RETURN(DataType dtype, ParseDataType("bf16"));
//   int bytes = DataTypeBytes(dtype);  // 2
#ifndef COMPILER_IR_DATA_TYPE_H_
#define COMPILER_IR_DATA_TYPE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tiletune {

enum class DataType {
  kF64,
  kF32,
  kF16,
  kBF16,
  kF8E4M3,
  kI32,
  kI8,
  kU8,
};

// Every type, in declaration order.
const std::vector<DataType>& AllDataTypes();

// "f64", "f32", "f16", "bf16", "f8e4m3", "i32", "i8", "u8".
std::string DataTypeName(DataType dtype);

// Size of one element in bytes.
int DataTypeBytes(DataType dtype);

// Parses a name produced by DataTypeName (also accepts "float32"/"float16"/"bfloat16"/
// "float8_e4m3" spellings); InvalidArgument lists the accepted names.
absl::StatusOr<DataType> ParseDataType(absl::string_view name);

}  // namespace tiletune

#endif  // COMPILER_IR_DATA_TYPE_H_

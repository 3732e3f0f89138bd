#include "compiler/ir/data_type.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace tiletune {

const std::vector<DataType>& AllDataTypes() {
  static const std::vector<DataType>* const all = new std::vector<DataType>{
      DataType::kF64,    DataType::kF32, DataType::kF16, DataType::kBF16,
      DataType::kF8E4M3, DataType::kI32, DataType::kI8,  DataType::kU8};
  return *all;
}

std::string DataTypeName(DataType dtype) {
  switch (dtype) {
    case DataType::kF64: return "f64";
    case DataType::kF32: return "f32";
    case DataType::kF16: return "f16";
    case DataType::kBF16: return "bf16";
    case DataType::kF8E4M3: return "f8e4m3";
    case DataType::kI32: return "i32";
    case DataType::kI8: return "i8";
    case DataType::kU8: return "u8";
  }
  return "unknown";
}

int DataTypeBytes(DataType dtype) {
  switch (dtype) {
    case DataType::kF64: return 8;
    case DataType::kF32:
    case DataType::kI32: return 4;
    case DataType::kF16:
    case DataType::kBF16: return 2;
    case DataType::kF8E4M3:
    case DataType::kI8:
    case DataType::kU8: return 1;
  }
  return 0;
}

absl::StatusOr<DataType> ParseDataType(absl::string_view name) {
  std::string lower = absl::AsciiStrToLower(name);
  for (DataType dtype : AllDataTypes()) {
    if (lower == DataTypeName(dtype)) return dtype;
  }
  if (lower == "float64") return DataType::kF64;
  if (lower == "float32") return DataType::kF32;
  if (lower == "float16") return DataType::kF16;
  if (lower == "bfloat16") return DataType::kBF16;
  if (lower == "float8_e4m3" || lower == "float8_e4m3fn" || lower == "e4m3") {
    return DataType::kF8E4M3;
  }
  if (lower == "int32") return DataType::kI32;
  if (lower == "int8") return DataType::kI8;
  if (lower == "uint8") return DataType::kU8;
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown dtype '", name, "': accepted are f64, f32, f16, bf16, f8e4m3, i32, i8, u8"));
}

}  // namespace tiletune

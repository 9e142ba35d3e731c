#include "ir/dtype.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace accelmem {
namespace ir {
namespace {

struct DTypeInfo {
  DType dtype;
  absl::string_view name;
  int bits;
  bool is_float;
};

constexpr DTypeInfo kInfo[kNumDTypes] = {
    {DType::kFP32, "FP32", 32, true},    {DType::kFP16, "FP16", 16, true},
    {DType::kBF16, "BF16", 16, true},    {DType::kINT8, "INT8", 8, false},
    {DType::kUINT8, "UINT8", 8, false},  {DType::kINT16, "INT16", 16, false},
    {DType::kINT32, "INT32", 32, false}, {DType::kINT64, "INT64", 64, false},
    {DType::kINT4, "INT4", 4, false},    {DType::kFP4, "FP4", 4, true},
    {DType::kBOOL, "BOOL", 8, false},
};

const DTypeInfo& Info(DType dtype) { return kInfo[static_cast<int>(dtype)]; }

}  // namespace

int DTypeBits(DType dtype) { return Info(dtype).bits; }

absl::string_view DTypeName(DType dtype) { return Info(dtype).name; }

absl::StatusOr<DType> DTypeFromName(absl::string_view name) {
  for (const DTypeInfo& info : kInfo) {
    if (info.name == name) return info.dtype;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown dtype '", name, "'"));
}

bool IsFloatDType(DType dtype) { return Info(dtype).is_float; }

bool IsIntDType(DType dtype) { return !Info(dtype).is_float && dtype != DType::kBOOL; }

}  // namespace ir
}  // namespace accelmem

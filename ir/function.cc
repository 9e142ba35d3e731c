#include "ir/function.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace accelmem {
namespace ir {
namespace {
constexpr absl::string_view kNames[] = {"Opaque", "InCore", "AIC", "AIV", "Orchestration"};
}  // namespace

absl::string_view FunctionTypeName(FunctionType t) { return kNames[static_cast<int>(t)]; }

absl::StatusOr<FunctionType> FunctionTypeFromName(absl::string_view name) {
  for (int i = 0; i < 5; ++i) {
    if (kNames[i] == name) return static_cast<FunctionType>(i);
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown function type '", name, "'"));
}

bool IsInCoreType(FunctionType t) {
  return t == FunctionType::kInCore || t == FunctionType::kAIC || t == FunctionType::kAIV;
}

std::shared_ptr<const Function> Function::WithBody(StmtPtr new_body) const {
  return std::make_shared<Function>(name, type, params, return_types, std::move(new_body), loc);
}

std::shared_ptr<const Function> Function::WithParams(std::vector<VarPtr> new_params) const {
  return std::make_shared<Function>(name, type, std::move(new_params), return_types, body, loc);
}

}  // namespace ir
}  // namespace accelmem

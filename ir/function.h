// A function of the tile IR: name, kind, parameters, return types and body.
//
// Why the kind matters: AllocateMemoryAddr skips Orchestration functions, and the reserve
// space of `system.reserve_buffer` is Mat in AIC functions and Vec otherwise.
#ifndef ACCELMEM_IR_FUNCTION_H_
#define ACCELMEM_IR_FUNCTION_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/expr.h"
#include "ir/stmt.h"
#include "ir/types.h"

namespace accelmem {
namespace ir {

enum class FunctionType : uint8_t { kOpaque, kInCore, kAIC, kAIV, kOrchestration };

absl::string_view FunctionTypeName(FunctionType t);
// Unknown words are InvalidArgument "unknown function type 'X'".
absl::StatusOr<FunctionType> FunctionTypeFromName(absl::string_view name);
// InCore, AIC or AIV: code that runs on one core and whose tiles get on-chip addresses.
bool IsInCoreType(FunctionType t);

class Function {
 public:
  Function(std::string name, FunctionType type, std::vector<VarPtr> params,
           std::vector<TypePtr> return_types, StmtPtr body, SourceLoc loc = {})
      : name(std::move(name)),
        type(type),
        params(std::move(params)),
        return_types(std::move(return_types)),
        body(std::move(body)),
        loc(loc) {}
  // Copies with one part replaced (the rest shared).
  std::shared_ptr<const Function> WithBody(StmtPtr new_body) const;
  std::shared_ptr<const Function> WithParams(std::vector<VarPtr> new_params) const;

  const std::string name;
  const FunctionType type;
  const std::vector<VarPtr> params;
  const std::vector<TypePtr> return_types;
  const StmtPtr body;   // a SeqStmts
  const SourceLoc loc;  // of `def`
};
using FunctionPtr = std::shared_ptr<const Function>;

}  // namespace ir
}  // namespace accelmem

#endif  // ACCELMEM_IR_FUNCTION_H_

// A program: one or more functions, kept in text order (function names are unique).
#ifndef ACCELMEM_IR_PROGRAM_H_
#define ACCELMEM_IR_PROGRAM_H_

#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "ir/function.h"

namespace accelmem {
namespace ir {

class Program {
 public:
  explicit Program(std::vector<FunctionPtr> functions) : functions(std::move(functions)) {}
  // The function called `name`, or null.
  FunctionPtr Find(absl::string_view name) const;
  // A copy with function `i` replaced (the others shared).
  std::shared_ptr<const Program> WithFunction(size_t i, FunctionPtr f) const;

  const std::vector<FunctionPtr> functions;
};
using ProgramPtr = std::shared_ptr<const Program>;

}  // namespace ir
}  // namespace accelmem

#endif  // ACCELMEM_IR_PROGRAM_H_

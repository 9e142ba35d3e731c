// A program: one or more functions, kept in text order (function names are unique).
#ifndef ACCELMEM_IR_PROGRAM_H_
#define ACCELMEM_IR_PROGRAM_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
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

// The comments of a parsed text, for formatters (tile_fmt); not part of the IR, so passes and
// structural equality ignore them. Keys are Function* or Stmt* of the parsed program. Each
// string is the comment from '#' on.
struct Comments {
  // Full-line comments, printed on their own lines before the node.
  absl::flat_hash_map<const void*, std::vector<std::string>> leading;
  // A comment after code on the node's first line, printed at the end of that line.
  absl::flat_hash_map<const void*, std::string> trailing;
  // Comments after the last statement of the text.
  std::vector<std::string> end;
};

}  // namespace ir
}  // namespace accelmem

#endif  // ACCELMEM_IR_PROGRAM_H_

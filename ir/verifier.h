// The verifier: checks that a program is well formed; run it after parsing and between passes.
//
// Rules (each error names the function, the value and the rule):
// - SSA: every value is defined once and every name once per function; a use follows its
//   definition in an enclosing scope (loop bodies and branches are scopes; loop and `if`
//   results are visible after them).
// - Ops: registered, right arity and keywords, argument types accepted by the op's rule, and
//   the declared type of the result equal to what the rule gives (shape, dtype, space).
// - Structure: a loop's carried values match its inits and results, its body ends with a
//   `yield` of them; an `if` with results has an `else` and both branches end with such a
//   `yield`; `yield` appears nowhere else; `return` ends the function body and matches the
//   return types.
// - MemRefs: a tile's MemRef is in the tile's declared space, names a `tile.alloc` of the
//   function whose arguments equal the MemRef's fields, is large enough for the tile, and a
//   view stays inside its root; the result of a view op lives in its source's allocation at
//   the contract's offset (slice: row-major origin x element size; reshape: the source's),
//   and the result of a writes-into op is that argument's buffer.
#ifndef ACCELMEM_IR_VERIFIER_H_
#define ACCELMEM_IR_VERIFIER_H_

#include <string>

#include "absl/status/status.h"
#include "ir/op_registry.h"
#include "ir/program.h"
#include "ir/types.h"

namespace accelmem {
namespace ir {

struct VerifyOptions {
  std::string filename = "<input>";      // used in `file:line:col:` prefixes
  const OpRegistry* registry = nullptr;  // null: OpRegistry::Global()
  const TileByteSizer* sizer = nullptr;  // null: DefaultTileByteSizer()
};

// OK, or InvalidArgument "file:line:col: error: in function 'F': value 'v': <rule>: ..." (the
// location is left out when the offending node has none, e.g. one made by a pass).
absl::Status VerifyProgram(const Program& program, const VerifyOptions& options = {});
absl::Status VerifyFunction(const Function& function, const VerifyOptions& options = {});

}  // namespace ir
}  // namespace accelmem

#endif  // ACCELMEM_IR_VERIFIER_H_

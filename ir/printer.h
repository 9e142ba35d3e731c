// The printer: IR -> the canonical tile-IR text (grammar in docs/tile_ir.md).
//
// Canonical form: 4-space indentation, `@function(type=T)` only for non-Opaque functions, one
// blank line between functions, lists `[a, b]`, keywords `key=value`, integers in decimal,
// floats in the shortest decimal form that reads back to the same double, tuples of one as
// `(a,)`, tiles with a MemRef as `Tile[[..], DType, memref=NAME(+OFFSET)]` (space implied),
// an empty body as `pass`. Parsing the output gives a structurally equal program and printing
// that again gives the same bytes. Comments are not part of the IR; a formatter passes the
// Comments the parser collected (ParseOptions::comments) to keep them.
#ifndef ACCELMEM_IR_PRINTER_H_
#define ACCELMEM_IR_PRINTER_H_

#include <string>

#include "ir/expr.h"
#include "ir/function.h"
#include "ir/program.h"
#include "ir/stmt.h"

namespace accelmem {
namespace ir {

std::string PrintProgram(const Program& program, const Comments* comments = nullptr);
std::string PrintFunction(const Function& function);
// One statement (and its nested bodies) at `indent` levels of 4 spaces, ending in a newline.
std::string PrintStmt(const Stmt& stmt, int indent = 0);
std::string PrintExpr(const Expr& expr);
// Shortest decimal text that reads back to `v` and always looks like a float ("1.0", "2.5e-07").
std::string FormatFloat(double v);
// `"..."` with \" \\ \n \t \r and \xHH escapes.
std::string QuoteString(const std::string& s);

}  // namespace ir
}  // namespace accelmem

#endif  // ACCELMEM_IR_PRINTER_H_

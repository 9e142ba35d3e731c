// Expressions of the tile IR: values (Var), literals, lists, bare words and op calls.
//
// Nodes are immutable and shared by pointer (ExprPtr). A Var is identified by its object,
// not its name; names only matter for printing. Calls are in A-normal form: arguments are
// Vars, literals or lists of them, never nested calls. A Call names its op by string; the op's
// arity, result type and memory behaviour come from ir/op_registry.h.
// `loc` fields record where the parser found a node (for diagnostics); they never take part
// in structural equality.
#ifndef ACCELMEM_IR_EXPR_H_
#define ACCELMEM_IR_EXPR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "ir/dtype.h"
#include "ir/memory_space.h"
#include "ir/types.h"

namespace accelmem {
namespace ir {

// 1-based line and column in the source text; line 0 means "made by a pass, no location".
struct SourceLoc {
  int line = 0;
  int col = 0;
  bool known() const { return line > 0; }
};

enum class ExprKind : uint8_t { kVar, kInt, kFloat, kString, kList, kSpace, kDType, kCall };

class Expr {
 public:
  explicit Expr(ExprKind kind) : kind(kind) {}
  virtual ~Expr() = default;
  const ExprKind kind;
};
using ExprPtr = std::shared_ptr<const Expr>;

// An SSA value. Defined once (assignment, parameter, loop variable, carried value or result).
class Var final : public Expr {
 public:
  Var(std::string name, TypePtr type, SourceLoc loc = {})
      : Expr(ExprKind::kVar), name(std::move(name)), type(std::move(type)), loc(loc) {}
  const std::string name;
  const TypePtr type;
  const SourceLoc loc;  // of the defining occurrence
};
using VarPtr = std::shared_ptr<const Var>;

class IntImm final : public Expr {
 public:
  explicit IntImm(int64_t value) : Expr(ExprKind::kInt), value(value) {}
  const int64_t value;
};

class FloatImm final : public Expr {
 public:
  explicit FloatImm(double value) : Expr(ExprKind::kFloat), value(value) {}
  const double value;
};

class StringImm final : public Expr {
 public:
  explicit StringImm(std::string value) : Expr(ExprKind::kString), value(std::move(value)) {}
  const std::string value;
};

// `[a, b, ...]`
class ListExpr final : public Expr {
 public:
  explicit ListExpr(std::vector<ExprPtr> items) : Expr(ExprKind::kList), items(std::move(items)) {}
  const std::vector<ExprPtr> items;
};

// A memory space written as a bare word (`Vec`).
class SpaceImm final : public Expr {
 public:
  explicit SpaceImm(MemorySpace space) : Expr(ExprKind::kSpace), space(space) {}
  const MemorySpace space;
};

// A dtype written as a bare word (`FP16`).
class DTypeImm final : public Expr {
 public:
  explicit DTypeImm(DType dtype) : Expr(ExprKind::kDType), dtype(dtype) {}
  const DType dtype;
};

using Kwargs = std::vector<std::pair<std::string, ExprPtr>>;

// `op(args..., key=value...)`
class Call final : public Expr {
 public:
  Call(std::string op, std::vector<ExprPtr> args, Kwargs kwargs = {}, SourceLoc loc = {})
      : Expr(ExprKind::kCall),
        op(std::move(op)),
        args(std::move(args)),
        kwargs(std::move(kwargs)),
        loc(loc) {}
  // The value of keyword `key`, or null.
  const ExprPtr* FindKwarg(absl::string_view key) const;

  const std::string op;
  const std::vector<ExprPtr> args;
  const Kwargs kwargs;
  const SourceLoc loc;  // of the op name
};
using CallPtr = std::shared_ptr<const Call>;

// Constructors.
VarPtr MakeVar(std::string name, TypePtr type, SourceLoc loc = {});
ExprPtr MakeInt(int64_t value);
ExprPtr MakeFloat(double value);
ExprPtr MakeString(std::string value);
ExprPtr MakeList(std::vector<ExprPtr> items);
ExprPtr MakeIntList(const std::vector<int64_t>& values);
ExprPtr MakeSpace(MemorySpace space);
ExprPtr MakeDType(DType dtype);
CallPtr MakeCall(std::string op, std::vector<ExprPtr> args, Kwargs kwargs = {}, SourceLoc loc = {});

// Checked down-casts: null when the kind differs.
const Var* AsVar(const Expr* e);
const IntImm* AsInt(const Expr* e);
const FloatImm* AsFloat(const Expr* e);
const StringImm* AsString(const Expr* e);
const ListExpr* AsList(const Expr* e);
const SpaceImm* AsSpace(const Expr* e);
const DTypeImm* AsDType(const Expr* e);
const Call* AsCall(const Expr* e);
VarPtr AsVarPtr(const ExprPtr& e);
CallPtr AsCallPtr(const ExprPtr& e);

// The type of a Var, else null (literals are untyped).
const Type* TypeOfExpr(const Expr& e);

// `[1, 2]` of integer literals -> {1, 2}; false if `e` is anything else.
bool GetIntList(const Expr& e, std::vector<int64_t>* out);

}  // namespace ir
}  // namespace accelmem

#endif  // ACCELMEM_IR_EXPR_H_

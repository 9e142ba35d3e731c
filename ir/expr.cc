#include "ir/expr.h"

#include <vector>

namespace accelmem {
namespace ir {

const ExprPtr* Call::FindKwarg(absl::string_view key) const {
  for (const auto& kv : kwargs) {
    if (kv.first == key) return &kv.second;
  }
  return nullptr;
}

VarPtr MakeVar(std::string name, TypePtr type, SourceLoc loc) {
  return std::make_shared<Var>(std::move(name), std::move(type), loc);
}
ExprPtr MakeInt(int64_t value) {
  // Small literals (offsets, shapes, addresses -1) are shared: nodes are immutable.
  constexpr int64_t kLo = -16, kHi = 1024;
  static const std::vector<ExprPtr>* cache = [] {
    auto* v = new std::vector<ExprPtr>();
    for (int64_t i = kLo; i < kHi; ++i) v->push_back(std::make_shared<IntImm>(i));
    return v;
  }();
  if (value >= kLo && value < kHi) return (*cache)[value - kLo];
  return std::make_shared<IntImm>(value);
}
ExprPtr MakeFloat(double value) { return std::make_shared<FloatImm>(value); }
ExprPtr MakeString(std::string value) { return std::make_shared<StringImm>(std::move(value)); }
ExprPtr MakeList(std::vector<ExprPtr> items) {
  return std::make_shared<ListExpr>(std::move(items));
}
ExprPtr MakeIntList(const std::vector<int64_t>& values) {
  std::vector<ExprPtr> items;
  items.reserve(values.size());
  for (int64_t v : values) items.push_back(MakeInt(v));
  return MakeList(std::move(items));
}
ExprPtr MakeSpace(MemorySpace space) { return std::make_shared<SpaceImm>(space); }
ExprPtr MakeDType(DType dtype) { return std::make_shared<DTypeImm>(dtype); }
CallPtr MakeCall(std::string op, std::vector<ExprPtr> args, Kwargs kwargs, SourceLoc loc) {
  return std::make_shared<Call>(std::move(op), std::move(args), std::move(kwargs), loc);
}

#define ACCELMEM_IR_AS(Name, Class, Kind)                                                      \
  const Class* Name(const Expr* e) {                                                           \
    return e != nullptr && e->kind == ExprKind::Kind ? static_cast<const Class*>(e) : nullptr; \
  }
ACCELMEM_IR_AS(AsVar, Var, kVar)
ACCELMEM_IR_AS(AsInt, IntImm, kInt)
ACCELMEM_IR_AS(AsFloat, FloatImm, kFloat)
ACCELMEM_IR_AS(AsString, StringImm, kString)
ACCELMEM_IR_AS(AsList, ListExpr, kList)
ACCELMEM_IR_AS(AsSpace, SpaceImm, kSpace)
ACCELMEM_IR_AS(AsDType, DTypeImm, kDType)
ACCELMEM_IR_AS(AsCall, Call, kCall)
#undef ACCELMEM_IR_AS

VarPtr AsVarPtr(const ExprPtr& e) {
  return e != nullptr && e->kind == ExprKind::kVar ? std::static_pointer_cast<const Var>(e)
                                                   : nullptr;
}
CallPtr AsCallPtr(const ExprPtr& e) {
  return e != nullptr && e->kind == ExprKind::kCall ? std::static_pointer_cast<const Call>(e)
                                                    : nullptr;
}

const Type* TypeOfExpr(const Expr& e) {
  const Var* v = AsVar(&e);
  return v != nullptr ? v->type.get() : nullptr;
}

bool GetIntList(const Expr& e, std::vector<int64_t>* out) {
  const ListExpr* list = AsList(&e);
  if (list == nullptr) return false;
  out->clear();
  out->reserve(list->items.size());
  for (const ExprPtr& item : list->items) {
    const IntImm* i = AsInt(item.get());
    if (i == nullptr) return false;
    out->push_back(i->value);
  }
  return true;
}

}  // namespace ir
}  // namespace accelmem

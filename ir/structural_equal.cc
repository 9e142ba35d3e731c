#include "ir/structural_equal.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/printer.h"

namespace accelmem {
namespace ir {
namespace {

// The statements of a body with nested sequences spliced and, when MemRefs are ignored,
// tile.alloc statements left out.
std::vector<const Stmt*> Flat(const StmtPtr& body, const StructuralEqualOptions& o) {
  std::vector<const Stmt*> out;
  std::function<void(const Stmt*)> add = [&](const Stmt* s) {
    if (s == nullptr) return;
    if (const SeqStmts* seq = AsSeq(s)) {
      for (const StmtPtr& c : seq->stmts) add(c.get());
      return;
    }
    if (!o.compare_memrefs && AsAllocCall(*s) != nullptr) return;
    out.push_back(s);
  };
  add(body.get());
  return out;
}

bool SameFloat(double a, double b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return std::memcmp(&a, &b, sizeof(double)) == 0;
}

const char* StmtName(StmtKind k) {
  switch (k) {
    case StmtKind::kAssign:
      return "AssignStmt";
    case StmtKind::kEval:
      return "EvalStmt";
    case StmtKind::kSeq:
      return "SeqStmts";
    case StmtKind::kFor:
      return "ForStmt";
    case StmtKind::kIf:
      return "IfStmt";
    case StmtKind::kYield:
      return "YieldStmt";
    case StmtKind::kReturn:
      return "ReturnStmt";
  }
  return "?";
}

// Keyword arguments that take part in the comparison.
Kwargs ComparedKwargs(const Call& c, const StructuralEqualOptions& o) {
  if (o.compare_addresses || c.op != "system.reserve_buffer") return c.kwargs;
  Kwargs out;
  for (const auto& kv : c.kwargs) {
    if (kv.first != "base") out.push_back(kv);
  }
  return out;
}

class Comparer {
 public:
  explicit Comparer(const StructuralEqualOptions& o) : o_(o) {}

  bool Programs(const Program& a, const Program& b) {
    if (a.functions.size() != b.functions.size()) {
      return Fail(absl::StrCat(a.functions.size(), " functions vs ", b.functions.size()));
    }
    for (size_t i = 0; i < a.functions.size(); ++i) {
      if (!Functions(*a.functions[i], *b.functions[i])) return false;
    }
    return true;
  }

  bool Functions(const Function& a, const Function& b) {
    Scope s(this, absl::StrCat("function '", a.name, "'"));
    vars_l_.clear();
    vars_r_.clear();
    roots_l_.clear();
    roots_r_.clear();
    names_l_.clear();
    names_r_.clear();
    if (a.name != b.name) return Fail(absl::StrCat("name '", a.name, "' vs '", b.name, "'"));
    if (a.type != b.type) {
      return Fail(
          absl::StrCat("type ", FunctionTypeName(a.type), " vs ", FunctionTypeName(b.type)));
    }
    if (a.params.size() != b.params.size()) {
      return Fail(absl::StrCat(a.params.size(), " params vs ", b.params.size()));
    }
    for (size_t i = 0; i < a.params.size(); ++i) {
      Scope p(this, absl::StrCat("param[", i, "] '", a.params[i]->name, "'"));
      if (!DefVar(*a.params[i], *b.params[i])) return false;
    }
    if (a.return_types.size() != b.return_types.size()) {
      return Fail(absl::StrCat(a.return_types.size(), " return types vs ", b.return_types.size()));
    }
    for (size_t i = 0; i < a.return_types.size(); ++i) {
      Scope p(this, absl::StrCat("return_type[", i, "]"));
      if (!Types(*a.return_types[i], *b.return_types[i])) return false;
    }
    Scope body(this, "body");
    return Bodies(a.body, b.body);
  }

  const std::string& diff() const { return diff_; }

 private:
  struct Scope {
    Scope(Comparer* c, std::string label) : c(c) { c->path_.push_back(std::move(label)); }
    ~Scope() { c->path_.pop_back(); }
    Comparer* c;
  };

  bool Fail(const std::string& what) {
    if (diff_.empty()) diff_ = absl::StrCat(absl::StrJoin(path_, " > "), ": ", what);
    return false;
  }

  bool Bodies(const StmtPtr& a, const StmtPtr& b) {
    std::vector<const Stmt*> fa = Flat(a, o_);
    std::vector<const Stmt*> fb = Flat(b, o_);
    for (size_t i = 0; i < fa.size() && i < fb.size(); ++i) {
      std::string label = absl::StrCat("[", i, "] ", StmtName(fa[i]->kind));
      if (const AssignStmt* as = AsAssign(fa[i])) absl::StrAppend(&label, " '", as->var->name, "'");
      Scope s(this, label);
      if (!Stmts(*fa[i], *fb[i])) return false;
    }
    if (fa.size() != fb.size()) {
      return Fail(absl::StrCat(fa.size(), " statements vs ", fb.size()));
    }
    return true;
  }

  bool VarLists(const std::vector<VarPtr>& a, const std::vector<VarPtr>& b, const char* what) {
    if (a.size() != b.size()) return Fail(absl::StrCat(a.size(), " ", what, " vs ", b.size()));
    for (size_t i = 0; i < a.size(); ++i) {
      Scope s(this, absl::StrCat(what, "[", i, "] '", a[i]->name, "'"));
      if (!DefVar(*a[i], *b[i])) return false;
    }
    return true;
  }

  bool ExprLists(const std::vector<ExprPtr>& a, const std::vector<ExprPtr>& b, const char* what) {
    if (a.size() != b.size()) return Fail(absl::StrCat(a.size(), " ", what, " vs ", b.size()));
    for (size_t i = 0; i < a.size(); ++i) {
      Scope s(this, absl::StrCat(what, "[", i, "]"));
      if (!Exprs(*a[i], *b[i])) return false;
    }
    return true;
  }

  bool Stmts(const Stmt& a, const Stmt& b) {
    if (a.kind != b.kind) return Fail(absl::StrCat(StmtName(a.kind), " vs ", StmtName(b.kind)));
    switch (a.kind) {
      case StmtKind::kAssign: {
        const auto& x = static_cast<const AssignStmt&>(a);
        const auto& y = static_cast<const AssignStmt&>(b);
        {
          Scope s(this, "value");
          if (!Exprs(*x.value, *y.value)) return false;
        }
        return DefVar(*x.var, *y.var);
      }
      case StmtKind::kEval:
        return Exprs(*static_cast<const EvalStmt&>(a).expr, *static_cast<const EvalStmt&>(b).expr);
      case StmtKind::kSeq:
        return Bodies(std::shared_ptr<const Stmt>(&a, [](const Stmt*) {}),
                      std::shared_ptr<const Stmt>(&b, [](const Stmt*) {}));
      case StmtKind::kFor: {
        const auto& x = static_cast<const ForStmt&>(a);
        const auto& y = static_cast<const ForStmt&>(b);
        if (!ExprLists({x.start, x.stop, x.step}, {y.start, y.stop, y.step}, "bound")) return false;
        if (!ExprLists(x.inits, y.inits, "init")) return false;
        if (x.pipeline != y.pipeline) {
          return Fail(absl::StrCat("pipeline depth ", x.pipeline, " vs ", y.pipeline));
        }
        {
          Scope s(this, "loop_var");
          if (!DefVar(*x.loop_var, *y.loop_var)) return false;
        }
        if (!VarLists(x.iter_args, y.iter_args, "iter_arg")) return false;
        {
          Scope s(this, "body");
          if (!Bodies(x.body, y.body)) return false;
        }
        return VarLists(x.return_vars, y.return_vars, "result");
      }
      case StmtKind::kIf: {
        const auto& x = static_cast<const IfStmt&>(a);
        const auto& y = static_cast<const IfStmt&>(b);
        {
          Scope s(this, "cond");
          if (!Exprs(*x.cond, *y.cond)) return false;
        }
        {
          Scope s(this, "then");
          if (!Bodies(x.then_body, y.then_body)) return false;
        }
        if ((x.else_body == nullptr) != (y.else_body == nullptr)) {
          return Fail(x.else_body ? "else branch vs none" : "no else branch vs one");
        }
        if (x.else_body != nullptr) {
          Scope s(this, "else");
          if (!Bodies(x.else_body, y.else_body)) return false;
        }
        return VarLists(x.return_vars, y.return_vars, "result");
      }
      case StmtKind::kYield:
        return ExprLists(static_cast<const YieldStmt&>(a).values,
                         static_cast<const YieldStmt&>(b).values, "value");
      case StmtKind::kReturn:
        return ExprLists(static_cast<const ReturnStmt&>(a).values,
                         static_cast<const ReturnStmt&>(b).values, "value");
    }
    return true;
  }

  bool DefVar(const Var& a, const Var& b) {
    {
      Scope s(this, "type");
      if (!Types(*a.type, *b.type)) return false;
    }
    auto il = vars_l_.find(&a);
    auto ir = vars_r_.find(&b);
    if (il != vars_l_.end() || ir != vars_r_.end()) {
      if (il != vars_l_.end() && il->second == &b) return true;
      return Fail(
          absl::StrCat("value '", a.name, "' vs '", b.name, "' are defined again inconsistently"));
    }
    vars_l_[&a] = &b;
    vars_r_[&b] = &a;
    names_l_[a.name] = &a;
    names_r_[b.name] = &b;
    return true;
  }

  bool UseVar(const Var& a, const Var& b) {
    auto il = vars_l_.find(&a);
    auto ir = vars_r_.find(&b);
    if (il == vars_l_.end() && ir == vars_r_.end()) {
      // Free values (not defined in the function): pair them on first use.
      vars_l_[&a] = &b;
      vars_r_[&b] = &a;
      return true;
    }
    if (il != vars_l_.end() && il->second == &b) return true;
    return Fail(absl::StrCat("value '", a.name, "' vs '", b.name, "'"));
  }

  bool Exprs(const Expr& a, const Expr& b) {
    if (a.kind != b.kind) return Fail(absl::StrCat(PrintExpr(a), " vs ", PrintExpr(b)));
    switch (a.kind) {
      case ExprKind::kVar:
        return UseVar(static_cast<const Var&>(a), static_cast<const Var&>(b));
      case ExprKind::kInt:
        if (static_cast<const IntImm&>(a).value == static_cast<const IntImm&>(b).value) return true;
        break;
      case ExprKind::kFloat:
        if (SameFloat(static_cast<const FloatImm&>(a).value,
                      static_cast<const FloatImm&>(b).value)) {
          return true;
        }
        break;
      case ExprKind::kString:
        if (static_cast<const StringImm&>(a).value == static_cast<const StringImm&>(b).value) {
          return true;
        }
        break;
      case ExprKind::kSpace:
        if (static_cast<const SpaceImm&>(a).space == static_cast<const SpaceImm&>(b).space)
          return true;
        break;
      case ExprKind::kDType:
        if (static_cast<const DTypeImm&>(a).dtype == static_cast<const DTypeImm&>(b).dtype)
          return true;
        break;
      case ExprKind::kList:
        return ExprLists(static_cast<const ListExpr&>(a).items,
                         static_cast<const ListExpr&>(b).items, "item");
      case ExprKind::kCall: {
        const auto& x = static_cast<const Call&>(a);
        const auto& y = static_cast<const Call&>(b);
        if (x.op != y.op) return Fail(absl::StrCat("op ", x.op, " vs ", y.op));
        if (x.args.size() != y.args.size()) {
          return Fail(absl::StrCat(x.args.size(), " arguments vs ", y.args.size()));
        }
        for (size_t i = 0; i < x.args.size(); ++i) {
          if (!o_.compare_addresses && i == 1 && x.op == "tile.alloc") continue;
          Scope s(this, absl::StrCat("args[", i, "]"));
          if (!Exprs(*x.args[i], *y.args[i])) return false;
        }
        Kwargs kx = ComparedKwargs(x, o_);
        Kwargs ky = ComparedKwargs(y, o_);
        if (kx.size() != ky.size()) {
          return Fail(absl::StrCat(kx.size(), " keyword arguments vs ", ky.size()));
        }
        for (size_t i = 0; i < kx.size(); ++i) {
          if (kx[i].first != ky[i].first) {
            return Fail(absl::StrCat("keyword '", kx[i].first, "' vs '", ky[i].first, "'"));
          }
          Scope s(this, kx[i].first);
          if (!Exprs(*kx[i].second, *ky[i].second)) return false;
        }
        return true;
      }
    }
    return Fail(absl::StrCat(PrintExpr(a), " vs ", PrintExpr(b)));
  }

  bool Shapes(const Shape& a, const Shape& b) {
    if (a.size() != b.size())
      return Fail(absl::StrCat("shape ", ShapeToString(a), " vs ", ShapeToString(b)));
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i].is_static() != b[i].is_static() || (a[i].is_static() && a[i].value != b[i].value)) {
        return Fail(absl::StrCat("shape ", ShapeToString(a), " vs ", ShapeToString(b)));
      }
      if (a[i].is_static()) continue;
      auto la = names_l_.find(a[i].symbol);
      auto lb = names_r_.find(b[i].symbol);
      bool same = (la != names_l_.end() && lb != names_r_.end())
                      ? vars_l_.at(la->second) == lb->second
                      : a[i].symbol == b[i].symbol;
      if (!same) return Fail(absl::StrCat("shape ", ShapeToString(a), " vs ", ShapeToString(b)));
    }
    return true;
  }

  bool Types(const Type& a, const Type& b) {
    if (a.kind != b.kind) return Fail(absl::StrCat(TypeToString(a), " vs ", TypeToString(b)));
    switch (a.kind) {
      case TypeKind::kTile: {
        const auto& x = static_cast<const TileType&>(a);
        const auto& y = static_cast<const TileType&>(b);
        if (!Shapes(x.shape, y.shape)) return false;
        if (x.dtype != y.dtype || x.space != y.space || x.layout != y.layout) {
          return Fail(absl::StrCat(TypeToString(a), " vs ", TypeToString(b)));
        }
        if (!o_.compare_memrefs) return true;
        Scope s(this, "memref");
        return MemRefs(x.memref.get(), y.memref.get());
      }
      case TypeKind::kTensor: {
        const auto& x = static_cast<const TensorType&>(a);
        const auto& y = static_cast<const TensorType&>(b);
        if (!Shapes(x.shape, y.shape)) return false;
        if (x.dtype != y.dtype) return Fail(absl::StrCat(TypeToString(a), " vs ", TypeToString(b)));
        return true;
      }
      case TypeKind::kScalar:
        if (static_cast<const ScalarType&>(a).dtype != static_cast<const ScalarType&>(b).dtype) {
          return Fail(absl::StrCat(TypeToString(a), " vs ", TypeToString(b)));
        }
        return true;
      case TypeKind::kIndex:
        return true;
      case TypeKind::kMemRef: {
        if (!o_.compare_memrefs) return true;
        Scope s(this, "memref");
        return MemRefs(static_cast<const MemRefType&>(a).memref.get(),
                       static_cast<const MemRefType&>(b).memref.get());
      }
    }
    return true;
  }

  bool MemRefs(const MemRef* a, const MemRef* b) {
    if (a == nullptr || b == nullptr) {
      if (a == b) return true;
      return Fail(a ? absl::StrCat(MemRefToString(*a), " vs none")
                    : absl::StrCat("none vs ", MemRefToString(*b)));
    }
    const MemRef* ra = a->root();
    const MemRef* rb = b->root();
    auto il = roots_l_.find(ra);
    auto ir = roots_r_.find(rb);
    if (il == roots_l_.end() && ir == roots_r_.end()) {
      if (ra->space() != rb->space() || ra->size() != rb->size() || ra->id() != rb->id() ||
          ra->slots() != rb->slots() || ra->declared() != rb->declared() ||
          (o_.compare_addresses && ra->addr() != rb->addr())) {
        return Fail(absl::StrCat("root ", ra->name(), " (", MemorySpaceName(ra->space()), ", addr ",
                                 ra->addr(), ", size ", ra->size(), ", id ", ra->id(), ", slots ",
                                 ra->slots(), ra->declared() ? ", declared" : "", ") vs ",
                                 rb->name(), " (", MemorySpaceName(rb->space()), ", addr ",
                                 rb->addr(), ", size ", rb->size(), ", id ", rb->id(), ", slots ",
                                 rb->slots(), rb->declared() ? ", declared" : "", ")"));
      }
      roots_l_[ra] = rb;
      roots_r_[rb] = ra;
    } else if (il == roots_l_.end() || il->second != rb) {
      return Fail(absl::StrCat("memref '", a->name(), "' vs '", b->name(), "'"));
    }
    if (a->is_view() != b->is_view() || a->offset() != b->offset() || a->slot() != b->slot() ||
        (a->is_view() && a->size() != b->size())) {
      return Fail(absl::StrCat(MemRefToString(*a), " (offset ", a->offset(), ", size ", a->size(),
                               ") vs ", MemRefToString(*b), " (offset ", b->offset(), ", size ",
                               b->size(), ")"));
    }
    return true;
  }

  const StructuralEqualOptions& o_;
  std::vector<std::string> path_;
  std::string diff_;
  absl::flat_hash_map<const Var*, const Var*> vars_l_, vars_r_;
  absl::flat_hash_map<std::string, const Var*> names_l_, names_r_;
  absl::flat_hash_map<const MemRef*, const MemRef*> roots_l_, roots_r_;
};

// ---------------------------------------------------------------------------------------------

class Hasher {
 public:
  explicit Hasher(const StructuralEqualOptions& o) : o_(o) {}

  void Function(const ir::Function& f) {
    vars_.clear();
    roots_.clear();
    names_.clear();
    Mix(std::hash<std::string>()(f.name));
    Mix(static_cast<size_t>(f.type));
    Mix(f.params.size());
    for (const VarPtr& p : f.params) DefVar(*p);
    Mix(f.return_types.size());
    for (const TypePtr& t : f.return_types) TypeH(*t);
    Body(f.body);
  }
  void Mix(size_t v) { h_ ^= v + 0x9e3779b97f4a7c15ULL + (h_ << 6) + (h_ >> 2); }
  size_t value() const { return h_; }

 private:
  void Body(const StmtPtr& body) {
    std::vector<const Stmt*> flat = Flat(body, o_);
    Mix(flat.size());
    for (const Stmt* s : flat) StmtH(*s);
  }
  void DefVar(const Var& v) {
    TypeH(*v.type);
    vars_.emplace(&v, vars_.size());
    names_[v.name] = &v;
  }
  void UseVar(const Var& v) {
    auto it = vars_.find(&v);
    Mix(it == vars_.end() ? 0x5eed : it->second + 1);
  }
  void StmtH(const Stmt& s) {
    Mix(static_cast<size_t>(s.kind) + 101);
    switch (s.kind) {
      case StmtKind::kAssign:
        ExprH(*static_cast<const AssignStmt&>(s).value);
        DefVar(*static_cast<const AssignStmt&>(s).var);
        return;
      case StmtKind::kEval:
        ExprH(*static_cast<const EvalStmt&>(s).expr);
        return;
      case StmtKind::kSeq:
        return;  // flattened away
      case StmtKind::kFor: {
        const auto& f = static_cast<const ForStmt&>(s);
        ExprH(*f.start);
        ExprH(*f.stop);
        ExprH(*f.step);
        Mix(f.inits.size());
        for (const ExprPtr& e : f.inits) ExprH(*e);
        if (f.pipeline > 0) Mix(static_cast<size_t>(f.pipeline));  // older hashes unchanged
        DefVar(*f.loop_var);
        for (const VarPtr& v : f.iter_args) DefVar(*v);
        Body(f.body);
        for (const VarPtr& v : f.return_vars) DefVar(*v);
        return;
      }
      case StmtKind::kIf: {
        const auto& i = static_cast<const IfStmt&>(s);
        ExprH(*i.cond);
        Body(i.then_body);
        Mix(i.else_body != nullptr);
        if (i.else_body) Body(i.else_body);
        Mix(i.return_vars.size());
        for (const VarPtr& v : i.return_vars) DefVar(*v);
        return;
      }
      case StmtKind::kYield:
        Mix(static_cast<const YieldStmt&>(s).values.size());
        for (const ExprPtr& e : static_cast<const YieldStmt&>(s).values) ExprH(*e);
        return;
      case StmtKind::kReturn:
        Mix(static_cast<const ReturnStmt&>(s).values.size());
        for (const ExprPtr& e : static_cast<const ReturnStmt&>(s).values) ExprH(*e);
        return;
    }
  }
  void ExprH(const Expr& e) {
    Mix(static_cast<size_t>(e.kind) + 211);
    switch (e.kind) {
      case ExprKind::kVar:
        UseVar(static_cast<const Var&>(e));
        return;
      case ExprKind::kInt:
        Mix(static_cast<size_t>(static_cast<const IntImm&>(e).value));
        return;
      case ExprKind::kFloat: {
        double d = static_cast<const FloatImm&>(e).value;
        if (std::isnan(d)) d = std::nan("");
        uint64_t bits;
        std::memcpy(&bits, &d, sizeof bits);
        Mix(std::isnan(d) ? 0x7ff8 : bits);
        return;
      }
      case ExprKind::kString:
        Mix(std::hash<std::string>()(static_cast<const StringImm&>(e).value));
        return;
      case ExprKind::kSpace:
        Mix(static_cast<size_t>(static_cast<const SpaceImm&>(e).space));
        return;
      case ExprKind::kDType:
        Mix(static_cast<size_t>(static_cast<const DTypeImm&>(e).dtype));
        return;
      case ExprKind::kList:
        Mix(static_cast<const ListExpr&>(e).items.size());
        for (const ExprPtr& i : static_cast<const ListExpr&>(e).items) ExprH(*i);
        return;
      case ExprKind::kCall: {
        const auto& c = static_cast<const Call&>(e);
        Mix(std::hash<std::string>()(c.op));
        Mix(c.args.size());
        for (size_t i = 0; i < c.args.size(); ++i) {
          if (!o_.compare_addresses && i == 1 && c.op == "tile.alloc") continue;
          ExprH(*c.args[i]);
        }
        for (const auto& kv : ComparedKwargs(c, o_)) {
          Mix(std::hash<std::string>()(kv.first));
          ExprH(*kv.second);
        }
        return;
      }
    }
  }
  void ShapeH(const Shape& s) {
    Mix(s.size());
    for (const Dim& d : s) {
      if (d.is_static()) {
        Mix(static_cast<size_t>(d.value));
      } else {
        auto it = names_.find(d.symbol);
        if (it != names_.end()) {
          UseVar(*it->second);
        } else {
          Mix(std::hash<std::string>()(d.symbol));
        }
      }
    }
  }
  void TypeH(const Type& t) {
    Mix(static_cast<size_t>(t.kind) + 307);
    if (const TileType* tile = AsTile(&t)) {
      ShapeH(tile->shape);
      Mix(static_cast<size_t>(tile->dtype));
      Mix(static_cast<size_t>(tile->space));
      // No layout mixes nothing, so hashes of programs without layouts do not change.
      if (tile->layout) Mix(static_cast<size_t>(*tile->layout) + 409);
      if (o_.compare_memrefs) MemRefH(tile->memref.get());
    } else if (const TensorType* tensor = AsTensor(&t)) {
      ShapeH(tensor->shape);
      Mix(static_cast<size_t>(tensor->dtype));
    } else if (const ScalarType* sc = AsScalar(&t)) {
      Mix(static_cast<size_t>(sc->dtype));
    } else if (const MemRefType* mt = AsMemRefType(&t)) {
      if (o_.compare_memrefs) MemRefH(mt->memref.get());
    }
  }
  void MemRefH(const MemRef* m) {
    if (m == nullptr) {
      Mix(0);
      return;
    }
    auto [it, inserted] = roots_.emplace(m->root(), roots_.size());
    Mix(it->second + 1);
    if (inserted) {
      Mix(static_cast<size_t>(m->space()));
      Mix(static_cast<size_t>(m->root()->size()));
      Mix(static_cast<size_t>(m->id()));
      if (o_.compare_addresses) Mix(static_cast<size_t>(m->root()->addr()));
      if (m->is_slotted()) Mix(static_cast<size_t>(m->slots()));
      if (m->declared()) Mix(0xdec1a2edu);
    }
    if (m->slot() >= 0) Mix(static_cast<size_t>(m->slot()) + 0x51077);
    Mix(m->is_view());
    Mix(static_cast<size_t>(m->offset()));
    if (m->is_view()) Mix(static_cast<size_t>(m->size()));
  }

  const StructuralEqualOptions& o_;
  size_t h_ = 0x1234567;
  absl::flat_hash_map<const Var*, size_t> vars_;
  absl::flat_hash_map<std::string, const Var*> names_;
  absl::flat_hash_map<const MemRef*, size_t> roots_;
};

}  // namespace

bool StructuralEqual(const Program& a, const Program& b, const StructuralEqualOptions& options) {
  return Comparer(options).Programs(a, b);
}
bool StructuralEqual(const Function& a, const Function& b, const StructuralEqualOptions& options) {
  return Comparer(options).Functions(a, b);
}
std::string FirstDifference(const Program& a, const Program& b,
                            const StructuralEqualOptions& options) {
  Comparer c(options);
  c.Programs(a, b);
  return c.diff();
}
std::string FirstDifference(const Function& a, const Function& b,
                            const StructuralEqualOptions& options) {
  Comparer c(options);
  c.Functions(a, b);
  return c.diff();
}
size_t StructuralHash(const Program& p, const StructuralEqualOptions& options) {
  Hasher h(options);
  h.Mix(p.functions.size());
  for (const FunctionPtr& f : p.functions) h.Function(*f);
  return h.value();
}
size_t StructuralHash(const Function& f, const StructuralEqualOptions& options) {
  Hasher h(options);
  h.Function(f);
  return h.value();
}

}  // namespace ir
}  // namespace accelmem

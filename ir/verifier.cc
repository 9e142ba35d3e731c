#include "ir/verifier.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "ir/checked_math.h"
#include "ir/printer.h"
#include "ir/view_layout.h"

namespace accelmem {
namespace ir {
namespace {

struct VerifyFailure {
  SourceLoc loc;
  std::string message;
};

std::string PlainType(const Type& t) {
  if (const TileType* tile = AsTile(&t); tile != nullptr && tile->memref != nullptr) {
    return TypeToString(*tile->WithMemRef(nullptr));
  }
  return TypeToString(t);
}

class FunctionVerifier {
 public:
  FunctionVerifier(const Function& f, const VerifyOptions& options)
      : f_(f),
        registry_(options.registry != nullptr ? options.registry : &OpRegistry::Global()),
        sizer_(options.sizer != nullptr ? options.sizer : &DefaultTileByteSizer()) {}

  void Run() {
    CollectAllocs(f_.body);
    scopes_.emplace_back();
    for (const VarPtr& p : f_.params) {
      CheckVarType(*p);
      Define(p);
    }
    const std::vector<StmtPtr> stmts = BodyStmts(f_.body);
    VerifyBlock(stmts, /*carries=*/nullptr, /*is_function_body=*/true);
    if (!f_.return_types.empty() && (stmts.empty() || stmts.back()->kind != StmtKind::kReturn)) {
      Fail(f_.loc, absl::StrCat("structure: function with return types must end with 'return'"));
    }
  }

 private:
  [[noreturn]] void Fail(SourceLoc loc, std::string message) const {
    throw VerifyFailure{loc, std::move(message)};
  }
  [[noreturn]] void FailValue(const Var& v, SourceLoc loc, absl::string_view rule,
                              absl::string_view message) const {
    Fail(loc.known() ? loc : v.loc, absl::StrCat("value '", v.name, "': ", rule, ": ", message));
  }

  // tile.alloc statements, keyed by their MemRef. An allocation is function-wide, so it must be
  // at the top level of the body: inside a loop or branch it would read as one per iteration.
  void CollectAllocs(const StmtPtr& s, bool nested = false) {
    if (s == nullptr) return;
    switch (s->kind) {
      case StmtKind::kSeq:
        for (const StmtPtr& c : static_cast<const SeqStmts&>(*s).stmts) CollectAllocs(c, nested);
        return;
      case StmtKind::kFor:
        CollectAllocs(static_cast<const ForStmt&>(*s).body, true);
        return;
      case StmtKind::kIf:
        CollectAllocs(static_cast<const IfStmt&>(*s).then_body, true);
        CollectAllocs(static_cast<const IfStmt&>(*s).else_body, true);
        return;
      case StmtKind::kAssign: {
        const auto& a = static_cast<const AssignStmt&>(*s);
        if (AsAllocCall(*s) == nullptr) return;
        if (nested) {
          FailValue(*a.var, a.var->loc, "memref",
                    "a tile.alloc must be at the top level of the function body, not inside a "
                    "loop or branch (an allocation holds for the whole function)");
        }
        const MemRefType* mt = AsMemRefType(a.var->type);
        if (mt == nullptr || mt->memref == nullptr) {
          FailValue(*a.var, a.var->loc, "memref",
                    "a tile.alloc must define a MemRefType value with literal arguments");
        }
        if (!mt->memref->is_root()) {
          FailValue(*a.var, a.var->loc, "memref", "a tile.alloc must define a root MemRef");
        }
        auto [it, inserted] = allocs_.emplace(mt->memref.get(), a.var.get());
        if (!inserted) {
          FailValue(*a.var, a.var->loc, "memref",
                    absl::StrCat("MemRef already allocated by '", it->second->name, "'"));
        }
        return;
      }
      default:
        return;
    }
  }

  void Define(const VarPtr& v) {
    if (!objects_.insert(v.get()).second) {
      FailValue(*v, v->loc, "ssa", "the same value object is defined twice");
    }
    auto [it, inserted] = names_.emplace(v->name, v->loc);
    if (!inserted) {
      FailValue(*v, v->loc, "ssa",
                it->second.known() ? absl::StrCat("redefined (first defined at ", it->second.line,
                                                  ":", it->second.col, ")")
                                   : std::string("redefined"));
    }
    scopes_.back()[v->name] = v.get();
  }

  const Var* Visible(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto found = it->find(name);
      if (found != it->end()) return found->second;
    }
    return nullptr;
  }

  void CheckUse(const Expr& e, SourceLoc loc) {
    switch (e.kind) {
      case ExprKind::kVar: {
        const auto& v = static_cast<const Var&>(e);
        if (Visible(v.name) != &v) {
          FailValue(v, loc, "ssa", "used before its definition or outside its scope");
        }
        return;
      }
      case ExprKind::kList:
        for (const ExprPtr& item : static_cast<const ListExpr&>(e).items) CheckUse(*item, loc);
        return;
      case ExprKind::kCall:
        Fail(loc, "structure: nested calls are not allowed");
      default:
        return;
    }
  }

  void CheckShape(const Var& v, const Shape& shape) {
    for (const Dim& d : shape) {
      if (d.is_static()) {
        if (d.value < 0) FailValue(v, {}, "type", "negative dimension");
        continue;
      }
      const Var* sym = Visible(d.symbol);
      if (sym == nullptr ||
          (sym->type->kind != TypeKind::kIndex && sym->type->kind != TypeKind::kScalar)) {
        FailValue(v, {}, "type",
                  absl::StrCat("dimension '", d.symbol, "' names no visible Index value"));
      }
    }
  }

  void CheckVarType(const Var& v) {
    if (v.type == nullptr) FailValue(v, {}, "type", "missing type");
    if (const TensorType* t = AsTensor(v.type)) CheckShape(v, t->shape);
    const TileType* tile = AsTile(v.type);
    if (tile == nullptr) return;
    CheckShape(v, tile->shape);
    if (tile->memref == nullptr) return;
    const MemRef& m = *tile->memref;
    if (m.space() != tile->space) {
      FailValue(
          v, {}, "memref",
          absl::StrCat("declared space ", MemorySpaceName(tile->space), " differs from memref '",
                       m.name(), "' in ", MemorySpaceName(m.space())));
    }
    if (!allocs_.contains(m.root())) {
      FailValue(v, {}, "memref",
                absl::StrCat("memref '", m.name(), "' names no tile.alloc in this function"));
    }
    if (m.is_view() &&
        (m.offset() < 0 || m.offset() > m.root()->size() || m.end_offset() > m.root()->size())) {
      FailValue(v, {}, "memref",
                absl::StrCat("view at offset ", m.offset(), " of ", m.size(), " bytes of '",
                             m.name(), "' leaves its root of ", m.root()->size(), " bytes"));
    }
    CheckSlot(v, *tile, m);
    // A root holds the tile as the backend lays it out (Ascend pads Acc rows); a view is a window
    // of elements inside an already padded root, so it is sized by its elements alone.
    std::optional<int64_t> bytes =
        m.is_view() ? StaticTileBytes(tile->shape, tile->dtype) : sizer_->Bytes(*tile);
    if (bytes && SaturatingAdd(m.offset(), *bytes) > m.root()->size()) {
      FailValue(
          v, {}, "memref",
          absl::StrCat("tile of ", *bytes, " bytes at offset ", m.offset(),
                       " does not fit memref '", m.name(), "' of ", m.root()->size(), " bytes"));
    }
  }

  // A tile in a slotted root names one of its slots and fits in it (the slots of a pipelined
  // loop's stages must not spill into each other); a slot exists only in a slotted root. Inside
  // a pipelined loop the slot rotates with the iterations, so the loop's depth is the slot count.
  void CheckSlot(const Var& v, const TileType& tile, const MemRef& m) {
    if (!m.is_slotted()) {
      if (m.slot() >= 0) {
        FailValue(v, {}, "memref",
                  absl::StrCat("names slot ", m.slot(), " of memref '", m.name(),
                               "', which has no slots"));
      }
      return;
    }
    if (m.slot() < 0) {
      FailValue(v, {}, "memref",
                absl::StrCat("memref '", m.name(), "' has ", m.slots(),
                             " slots: a tile in it names one, e.g. '", m.name(), "[0]'"));
    }
    if (m.slot() >= m.slots()) {
      FailValue(v, {}, "memref",
                absl::StrCat("slot ", m.slot(), " of memref '", m.name(), "' with ", m.slots(),
                             " slots"));
    }
    // A whole slot holds the tile as the backend lays it out, like a root; a window in a slot is
    // sized by its elements alone.
    std::optional<int64_t> bytes =
        m.offset_in_slot() > 0 ? StaticTileBytes(tile.shape, tile.dtype) : sizer_->Bytes(tile);
    if (m.offset_in_slot() < 0 ||
        (bytes && SaturatingAdd(m.offset_in_slot(), *bytes) > m.slot_size())) {
      FailValue(v, {}, "memref",
                absl::StrCat("tile of ", bytes.value_or(0), " bytes at offset ", m.offset_in_slot(),
                             " of slot ", m.slot(), " does not fit the ", m.slot_size(),
                             "-byte slots of memref '", m.name(), "'"));
    }
    // Fewer slots than stages is a loop whose depth memory-reuse shed; more would name stages
    // the loop does not have.
    if (!pipelined_.empty() && pipelined_.back()->pipeline < m.slots()) {
      FailValue(v, {}, "memref",
                absl::StrCat("memref '", m.name(), "' has ", m.slots(),
                             " slots but the pipelined loop over '",
                             pipelined_.back()->loop_var->name, "' around it has depth ",
                             pipelined_.back()->pipeline, " (at most one slot per stage)"));
    }
  }

  // Checks a call's uses, op and signature; returns its definition and the rule's type.
  std::pair<const OpDef*, TypePtr> CheckCall(const Call& c, const Var* result) {
    for (const ExprPtr& a : c.args) CheckUse(*a, c.loc);
    for (const auto& kv : c.kwargs) CheckUse(*kv.second, c.loc);
    const OpDef* def = registry_->Find(c.op);
    auto fail = [&](absl::string_view rule, absl::string_view message) {
      if (result != nullptr) FailValue(*result, c.loc, rule, message);
      Fail(c.loc, absl::StrCat(rule, ": ", message));
    };
    if (def == nullptr) fail("op", absl::StrCat("unknown op '", c.op, "'"));
    if (absl::Status s = CheckCallSignature(*def, c); !s.ok()) fail("op", s.message());
    absl::StatusOr<TypePtr> t = def->result_type(c);
    if (!t.ok()) fail("type", t.status().message());
    return {def, *std::move(t)};
  }

  const MemRef* ArgMemRef(const Call& c, int i) const {
    if (i >= static_cast<int>(c.args.size())) return nullptr;
    const Type* t = TypeOfExpr(*c.args[i]);
    return t != nullptr ? MemRefOf(*t).get() : nullptr;
  }

  void CheckAlloc(const AssignStmt& a, const Call& c) {
    const MemRefType* mt = AsMemRefType(a.var->type);
    const MemRef& m = *mt->memref;  // non-null: CollectAllocs checked
    if (a.var->name != m.name()) {
      FailValue(*a.var, c.loc, "memref",
                absl::StrCat("alloc value name differs from its MemRef's name '", m.name(), "'"));
    }
    const SpaceImm* space = AsSpace(c.args[0].get());
    const int64_t addr = AsInt(c.args[1].get())->value;
    const int64_t size = AsInt(c.args[2].get())->value;
    const int64_t id = AsInt(c.args[3].get())->value;
    const ExprPtr* slots_kw = c.FindKwarg("slots");
    const IntImm* slots = slots_kw != nullptr ? AsInt(slots_kw->get()) : nullptr;
    if ((slots != nullptr ? slots->value : 0) != m.slots()) {
      FailValue(*a.var, c.loc, "memref",
                absl::StrCat("tile.alloc states ", slots != nullptr ? slots->value : 0,
                             " slots but its MemRef has ", m.slots()));
    }
    const ExprPtr* declared_kw = c.FindKwarg("declared");
    const IntImm* declared = declared_kw != nullptr ? AsInt(declared_kw->get()) : nullptr;
    if ((declared != nullptr && declared->value == 1) != m.declared()) {
      FailValue(
          *a.var, c.loc, "memref",
          absl::StrCat("tile.alloc states declared=", declared != nullptr ? declared->value : 0,
                       " but its MemRef is ", m.declared() ? "" : "not ", "declared"));
    }
    if (space->space != m.space() || addr != m.root()->addr() || size != m.size() || id != m.id()) {
      FailValue(*a.var, c.loc, "memref",
                absl::StrCat("tile.alloc(", MemorySpaceName(space->space), ", ", addr, ", ", size,
                             ", ", id, ") differs from its MemRef (", MemorySpaceName(m.space()),
                             ", ", m.root()->addr(), ", ", m.size(), ", ", m.id(), ")"));
    }
  }

  // A value that lives in the same MemRef as `from` (a carry, a branch result, a write-into
  // result) has `from`'s layout: slices of it are placed by the same frame (ir/view_layout.h).
  void Inherit(const Var& v, const Expr* from) {
    const Var* f = from != nullptr ? AsVar(from) : nullptr;
    if (f == nullptr || AsTile(v.type) == nullptr || MemRefOf(*v.type) == nullptr ||
        MemRefOf(*v.type) != MemRefOf(*f->type)) {
      return;
    }
    auto it = view_frames_.find(f);
    if (it == view_frames_.end()) return;
    ViewFrame frame = it->second;  // copied first: inserting may rehash
    view_frames_[&v] = std::move(frame);
  }

  // An op's rule gives no layout: a result may state any, except where it is another value's
  // storage. A view (tile.slice, tile.reshape) is a window on its source's bytes and a write-into
  // result is its argument's buffer, so each states exactly its source's layout (none if the
  // source states none). Carried values, loop and `if` results state their sources' layouts
  // through the type equality of inits and yields.
  void CheckLayout(const Var& v, const Call& c, const OpDef& def) {
    const TileType* out = AsTile(v.type);
    if (out == nullptr) return;
    int arg = -1;
    if (def.memory == MemoryBehavior::kWritesInto) arg = def.writes_into_arg;
    if (def.memory == MemoryBehavior::kView) arg = 0;
    if (arg < 0 || arg >= static_cast<int>(c.args.size())) return;
    const TileType* in = AsTile(TypeOfExpr(*c.args[arg]));
    if (in == nullptr || in->layout == out->layout) return;
    auto name = [](const std::optional<TileLayout>& l) {
      return l ? absl::StrCat("layout ", TileLayoutName(*l)) : std::string("no layout");
    };
    FailValue(v, c.loc, "layout",
              absl::StrCat(
                  c.op, def.memory == MemoryBehavior::kView ? " is a view of '" : " writes into '",
                  PrintExpr(*c.args[arg]), "', which states ", name(in->layout),
                  "; its result must state the same, not ", name(out->layout)));
  }

  void CheckMemoryBehavior(const Var& v, const Call& c, const OpDef& def) {
    const MemRef* out = MemRefOf(*v.type).get();
    if (out == nullptr || AsTile(v.type) == nullptr) return;
    if (def.memory == MemoryBehavior::kWritesInto) {
      const MemRef* in = ArgMemRef(c, def.writes_into_arg);
      if (in != nullptr && (!SameAllocation(*in, *out) || in->offset() != out->offset())) {
        FailValue(v, c.loc, "memref",
                  absl::StrCat(c.op, " writes into argument ", def.writes_into_arg,
                               ", so its result must have that argument's memref '",
                               MemRefToString(*in), "', not '", MemRefToString(*out), "'"));
      }
      Inherit(v, c.args[def.writes_into_arg].get());
      return;
    }
    if (def.memory != MemoryBehavior::kView) return;
    const MemRef* in = ArgMemRef(c, 0);
    if (in == nullptr) return;
    if (!SameAllocation(*in, *out)) {
      FailValue(v, c.loc, "memref",
                absl::StrCat("view of '", PrintExpr(*c.args[0]), "' must live in its allocation '",
                             in->name(), "', not '", out->name(), "'"));
    }
    // Where the view's first element physically lies (ir/view_layout.h).
    const TileType* src = AsTile(TypeOfExpr(*c.args[0]));
    const Var* src_var = AsVar(c.args[0].get());
    std::optional<ViewFrame> source;
    if (auto it = view_frames_.find(src_var); it != view_frames_.end()) {
      source = it->second;
    } else if (src != nullptr &&
               (in->is_root() || (in->slot() >= 0 && in->offset_in_slot() == 0))) {
      source = OwnFrame(*src, in->offset());  // a root, or a whole slot of a slotted root
    } else {
      // A value in part of a root that is neither a view nor shares one (e.g. a tile.move into a
      // carried slice's bytes) has no layout the IR states: its views are not checked here.
      return;
    }
    if (!source) return;  // dynamic shapes: not checked
    absl::StatusOr<ViewFrame> frame = ApplyView(*source, src->dtype, c, *AsTile(v.type));
    if (!frame.ok()) return;  // dynamic origin: not checked
    absl::StatusOr<int64_t> at = FrameByteOffset(*frame, src->dtype);
    if (!at.ok()) FailValue(v, c.loc, "memref", at.status().message());
    view_frames_[&v] = *std::move(frame);
    const int64_t expected = *at;
    if (out->offset() != expected) {
      FailValue(v, c.loc, "memref",
                absl::StrCat(c.op, " result must be at byte offset ", expected, " of '", in->name(),
                             "', not ", out->offset()));
    }
  }

  // A pipelined loop has a depth of 2..16; its carried values pass from one iteration to the
  // next, so they cannot live in a slot (which rotates with the iterations).
  void CheckPipeline(const ForStmt& f) {
    if (f.pipeline == 0) return;
    if (f.pipeline < kMinPipelineDepth || f.pipeline > kMaxPipelineDepth) {
      Fail(f.loc, absl::StrCat("structure: pipeline depth must be between ", kMinPipelineDepth,
                               " and ", kMaxPipelineDepth, ", not ", f.pipeline));
    }
    for (const VarPtr& ia : f.iter_args) {
      const MemRefPtr& m = MemRefOf(*ia->type);
      if (m != nullptr && m->is_slotted()) {
        FailValue(*ia, f.loc, "memref",
                  absl::StrCat("a carried value of a pipelined loop cannot live in a slot of '",
                               m->name(), "' (slots rotate with the iterations)"));
      }
    }
  }

  // `carries`: the result vars a closing yield must match (null: no yield allowed).
  void VerifyBlock(const std::vector<StmtPtr>& stmts, const std::vector<VarPtr>* carries,
                   bool is_function_body) {
    for (size_t i = 0; i < stmts.size(); ++i) {
      const bool last = i + 1 == stmts.size();
      const Stmt& s = *stmts[i];
      if (s.kind == StmtKind::kYield) {
        const auto& y = static_cast<const YieldStmt&>(s);
        if (carries == nullptr || carries->empty()) {
          Fail(s.loc, "structure: 'yield' outside a loop or if with results");
        }
        if (!last) Fail(s.loc, "structure: 'yield' must be the last statement of its block");
        if (y.values.size() != carries->size()) {
          Fail(s.loc, absl::StrCat("structure: yield gives ", y.values.size(), " values for ",
                                   carries->size(), " results"));
        }
        for (size_t k = 0; k < y.values.size(); ++k) {
          CheckUse(*y.values[k], s.loc);
          const Type* t = TypeOfExpr(*y.values[k]);
          const Var& r = *(*carries)[k];
          if (t == nullptr || !SameType(*t, *r.type, false)) {
            FailValue(r, s.loc, "type",
                      absl::StrCat("yields ", PrintExpr(*y.values[k]), " of type ",
                                   t ? PlainType(*t) : "literal", " for result of type ",
                                   PlainType(*r.type)));
          }
        }
        continue;
      }
      if (s.kind == StmtKind::kReturn) {
        if (!is_function_body || !last) {
          Fail(s.loc, "structure: 'return' must be the last statement of the function body");
        }
        const auto& r = static_cast<const ReturnStmt&>(s);
        if (r.values.size() != f_.return_types.size()) {
          Fail(s.loc, absl::StrCat("structure: return gives ", r.values.size(),
                                   " values, the function declares ", f_.return_types.size()));
        }
        for (size_t k = 0; k < r.values.size(); ++k) {
          CheckUse(*r.values[k], s.loc);
          const Type* t = TypeOfExpr(*r.values[k]);
          if (t == nullptr || !SameType(*t, *f_.return_types[k], false)) {
            Fail(s.loc,
                 absl::StrCat("type: return value ", k, " (", PrintExpr(*r.values[k]),
                              ") is not of the declared type ", PlainType(*f_.return_types[k])));
          }
        }
        continue;
      }
      VerifyStmt(s);
    }
    if (carries != nullptr && !carries->empty() &&
        (stmts.empty() || stmts.back()->kind != StmtKind::kYield)) {
      const SourceLoc loc = stmts.empty() ? SourceLoc{} : stmts.back()->loc;
      Fail(loc, "structure: a block with results must end with 'yield'");
    }
  }

  void VerifyScoped(const StmtPtr& body, const std::vector<VarPtr>* carries,
                    const std::vector<VarPtr>& defs) {
    scopes_.emplace_back();
    for (const VarPtr& d : defs) Define(d);
    VerifyBlock(BodyStmts(body), carries, false);
    scopes_.pop_back();
  }

  void CheckIndexLike(const Expr& e, SourceLoc loc, absl::string_view what) {
    CheckUse(e, loc);
    if (e.kind == ExprKind::kInt) return;
    const Type* t = TypeOfExpr(e);
    const ScalarType* sc = AsScalar(t);
    if (t != nullptr &&
        (t->kind == TypeKind::kIndex ||
         (sc != nullptr && sc->dtype != DType::kFP32 && !IsFloatDType(sc->dtype)))) {
      return;
    }
    Fail(loc, absl::StrCat("type: ", what, " must be an integer, Index or integer Scalar"));
  }

  void VerifyStmt(const Stmt& s) {
    switch (s.kind) {
      case StmtKind::kSeq:
        VerifyBlock(static_cast<const SeqStmts&>(s).stmts, nullptr, false);
        return;
      case StmtKind::kAssign: {
        const auto& a = static_cast<const AssignStmt&>(s);
        const Call* c = AsCall(a.value.get());
        if (c == nullptr) {
          FailValue(*a.var, s.loc, "structure", "must be defined by an op call");
        }
        auto [def, inferred] = CheckCall(*c, a.var.get());
        if (inferred != nullptr &&
            !SameType(*a.var->type, *inferred, /*with_memref=*/false, /*with_layout=*/false)) {
          FailValue(*a.var, a.var->loc, "type",
                    absl::StrCat("declared ", PlainType(*a.var->type), " but ", c->op, " gives ",
                                 PlainType(*inferred)));
        }
        if (c->op == "tile.alloc") CheckAlloc(a, *c);
        if (a.var->type->kind == TypeKind::kMemRef && c->op != "tile.alloc") {
          FailValue(*a.var, a.var->loc, "memref", "only tile.alloc defines a MemRefType value");
        }
        CheckVarType(*a.var);
        CheckLayout(*a.var, *c, *def);
        CheckMemoryBehavior(*a.var, *c, *def);
        Define(a.var);
        return;
      }
      case StmtKind::kEval: {
        const Call* c = AsCall(static_cast<const EvalStmt&>(s).expr.get());
        if (c == nullptr) Fail(s.loc, "structure: an evaluation statement must be an op call");
        CheckCall(*c, nullptr);
        return;
      }
      case StmtKind::kFor: {
        const auto& f = static_cast<const ForStmt&>(s);
        CheckIndexLike(*f.start, s.loc, "loop start");
        CheckIndexLike(*f.stop, s.loc, "loop stop");
        CheckIndexLike(*f.step, s.loc, "loop step");
        if (const IntImm* st = AsInt(f.step.get()); st != nullptr && st->value == 0) {
          Fail(s.loc, "structure: loop step must not be 0");
        }
        if (f.inits.size() != f.iter_args.size() || f.return_vars.size() != f.iter_args.size()) {
          Fail(s.loc,
               absl::StrCat("structure: loop has ", f.iter_args.size(), " carried values, ",
                            f.inits.size(), " inits and ", f.return_vars.size(), " results"));
        }
        if (f.loop_var->type->kind != TypeKind::kIndex) {
          FailValue(*f.loop_var, s.loc, "type", "a loop variable must be an Index");
        }
        for (size_t k = 0; k < f.inits.size(); ++k) {
          CheckUse(*f.inits[k], s.loc);
          const Type* t = TypeOfExpr(*f.inits[k]);
          const Var& ia = *f.iter_args[k];
          if (t == nullptr || !SameType(*t, *ia.type, false)) {
            FailValue(ia, s.loc, "type",
                      absl::StrCat("carried value is initialised with ", PrintExpr(*f.inits[k]),
                                   " of another type"));
          }
          CheckVarType(ia);
          Inherit(ia, f.inits[k].get());
        }
        CheckPipeline(f);
        std::vector<VarPtr> defs = {f.loop_var};
        defs.insert(defs.end(), f.iter_args.begin(), f.iter_args.end());
        if (f.pipeline > 0) pipelined_.push_back(&f);
        VerifyScoped(f.body, &f.return_vars, defs);
        if (f.pipeline > 0) pipelined_.pop_back();
        for (size_t k = 0; k < f.return_vars.size(); ++k) {
          CheckVarType(*f.return_vars[k]);
          Define(f.return_vars[k]);
          Inherit(*f.return_vars[k], f.iter_args[k].get());
        }
        return;
      }
      case StmtKind::kIf: {
        const auto& i = static_cast<const IfStmt&>(s);
        CheckIndexLike(*i.cond, s.loc, "if condition");
        if (!i.return_vars.empty() && i.else_body == nullptr) {
          Fail(s.loc, "structure: an if with results needs an else branch");
        }
        VerifyScoped(i.then_body, &i.return_vars, {});
        if (i.else_body != nullptr) VerifyScoped(i.else_body, &i.return_vars, {});
        const YieldStmt* ty = FinalYield(i.then_body);
        const YieldStmt* ey = FinalYield(i.else_body);
        for (size_t k = 0; k < i.return_vars.size(); ++k) {
          CheckVarType(*i.return_vars[k]);
          Define(i.return_vars[k]);
          if (ty != nullptr && k < ty->values.size())
            Inherit(*i.return_vars[k], ty->values[k].get());
          if (!view_frames_.contains(i.return_vars[k].get()) && ey != nullptr &&
              k < ey->values.size()) {
            Inherit(*i.return_vars[k], ey->values[k].get());
          }
        }
        return;
      }
      default:
        return;  // yield/return handled by VerifyBlock
    }
  }

  const Function& f_;
  const OpRegistry* registry_;
  const TileByteSizer* sizer_;
  absl::flat_hash_map<const MemRef*, const Var*> allocs_;
  std::vector<const ForStmt*> pipelined_;  // the pipelined loops around the statement, inner last
  absl::flat_hash_map<const Var*, ViewFrame> view_frames_;  // of views and their sharers
  absl::flat_hash_set<const Var*> objects_;
  absl::flat_hash_map<std::string, SourceLoc> names_;
  std::vector<absl::flat_hash_map<std::string, const Var*>> scopes_;
};

std::string Prefix(const VerifyOptions& options, SourceLoc loc) {
  if (!loc.known()) return "error: ";
  return absl::StrCat(options.filename, ":", loc.line, ":", loc.col, ": error: ");
}

}  // namespace

absl::Status VerifyFunction(const Function& function, const VerifyOptions& options) {
  try {
    FunctionVerifier(function, options).Run();
  } catch (const VerifyFailure& f) {
    return absl::InvalidArgumentError(
        absl::StrCat(Prefix(options, f.loc), "in function '", function.name, "': ", f.message));
  }
  return absl::OkStatus();
}

absl::Status VerifyProgram(const Program& program, const VerifyOptions& options) {
  absl::flat_hash_set<std::string> names;
  for (const FunctionPtr& f : program.functions) {
    if (!names.insert(f->name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(Prefix(options, f->loc), "function '", f->name, "' is defined twice"));
    }
    if (absl::Status s = VerifyFunction(*f, options); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace ir
}  // namespace accelmem

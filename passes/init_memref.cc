#include "passes/init_memref.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "backends/backend.h"
#include "ir/checked_math.h"
#include "ir/memory_space.h"
#include "ir/mutator.h"
#include "ir/op_registry.h"
#include "ir/view_layout.h"
#include "ir/visitor.h"
#include "passes/liveness.h"

namespace accelmem {
namespace passes {
namespace {

using ir::MemRef;
using ir::MemRefPtr;
using ir::StmtPtr;
using ir::VarPtr;

using FrameMap = absl::flat_hash_map<const ir::Var*, ir::ViewFrame>;

// The frame of `v` (a view's source): the one recorded for it, else its own shape at `offset`.
std::optional<ir::ViewFrame> FrameOf(const FrameMap& frames, const ir::Var& v,
                                     const ir::TileType& tile, int64_t offset) {
  auto it = frames.find(&v);
  if (it != frames.end()) return it->second;
  return ir::OwnFrame(tile, offset);
}

class Assigner final : public ir::IRVisitor {
 public:
  // `taken_ids`: the ids of the function's declared allocations, which fresh roots skip.
  Assigner(const ir::Function& f, const backends::Backend* backend,
           absl::flat_hash_set<int64_t> taken_ids)
      : fn_(f), backend_(backend), taken_ids_(std::move(taken_ids)) {}

  absl::Status Run() {
    for (const VarPtr& p : fn_.params) {
      if (absl::Status s = Fresh(*p); !s.ok()) return s;
    }
    if (fn_.body != nullptr) VisitStmt(*fn_.body);
    return status_;
  }

  const absl::flat_hash_map<const ir::Var*, MemRefPtr>& map() const { return map_; }
  const std::vector<MemRefPtr>& roots() const { return roots_; }

 private:
  absl::Status Error(const std::string& msg) const { return FunctionError(fn_.name, msg); }

  MemRefPtr Of(const ir::ExprPtr& e) const {
    const ir::Var* v = ir::AsVar(e.get());
    if (v == nullptr) return nullptr;
    auto it = map_.find(v);
    return it == map_.end() ? nullptr : it->second;
  }

  absl::Status Fresh(const ir::Var& v) {
    const ir::TileType* tile = ir::AsTile(v.type);
    if (tile == nullptr) return absl::OkStatus();
    if (Declared(v)) return absl::OkStatus();
    if (!ir::StaticDims(tile->shape)) {
      return Error(absl::StrCat("value '", v.name, "' has a non-static shape ",
                                ir::ShapeToString(tile->shape),
                                "; init-memref needs static shapes"));
    }
    std::optional<int64_t> bytes = backends::TileBytes(backend_, *tile);
    if (!bytes) {
      return Error(absl::StrCat("value '", v.name, "' of shape ", ir::ShapeToString(tile->shape),
                                " ", ir::DTypeName(tile->dtype),
                                ": its byte size overflows a 64-bit integer"));
    }
    if (*bytes <= 0) {
      return Error(absl::StrCat("value '", v.name, "' occupies no bytes (shape ",
                                ir::ShapeToString(tile->shape), ")"));
    }
    while (taken_ids_.contains(next_id_)) ++next_id_;
    const int64_t id = next_id_++;
    // A tile of a pipelined loop's body gets one slot per stage: a slotted root of depth x its
    // bytes, the value in slot 0 (iteration j then uses slot j mod depth).
    const int64_t depth = pipelines_.empty() ? 0 : pipelines_.back();
    std::optional<int64_t> size = depth > 0 ? ir::CheckedMul(*bytes, depth) : bytes;
    if (!size) {
      return Error(absl::StrCat("value '", v.name, "' of ", *bytes,
                                " bytes in a pipelined loop of "
                                "depth ",
                                depth, ": its slots' size overflows a 64-bit integer"));
    }
    MemRefPtr root = MemRef::MakeRoot(MemRef::RootName(tile->space, id), tile->space,
                                      MemRef::kUnplanned, *size, id, depth);
    roots_.push_back(root);
    map_[&v] = depth > 0 ? ViewOf(root, 0, *bytes) : root;
    return absl::OkStatus();
  }

  // `v` lives where `from` lives (a carry, a branch result, a write-into result), so it has
  // `from`'s layout too: a carried slice still steps over its root's rows.
  absl::Status Share(const ir::Var& v, const ir::Expr* from, MemRefPtr m) {
    const ir::TileType* tile = ir::AsTile(v.type);
    if (tile == nullptr || m == nullptr) return absl::OkStatus();
    if (absl::Status s = SameSpace(v, *tile, *m); !s.ok()) return s;
    map_[&v] = std::move(m);
    const ir::Var* f = from != nullptr ? ir::AsVar(from) : nullptr;
    auto it = f != nullptr ? frames_.find(f) : frames_.end();
    if (it == frames_.end()) return absl::OkStatus();
    ir::ViewFrame frame = it->second;  // copied first: inserting may rehash
    frames_[&v] = std::move(frame);
    return absl::OkStatus();
  }

  // A value that shares another's MemRef (a view, an in-place result, a carried or branch value)
  // lives in that MemRef's space. The verifier rejects a declared space that differs; without it
  // (--verify=false) the value would get a MemRef of one space and keep a type of another.
  absl::Status SameSpace(const ir::Var& v, const ir::TileType& tile, const MemRef& m) const {
    if (tile.space == m.space()) return absl::OkStatus();
    return Error(absl::StrCat("value '", v.name, "' is declared in ",
                              ir::MemorySpaceName(tile.space), " but shares the memory of a ",
                              ir::MemorySpaceName(m.space()),
                              " value (views, in-place results and carried or branch values keep "
                              "their source's memory space)"));
  }

  // The MemRef at byte `offset` of `root`, `size` bytes long; the root itself when it covers the
  // whole root; one object per (root, offset, size). In a slotted root, the slot holding
  // `offset` (a view of a tile in a slot stays in that slot).
  MemRefPtr ViewOf(const MemRefPtr& root, int64_t offset, int64_t size) {
    if (offset == 0 && size == root->size() && !root->is_slotted()) return root;
    auto key = std::make_tuple(root.get(), offset, size);
    auto it = views_.find(key);
    if (it != views_.end()) return it->second;
    MemRefPtr view = root->is_slotted() ? MemRef::MakeSlot(root, offset / root->slot_size(),
                                                           offset % root->slot_size(), size)
                                        : MemRef::MakeView(root, offset, size);
    views_.emplace(key, view);
    return view;
  }

  // A view's MemRef starts where its first element physically lies in the root (ir/view_layout.h:
  // frames follow view chains and the values that share a view's MemRef; any other value is its
  // own frame).
  absl::Status View(const ir::Var& v, const ir::Call& call, const MemRefPtr& src) {
    const ir::TileType* tile = ir::AsTile(v.type);
    const ir::Var* src_var = ir::AsVar(call.args[0].get());
    const ir::TileType* src_tile = ir::AsTile(ir::TypeOfExpr(*call.args[0]));
    if (tile == nullptr || src_tile == nullptr || src_var == nullptr) return absl::OkStatus();
    if (!ir::StaticDims(tile->shape)) {
      return Error(absl::StrCat("value '", v.name, "' has a non-static shape ",
                                ir::ShapeToString(tile->shape),
                                "; init-memref needs static shapes"));
    }
    std::optional<int64_t> size = ir::StaticTileBytes(tile->shape, tile->dtype);
    if (!size) {
      return Error(absl::StrCat("value '", v.name, "' of shape ", ir::ShapeToString(tile->shape),
                                ": its byte size overflows a 64-bit integer"));
    }
    std::optional<ir::ViewFrame> source = FrameOf(frames_, *src_var, *src_tile, src->offset());
    if (!source) {
      return Error(absl::StrCat("value '", v.name, "': its source '", src_var->name,
                                "' has a non-static shape"));
    }
    absl::StatusOr<ir::ViewFrame> frame = ir::ApplyView(*source, src_tile->dtype, call, *tile);
    absl::StatusOr<int64_t> offset =
        frame.ok() ? ir::FrameByteOffset(*frame, src_tile->dtype) : frame.status();
    if (!offset.ok()) {
      return Error(absl::StrCat("value '", v.name, "': ", offset.status().message()));
    }
    if (absl::Status s = SameSpace(v, *tile, *src); !s.ok()) return s;
    map_[&v] = ViewOf(src->root_ptr(), *offset, *size);
    frames_[&v] = *std::move(frame);
    return absl::OkStatus();
  }

  // A tile the author placed in a declared allocation keeps its place (and its views derive from
  // it as from any other root).
  bool Declared(const ir::Var& v) {
    const ir::TileType* tile = ir::AsTile(v.type);
    if (tile == nullptr || tile->memref == nullptr || !tile->memref->declared()) return false;
    map_[&v] = tile->memref;
    return true;
  }

  absl::Status Assign(const ir::AssignStmt& a) {
    const ir::Var& v = *a.var;
    if (ir::AsTile(v.type) == nullptr) return absl::OkStatus();
    if (Declared(v)) return absl::OkStatus();
    const ir::Call* call = ir::AsCall(a.value.get());
    const ir::OpDef* def = call != nullptr ? ir::OpRegistry::Global().Find(call->op) : nullptr;
    if (def != nullptr && def->memory == ir::MemoryBehavior::kView && !call->args.empty()) {
      if (MemRefPtr src = Of(call->args[0])) return View(v, *call, src);
    }
    if (def != nullptr && def->memory == ir::MemoryBehavior::kWritesInto &&
        def->writes_into_arg < static_cast<int>(call->args.size())) {
      if (MemRefPtr dst = Of(call->args[def->writes_into_arg])) {
        return Share(v, call->args[def->writes_into_arg].get(), dst);
      }
    }
    if (const ir::Var* alias = ir::AsVar(a.value.get())) {  // `a = b`, if ever written
      if (MemRefPtr m = Of(a.value)) {
        (void)alias;
        return Share(v, a.value.get(), m);
      }
    }
    return Fresh(v);
  }

  // The walk stops at the first error (every hook returns at once after it).
  void VisitAssign(const ir::AssignStmt& a) override {
    if (status_.ok()) status_ = Assign(a);
  }

  void VisitFor(const ir::ForStmt& f) override {
    for (size_t k = 0; k < f.iter_args.size() && status_.ok(); ++k) {
      MemRefPtr m = k < f.inits.size() ? Of(f.inits[k]) : nullptr;
      if (m != nullptr) {
        status_ = Share(*f.iter_args[k], f.inits[k].get(), m);
      } else {
        status_ = Fresh(*f.iter_args[k]);
      }
    }
    if (f.pipeline > 0) pipelines_.push_back(f.pipeline);
    if (status_.ok() && f.body != nullptr) VisitStmt(*f.body);
    if (f.pipeline > 0) pipelines_.pop_back();
    for (size_t k = 0; k < f.return_vars.size() && status_.ok(); ++k) {
      MemRefPtr m = k < f.iter_args.size() ? Of(f.iter_args[k]) : nullptr;
      if (m != nullptr) {
        status_ = Share(*f.return_vars[k], f.iter_args[k].get(), m);
      } else {
        status_ = Fresh(*f.return_vars[k]);
      }
    }
  }

  void VisitIf(const ir::IfStmt& i) override {
    if (status_.ok() && i.then_body != nullptr) VisitStmt(*i.then_body);
    if (status_.ok() && i.else_body != nullptr) VisitStmt(*i.else_body);
    const ir::YieldStmt* ty = ir::FinalYield(i.then_body);
    const ir::YieldStmt* ey = ir::FinalYield(i.else_body);
    for (size_t k = 0; k < i.return_vars.size() && status_.ok(); ++k) {
      const ir::Expr* from = ty != nullptr && k < ty->values.size() ? ty->values[k].get() : nullptr;
      MemRefPtr m = from != nullptr ? Of(ty->values[k]) : nullptr;
      if (m == nullptr && ey != nullptr && k < ey->values.size()) {
        from = ey->values[k].get();
        m = Of(ey->values[k]);
      }
      if (m != nullptr) {
        status_ = Share(*i.return_vars[k], from, m);
      } else {
        status_ = Fresh(*i.return_vars[k]);
      }
    }
  }

  // Nothing else defines a tile.
  void VisitEval(const ir::EvalStmt&) override {}
  void VisitYield(const ir::YieldStmt&) override {}
  void VisitReturn(const ir::ReturnStmt&) override {}

  const ir::Function& fn_;
  const backends::Backend* backend_;
  absl::Status status_;
  absl::flat_hash_map<const ir::Var*, MemRefPtr> map_;
  FrameMap frames_;                         // of views and their sharers
  absl::flat_hash_set<int64_t> taken_ids_;  // of the declared allocations
  int64_t next_id_ = 0;
  std::vector<MemRefPtr> roots_;
  std::map<std::tuple<const MemRef*, int64_t, int64_t>, MemRefPtr> views_;
  std::vector<int64_t> pipelines_;  // depths of the pipelined loops around, innermost last
};

// True for `mem_<space>_<digits>`, the names of the MemRef roots the memory passes create.
bool IsRootName(absl::string_view name) {
  for (int i = 0; i < ir::kNumMemorySpaces; ++i) {
    const std::string prefix =
        absl::StrCat("mem_", ir::MemorySpaceLowerName(static_cast<ir::MemorySpace>(i)), "_");
    if (!absl::StartsWith(name, prefix) || name.size() == prefix.size()) continue;
    absl::string_view digits = name.substr(prefix.size());
    if (std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return true;
    }
  }
  return false;
}

// Loops and ifs may not carry a strided view (a column block of its root) by sharing its MemRef:
// a value copied into that MemRef on another iteration or branch would lie there contiguously,
// and the carried value would have no single layout. Such a view is copied (tile.move) into a
// tile of its own first: before the loop for an init, before the yield for a branch result.
class StridedCarryCopies final : public ir::IRMutator {
 public:
  explicit StridedCarryCopies(const ir::Function& f) : names_(ir::DefinedNames(f)) {
    StridedViews finder(&frames_, &strided_);
    finder.VisitFunction(f);
  }

  ir::FunctionPtr Apply(const ir::FunctionPtr& f) {
    if (strided_.empty()) return f;
    return MutateFunction(f);
  }

  StmtPtr MutateFor(const std::shared_ptr<const ir::ForStmt>& f) override {
    if (std::none_of(f->inits.begin(), f->inits.end(),
                     [this](const ir::ExprPtr& e) { return Strided(e); })) {
      return IRMutator::MutateFor(f);
    }
    std::vector<StmtPtr> out;
    std::vector<ir::ExprPtr> inits = f->inits;
    for (ir::ExprPtr& e : inits) {
      if (Strided(e)) e = Copy(e, &out);
    }
    out.push_back(IRMutator::MutateFor(std::make_shared<ir::ForStmt>(
        f->loop_var, f->start, f->stop, f->step, f->iter_args, std::move(inits), f->body,
        f->return_vars, f->loc, f->pipeline)));
    return std::make_shared<ir::SeqStmts>(std::move(out), f->loc);
  }

  StmtPtr MutateIf(const std::shared_ptr<const ir::IfStmt>& i) override {
    if (i->return_vars.empty()) return IRMutator::MutateIf(i);
    StmtPtr then_body = CopyYielded(i->then_body);
    StmtPtr else_body = CopyYielded(i->else_body);
    if (then_body == i->then_body && else_body == i->else_body) return IRMutator::MutateIf(i);
    return IRMutator::MutateIf(
        std::make_shared<ir::IfStmt>(i->cond, then_body, else_body, i->return_vars, i->loc));
  }

 private:
  // Frames of view results, by shape only (offsets do not decide contiguity); the strided ones.
  class StridedViews final : public ir::IRVisitor {
   public:
    StridedViews(FrameMap* frames, absl::flat_hash_set<const ir::Var*>* strided)
        : frames_(frames), strided_(strided) {}

    void VisitAssign(const ir::AssignStmt& a) override {
      const ir::Call* call = ir::AsCall(a.value.get());
      const ir::OpDef* def = call != nullptr ? ir::OpRegistry::Global().Find(call->op) : nullptr;
      if (def == nullptr || def->memory != ir::MemoryBehavior::kView || call->args.empty()) return;
      const ir::Var* src = ir::AsVar(call->args[0].get());
      const ir::TileType* src_tile = src != nullptr ? ir::AsTile(src->type) : nullptr;
      const ir::TileType* tile = ir::AsTile(a.var->type);
      if (src_tile == nullptr || tile == nullptr) return;
      std::optional<ir::ViewFrame> source = FrameOf(*frames_, *src, *src_tile, 0);
      if (!source) return;
      absl::StatusOr<ir::ViewFrame> frame = ir::ApplyView(*source, src_tile->dtype, *call, *tile);
      std::optional<std::vector<int64_t>> dims = ir::StaticDims(tile->shape);
      if (!frame.ok() || !dims) return;
      if (!ir::IsContiguous(*frame, *dims)) strided_->insert(a.var.get());
      (*frames_)[a.var.get()] = *std::move(frame);
    }
    // Only assignments define views.
    void VisitEval(const ir::EvalStmt&) override {}
    void VisitYield(const ir::YieldStmt&) override {}
    void VisitReturn(const ir::ReturnStmt&) override {}

   private:
    FrameMap* frames_;
    absl::flat_hash_set<const ir::Var*>* strided_;
  };

  bool Strided(const ir::ExprPtr& e) const {
    const ir::Var* v = ir::AsVar(e.get());
    return v != nullptr && strided_.contains(v);
  }

  // `name_mv: T = tile.move(value, Space)` appended to `out`; returns the new value.
  ir::ExprPtr Copy(const ir::ExprPtr& value, std::vector<StmtPtr>* out) {
    const ir::Var* v = ir::AsVar(value.get());
    const ir::TileType* t = ir::AsTile(v->type);
    ir::VarPtr mv = ir::MakeVar(ir::FreshName(absl::StrCat(v->name, "_mv"), &names_),
                                ir::MakeTile(t->shape, t->dtype, t->space, nullptr, t->layout));
    out->push_back(std::make_shared<ir::AssignStmt>(
        mv, ir::MakeCall("tile.move", {MutateExpr(value), ir::MakeSpace(t->space)})));
    return mv;
  }

  // `body` with a copy of every strided value its final yield gives.
  StmtPtr CopyYielded(const StmtPtr& body) {
    const ir::YieldStmt* y = ir::FinalYield(body);
    if (y == nullptr || std::none_of(y->values.begin(), y->values.end(),
                                     [this](const ir::ExprPtr& e) { return Strided(e); })) {
      return body;
    }
    std::vector<StmtPtr> stmts = ir::BodyStmts(body);
    std::vector<StmtPtr> out(stmts.begin(), stmts.end() - 1);
    std::vector<ir::ExprPtr> values = y->values;
    for (ir::ExprPtr& v : values) {
      if (Strided(v)) v = Copy(v, &out);
    }
    out.push_back(std::make_shared<ir::YieldStmt>(std::move(values), y->loc));
    return std::make_shared<ir::SeqStmts>(std::move(out), body->loc);
  }

  absl::flat_hash_set<std::string> names_;
  FrameMap frames_;
  absl::flat_hash_set<const ir::Var*> strided_;
};

// Gives every tile value the MemRef the Assigner chose.
class GiveMemRefs final : public ir::IRMutator {
 public:
  explicit GiveMemRefs(const absl::flat_hash_map<const ir::Var*, MemRefPtr>& map) : map_(map) {}
  ir::TypePtr MutateDefType(const ir::Var& v) override {
    const ir::TileType* t = ir::AsTile(v.type);
    if (t == nullptr) return v.type;
    auto it = map_.find(&v);
    return it == map_.end() ? v.type : t->WithMemRef(it->second);
  }

 private:
  const absl::flat_hash_map<const ir::Var*, MemRefPtr>& map_;
};

// The tiles an assignment of the input places in a declared allocation: the author's. (A loop's
// carried values and results, and an if's results, take their type, MemRef included, from the
// value they carry; they are not placements of the author's.)
class AuthoredTiles final : public ir::IRVisitor {
 public:
  void VisitAssign(const ir::AssignStmt& a) override {
    const ir::TileType* t = ir::AsTile(a.var->type);
    if (t != nullptr && t->memref != nullptr && t->memref->declared()) names.insert(a.var->name);
  }
  absl::flat_hash_set<std::string> names;
};

// Two tiles the author placed in one declared allocation (and not views of one another) that are
// live at once on overlapping bytes would overwrite each other, and no pass moves the author's
// tiles: an error naming both. Tiles init-memref put there (carries, branch results) are left to
// memory-reuse, which gives a conflicting carry a root of its own.
absl::Status CheckDeclaredPlacements(const ir::Function& f,
                                     const absl::flat_hash_set<std::string>& authored) {
  const Liveness lv(f);
  struct Class {
    const ir::MemRef* root = nullptr;
    const ir::Var* first = nullptr;  // the value the class starts from
    int64_t start = INT64_MAX, end = 0, lo = INT64_MAX, hi = 0;
    bool authored = false;
  };
  std::map<int, Class> classes;
  for (size_t i = 0; i < lv.values.size(); ++i) {
    const ValueLife& v = lv.values[i];
    if (v.memref == nullptr || !v.memref->declared()) continue;
    const int rep = lv.ViewClass(static_cast<int>(i));
    Class& c = classes[rep];
    c.root = v.memref->root();
    if (c.first == nullptr) c.first = lv.values[rep].var;
    c.start = std::min(c.start, v.start);
    c.end = std::max(c.end, v.end);
    c.lo = std::min(c.lo, v.memref->offset());
    c.hi = std::max(c.hi, v.memref->end_offset());
    c.authored |= authored.contains(v.var->name);
  }
  std::vector<const Class*> placed;
  for (const auto& [rep, c] : classes) {
    if (c.authored) placed.push_back(&c);
  }
  for (size_t a = 0; a < placed.size(); ++a) {
    for (size_t b = a + 1; b < placed.size(); ++b) {
      const Class& x = *placed[a];
      const Class& y = *placed[b];
      if (x.root != y.root || x.end <= y.start || y.end <= x.start || x.hi <= y.lo ||
          y.hi <= x.lo) {
        continue;
      }
      auto where = [](const ir::Var& v) {
        return v.loc.known() ? absl::StrCat("'", v.name, "' (line ", v.loc.line, ")")
                             : absl::StrCat("'", v.name, "'");
      };
      return FunctionError(
          f.name, absl::StrCat("init-memref: values ", where(*x.first), " and ", where(*y.first),
                               " are both in the declared allocation '", x.root->name(),
                               "', at bytes [", x.lo, ", ", x.hi, ") and [", y.lo, ", ", y.hi,
                               "), while both are live: each would overwrite the other"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<FunctionResult> InitMemRefPass::RunOnFunction(
    const ir::FunctionPtr& function) const {
  bool any_tile = false;
  const ir::Var* without = nullptr;
  const ir::Var* with = nullptr;
  ir::ForEachDef(*function, [&](const ir::Var& v) {
    const ir::TileType* t = ir::AsTile(v.type);
    if (t == nullptr) return;
    any_tile = true;
    if (t->memref != nullptr) {
      // A tile the author placed in a declared allocation may stand beside tiles without one.
      if (with == nullptr && !t->memref->declared()) with = &v;
    } else if (without == nullptr) {
      without = &v;
    }
  });
  if (!any_tile || without == nullptr) return FunctionResult{function, false};
  // The input's own names must not take the names of the allocations about to be created; the
  // declared allocations' ids are taken too.
  const ir::Var* reserved = nullptr;
  const ir::MemRef* placed = nullptr;  // a declared allocation that states an address
  absl::flat_hash_set<int64_t> declared_ids;
  ir::ForEachDef(*function, [&](const ir::Var& v) {
    if (reserved == nullptr && IsRootName(v.name)) reserved = &v;
    const MemRefPtr& m = ir::MemRefOf(*v.type);
    if (m == nullptr || !m->declared()) return;
    declared_ids.insert(m->id());
    if (placed == nullptr && m->is_planned()) placed = m->root();
  });
  if (reserved != nullptr) {
    std::string where;
    if (reserved->loc.known()) {
      where = absl::StrCat(" (line ", reserved->loc.line, ", column ", reserved->loc.col, ")");
    }
    return FunctionError(
        function->name,
        absl::StrCat("value '", reserved->name, "'", where,
                     " is named like a MemRef; names mem_<space>_<number> are reserved for the "
                     "allocations init-memref creates: rename the value"));
  }
  if (with != nullptr) {
    return FunctionError(
        function->name,
        absl::StrCat("init-memref: value '", with->name, "' already has a MemRef but value '",
                     without->name, "' has none; run init-memref on IR without MemRefs"));
  }
  // A declared allocation is placed by allocate-memory-addr like any other root; an address
  // written before planning would make the function look planned to memory-reuse and then be
  // overwritten, so it is refused.
  if (placed != nullptr) {
    return FunctionError(
        function->name,
        absl::StrCat("init-memref: declared allocation '", placed->name(), "' states address ",
                     placed->addr(),
                     "; allocate-memory-addr places declared allocations: write -1"));
  }
  const ir::FunctionPtr input = StridedCarryCopies(*function).Apply(function);
  const bool any_declared = !declared_ids.empty();
  Assigner assigner(*input, options_.backend.get(), std::move(declared_ids));
  if (absl::Status s = assigner.Run(); !s.ok()) return s;
  ir::FunctionPtr out = GiveMemRefs(assigner.map()).MutateFunction(input);
  std::vector<StmtPtr> body;
  for (const MemRefPtr& root : assigner.roots()) body.push_back(ir::MakeAllocStmt(root));
  for (const StmtPtr& s : ir::BodyStmts(out->body)) body.push_back(s);
  auto result = std::make_shared<ir::Function>(out->name, out->type, out->params, out->return_types,
                                               ir::FlattenSeq(body, out->body->loc), out->loc);
  if (any_declared) {
    AuthoredTiles authored;
    authored.VisitFunction(*function);
    if (absl::Status s = CheckDeclaredPlacements(*result, authored.names); !s.ok()) return s;
  }
  return FunctionResult{result, true};
}

PassPtr CreateInitMemRefPass(const InitMemRefOptions& options) {
  return std::make_unique<InitMemRefPass>(options);
}

}  // namespace passes
}  // namespace accelmem

#include "passes/init_memref.h"

#include <map>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "backends/backend.h"
#include "ir/op_registry.h"
#include "passes/internal/rewrite.h"

namespace accelmem {
namespace passes {
namespace {

using ir::MemRef;
using ir::MemRefPtr;
using ir::StmtPtr;
using ir::VarPtr;

class Assigner {
 public:
  explicit Assigner(const ir::Function& f) : fn_(f) {}

  absl::Status Run() {
    for (const VarPtr& p : fn_.params) {
      if (absl::Status s = Fresh(*p); !s.ok()) return s;
    }
    return Stmt(fn_.body);
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
    if (!ir::StaticDims(tile->shape)) {
      return Error(absl::StrCat("value '", v.name, "' has a non-static shape ",
                                ir::ShapeToString(tile->shape),
                                "; init-memref needs static shapes"));
    }
    std::optional<int64_t> bytes = backends::ActiveTileBytes(*tile);
    if (!bytes || *bytes <= 0) {
      return Error(absl::StrCat("value '", v.name, "' occupies no bytes (shape ",
                                ir::ShapeToString(tile->shape), ")"));
    }
    const int64_t id = static_cast<int64_t>(roots_.size());
    MemRefPtr root = MemRef::MakeRoot(MemRef::RootName(tile->space, id), tile->space,
                                      MemRef::kUnplanned, *bytes, id);
    roots_.push_back(root);
    map_[&v] = root;
    return absl::OkStatus();
  }

  void Share(const ir::Var& v, MemRefPtr m) {
    if (ir::AsTile(v.type) != nullptr && m != nullptr) map_[&v] = std::move(m);
  }

  // The MemRef at `offset` bytes into `base`'s root, `size` bytes long; the root itself when it
  // covers the whole root; one object per (root, offset, size).
  MemRefPtr ViewOf(const MemRefPtr& base, int64_t offset, int64_t size) {
    MemRefPtr root = base->root_ptr();
    const int64_t abs = base->offset() + offset;
    if (abs == 0 && size == root->size()) return root;
    auto key = std::make_tuple(root.get(), abs, size);
    auto it = views_.find(key);
    if (it != views_.end()) return it->second;
    MemRefPtr view = MemRef::MakeView(root, abs, size);
    views_.emplace(key, view);
    return view;
  }

  absl::Status View(const ir::Var& v, const ir::Call& call, const MemRefPtr& src) {
    const ir::TileType* tile = ir::AsTile(v.type);
    const ir::TileType* src_tile = ir::AsTile(ir::TypeOfExpr(*call.args[0]));
    if (tile == nullptr || src_tile == nullptr) return absl::OkStatus();
    std::optional<int64_t> size = ir::StaticTileBytes(tile->shape, tile->dtype);
    if (!size || *size <= 0) {
      return Error(absl::StrCat("value '", v.name, "' has a non-static shape ",
                                ir::ShapeToString(tile->shape),
                                "; init-memref needs static shapes"));
    }
    int64_t offset = 0;
    if (call.op == "tile.slice") {
      std::vector<int64_t> origin;
      std::optional<std::vector<int64_t>> parent = ir::StaticDims(src_tile->shape);
      if (call.args.size() < 3 || !ir::GetIntList(*call.args[2], &origin) || !parent ||
          origin.size() != parent->size()) {
        return Error(
            absl::StrCat("value '", v.name, "': a tile.slice needs a static origin to be planned"));
      }
      int64_t linear = 0;
      for (size_t i = 0; i < origin.size(); ++i) linear = linear * (*parent)[i] + origin[i];
      const int64_t bits = linear * ir::DTypeBits(src_tile->dtype);
      if (bits % 8 != 0) {
        return Error(
            absl::StrCat("value '", v.name, "': a packed 4-bit slice origin must be byte-aligned"));
      }
      offset = bits / 8;
    }
    map_[&v] = ViewOf(src, offset, *size);
    return absl::OkStatus();
  }

  absl::Status Assign(const ir::AssignStmt& a) {
    const ir::Var& v = *a.var;
    if (ir::AsTile(v.type) == nullptr) return absl::OkStatus();
    const ir::Call* call = ir::AsCall(a.value.get());
    const ir::OpDef* def = call != nullptr ? ir::OpRegistry::Global().Find(call->op) : nullptr;
    if (def != nullptr && def->memory == ir::MemoryBehavior::kView && !call->args.empty()) {
      if (MemRefPtr src = Of(call->args[0])) return View(v, *call, src);
    }
    if (def != nullptr && def->memory == ir::MemoryBehavior::kWritesInto &&
        def->writes_into_arg < static_cast<int>(call->args.size())) {
      if (MemRefPtr dst = Of(call->args[def->writes_into_arg])) {
        map_[&v] = dst;
        return absl::OkStatus();
      }
    }
    if (const ir::Var* alias = ir::AsVar(a.value.get())) {  // `a = b`, if ever written
      if (MemRefPtr m = Of(a.value)) {
        (void)alias;
        map_[&v] = m;
        return absl::OkStatus();
      }
    }
    return Fresh(v);
  }

  static const ir::YieldStmt* LastYield(const StmtPtr& body) {
    std::vector<StmtPtr> stmts = ir::BodyStmts(body);
    return stmts.empty() ? nullptr : ir::AsYield(stmts.back().get());
  }

  absl::Status Stmt(const StmtPtr& s) {
    if (s == nullptr) return absl::OkStatus();
    switch (s->kind) {
      case ir::StmtKind::kAssign:
        return Assign(*static_cast<const ir::AssignStmt*>(s.get()));
      case ir::StmtKind::kSeq:
        for (const StmtPtr& c : static_cast<const ir::SeqStmts*>(s.get())->stmts) {
          if (absl::Status st = Stmt(c); !st.ok()) return st;
        }
        return absl::OkStatus();
      case ir::StmtKind::kFor: {
        const auto* f = static_cast<const ir::ForStmt*>(s.get());
        for (size_t k = 0; k < f->iter_args.size(); ++k) {
          MemRefPtr m = k < f->inits.size() ? Of(f->inits[k]) : nullptr;
          if (m != nullptr) {
            Share(*f->iter_args[k], m);
          } else if (absl::Status st = Fresh(*f->iter_args[k]); !st.ok()) {
            return st;
          }
        }
        if (absl::Status st = Stmt(f->body); !st.ok()) return st;
        for (size_t k = 0; k < f->return_vars.size(); ++k) {
          MemRefPtr m = k < f->iter_args.size() ? Of(f->iter_args[k]) : nullptr;
          if (m != nullptr) {
            Share(*f->return_vars[k], m);
          } else if (absl::Status st = Fresh(*f->return_vars[k]); !st.ok()) {
            return st;
          }
        }
        return absl::OkStatus();
      }
      case ir::StmtKind::kIf: {
        const auto* i = static_cast<const ir::IfStmt*>(s.get());
        if (absl::Status st = Stmt(i->then_body); !st.ok()) return st;
        if (absl::Status st = Stmt(i->else_body); !st.ok()) return st;
        const ir::YieldStmt* ty = LastYield(i->then_body);
        const ir::YieldStmt* ey = LastYield(i->else_body);
        for (size_t k = 0; k < i->return_vars.size(); ++k) {
          MemRefPtr m = ty != nullptr && k < ty->values.size() ? Of(ty->values[k]) : nullptr;
          if (m == nullptr && ey != nullptr && k < ey->values.size()) m = Of(ey->values[k]);
          if (m != nullptr) {
            Share(*i->return_vars[k], m);
          } else if (absl::Status st = Fresh(*i->return_vars[k]); !st.ok()) {
            return st;
          }
        }
        return absl::OkStatus();
      }
      default:
        return absl::OkStatus();
    }
  }

  const ir::Function& fn_;
  absl::flat_hash_map<const ir::Var*, MemRefPtr> map_;
  std::vector<MemRefPtr> roots_;
  std::map<std::tuple<const MemRef*, int64_t, int64_t>, MemRefPtr> views_;
};

}  // namespace

absl::StatusOr<FunctionResult> InitMemRefPass::RunOnFunction(
    const ir::FunctionPtr& function) const {
  bool any_tile = false;
  const ir::Var* without = nullptr;
  const ir::Var* with = nullptr;
  internal::ForEachDef(*function, [&](const VarPtr& v) {
    const ir::TileType* t = ir::AsTile(v->type);
    if (t == nullptr) return;
    any_tile = true;
    if (t->memref != nullptr) {
      if (with == nullptr) with = v.get();
    } else if (without == nullptr) {
      without = v.get();
    }
  });
  if (!any_tile || without == nullptr) return FunctionResult{function, false};
  if (with != nullptr) {
    return FunctionError(
        function->name,
        absl::StrCat("init-memref: value '", with->name, "' already has a MemRef but value '",
                     without->name, "' has none; run init-memref on IR without MemRefs"));
  }
  Assigner assigner(*function);
  if (absl::Status s = assigner.Run(); !s.ok()) return s;
  const auto& map = assigner.map();
  internal::Rewriter rw([&map](const ir::Var& v) -> ir::TypePtr {
    const ir::TileType* t = ir::AsTile(v.type);
    if (t == nullptr) return nullptr;
    auto it = map.find(&v);
    if (it == map.end()) return nullptr;
    return t->WithMemRef(it->second);
  });
  ir::FunctionPtr out = rw.RewriteFunction(function);
  std::vector<StmtPtr> body;
  for (const MemRefPtr& root : assigner.roots()) body.push_back(ir::MakeAllocStmt(root));
  for (const StmtPtr& s : ir::BodyStmts(out->body)) body.push_back(s);
  return FunctionResult{
      std::make_shared<ir::Function>(out->name, out->type, out->params, out->return_types,
                                     ir::FlattenSeq(body, out->body->loc), out->loc),
      true};
}

PassPtr CreateInitMemRefPass() { return std::make_unique<InitMemRefPass>(); }

}  // namespace passes
}  // namespace accelmem

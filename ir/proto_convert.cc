#include "ir/proto_convert.h"

#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace accelmem {
namespace ir {
namespace {

// ------------------------------------------------------------------------------ IR -> proto

class Encoder {
 public:
  explicit Encoder(pb::Function* out) : out_(out) {}

  void Function(const ir::Function& f) {
    out_->set_name(f.name);
    out_->set_type(std::string(FunctionTypeName(f.type)));
    for (const VarPtr& p : f.params) out_->add_params(VarIndex(*p));
    for (const TypePtr& t : f.return_types) TypeTo(*t, out_->add_return_types());
    StmtTo(*f.body, out_->mutable_body());
  }

 private:
  int VarIndex(const Var& v) {
    auto [it, inserted] = vars_.emplace(&v, out_->vars_size());
    if (inserted) {
      pb::Var* pv = out_->add_vars();
      pv->set_name(v.name);
      TypeTo(*v.type, pv->mutable_type());
    }
    return it->second;
  }

  int RootIndex(const MemRef& root) {
    auto [it, inserted] = roots_.emplace(&root, out_->memrefs_size());
    if (inserted) {
      pb::RootMemRef* r = out_->add_memrefs();
      r->set_name(root.name());
      r->set_space(std::string(MemorySpaceName(root.space())));
      r->set_addr(root.addr());
      r->set_size(root.size());
      r->set_id(root.id());
      r->set_slots(root.slots());
      r->set_declared(root.declared());
    }
    return it->second;
  }

  void MemRefTo(const MemRef& m, pb::MemRefRef* out) {
    out->set_root(RootIndex(*m.root()));
    if (m.is_view()) {
      out->set_is_view(true);
      out->set_offset(m.offset());
      out->set_size(m.size());
      if (m.slot() >= 0) {
        out->set_in_slot(true);
        out->set_slot(m.slot());
      }
    }
  }

  static void ShapeTo(const Shape& s, google::protobuf::RepeatedPtrField<pb::Dim>* out) {
    for (const Dim& d : s) {
      pb::Dim* pd = out->Add();
      if (d.is_static()) {
        pd->set_value(d.value);
      } else {
        pd->set_symbol(d.symbol);
      }
    }
  }

  void TypeTo(const Type& t, pb::Type* out) {
    switch (t.kind) {
      case TypeKind::kTile: {
        const auto& tile = static_cast<const TileType&>(t);
        out->set_kind(pb::Type::TILE);
        ShapeTo(tile.shape, out->mutable_shape());
        out->set_dtype(std::string(DTypeName(tile.dtype)));
        out->set_space(std::string(MemorySpaceName(tile.space)));
        if (tile.memref != nullptr) MemRefTo(*tile.memref, out->mutable_memref());
        if (tile.layout) out->set_layout(TileLayoutName(*tile.layout));
        return;
      }
      case TypeKind::kTensor: {
        const auto& tensor = static_cast<const TensorType&>(t);
        out->set_kind(pb::Type::TENSOR);
        ShapeTo(tensor.shape, out->mutable_shape());
        out->set_dtype(std::string(DTypeName(tensor.dtype)));
        return;
      }
      case TypeKind::kScalar:
        out->set_kind(pb::Type::SCALAR);
        out->set_dtype(std::string(DTypeName(static_cast<const ScalarType&>(t).dtype)));
        return;
      case TypeKind::kIndex:
        out->set_kind(pb::Type::INDEX);
        return;
      case TypeKind::kMemRef:
        out->set_kind(pb::Type::MEMREF);
        if (const MemRefPtr& m = static_cast<const MemRefType&>(t).memref) {
          MemRefTo(*m, out->mutable_memref());
        }
        return;
    }
  }

  void ExprTo(const Expr& e, pb::Expr* out) {
    switch (e.kind) {
      case ExprKind::kVar:
        out->set_var(VarIndex(static_cast<const Var&>(e)));
        return;
      case ExprKind::kInt:
        out->set_int_value(static_cast<const IntImm&>(e).value);
        return;
      case ExprKind::kFloat:
        out->set_float_value(static_cast<const FloatImm&>(e).value);
        return;
      case ExprKind::kString:
        out->set_string_value(static_cast<const StringImm&>(e).value);
        return;
      case ExprKind::kSpace:
        out->set_space(std::string(MemorySpaceName(static_cast<const SpaceImm&>(e).space)));
        return;
      case ExprKind::kDType:
        out->set_dtype(std::string(DTypeName(static_cast<const DTypeImm&>(e).dtype)));
        return;
      case ExprKind::kList: {
        pb::ExprList* l = out->mutable_list();
        for (const ExprPtr& i : static_cast<const ListExpr&>(e).items) ExprTo(*i, l->add_items());
        return;
      }
      case ExprKind::kCall: {
        const auto& c = static_cast<const Call&>(e);
        pb::Call* pc = out->mutable_call();
        pc->set_op(c.op);
        for (const ExprPtr& a : c.args) ExprTo(*a, pc->add_args());
        for (const auto& kv : c.kwargs) {
          pb::Kwarg* k = pc->add_kwargs();
          k->set_key(kv.first);
          ExprTo(*kv.second, k->mutable_value());
        }
        return;
      }
    }
  }

  void StmtTo(const Stmt& s, pb::Stmt* out) {
    switch (s.kind) {
      case StmtKind::kAssign: {
        const auto& a = static_cast<const AssignStmt&>(s);
        pb::Assign* pa = out->mutable_assign();
        ExprTo(*a.value, pa->mutable_value());  // uses before the definition
        pa->set_var(VarIndex(*a.var));
        return;
      }
      case StmtKind::kEval:
        ExprTo(*static_cast<const EvalStmt&>(s).expr, out->mutable_eval());
        return;
      case StmtKind::kSeq: {
        pb::StmtList* l = out->mutable_seq();
        for (const StmtPtr& c : static_cast<const SeqStmts&>(s).stmts) StmtTo(*c, l->add_stmts());
        return;
      }
      case StmtKind::kFor: {
        const auto& f = static_cast<const ForStmt&>(s);
        pb::For* pf = out->mutable_for_stmt();
        ExprTo(*f.start, pf->mutable_start());
        ExprTo(*f.stop, pf->mutable_stop());
        ExprTo(*f.step, pf->mutable_step());
        for (const ExprPtr& e : f.inits) ExprTo(*e, pf->add_inits());
        pf->set_loop_var(VarIndex(*f.loop_var));
        for (const VarPtr& v : f.iter_args) pf->add_iter_args(VarIndex(*v));
        StmtTo(*f.body, pf->mutable_body());
        for (const VarPtr& v : f.return_vars) pf->add_return_vars(VarIndex(*v));
        pf->set_pipeline(f.pipeline);
        return;
      }
      case StmtKind::kIf: {
        const auto& i = static_cast<const IfStmt&>(s);
        pb::If* pi = out->mutable_if_stmt();
        ExprTo(*i.cond, pi->mutable_cond());
        StmtTo(*i.then_body, pi->mutable_then_body());
        if (i.else_body != nullptr) StmtTo(*i.else_body, pi->mutable_else_body());
        for (const VarPtr& v : i.return_vars) pi->add_return_vars(VarIndex(*v));
        return;
      }
      case StmtKind::kYield: {
        pb::ExprTuple* t = out->mutable_yield_stmt();
        for (const ExprPtr& e : static_cast<const YieldStmt&>(s).values)
          ExprTo(*e, t->add_values());
        return;
      }
      case StmtKind::kReturn: {
        pb::ExprTuple* t = out->mutable_return_stmt();
        for (const ExprPtr& e : static_cast<const ReturnStmt&>(s).values)
          ExprTo(*e, t->add_values());
        return;
      }
    }
  }

  pb::Function* out_;
  absl::flat_hash_map<const Var*, int> vars_;
  absl::flat_hash_map<const MemRef*, int> roots_;
};

// ------------------------------------------------------------------------------ proto -> IR

struct DecodeError {
  std::string message;
};

[[noreturn]] void Bad(std::string message) { throw DecodeError{std::move(message)}; }

class Decoder {
 public:
  FunctionPtr Function(const pb::Function& f) {
    auto ft = FunctionTypeFromName(f.type());
    if (!ft.ok()) Bad(std::string(ft.status().message()));
    for (const pb::RootMemRef& r : f.memrefs()) {
      if (r.slots() != 0 && (r.slots() < kMinPipelineDepth || r.slots() > kMaxPipelineDepth ||
                             r.size() <= 0 || r.size() % r.slots() != 0)) {
        Bad(absl::StrCat("memref '", r.name(), "': ", r.slots(), " slots do not divide its ",
                         r.size(), " bytes"));
      }
      roots_.push_back(MemRef::MakeRoot(r.name(), Space(r.space()), r.addr(), r.size(), r.id(),
                                        r.slots(), r.declared()));
    }
    for (const pb::Var& v : f.vars()) {
      if (!v.has_type()) Bad(absl::StrCat("value '", v.name(), "' has no type"));
      vars_.push_back(MakeVar(v.name(), TypeFrom(v.type())));
    }
    std::vector<VarPtr> params;
    for (int p : f.params()) params.push_back(VarAt(p));
    std::vector<TypePtr> rets;
    for (const pb::Type& t : f.return_types()) rets.push_back(TypeFrom(t));
    if (!f.has_body()) Bad("function has no body");
    return std::make_shared<ir::Function>(f.name(), *ft, std::move(params), std::move(rets),
                                          StmtFrom(f.body(), 0));
  }

 private:
  static constexpr int kMaxDepth = 1000;

  static MemorySpace Space(const std::string& s) {
    auto v = MemorySpaceFromName(s);
    if (!v.ok()) Bad(std::string(v.status().message()));
    return *v;
  }
  // "" is no layout stated; anything but "ND" and "NZ" is an error.
  static std::optional<TileLayout> Layout(const std::string& s) {
    if (s.empty()) return std::nullopt;
    std::optional<TileLayout> l = TileLayoutFromName(s);
    if (!l) Bad(absl::StrCat("unknown tile layout '", s, "' (known: ND, NZ)"));
    return l;
  }
  static DType DT(const std::string& s) {
    auto v = DTypeFromName(s);
    if (!v.ok()) Bad(std::string(v.status().message()));
    return *v;
  }
  VarPtr VarAt(int i) const {
    if (i < 0 || i >= static_cast<int>(vars_.size()))
      Bad(absl::StrCat("value index ", i, " out of range"));
    return vars_[i];
  }
  MemRefPtr MemRefFrom(const pb::MemRefRef& m) {
    if (m.root() < 0 || m.root() >= static_cast<int>(roots_.size())) {
      Bad(absl::StrCat("memref index ", m.root(), " out of range"));
    }
    const MemRefPtr& root = roots_[m.root()];
    if (!m.is_view()) return root;
    const int64_t slot = m.in_slot() ? m.slot() : -1;
    if (m.in_slot() && (slot < 0 || slot >= root->slots())) {
      Bad(absl::StrCat("slot ", slot, " of memref '", root->name(), "' with ", root->slots(),
                       " slots"));
    }
    auto key = std::make_tuple(m.root(), slot, m.offset(), m.size());
    auto it = views_.find(key);
    if (it != views_.end()) return it->second;
    MemRefPtr view =
        slot >= 0 ? MemRef::MakeSlot(root, slot, m.offset() - slot * root->slot_size(), m.size())
                  : MemRef::MakeView(root, m.offset(), m.size());
    views_.emplace(key, view);
    return view;
  }
  static Shape ShapeFrom(const google::protobuf::RepeatedPtrField<pb::Dim>& dims) {
    Shape s;
    for (const pb::Dim& d : dims) {
      if (d.kind_case() == pb::Dim::kSymbol) {
        s.push_back(Dim::Symbol(d.symbol()));
      } else {
        s.push_back(Dim::Static(d.value()));
      }
    }
    return s;
  }
  TypePtr TypeFrom(const pb::Type& t) {
    switch (t.kind()) {
      case pb::Type::TILE: {
        MemRefPtr m = t.has_memref() ? MemRefFrom(t.memref()) : nullptr;
        return MakeTile(ShapeFrom(t.shape()), DT(t.dtype()), Space(t.space()), std::move(m),
                        Layout(t.layout()));
      }
      case pb::Type::TENSOR:
        return MakeTensor(ShapeFrom(t.shape()), DT(t.dtype()));
      case pb::Type::SCALAR:
        return MakeScalar(DT(t.dtype()));
      case pb::Type::INDEX:
        return MakeIndex();
      case pb::Type::MEMREF: {
        MemRefPtr m = t.has_memref() ? MemRefFrom(t.memref()) : nullptr;
        if (m != nullptr && m->is_view()) Bad("a MemRefType must hold a root MemRef");
        return MakeMemRefType(std::move(m));
      }
      default:
        Bad(absl::StrCat("unknown type kind ", static_cast<int>(t.kind())));
    }
  }
  ExprPtr ExprFrom(const pb::Expr& e, int depth) {
    if (depth > kMaxDepth) Bad("expression nesting too deep");
    switch (e.kind_case()) {
      case pb::Expr::kVar:
        return VarAt(e.var());
      case pb::Expr::kIntValue:
        return MakeInt(e.int_value());
      case pb::Expr::kFloatValue:
        return MakeFloat(e.float_value());
      case pb::Expr::kStringValue:
        return MakeString(e.string_value());
      case pb::Expr::kSpace:
        return MakeSpace(Space(e.space()));
      case pb::Expr::kDtype:
        return MakeDType(DT(e.dtype()));
      case pb::Expr::kList: {
        std::vector<ExprPtr> items;
        for (const pb::Expr& i : e.list().items()) items.push_back(ExprFrom(i, depth + 1));
        return MakeList(std::move(items));
      }
      case pb::Expr::kCall: {
        std::vector<ExprPtr> args;
        for (const pb::Expr& a : e.call().args()) args.push_back(ExprFrom(a, depth + 1));
        Kwargs kwargs;
        for (const pb::Kwarg& k : e.call().kwargs()) {
          if (!k.has_value()) Bad(absl::StrCat("keyword '", k.key(), "' has no value"));
          kwargs.emplace_back(k.key(), ExprFrom(k.value(), depth + 1));
        }
        return MakeCall(e.call().op(), std::move(args), std::move(kwargs));
      }
      case pb::Expr::KIND_NOT_SET:
        break;
    }
    Bad("empty expression");
  }
  ExprPtr Required(bool has, const pb::Expr& e, const char* what, int depth) {
    if (!has) Bad(absl::StrCat("missing ", what));
    return ExprFrom(e, depth + 1);
  }
  std::vector<VarPtr> VarsFrom(const google::protobuf::RepeatedField<int32_t>& idx) {
    std::vector<VarPtr> out;
    for (int i : idx) out.push_back(VarAt(i));
    return out;
  }
  StmtPtr StmtFrom(const pb::Stmt& s, int depth) {
    if (depth > kMaxDepth) Bad("statement nesting too deep");
    switch (s.kind_case()) {
      case pb::Stmt::kAssign: {
        ExprPtr value =
            Required(s.assign().has_value(), s.assign().value(), "assigned value", depth);
        return std::make_shared<AssignStmt>(VarAt(s.assign().var()), std::move(value));
      }
      case pb::Stmt::kEval:
        return std::make_shared<EvalStmt>(ExprFrom(s.eval(), depth + 1));
      case pb::Stmt::kSeq: {
        std::vector<StmtPtr> stmts;
        for (const pb::Stmt& c : s.seq().stmts()) stmts.push_back(StmtFrom(c, depth + 1));
        return std::make_shared<SeqStmts>(std::move(stmts));
      }
      case pb::Stmt::kForStmt: {
        const pb::For& f = s.for_stmt();
        ExprPtr start = Required(f.has_start(), f.start(), "loop start", depth);
        ExprPtr stop = Required(f.has_stop(), f.stop(), "loop stop", depth);
        ExprPtr step = Required(f.has_step(), f.step(), "loop step", depth);
        std::vector<ExprPtr> inits;
        for (const pb::Expr& e : f.inits()) inits.push_back(ExprFrom(e, depth + 1));
        if (!f.has_body()) Bad("loop has no body");
        return std::make_shared<ForStmt>(VarAt(f.loop_var()), std::move(start), std::move(stop),
                                         std::move(step), VarsFrom(f.iter_args()), std::move(inits),
                                         StmtFrom(f.body(), depth + 1), VarsFrom(f.return_vars()),
                                         SourceLoc{}, f.pipeline());
      }
      case pb::Stmt::kIfStmt: {
        const pb::If& i = s.if_stmt();
        ExprPtr cond = Required(i.has_cond(), i.cond(), "if condition", depth);
        if (!i.has_then_body()) Bad("if has no then branch");
        StmtPtr then_body = StmtFrom(i.then_body(), depth + 1);
        StmtPtr else_body = i.has_else_body() ? StmtFrom(i.else_body(), depth + 1) : nullptr;
        return std::make_shared<IfStmt>(std::move(cond), std::move(then_body), std::move(else_body),
                                        VarsFrom(i.return_vars()));
      }
      case pb::Stmt::kYieldStmt: {
        std::vector<ExprPtr> values;
        for (const pb::Expr& e : s.yield_stmt().values()) values.push_back(ExprFrom(e, depth + 1));
        return std::make_shared<YieldStmt>(std::move(values));
      }
      case pb::Stmt::kReturnStmt: {
        std::vector<ExprPtr> values;
        for (const pb::Expr& e : s.return_stmt().values()) values.push_back(ExprFrom(e, depth + 1));
        return std::make_shared<ReturnStmt>(std::move(values));
      }
      case pb::Stmt::KIND_NOT_SET:
        break;
    }
    Bad("empty statement");
  }

  std::vector<MemRefPtr> roots_;
  std::vector<VarPtr> vars_;
  absl::flat_hash_map<std::tuple<int, int64_t, int64_t, int64_t>, MemRefPtr> views_;
};

}  // namespace

pb::Program ToProto(const Program& program) {
  pb::Program out;
  for (const FunctionPtr& f : program.functions) Encoder(out.add_functions()).Function(*f);
  return out;
}

absl::StatusOr<ProgramPtr> FromProto(const pb::Program& proto) {
  std::vector<FunctionPtr> functions;
  for (const pb::Function& f : proto.functions()) {
    try {
      functions.push_back(Decoder().Function(f));
    } catch (const DecodeError& e) {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid IR proto in function '", f.name(), "': ", e.message));
    }
  }
  return std::make_shared<Program>(std::move(functions));
}

}  // namespace ir
}  // namespace accelmem

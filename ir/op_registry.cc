#include "ir/op_registry.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace accelmem {
namespace ir {
namespace {

using TypeResult = absl::StatusOr<TypePtr>;

absl::Status ArgError(const Call& call, int i, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(call.op, ": argument ", i, " ", what));
}

std::string Describe(const Expr& e) {
  if (const Type* t = TypeOfExpr(e)) return TypeToString(*t);
  switch (e.kind) {
    case ExprKind::kInt:
      return "an integer";
    case ExprKind::kFloat:
      return "a float";
    case ExprKind::kString:
      return "a string";
    case ExprKind::kList:
      return "a list";
    case ExprKind::kSpace:
      return "a memory space";
    case ExprKind::kDType:
      return "a dtype";
    default:
      return "an expression";
  }
}

absl::StatusOr<const TileType*> TileArg(const Call& call, int i) {
  const Type* t = TypeOfExpr(*call.args[i]);
  if (const TileType* tile = AsTile(t)) return tile;
  return ArgError(call, i, absl::StrCat("must be a Tile, got ", Describe(*call.args[i])));
}

absl::StatusOr<const TensorType*> TensorArg(const Call& call, int i) {
  const Type* t = TypeOfExpr(*call.args[i]);
  if (const TensorType* tensor = AsTensor(t)) return tensor;
  return ArgError(call, i, absl::StrCat("must be a Tensor, got ", Describe(*call.args[i])));
}

// A list of dims: integer literals or Index/Scalar values (dynamic, named by the value).
absl::StatusOr<Shape> ShapeArg(const Call& call, int i) {
  const ListExpr* list = AsList(call.args[i].get());
  if (list == nullptr) {
    return ArgError(call, i,
                    absl::StrCat("must be a list of dimensions, got ", Describe(*call.args[i])));
  }
  Shape shape;
  for (const ExprPtr& item : list->items) {
    if (const IntImm* v = AsInt(item.get())) {
      if (v->value < 0) return ArgError(call, i, "has a negative dimension");
      shape.push_back(Dim::Static(v->value));
    } else if (const Var* var = AsVar(item.get());
               var != nullptr &&
               (var->type->kind == TypeKind::kIndex || var->type->kind == TypeKind::kScalar)) {
      shape.push_back(Dim::Symbol(var->name));
    } else {
      return ArgError(call, i, "must contain integers or Index values");
    }
  }
  return shape;
}

// Offsets: same rules as shapes, but only their count and static values matter.
absl::Status OffsetsArg(const Call& call, int i, size_t rank, std::vector<int64_t>* statics) {
  absl::StatusOr<Shape> offs = ShapeArg(call, i);
  if (!offs.ok()) return offs.status();
  if (offs->size() != rank) {
    return ArgError(call, i, absl::StrCat("has ", offs->size(), " offsets for rank ", rank));
  }
  statics->clear();
  for (const Dim& d : *offs) statics->push_back(d.is_static() ? d.value : -1);
  return absl::OkStatus();
}

absl::StatusOr<MemorySpace> SpaceArg(const Call& call, int i) {
  if (const SpaceImm* s = AsSpace(call.args[i].get())) return s->space;
  return ArgError(call, i, absl::StrCat("must be a memory space, got ", Describe(*call.args[i])));
}

absl::StatusOr<DType> DTypeArg(const Call& call, int i) {
  if (const DTypeImm* d = AsDType(call.args[i].get())) return d->dtype;
  return ArgError(call, i, absl::StrCat("must be a dtype, got ", Describe(*call.args[i])));
}

// offsets + extent must lie inside the parent wherever both are static.
absl::Status CheckInside(const Call& call, const Shape& parent, const std::vector<int64_t>& offs,
                         const Shape& extent) {
  for (size_t d = 0; d < parent.size() && d < extent.size(); ++d) {
    if (!parent[d].is_static() || !extent[d].is_static() || offs[d] < 0) continue;
    if (offs[d] + extent[d].value > parent[d].value) {
      return absl::InvalidArgumentError(absl::StrCat(call.op, ": region [", offs[d], ", ",
                                                     offs[d] + extent[d].value, ") of dimension ",
                                                     d, " exceeds its extent ", parent[d].value));
    }
  }
  return absl::OkStatus();
}

TypeResult ElementwiseBinary(const Call& call) {
  auto a = TileArg(call, 0);
  if (!a.ok()) return a.status();
  auto b = TileArg(call, 1);
  if (!b.ok()) return b.status();
  if ((*a)->shape != (*b)->shape || (*a)->dtype != (*b)->dtype) {
    return absl::InvalidArgumentError(absl::StrCat(
        call.op, ": operands differ: ", TypeToString(**a), " and ", TypeToString(**b)));
  }
  if ((*a)->space != (*b)->space) {
    return absl::InvalidArgumentError(
        absl::StrCat(call.op, ": operands are in different memory spaces (",
                     MemorySpaceName((*a)->space), " and ", MemorySpaceName((*b)->space), ")"));
  }
  return MakeTile((*a)->shape, (*a)->dtype, (*a)->space);
}

TypeResult Unary(const Call& call) {
  auto a = TileArg(call, 0);
  if (!a.ok()) return a.status();
  return MakeTile((*a)->shape, (*a)->dtype, (*a)->space);
}

TypeResult Muls(const Call& call) {
  auto a = TileArg(call, 0);
  if (!a.ok()) return a.status();
  const Expr& s = *call.args[1];
  if (s.kind != ExprKind::kInt && s.kind != ExprKind::kFloat &&
      AsScalar(TypeOfExpr(s)) == nullptr) {
    return ArgError(call, 1, absl::StrCat("must be a scalar, got ", Describe(s)));
  }
  return MakeTile((*a)->shape, (*a)->dtype, (*a)->space);
}

TypeResult Cast(const Call& call) {
  auto a = TileArg(call, 0);
  if (!a.ok()) return a.status();
  auto d = DTypeArg(call, 1);
  if (!d.ok()) return d.status();
  return MakeTile((*a)->shape, *d, (*a)->space);
}

TypeResult Load(const Call& call) {
  auto t = TensorArg(call, 0);
  if (!t.ok()) return t.status();
  auto shape = ShapeArg(call, 2);
  if (!shape.ok()) return shape.status();
  if (shape->size() != (*t)->shape.size()) {
    return ArgError(
        call, 2,
        absl::StrCat("has rank ", shape->size(), " but the tensor has rank ", (*t)->shape.size()));
  }
  std::vector<int64_t> offs;
  if (absl::Status s = OffsetsArg(call, 1, (*t)->shape.size(), &offs); !s.ok()) return s;
  if (absl::Status s = CheckInside(call, (*t)->shape, offs, *shape); !s.ok()) return s;
  MemorySpace space = MemorySpace::kVec;
  if (const ExprPtr* kw = call.FindKwarg("space")) {
    const SpaceImm* sp = AsSpace(kw->get());
    if (sp == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(call.op, ": keyword 'space' must be a memory space"));
    }
    space = sp->space;
  }
  return MakeTile(*std::move(shape), (*t)->dtype, space);
}

TypeResult Store(const Call& call) {
  auto a = TileArg(call, 0);
  if (!a.ok()) return a.status();
  auto t = TensorArg(call, 2);
  if (!t.ok()) return t.status();
  if ((*a)->dtype != (*t)->dtype) {
    return absl::InvalidArgumentError(absl::StrCat(call.op, ": tile dtype ", DTypeName((*a)->dtype),
                                                   " differs from tensor dtype ",
                                                   DTypeName((*t)->dtype)));
  }
  if ((*a)->shape.size() != (*t)->shape.size()) {
    return absl::InvalidArgumentError(absl::StrCat(call.op, ": tile rank ", (*a)->shape.size(),
                                                   " differs from tensor rank ",
                                                   (*t)->shape.size()));
  }
  std::vector<int64_t> offs;
  if (absl::Status s = OffsetsArg(call, 1, (*t)->shape.size(), &offs); !s.ok()) return s;
  if (absl::Status s = CheckInside(call, (*t)->shape, offs, (*a)->shape); !s.ok()) return s;
  return MakeTensor((*t)->shape, (*t)->dtype);
}

absl::StatusOr<std::pair<const TileType*, const TileType*>> MatmulOperands(const Call& call,
                                                                           int first) {
  auto l = TileArg(call, first);
  if (!l.ok()) return l.status();
  auto r = TileArg(call, first + 1);
  if (!r.ok()) return r.status();
  if ((*l)->space != MemorySpace::kLeft) return ArgError(call, first, "must be in Left");
  if ((*r)->space != MemorySpace::kRight) return ArgError(call, first + 1, "must be in Right");
  if ((*l)->shape.size() != 2 || (*r)->shape.size() != 2) {
    return absl::InvalidArgumentError(absl::StrCat(call.op, ": operands must be rank 2"));
  }
  if ((*l)->shape[1] != (*r)->shape[0]) {
    return absl::InvalidArgumentError(
        absl::StrCat(call.op, ": inner dimensions differ: ", ShapeToString((*l)->shape), " x ",
                     ShapeToString((*r)->shape)));
  }
  return std::make_pair(*l, *r);
}

TypeResult Matmul(const Call& call) {
  auto ops = MatmulOperands(call, 0);
  if (!ops.ok()) return ops.status();
  return MakeTile({ops->first->shape[0], ops->second->shape[1]}, MatmulAccDType(ops->first->dtype),
                  MemorySpace::kAcc);
}

TypeResult MatmulAcc(const Call& call) {
  auto acc = TileArg(call, 0);
  if (!acc.ok()) return acc.status();
  if ((*acc)->space != MemorySpace::kAcc) return ArgError(call, 0, "must be in Acc");
  auto ops = MatmulOperands(call, 1);
  if (!ops.ok()) return ops.status();
  Shape mn = {ops->first->shape[0], ops->second->shape[1]};
  if ((*acc)->shape != mn) {
    return absl::InvalidArgumentError(
        absl::StrCat(call.op, ": accumulator shape ", ShapeToString((*acc)->shape),
                     " differs from product shape ", ShapeToString(mn)));
  }
  return MakeTile((*acc)->shape, (*acc)->dtype, MemorySpace::kAcc);
}

TypeResult Create(const Call& call) {
  auto shape = ShapeArg(call, 0);
  if (!shape.ok()) return shape.status();
  auto d = DTypeArg(call, 1);
  if (!d.ok()) return d.status();
  auto s = SpaceArg(call, 2);
  if (!s.ok()) return s.status();
  return MakeTile(*std::move(shape), *d, *s);
}

TypeResult Move(const Call& call) {
  auto a = TileArg(call, 0);
  if (!a.ok()) return a.status();
  auto s = SpaceArg(call, 1);
  if (!s.ok()) return s.status();
  return MakeTile((*a)->shape, (*a)->dtype, *s);
}

TypeResult Transpose(const Call& call) {
  auto a = TileArg(call, 0);
  if (!a.ok()) return a.status();
  if ((*a)->shape.size() < 2) return ArgError(call, 0, "must have rank >= 2");
  Shape s = (*a)->shape;
  std::swap(s[s.size() - 1], s[s.size() - 2]);
  return MakeTile(std::move(s), (*a)->dtype, (*a)->space);
}

TypeResult Slice(const Call& call) {
  auto a = TileArg(call, 0);
  if (!a.ok()) return a.status();
  auto shape = ShapeArg(call, 1);
  if (!shape.ok()) return shape.status();
  if (shape->size() != (*a)->shape.size()) {
    return ArgError(
        call, 1,
        absl::StrCat("has rank ", shape->size(), " but the source has rank ", (*a)->shape.size()));
  }
  std::vector<int64_t> offs;
  if (absl::Status s = OffsetsArg(call, 2, (*a)->shape.size(), &offs); !s.ok()) return s;
  if (absl::Status s = CheckInside(call, (*a)->shape, offs, *shape); !s.ok()) return s;
  return MakeTile(*std::move(shape), (*a)->dtype, (*a)->space);
}

TypeResult Reshape(const Call& call) {
  auto a = TileArg(call, 0);
  if (!a.ok()) return a.status();
  auto shape = ShapeArg(call, 1);
  if (!shape.ok()) return shape.status();
  auto n_in = StaticElementCount((*a)->shape);
  auto n_out = StaticElementCount(*shape);
  if (n_in && n_out && *n_in != *n_out) {
    return absl::InvalidArgumentError(absl::StrCat(call.op, ": cannot reshape ", *n_in,
                                                   " elements into ", ShapeToString(*shape)));
  }
  return MakeTile(*std::move(shape), (*a)->dtype, (*a)->space);
}

absl::Status IntKwarg(const Call& call, absl::string_view key) {
  const ExprPtr* kw = call.FindKwarg(key);
  if (kw != nullptr && AsInt(kw->get()) == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(call.op, ": keyword '", key, "' must be an integer"));
  }
  return absl::OkStatus();
}

TypeResult ReserveBuffer(const Call& call) {
  const ExprPtr* name = call.FindKwarg("name");
  if (name != nullptr && AsString(name->get()) == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(call.op, ": keyword 'name' must be a string"));
  }
  for (absl::string_view k : {"size", "base"}) {
    if (absl::Status s = IntKwarg(call, k); !s.ok()) return s;
  }
  const ExprPtr* size = call.FindKwarg("size");
  if (size != nullptr && AsInt(size->get())->value <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(call.op, ": requires size > 0, got ", AsInt(size->get())->value));
  }
  return MakeScalar(DType::kINT32);
}

TypeResult Alloc(const Call& call) {
  auto s = SpaceArg(call, 0);
  if (!s.ok()) return s.status();
  for (int i = 1; i < 4; ++i) {
    if (AsInt(call.args[i].get()) == nullptr) return ArgError(call, i, "must be an integer");
  }
  if (AsInt(call.args[1].get())->value < -1) return ArgError(call, 1, "(addr) must be >= -1");
  if (AsInt(call.args[2].get())->value <= 0) return ArgError(call, 2, "(size) must be > 0");
  if (AsInt(call.args[3].get())->value < 0) return ArgError(call, 3, "(id) must be >= 0");
  // slots=N: a slotted allocation (ir/memref.h), N equal slots of size / N bytes.
  if (const ExprPtr* kw = call.FindKwarg("slots")) {
    const IntImm* n = AsInt(kw->get());
    if (n == nullptr || n->value < kMinPipelineDepth || n->value > kMaxPipelineDepth) {
      return absl::InvalidArgumentError(absl::StrCat(call.op, ": slots must be an integer from ",
                                                     kMinPipelineDepth, " to ", kMaxPipelineDepth));
    }
    if (AsInt(call.args[2].get())->value % n->value != 0) {
      return absl::InvalidArgumentError(absl::StrCat(call.op, ": size ",
                                                     AsInt(call.args[2].get())->value,
                                                     " is not a multiple of slots=", n->value));
    }
  }
  // declared=1: an allocation the author declared (ir/memref.h). One spelling only, so that the
  // text, the proto and the structural hash of a plain allocation never change.
  if (const ExprPtr* kw = call.FindKwarg("declared")) {
    const IntImm* d = AsInt(kw->get());
    if (d == nullptr || d->value != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(call.op, ": declared=1 is its only value (leave it out otherwise)"));
    }
  }
  return MakeMemRefType(nullptr);
}

OpDef Def(std::string name, int min_args, int max_args,
          std::function<TypeResult(const Call&)> rule) {
  OpDef d;
  d.name = std::move(name);
  d.min_args = min_args;
  d.max_args = max_args;
  d.result_type = std::move(rule);
  return d;
}

// Moves run on the engine between their source and destination spaces.
Pipe MovePipe(const Call& call) {
  const TileType* src = call.args.empty() ? nullptr : AsTile(TypeOfExpr(*call.args[0]));
  const SpaceImm* dst = call.args.size() < 2 ? nullptr : AsSpace(call.args[1].get());
  if (src == nullptr || dst == nullptr) return Pipe::kNone;
  if (src->space == MemorySpace::kAcc) return Pipe::kFix;
  if (src->space == MemorySpace::kMat &&
      (dst->space == MemorySpace::kLeft || dst->space == MemorySpace::kRight)) {
    return Pipe::kMte1;
  }
  if (src->space == MemorySpace::kMat && dst->space == MemorySpace::kVec) return Pipe::kMte2;
  if (src->space == MemorySpace::kVec && dst->space == MemorySpace::kMat) return Pipe::kMte3;
  return Pipe::kVector;  // Vec -> Vec copies
}

// Stores drain Acc through the fix-pipe and every other space through the outbound DMA.
Pipe StorePipe(const Call& call) {
  const TileType* src = call.args.empty() ? nullptr : AsTile(TypeOfExpr(*call.args[0]));
  return src != nullptr && src->space == MemorySpace::kAcc ? Pipe::kFix : Pipe::kMte3;
}

}  // namespace

const char* PipeName(Pipe pipe) {
  switch (pipe) {
    case Pipe::kNone:
      return "none";
    case Pipe::kScalar:
      return "scalar";
    case Pipe::kVector:
      return "vector";
    case Pipe::kCube:
      return "cube";
    case Pipe::kMte1:
      return "mte1";
    case Pipe::kMte2:
      return "mte2";
    case Pipe::kMte3:
      return "mte3";
    case Pipe::kFix:
      return "fix";
  }
  return "none";
}

Pipe OpDef::OperandPipe(const Call& call, int operand) const {
  (void)operand;
  return pipe_fn ? pipe_fn(call) : pipe;
}

bool OpDef::AllowsKwarg(absl::string_view key) const {
  return std::find(kwargs.begin(), kwargs.end(), key) != kwargs.end();
}

bool OpDef::IsInplaceSafe(const Call& call) const {
  if (inplace_safe_fn) return inplace_safe_fn(call);
  return inplace_safe;
}

DType MatmulAccDType(DType input) { return IsIntDType(input) ? DType::kINT32 : DType::kFP32; }

std::string ArityText(const OpDef& def) {
  if (def.min_args == def.max_args) {
    return absl::StrCat(def.min_args, def.min_args == 1 ? " argument" : " arguments");
  }
  return absl::StrCat(def.min_args, " to ", def.max_args, " arguments");
}

absl::Status CheckCallSignature(const OpDef& def, const Call& call) {
  const int n = static_cast<int>(call.args.size());
  if (n < def.min_args || n > def.max_args) {
    return absl::InvalidArgumentError(
        absl::StrCat(def.name, " expects ", ArityText(def), ", got ", n));
  }
  for (const auto& kv : call.kwargs) {
    if (!def.AllowsKwarg(kv.first)) {
      return absl::InvalidArgumentError(
          absl::StrCat(def.name, " has no keyword argument '", kv.first, "'"));
    }
  }
  for (const std::string& k : def.required_kwargs) {
    if (call.FindKwarg(k) == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(def.name, " requires keyword '", k, "'"));
    }
  }
  return absl::OkStatus();
}

absl::Status OpRegistry::Register(OpDef def) {
  if (def.name.empty() || def.min_args < 0 || def.max_args < def.min_args || !def.result_type) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid op definition '", def.name, "': needs a name, arity and rule"));
  }
  if (def.memory == MemoryBehavior::kWritesInto &&
      (def.writes_into_arg < 0 || def.writes_into_arg >= def.min_args)) {
    return absl::InvalidArgumentError(absl::StrCat("op '", def.name, "' writes into argument ",
                                                   def.writes_into_arg,
                                                   " which is not always present"));
  }
  if (def.memory == MemoryBehavior::kView && def.min_args < 1) {
    return absl::InvalidArgumentError(absl::StrCat("view op '", def.name, "' needs an argument"));
  }
  if (ops_.contains(def.name)) {
    return absl::AlreadyExistsError(absl::StrCat("op '", def.name, "' is already registered"));
  }
  std::string name = def.name;
  ops_.emplace(std::move(name), std::make_unique<OpDef>(std::move(def)));
  return absl::OkStatus();
}

const OpDef* OpRegistry::Find(absl::string_view name) const {
  auto it = ops_.find(name);
  return it == ops_.end() ? nullptr : it->second.get();
}

std::vector<std::string> OpRegistry::Names() const {
  std::vector<std::string> names;
  for (const auto& kv : ops_) names.push_back(kv.first);
  std::sort(names.begin(), names.end());
  return names;
}

void OpRegistry::RegisterBuiltins(OpRegistry* r) {
  auto add = [r](OpDef d) {
    absl::Status s = r->Register(std::move(d));
    (void)s;  // duplicates (builtins registered twice) are ignored
  };
  auto vector = [](OpDef d) {
    d.pipe = Pipe::kVector;
    return d;
  };
  for (const char* name : {"tile.add", "tile.sub", "tile.mul"}) {
    add(vector(Def(name, 2, 2, ElementwiseBinary)));
  }
  add(vector(Def("tile.muls", 2, 2, Muls)));
  add(vector(Def("tile.exp", 1, 1, Unary)));
  for (const char* name : {"tile.recip", "tile.rsqrt"}) {
    OpDef d = vector(Def(name, 1, 1, Unary));
    d.inplace_safe = false;
    add(std::move(d));
  }
  {
    OpDef d = vector(Def("tile.cast", 2, 2, Cast));
    // Widening casts read each source element after writing a wider result element.
    d.inplace_safe_fn = [](const Call& call) {
      const TileType* src = call.args.empty() ? nullptr : AsTile(TypeOfExpr(*call.args[0]));
      const DTypeImm* dst = call.args.size() < 2 ? nullptr : AsDType(call.args[1].get());
      if (src == nullptr || dst == nullptr) return false;
      return DTypeBits(dst->dtype) <= DTypeBits(src->dtype);
    };
    add(std::move(d));
  }
  {
    OpDef d = Def("tile.load", 3, 3, Load);
    d.kwargs = {"space"};
    d.pipe = Pipe::kMte2;
    add(std::move(d));
  }
  {
    OpDef d = Def("tile.store", 3, 3, Store);
    d.pipe_fn = StorePipe;
    add(std::move(d));
  }
  {
    OpDef d = Def("tile.matmul", 2, 2, Matmul);
    d.pipe = Pipe::kCube;
    add(std::move(d));
  }
  {
    OpDef d = Def("tile.matmul_acc", 3, 3, MatmulAcc);
    d.pipe = Pipe::kCube;
    d.memory = MemoryBehavior::kWritesInto;
    d.writes_into_arg = 0;
    add(std::move(d));
  }
  add(vector(Def("tile.create", 3, 3, Create)));
  {
    OpDef d = Def("tile.move", 2, 2, Move);
    d.inplace_safe = false;
    d.pipe_fn = MovePipe;
    add(std::move(d));
  }
  {
    OpDef d = vector(Def("tile.transpose", 1, 1, Transpose));
    d.inplace_safe = false;
    add(std::move(d));
  }
  {
    OpDef d = Def("tile.slice", 3, 3, Slice);
    d.memory = MemoryBehavior::kView;
    add(std::move(d));
  }
  {
    OpDef d = Def("tile.reshape", 2, 2, Reshape);
    d.memory = MemoryBehavior::kView;
    add(std::move(d));
  }
  {
    OpDef d = Def("system.reserve_buffer", 0, 0, ReserveBuffer);
    d.kwargs = {"name", "size", "base"};
    d.required_kwargs = {"name", "size"};
    add(std::move(d));
  }
  {
    OpDef d = Def("tile.alloc", 4, 4, Alloc);
    d.kwargs = {"slots", "declared"};
    add(std::move(d));
  }
}

OpRegistry& OpRegistry::Global() {
  static OpRegistry* registry = [] {
    auto* r = new OpRegistry();
    RegisterBuiltins(r);
    return r;
  }();
  return *registry;
}

}  // namespace ir
}  // namespace accelmem

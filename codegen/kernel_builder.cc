#include "codegen/kernel_builder.h"

#include <array>
#include <functional>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "llvm/ADT/Triple.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Demangle/Demangle.h"
#include "llvm/IR/BasicBlock.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Type.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

namespace accelmem {
namespace codegen {

using sparse_runtime::DataType;
using sparse_runtime::kMaxAxes;
using sparse_runtime::PointOp;
using sparse_runtime::SNode;
using sparse_runtime::SNodeTree;
using sparse_runtime::SNodeType;

struct KernelBuilder::Impl {
  const SNodeTree* tree = nullptr;
  std::map<std::string, std::string> mangled;  // "Pointer_activate" -> mangled name
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
  std::vector<std::string> entry_points;
  // offsetof(RuntimeContext, node_managers) in the runtime module's layout; -1 if not found.
  int64_t node_managers_offset = -1;
  std::map<std::string, GcKernel> gc_kernels;  // GC kernels by name (for AddDeviceEntry)
};

int64_t StructForExtent(const SNode& snode) {
  const SNode& leaf = snode.type() == SNodeType::kPlace ? *snode.parent() : snode;
  return leaf.path().size() < 2 ? 1 : leaf.path()[1]->num_cells_per_container();
}

namespace {

constexpr const char kPrefix[] = "accelmem::sparse_runtime::";
constexpr const char kGcPrefix[] = "accelmem::gc::";

// The runtime's GC function each GC kernel calls ("gc::" + name: see MangledName).
const char* GcFunction(GcKernel kind) {
  switch (kind) {
    case GcKernel::kPrepare:
      return "gc::gc_scratch_reserve";
    case GcKernel::kPhase0:
      return "gc::gc_phase0_compact_free_list";
    case GcKernel::kPhase1:
      return "gc::gc_phase1_swap_lists";
    case GcKernel::kPhase2:
      return "gc::gc_phase2_refill_and_zero";
    case GcKernel::kSerial:
      return "gc::gc_serial";
  }
  return "";
}

// The offset of the NodeManager** member of the runtime module's RuntimeContext (matched by type,
// not position, so reordering the struct cannot silently break the GC kernels); -1 if absent.
int64_t NodeManagersOffset(const llvm::Module& runtime) {
  llvm::LLVMContext& c = runtime.getContext();
  auto* rt = llvm::StructType::getTypeByName(c, "struct.accelmem::sparse_runtime::RuntimeContext");
  if (rt == nullptr || rt->isOpaque()) return -1;
  int64_t offset = -1;
  for (unsigned e = 0; e < rt->getNumElements(); ++e) {
    llvm::Type* t = rt->getElementType(e);
    if (!t->isPointerTy() || t->isOpaquePointerTy()) continue;
    llvm::Type* inner = t->getPointerElementType();
    if (!inner->isPointerTy() || inner->isOpaquePointerTy()) continue;
    auto* nm = llvm::dyn_cast<llvm::StructType>(inner->getPointerElementType());
    if (nm == nullptr || !nm->hasName() ||
        nm->getName() != "struct.accelmem::sparse_runtime::NodeManager") {
      continue;
    }
    if (offset >= 0) return -1;  // ambiguous
    offset = static_cast<int64_t>(runtime.getDataLayout().getStructLayout(rt)->getElementOffset(e));
  }
  return offset;
}

bool IsSigned(DataType t) {
  return t == DataType::kI8 || t == DataType::kI16 || t == DataType::kI32 || t == DataType::kI64;
}
bool IsFloat(DataType t) { return t == DataType::kF32 || t == DataType::kF64; }

llvm::Type* LlvmType(DataType t, llvm::LLVMContext& c) {
  switch (t) {
    case DataType::kI8:
    case DataType::kU8:
      return llvm::Type::getInt8Ty(c);
    case DataType::kI16:
    case DataType::kU16:
      return llvm::Type::getInt16Ty(c);
    case DataType::kI32:
    case DataType::kU32:
      return llvm::Type::getInt32Ty(c);
    case DataType::kI64:
    case DataType::kU64:
      return llvm::Type::getInt64Ty(c);
    case DataType::kF32:
      return llvm::Type::getFloatTy(c);
    case DataType::kF64:
      return llvm::Type::getDoubleTy(c);
  }
  return nullptr;
}

const char* KindName(SNodeType t) {
  switch (t) {
    case SNodeType::kPointer:
      return "Pointer";
    case SNodeType::kBitmasked:
      return "Bitmasked";
    case SNodeType::kDynamic:
      return "Dynamic";
    default:
      return "";
  }
}

enum class RangeOp { kActivate, kWrite, kSum, kAtomicAdd, kDeactivate, kAppend };

using Coords = std::array<llvm::Value*, kMaxAxes>;  // i64 per axis; null = 0

// Emits kernels into the builder's module: shared helpers for walking the tree.
class Emitter {
 public:
  explicit Emitter(KernelBuilder::Impl* impl) : impl_(*impl), c_(*impl->context), b_(c_) {}

  absl::Status Range(absl::string_view name, RangeOp op, const SNode& target,
                     const std::vector<CoordMap>& coords, double scale, double offset);
  absl::Status Point(absl::string_view name, PointOp op, const SNode& target);
  absl::Status StructFor(absl::string_view name, const SNode& target);
  void Gc(absl::string_view name, GcKernel kind, const SNode& snode);

 private:
  enum class Walk { kActivate, kCheck };

  llvm::Type* I8P() { return llvm::Type::getInt8PtrTy(c_); }
  llvm::Type* I32P() { return llvm::Type::getInt32PtrTy(c_); }
  llvm::Function* Begin(absl::string_view name, llvm::Type* ret, std::vector<llvm::Type*> params);
  // A load of the i8* at ctx + field_offset, or of element `id` of the array found there.
  llvm::Value* CtxLoad(int field_offset, int id);
  llvm::Value* Root() { return CtxLoad(0, -1); }
  llvm::Value* Meta(const SNode& s) { return CtxLoad(16, s.id()); }
  llvm::Value* Ambient(const SNode& s) { return CtxLoad(24, s.id()); }
  llvm::FunctionCallee Rt(const std::string& fn, llvm::Type* ret, std::vector<llvm::Type*> params) {
    const std::string& m = impl_.mangled.at(fn);
    return impl_.module->getOrInsertFunction(m, llvm::FunctionType::get(ret, params, false));
  }
  llvm::Value* Call3(SNodeType kind, const char* op, llvm::Type* ret, llvm::Value* meta,
                     llvm::Value* node, llvm::Value* i32) {
    return b_.CreateCall(Rt(absl::StrCat(KindName(kind), op), ret, {I8P(), I8P(), b_.getInt32Ty()}),
                         {meta, node, i32});
  }
  llvm::Value* Gep(llvm::Value* p, uint64_t offset) {
    return offset == 0 ? p : b_.CreateGEP(b_.getInt8Ty(), p, b_.getInt64(offset));
  }
  llvm::BasicBlock* Block(const char* name) { return llvm::BasicBlock::Create(c_, name, fn_); }
  llvm::AllocaInst* EntryAlloca(llvm::Type* t, uint64_t n = 1);
  // for (i = lo; i < hi; ++i) body(i, cont): body may branch to cont; the builder is left in
  // the exit block.
  void Loop(llvm::Value* lo, llvm::Value* hi,
            const std::function<void(llvm::Value* i, llvm::BasicBlock* cont)>& body);
  // The cell index of `level` inside its container; `remaining` holds the extents still below,
  // per axis, and is updated (SparseRuntime::CellIndices with static strides).
  llvm::Value* CellIndex(const SNode& level, const Coords& coord, int64_t* remaining);
  // Walks path[1..upto] of `target` (coordinates scaled by the extents of `index_node`),
  // activating or checking each level. Inactive levels branch to `inactive`, activations that
  // yield the ambient element to `fail`. Returns the cell of path[upto].
  llvm::Value* WalkPath(const SNode& target, const SNode& index_node, int upto, const Coords& coord,
                        Walk mode, llvm::BasicBlock* inactive, llvm::BasicBlock* fail,
                        std::array<int64_t, kMaxAxes>* remaining_out);
  // Deactivates everything sparse below `cell` of `s` (SparseRuntime::DeactivateSubtree).
  void DeactivateSubtree(const SNode& s, llvm::Value* cell);
  // Deactivates the cell `l` of `target` in `container` (its parent cell is active), subtree
  // first; continues in the current block.
  // `counter` (an i64 alloca, or null) counts the cells deactivated.
  void DeactivateCell(const SNode& target, llvm::Value* container, llvm::Value* l,
                      llvm::Value* counter = nullptr);
  void Increment(llvm::Value* counter) {
    if (counter == nullptr) return;
    b_.CreateStore(b_.CreateAdd(b_.CreateLoad(b_.getInt64Ty(), counter), b_.getInt64(1)), counter);
  }
  // Struct-for recursion over path[depth] of `leaf`.
  void Visit(const SNode& leaf, int depth, llvm::Value* cell, const Coords& coord,
             uint64_t value_offset);
  llvm::Value* ToDouble(llvm::Value* v, DataType dt);
  llvm::Value* FromDouble(llvm::Value* v, DataType dt);

  KernelBuilder::Impl& impl_;
  llvm::LLVMContext& c_;
  llvm::IRBuilder<> b_;
  llvm::Function* fn_ = nullptr;
  llvm::Value* ctx_ = nullptr;
  llvm::BasicBlock* entry_ = nullptr;
  // Struct-for state.
  llvm::Value* sf_begin_ = nullptr;
  llvm::Value* sf_end_ = nullptr;
  llvm::Value* sf_visit_ = nullptr;
  llvm::Value* sf_data_ = nullptr;
  llvm::Value* sf_index_ = nullptr;
  llvm::Value* sf_count_ = nullptr;
};

llvm::Function* Emitter::Begin(absl::string_view name, llvm::Type* ret,
                               std::vector<llvm::Type*> params) {
  auto* type = llvm::FunctionType::get(ret, params, false);
  fn_ = llvm::Function::Create(type, llvm::Function::ExternalLinkage,
                               llvm::StringRef(name.data(), name.size()), impl_.module.get());
  ctx_ = fn_->getArg(0);
  fn_->addParamAttr(0, llvm::Attribute::NoAlias);
  entry_ = Block("entry");
  b_.SetInsertPoint(entry_);
  impl_.entry_points.emplace_back(name);
  return fn_;
}

llvm::Value* Emitter::CtxLoad(int field_offset, int id) {
  llvm::MDNode* invariant = llvm::MDNode::get(c_, {});
  llvm::Value* field =
      b_.CreateBitCast(Gep(ctx_, static_cast<uint64_t>(field_offset)), I8P()->getPointerTo());
  auto* value = b_.CreateLoad(I8P(), field);
  value->setMetadata(llvm::LLVMContext::MD_invariant_load, invariant);
  if (id < 0) return value;
  llvm::Value* array = b_.CreateBitCast(value, I8P()->getPointerTo());
  auto* element = b_.CreateLoad(I8P(), b_.CreateGEP(I8P(), array, b_.getInt64(id)));
  element->setMetadata(llvm::LLVMContext::MD_invariant_load, invariant);
  return element;
}

llvm::AllocaInst* Emitter::EntryAlloca(llvm::Type* t, uint64_t n) {
  llvm::IRBuilder<> entry(entry_, entry_->begin());
  return entry.CreateAlloca(t, n == 1 ? nullptr : entry.getInt64(n));
}

void Emitter::Loop(llvm::Value* lo, llvm::Value* hi,
                   const std::function<void(llvm::Value*, llvm::BasicBlock*)>& body) {
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  auto* header = Block("loop");
  auto* inner = Block("body");
  auto* latch = Block("latch");
  auto* exit = Block("exit");
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  llvm::PHINode* i = b_.CreatePHI(b_.getInt64Ty(), 2, "i");
  i->addIncoming(lo, pre);
  b_.CreateCondBr(b_.CreateICmpSLT(i, hi), inner, exit);
  b_.SetInsertPoint(inner);
  body(i, latch);
  b_.CreateBr(latch);
  b_.SetInsertPoint(latch);
  i->addIncoming(b_.CreateAdd(i, b_.getInt64(1)), latch);
  b_.CreateBr(header);
  b_.SetInsertPoint(exit);
}

llvm::Value* Emitter::CellIndex(const SNode& level, const Coords& coord, int64_t* remaining) {
  llvm::Value* l = b_.getInt64(0);
  for (int axis : level.axes()) {
    const int64_t shape = level.shape(axis);
    remaining[axis] /= shape;
    llvm::Value* part =
        coord[axis] == nullptr ? static_cast<llvm::Value*>(b_.getInt64(0)) : coord[axis];
    if (remaining[axis] != 1) part = b_.CreateSDiv(part, b_.getInt64(remaining[axis]));
    part = b_.CreateSRem(part, b_.getInt64(shape));
    l = b_.CreateAdd(b_.CreateMul(l, b_.getInt64(shape)), part);
  }
  return l;
}

llvm::Value* Emitter::WalkPath(const SNode& target, const SNode& index_node, int upto,
                               const Coords& coord, Walk mode, llvm::BasicBlock* inactive,
                               llvm::BasicBlock* fail,
                               std::array<int64_t, kMaxAxes>* remaining_out) {
  std::array<int64_t, kMaxAxes> remaining;
  remaining.fill(1);
  for (int axis : index_node.index_axes()) remaining[axis] = index_node.extent(axis);
  const auto& path = target.path();
  llvm::Value* cell = Root();
  for (int p = 1; p <= upto; ++p) {
    const SNode& level = *path[p];
    llvm::Value* l = CellIndex(level, coord, remaining.data());
    llvm::Value* container = Gep(cell, level.offset_in_parent_cell());
    if (level.type() == SNodeType::kDense) {
      cell = b_.CreateGEP(b_.getInt8Ty(), container,
                          b_.CreateMul(l, b_.getInt64(static_cast<int64_t>(level.cell_size()))));
      continue;
    }
    llvm::Value* l32 = b_.CreateTrunc(l, b_.getInt32Ty());
    llvm::Value* meta = Meta(level);
    if (mode == Walk::kActivate) {
      Call3(level.type(), "_activate", b_.getVoidTy(), meta, container, l32);
    } else {
      llvm::Value* active = Call3(level.type(), "_is_active", b_.getInt1Ty(), meta, container, l32);
      auto* on = Block("active");
      b_.CreateCondBr(active, on, inactive);
      b_.SetInsertPoint(on);
    }
    cell = Call3(level.type(), "_lookup_element", I8P(), meta, container, l32);
    if (sparse_runtime::HasAllocator(level.type())) {
      // The ambient element stands for an inactive cell (or a failed activation): never written.
      auto* ok = Block("found");
      b_.CreateCondBr(b_.CreateICmpEQ(cell, Ambient(level)),
                      mode == Walk::kActivate ? fail : inactive, ok);
      b_.SetInsertPoint(ok);
    }
  }
  if (remaining_out != nullptr) *remaining_out = remaining;
  return cell;
}

void Emitter::DeactivateSubtree(const SNode& s, llvm::Value* cell) {
  for (const SNode* child_ptr : s.children()) {
    const SNode& child = *child_ptr;
    if (child.type() == SNodeType::kPlace) continue;
    if (!sparse_runtime::IsSparse(child.type()) && !child.has_sparse_descendant()) continue;
    llvm::Value* container = Gep(cell, child.offset_in_parent_cell());
    if (child.type() == SNodeType::kDynamic) {
      b_.CreateCall(Rt("Dynamic_deactivate", b_.getVoidTy(), {I8P(), I8P()}),
                    {Meta(child), container});
      continue;
    }
    Loop(b_.getInt64(0), b_.getInt64(child.num_cells_per_container()),
         [&](llvm::Value* i, llvm::BasicBlock*) { DeactivateCell(child, container, i); });
  }
}

void Emitter::DeactivateCell(const SNode& target, llvm::Value* container, llvm::Value* l,
                             llvm::Value* counter) {
  if (target.type() == SNodeType::kDense) {
    Increment(counter);
    DeactivateSubtree(
        target,
        b_.CreateGEP(b_.getInt8Ty(), container,
                     b_.CreateMul(l, b_.getInt64(static_cast<int64_t>(target.cell_size())))));
    return;
  }
  if (target.type() == SNodeType::kDynamic) {
    Increment(counter);
    b_.CreateCall(Rt("Dynamic_deactivate", b_.getVoidTy(), {I8P(), I8P()}),
                  {Meta(target), container});
    return;
  }
  llvm::Value* l32 = b_.CreateTrunc(l, b_.getInt32Ty());
  llvm::Value* meta = Meta(target);
  auto* done = Block("deactivated");
  auto* on = Block("deactivate");
  llvm::Value* active = Call3(target.type(), "_is_active", b_.getInt1Ty(), meta, container, l32);
  b_.CreateCondBr(active, on, done);
  b_.SetInsertPoint(on);
  if (target.has_sparse_descendant()) {
    llvm::Value* inner = Call3(target.type(), "_lookup_element", I8P(), meta, container, l32);
    auto* below = Block("below");
    auto* self = Block("self");
    if (sparse_runtime::HasAllocator(target.type())) {
      b_.CreateCondBr(b_.CreateICmpEQ(inner, Ambient(target)), self, below);
    } else {
      b_.CreateBr(below);
    }
    b_.SetInsertPoint(below);
    DeactivateSubtree(target, inner);
    b_.CreateBr(self);
    b_.SetInsertPoint(self);
  }
  Call3(target.type(), "_deactivate", b_.getVoidTy(), meta, container, l32);
  Increment(counter);
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
}

llvm::Value* Emitter::ToDouble(llvm::Value* v, DataType dt) {
  if (dt == DataType::kF32) return b_.CreateFPExt(v, b_.getDoubleTy());
  if (IsFloat(dt)) return v;
  return IsSigned(dt) ? b_.CreateSIToFP(v, b_.getDoubleTy()) : b_.CreateUIToFP(v, b_.getDoubleTy());
}

llvm::Value* Emitter::FromDouble(llvm::Value* v, DataType dt) {
  llvm::Type* t = LlvmType(dt, c_);
  if (dt == DataType::kF32) return b_.CreateFPTrunc(v, t);
  if (IsFloat(dt)) return v;
  return IsSigned(dt) ? b_.CreateFPToSI(v, t) : b_.CreateFPToUI(v, t);
}

absl::Status Emitter::Range(absl::string_view name, RangeOp op, const SNode& target,
                            const std::vector<CoordMap>& coords, double scale, double offset) {
  // The SNode whose index the coordinates are: the container's for append.
  const SNode& index_node = op == RangeOp::kAppend ? *target.parent()->parent() : target;
  const int n = op == RangeOp::kDeactivate && target.type() == SNodeType::kDynamic
                    ? target.parent()->num_indices()
                    : index_node.num_indices();
  const SNode& coord_node = op == RangeOp::kDeactivate && target.type() == SNodeType::kDynamic
                                ? *target.parent()
                                : index_node;
  if (static_cast<int>(coords.size()) != n) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, ": ", coords.size(), " coordinate maps for an index of ", n, " coordinates"));
  }
  for (const CoordMap& m : coords) {
    if (m.divisor <= 0 || m.modulus < 0) {
      return absl::InvalidArgumentError(absl::StrCat(name, ": divisor must be > 0, modulus >= 0"));
    }
  }
  const bool is_sum = op == RangeOp::kSum;
  llvm::Type* ret = is_sum ? b_.getDoubleTy() : b_.getInt64Ty();
  Begin(name, ret, {I8P(), b_.getInt64Ty(), b_.getInt64Ty()});
  llvm::Value* begin = fn_->getArg(1);
  llvm::Value* end = fn_->getArg(2);
  llvm::AllocaInst* acc = EntryAlloca(ret);
  b_.CreateStore(
      is_sum ? static_cast<llvm::Value*>(llvm::ConstantFP::get(ret, 0.0)) : b_.getInt64(0), acc);
  auto* fail = Block("fail");
  Loop(begin, end, [&](llvm::Value* i, llvm::BasicBlock* cont) {
    Coords coord{};
    llvm::Value* in_range = b_.getTrue();
    for (int k = 0; k < n; ++k) {
      const CoordMap& m = coords[k];
      const int axis = coord_node.index_axes()[k];
      llvm::Value* v = i;
      if (m.divisor != 1) v = b_.CreateSDiv(v, b_.getInt64(m.divisor));
      if (m.modulus != 0) v = b_.CreateSRem(v, b_.getInt64(m.modulus));
      if (m.offset != 0) v = b_.CreateAdd(v, b_.getInt64(m.offset));
      coord[axis] = v;
      in_range = b_.CreateAnd(in_range, b_.CreateICmpSGE(v, b_.getInt64(0)));
      in_range = b_.CreateAnd(in_range, b_.CreateICmpSLT(v, b_.getInt64(coord_node.extent(axis))));
    }
    auto* walk = Block("walk");
    b_.CreateCondBr(in_range, walk, cont);
    b_.SetInsertPoint(walk);
    const int depth = static_cast<int>(target.path().size()) - 1;
    auto add_one = [&]() {
      b_.CreateStore(b_.CreateAdd(b_.CreateLoad(ret, acc), b_.getInt64(1)), acc);
    };
    llvm::Value* value =
        is_sum ? nullptr
               : b_.CreateFAdd(b_.CreateFMul(b_.CreateSIToFP(i, b_.getDoubleTy()),
                                             llvm::ConstantFP::get(b_.getDoubleTy(), scale)),
                               llvm::ConstantFP::get(b_.getDoubleTy(), offset));
    switch (op) {
      case RangeOp::kActivate:
        WalkPath(target, target, depth, coord, Walk::kActivate, nullptr, fail, nullptr);
        add_one();
        break;
      case RangeOp::kDeactivate: {
        std::array<int64_t, kMaxAxes> remaining;
        llvm::Value* parent =
            WalkPath(target, coord_node, depth - 1, coord, Walk::kCheck, cont, nullptr, &remaining);
        llvm::Value* l = target.type() == SNodeType::kDynamic
                             ? b_.getInt64(0)
                             : CellIndex(target, coord, remaining.data());
        DeactivateCell(target, Gep(parent, target.offset_in_parent_cell()), l, acc);
        break;
      }
      case RangeOp::kAppend: {
        const SNode& dynamic = *target.parent();
        llvm::Value* holder =
            WalkPath(target, index_node, depth - 2, coord, Walk::kActivate, nullptr, fail, nullptr);
        llvm::AllocaInst* position = EntryAlloca(b_.getInt32Ty());
        llvm::Value* slot =
            b_.CreateCall(Rt("Dynamic_allocate", I8P(), {I8P(), I8P(), I32P()}),
                          {Meta(dynamic), Gep(holder, dynamic.offset_in_parent_cell()), position});
        auto* ok = Block("appended");
        b_.CreateCondBr(b_.CreateIsNull(slot), fail, ok);
        b_.SetInsertPoint(ok);
        llvm::Type* t = LlvmType(target.dtype(), c_);
        b_.CreateStore(
            FromDouble(value, target.dtype()),
            b_.CreateBitCast(Gep(slot, target.offset_in_parent_cell()), t->getPointerTo()));
        add_one();
        break;
      }
      case RangeOp::kSum: {
        llvm::Value* cell =
            WalkPath(target, target, depth - 1, coord, Walk::kCheck, cont, nullptr, nullptr);
        llvm::Type* t = LlvmType(target.dtype(), c_);
        llvm::Value* v = b_.CreateLoad(
            t, b_.CreateBitCast(Gep(cell, target.offset_in_parent_cell()), t->getPointerTo()));
        b_.CreateStore(b_.CreateFAdd(b_.CreateLoad(ret, acc), ToDouble(v, target.dtype())), acc);
        break;
      }
      case RangeOp::kWrite:
      case RangeOp::kAtomicAdd: {
        llvm::Value* cell =
            WalkPath(target, target, depth - 1, coord, Walk::kActivate, nullptr, fail, nullptr);
        const DataType dt = target.dtype();
        llvm::Type* t = LlvmType(dt, c_);
        llvm::Value* addr =
            b_.CreateBitCast(Gep(cell, target.offset_in_parent_cell()), t->getPointerTo());
        if (op == RangeOp::kWrite) {
          b_.CreateStore(FromDouble(value, dt), addr);
        } else {
          b_.CreateAtomicRMW(IsFloat(dt) ? llvm::AtomicRMWInst::FAdd : llvm::AtomicRMWInst::Add,
                             addr, FromDouble(value, dt),
                             llvm::MaybeAlign(sparse_runtime::DataTypeSize(dt)),
                             llvm::AtomicOrdering::Monotonic);
        }
        add_one();
        break;
      }
    }
  });
  b_.CreateRet(b_.CreateLoad(ret, acc));
  b_.SetInsertPoint(fail);
  if (is_sum) {
    b_.CreateRet(llvm::ConstantFP::get(ret, 0.0));  // unreachable: sums never activate
  } else {
    b_.CreateRet(b_.getInt64(-1));
  }
  return absl::OkStatus();
}

absl::Status Emitter::Point(absl::string_view name, PointOp op, const SNode& target) {
  Begin(name, b_.getInt64Ty(), {I8P(), I32P(), I8P()});
  llvm::Value* coord_arg = fn_->getArg(1);
  llvm::Value* value_arg = fn_->getArg(2);
  const int depth = static_cast<int>(target.path().size()) - 1;
  // Coordinates are given for the SNode whose index the op takes.
  const SNode* index_node = &target;
  if (op == PointOp::kAppend) index_node = target.parent()->parent();
  if (op == PointOp::kLength ||
      (op == PointOp::kDeactivate && target.type() == SNodeType::kDynamic)) {
    index_node = target.parent();
  }
  Coords coord{};
  for (int axis : index_node->index_axes()) {
    coord[axis] = b_.CreateSExt(
        b_.CreateLoad(b_.getInt32Ty(), b_.CreateGEP(b_.getInt32Ty(), coord_arg, b_.getInt64(axis))),
        b_.getInt64Ty());
  }
  auto* fail = Block("fail");
  auto* inactive = Block("inactive");
  auto typed = [&](llvm::Value* p, uint64_t offset) {
    return b_.CreateBitCast(Gep(p, offset), LlvmType(target.dtype(), c_)->getPointerTo());
  };
  switch (op) {
    case PointOp::kActivate:
      WalkPath(target, target, depth, coord, Walk::kActivate, nullptr, fail, nullptr);
      b_.CreateRet(b_.getInt64(0));
      break;
    case PointOp::kIsActive: {
      std::array<int64_t, kMaxAxes> remaining;
      llvm::Value* parent =
          WalkPath(target, target, depth - 1, coord, Walk::kCheck, inactive, nullptr, &remaining);
      if (target.type() == SNodeType::kDense || target.type() == SNodeType::kRoot) {
        b_.CreateRet(b_.getInt64(1));
        break;
      }
      llvm::Value* l = b_.CreateTrunc(CellIndex(target, coord, remaining.data()), b_.getInt32Ty());
      llvm::Value* active = Call3(target.type(), "_is_active", b_.getInt1Ty(), Meta(target),
                                  Gep(parent, target.offset_in_parent_cell()), l);
      b_.CreateRet(b_.CreateZExt(active, b_.getInt64Ty()));
      break;
    }
    case PointOp::kRead: {
      llvm::Value* cell =
          WalkPath(target, target, depth - 1, coord, Walk::kCheck, inactive, nullptr, nullptr);
      llvm::Type* t = LlvmType(target.dtype(), c_);
      b_.CreateStore(b_.CreateLoad(t, typed(cell, target.offset_in_parent_cell())),
                     typed(value_arg, 0));
      b_.CreateRet(b_.getInt64(0));
      b_.SetInsertPoint(inactive);
      b_.CreateStore(llvm::Constant::getNullValue(t), typed(value_arg, 0));
      break;
    }
    case PointOp::kWrite: {
      llvm::Value* cell =
          WalkPath(target, target, depth - 1, coord, Walk::kActivate, nullptr, fail, nullptr);
      llvm::Type* t = LlvmType(target.dtype(), c_);
      b_.CreateStore(b_.CreateLoad(t, typed(value_arg, 0)),
                     typed(cell, target.offset_in_parent_cell()));
      b_.CreateRet(b_.getInt64(0));
      break;
    }
    case PointOp::kDeactivate: {
      std::array<int64_t, kMaxAxes> remaining;
      llvm::Value* parent = WalkPath(target, *index_node, depth - 1, coord, Walk::kCheck, inactive,
                                     nullptr, &remaining);
      llvm::Value* l = target.type() == SNodeType::kDynamic
                           ? b_.getInt64(0)
                           : CellIndex(target, coord, remaining.data());
      DeactivateCell(target, Gep(parent, target.offset_in_parent_cell()), l);
      b_.CreateRet(b_.getInt64(0));
      break;
    }
    case PointOp::kAppend: {
      const SNode& dynamic = *target.parent();
      llvm::Value* holder =
          WalkPath(target, *index_node, depth - 2, coord, Walk::kActivate, nullptr, fail, nullptr);
      llvm::AllocaInst* position = EntryAlloca(b_.getInt32Ty());
      llvm::Value* slot =
          b_.CreateCall(Rt("Dynamic_allocate", I8P(), {I8P(), I8P(), I32P()}),
                        {Meta(dynamic), Gep(holder, dynamic.offset_in_parent_cell()), position});
      auto* ok = Block("appended");
      auto* full = Block("full");
      b_.CreateCondBr(b_.CreateIsNull(slot), full, ok);
      b_.SetInsertPoint(full);
      b_.CreateRet(b_.getInt64(-2));
      b_.SetInsertPoint(ok);
      llvm::Type* t = LlvmType(target.dtype(), c_);
      b_.CreateStore(b_.CreateLoad(t, typed(value_arg, 0)),
                     typed(slot, target.offset_in_parent_cell()));
      b_.CreateRet(b_.CreateSExt(b_.CreateLoad(b_.getInt32Ty(), position), b_.getInt64Ty()));
      break;
    }
    case PointOp::kLength: {
      llvm::Value* holder =
          WalkPath(target, *index_node, depth - 1, coord, Walk::kCheck, inactive, nullptr, nullptr);
      llvm::Value* n =
          b_.CreateCall(Rt("Dynamic_get_num_elements", b_.getInt32Ty(), {I8P(), I8P()}),
                        {Meta(target), Gep(holder, target.offset_in_parent_cell())});
      b_.CreateRet(b_.CreateSExt(n, b_.getInt64Ty()));
      break;
    }
  }
  // An inactive level: 0 (not active, length 0, nothing to deactivate; kRead stored zero above).
  b_.SetInsertPoint(inactive);
  b_.CreateRet(b_.getInt64(0));
  b_.SetInsertPoint(fail);
  b_.CreateRet(b_.getInt64(-1));
  return absl::OkStatus();
}

void Emitter::Visit(const SNode& leaf, int depth, llvm::Value* cell, const Coords& coord,
                    uint64_t value_offset) {
  const SNode& level = *leaf.path()[depth];
  llvm::Value* container = Gep(cell, level.offset_in_parent_cell());
  llvm::Value* meta = Meta(level);
  llvm::Value* n =
      level.type() == SNodeType::kDynamic
          ? b_.CreateSExt(
                b_.CreateCall(Rt("Dynamic_get_num_elements", b_.getInt32Ty(), {I8P(), I8P()}),
                              {meta, container}),
                b_.getInt64Ty())
          : static_cast<llvm::Value*>(b_.getInt64(level.num_cells_per_container()));
  llvm::Value* lo = b_.getInt64(0);
  llvm::Value* hi = n;
  if (depth == 1) {
    lo = b_.CreateSelect(b_.CreateICmpSGT(sf_begin_, lo), sf_begin_, lo);
    hi = b_.CreateSelect(b_.CreateICmpSLT(sf_end_, hi), sf_end_, hi);
  }
  Loop(lo, hi, [&](llvm::Value* i, llvm::BasicBlock* cont) {
    llvm::Value* child = nullptr;
    if (level.type() == SNodeType::kDense) {
      child = b_.CreateGEP(b_.getInt8Ty(), container,
                           b_.CreateMul(i, b_.getInt64(static_cast<int64_t>(level.cell_size()))));
    } else {
      llvm::Value* i32 = b_.CreateTrunc(i, b_.getInt32Ty());
      if (level.type() != SNodeType::kDynamic) {
        llvm::Value* active =
            Call3(level.type(), "_is_active", b_.getInt1Ty(), meta, container, i32);
        auto* on = Block("active");
        b_.CreateCondBr(active, on, cont);
        b_.SetInsertPoint(on);
      }
      child = Call3(level.type(), "_lookup_element", I8P(), meta, container, i32);
      if (sparse_runtime::HasAllocator(level.type())) {
        auto* ok = Block("found");
        b_.CreateCondBr(b_.CreateICmpEQ(child, Ambient(level)), cont, ok);
        b_.SetInsertPoint(ok);
      }
    }
    // Refined coordinates of the child cell (row-major over the level's axes).
    Coords refined = coord;
    llvm::Value* l = i;
    const auto& axes = level.axes();
    for (auto it = axes.rbegin(); it != axes.rend(); ++it) {
      const int64_t shape = level.shape(*it);
      llvm::Value* digit = b_.CreateSRem(l, b_.getInt64(shape));
      llvm::Value* base = coord[*it] == nullptr ? static_cast<llvm::Value*>(b_.getInt64(0))
                                                : b_.CreateMul(coord[*it], b_.getInt64(shape));
      refined[*it] = b_.CreateAdd(base, digit);
      l = b_.CreateSDiv(l, b_.getInt64(shape));
    }
    if (&level == &leaf) {
      const auto& index_axes = leaf.index_axes();
      for (size_t k = 0; k < index_axes.size(); ++k) {
        llvm::Value* v = refined[index_axes[k]] == nullptr
                             ? static_cast<llvm::Value*>(b_.getInt64(0))
                             : refined[index_axes[k]];
        b_.CreateStore(b_.CreateTrunc(v, b_.getInt32Ty()),
                       b_.CreateGEP(b_.getInt32Ty(), sf_index_, b_.getInt64(k)));
      }
      auto* visit_type = llvm::FunctionType::get(b_.getVoidTy(), {I8P(), I32P(), I8P()}, false);
      b_.CreateCall(visit_type, sf_visit_, {sf_data_, sf_index_, Gep(child, value_offset)});
      b_.CreateStore(b_.CreateAdd(b_.CreateLoad(b_.getInt64Ty(), sf_count_), b_.getInt64(1)),
                     sf_count_);
    } else {
      Visit(leaf, depth + 1, child, refined, value_offset);
    }
  });
}

absl::Status Emitter::StructFor(absl::string_view name, const SNode& target) {
  const bool is_place = target.type() == SNodeType::kPlace;
  const SNode& leaf = is_place ? *target.parent() : target;
  const uint64_t value_offset = is_place ? target.offset_in_parent_cell() : 0;
  auto* visit_type = llvm::FunctionType::get(b_.getVoidTy(), {I8P(), I32P(), I8P()}, false);
  Begin(name, b_.getInt64Ty(),
        {I8P(), b_.getInt64Ty(), b_.getInt64Ty(), visit_type->getPointerTo(), I8P()});
  sf_begin_ = fn_->getArg(1);
  sf_end_ = fn_->getArg(2);
  sf_visit_ = fn_->getArg(3);
  sf_data_ = fn_->getArg(4);
  sf_index_ = EntryAlloca(b_.getInt32Ty(), kMaxAxes);
  sf_count_ = EntryAlloca(b_.getInt64Ty());
  b_.CreateStore(b_.getInt64(0), sf_count_);
  if (leaf.path().size() < 2) {
    // The root: one cell, index 0 of [begin, end).
    auto* visit = Block("visit");
    auto* done = Block("done");
    b_.CreateCondBr(b_.CreateAnd(b_.CreateICmpSLE(sf_begin_, b_.getInt64(0)),
                                 b_.CreateICmpSGT(sf_end_, b_.getInt64(0))),
                    visit, done);
    b_.SetInsertPoint(visit);
    b_.CreateCall(visit_type, sf_visit_, {sf_data_, sf_index_, Gep(Root(), value_offset)});
    b_.CreateRet(b_.getInt64(1));
    b_.SetInsertPoint(done);
    b_.CreateRet(b_.getInt64(0));
    return absl::OkStatus();
  }
  Visit(leaf, 1, Root(), Coords{}, value_offset);
  b_.CreateRet(b_.CreateLoad(b_.getInt64Ty(), sf_count_));
  return absl::OkStatus();
}

void Emitter::Gc(absl::string_view name, GcKernel kind, const SNode& snode) {
  llvm::Type* i32 = b_.getInt32Ty();
  llvm::Type* i64 = b_.getInt64Ty();
  llvm::Type* ret = b_.getVoidTy();
  std::vector<llvm::Type*> params = {I8P(), I8P()};
  switch (kind) {
    case GcKernel::kPrepare:
      ret = i64;
      params.push_back(i32);
      break;
    case GcKernel::kPhase0:
      params.insert(params.end(), {i32, i32});
      break;
    case GcKernel::kPhase1:
      params.push_back(i32);
      break;
    case GcKernel::kPhase2:
      params.insert(params.end(), {i32, i32, i32, i32});
      break;
    case GcKernel::kSerial:
      ret = i64;
      break;
  }
  Begin(name, ret, params);
  llvm::Value* scratch = fn_->getArg(1);
  // nm = ctx->runtime->node_managers[snode id], as upstream's gc kernels find it.
  llvm::Value* runtime = CtxLoad(8, -1);
  llvm::Value* table = b_.CreateLoad(
      I8P(), b_.CreateBitCast(Gep(runtime, static_cast<uint64_t>(impl_.node_managers_offset)),
                              I8P()->getPointerTo()));
  llvm::Value* nm = b_.CreateLoad(
      I8P(),
      b_.CreateGEP(I8P(), b_.CreateBitCast(table, I8P()->getPointerTo()), b_.getInt64(snode.id())));
  auto* run = Block("run");
  auto* none = Block("no_allocator");
  b_.CreateCondBr(
      b_.CreateICmpEQ(nm, llvm::ConstantPointerNull::get(llvm::cast<llvm::PointerType>(I8P()))),
      none, run);
  b_.SetInsertPoint(none);
  if (ret->isVoidTy()) {
    b_.CreateRetVoid();
  } else {
    b_.CreateRet(b_.getInt64(0));
  }
  b_.SetInsertPoint(run);
  auto arg = [&](unsigned a) { return fn_->getArg(a); };
  const std::string fn = GcFunction(kind);
  switch (kind) {
    case GcKernel::kPrepare: {
      llvm::Value* ok =
          b_.CreateCall(Rt(fn, b_.getInt1Ty(), {I8P(), I8P(), i32}), {scratch, nm, arg(2)});
      b_.CreateRet(b_.CreateZExt(ok, i64));
      break;
    }
    case GcKernel::kPhase0:
      b_.CreateCall(Rt(fn, b_.getVoidTy(), {I8P(), I8P(), i32, i32}),
                    {nm, scratch, arg(2), arg(3)});
      b_.CreateRetVoid();
      break;
    case GcKernel::kPhase1:
      b_.CreateCall(Rt(fn, b_.getVoidTy(), {I8P(), I8P(), i32}), {nm, scratch, arg(2)});
      b_.CreateRetVoid();
      break;
    case GcKernel::kPhase2:
      b_.CreateCall(Rt(fn, b_.getVoidTy(), {I8P(), I8P(), i32, i32, i32, i32}),
                    {nm, scratch, arg(2), arg(3), arg(4), arg(5)});
      b_.CreateRetVoid();
      break;
    case GcKernel::kSerial: {
      llvm::Value* ok = b_.CreateCall(Rt(fn, b_.getInt1Ty(), {I8P(), I8P()}), {nm, scratch});
      b_.CreateRet(b_.CreateZExt(ok, i64));
      break;
    }
  }
}

// Checks shared by every Add*: a fresh name of a builder that is not finished, an SNode of the
// builder's tree.
absl::Status CheckAdd(const KernelBuilder::Impl& impl, absl::string_view name, const SNode& snode) {
  if (impl.module == nullptr) return absl::FailedPreconditionError("KernelBuilder finished");
  const SNodeTree& tree = *impl.tree;
  if (snode.id() < 0 || snode.id() >= tree.num_snodes() || &tree.snode(snode.id()) != &snode) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": not an SNode of the builder's tree"));
  }
  if (impl.module->getFunction(llvm::StringRef(name.data(), name.size())) != nullptr) {
    return absl::AlreadyExistsError(absl::StrCat(name, ": defined twice"));
  }
  return absl::OkStatus();
}

absl::Status NeedPlace(absl::string_view name, const SNode& s) {
  if (s.type() != SNodeType::kPlace) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": ", s.DebugPath(), " is not a place"));
  }
  return absl::OkStatus();
}

absl::Status NeedDeactivatable(absl::string_view name, const SNode& s) {
  if (s.type() == SNodeType::kPlace || s.type() == SNodeType::kRoot) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": ", s.DebugPath(), " cannot be deactivated"));
  }
  return absl::OkStatus();
}

absl::Status NeedDynamicPlace(absl::string_view name, const SNode& s) {
  if (s.type() != SNodeType::kPlace || s.parent()->type() != SNodeType::kDynamic) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": ", s.DebugPath(), " is not a place under a dynamic SNode"));
  }
  return absl::OkStatus();
}

// The op-specific check of a range kernel: the AddRange* entry points differ only in it.
absl::Status CheckRangeOp(absl::string_view name, RangeOp op, const SNode& s) {
  switch (op) {
    case RangeOp::kWrite:
    case RangeOp::kSum:
    case RangeOp::kAtomicAdd:
      return NeedPlace(name, s);
    case RangeOp::kAppend:
      return NeedDynamicPlace(name, s);
    case RangeOp::kDeactivate:
      return NeedDeactivatable(name, s);
    case RangeOp::kActivate:
      if (s.type() == SNodeType::kPlace || s.type() == SNodeType::kRoot) {
        return absl::InvalidArgumentError(
            absl::StrCat(name, ": ", s.DebugPath(), " has no cells to activate (use its parent)"));
      }
      return absl::OkStatus();
  }
  return absl::OkStatus();
}

absl::Status AddRangeKernel(KernelBuilder::Impl* impl, absl::string_view name, RangeOp op,
                            const SNode& snode, const std::vector<CoordMap>& coords, double scale,
                            double offset) {
  absl::Status s = CheckAdd(*impl, name, snode);
  if (s.ok()) s = CheckRangeOp(name, op, snode);
  if (!s.ok()) return s;
  return Emitter(impl).Range(name, op, snode, coords, scale, offset);
}

}  // namespace

KernelBuilder::KernelBuilder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
KernelBuilder::~KernelBuilder() = default;

absl::StatusOr<std::unique_ptr<KernelBuilder>> KernelBuilder::Create(
    absl::string_view runtime_bitcode, const SNodeTree& tree) {
  if (!tree.finalized()) {
    return absl::FailedPreconditionError("KernelBuilder: the SNode tree is not finalized");
  }
  auto impl = std::make_unique<Impl>();
  impl->tree = &tree;
  impl->context = std::make_unique<llvm::LLVMContext>();
  llvm::LLVMContext scratch;
  auto runtime = llvm::parseBitcodeFile(
      llvm::MemoryBufferRef(llvm::StringRef(runtime_bitcode.data(), runtime_bitcode.size()),
                            "runtime"),
      scratch);
  if (!runtime) {
    return absl::InvalidArgumentError(
        absl::StrCat("runtime bitcode: ", llvm::toString(runtime.takeError())));
  }
  const std::string prefix = kPrefix;
  const std::string gc_prefix = kGcPrefix;
  for (const llvm::Function& f : **runtime) {
    const std::string demangled = llvm::demangle(f.getName().str());
    // accelmem::sparse_runtime::X -> "X", accelmem::gc::X -> "gc::X".
    const bool is_gc = demangled.rfind(gc_prefix, 0) == 0;
    if (!is_gc && demangled.rfind(prefix, 0) != 0) continue;
    const size_t skip = is_gc ? std::string("accelmem::").size() : prefix.size();
    const size_t paren = demangled.find('(', skip);
    if (paren == std::string::npos) continue;
    impl->mangled.emplace(demangled.substr(skip, paren - skip), f.getName().str());
  }
  impl->node_managers_offset = NodeManagersOffset(**runtime);
  std::vector<std::string> needed = {"Dynamic_allocate", "Dynamic_deactivate",
                                     "Dynamic_get_num_elements"};
  for (const char* kind : {"Pointer", "Bitmasked", "Dynamic"}) {
    for (const char* op : {"_activate", "_is_active", "_lookup_element"}) {
      needed.push_back(absl::StrCat(kind, op));
    }
  }
  needed.push_back("Pointer_deactivate");
  needed.push_back("Bitmasked_deactivate");
  for (const std::string& fn : needed) {
    if (impl->mangled.count(fn) == 0) {
      return absl::NotFoundError(absl::StrCat("runtime bitcode lacks ", prefix, fn));
    }
  }
  impl->module = std::make_unique<llvm::Module>("kernels", *impl->context);
  impl->module->setTargetTriple((*runtime)->getTargetTriple());
  impl->module->setDataLayout((*runtime)->getDataLayout());
  return std::unique_ptr<KernelBuilder>(new KernelBuilder(std::move(impl)));
}

absl::Status KernelBuilder::AddRangeWrite(absl::string_view name, const SNode& place,
                                          const std::vector<CoordMap>& coords, double scale,
                                          double offset) {
  return AddRangeKernel(impl_.get(), name, RangeOp::kWrite, place, coords, scale, offset);
}

absl::Status KernelBuilder::AddRangeActivate(absl::string_view name, const SNode& snode,
                                             const std::vector<CoordMap>& coords) {
  return AddRangeKernel(impl_.get(), name, RangeOp::kActivate, snode, coords, 0, 0);
}

absl::Status KernelBuilder::AddRangeSum(absl::string_view name, const SNode& place,
                                        const std::vector<CoordMap>& coords) {
  return AddRangeKernel(impl_.get(), name, RangeOp::kSum, place, coords, 0, 0);
}

absl::Status KernelBuilder::AddRangeAtomicAdd(absl::string_view name, const SNode& place,
                                              const std::vector<CoordMap>& coords, double scale,
                                              double offset) {
  return AddRangeKernel(impl_.get(), name, RangeOp::kAtomicAdd, place, coords, scale, offset);
}

absl::Status KernelBuilder::AddRangeDeactivate(absl::string_view name, const SNode& snode,
                                               const std::vector<CoordMap>& coords) {
  return AddRangeKernel(impl_.get(), name, RangeOp::kDeactivate, snode, coords, 0, 0);
}

absl::Status KernelBuilder::AddRangeAppend(absl::string_view name, const SNode& place,
                                           const std::vector<CoordMap>& coords, double scale,
                                           double offset) {
  return AddRangeKernel(impl_.get(), name, RangeOp::kAppend, place, coords, scale, offset);
}

absl::Status KernelBuilder::AddPoint(absl::string_view name, PointOp op, const SNode& snode) {
  absl::Status s = CheckAdd(*impl_, name, snode);
  if (!s.ok()) return s;
  switch (op) {
    case PointOp::kRead:
    case PointOp::kWrite:
      s = NeedPlace(name, snode);
      break;
    case PointOp::kAppend:
      s = NeedDynamicPlace(name, snode);
      break;
    case PointOp::kLength:
      if (snode.type() != SNodeType::kDynamic) {
        s = absl::InvalidArgumentError(absl::StrCat(name, ": not a dynamic SNode"));
      }
      break;
    case PointOp::kDeactivate:
      s = NeedDeactivatable(name, snode);
      break;
    case PointOp::kActivate:
    case PointOp::kIsActive:
      if (snode.type() == SNodeType::kPlace) {
        s = absl::InvalidArgumentError(absl::StrCat(name, ": a place has no cells"));
      }
      break;
  }
  if (!s.ok()) return s;
  return Emitter(impl_.get()).Point(name, op, snode);
}

absl::Status KernelBuilder::AddStructFor(absl::string_view name, const SNode& snode) {
  absl::Status s = CheckAdd(*impl_, name, snode);
  if (!s.ok()) return s;
  return Emitter(impl_.get()).StructFor(name, snode);
}

std::string GcKernelName(absl::string_view prefix, GcKernel kind) {
  static constexpr const char* kSuffix[kNumGcKernels] = {"_prepare", "_phase0", "_phase1",
                                                         "_phase2", "_serial"};
  return absl::StrCat(prefix, kSuffix[static_cast<int>(kind)]);
}

absl::Status KernelBuilder::AddGcKernel(absl::string_view name, GcKernel kind, const SNode& snode) {
  absl::Status s = CheckAdd(*impl_, name, snode);
  if (!s.ok()) return s;
  if (!sparse_runtime::HasAllocator(snode.type())) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": ", snode.DebugPath(), " has no allocator to collect"));
  }
  if (impl_->mangled.count(GcFunction(kind)) == 0) {
    return absl::NotFoundError(absl::StrCat("runtime bitcode lacks accelmem::", GcFunction(kind)));
  }
  if (impl_->node_managers_offset < 0) {
    return absl::NotFoundError(
        "runtime bitcode: no RuntimeContext type with one NodeManager** member");
  }
  Emitter(impl_.get()).Gc(name, kind, snode);
  impl_->gc_kernels.emplace(std::string(name), kind);
  return absl::OkStatus();
}

absl::Status KernelBuilder::AddGc(absl::string_view prefix, const SNode& snode) {
  for (int k = 0; k < kNumGcKernels; ++k) {
    const GcKernel kind = static_cast<GcKernel>(k);
    absl::Status s = AddGcKernel(GcKernelName(prefix, kind), kind, snode);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

namespace {

// The device entry of GC kernel `k` (see AddDeviceEntry): worker and lane ids from the grid.
void EmitGcDeviceEntry(llvm::Module& m, absl::string_view name, llvm::Function* k, GcKernel kind) {
  llvm::LLVMContext& c = m.getContext();
  llvm::IRBuilder<> b(c);
  llvm::Type* i8p = b.getInt8PtrTy();
  llvm::Type* i32 = b.getInt32Ty();
  std::vector<llvm::Type*> params = {i8p, i8p};
  if (kind == GcKernel::kPrepare || kind == GcKernel::kPhase0 || kind == GcKernel::kPhase1) {
    params.push_back(i32);
  }
  const bool has_result = kind == GcKernel::kPrepare || kind == GcKernel::kSerial;
  if (has_result) params.push_back(llvm::Type::getInt64PtrTy(c));
  auto* fn = llvm::Function::Create(llvm::FunctionType::get(b.getVoidTy(), params, false),
                                    llvm::Function::ExternalLinkage,
                                    llvm::StringRef(name.data(), name.size()), &m);
  auto* entry = llvm::BasicBlock::Create(c, "entry", fn);
  auto* run = llvm::BasicBlock::Create(c, "run", fn);
  auto* done = llvm::BasicBlock::Create(c, "done", fn);
  b.SetInsertPoint(entry);
  auto sreg = [&](llvm::Intrinsic::ID id) {
    return b.CreateCall(llvm::Intrinsic::getDeclaration(&m, id));
  };
  auto wide = [&](llvm::Value* v) { return b.CreateZExt(v, b.getInt64Ty()); };
  llvm::Value* ctx = fn->getArg(0);
  llvm::Value* scratch = fn->getArg(1);
  llvm::Value* thread =
      b.CreateAdd(b.CreateMul(wide(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x)),
                              wide(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x))),
                  wide(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x)));
  std::vector<llvm::Value*> args = {ctx, scratch};
  switch (kind) {
    case GcKernel::kPhase0: {
      // Global thread t < num_workers is worker t.
      llvm::Value* num_workers = fn->getArg(2);
      b.CreateCondBr(b.CreateICmpSLT(thread, b.CreateSExt(num_workers, b.getInt64Ty())), run, done);
      b.SetInsertPoint(run);
      args.push_back(b.CreateTrunc(thread, i32));
      args.push_back(num_workers);
      break;
    }
    case GcKernel::kPhase2:
      // Block b of the grid is worker b; its threads are the lanes.
      b.CreateBr(run);
      b.SetInsertPoint(run);
      args.push_back(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x));
      args.push_back(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x));
      args.push_back(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x));
      args.push_back(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x));
      break;
    default:
      // One thread: global thread 0.
      b.CreateCondBr(b.CreateICmpEQ(thread, b.getInt64(0)), run, done);
      b.SetInsertPoint(run);
      if (kind != GcKernel::kSerial) args.push_back(fn->getArg(2));
      break;
  }
  llvm::Value* r = b.CreateCall(k, args);
  if (has_result) b.CreateStore(r, fn->getArg(static_cast<unsigned>(params.size() - 1)));
  b.CreateBr(done);
  b.SetInsertPoint(done);
  b.CreateRetVoid();
}

}  // namespace

absl::Status KernelBuilder::AddDeviceEntry(absl::string_view name, absl::string_view kernel) {
  if (impl_->module == nullptr) return absl::FailedPreconditionError("KernelBuilder finished");
  llvm::Module& m = *impl_->module;
  if (llvm::Triple(m.getTargetTriple()).getArch() != llvm::Triple::nvptx64) {
    return absl::FailedPreconditionError(
        absl::StrCat(name, ": device entries need the NVPTX runtime, not ", m.getTargetTriple()));
  }
  llvm::Function* k = m.getFunction(llvm::StringRef(kernel.data(), kernel.size()));
  if (k == nullptr) return absl::NotFoundError(absl::StrCat("no kernel ", kernel));
  if (m.getFunction(llvm::StringRef(name.data(), name.size())) != nullptr) {
    return absl::AlreadyExistsError(absl::StrCat(name, ": defined twice"));
  }
  auto gc = impl_->gc_kernels.find(std::string(kernel));
  if (gc != impl_->gc_kernels.end()) {
    EmitGcDeviceEntry(m, name, k, gc->second);
    impl_->entry_points.emplace_back(name);
    return absl::OkStatus();
  }
  llvm::LLVMContext& c = *impl_->context;
  llvm::IRBuilder<> b(c);
  llvm::FunctionType* kt = k->getFunctionType();
  std::vector<llvm::Type*> params(kt->param_begin(), kt->param_end());
  params.push_back(llvm::Type::getInt64PtrTy(c));
  auto* fn = llvm::Function::Create(llvm::FunctionType::get(b.getVoidTy(), params, false),
                                    llvm::Function::ExternalLinkage,
                                    llvm::StringRef(name.data(), name.size()), &m);
  auto* entry = llvm::BasicBlock::Create(c, "entry", fn);
  auto* run = llvm::BasicBlock::Create(c, "run", fn);
  auto* done = llvm::BasicBlock::Create(c, "done", fn);
  b.SetInsertPoint(entry);
  auto sreg = [&](llvm::Intrinsic::ID id) {
    return b.CreateZExt(b.CreateCall(llvm::Intrinsic::getDeclaration(&m, id)), b.getInt64Ty());
  };
  llvm::Value* thread = b.CreateAdd(b.CreateMul(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x),
                                                sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x)),
                                    sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x));
  llvm::Value* threads = b.CreateMul(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x),
                                     sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x));
  std::vector<llvm::Value*> args;
  for (unsigned a = 0; a < kt->getNumParams(); ++a) args.push_back(fn->getArg(a));
  llvm::Value* result = fn->getArg(kt->getNumParams());
  const bool ranged = kt->getNumParams() != 3 || kt->getParamType(1)->isIntegerTy(64);
  if (ranged) {
    // Thread t of T runs [begin + n*t/T, begin + n*(t+1)/T).
    llvm::Value* begin = args[1];
    llvm::Value* n = b.CreateSub(args[2], begin);
    b.CreateCondBr(b.CreateICmpSGT(n, b.getInt64(0)), run, done);
    b.SetInsertPoint(run);
    args[1] = b.CreateAdd(begin, b.CreateSDiv(b.CreateMul(n, thread), threads));
    args[2] = b.CreateAdd(
        begin, b.CreateSDiv(b.CreateMul(n, b.CreateAdd(thread, b.getInt64(1))), threads));
  } else {
    b.CreateCondBr(b.CreateICmpEQ(thread, b.getInt64(0)), run, done);
    b.SetInsertPoint(run);
  }
  llvm::Value* r = b.CreateCall(k, args);
  if (!ranged) {
    b.CreateStore(r, result);
  } else if (r->getType()->isDoubleTy()) {
    b.CreateAtomicRMW(llvm::AtomicRMWInst::FAdd,
                      b.CreateBitCast(result, llvm::Type::getDoublePtrTy(c)), r,
                      llvm::MaybeAlign(8), llvm::AtomicOrdering::Monotonic);
  } else {
    auto* ok = llvm::BasicBlock::Create(c, "ok", fn);
    auto* failed = llvm::BasicBlock::Create(c, "failed", fn);
    b.CreateCondBr(b.CreateICmpSGE(r, b.getInt64(0)), ok, failed);
    b.SetInsertPoint(ok);
    b.CreateAtomicRMW(llvm::AtomicRMWInst::Add, result, r, llvm::MaybeAlign(8),
                      llvm::AtomicOrdering::Monotonic);
    b.CreateBr(done);
    b.SetInsertPoint(failed);
    b.CreateStore(b.getInt64(1), b.CreateGEP(b.getInt64Ty(), result, b.getInt64(1)));
  }
  b.CreateBr(done);
  b.SetInsertPoint(done);
  b.CreateRetVoid();
  impl_->entry_points.emplace_back(name);
  return absl::OkStatus();
}

absl::StatusOr<std::string> KernelBuilder::MangledName(absl::string_view name) const {
  auto it = impl_->mangled.find(std::string(name));
  if (it == impl_->mangled.end()) {
    return absl::NotFoundError(absl::StrCat("no runtime function ", kPrefix, name));
  }
  return it->second;
}

KernelModule KernelBuilder::Finish() {
  KernelModule out;
  out.module = std::move(impl_->module);
  out.context = std::move(impl_->context);
  out.entry_points = std::move(impl_->entry_points);
  impl_->entry_points.clear();
  impl_->gc_kernels.clear();
  return out;
}

}  // namespace codegen
}  // namespace accelmem

// The Emitter's shared helpers: function setup, context loads, loops, tree walks, deactivation
// and value conversions (see emitter.h).
#include "codegen/internal/emitter.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "llvm/ADT/Triple.h"
#include "llvm/IR/DataLayout.h"
#include "llvm/IR/Instructions.h"
#include "sparse_runtime/device/node_manager.h"

namespace accelmem {
namespace codegen {
namespace internal {

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

// The kernel entries of a row of the SNode kinds' table (kernel_abi.h generates the same names
// from it): a CELLS_CALLED kind's three cell functions, and its deactivate if it takes one cell
// (a dynamic SNode frees its whole list with accelmem_Dynamic_deactivate, not a CellOp).
#define ACCELMEM_CELL_FUNCTION_CASE(Kind, kind, Meta, flags, cells, deactivate, ...) \
  ACCELMEM_CELL_FUNCTION_CASE_##cells##_(Kind, deactivate)
#define ACCELMEM_CELL_FUNCTION_CASE_CELLS_CALLED_(Kind, deactivate)         \
  case SNodeType::k##Kind:                                                  \
    switch (op) {                                                           \
      case CellOp::kActivate:                                               \
        return ACCELMEM_RUNTIME_FUNCTION(accelmem_##Kind##_activate);       \
      case CellOp::kIsActive:                                               \
        return ACCELMEM_RUNTIME_FUNCTION(accelmem_##Kind##_is_active);      \
      case CellOp::kLookupElement:                                          \
        return ACCELMEM_RUNTIME_FUNCTION(accelmem_##Kind##_lookup_element); \
      case CellOp::kDeactivate:                                             \
        ACCELMEM_CELL_FUNCTION_DEACTIVATE_##deactivate##_(Kind)             \
    }                                                                       \
    break;
#define ACCELMEM_CELL_FUNCTION_CASE_CELLS_INLINE_(Kind, deactivate)
#define ACCELMEM_CELL_FUNCTION_CASE_CELLS_NONE_(Kind, deactivate)
#define ACCELMEM_CELL_FUNCTION_DEACTIVATE_DEACTIVATES_CELL_(Kind) \
  return ACCELMEM_RUNTIME_FUNCTION(accelmem_##Kind##_deactivate);
#define ACCELMEM_CELL_FUNCTION_DEACTIVATE_DEACTIVATES_LIST_(Kind) break;
#define ACCELMEM_CELL_FUNCTION_DEACTIVATE_DEACTIVATES_NONE_(Kind) break;

RuntimeFunction CellFunction(SNodeType kind, CellOp op) {
  switch (kind) {
    ACCELMEM_SNODE_KINDS(ACCELMEM_CELL_FUNCTION_CASE)
    default:
      break;  // dense levels and the root are addressed inline; a place has no cells
  }
  return RuntimeFunction{"", nullptr};
}

#undef ACCELMEM_CELL_FUNCTION_CASE
#undef ACCELMEM_CELL_FUNCTION_CASE_CELLS_CALLED_
#undef ACCELMEM_CELL_FUNCTION_CASE_CELLS_INLINE_
#undef ACCELMEM_CELL_FUNCTION_CASE_CELLS_NONE_
#undef ACCELMEM_CELL_FUNCTION_DEACTIVATE_DEACTIVATES_CELL_
#undef ACCELMEM_CELL_FUNCTION_DEACTIVATE_DEACTIVATES_LIST_
#undef ACCELMEM_CELL_FUNCTION_DEACTIVATE_DEACTIVATES_NONE_

llvm::Function* Emitter::Begin(absl::string_view name, llvm::Type* ret,
                               std::vector<llvm::Type*> params) {
  auto* type = llvm::FunctionType::get(ret, params, false);
  fn_ = llvm::Function::Create(type, llvm::Function::ExternalLinkage,
                               llvm::StringRef(name.data(), name.size()), impl_.module.get());
  ctx_ = fn_->getArg(0);
  fn_->addParamAttr(0, llvm::Attribute::NoAlias);
  ctx_loads_.clear();
  pointer_cells_.clear();
  deactivation_caches_.clear();
  cache_deactivations_ = false;
  entry_ = Block("entry");
  b_.SetInsertPoint(entry_);
  impl_.entry_points.emplace_back(name);
  return fn_;
}

void Emitter::AtEntryEnd(llvm::IRBuilder<>& entry) const {
  if (llvm::Instruction* branch = entry_->getTerminator()) {
    entry.SetInsertPoint(branch);
  } else {
    entry.SetInsertPoint(entry_);
  }
}

llvm::Value* Emitter::CtxLoad(size_t field_offset, int id) {
  const std::pair<size_t, int> key(field_offset, id);
  auto it = ctx_loads_.find(key);
  if (it != ctx_loads_.end()) return it->second;
  // At the end of the entry block: it dominates every use.
  llvm::IRBuilder<> entry(c_);
  AtEntryEnd(entry);
  llvm::MDNode* invariant = llvm::MDNode::get(c_, {});
  llvm::Value* field =
      entry.CreateBitCast(entry.CreateGEP(entry.getInt8Ty(), ctx_, entry.getInt64(field_offset)),
                          I8P()->getPointerTo());
  auto* value = entry.CreateLoad(I8P(), field);
  value->setMetadata(llvm::LLVMContext::MD_invariant_load, invariant);
  llvm::Value* result = value;
  if (id >= 0) {
    llvm::Value* array = entry.CreateBitCast(value, I8P()->getPointerTo());
    auto* element = entry.CreateLoad(I8P(), entry.CreateGEP(I8P(), array, entry.getInt64(id)));
    element->setMetadata(llvm::LLVMContext::MD_invariant_load, invariant);
    result = element;
  }
  ctx_loads_.emplace(key, result);
  return result;
}

llvm::Value* Emitter::DeactivationCache(const SNode& s) {
  if (!cache_deactivations_) return nullptr;
  auto it = deactivation_caches_.find(s.id());
  if (it != deactivation_caches_.end()) return it->second;
  llvm::Value* meta = Meta(s);  // loaded at the end of the entry block
  llvm::AllocaInst* cache = EntryAlloca(b_.getInt8Ty(), impl_.node_cache_bytes);
  cache->setAlignment(llvm::Align(impl_.node_cache_align));
  llvm::IRBuilder<> entry(c_);
  AtEntryEnd(entry);
  entry.CreateCall(Rt(ACCELMEM_RUNTIME_FUNCTION(accelmem_Pointer_cache_init)), {meta, cache});
  deactivation_caches_.emplace(s.id(), cache);
  return cache;
}

void Emitter::FlushDeactivationCaches() {
  std::vector<llvm::ReturnInst*> returns;
  for (llvm::BasicBlock& block : *fn_) {
    if (auto* ret = llvm::dyn_cast_or_null<llvm::ReturnInst>(block.getTerminator()))
      returns.push_back(ret);
  }
  for (llvm::ReturnInst* ret : returns) {
    llvm::IRBuilder<> before(ret);
    for (const auto& [id, cache] : deactivation_caches_) {
      before.CreateCall(Rt(ACCELMEM_RUNTIME_FUNCTION(accelmem_Pointer_cache_flush)), {cache});
    }
  }
}

llvm::AllocaInst* Emitter::EntryAlloca(llvm::Type* t, uint64_t n) {
  llvm::IRBuilder<> entry(entry_, entry_->begin());
  return entry.CreateAlloca(t, n == 1 ? nullptr : entry.getInt64(n));
}

std::pair<llvm::Value*, llvm::Value*> Emitter::PointerCells(const SNode& s) {
  auto it = pointer_cells_.find(s.id());
  if (it != pointer_cells_.end()) return it->second;
  llvm::Value* meta = Meta(s);  // loaded at the end of the entry block
  llvm::IRBuilder<> entry(c_);
  AtEntryEnd(entry);
  llvm::Value* origin =
      entry.CreateCall(Rt(ACCELMEM_RUNTIME_FUNCTION(accelmem_Pointer_cells_origin)), {meta});
  llvm::Value* stride =
      entry.CreateCall(Rt(ACCELMEM_RUNTIME_FUNCTION(accelmem_Pointer_cells_stride)), {meta});
  // The stride the runtime's allocator gives these cells (NodeManager::cell_stride) is known now.
  // Where it is 8 (cells of up to 8 bytes) it is an addressing-mode scale: the cell's address
  // folds into its store instead of a multiply and an add per cell. A runtime whose stride
  // differs gets origin 0: the chunked path, which reads its own meta and ignores the stride
  // (correct, only slower). Larger strides stay run-time values: as constants (a shift) they made
  // the range write over pointer(256) cells of dense(256) f32 slower in jit_bench.
  if (sparse_runtime::NodeManager::cell_stride(s.allocator_node_size(), s.allocator_alignment()) ==
      8) {
    llvm::Value* constant = entry.getInt64(8);
    origin = entry.CreateSelect(entry.CreateICmpEQ(stride, constant), origin, entry.getInt64(0));
    stride = constant;
  }
  return pointer_cells_.emplace(s.id(), std::make_pair(origin, stride)).first->second;
}

llvm::Value* Emitter::PointerCellOr(const RuntimeFunction& fn, const SNode& s,
                                    llvm::Value* container, llvm::Value* l32,
                                    llvm::BasicBlock* none) {
  const auto [origin, stride] = PointerCells(s);
  llvm::AllocaInst* out = EntryAlloca(I8P());  // promoted to a register once inlined
  llvm::Value* has_cell = b_.CreateCall(Rt(fn), {Meta(s), container, l32, origin, stride, out});
  auto* found = Block("cell");
  b_.CreateCondBr(has_cell, found, none);
  b_.SetInsertPoint(found);
  return b_.CreateLoad(I8P(), out);
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
    if (level.type() == SNodeType::kPointer) {
      cell = mode == Walk::kActivate
                 ? PointerCellOr(ACCELMEM_RUNTIME_FUNCTION(accelmem_Pointer_activate_cell_view),
                                 level, container, l32, fail)
                 : PointerCellOr(ACCELMEM_RUNTIME_FUNCTION(accelmem_Pointer_lookup_cell_view),
                                 level, container, l32, inactive);
      continue;
    }
    if (mode == Walk::kActivate) {
      CallCell(level.type(), CellOp::kActivate, meta, container, l32);
    } else {
      llvm::Value* active = CallCell(level.type(), CellOp::kIsActive, meta, container, l32);
      auto* on = Block("active");
      b_.CreateCondBr(active, on, inactive);
      b_.SetInsertPoint(on);
    }
    cell = CallCell(level.type(), CellOp::kLookupElement, meta, container, l32);
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
      b_.CreateCall(Rt(ACCELMEM_RUNTIME_FUNCTION(accelmem_Dynamic_deactivate)),
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
    b_.CreateCall(Rt(ACCELMEM_RUNTIME_FUNCTION(accelmem_Dynamic_deactivate)),
                  {Meta(target), container});
    return;
  }
  llvm::Value* l32 = b_.CreateTrunc(l, b_.getInt32Ty());
  llvm::Value* meta = Meta(target);
  auto* done = Block("deactivated");
  if (target.type() == SNodeType::kPointer) {
    llvm::Value* cell = PointerCellOr(ACCELMEM_RUNTIME_FUNCTION(accelmem_Pointer_lookup_cell_view),
                                      target, container, l32, done);
    if (target.has_sparse_descendant()) DeactivateSubtree(target, cell);
    llvm::Value* taken;
    if (llvm::Value* cache = DeactivationCache(target)) {
      taken = b_.CreateCall(Rt(ACCELMEM_RUNTIME_FUNCTION(accelmem_Pointer_deactivate_cached)),
                            {meta, container, l32, cache});
    } else {
      taken = CallCell(target.type(), CellOp::kDeactivate, meta, container, l32);
    }
    IncrementIf(counter, taken);
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
    return;
  }
  auto* on = Block("deactivate");
  llvm::Value* active = CallCell(target.type(), CellOp::kIsActive, meta, container, l32);
  b_.CreateCondBr(active, on, done);
  b_.SetInsertPoint(on);
  if (target.has_sparse_descendant()) {
    llvm::Value* inner = CallCell(target.type(), CellOp::kLookupElement, meta, container, l32);
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
  IncrementIf(counter, CallCell(target.type(), CellOp::kDeactivate, meta, container, l32));
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

}  // namespace internal
}  // namespace codegen
}  // namespace accelmem

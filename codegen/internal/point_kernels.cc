// Point kernels: one PointOp at the coordinates given as an argument.
#include "codegen/internal/emitter.h"

namespace accelmem {
namespace codegen {
namespace internal {

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
      llvm::Value* active = CallCell(target.type(), CellOp::kIsActive, Meta(target),
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
          b_.CreateCall(Rt(ACCELMEM_RUNTIME_FUNCTION(accelmem_Dynamic_allocate)),
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
          b_.CreateCall(Rt(ACCELMEM_RUNTIME_FUNCTION(accelmem_Dynamic_get_num_elements)),
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

}  // namespace internal
}  // namespace codegen
}  // namespace accelmem

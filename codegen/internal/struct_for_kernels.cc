// Struct-for kernels: visit the active cells of an SNode.
#include "codegen/internal/emitter.h"

namespace accelmem {
namespace codegen {
namespace internal {

void Emitter::Visit(const SNode& leaf, int depth, llvm::Value* cell, const Coords& coord,
                    uint64_t value_offset) {
  const SNode& level = *leaf.path()[depth];
  llvm::Value* container = Gep(cell, level.offset_in_parent_cell());
  llvm::Value* meta = Meta(level);
  llvm::Value* n =
      level.type() == SNodeType::kDynamic
          ? b_.CreateSExt(
                b_.CreateCall(Rt(ACCELMEM_RUNTIME_FUNCTION(accelmem_Dynamic_get_num_elements)),
                              {meta, container}),
                b_.getInt64Ty())
          : static_cast<llvm::Value*>(b_.getInt64(level.num_cells_per_container()));
  llvm::Value* lo = b_.getInt64(0);
  llvm::Value* hi = n;
  if (depth == 1) {
    lo = b_.CreateSelect(b_.CreateICmpSGT(sf_begin_, lo), sf_begin_, lo);
    hi = b_.CreateSelect(b_.CreateICmpSLT(sf_end_, hi), sf_end_, hi);
  }
  // Refined coordinates of child cell i (row-major over the level's axes).
  auto refine = [&](llvm::Value* i) {
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
    return refined;
  };
  // Stores the leaf cell's index, calls the visitor on `count` cells from `first` at `stride`
  // bytes (a cell visitor: one cell) and counts them.
  auto visit = [&](const Coords& refined, llvm::Value* first, llvm::Value* count,
                   llvm::Value* stride) {
    const auto& index_axes = leaf.index_axes();
    for (size_t k = 0; k < index_axes.size(); ++k) {
      llvm::Value* v = refined[index_axes[k]] == nullptr ? static_cast<llvm::Value*>(b_.getInt64(0))
                                                         : refined[index_axes[k]];
      b_.CreateStore(b_.CreateTrunc(v, b_.getInt32Ty()),
                     b_.CreateGEP(b_.getInt32Ty(), sf_index_, b_.getInt64(k)));
    }
    if (sf_runs_) {
      auto* run_type = llvm::FunctionType::get(
          b_.getVoidTy(), {I8P(), I32P(), I8P(), b_.getInt64Ty(), b_.getInt64Ty()}, false);
      b_.CreateCall(run_type, sf_visit_,
                    {sf_data_, sf_index_, Gep(first, value_offset), count, stride});
    } else {
      auto* visit_type = llvm::FunctionType::get(b_.getVoidTy(), {I8P(), I32P(), I8P()}, false);
      b_.CreateCall(visit_type, sf_visit_, {sf_data_, sf_index_, Gep(first, value_offset)});
    }
    b_.CreateStore(b_.CreateAdd(b_.CreateLoad(b_.getInt64Ty(), sf_count_), count), sf_count_);
  };
  if (sf_runs_ && &level == &leaf && level.type() == SNodeType::kDense) {
    // A dense leaf container is one run: cells lo..hi-1, all active, at the cell stride.
    auto* run = Block("run");
    auto* after = Block("after_run");
    b_.CreateCondBr(b_.CreateICmpSLT(lo, hi), run, after);
    b_.SetInsertPoint(run);
    const int64_t stride = static_cast<int64_t>(level.cell_size());
    visit(refine(lo),
          b_.CreateGEP(b_.getInt8Ty(), container, b_.CreateMul(lo, b_.getInt64(stride))),
          b_.CreateSub(hi, lo), b_.getInt64(stride));
    b_.CreateBr(after);
    b_.SetInsertPoint(after);
    return;
  }
  Loop(lo, hi, [&](llvm::Value* i, llvm::BasicBlock* cont) {
    llvm::Value* child = nullptr;
    if (level.type() == SNodeType::kDense) {
      child = b_.CreateGEP(b_.getInt8Ty(), container,
                           b_.CreateMul(i, b_.getInt64(static_cast<int64_t>(level.cell_size()))));
    } else if (level.type() == SNodeType::kPointer) {
      child = PointerCellOr(ACCELMEM_RUNTIME_FUNCTION(accelmem_Pointer_lookup_cell_view), level,
                            container, b_.CreateTrunc(i, b_.getInt32Ty()), cont);
    } else {
      llvm::Value* i32 = b_.CreateTrunc(i, b_.getInt32Ty());
      if (level.type() != SNodeType::kDynamic) {
        llvm::Value* active = CallCell(level.type(), CellOp::kIsActive, meta, container, i32);
        auto* on = Block("active");
        b_.CreateCondBr(active, on, cont);
        b_.SetInsertPoint(on);
      }
      child = CallCell(level.type(), CellOp::kLookupElement, meta, container, i32);
      if (sparse_runtime::HasAllocator(level.type())) {
        auto* ok = Block("found");
        b_.CreateCondBr(b_.CreateICmpEQ(child, Ambient(level)), cont, ok);
        b_.SetInsertPoint(ok);
      }
    }
    const Coords refined = refine(i);
    if (&level == &leaf) {
      visit(refined, child, b_.getInt64(1), b_.getInt64(0));
    } else {
      Visit(leaf, depth + 1, child, refined, value_offset);
    }
  });
}

absl::Status Emitter::StructFor(absl::string_view name, const SNode& target, bool runs) {
  const bool is_place = target.type() == SNodeType::kPlace;
  const SNode& leaf = is_place ? *target.parent() : target;
  const uint64_t value_offset = is_place ? target.offset_in_parent_cell() : 0;
  sf_runs_ = runs;
  auto* visit_type =
      runs ? llvm::FunctionType::get(
                 b_.getVoidTy(), {I8P(), I32P(), I8P(), b_.getInt64Ty(), b_.getInt64Ty()}, false)
           : llvm::FunctionType::get(b_.getVoidTy(), {I8P(), I32P(), I8P()}, false);
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
    if (runs) {
      b_.CreateCall(
          visit_type, sf_visit_,
          {sf_data_, sf_index_, Gep(Root(), value_offset), b_.getInt64(1), b_.getInt64(0)});
    } else {
      b_.CreateCall(visit_type, sf_visit_, {sf_data_, sf_index_, Gep(Root(), value_offset)});
    }
    b_.CreateRet(b_.getInt64(1));
    b_.SetInsertPoint(done);
    b_.CreateRet(b_.getInt64(0));
    return absl::OkStatus();
  }
  Visit(leaf, 1, Root(), Coords{}, value_offset);
  b_.CreateRet(b_.CreateLoad(b_.getInt64Ty(), sf_count_));
  return absl::OkStatus();
}

}  // namespace internal
}  // namespace codegen
}  // namespace accelmem

// Range kernels (activate, write, sum, atomic add, deactivate, append) over [begin, end).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "codegen/internal/emitter.h"

namespace accelmem {
namespace codegen {
namespace internal {

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
  // Deactivated pointer cells go through a NodeCache on this kernel's stack (see
  // Pointer_cache_init), flushed before the kernel returns.
  cache_deactivations_ = op == RangeOp::kDeactivate && impl_.node_cache_bytes > 0;
  llvm::Value* begin = fn_->getArg(1);
  llvm::Value* end = fn_->getArg(2);
  llvm::AllocaInst* acc = EntryAlloca(ret);
  b_.CreateStore(
      is_sum ? static_cast<llvm::Value*>(llvm::ConstantFP::get(ret, 0.0)) : b_.getInt64(0), acc);
  auto* fail = Block("fail");
  // Where every coordinate is i + offset (divisor 1, no modulus), the indices whose coordinates
  // lie inside the index space form one interval, known now: the loop runs over its intersection
  // with [begin, end) and checks nothing per index. Otherwise each index is checked.
  bool shifted = true;
  int64_t first = std::numeric_limits<int64_t>::min();
  int64_t last = std::numeric_limits<int64_t>::max();  // exclusive
  for (int k = 0; k < n; ++k) {
    const CoordMap& m = coords[k];
    if (m.divisor != 1 || m.modulus != 0) {
      shifted = false;
      break;
    }
    // 0 <= i + offset < extent, without wrapping: -offset <= i < extent - offset.
    const int64_t extent = coord_node.extent(coord_node.index_axes()[k]);
    int64_t lo, hi;
    // offset = INT64_MIN: i would need to reach 2^63, so no index qualifies.
    if (__builtin_sub_overflow(int64_t{0}, m.offset, &lo)) lo = std::numeric_limits<int64_t>::max();
    // offset far below 0: no upper bound below INT64_MAX.
    if (__builtin_sub_overflow(extent, m.offset, &hi)) hi = std::numeric_limits<int64_t>::max();
    first = std::max(first, lo);
    last = std::min(last, hi);
  }
  if (shifted) {
    begin = b_.CreateSelect(b_.CreateICmpSGT(begin, b_.getInt64(first)), begin, b_.getInt64(first));
    end = b_.CreateSelect(b_.CreateICmpSLT(end, b_.getInt64(last)), end, b_.getInt64(last));
  }
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
      if (shifted) continue;  // inside by the loop's bounds
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
    // i * scale + offset in double; with scale 0 that is the constant offset (which the passes may
    // not assume themselves: i * 0.0 is -0.0 for negative i, and -0.0 + -0.0 stays -0.0).
    llvm::Value* value = nullptr;
    if (is_sum) {
    } else if (scale == 0.0 && !(offset == 0.0 && std::signbit(offset))) {
      value = llvm::ConstantFP::get(b_.getDoubleTy(), offset);
    } else {
      value = b_.CreateFAdd(b_.CreateFMul(b_.CreateSIToFP(i, b_.getDoubleTy()),
                                          llvm::ConstantFP::get(b_.getDoubleTy(), scale)),
                            llvm::ConstantFP::get(b_.getDoubleTy(), offset));
    }
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
            b_.CreateCall(Rt(ACCELMEM_RUNTIME_FUNCTION(accelmem_Dynamic_allocate)),
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
  FlushDeactivationCaches();
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

}  // namespace internal
}  // namespace codegen
}  // namespace accelmem

// File: codegen/internal/emitter.h
//
// Internal to //codegen:kernel_builder: the builder's state (KernelBuilder::Impl) and the Emitter
// that writes kernels into its module. The Emitter's shared tree-walking helpers are in
// emitter.cc; each kernel family in its own file beside it (range_kernels.cc, point_kernels.cc,
// struct_for_kernels.cc, gc_kernels.cc, device_entries.cc).
#ifndef ACCELMEM_CODEGEN_INTERNAL_EMITTER_H_
#define ACCELMEM_CODEGEN_INTERNAL_EMITTER_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "codegen/internal/runtime_call.h"
#include "codegen/kernel_builder.h"
#include "kernel_abi/kernel_abi.h"
#include "llvm/IR/BasicBlock.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Type.h"

namespace accelmem {
namespace codegen {

struct KernelBuilder::Impl {
  const sparse_runtime::SNodeTree* tree = nullptr;
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
  std::vector<std::string> entry_points;
  std::map<std::string, GcKernel> gc_kernels;  // GC kernels by name (for AddDeviceEntry)
  // The NodeCache (kernel_abi.h's size and alignment) where range-deactivate kernels recycle
  // through one on their stack (CPU runtimes); 0 where they recycle per call (NVPTX: a 16 KiB
  // cache per GPU thread would not fit its local memory budget).
  uint64_t node_cache_bytes = 0;
  uint64_t node_cache_align = 0;
};

namespace internal {

using sparse_runtime::DataType;
using sparse_runtime::kMaxAxes;
using sparse_runtime::PointOp;
using sparse_runtime::SNode;
using sparse_runtime::SNodeTree;
using sparse_runtime::SNodeType;

// The runtime function each GC kernel calls.
RuntimeFunction GcFunction(GcKernel kind);

bool IsSigned(DataType t);
bool IsFloat(DataType t);
llvm::Type* LlvmType(DataType t, llvm::LLVMContext& c);
// The per-cell operations of a sparse SNode kind, and the runtime function of each.
enum class CellOp { kActivate, kIsActive, kLookupElement, kDeactivate };
RuntimeFunction CellFunction(SNodeType kind, CellOp op);

enum class RangeOp { kActivate, kWrite, kSum, kAtomicAdd, kDeactivate, kAppend };

using Coords = std::array<llvm::Value*, kMaxAxes>;  // i64 per axis; null = 0

// Emits kernels into the builder's module: shared helpers for walking the tree.
class Emitter {
 public:
  explicit Emitter(KernelBuilder::Impl* impl) : impl_(*impl), c_(*impl->context), b_(c_) {}

  absl::Status Range(absl::string_view name, RangeOp op, const SNode& target,
                     const std::vector<CoordMap>& coords, double scale, double offset);
  absl::Status Point(absl::string_view name, PointOp op, const SNode& target);
  // `runs`: the visitor takes runs of cells (KernelBuilder::AddStructForRuns).
  absl::Status StructFor(absl::string_view name, const SNode& target, bool runs = false);
  void Gc(absl::string_view name, GcKernel kind, const SNode& snode);

 private:
  enum class Walk { kActivate, kCheck };

  llvm::Type* I8P() { return llvm::Type::getInt8PtrTy(c_); }
  llvm::Type* I32P() { return llvm::Type::getInt32PtrTy(c_); }
  llvm::Function* Begin(absl::string_view name, llvm::Type* ret, std::vector<llvm::Type*> params);
  // A load of the i8* at ctx + field_offset (a member of KernelContext), or of element `id` of
  // the array found there. Emitted once per kernel, in its entry block: the context is
  // invariant, and a load emitted inside a loop's conditional walk (the index check) stayed
  // there after LLVM's passes, three loads per cell.
  llvm::Value* CtxLoad(size_t field_offset, int id);
  // Points `entry` at the end of the kernel's entry block (before its branch, once it has one),
  // where the once-per-kernel values go (CtxLoad, PointerCells, DeactivationCache).
  void AtEntryEnd(llvm::IRBuilder<>& entry) const;
  llvm::Value* Root() { return CtxLoad(offsetof(kernel_abi::KernelContext, root), -1); }
  llvm::Value* Runtime() { return CtxLoad(offsetof(kernel_abi::KernelContext, runtime), -1); }
  llvm::Value* Meta(const SNode& s) {
    return CtxLoad(offsetof(kernel_abi::KernelContext, metas), s.id());
  }
  llvm::Value* Ambient(const SNode& s) {
    return CtxLoad(offsetof(kernel_abi::KernelContext, ambients), s.id());
  }
  // A function of kernel_abi.h, declared in the kernel module with its declared type.
  llvm::FunctionCallee Rt(const RuntimeFunction& f) {
    return impl_.module->getOrInsertFunction(f.name, f.type(c_));
  }
  // op(meta, node, i) of a sparse SNode kind.
  llvm::Value* CallCell(SNodeType kind, CellOp op, llvm::Value* meta, llvm::Value* node,
                        llvm::Value* i32) {
    return b_.CreateCall(Rt(CellFunction(kind, op)), {meta, node, i32});
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
  // activating or checking each level. Inactive levels branch to `inactive`, failed activations
  // (no cell: Pointer_activate_cell_view's false, or another kind's ambient element) to `fail`.
  // Returns the cell of path[upto].
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
  // Adds 1 if `flag` (i1): counts only the deactivations this thread made (with two threads
  // deactivating one cell at once, both find it active but only one takes it).
  void IncrementIf(llvm::Value* counter, llvm::Value* flag) {
    if (counter == nullptr) return;
    b_.CreateStore(
        b_.CreateAdd(b_.CreateLoad(b_.getInt64Ty(), counter), b_.CreateZExt(flag, b_.getInt64Ty())),
        counter);
  }
  // Pointer levels: calls `fn` (accelmem_Pointer_activate_cell_view or _lookup_cell_view: whether
  // there is a cell, and the cell) with the SNode's cell origin and stride loaded once per kernel
  // (PointerCells) -- one call and one slot load, where activate / is_active, lookup and a
  // comparison with the ambient element take two -- branches to `none` when there is no cell and
  // continues in a new block. Returns the cell.
  llvm::Value* PointerCellOr(const RuntimeFunction& fn, const SNode& s, llvm::Value* container,
                             llvm::Value* l32, llvm::BasicBlock* none);
  // accelmem_Pointer_cells_origin / _cells_stride of `s`'s meta, called once per kernel at the end
  // of its entry block (the meta does not change once the runtime exists).
  std::pair<llvm::Value*, llvm::Value*> PointerCells(const SNode& s);
  // The NodeCache through which this kernel recycles the pointer cells of `s` it deactivates, or
  // null (recycle per call): made on first use where deactivations are cached (range-deactivate
  // kernels, runtime with a NodeCache layout), on the stack, initialized in the entry block.
  llvm::Value* DeactivationCache(const SNode& s);
  // Flushes every deactivation cache before each return of the kernel.
  void FlushDeactivationCaches();
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
  // CtxLoad's loads in this kernel's entry block, by (field offset, id).
  std::map<std::pair<size_t, int>, llvm::Value*> ctx_loads_;
  // PointerCells' values in this kernel by SNode id.
  std::map<int, std::pair<llvm::Value*, llvm::Value*>> pointer_cells_;
  // Deactivation caches of this kernel by SNode id, and whether this kernel makes them.
  std::map<int, llvm::Value*> deactivation_caches_;
  bool cache_deactivations_ = false;
  // Struct-for state.
  llvm::Value* sf_begin_ = nullptr;
  llvm::Value* sf_end_ = nullptr;
  llvm::Value* sf_visit_ = nullptr;
  llvm::Value* sf_data_ = nullptr;
  llvm::Value* sf_index_ = nullptr;
  llvm::Value* sf_count_ = nullptr;
  bool sf_runs_ = false;  // the visitor takes runs (data, first index, first cell, count, stride)
};

// Checks shared by every Add*: a fresh name of a builder that is not finished, an SNode of the
// builder's tree.
absl::Status CheckAdd(const KernelBuilder::Impl& impl, absl::string_view name, const SNode& snode);
absl::Status NeedPlace(absl::string_view name, const SNode& s);
absl::Status NeedDeactivatable(absl::string_view name, const SNode& s);
absl::Status NeedDynamicPlace(absl::string_view name, const SNode& s);
// The op-specific check of a range kernel: the AddRange* entry points differ only in it.
absl::Status CheckRangeOp(absl::string_view name, RangeOp op, const SNode& s);

// The device entry of GC kernel `k` (see AddDeviceEntry): worker and lane ids from the grid.
void EmitGcDeviceEntry(llvm::Module& m, absl::string_view name, llvm::Function* k, GcKernel kind);
// The device entry `name` around range, struct-for or point kernel `k` (see AddDeviceEntry).
void EmitDeviceEntry(KernelBuilder::Impl& impl, absl::string_view name, llvm::Function* k);

}  // namespace internal
}  // namespace codegen
}  // namespace accelmem

#endif  // ACCELMEM_CODEGEN_INTERNAL_EMITTER_H_

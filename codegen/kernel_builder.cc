#include "codegen/kernel_builder.h"

#include <array>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Demangle/Demangle.h"
#include "llvm/IR/BasicBlock.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Type.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

namespace accelmem {
namespace codegen {

using sparse_runtime::DataType;
using sparse_runtime::SNode;
using sparse_runtime::SNodeType;
using sparse_runtime::SparseRuntime;

struct KernelBuilder::Impl {
  std::map<std::string, std::string> mangled;  // "Pointer_activate" -> mangled name
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
  std::vector<std::string> entry_points;
};

namespace {

constexpr const char kPrefix[] = "accelmem::sparse_runtime::";

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

enum class Op { kWrite, kSum, kAtomicAdd, kDeactivate };

// Emits one kernel of kind `op` over `target` (a place, or the SNode to deactivate).
class Emitter {
 public:
  Emitter(KernelBuilder::Impl* impl, SparseRuntime* rt, const SNode& target,
          const std::vector<CoordMap>& coords, Op op, double scale, double offset)
      : impl_(*impl),
        c_(*impl->context),
        b_(c_),
        rt_(rt),
        target_(target),
        coords_(coords),
        op_(op),
        scale_(scale),
        offset_(offset) {}

  absl::Status Emit(absl::string_view name);

 private:
  bool Activates() const { return op_ == Op::kWrite || op_ == Op::kAtomicAdd; }
  bool ReturnsCount() const { return op_ != Op::kSum; }
  llvm::Value* Zero() {
    return ReturnsCount() ? static_cast<llvm::Value*>(b_.getInt64(0))
                          : llvm::ConstantFP::get(b_.getDoubleTy(), 0.0);
  }
  llvm::Type* I8P() { return llvm::Type::getInt8PtrTy(c_); }
  llvm::Value* Addr(const void* p) {
    return b_.CreateIntToPtr(b_.getInt64(reinterpret_cast<uint64_t>(p)), I8P());
  }
  llvm::FunctionCallee Runtime(const std::string& fn, llvm::Type* ret) {
    const std::string& m = impl_.mangled.at(fn);
    auto* type = llvm::FunctionType::get(ret, {I8P(), I8P(), b_.getInt32Ty()}, false);
    return impl_.module->getOrInsertFunction(m, type);
  }
  // The cell index of `level` inside its container (SparseRuntime::CellIndices with static
  // strides); `remaining` holds the extents still below, per axis, and is updated.
  llvm::Value* CellIndex(const SNode& level, llvm::Value* const* coord, int64_t* remaining);
  // The value i*scale+offset converted to the place's type `t`.
  llvm::Value* Value(llvm::Value* i, llvm::Type* t);
  // Emits the body of one iteration for index `i` (i64); every path ends in a branch to `next`
  // (or, for activating kinds, to `fail` when an activation failed). The iteration's
  // contribution to the result is *contribution when arriving from *from, zero otherwise.
  void EmitIteration(llvm::Value* i, llvm::BasicBlock* next, llvm::BasicBlock* fail,
                     llvm::Value** contribution, llvm::BasicBlock** from);

  KernelBuilder::Impl& impl_;
  llvm::LLVMContext& c_;
  llvm::IRBuilder<> b_;
  SparseRuntime* rt_;
  const SNode& target_;
  const std::vector<CoordMap>& coords_;
  Op op_;
  double scale_;
  double offset_;
  llvm::Function* fn_ = nullptr;
};

absl::Status Emitter::Emit(absl::string_view name) {
  const int n = target_.num_indices();
  if (target_.id() >= rt_->tree().num_snodes() || &rt_->tree().snode(target_.id()) != &target_) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": not an SNode of the runtime's tree"));
  }
  if (op_ == Op::kDeactivate) {
    if (target_.type() != SNodeType::kPointer && target_.type() != SNodeType::kBitmasked) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": only pointer and bitmasked SNodes can be deactivated"));
    }
    if (target_.has_sparse_descendant()) {
      return absl::UnimplementedError(
          absl::StrCat(name, ": deactivating an SNode with sparse descendants"));
    }
  } else if (target_.type() != SNodeType::kPlace) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": ", target_.DebugPath(), " is not a place"));
  }
  if (static_cast<int>(coords_.size()) != n) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, ": ", coords_.size(), " coordinate maps for an SNode with ", n, " indices"));
  }
  for (const CoordMap& m : coords_) {
    if (m.divisor <= 0 || m.modulus < 0) {
      return absl::InvalidArgumentError(absl::StrCat(name, ": divisor must be > 0, modulus >= 0"));
    }
  }
  for (const SNode* s : target_.path()) {
    if (s->type() == SNodeType::kDynamic) {
      return absl::UnimplementedError(absl::StrCat(name, ": dynamic SNodes on the path"));
    }
  }
  if (impl_.module->getFunction(llvm::StringRef(name.data(), name.size())) != nullptr) {
    return absl::AlreadyExistsError(absl::StrCat(name, ": defined twice"));
  }

  llvm::Type* ret = ReturnsCount() ? b_.getInt64Ty() : b_.getDoubleTy();
  auto* type = llvm::FunctionType::get(ret, {b_.getInt64Ty(), b_.getInt64Ty()}, false);
  fn_ = llvm::Function::Create(type, llvm::Function::ExternalLinkage,
                               llvm::StringRef(name.data(), name.size()), impl_.module.get());
  llvm::Value* begin = fn_->getArg(0);
  llvm::Value* end = fn_->getArg(1);
  auto* entry = llvm::BasicBlock::Create(c_, "entry", fn_);
  auto* header = llvm::BasicBlock::Create(c_, "loop", fn_);
  auto* body = llvm::BasicBlock::Create(c_, "body", fn_);
  auto* latch = llvm::BasicBlock::Create(c_, "latch", fn_);
  auto* exit = llvm::BasicBlock::Create(c_, "exit", fn_);
  llvm::BasicBlock* fail = nullptr;
  if (Activates()) fail = llvm::BasicBlock::Create(c_, "fail", fn_);

  b_.SetInsertPoint(entry);
  b_.CreateBr(header);

  b_.SetInsertPoint(header);
  llvm::PHINode* i = b_.CreatePHI(b_.getInt64Ty(), 2, "i");
  llvm::PHINode* acc = b_.CreatePHI(ret, 2, "acc");
  i->addIncoming(begin, entry);
  acc->addIncoming(Zero(), entry);
  b_.CreateCondBr(b_.CreateICmpSLT(i, end), body, exit);

  b_.SetInsertPoint(body);
  llvm::Value* contribution = nullptr;
  llvm::BasicBlock* from = nullptr;
  EmitIteration(i, latch, fail, &contribution, &from);

  // latch: one phi entry per predecessor edge: this iteration's contribution, or zero.
  b_.SetInsertPoint(latch);
  llvm::PHINode* add = b_.CreatePHI(ret, 4, "add");
  for (llvm::BasicBlock* pred : llvm::predecessors(latch)) {
    add->addIncoming(pred == from ? contribution : Zero(), pred);
  }
  llvm::Value* next_acc = ReturnsCount() ? b_.CreateAdd(acc, add) : b_.CreateFAdd(acc, add);
  i->addIncoming(b_.CreateAdd(i, b_.getInt64(1)), latch);
  acc->addIncoming(next_acc, latch);
  b_.CreateBr(header);

  b_.SetInsertPoint(exit);
  b_.CreateRet(acc);
  if (fail != nullptr) {
    b_.SetInsertPoint(fail);
    b_.CreateRet(b_.getInt64(-1));
  }
  impl_.entry_points.emplace_back(name);
  return absl::OkStatus();
}

llvm::Value* Emitter::CellIndex(const SNode& level, llvm::Value* const* coord, int64_t* remaining) {
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

llvm::Value* Emitter::Value(llvm::Value* i, llvm::Type* t) {
  const DataType dt = target_.dtype();
  llvm::Value* v = b_.CreateFAdd(b_.CreateFMul(b_.CreateSIToFP(i, b_.getDoubleTy()),
                                               llvm::ConstantFP::get(b_.getDoubleTy(), scale_)),
                                 llvm::ConstantFP::get(b_.getDoubleTy(), offset_));
  if (dt == DataType::kF32) return b_.CreateFPTrunc(v, t);
  if (IsFloat(dt)) return v;
  return IsSigned(dt) ? b_.CreateFPToSI(v, t) : b_.CreateFPToUI(v, t);
}

void Emitter::EmitIteration(llvm::Value* i, llvm::BasicBlock* next, llvm::BasicBlock* fail,
                            llvm::Value** contribution, llvm::BasicBlock** from) {
  // Coordinates per axis, and the in-range check.
  std::array<llvm::Value*, sparse_runtime::kMaxAxes> coord{};
  llvm::Value* in_range = b_.getTrue();
  for (int k = 0; k < target_.num_indices(); ++k) {
    const CoordMap& m = coords_[k];
    const int axis = target_.index_axes()[k];
    llvm::Value* v = i;
    if (m.divisor != 1) v = b_.CreateSDiv(v, b_.getInt64(m.divisor));
    if (m.modulus != 0) v = b_.CreateSRem(v, b_.getInt64(m.modulus));
    if (m.offset != 0) v = b_.CreateAdd(v, b_.getInt64(m.offset));
    coord[axis] = v;
    in_range = b_.CreateAnd(in_range, b_.CreateICmpSGE(v, b_.getInt64(0)));
    in_range = b_.CreateAnd(in_range, b_.CreateICmpSLT(v, b_.getInt64(target_.extent(axis))));
  }
  auto* walk = llvm::BasicBlock::Create(c_, "walk", fn_);
  b_.CreateCondBr(in_range, walk, next);
  b_.SetInsertPoint(walk);

  // Walk root..parent of the target, as SparseRuntime::WalkTo.
  std::array<int64_t, sparse_runtime::kMaxAxes> remaining;
  remaining.fill(1);
  for (int axis : target_.index_axes()) remaining[axis] = target_.extent(axis);
  const auto& path = target_.path();
  llvm::Value* cell = Addr(rt_->context()->root);
  for (size_t p = 1; p + 1 < path.size(); ++p) {
    const SNode& level = *path[p];
    llvm::Value* l = CellIndex(level, coord.data(), remaining.data());
    llvm::Value* l32 = b_.CreateTrunc(l, b_.getInt32Ty());
    llvm::Value* container =
        b_.CreateGEP(b_.getInt8Ty(), cell, b_.getInt64(level.offset_in_parent_cell()), "container");
    if (level.type() == SNodeType::kDense) {
      cell = b_.CreateGEP(b_.getInt8Ty(), container,
                          b_.CreateMul(l, b_.getInt64(static_cast<int64_t>(level.cell_size()))));
      continue;
    }
    llvm::Value* meta = Addr(rt_->meta(level));
    const char* kind = level.type() == SNodeType::kPointer ? "Pointer" : "Bitmasked";
    if (Activates()) {
      b_.CreateCall(Runtime(absl::StrCat(kind, "_activate"), b_.getVoidTy()),
                    {meta, container, l32});
    } else {
      llvm::Value* active = b_.CreateCall(Runtime(absl::StrCat(kind, "_is_active"), b_.getInt1Ty()),
                                          {meta, container, l32});
      auto* on = llvm::BasicBlock::Create(c_, "active", fn_);
      b_.CreateCondBr(active, on, next);
      b_.SetInsertPoint(on);
    }
    cell = b_.CreateCall(Runtime(absl::StrCat(kind, "_lookup_element"), I8P()),
                         {meta, container, l32}, "cell");
    if (level.type() == SNodeType::kPointer) {
      // The ambient element stands for an inactive cell (or a failed activation): never written.
      llvm::Value* ambient =
          Addr(sparse_runtime::runtime_ambient_element(rt_->context(), level.id()));
      auto* ok = llvm::BasicBlock::Create(c_, "found", fn_);
      b_.CreateCondBr(b_.CreateICmpEQ(cell, ambient), Activates() ? fail : next, ok);
      b_.SetInsertPoint(ok);
    }
  }

  llvm::Value* target_container =
      b_.CreateGEP(b_.getInt8Ty(), cell, b_.getInt64(target_.offset_in_parent_cell()));
  if (op_ == Op::kDeactivate) {
    llvm::Value* l = CellIndex(target_, coord.data(), remaining.data());
    llvm::Value* l32 = b_.CreateTrunc(l, b_.getInt32Ty());
    llvm::Value* meta = Addr(rt_->meta(target_));
    const char* kind = target_.type() == SNodeType::kPointer ? "Pointer" : "Bitmasked";
    llvm::Value* active = b_.CreateCall(Runtime(absl::StrCat(kind, "_is_active"), b_.getInt1Ty()),
                                        {meta, target_container, l32});
    auto* on = llvm::BasicBlock::Create(c_, "deactivate", fn_);
    b_.CreateCondBr(active, on, next);
    b_.SetInsertPoint(on);
    b_.CreateCall(Runtime(absl::StrCat(kind, "_deactivate"), b_.getVoidTy()),
                  {meta, target_container, l32});
    *contribution = b_.getInt64(1);
    *from = b_.GetInsertBlock();
    b_.CreateBr(next);
    return;
  }

  const DataType dt = target_.dtype();
  llvm::Type* t = LlvmType(dt, c_);
  llvm::Value* addr = b_.CreateBitCast(target_container, t->getPointerTo());
  switch (op_) {
    case Op::kWrite:
      b_.CreateStore(Value(i, t), addr);
      *contribution = b_.getInt64(1);
      break;
    case Op::kAtomicAdd:
      b_.CreateAtomicRMW(IsFloat(dt) ? llvm::AtomicRMWInst::FAdd : llvm::AtomicRMWInst::Add, addr,
                         Value(i, t), llvm::MaybeAlign(DataTypeSize(dt)),
                         llvm::AtomicOrdering::Monotonic);
      *contribution = b_.getInt64(1);
      break;
    default: {
      llvm::Value* v = b_.CreateLoad(t, addr);
      if (dt == DataType::kF32) {
        v = b_.CreateFPExt(v, b_.getDoubleTy());
      } else if (!IsFloat(dt)) {
        v = IsSigned(dt) ? b_.CreateSIToFP(v, b_.getDoubleTy())
                         : b_.CreateUIToFP(v, b_.getDoubleTy());
      }
      *contribution = v;
      break;
    }
  }
  *from = b_.GetInsertBlock();
  b_.CreateBr(next);
}

}  // namespace

KernelBuilder::KernelBuilder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
KernelBuilder::~KernelBuilder() = default;

absl::StatusOr<std::unique_ptr<KernelBuilder>> KernelBuilder::Create(
    absl::string_view runtime_bitcode) {
  auto impl = std::make_unique<Impl>();
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
  for (const llvm::Function& f : **runtime) {
    const std::string demangled = llvm::demangle(f.getName().str());
    if (demangled.rfind(prefix, 0) != 0) continue;
    const size_t paren = demangled.find('(', prefix.size());
    if (paren == std::string::npos) continue;
    impl->mangled.emplace(demangled.substr(prefix.size(), paren - prefix.size()),
                          f.getName().str());
  }
  for (const char* kind : {"Pointer", "Bitmasked"}) {
    for (const char* op : {"_activate", "_deactivate", "_is_active", "_lookup_element"}) {
      if (impl->mangled.count(absl::StrCat(kind, op)) == 0) {
        return absl::NotFoundError(absl::StrCat("runtime bitcode lacks ", prefix, kind, op));
      }
    }
  }
  impl->module = std::make_unique<llvm::Module>("kernels", *impl->context);
  impl->module->setTargetTriple((*runtime)->getTargetTriple());
  impl->module->setDataLayout((*runtime)->getDataLayout());
  return std::unique_ptr<KernelBuilder>(new KernelBuilder(std::move(impl)));
}

absl::Status KernelBuilder::AddRangeWrite(absl::string_view name, SparseRuntime* rt,
                                          const SNode& place, const std::vector<CoordMap>& coords,
                                          double scale, double offset) {
  if (impl_->module == nullptr) return absl::FailedPreconditionError("KernelBuilder finished");
  return Emitter(impl_.get(), rt, place, coords, Op::kWrite, scale, offset).Emit(name);
}

absl::Status KernelBuilder::AddRangeAtomicAdd(absl::string_view name, SparseRuntime* rt,
                                              const SNode& place,
                                              const std::vector<CoordMap>& coords, double scale,
                                              double offset) {
  if (impl_->module == nullptr) return absl::FailedPreconditionError("KernelBuilder finished");
  return Emitter(impl_.get(), rt, place, coords, Op::kAtomicAdd, scale, offset).Emit(name);
}

absl::Status KernelBuilder::AddRangeDeactivate(absl::string_view name, SparseRuntime* rt,
                                               const SNode& snode,
                                               const std::vector<CoordMap>& coords) {
  if (impl_->module == nullptr) return absl::FailedPreconditionError("KernelBuilder finished");
  return Emitter(impl_.get(), rt, snode, coords, Op::kDeactivate, 0, 0).Emit(name);
}

absl::Status KernelBuilder::AddRangeSum(absl::string_view name, SparseRuntime* rt,
                                        const SNode& place, const std::vector<CoordMap>& coords) {
  if (impl_->module == nullptr) return absl::FailedPreconditionError("KernelBuilder finished");
  return Emitter(impl_.get(), rt, place, coords, Op::kSum, 0, 0).Emit(name);
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
  return out;
}

}  // namespace codegen
}  // namespace accelmem

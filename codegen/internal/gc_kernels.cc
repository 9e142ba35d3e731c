// GC kernels of one SNode allocator (prepare, phase 0/1/2, serial) and their device entries.
#include "codegen/internal/emitter.h"
#include "llvm/IR/IntrinsicsNVPTX.h"

namespace accelmem {
namespace codegen {
namespace internal {

RuntimeFunction GcFunction(GcKernel kind) {
  switch (kind) {
    case GcKernel::kPrepare:
      return ACCELMEM_RUNTIME_FUNCTION(accelmem_gc_scratch_reserve);
    case GcKernel::kPhase0:
      return ACCELMEM_RUNTIME_FUNCTION(accelmem_gc_phase0_compact_free_list);
    case GcKernel::kPhase1:
      return ACCELMEM_RUNTIME_FUNCTION(accelmem_gc_phase1_swap_lists);
    case GcKernel::kPhase2:
      return ACCELMEM_RUNTIME_FUNCTION(accelmem_gc_phase2_refill_and_zero);
    case GcKernel::kSerial:
      return ACCELMEM_RUNTIME_FUNCTION(accelmem_gc_serial);
  }
  return RuntimeFunction{"", nullptr};
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
  // nm = the runtime's NodeManager of the SNode, as upstream's gc kernels find it.
  llvm::Value* nm = b_.CreateCall(Rt(ACCELMEM_RUNTIME_FUNCTION(accelmem_runtime_node_manager)),
                                  {Runtime(), b_.getInt32(snode.id())});
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
  const RuntimeFunction fn = GcFunction(kind);
  switch (kind) {
    case GcKernel::kPrepare: {
      llvm::Value* ok = b_.CreateCall(Rt(fn), {scratch, nm, arg(2)});
      b_.CreateRet(b_.CreateZExt(ok, i64));
      break;
    }
    case GcKernel::kPhase0:
      b_.CreateCall(Rt(fn), {nm, scratch, arg(2), arg(3)});
      b_.CreateRetVoid();
      break;
    case GcKernel::kPhase1:
      b_.CreateCall(Rt(fn), {nm, scratch, arg(2)});
      b_.CreateRetVoid();
      break;
    case GcKernel::kPhase2:
      b_.CreateCall(Rt(fn), {nm, scratch, arg(2), arg(3), arg(4), arg(5)});
      b_.CreateRetVoid();
      break;
    case GcKernel::kSerial: {
      llvm::Value* ok = b_.CreateCall(Rt(fn), {nm, scratch});
      b_.CreateRet(b_.CreateZExt(ok, i64));
      break;
    }
  }
}

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

}  // namespace internal
}  // namespace codegen
}  // namespace accelmem

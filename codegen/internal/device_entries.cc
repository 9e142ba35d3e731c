// Device entries of range, struct-for and point kernels for NVPTX.
#include "codegen/internal/emitter.h"
#include "llvm/IR/IntrinsicsNVPTX.h"

namespace accelmem {
namespace codegen {
namespace internal {

void EmitDeviceEntry(KernelBuilder::Impl& impl, absl::string_view name, llvm::Function* k) {
  llvm::Module& m = *impl.module;
  llvm::LLVMContext& c = *impl.context;
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
  impl.entry_points.emplace_back(name);
}

}  // namespace internal
}  // namespace codegen
}  // namespace accelmem

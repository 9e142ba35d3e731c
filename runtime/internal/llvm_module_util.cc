#include "runtime/internal/llvm_module_util.h"

#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/IPO/Internalize.h"

namespace accelmem {
namespace runtime {
namespace internal {

absl::StatusOr<std::unique_ptr<llvm::Module>> ParseKernelIr(absl::string_view ir_text,
                                                            llvm::LLVMContext& context) {
  llvm::SMDiagnostic error;
  auto buffer = llvm::MemoryBuffer::getMemBuffer(llvm::StringRef(ir_text.data(), ir_text.size()),
                                                 "kernel.ll", /*RequiresNullTerminator=*/false);
  std::unique_ptr<llvm::Module> module = llvm::parseIR(buffer->getMemBufferRef(), error, context);
  if (module == nullptr) {
    std::string message;
    llvm::raw_string_ostream stream(message);
    error.print("", stream, /*ShowColors=*/false);
    return absl::InvalidArgumentError(absl::StrCat("kernel IR does not parse: ", stream.str()));
  }
  return module;
}

void InternalizeAllBut(llvm::Module& module, const std::vector<std::string>& keep) {
  const std::set<std::string> kept(keep.begin(), keep.end());
  llvm::internalizeModule(module, [&kept](const llvm::GlobalValue& value) {
    return kept.count(value.getName().str()) > 0;
  });
}

void OptimizeModule(llvm::Module& module, llvm::TargetMachine* machine, int opt_level) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder builder(machine);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  const llvm::OptimizationLevel level = opt_level <= 0   ? llvm::OptimizationLevel::O0
                                        : opt_level == 1 ? llvm::OptimizationLevel::O1
                                        : opt_level == 2 ? llvm::OptimizationLevel::O2
                                                         : llvm::OptimizationLevel::O3;
  llvm::ModulePassManager passes = level == llvm::OptimizationLevel::O0
                                       ? builder.buildO0DefaultPipeline(level)
                                       : builder.buildPerModuleDefaultPipeline(level);
  passes.run(module, mam);
}

}  // namespace internal
}  // namespace runtime
}  // namespace accelmem

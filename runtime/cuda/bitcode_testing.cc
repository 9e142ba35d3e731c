#include "runtime/cuda/bitcode_testing.h"

#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/Attributes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/InstrTypes.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

namespace accelmem {
namespace runtime {
namespace cuda {
namespace {

bool IsWarpOrBlockAsm(const std::string& text) {
  for (const char* op : {"activemask", "match.", "bar.", "barrier", "vote.", "shfl."}) {
    if (text.find(op) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<ConvergenceReport> CheckConvergence(absl::string_view bitcode) {
  if (bitcode.empty()) return absl::InvalidArgumentError("empty bitcode");
  llvm::LLVMContext context;
  auto buffer = llvm::MemoryBuffer::getMemBuffer(llvm::StringRef(bitcode.data(), bitcode.size()),
                                                 "bitcode", /*RequiresNullTerminator=*/false);
  auto module = llvm::parseBitcodeFile(buffer->getMemBufferRef(), context);
  if (!module) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot parse bitcode: ", llvm::toString(module.takeError())));
  }
  ConvergenceReport report;
  for (const llvm::Function& f : **module) {
    if (f.isDeclaration()) continue;
    const std::string name = f.getName().str();
    bool calls_convergent = false;
    for (const llvm::BasicBlock& block : f) {
      for (const llvm::Instruction& instruction : block) {
        const auto* call = llvm::dyn_cast<llvm::CallBase>(&instruction);
        if (call == nullptr) continue;
        if (const auto* asm_call = llvm::dyn_cast<llvm::InlineAsm>(call->getCalledOperand())) {
          if (!IsWarpOrBlockAsm(asm_call->getAsmString())) continue;
          ++report.convergent_calls;
          if (!call->isConvergent()) {
            report.errors.push_back(absl::StrCat(name, ": inline asm '", asm_call->getAsmString(),
                                                 "' is not convergent"));
          }
        } else if (call->isConvergent()) {
          ++report.convergent_calls;
        }
        if (call->isConvergent()) calls_convergent = true;
      }
    }
    if (calls_convergent && !f.isConvergent()) {
      report.errors.push_back(absl::StrCat(name, ": makes convergent calls but is not convergent"));
    }
  }
  return report;
}

}  // namespace cuda
}  // namespace runtime
}  // namespace accelmem

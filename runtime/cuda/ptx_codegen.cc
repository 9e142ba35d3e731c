#include "runtime/cuda/ptx_codegen.h"

#include <cstdlib>
#include <mutex>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "runtime/internal/llvm_module_util.h"

extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

namespace accelmem {
namespace runtime {
namespace cuda {
namespace {

void InitializeNvptxOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

void MarkKernel(llvm::Module& module, llvm::Function* function) {
  llvm::LLVMContext& context = module.getContext();
  llvm::Metadata* operands[] = {
      llvm::ValueAsMetadata::get(function), llvm::MDString::get(context, "kernel"),
      llvm::ValueAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(context), 1))};
  module.getOrInsertNamedMetadata("nvvm.annotations")
      ->addOperand(llvm::MDNode::get(context, operands));
}

// LLVM 14 knows SMs up to sm_86 and the PTX ISA up to 7.5; ptxas accepts `.target sm_90` only
// from PTX 7.8 on. For newer SMs, code is generated for sm_86 (every instruction of it is valid
// on sm_90) and the `.target` and `.version` directives are rewritten for the requested SM.
constexpr int kNewestSmOfLlvm14 = 86;

int SmNumber(const std::string& sm) {
  if (sm.size() > 3 && sm.compare(0, 3, "sm_") == 0) return std::atoi(sm.c_str() + 3);
  return 0;
}

std::string RetargetPtx(std::string ptx, const std::string& generated_sm,
                        const std::string& requested_sm) {
  if (generated_sm == requested_sm) return ptx;
  const std::string target = ".target " + generated_sm;
  size_t at = ptx.find(target);
  if (at != std::string::npos) ptx.replace(at, target.size(), ".target " + requested_sm);
  const std::string version = ".version 7.5";
  at = ptx.find(version);
  if (at != std::string::npos) ptx.replace(at, version.size(), ".version 7.8");
  return ptx;
}

}  // namespace

absl::StatusOr<std::string> CompileToPtx(llvm::Module& module,
                                         const std::vector<std::string>& kernel_names,
                                         absl::string_view runtime_bitcode,
                                         const PtxOptions& options) {
  InitializeNvptxOnce();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(kNvptxTriple, error);
  if (target == nullptr) {
    return absl::UnavailableError(absl::StrCat("LLVM has no NVPTX target: ", error));
  }
  const std::string generated_sm = SmNumber(options.sm) > kNewestSmOfLlvm14 ? "sm_86" : options.sm;
  // LLVM only warns on stderr about an unknown processor and then emits generic code; refuse it.
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget(
      target->createMCSubtargetInfo(kNvptxTriple, generated_sm, ""));
  if (subtarget == nullptr || !subtarget->isCPUStringValid(generated_sm)) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown CUDA architecture '", options.sm, "' (expected sm_XY, e.g. sm_90)"));
  }
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      kNvptxTriple, generated_sm, "+ptx75", llvm::TargetOptions(), llvm::None));
  if (machine == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("cannot target NVPTX ", options.sm));
  }
  module.setTargetTriple(kNvptxTriple);
  module.setDataLayout(machine->createDataLayout());

  if (!runtime_bitcode.empty()) {
    llvm::MemoryBufferRef ref(llvm::StringRef(runtime_bitcode.data(), runtime_bitcode.size()),
                              "runtime_cuda.bc");
    auto runtime = llvm::parseBitcodeFile(ref, module.getContext());
    if (!runtime) {
      return absl::InvalidArgumentError(
          absl::StrCat("runtime bitcode does not parse: ", llvm::toString(runtime.takeError())));
    }
    (*runtime)->setTargetTriple(kNvptxTriple);
    (*runtime)->setDataLayout(module.getDataLayout());
    if (llvm::Linker::linkModules(module, std::move(*runtime), llvm::Linker::LinkOnlyNeeded)) {
      return absl::InternalError("linking the CUDA runtime bitcode failed");
    }
  }
  for (const std::string& name : kernel_names) {
    llvm::Function* function = module.getFunction(name);
    if (function == nullptr || function->isDeclaration()) {
      return absl::NotFoundError(absl::StrCat("kernel '", name, "' is not defined"));
    }
    MarkKernel(module, function);
  }
  internal::InternalizeAllBut(module, kernel_names);
  std::string diagnostics;
  llvm::raw_string_ostream diag_stream(diagnostics);
  if (llvm::verifyModule(module, &diag_stream)) {
    return absl::InvalidArgumentError(
        absl::StrCat("module does not verify for NVPTX: ", diag_stream.str()));
  }
  if (options.opt_level > 0) internal::OptimizeModule(module, machine.get(), options.opt_level);

  llvm::SmallString<0> ptx;
  llvm::raw_svector_ostream ptx_stream(ptx);
  llvm::legacy::PassManager codegen;
  if (machine->addPassesToEmitFile(codegen, ptx_stream, nullptr, llvm::CGFT_AssemblyFile)) {
    return absl::InternalError("the NVPTX target cannot emit assembly");
  }
  codegen.run(module);
  return RetargetPtx(std::string(ptx.str()), generated_sm, options.sm);
}

absl::StatusOr<std::string> CompileIrToPtx(absl::string_view ir_text,
                                           const std::vector<std::string>& kernel_names,
                                           absl::string_view runtime_bitcode,
                                           const PtxOptions& options) {
  llvm::LLVMContext context;
  auto module = internal::ParseKernelIr(ir_text, context);
  if (!module.ok()) return module.status();
  return CompileToPtx(**module, kernel_names, runtime_bitcode, options);
}

absl::StatusOr<std::string> CompileBitcodeToPtx(absl::string_view bitcode, absl::string_view name,
                                                const std::vector<std::string>& kernel_names,
                                                absl::string_view runtime_bitcode,
                                                const PtxOptions& options) {
  if (bitcode.empty()) return absl::InvalidArgumentError(absl::StrCat(name, " is empty"));
  llvm::LLVMContext context;
  llvm::MemoryBufferRef ref(llvm::StringRef(bitcode.data(), bitcode.size()),
                            llvm::StringRef(name.data(), name.size()));
  auto module = llvm::parseBitcodeFile(ref, context);
  if (!module) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " does not parse: ", llvm::toString(module.takeError())));
  }
  return CompileToPtx(**module, kernel_names, runtime_bitcode, options);
}

}  // namespace cuda
}  // namespace runtime
}  // namespace accelmem

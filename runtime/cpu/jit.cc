#include "runtime/cpu/jit.h"

#include <mutex>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "llvm/ADT/Triple.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ThreadSafeModule.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Support/Host.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "runtime/internal/llvm_module_util.h"

namespace accelmem {
namespace runtime {
namespace cpu {
namespace {

void InitializeNativeTargetOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

std::string TakeMessage(llvm::Error error) { return llvm::toString(std::move(error)); }

absl::StatusOr<std::unique_ptr<llvm::Module>> ParseRuntime(const std::string& bitcode,
                                                           llvm::LLVMContext& context) {
  llvm::MemoryBufferRef ref(bitcode, "runtime_x64.bc");
  auto module = llvm::parseBitcodeFile(ref, context);
  if (!module) {
    return absl::InvalidArgumentError(
        absl::StrCat("runtime bitcode does not parse: ", TakeMessage(module.takeError())));
  }
  return std::move(*module);
}

}  // namespace

JitModule::~JitModule() = default;

absl::StatusOr<void*> JitModule::Lookup(absl::string_view name) const {
  auto symbol = jit_->lookup(llvm::StringRef(name.data(), name.size()));
  if (!symbol) {
    return absl::NotFoundError(
        absl::StrCat("JIT entry point '", name, "' not found: ", TakeMessage(symbol.takeError())));
  }
  return reinterpret_cast<void*>(static_cast<uintptr_t>(symbol->getAddress()));
}

CpuJit::~CpuJit() = default;

absl::StatusOr<std::unique_ptr<CpuJit>> CpuJit::Create(absl::string_view runtime_bitcode,
                                                       JitOptions options) {
  InitializeNativeTargetOnce();
  std::unique_ptr<CpuJit> jit(new CpuJit());
  jit->runtime_bitcode_ = std::string(runtime_bitcode);
  jit->options_ = options;
  llvm::LLVMContext context;
  auto runtime = ParseRuntime(jit->runtime_bitcode_, context);
  if (!runtime.ok()) return runtime.status();
  const std::string host = llvm::sys::getProcessTriple();
  jit->triple_ = (*runtime)->getTargetTriple().empty() ? host : (*runtime)->getTargetTriple();
  if (llvm::Triple(jit->triple_).getArch() != llvm::Triple(host).getArch()) {
    return absl::InvalidArgumentError(absl::StrCat("runtime bitcode targets '", jit->triple_,
                                                   "', which this host ('", host,
                                                   "') cannot run; use the x64 runtime"));
  }
  jit->data_layout_ = (*runtime)->getDataLayoutStr();
  return jit;
}

std::unique_ptr<llvm::Module> CpuJit::NewKernelModule(absl::string_view name,
                                                      llvm::LLVMContext& context) const {
  auto module = std::make_unique<llvm::Module>(llvm::StringRef(name.data(), name.size()), context);
  module->setTargetTriple(triple_);
  module->setDataLayout(data_layout_);
  return module;
}

absl::StatusOr<std::unique_ptr<JitModule>> CpuJit::Compile(
    std::unique_ptr<llvm::Module> kernel_arg, std::unique_ptr<llvm::LLVMContext> context_arg,
    const std::vector<std::string>& entry_points) const {
  // The module must die before its context on every path. The caller destroys by-value arguments
  // in an order compilers choose differently (clang: the context first), so own them here.
  std::unique_ptr<llvm::LLVMContext> context = std::move(context_arg);
  std::unique_ptr<llvm::Module> kernel = std::move(kernel_arg);
  std::string diagnostics;
  llvm::raw_string_ostream diag_stream(diagnostics);
  if (llvm::verifyModule(*kernel, &diag_stream)) {
    return absl::InvalidArgumentError(absl::StrCat("kernel module '", kernel->getModuleIdentifier(),
                                                   "' does not verify: ", diag_stream.str()));
  }
  if (kernel->getTargetTriple().empty()) kernel->setTargetTriple(triple_);
  if (kernel->getDataLayoutStr().empty()) kernel->setDataLayout(data_layout_);

  auto runtime = ParseRuntime(runtime_bitcode_, *context);
  if (!runtime.ok()) return runtime.status();
  // Only the runtime functions the kernel reaches are linked in: compile time stays small.
  if (llvm::Linker::linkModules(*kernel, std::move(*runtime), llvm::Linker::LinkOnlyNeeded)) {
    return absl::InternalError(absl::StrCat("linking the runtime into kernel module '",
                                            kernel->getModuleIdentifier(), "' failed"));
  }
  for (const std::string& name : entry_points) {
    llvm::Function* function = kernel->getFunction(name);
    if (function == nullptr || function->isDeclaration()) {
      return absl::NotFoundError(absl::StrCat("entry point '", name,
                                              "' is not defined in kernel module '",
                                              kernel->getModuleIdentifier(), "'"));
    }
  }
  if (options_.inline_runtime) {
    internal::InternalizeAllBut(*kernel, entry_points);
    // The runtime is compiled freestanding, so its functions carry "no-builtins", and LLVM's
    // inliner refuses a callee whose builtin set differs from the caller's ("conflicting
    // attributes"): without this no runtime function, not even a one-load fast path, would be
    // inlined into a kernel. Kernels make no use of library builtins; give them the runtime's.
    for (llvm::Function& f : *kernel) {
      if (!f.isDeclaration() && !f.hasFnAttribute("no-builtins")) f.addFnAttr("no-builtins");
    }
  }

  auto machine_builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!machine_builder) {
    return absl::InternalError(absl::StrCat("cannot describe the host for the JIT: ",
                                            TakeMessage(machine_builder.takeError())));
  }
  machine_builder->setCodeGenOptLevel(options_.opt_level >= 3   ? llvm::CodeGenOpt::Aggressive
                                      : options_.opt_level <= 0 ? llvm::CodeGenOpt::None
                                                                : llvm::CodeGenOpt::Default);
  auto machine = machine_builder->createTargetMachine();
  if (!machine) {
    return absl::InternalError(
        absl::StrCat("cannot create the host target machine: ", TakeMessage(machine.takeError())));
  }
  internal::OptimizeModule(*kernel, machine->get(), options_.opt_level);

  std::unique_ptr<JitModule> result(new JitModule());
  {
    llvm::raw_string_ostream ir_stream(result->optimized_ir_);
    kernel->print(ir_stream, nullptr);
  }
  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(*machine_builder).create();
  if (!jit) {
    return absl::InternalError(
        absl::StrCat("cannot create the ORC LLJIT: ", TakeMessage(jit.takeError())));
  }
  // Kernels and the runtime may call libc (memset, memcpy) that LLVM emits for intrinsics.
  auto process_symbols = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      (*jit)->getDataLayout().getGlobalPrefix());
  if (!process_symbols) {
    return absl::InternalError(TakeMessage(process_symbols.takeError()));
  }
  (*jit)->getMainJITDylib().addGenerator(std::move(*process_symbols));
  if (llvm::Error error =
          (*jit)->addIRModule(llvm::orc::ThreadSafeModule(std::move(kernel), std::move(context)))) {
    return absl::InternalError(
        absl::StrCat("cannot add the kernel module to the JIT: ", TakeMessage(std::move(error))));
  }
  result->jit_ = std::move(*jit);
  // Resolve every entry point now so that code generation errors surface here, not at call time.
  for (const std::string& name : entry_points) {
    auto address = result->Lookup(name);
    if (!address.ok()) return address.status();
  }
  return result;
}

absl::StatusOr<std::unique_ptr<JitModule>> CpuJit::CompileIr(
    absl::string_view ir_text, const std::vector<std::string>& entry_points) const {
  auto context = std::make_unique<llvm::LLVMContext>();
  auto module = internal::ParseKernelIr(ir_text, *context);
  if (!module.ok()) return module.status();
  return Compile(std::move(*module), std::move(context), entry_points);
}

}  // namespace cpu
}  // namespace runtime
}  // namespace accelmem

#include "codegen/internal/runtime_call.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "llvm/ADT/Triple.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/Support/raw_ostream.h"

namespace accelmem {
namespace codegen {
namespace internal {
namespace {

std::string Print(const llvm::Type* t) {
  std::string s;
  llvm::raw_string_ostream out(s);
  t->print(out);
  return out.str();
}

// Compares accelmem_abi_layout, as the module was compiled, with the header.
void CheckLayout(const llvm::Module& runtime, std::vector<std::string>* problems) {
  const llvm::GlobalVariable* layout = runtime.getGlobalVariable("accelmem_abi_layout");
  const auto* values = layout != nullptr && layout->hasInitializer()
                           ? llvm::dyn_cast<llvm::ConstantDataArray>(layout->getInitializer())
                           : nullptr;
  if (values == nullptr || values->getNumElements() != kernel_abi::kNumLayoutFields) {
    problems->push_back("no accelmem_abi_layout record of kernel_abi.h's layout");
    return;
  }
  auto expect = [&](int field, uint64_t want, const char* what) {
    const uint64_t got = values->getElementAsInteger(field);
    if (got != want) {
      problems->push_back(
          absl::StrCat(what, " is ", got, " in the module, ", want, " in the header"));
    }
  };
  expect(kernel_abi::kLayoutKernelContextBytes, sizeof(kernel_abi::KernelContext),
         "sizeof(KernelContext)");
  // Kernels keep a NodeCache on their stack on CPU targets only.
  if (llvm::Triple(runtime.getTargetTriple()).getArch() != llvm::Triple::nvptx64) {
    expect(kernel_abi::kLayoutNodeCacheBytes, kernel_abi::kNodeCacheBytes, "sizeof(NodeCache)");
    expect(kernel_abi::kLayoutNodeCacheAlign, kernel_abi::kNodeCacheAlign, "alignof(NodeCache)");
  }
}

}  // namespace

const std::vector<RuntimeFunction>& AllRuntimeFunctions() {
#define ACCELMEM_RUNTIME_FUNCTION_ENTRY(ret, name, params) ACCELMEM_RUNTIME_FUNCTION(name),
  static const auto* all = new std::vector<RuntimeFunction>{
      ACCELMEM_KERNEL_ENTRY_POINTS(ACCELMEM_RUNTIME_FUNCTION_ENTRY)};
#undef ACCELMEM_RUNTIME_FUNCTION_ENTRY
  return *all;
}

absl::Status CheckRuntimeAbi(const llvm::Module& runtime) {
  std::vector<std::string> problems;
  for (const RuntimeFunction& f : AllRuntimeFunctions()) {
    const llvm::Function* defined = runtime.getFunction(f.name);
    if (defined == nullptr || defined->isDeclaration()) {
      problems.push_back(absl::StrCat(f.name, " is not defined"));
      continue;
    }
    llvm::FunctionType* want = f.type(runtime.getContext());
    if (defined->getFunctionType() != want) {
      problems.push_back(absl::StrCat(f.name, " has type ", Print(defined->getFunctionType()),
                                      ", kernel_abi.h declares ", Print(want)));
    }
  }
  CheckLayout(runtime, &problems);
  if (problems.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat("runtime module '", runtime.getModuleIdentifier(),
                   "' does not match kernel_abi/kernel_abi.h: ", absl::StrJoin(problems, "; ")));
}

}  // namespace internal
}  // namespace codegen
}  // namespace accelmem

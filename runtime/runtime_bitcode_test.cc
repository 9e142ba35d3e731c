#include "runtime/runtime_bitcode.h"

#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "codegen/kernel_builder.h"
#include "gtest/gtest.h"
#include "kernel_abi/kernel_abi.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

namespace accelmem {
namespace runtime {
namespace {

std::string g_x64_path, g_cuda_path;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::unique_ptr<llvm::Module> Parse(absl::string_view bytes, llvm::LLVMContext& context) {
  llvm::MemoryBufferRef ref(llvm::StringRef(bytes.data(), bytes.size()), "runtime");
  auto module = llvm::parseBitcodeFile(ref, context);
  if (!module) {
    ADD_FAILURE() << llvm::toString(module.takeError());
    return nullptr;
  }
  return std::move(*module);
}

std::string Write(const llvm::Module& module) {
  std::string bytes;
  llvm::raw_string_ostream out(bytes);
  llvm::WriteBitcodeToFile(module, out);
  out.flush();
  return bytes;
}

// The embedded modules are byte for byte the genrules' outputs.
TEST(RuntimeBitcodeTest, EmbeddedBytesEqualGenruleOutputs) {
  std::string x64 = ReadFile(g_x64_path), cuda = ReadFile(g_cuda_path);
  ASSERT_FALSE(x64.empty());
  ASSERT_FALSE(cuda.empty());
  EXPECT_EQ(RuntimeBitcode(RuntimeArch::kX64), x64);
  EXPECT_EQ(RuntimeBitcode(RuntimeArch::kCuda), cuda);
  EXPECT_EQ(*RuntimeBitcodeByName("x64"), x64);
  EXPECT_FALSE(RuntimeBitcodeByName("riscv").ok());
}

// Each module parses, carries its architecture's triple and matches kernel_abi.h: every entry
// point defined with its declared type, the header's layout recorded.
TEST(RuntimeBitcodeTest, ModulesParseWithTripleAndMatchTheKernelAbi) {
  const struct {
    RuntimeArch arch;
    const char* triple;
  } cases[] = {{RuntimeArch::kX64, "x86_64-unknown-linux-gnu"},
               {RuntimeArch::kCuda, "nvptx64-nvidia-cuda"}};
  for (const auto& c : cases) {
    SCOPED_TRACE(RuntimeArchName(c.arch));
    llvm::LLVMContext context;
    std::unique_ptr<llvm::Module> module = Parse(RuntimeBitcode(c.arch), context);
    ASSERT_NE(module, nullptr);
    EXPECT_EQ(module->getTargetTriple(), c.triple);
    absl::Status abi = codegen::KernelBuilder::CheckRuntimeBitcode(RuntimeBitcode(c.arch));
    EXPECT_TRUE(abi.ok()) << abi;
  }
}

// The ABI check of `arch`'s runtime module after `mutate` changed it.
absl::Status CheckMutated(RuntimeArch arch, const std::function<void(llvm::Module&)>& mutate) {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = Parse(RuntimeBitcode(arch), context);
  if (module == nullptr) return absl::InternalError("the runtime module does not parse");
  mutate(*module);
  return codegen::KernelBuilder::CheckRuntimeBitcode(Write(*module));
}

// The check catches a runtime module that drifted from the header: an entry point renamed, one
// whose parameters changed, a struct whose size changed.
TEST(RuntimeBitcodeTest, AbiCheckCatchesDrift) {
  for (RuntimeArch arch : {RuntimeArch::kX64, RuntimeArch::kCuda}) {
    SCOPED_TRACE(RuntimeArchName(arch));
    absl::Status s = CheckMutated(arch, [](llvm::Module& module) {
      llvm::Function* f = module.getFunction("accelmem_gc_serial");
      ASSERT_NE(f, nullptr);
      f->setName("accelmem_gc_serial_renamed");
    });
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_NE(s.message().find("accelmem_gc_serial is not defined"), absl::string_view::npos) << s;

    // accelmem_Pointer_activate(meta, node, i) replaced by one that takes an i64 index.
    s = CheckMutated(arch, [](llvm::Module& module) {
      llvm::LLVMContext& context = module.getContext();
      llvm::Function* old = module.getFunction("accelmem_Pointer_activate");
      ASSERT_NE(old, nullptr);
      old->setName("accelmem_Pointer_activate_old");
      llvm::Type* i8p = llvm::Type::getInt8PtrTy(context);
      auto* changed = llvm::Function::Create(
          llvm::FunctionType::get(llvm::Type::getVoidTy(context),
                                  {i8p, i8p, llvm::Type::getInt64Ty(context)}, false),
          llvm::Function::ExternalLinkage, "accelmem_Pointer_activate", &module);
      llvm::ReturnInst::Create(context, llvm::BasicBlock::Create(context, "entry", changed));
    });
    EXPECT_NE(s.message().find("accelmem_Pointer_activate has type void (i8*, i8*, i64)"),
              absl::string_view::npos)
        << s;

    s = CheckMutated(arch, [](llvm::Module& module) {
      llvm::GlobalVariable* layout = module.getGlobalVariable("accelmem_abi_layout");
      ASSERT_NE(layout, nullptr);
      auto* values = llvm::cast<llvm::ConstantDataArray>(layout->getInitializer());
      std::vector<uint64_t> drifted;
      for (unsigned k = 0; k < values->getNumElements(); ++k) {
        drifted.push_back(values->getElementAsInteger(k));
      }
      drifted[kernel_abi::kLayoutKernelContextBytes] += 8;
      layout->setInitializer(llvm::ConstantDataArray::get(module.getContext(), drifted));
    });
    EXPECT_NE(s.message().find("sizeof(KernelContext) is 40 in the module, 32 in the header"),
              absl::string_view::npos)
        << s;
  }
  EXPECT_EQ(codegen::KernelBuilder::CheckRuntimeBitcode("not bitcode").code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace runtime
}  // namespace accelmem

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  if (argc != 3) return 2;
  accelmem::runtime::g_x64_path = argv[1];
  accelmem::runtime::g_cuda_path = argv[2];
  return RUN_ALL_TESTS();
}

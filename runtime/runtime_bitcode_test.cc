#include "runtime/runtime_bitcode.h"

#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Demangle/Demangle.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MemoryBuffer.h"

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

// The functions a kernel calls, by unqualified name: every SNode kind's interface, the
// allocator and context entry points and the GC phases.
const char* const kEntryPoints[] = {
    "Root_get_num_elements",
    "Root_activate",
    "Root_is_active",
    "Root_lookup_element",
    "Dense_get_num_elements",
    "Dense_activate",
    "Dense_is_active",
    "Bitmasked_get_num_elements",
    "Bitmasked_activate",
    "Bitmasked_deactivate",
    "Bitmasked_is_active",
    "Bitmasked_lookup_element",
    "Pointer_get_num_elements",
    "Pointer_activate",
    "Pointer_activate_cell",
    "Pointer_lookup_cell",
    "Pointer_deactivate",
    "Pointer_is_active",
    "Pointer_lookup_element",
    "Dynamic_get_num_elements",
    "Dynamic_activate",
    "Dynamic_deactivate",
    "Dynamic_is_active",
    "Dynamic_lookup_element",
    "Dynamic_allocate",
    "runtime_context_init",
    "runtime_gc_serial",
    "gc_phase0_compact_free_list",
    "gc_phase1_swap_lists",
    "gc_phase2_refill_and_zero",
    "gc_serial",
};

// Unqualified names of the functions the module defines (C++ names demangled).
std::set<std::string> DefinedFunctions(const llvm::Module& module) {
  std::set<std::string> names;
  for (const llvm::Function& function : module) {
    if (function.isDeclaration()) continue;
    std::string name = llvm::demangle(function.getName().str());
    name = name.substr(0, name.find('('));
    size_t colon = name.rfind("::");
    names.insert(colon == std::string::npos ? name : name.substr(colon + 2));
  }
  return names;
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

// Each module parses, carries its architecture's triple and defines every entry point.
TEST(RuntimeBitcodeTest, ModulesParseWithTripleAndEntryPoints) {
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
    std::set<std::string> defined = DefinedFunctions(*module);
    for (const char* entry : kEntryPoints) {
      EXPECT_TRUE(defined.count(entry)) << entry << " is not defined";
    }
  }
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

// The CPU JIT with the real sparse runtime: kernels call runtime entry points from the embedded
// x64 runtime bitcode, which are linked, inlined and optimized away where possible.
#include <cstdint>
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Demangle/Demangle.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MemoryBuffer.h"
#include "runtime/cpu/jit.h"
#include "runtime/runtime_bitcode.h"

namespace accelmem {
namespace runtime {
namespace cpu {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The mangled name of accelmem::sparse_runtime::`name` in the x64 runtime module.
std::string MangledRuntimeName(const std::string& name) {
  llvm::LLVMContext context;
  absl::string_view bytes = RuntimeBitcode(RuntimeArch::kX64);
  auto module = llvm::parseBitcodeFile(
      llvm::MemoryBufferRef(llvm::StringRef(bytes.data(), bytes.size()), "runtime"), context);
  if (!module) {
    llvm::consumeError(module.takeError());
    return "";
  }
  const std::string prefix = "accelmem::sparse_runtime::" + name + "(";
  for (const llvm::Function& f : **module) {
    if (llvm::demangle(f.getName().str()).rfind(prefix, 0) == 0) return f.getName().str();
  }
  return "";
}

// A kernel calling Root_get_num_elements and Root_lookup_element runs against the linked
// runtime, and after inlining the optimized kernel no longer calls the runtime.
TEST(JitRuntimeTest, KernelCallsRuntimeEntryPoints) {
  const std::string num_elements = MangledRuntimeName("Root_get_num_elements");
  const std::string lookup = MangledRuntimeName("Root_lookup_element");
  ASSERT_FALSE(num_elements.empty());
  ASSERT_FALSE(lookup.empty());
  const std::string ir = "declare i32 @" + num_elements + "(i8*, i8*)\n" +  //
                         "declare i8* @" + lookup + "(i8*, i8*, i32)\n" +
                         "define i32 @count(i8* %root) {\n"
                         "  %n = call i32 @" +
                         num_elements +
                         "(i8* null, i8* %root)\n"
                         "  ret i32 %n\n}\n"
                         "define i8* @root_cell(i8* %root) {\n"
                         "  %c = call i8* @" +
                         lookup +
                         "(i8* null, i8* %root, i32 0)\n"
                         "  ret i8* %c\n}\n";
  auto jit = CpuJit::Create(RuntimeBitcode(RuntimeArch::kX64));
  ASSERT_TRUE(jit.ok()) << jit.status();
  auto module = (*jit)->CompileIr(ir, {"count", "root_cell"});
  ASSERT_TRUE(module.ok()) << module.status();
  auto count = reinterpret_cast<int (*)(char*)>(*(*module)->Lookup("count"));
  auto root_cell = reinterpret_cast<char* (*)(char*)>(*(*module)->Lookup("root_cell"));
  char root[64] = {};
  EXPECT_EQ(count(root), 1);
  EXPECT_EQ(root_cell(root), root);
  EXPECT_THAT((*module)->optimized_ir(), Not(HasSubstr("call ")));
}

// Runtime functions that read memory (so the call cannot simply be folded away) are inlined
// into the kernel too, although the freestanding runtime carries "no-builtins" and the kernel
// did not: Pointer_is_active leaves no call behind and still reads the right slot.
TEST(JitRuntimeTest, FreestandingRuntimeIsInlinedIntoKernels) {
  const std::string is_active = MangledRuntimeName("Pointer_is_active");
  ASSERT_FALSE(is_active.empty());
  const std::string ir = "declare i1 @" + is_active + "(i8*, i8*, i32)\n" +
                         "define i1 @probe(i8* %meta, i8* %node, i32 %i) {\n"
                         "  %a = call i1 @" +
                         is_active +
                         "(i8* %meta, i8* %node, i32 %i)\n"
                         "  ret i1 %a\n}\n";
  auto jit = CpuJit::Create(RuntimeBitcode(RuntimeArch::kX64));
  ASSERT_TRUE(jit.ok()) << jit.status();
  auto module = (*jit)->CompileIr(ir, {"probe"});
  ASSERT_TRUE(module.ok()) << module.status();
  auto probe = reinterpret_cast<bool (*)(void*, void*, int)>(*(*module)->Lookup("probe"));
  // A StructMeta whose max_num_elements (the third 8-byte word) is 4: one 4-byte slot per cell;
  // slot 1 holds cell index 0 (stored as 0 + 1), slot 3 cell index 6, slots 0 and 2 are inactive
  // (so a probe of a neighbouring slot gives the wrong answer).
  alignas(8) int64_t meta[16] = {0, 0, 4};
  alignas(8) uint32_t node[4] = {0, 1, 0, 7};
  EXPECT_FALSE(probe(meta, node, 0));
  EXPECT_TRUE(probe(meta, node, 1));
  EXPECT_FALSE(probe(meta, node, 2));
  EXPECT_TRUE(probe(meta, node, 3));
  EXPECT_THAT((*module)->optimized_ir(), Not(HasSubstr("call ")));
}

// The CUDA module is refused by the CPU JIT with a clear message.
TEST(JitRuntimeTest, CudaRuntimeIsRefused) {
  auto jit = CpuJit::Create(RuntimeBitcode(RuntimeArch::kCuda));
  ASSERT_FALSE(jit.ok());
  EXPECT_THAT(std::string(jit.status().message()), HasSubstr("nvptx64"));
}

}  // namespace
}  // namespace cpu
}  // namespace runtime
}  // namespace accelmem

// Proves @llvm is wired: libLLVM parses bitcode that @llvm//:clang produced in a genrule.
#include <string>

#include "gtest/gtest.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MemoryBuffer.h"

namespace {

std::string g_bitcode_path;

// The genrule's bitcode parses, carries the host triple and defines the function.
TEST(LlvmBitcodeTest, ParsesGenruleOutput) {
  auto buffer = llvm::MemoryBuffer::getFile(g_bitcode_path);
  ASSERT_TRUE(static_cast<bool>(buffer)) << "cannot read " << g_bitcode_path;
  llvm::LLVMContext context;
  auto module = llvm::parseBitcodeFile((*buffer)->getMemBufferRef(), context);
  ASSERT_TRUE(static_cast<bool>(module)) << llvm::toString(module.takeError());
  EXPECT_EQ((*module)->getTargetTriple(), "x86_64-unknown-linux-gnu");
  llvm::Function* add = (*module)->getFunction("accelmem_tiny_add");
  ASSERT_NE(add, nullptr);
  EXPECT_FALSE(add->isDeclaration());
}

// Garbage is reported as an error, not a crash.
TEST(LlvmBitcodeTest, RejectsGarbage) {
  llvm::LLVMContext context;
  auto buffer = llvm::MemoryBuffer::getMemBuffer("not bitcode", "garbage", false);
  auto module = llvm::parseBitcodeFile(buffer->getMemBufferRef(), context);
  ASSERT_FALSE(static_cast<bool>(module));
  llvm::consumeError(module.takeError());
}

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  if (argc != 2) {
    fprintf(stderr, "usage: %s <bitcode file>\n", argv[0]);
    return 2;
  }
  g_bitcode_path = argv[1];
  return RUN_ALL_TESTS();
}

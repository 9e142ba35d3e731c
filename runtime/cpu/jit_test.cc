#include "runtime/cpu/jit.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/cpu/jit_test_runtime.h"

namespace accelmem {
namespace runtime {
namespace cpu {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string TestRuntime() {
  const auto* file = jit_test_runtime_find("tiny.bc");
  return std::string(reinterpret_cast<const char*>(file->data), file->size);
}

constexpr char kKernel[] = R"(
declare i32 @accelmem_tiny_add(i32, i32)

define i32 @add_one(i32 %x) {
  %r = call i32 @accelmem_tiny_add(i32 %x, i32 1)
  ret i32 %r
}
)";

// A kernel that calls a runtime function links with the runtime bitcode, runs, and returns
// the right value; with inlining, the optimized kernel no longer calls the runtime.
TEST(CpuJitTest, LinksRuntimeInlinesAndRuns) {
  auto jit = CpuJit::Create(TestRuntime());
  ASSERT_TRUE(jit.ok()) << jit.status();
  auto module = (*jit)->CompileIr(kKernel, {"add_one"});
  ASSERT_TRUE(module.ok()) << module.status();
  auto address = (*module)->Lookup("add_one");
  ASSERT_TRUE(address.ok()) << address.status();
  auto add_one = reinterpret_cast<int (*)(int)>(*address);
  EXPECT_EQ(add_one(41), 42);
  EXPECT_EQ(add_one(-1), 0);
  EXPECT_THAT((*module)->optimized_ir(), Not(HasSubstr("call i32 @accelmem_tiny_add")));
}

// Without inlining the runtime call stays a call and still works.
TEST(CpuJitTest, NoInlineKeepsRuntimeCall) {
  JitOptions options;
  options.inline_runtime = false;
  options.opt_level = 0;
  auto jit = CpuJit::Create(TestRuntime(), options);
  ASSERT_TRUE(jit.ok()) << jit.status();
  auto module = (*jit)->CompileIr(kKernel, {"add_one"});
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_THAT((*module)->optimized_ir(), HasSubstr("call i32 @accelmem_tiny_add"));
  auto add_one = reinterpret_cast<int (*)(int)>(*(*module)->Lookup("add_one"));
  EXPECT_EQ(add_one(1), 2);
}

// IR that does not parse is an InvalidArgument carrying LLVM's line:column diagnostic.
TEST(CpuJitTest, ParseErrorCarriesDiagnostic) {
  auto jit = CpuJit::Create(TestRuntime());
  ASSERT_TRUE(jit.ok());
  auto module = (*jit)->CompileIr("define i32 @f( {\n", {"f"});
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(module.status().message()),
              HasSubstr("kernel.ll:2:1: error: expected type"));
}

// A requested entry point that the kernel does not define is NotFound, naming it.
TEST(CpuJitTest, MissingEntryPointIsNotFound) {
  auto jit = CpuJit::Create(TestRuntime());
  ASSERT_TRUE(jit.ok());
  auto module = (*jit)->CompileIr(kKernel, {"add_two"});
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(module.status().message()), HasSubstr("'add_two'"));
}

// A module that fails the verifier is rejected before linking.
TEST(CpuJitTest, UnverifiableKernelIsRejected) {
  auto jit = CpuJit::Create(TestRuntime());
  ASSERT_TRUE(jit.ok());
  // The block has no terminator.
  auto module = (*jit)->CompileIr("define void @f() {\nentry:\n  %x = add i32 1, 2\n}\n", {"f"});
  ASSERT_FALSE(module.ok());
}

// Bytes that are not bitcode are refused when the JIT is created.
TEST(CpuJitTest, GarbageRuntimeIsRejected) {
  auto jit = CpuJit::Create("definitely not bitcode");
  ASSERT_FALSE(jit.ok());
  EXPECT_THAT(std::string(jit.status().message()), HasSubstr("runtime bitcode does not parse"));
}

// Lookup of a symbol that was internalized (not an entry point) fails cleanly.
TEST(CpuJitTest, LookupOfUnknownSymbolFails) {
  auto jit = CpuJit::Create(TestRuntime());
  ASSERT_TRUE(jit.ok());
  auto module = (*jit)->CompileIr(kKernel, {"add_one"});
  ASSERT_TRUE(module.ok());
  EXPECT_FALSE((*module)->Lookup("no_such_symbol").ok());
}

}  // namespace
}  // namespace cpu
}  // namespace runtime
}  // namespace accelmem

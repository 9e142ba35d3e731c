#include "runtime/cuda/ptx_codegen.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/cuda/kernel_ir_testing.h"
#include "runtime/cuda/ptxas_testing.h"

namespace accelmem {
namespace runtime {
namespace cuda {
namespace {

using ::testing::HasSubstr;

// A kernel becomes a PTX `.entry` for the requested SM.
TEST(PtxCodegenTest, KernelBecomesEntryForSm90) {
  auto ptx = CompileIrToPtx(kIotaKernelIr, {"iota"});
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  EXPECT_THAT(*ptx, HasSubstr(".target sm_90"));
  EXPECT_THAT(*ptx, HasSubstr(".version 7.8"));  // sm_90 needs PTX ISA 7.8
  EXPECT_THAT(*ptx, HasSubstr(".entry iota"));
  EXPECT_THAT(*ptx, HasSubstr("%tid.x"));
}

// Another SM can be chosen.
TEST(PtxCodegenTest, ChosenSm) {
  PtxOptions options;
  options.sm = "sm_80";
  auto ptx = CompileIrToPtx(kIotaKernelIr, {"iota"}, {}, options);
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  EXPECT_THAT(*ptx, HasSubstr(".target sm_80"));
}

// Naming a kernel the module does not define is NotFound.
TEST(PtxCodegenTest, MissingKernelIsNotFound) {
  auto ptx = CompileIrToPtx(kIotaKernelIr, {"nope"});
  ASSERT_FALSE(ptx.ok());
  EXPECT_EQ(ptx.status().code(), absl::StatusCode::kNotFound);
}

// An architecture LLVM does not know is refused instead of silently compiled for a generic one.
TEST(PtxCodegenTest, UnknownSmIsInvalidArgument) {
  PtxOptions options;
  options.sm = "sm_1";
  auto ptx = CompileIrToPtx(kIotaKernelIr, {"iota"}, {}, options);
  ASSERT_FALSE(ptx.ok());
  EXPECT_EQ(ptx.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(ptx.status().message()), HasSubstr("sm_1"));
}

// Garbage runtime bitcode is reported, not linked.
TEST(PtxCodegenTest, GarbageRuntimeRejected) {
  auto ptx = CompileIrToPtx(kIotaKernelIr, {"iota"}, "garbage");
  ASSERT_FALSE(ptx.ok());
  EXPECT_THAT(std::string(ptx.status().message()), HasSubstr("does not parse"));
}

// The generated PTX assembles with the toolkit's ptxas for sm_90.
TEST(PtxCodegenTest, PtxasAssemblesForSm90) {
  if (TestPtxas().empty()) GTEST_SKIP() << "no CUDA toolkit configured: ptxas not given";
  auto ptx = CompileIrToPtx(kIotaKernelIr, {"iota"});
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  absl::Status assembled = AssembleWithPtxas(*ptx, "iota");
  EXPECT_TRUE(assembled.ok()) << assembled << "\n" << *ptx;
}

}  // namespace
}  // namespace cuda
}  // namespace runtime
}  // namespace accelmem

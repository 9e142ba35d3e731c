#include "backends/cuda/ptx_codegen.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "backends/cuda/testing_kernels.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace accelmem {
namespace backends {
namespace cuda {
namespace {

using ::testing::HasSubstr;

// Set by main() when the test is given ptxas (the toolkit is configured).
std::string g_ptxas;

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
  if (g_ptxas.empty()) GTEST_SKIP() << "no CUDA toolkit configured: ptxas not given";
  auto ptx = CompileIrToPtx(kIotaKernelIr, {"iota"});
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string dir = tmp ? tmp : "/tmp";
  std::string ptx_path = dir + "/iota.ptx", cubin = dir + "/iota.cubin";
  std::ofstream(ptx_path) << *ptx;
  std::string command = g_ptxas + " -arch=sm_90 -o " + cubin + " " + ptx_path;
  ASSERT_EQ(std::system(command.c_str()), 0) << command << "\n" << *ptx;
  std::ifstream in(cubin, std::ios::binary | std::ios::ate);
  EXPECT_GT(static_cast<long>(in.tellg()), 0);
}

}  // namespace
}  // namespace cuda
}  // namespace backends
}  // namespace accelmem

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  if (argc > 1) accelmem::backends::cuda::g_ptxas = argv[1];
  return RUN_ALL_TESTS();
}

// The CUDA GC without a GPU: its kernels compile to PTX that ptxas assembles for sm_90, and
// running it without a device fails with a clear status.
#include "runtime/cuda/gc_cuda.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/cuda/bitcode_testing.h"
#include "runtime/cuda/gc_cuda_kernels_bitcode.h"
#include "runtime/cuda/ptxas_testing.h"

namespace accelmem {
namespace runtime {
namespace cuda {
namespace {

// Every GC phase and device NodeManager kernel is emitted as a PTX entry for the requested SM.
TEST(GcCudaTest, PtxHasAnEntryPerKernel) {
  auto ptx = CudaGcPtx("sm_90");
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  EXPECT_NE(ptx->find(".target sm_90"), std::string::npos);
  for (const std::string& name : CudaGcKernelNames()) {
    EXPECT_NE(ptx->find(".entry " + name), std::string::npos) << name;
  }
  // Phase 2's block lanes meet at bar.sync; phase 0 of a grid marks the bitmap atomically.
  EXPECT_NE(ptx->find("bar.sync"), std::string::npos);
  EXPECT_NE(ptx->find("atom.or.b64"), std::string::npos);
}

// A collection launches the batch kernels, one per step of ACCELMEM_GC_BATCH_STEPS in its order,
// first in the entry-point list; one manager is a batch of one, so no per-manager GC kernel is
// left beside them.
TEST(GcCudaTest, StepsAreTheBatchKernelsInLaunchOrder) {
  const std::vector<std::string> expected = {
      "accelmem_cuda_gc_batch_prepare", "accelmem_cuda_gc_batch_phase0",
      "accelmem_cuda_gc_batch_phase1", "accelmem_cuda_gc_batch_phase2"};
  EXPECT_EQ(CudaGc::StepKernelNames(), expected);
  const std::vector<std::string>& names = CudaGcKernelNames();
  ASSERT_GE(names.size(), expected.size());
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.begin() + expected.size()), expected);
  for (const std::string& name : names) {
    if (name.rfind("accelmem_cuda_gc_", 0) == 0) {
      EXPECT_EQ(name.rfind("accelmem_cuda_gc_batch_", 0), 0u) << name << " is a per-manager kernel";
    }
  }
}

// The PTX of the GC kernels (with the runtime linked in) assembles with ptxas for sm_90.
TEST(GcCudaTest, PtxasAssemblesTheGcKernelsForSm90) {
  if (TestPtxas().empty()) {
    GTEST_SKIP() << "no CUDA toolkit configured: ptxas not given";
  }
  auto ptx = CudaGcPtx("sm_90");
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  absl::Status assembled = AssembleWithPtxas(*ptx, "gc_cuda");
  EXPECT_TRUE(assembled.ok()) << assembled;
}

// Each GC and device NodeManager kernel has the fences, atomics and volatile accesses of its row
// in runtime/cuda/testdata/kernel_budgets.txt (so a change that adds a fence fails here, without a
// GPU), and with ptxas at most its registers and exactly its stack and spills; the collection's
// phase kernels spill nothing.
TEST(GcCudaTest, PtxBudgetsPerEntry) {
  auto ptx = CudaGcPtx("sm_90");
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  bool ptxas_checked = false;
  const std::string problems =
      CheckKernelBudgets(*ptx, CudaGcKernelNames(), "gc_cuda_budgets", &ptxas_checked);
  EXPECT_EQ(problems, "");
  auto table = ParseKernelBudgets(KernelBudgetTable());
  ASSERT_TRUE(table.ok()) << table.status();
  for (const char* phase : {"accelmem_cuda_gc_batch_phase0", "accelmem_cuda_gc_batch_phase1",
                            "accelmem_cuda_gc_batch_phase2"}) {
    ASSERT_EQ(table->count(phase), 1u) << phase;
    EXPECT_EQ(table->at(phase).spill_bytes, 0) << phase << " spills";
  }
  // Phase 2 has no stack frame either. Phases 0 and 1 do (24 bytes each): they keep real calls
  // (the phase function, and on their slow paths error reports and list-chunk allocation), whose
  // saved registers take the frame; inlining the phase into its kernel (flatten) left it as is.
  EXPECT_EQ(table->at("accelmem_cuda_gc_batch_phase2").stack_bytes, 0);
  if (!ptxas_checked) GTEST_SKIP() << "no CUDA toolkit configured: only the PTX counts checked";
}

// The counter behind the budget table: an entry is charged its own instructions and those of every
// function it reaches (a call names its callee on a line of its own), each function once, and a
// predicate guard does not hide an instruction.
TEST(GcCudaTest, PtxOrderingCountsFollowCalls) {
  const std::string ptx = R"(
.func _Z4leafv
;
.func  (.param .b64 func_retval0) _Z4leafv(
)
{
	membar.gl;
	@%p1 atom.global.or.b64 	%rd1, [%rd2], %rd3;
	ld.volatile.u32 	%r1, [%rd4];
	ret;
}
.visible .entry accelmem_a(
	.param .u64 accelmem_a_param_0
)
{
	ld.acquire.gpu.b64 	%rd1, [%rd2];
	call.uni (retval0),
	_Z4leafv,
	(
	);
	call.uni (retval0),
	_Z4leafv,
	(
	);
	st.release.gpu.b32 	[%rd1], %r1;
	red.global.add.u32 	[%rd1], 1;
	ret;
}
.visible .entry accelmem_b(
)
{
	st.volatile.u32 	[%rd1], %r1;
	fence.sc.gpu;
	ret;
}
)";
  const auto counts = CountPtxOrdering(ptx);
  ASSERT_EQ(counts.size(), 2u);
  const PtxOrderingCounts& a = counts.at("accelmem_a");
  EXPECT_EQ(a.fence, 1);
  EXPECT_EQ(a.atom, 1);
  EXPECT_EQ(a.red, 1);
  EXPECT_EQ(a.ld_volatile, 1);
  EXPECT_EQ(a.ld_acquire, 1);
  EXPECT_EQ(a.st_release, 1);
  EXPECT_EQ(a.st_volatile, 0);
  const PtxOrderingCounts& b = counts.at("accelmem_b");
  EXPECT_EQ(b.fence, 1);
  EXPECT_EQ(b.st_volatile, 1);
  EXPECT_EQ(b.atom, 0);
}

// An unknown SM is refused by the code generator instead of producing bad PTX.
TEST(GcCudaTest, UnknownSmIsAnError) {
  auto ptx = CudaGcPtx("sm_1");
  ASSERT_FALSE(ptx.ok());
  EXPECT_EQ(ptx.status().code(), absl::StatusCode::kInvalidArgument);
}

// The GC kernels' bitcode is compiled with every function convergent: their calls of the phases
// (which reach bar.sync and the runtime's warp primitives in runtime_cuda.bc) are convergent
// calls in convergent functions.
TEST(GcCudaTest, BarriersAreConvergent) {
  const gc_cuda_kernels_bitcode_file* file = gc_cuda_kernels_bitcode_find("gc_cuda_kernels.bc");
  ASSERT_NE(file, nullptr);
  auto report =
      CheckConvergence(absl::string_view(reinterpret_cast<const char*>(file->data), file->size));
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_GT(report->convergent_calls, 0) << "the GC kernels call the phases";
  for (const std::string& error : report->errors) ADD_FAILURE() << error;
}

// A pool from PoolBytesFor holds every chunk with its worst-case alignment padding: 20000 cells
// of 4 KiB need two 64 MiB chunks, each aligned to 64 MiB, plus tables; chunks of 4096 cells are
// 16 MiB. Cells beyond 128 MiB chunks halve the chunk as NodeManager::init does.
TEST(GcCudaTest, PoolBytesForCoversAlignedChunks) {
  const uint64_t mib = uint64_t{1} << 20;
  EXPECT_GE(CudaNodeManager::PoolBytesFor(4096, 20000), 2 * 64 * mib + 64 * mib + 64 * mib);
  EXPECT_GE(CudaNodeManager::PoolBytesFor(4096, 5000, 4096), 2 * 16 * mib + 16 * mib + 64 * mib);
  EXPECT_LT(CudaNodeManager::PoolBytesFor(4096, 5000, 4096), 256 * mib);
  // 16384 cells of 64 KiB would be 1 GiB chunks: halved to 2048 cells (128 MiB) per chunk.
  EXPECT_LT(CudaNodeManager::PoolBytesFor(65536, 2048), 2 * 128 * mib + 128 * mib);
  EXPECT_GT(CudaNodeManager::PoolBytesFor(64, 1), 64 * mib);
}

// Without a driver the collector cannot be created; the status says why.
TEST(GcCudaTest, CreateNeedsADriver) {
  auto gc = CudaGc::Create(nullptr);
  ASSERT_FALSE(gc.ok());
  EXPECT_EQ(gc.status().code(), absl::StatusCode::kInvalidArgument);
  auto driver = CudaDriver::Open();
  if (driver.ok()) GTEST_SKIP() << "a CUDA device is visible; see gc_cuda_gpu_test";
  EXPECT_EQ(driver.status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace cuda
}  // namespace runtime
}  // namespace accelmem

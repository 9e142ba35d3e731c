// jit_bench: JIT kernels over the sparse runtime against the native host API on the same tree.
//
//   * BM_Jit_CompileWriteSumKernels: cold compile time of a write + sum kernel module (kernel
//     builder, runtime linking, -O3, ORC codegen); no cache of compiled modules exists yet.
//   * BM_Write_{JitKernel,HostApi}: writing 2^16 cells of pointer(256).dense(256) f32, one cell
//     per loop index, activating the path, by a JIT range-for kernel and by SparseRuntime::Write.
//   * BM_Sum_{JitKernel,HostStructFor}: summing the same cells.
#include <cstdint>
#include <cstdlib>
#include <memory>

#include "backends/cpu/jit.h"
#include "benchmark/benchmark.h"
#include "codegen/kernel_builder.h"
#include "codegen/kernel_context.h"
#include "sparse_runtime/runtime_bitcode.h"
#include "sparse_runtime/snode_tree.h"
#include "sparse_runtime/sparse_runtime.h"

namespace {

using accelmem::backends::cpu::CpuJit;
using accelmem::backends::cpu::JitModule;
using accelmem::codegen::BoundKernelContext;
using accelmem::codegen::KernelBuilder;
using accelmem::codegen::RangeFn;
using accelmem::codegen::RangeSumFn;
using accelmem::sparse_runtime::Axis;
using accelmem::sparse_runtime::RuntimeArch;
using accelmem::sparse_runtime::RuntimeBitcode;
using accelmem::sparse_runtime::SNode;
using accelmem::sparse_runtime::SNodeTree;
using accelmem::sparse_runtime::SparseRuntime;

constexpr int64_t kCells = 1 << 16;

template <typename T>
T Check(absl::StatusOr<T> value) {
  if (!value.ok()) {
    std::fprintf(stderr, "jit_bench: %s\n", value.status().ToString().c_str());
    std::abort();
  }
  return std::move(value).value();
}

void Check(const absl::Status& status) {
  if (!status.ok()) {
    std::fprintf(stderr, "jit_bench: %s\n", status.ToString().c_str());
    std::abort();
  }
}

struct Fixture {
  Fixture() {
    tree.root().pointer(Axis(0), 256).dense(Axis(0), 256).place<float>("x");
    Check(tree.Finalize());
    rt = Check(SparseRuntime::Create(tree));
    x = tree.FindPlace("x");
    jit = Check(CpuJit::Create(RuntimeBitcode(RuntimeArch::kX64)));
    ctx = std::make_unique<BoundKernelContext>(rt.get());
  }
  std::unique_ptr<JitModule> Compile() {
    auto builder = Check(KernelBuilder::Create(RuntimeBitcode(RuntimeArch::kX64), tree));
    Check(builder->AddRangeWrite("write", *x, {{1, 0, 0}}, 1.0, 0.5));
    Check(builder->AddRangeSum("sum", *x, {{1, 0, 0}}));
    auto kernel = builder->Finish();
    return Check(
        jit->Compile(std::move(kernel.module), std::move(kernel.context), kernel.entry_points));
  }
  SNodeTree tree;
  std::unique_ptr<SparseRuntime> rt;
  const SNode* x = nullptr;
  std::unique_ptr<CpuJit> jit;
  std::unique_ptr<BoundKernelContext> ctx;
};

void BM_Jit_CompileWriteSumKernels(benchmark::State& state) {
  Fixture f;
  for (auto _ : state) benchmark::DoNotOptimize(f.Compile());
}
BENCHMARK(BM_Jit_CompileWriteSumKernels)->Unit(benchmark::kMillisecond);

void BM_Write_JitKernel(benchmark::State& state) {
  Fixture f;
  auto module = f.Compile();
  auto write = reinterpret_cast<RangeFn>(Check(module->Lookup("write")));
  for (auto _ : state) benchmark::DoNotOptimize(write(f.ctx->get(), 0, kCells));
  state.SetItemsProcessed(state.iterations() * kCells);
}
BENCHMARK(BM_Write_JitKernel)->Unit(benchmark::kMicrosecond);

void BM_Write_HostApi(benchmark::State& state) {
  Fixture f;
  for (auto _ : state) {
    for (int32_t i = 0; i < kCells; ++i) {
      Check(f.rt->Write<float>(*f.x, {i}, static_cast<float>(i) + 0.5f));
    }
  }
  state.SetItemsProcessed(state.iterations() * kCells);
}
BENCHMARK(BM_Write_HostApi)->Unit(benchmark::kMicrosecond);

void BM_Sum_JitKernel(benchmark::State& state) {
  Fixture f;
  auto module = f.Compile();
  auto write = reinterpret_cast<RangeFn>(Check(module->Lookup("write")));
  auto sum = reinterpret_cast<RangeSumFn>(Check(module->Lookup("sum")));
  write(f.ctx->get(), 0, kCells);
  for (auto _ : state) benchmark::DoNotOptimize(sum(f.ctx->get(), 0, kCells));
  state.SetItemsProcessed(state.iterations() * kCells);
}
BENCHMARK(BM_Sum_JitKernel)->Unit(benchmark::kMicrosecond);

void BM_Sum_HostStructFor(benchmark::State& state) {
  Fixture f;
  for (int32_t i = 0; i < kCells; ++i) Check(f.rt->Write<float>(*f.x, {i}, 1.0f));
  for (auto _ : state) {
    double total = 0;
    Check(f.rt->StructFor(*f.x, [&total](absl::Span<const int32_t>, void* value) {
      total += *static_cast<float*>(value);
    }));
    benchmark::DoNotOptimize(total);
  }
  state.SetItemsProcessed(state.iterations() * kCells);
}
BENCHMARK(BM_Sum_HostStructFor)->Unit(benchmark::kMicrosecond);

}  // namespace

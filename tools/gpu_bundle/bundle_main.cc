// main() of the GPU bundle's one binary (//tools/gpu_bundle:accelmem_gpu), which holds every
// GPU test, the CPU-side CUDA tests and gc_bench's CUDA rows:
//   accelmem_gpu [--gtest_filter=...] [PTXAS]   the tests (PTXAS: ptxas for the PTX checks)
//   accelmem_gpu bench [--benchmark_...]        the benchmark
// One binary instead of one per test keeps the statically linked LLVM in the archive once.
#include <cstring>

#include "benchmark/benchmark.h"
#include "gtest/gtest.h"
#include "runtime/cuda/ptxas_testing.h"

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "bench") == 0) {
    argv[1] = argv[0];
    ++argv;
    --argc;
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
  }
  testing::InitGoogleTest(&argc, argv);
  accelmem::runtime::cuda::SetPtxasFromArgs(argc, argv);
  return RUN_ALL_TESTS();
}

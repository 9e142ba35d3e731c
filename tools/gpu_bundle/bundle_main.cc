// main() of the GPU bundle's one binary (//tools/gpu_bundle:accelmem_gpu), which holds every
// GPU test, the CPU-side CUDA tests and gc_bench's CUDA rows:
//   accelmem_gpu [--gtest_filter=...] [PTXAS]   the tests (PTXAS: ptxas for the PTX checks)
//   accelmem_gpu bench [--benchmark_...]        the benchmark
//   accelmem_gpu cpu-timings [CELLS [THREADS...]] the CPU GC, allocation and struct-for rows
// One binary instead of one per test keeps the statically linked LLVM in the archive once.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "benchmark/benchmark.h"
#include "gtest/gtest.h"
#include "runtime/cuda/ptxas_testing.h"
#include "tools/gpu_bundle/cpu_timings.h"

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
  if (argc > 1 && std::strcmp(argv[1], "cpu-timings") == 0) {
    accelmem::tools::CpuTimingOptions options;
    if (argc > 2) options.cells = std::atoll(argv[2]);
    if (argc > 3) {
      options.threads.clear();
      for (int k = 3; k < argc; ++k) options.threads.push_back(std::atoi(argv[k]));
    }
    int errors = 0;
    for (const std::string& row : accelmem::tools::RunCpuTimings(options)) {
      std::printf("%s\n", row.c_str());
      std::fflush(stdout);
      errors += row.rfind("error:", 0) == 0 ? 1 : 0;
    }
    return errors == 0 ? 0 : 1;
  }
  testing::InitGoogleTest(&argc, argv);
  accelmem::runtime::cuda::SetPtxasFromArgs(argc, argv);
  return RUN_ALL_TESTS();
}

// Proves google-benchmark is wired (a `benchmark`-tagged binary): memset bandwidth.
#include <cstring>
#include <vector>

#include "benchmark/benchmark.h"

namespace {

void BM_Memset(benchmark::State& state) {
  std::vector<char> buffer(state.range(0));
  for (auto _ : state) {
    std::memset(buffer.data(), 0, buffer.size());
    benchmark::DoNotOptimize(buffer.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Memset)->Arg(4 << 10)->Arg(1 << 20)->Arg(64 << 20);

}  // namespace

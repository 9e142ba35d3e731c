// Parsing and printing the tile IR text (//ir:parser, //ir:printer) at 1k, 10k and 100k
// statements. The bar: parse time grows linearly and 100k statements parse in well under a
// second. Baseline: one pass over the bytes counting lines (the cost floor of reading the text).
//
//   ./bazelw run //benchmarks:ir_parse_bench
#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "ir/parser.h"
#include "ir/printer.h"

namespace {

// A function of about `n` statements: chains of tile ops with a carried loop every 50
// statements (3 statements inside), a mix of loads, elementwise ops, scalar ops and stores.
std::string MakeProgram(int n) {
  constexpr char kTile[] = "Tile[[64, 64], FP32, Vec]";
  std::string s =
      "@function(type=AIV)\n"
      "def big(x: Tensor[[64, 64], FP32], out: Tensor[[64, 64], FP32]) -> Tensor[[64, 64], "
      "FP32]:\n";
  absl::StrAppend(&s, "    t0: ", kTile, " = tile.load(x, [0, 0], [64, 64])\n");
  int count = 1;
  int last = 0;
  int id = 1;
  while (count < n - 2) {
    if (id % 50 == 0) {
      absl::StrAppend(&s, "    for i", id, ", (c", id, ",) in range(0, 4, 1, init=(t", last,
                      ",)) -> (t", id, ": ", kTile, ",):\n");
      absl::StrAppend(&s, "        u", id, ": ", kTile, " = tile.exp(c", id, ")\n");
      absl::StrAppend(&s, "        v", id, ": ", kTile, " = tile.add(u", id, ", t", last, ")\n");
      absl::StrAppend(&s, "        yield (v", id, ",)\n");
      count += 4;
    } else {
      switch (id % 4) {
        case 0:
          absl::StrAppend(&s, "    t", id, ": ", kTile, " = tile.add(t", last, ", t0)\n");
          break;
        case 1:
          absl::StrAppend(&s, "    t", id, ": ", kTile, " = tile.mul(t", last, ", t", last, ")\n");
          break;
        case 2:
          absl::StrAppend(&s, "    t", id, ": ", kTile, " = tile.muls(t", last, ", 0.5)\n");
          break;
        case 3:
          absl::StrAppend(&s, "    t", id, ": ", kTile, " = tile.exp(t", last, ")\n");
          break;
      }
      ++count;
    }
    last = id++;
  }
  absl::StrAppend(&s, "    r: Tensor[[64, 64], FP32] = tile.store(t", last, ", [0, 0], out)\n");
  absl::StrAppend(&s, "    return r\n");
  return s;
}

void BM_ScanBytes_Baseline(benchmark::State& state) {
  const std::string text = MakeProgram(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    benchmark::DoNotOptimize(std::count(text.begin(), text.end(), '\n'));
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(text.size()));
}
BENCHMARK(BM_ScanBytes_Baseline)->Arg(1000)->Arg(10000)->Arg(100000);

void BM_Parse_Statements(benchmark::State& state) {
  const std::string text = MakeProgram(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    auto p = accelmem::ir::ParseProgram(text, "bench.tile");
    if (!p.ok()) {
      state.SkipWithError(std::string(p.status().message()).c_str());
      break;
    }
    benchmark::DoNotOptimize(p);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(text.size()));
}
BENCHMARK(BM_Parse_Statements)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

void BM_ParseAndVerify_Statements(benchmark::State& state) {
  const std::string text = MakeProgram(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    auto p = accelmem::ir::ParseAndVerifyProgram(text, "bench.tile");
    if (!p.ok()) {
      state.SkipWithError(std::string(p.status().message()).c_str());
      break;
    }
    benchmark::DoNotOptimize(p);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_ParseAndVerify_Statements)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond);

void BM_Print_Statements(benchmark::State& state) {
  auto p = accelmem::ir::ParseProgram(MakeProgram(static_cast<int>(state.range(0))), "bench.tile");
  if (!p.ok()) {
    state.SkipWithError(std::string(p.status().message()).c_str());
    return;
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(accelmem::ir::PrintProgram(**p));
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Print_Statements)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

}  // namespace

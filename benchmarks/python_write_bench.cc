// python_write_bench: the C++ side of the Python binding's batch-write benchmark.
//
// One batch writes 10^6 f32 values through the SparseRuntime host API, one Write per
// coordinate, reading the coordinates from an [N, 2] int32 array as the Python binding does.
// benchmarks/python_write_bench.py runs the same batch through accelmem.sparse.Runtime.write and
// divides the two times (the bar: Python within 2x of C++). Tree: a 1024 x 1024 domain of
// 64 x 64 pointer blocks of 16 x 16 dense cells; coordinates visit cell k = i * 2654435761 mod
// 2^20 (a permutation), so both sides write the same cells in the same order. The cells are
// active (written once before timing), as in a steady-state simulation step.
#include <cstdint>
#include <memory>
#include <vector>

#include "benchmark/benchmark.h"
#include "runtime/sparse_runtime.h"
#include "sparse_runtime/snode_tree.h"

namespace {

using accelmem::runtime::SparseRuntime;
using accelmem::sparse_runtime::Axis;
using accelmem::sparse_runtime::DataType;
using accelmem::sparse_runtime::SNode;
using accelmem::sparse_runtime::SNodeTree;

constexpr int64_t kWrites = 1000000;

std::vector<int32_t> Coords() {
  std::vector<int32_t> coords(2 * kWrites);
  for (int64_t i = 0; i < kWrites; ++i) {
    uint32_t k = static_cast<uint32_t>(static_cast<uint64_t>(i) * 2654435761u) & ((1u << 20) - 1);
    coords[2 * i] = static_cast<int32_t>(k >> 10);
    coords[2 * i + 1] = static_cast<int32_t>(k & 1023);
  }
  return coords;
}

// Baseline: the host API called once per coordinate (what the binding's batch does in C++).
void BM_Write_HostApi(benchmark::State& state) {
  SNodeTree tree;
  tree.root()
      .pointer({Axis(0), Axis(1)}, {64, 64})
      .dense({Axis(0), Axis(1)}, {16, 16})
      .place<float>("x");
  if (!tree.Finalize().ok()) state.SkipWithError("finalize");
  std::unique_ptr<SparseRuntime> rt = SparseRuntime::Create(tree).value();
  const SNode& x = *tree.FindPlace("x");
  std::vector<int32_t> coords = Coords();
  std::vector<float> values(kWrites);
  for (int64_t i = 0; i < kWrites; ++i) values[i] = static_cast<float>(i);
  auto batch = [&] {
    for (int64_t i = 0; i < kWrites; ++i) {
      absl::Status s = rt->WriteRaw(x, DataType::kF32, {&coords[2 * i], 2}, &values[i]);
      if (!s.ok()) state.SkipWithError("write failed");
    }
  };
  batch();  // activate every block first
  for (auto _ : state) batch();
  state.SetItemsProcessed(state.iterations() * kWrites);
}
BENCHMARK(BM_Write_HostApi)->Unit(benchmark::kMillisecond);

}  // namespace

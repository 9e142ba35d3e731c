// upstream_check.sh's driver: accelmem's NodeManager (compiled from this checkout's sources) and
// upstream's (upstream_side.cc), the same rounds interleaved on one CPU. Per round, for each:
// allocate 2^20 cells of 64 B from a free list that a GC just refilled (the cells recycled in one
// random order), timed per cell. Prints the median of each and their ratio.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "sparse_runtime/device/node_manager.h"
#include "sparse_runtime/host_memory_pool.h"

extern "C" {
void* upstream_nm_create(int cell_bytes, int chunk);
double upstream_nm_allocate(void* nm, int n, void** out);
void upstream_nm_recycle(void* nm, int n, void* const* cells, const int* order);
void upstream_nm_gc(void* nm);
}

namespace {

using accelmem::sparse_runtime::HostMemoryPool;
using accelmem::sparse_runtime::NodeManager;
using accelmem::sparse_runtime::RuntimeMemory;

// Kept out of line, like the upstream side's loop: the same call structure on both sides.
__attribute__((noinline)) double OursAllocate(NodeManager* nm, int n, void** out) {
  const auto start = std::chrono::steady_clock::now();
  for (int k = 0; k < n; ++k) out[k] = nm->allocate();
  const auto end = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(end - start).count();
}

double Median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 41;
  constexpr int kCells = 1 << 20;
  constexpr int kCellBytes = 64;
  constexpr int kChunk = 16384;  // upstream's runtime passes 16 Ki cells a chunk
  RuntimeMemory memory{};
  HostMemoryPool pool;
  pool.Attach(&memory, /*reservations=*/true);
  NodeManager ours{};
  if (!ours.init(&memory, kCellBytes, 8, kChunk)) return 1;
  void* upstream = upstream_nm_create(kCellBytes, kChunk);
  std::vector<void*> a(kCells), b(kCells);
  std::vector<int> order(kCells);
  for (int k = 0; k < kCells; ++k) order[k] = k;
  std::mt19937 rng(11);
  std::shuffle(order.begin(), order.end(), rng);
  OursAllocate(&ours, kCells, a.data());
  upstream_nm_allocate(upstream, kCells, b.data());
  std::vector<double> ours_ns, upstream_ns;
  for (int r = 0; r < rounds; ++r) {
    for (int k = 0; k < kCells; ++k) ours.recycle(static_cast<uint8_t*>(a[order[k]]));
    upstream_nm_recycle(upstream, kCells, b.data(), order.data());
    ours.gc_serial();
    upstream_nm_gc(upstream);
    // Alternate which side goes first.
    if (r % 2 == 0) {
      ours_ns.push_back(1e9 * OursAllocate(&ours, kCells, a.data()) / kCells);
      upstream_ns.push_back(1e9 * upstream_nm_allocate(upstream, kCells, b.data()) / kCells);
    } else {
      upstream_ns.push_back(1e9 * upstream_nm_allocate(upstream, kCells, b.data()) / kCells);
      ours_ns.push_back(1e9 * OursAllocate(&ours, kCells, a.data()) / kCells);
    }
  }
  const double o = Median(ours_ns), u = Median(upstream_ns);
  std::printf(
      "allocate after GC, 2^20 cells of 64 B, %d rounds: accelmem %.2f ns, upstream %.2f ns,"
      " upstream / accelmem = %.2f\n",
      rounds, o, u, u / o);
  return u / o >= 1.0 ? 0 : 2;
}

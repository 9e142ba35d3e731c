// File: gc/gc_testing.h
//
// Test helpers for the GC: a NodeManager on a host memory pool, deterministic cell patterns,
// randomized allocate/recycle histories, and CheckCollected, which verifies every GC invariant
// against a snapshot taken before the collection (free multiset, zeroed recycled cells, live cells
// untouched byte for byte, cursor and list sizes, bitmap back to all-zero).
#ifndef ACCELMEM_GC_GC_TESTING_H_
#define ACCELMEM_GC_GC_TESTING_H_

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "gc/device/gc_scratch.h"
#include "gtest/gtest.h"
#include "sparse_runtime/device/node_manager.h"
#include "sparse_runtime/device/runtime_memory.h"
#include "sparse_runtime/host_memory_pool.h"

namespace accelmem {
namespace gc {
namespace testing {

// A NodeManager with its own pool and runtime memory, plus a GcScratch.
struct TestHeap {
  TestHeap(uint64_t node_size, int32_t chunk_num_elements);
  sparse_runtime::HostMemoryPool pool;
  sparse_runtime::RuntimeMemory memory{};
  NodeManager nm{};
  GcScratch scratch{};
  // Live cells (allocated, not recycled), in allocation order.
  std::vector<int32_t> live;
  // Pattern generation of the next filled cell (two heaps given the same history match).
  uint32_t generation = 1;
};

// Writes the nonzero pattern of (index, generation) to every byte of cell `index`.
void FillCell(NodeManager* nm, int32_t index, uint32_t generation);
// The pattern byte k of cell `index` must have.
uint8_t PatternByte(int32_t index, uint32_t generation, uint64_t k);

// Free-list entries in [0, size) and the unused ones [free_list_used, size).
std::vector<int32_t> FreeList(const NodeManager& nm);
std::vector<int32_t> UnusedFree(const NodeManager& nm);
std::vector<int32_t> Recycled(const NodeManager& nm);

// One randomized round: allocates `allocs` cells (filling each with a pattern), then recycles a
// random `recycle_fraction` of the live cells (in random order, keeping their dirty contents).
// With `lifo`, recycles the most recently allocated cells in reverse order instead.
void RandomRound(TestHeap* heap, std::mt19937_64* rng, int allocs, double recycle_fraction,
                 bool lifo = false);

// What must hold after a GC; taken just before it.
struct Snapshot {
  std::vector<int32_t> expected_free;  // sorted multiset: unused free entries + distinct recycled
  std::vector<int32_t> recycled;       // distinct
  std::vector<std::vector<uint8_t>> cells;  // every cell's bytes before the GC
  int32_t data_size = 0;
  uint32_t gc_epoch = 0;
};
Snapshot TakeSnapshot(const TestHeap& heap);
// EXPECTs every invariant; returns false if any failed.
bool CheckCollected(const TestHeap& heap, const Snapshot& before);

// Copies of every cell's bytes (for comparing two heaps).
std::vector<std::vector<uint8_t>> AllCells(const NodeManager& nm);

}  // namespace testing
}  // namespace gc
}  // namespace accelmem

#endif  // ACCELMEM_GC_GC_TESTING_H_

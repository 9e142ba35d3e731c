#include "sparse_runtime/device/node_manager.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "sparse_runtime/host_memory_pool.h"

namespace accelmem {
namespace sparse_runtime {
namespace {

// Every test runs on both data-list layouts: contiguous (the pool's reservations, the CPU
// default) and chunked with the granule table (the fallback).
class NodeManagerTest : public ::testing::TestWithParam<bool> {
 protected:
  NodeManagerTest() { pool_.Attach(&memory_, /*reservations=*/GetParam()); }

  // The free list entries not handed out yet, in order.
  static std::vector<int> FreeEntries(const NodeManager& nm) {
    std::vector<int> out;
    for (int k = nm.free_list_used; k < nm.free_list.size(); ++k) {
      out.push_back(nm.free_list.get<int32_t>(k));
    }
    return out;
  }

  HostMemoryPool pool_;
  RuntimeMemory memory_;
  NodeManager nm_{};
};

// A GC whose free-list refill cannot get memory records the error and keeps the recycled list
// for a later GC; the free list's size must not cover the refused entries (never written: no
// chunk, or stale indices of an earlier cycle), or allocation would read them.
HostAllocateFn real_allocate = nullptr;
void* RefuseAllocation(void*, u64, u64) { return nullptr; }

TEST_P(NodeManagerTest, GcWithoutMemoryForTheFreeListKeepsTheRecycledList) {
  ASSERT_TRUE(nm_.init(&memory_, 16, 8, /*chunk_num_elements=*/1 << 14));
  std::vector<int32_t> cells(5000);
  ASSERT_TRUE(nm_.allocate_indices(cells.data(), 5000));
  for (int32_t i : cells) std::memset(nm_.get_cell(i), 0x7e, nm_.element_size);
  nm_.recycle_indices(cells.data(), 5000);  // the free list has no chunk yet
  real_allocate = memory_.host_allocate;
  memory_.host_allocate = RefuseAllocation;
  nm_.gc_serial();
  memory_.host_allocate = real_allocate;
  EXPECT_EQ(runtime_error_code(&memory_), kErrorOutOfMemory);
  EXPECT_EQ(nm_.free_list.size(), 0);
  EXPECT_EQ(nm_.num_free(), 0);
  EXPECT_EQ(nm_.num_recycled(), 5000);
  EXPECT_EQ(nm_.allocate_index(), 5000);  // a fresh cell, not an unwritten free-list entry
  memory_.error_code = kRuntimeOk;
  nm_.gc_serial();  // memory is back: the kept recycled list is collected
  EXPECT_EQ(runtime_error_code(&memory_), kRuntimeOk);
  EXPECT_EQ(FreeEntries(nm_), std::vector<int>(cells.begin(), cells.end()));
  for (int32_t i : cells) EXPECT_EQ(nm_.get_cell(i)[0], 0) << i;
}

// Cell stride is rounded up to at least 8 bytes and to the cell alignment (upstream misaligns
// dynamic chunks of 28 bytes, #6316).
TEST_P(NodeManagerTest, ElementSizeIsRoundedToEightAndAlignment) {
  struct Case {
    uint64_t node_size, alignment, element_size;
  };
  for (Case c : {Case{4, 4, 8}, Case{12, 4, 16}, Case{28, 8, 32}, Case{8, 8, 8}, Case{20, 16, 32},
                 Case{64, 64, 64}, Case{1, 0, 8}}) {
    NodeManager nm{};
    ASSERT_TRUE(nm.init(&memory_, c.node_size, c.alignment));
    EXPECT_EQ(nm.element_size, c.element_size) << c.node_size;
    for (int k = 0; k < 3; ++k) {
      Ptr p = nm.allocate();
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % std::max<uint64_t>(8, c.alignment), 0u);
    }
  }
}

// Elements per chunk stay a power of two, halved while a chunk exceeds 128 MiB (the upstream
// probe table, with 16384 as the runtime's default).
TEST_P(NodeManagerTest, ChunkSizingMatchesUpstream) {
  struct Case {
    uint64_t node_size;
    int chunk;
  };
  for (Case c :
       {Case{8, 16384}, Case{1024, 16384}, Case{8192, 16384}, Case{8200, 8192}, Case{16392, 4096},
        Case{1 << 20, 128}, Case{(1 << 20) + 8, 64}, Case{200u << 20, 1}}) {
    NodeManager nm{};
    ASSERT_TRUE(nm.init(&memory_, c.node_size, 8));
    EXPECT_EQ(nm.chunk_num_elements, c.chunk) << c.node_size;
  }
  NodeManager nm{};
  ASSERT_TRUE(nm.init(&memory_, 8, 8, -1));
  EXPECT_EQ(nm.chunk_num_elements, 128 * 1024);
  NodeManager bad{};
  EXPECT_FALSE(bad.init(&memory_, 8, 8, 1000));
  EXPECT_EQ(runtime_error_code(&memory_), kErrorInvalidArgument);
}

// Fresh cells come in index order and are zero.
TEST_P(NodeManagerTest, FreshCellsAreSequentialAndZero) {
  ASSERT_TRUE(nm_.init(&memory_, 64, 8, 16));
  for (int k = 0; k < 40; ++k) {
    Ptr p = nm_.allocate();
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(nm_.locate(p), k);
    for (int b = 0; b < 64; ++b) ASSERT_EQ(p[b], 0);
  }
  EXPECT_EQ(nm_.data_list.size(), 40);
}

// Upstream probe: cells 1, 2 -> slots 0, 1; recycle slot 0 + GC; the next allocation reuses slot
// 0 zeroed, the one after takes fresh slot 2; three slots ever reserved.
TEST_P(NodeManagerTest, ReuseAfterGcIsFifoAndZeroed) {
  ASSERT_TRUE(nm_.init(&memory_, 16, 8));
  Ptr a = nm_.allocate();
  Ptr b = nm_.allocate();
  std::memset(a, 0x5a, 16);
  std::memset(b, 0x5b, 16);
  nm_.recycle(a);
  EXPECT_EQ(nm_.num_recycled(), 1);
  nm_.gc_serial();
  Ptr c = nm_.allocate();
  EXPECT_EQ(c, a);
  for (int k = 0; k < 16; ++k) EXPECT_EQ(c[k], 0);
  for (int k = 0; k < 16; ++k) EXPECT_EQ(b[k], 0x5b);  // neighbour untouched
  EXPECT_EQ(nm_.locate(nm_.allocate()), 2);
  EXPECT_EQ(nm_.data_list.size(), 3);
}

// Upstream test_node_allocator: 19 allocations, recycle the first 5, GC, allocate 5 -> 0..4.
TEST_P(NodeManagerTest, RecycledIndicesAreReusedInRecycleOrder) {
  ASSERT_TRUE(nm_.init(&memory_, 8, 8, 4));
  std::vector<Ptr> cells;
  for (int k = 0; k < 19; ++k) cells.push_back(nm_.allocate());
  for (int k = 0; k < 5; ++k) nm_.recycle(cells[k]);
  nm_.gc_serial();
  for (int k = 0; k < 5; ++k) EXPECT_EQ(nm_.locate(nm_.allocate()), k);
  EXPECT_EQ(nm_.locate(nm_.allocate()), 19);
}

// GC keeps the unused tail of the free list at its head, followed by the newly recycled indices
// (#1076: compaction, not clearing).
TEST_P(NodeManagerTest, GcCompactsUnusedFreeEntries) {
  ASSERT_TRUE(nm_.init(&memory_, 8, 8, 4));
  std::vector<Ptr> cells;
  for (int k = 0; k < 10; ++k) cells.push_back(nm_.allocate());
  for (int k = 0; k < 10; ++k) nm_.recycle(cells[k]);
  nm_.gc_serial();
  EXPECT_EQ(FreeEntries(nm_), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  for (int k = 0; k < 3; ++k) EXPECT_EQ(nm_.locate(nm_.allocate()), k);
  nm_.recycle(cells[1]);
  nm_.recycle(cells[0]);
  nm_.gc_serial();
  EXPECT_EQ(FreeEntries(nm_), (std::vector<int>{3, 4, 5, 6, 7, 8, 9, 1, 0}));
  EXPECT_EQ(nm_.free_list_used, 0);
  EXPECT_EQ(nm_.num_recycled(), 0);
  EXPECT_EQ(nm_.num_free(), 9);
  EXPECT_EQ(nm_.num_in_use(), 1);
}

// Compaction and refill work blockwise across chunk and block boundaries, for small and large
// shifts (the source and destination ranges overlap when used < unused).
TEST_P(NodeManagerTest, GcCompactionOfLongFreeLists) {
  for (int used : {1, 100, 300, 700}) {
    NodeManager nm{};
    ASSERT_TRUE(nm.init(&memory_, 8, 8, 16));
    std::vector<Ptr> cells;
    for (int k = 0; k < 1000; ++k) cells.push_back(nm.allocate());
    for (int k = 0; k < 1000; ++k) nm.recycle(cells[k]);
    nm.gc_serial();
    for (int k = 0; k < used; ++k) ASSERT_EQ(nm.locate(nm.allocate()), k);
    const int recycled = std::min(used, 10);  // cells in use: indices [0, used)
    for (int k = 0; k < recycled; ++k) nm.recycle(cells[used - 1 - k]);
    nm.gc_serial();
    std::vector<int> want;
    for (int k = used; k < 1000; ++k) want.push_back(k);
    for (int k = 0; k < recycled; ++k) want.push_back(used - 1 - k);
    EXPECT_EQ(FreeEntries(nm), want) << "used " << used;
  }
}

// When the free list is exhausted allocation falls through to fresh cells (without touching the
// cursor); a cursor pushed past the end by racing allocations is handled by GC's
// max(size - used, 0) compaction.
TEST_P(NodeManagerTest, CursorPastFreeListFallsThroughToFreshCells) {
  ASSERT_TRUE(nm_.init(&memory_, 8, 8, 4));
  Ptr a = nm_.allocate();
  nm_.recycle(a);
  nm_.gc_serial();
  EXPECT_EQ(nm_.allocate(), a);
  EXPECT_EQ(nm_.locate(nm_.allocate()), 1);
  EXPECT_EQ(nm_.locate(nm_.allocate()), 2);
  EXPECT_EQ(nm_.free_list_used, 1);
  EXPECT_EQ(nm_.free_list.size(), 1);
  EXPECT_EQ(nm_.num_free(), 0);
  EXPECT_EQ(nm_.num_in_use(), 3);
  nm_.free_list_used = 5;  // what racing allocate() calls leave behind
  EXPECT_EQ(nm_.num_free(), 0);
  EXPECT_EQ(nm_.locate(nm_.allocate()), 3);
  nm_.gc_serial();
  EXPECT_EQ(nm_.free_list.size(), 0);
  EXPECT_EQ(nm_.free_list_used, 0);
  EXPECT_EQ(nm_.num_in_use(), 4);
}

// GC zero-fills exactly element_size bytes of each recycled cell and nothing else, including
// contiguous runs that are zeroed together.
TEST_P(NodeManagerTest, GcZeroesExactlyRecycledCells) {
  ASSERT_TRUE(nm_.init(&memory_, 24, 8, 8));
  std::vector<Ptr> cells;
  for (int k = 0; k < 30; ++k) {
    cells.push_back(nm_.allocate());
    std::memset(cells.back(), k + 1, 24);
  }
  std::set<int> recycled = {3, 4, 5, 6, 7, 8, 9, 20, 12, 29};
  for (int k : recycled) nm_.recycle(cells[k]);
  nm_.gc_serial();
  for (int k = 0; k < 30; ++k) {
    const int want = recycled.count(k) ? 0 : k + 1;
    for (int b = 0; b < 24; ++b) ASSERT_EQ(cells[k][b], want) << k;
  }
}

// Recycling a pointer the manager does not own is an error and does not touch the lists.
TEST_P(NodeManagerTest, RecycleOfUnknownPointerIsAnError) {
  ASSERT_TRUE(nm_.init(&memory_, 8, 8));
  ASSERT_NE(nm_.allocate(), nullptr);
  uint64_t foreign = 0;
  nm_.recycle(reinterpret_cast<Ptr>(&foreign));
  EXPECT_EQ(runtime_error_code(&memory_), kErrorPtrNotFound);
  EXPECT_EQ(nm_.num_recycled(), 0);
}

// Running out of data chunks gives null and an error, not a crash.
TEST_P(NodeManagerTest, OutOfChunksIsAnError) {
  ASSERT_TRUE(nm_.init(&memory_, 8, 8, 4, /*max_num_chunks=*/1));
  for (int k = 0; k < 4; ++k) ASSERT_NE(nm_.allocate(), nullptr);
  EXPECT_EQ(nm_.allocate(), nullptr);
  EXPECT_EQ(runtime_error_code(&memory_), kErrorOutOfChunks);
  EXPECT_EQ(nm_.num_reserved(), 4);
}

// Batch allocation takes free entries first, then fresh cells; batch recycling feeds the same GC.
TEST_P(NodeManagerTest, BatchAllocateAndRecycle) {
  ASSERT_TRUE(nm_.init(&memory_, 8, 8, 4));
  std::vector<int32_t> got(6);
  ASSERT_TRUE(nm_.allocate_indices(got.data(), 6));
  EXPECT_EQ(got, (std::vector<int32_t>{0, 1, 2, 3, 4, 5}));
  std::vector<int32_t> back = {4, 1};
  nm_.recycle_indices(back.data(), 2);
  nm_.gc_serial();
  ASSERT_TRUE(nm_.allocate_indices(got.data(), 3));
  EXPECT_EQ(got[0], 4);
  EXPECT_EQ(got[1], 1);
  EXPECT_EQ(got[2], 6);
}

// allocate_cells / recycle_cells are allocate_indices / recycle_indices by address: zeroed,
// distinct cells (more than one block of kCellBlock), FIFO reuse after the GC, and unknown
// pointers skipped with one error while the others are recycled.
TEST_P(NodeManagerTest, CellBatchesAllocateAndRecycleByAddress) {
  ASSERT_TRUE(nm_.init(&memory_, 24, 8, 64));
  constexpr int kN = 3 * NodeManager::kCellBlock + 5;
  std::vector<Ptr> cells(kN);
  ASSERT_TRUE(nm_.allocate_cells(cells.data(), kN));
  for (int k = 0; k < kN; ++k) {
    ASSERT_EQ(nm_.locate(cells[k]), k);
    for (int b = 0; b < 24; ++b) ASSERT_EQ(cells[k][b], 0);
    std::memset(cells[k], 0xab, 24);
  }
  std::vector<Ptr> back = {cells[7], cells[3], cells[500]};
  uint64_t foreign = 0;
  back.insert(back.begin() + 1, reinterpret_cast<Ptr>(&foreign));
  EXPECT_EQ(nm_.recycle_cells(back.data(), static_cast<int>(back.size())), 1);
  EXPECT_EQ(runtime_error_code(&memory_), kErrorPtrNotFound);
  runtime_reset_error(&memory_);
  EXPECT_EQ(nm_.num_recycled(), 3);
  nm_.gc_serial();
  std::vector<Ptr> again(4);
  ASSERT_TRUE(nm_.allocate_cells(again.data(), 4));
  EXPECT_EQ(again, (std::vector<Ptr>{cells[7], cells[3], cells[500], nm_.get_cell(kN)}));
  for (Ptr p : again) {
    for (int b = 0; b < 24; ++b) ASSERT_EQ(p[b], 0);
  }
  EXPECT_EQ(runtime_error_code(&memory_), kRuntimeOk);
}

// allocate_cells past the last chunk: false, the error, and null from the failure on.
TEST_P(NodeManagerTest, CellBatchOutOfChunksGivesNulls) {
  ASSERT_TRUE(nm_.init(&memory_, 8, 8, 4, /*max_num_chunks=*/1));
  std::vector<Ptr> cells(6, reinterpret_cast<Ptr>(&nm_));
  EXPECT_FALSE(nm_.allocate_cells(cells.data(), 6));
  EXPECT_EQ(runtime_error_code(&memory_), kErrorOutOfChunks);
  for (int k = 0; k < 6; ++k) EXPECT_EQ(cells[k], nullptr) << k;
}

// Free and recycled lists cost at most 8 bytes per cell (1M cells of 64 B, all recycled).
TEST_P(NodeManagerTest, MetadataIsAtMostEightBytesPerCell) {
  ASSERT_TRUE(nm_.init(&memory_, 64, 8));
  constexpr int kCells = 1 << 20;
  std::vector<Ptr> cells(kCells);
  for (int k = 0; k < kCells; ++k) cells[k] = nm_.allocate();
  for (int k = 0; k < kCells; ++k) nm_.recycle(cells[k]);
  nm_.gc_serial();
  for (int k = 0; k < kCells; ++k) ASSERT_NE(nm_.allocate(), nullptr);
  const uint64_t index_bytes =
      static_cast<uint64_t>(nm_.free_list.get_num_active_chunks()) * nm_.free_list.chunk_bytes() +
      static_cast<uint64_t>(nm_.recycled_list.get_num_active_chunks()) *
          nm_.recycled_list.chunk_bytes();
  EXPECT_LE(index_bytes, 8u * kCells);
  EXPECT_EQ(nm_.data_list.size(), kCells);
}

// The data list is one contiguous reservation when the memory can reserve (the index lists stay
// chunked), and chunked with the granule table otherwise; interior and past-the-end pointers are
// rejected in both, and recycle by address round-trips over many chunks.
TEST_P(NodeManagerTest, DataListLayoutFollowsTheMemory) {
  ASSERT_TRUE(nm_.init(&memory_, 40, 8, /*chunk_num_elements=*/16));
  EXPECT_EQ(nm_.data_list.is_contiguous(), GetParam());
  EXPECT_FALSE(nm_.free_list.is_contiguous());
  EXPECT_FALSE(nm_.recycled_list.is_contiguous());
  std::vector<Ptr> cells(1000);  // 63 chunks
  for (Ptr& p : cells) p = nm_.allocate();
  for (int k = 0; k < 1000; ++k) ASSERT_EQ(nm_.locate(cells[k]), k);
  nm_.recycle(cells[10] + 8);  // interior
  EXPECT_EQ(runtime_error_code(&memory_), kErrorPtrNotFound);
  runtime_reset_error(&memory_);
  nm_.recycle(nm_.get_cell(1007) + 40);  // past the last chunk
  EXPECT_EQ(runtime_error_code(&memory_), kErrorPtrNotFound);
  runtime_reset_error(&memory_);
  EXPECT_EQ(nm_.num_recycled(), 0);
  std::shuffle(cells.begin(), cells.end(), std::mt19937(5));
  EXPECT_EQ(nm_.recycle_cells(cells.data(), 1000), 0);
  nm_.gc_serial();
  EXPECT_EQ(nm_.num_free(), 1000);
  EXPECT_EQ(runtime_error_code(&memory_), kRuntimeOk);
}

// Two threads allocating and recycling concurrently never get the same cell twice, and after GC
// every reserved slot is exactly one of in use / free.
TEST_P(NodeManagerTest, ConcurrentAllocateRecyclePartitionsSlots) {
  ASSERT_TRUE(nm_.init(&memory_, 16, 8, 64));
  std::vector<std::vector<Ptr>> held(2);
  for (int round = 0; round < 5; ++round) {
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t) {
      threads.emplace_back([&, t] {
        std::mt19937 rng(round * 2 + t);
        for (int k = 0; k < 5000; ++k) {
          if (held[t].empty() || rng() % 3 != 0) {
            Ptr p = nm_.allocate();
            // Each cell is exclusively ours: writing a tag races only if handed out twice.
            std::memset(p, t + 1, 16);
            held[t].push_back(p);
          } else {
            size_t i = rng() % held[t].size();
            std::swap(held[t][i], held[t].back());
            nm_.recycle(held[t].back());
            held[t].pop_back();
          }
        }
      });
    }
    for (auto& th : threads) th.join();
    nm_.gc_serial();
    std::vector<int> owner(nm_.num_reserved(), 0);
    for (int t = 0; t < 2; ++t) {
      for (Ptr p : held[t]) {
        int i = nm_.locate(p);
        ASSERT_GE(i, 0);
        ASSERT_EQ(owner[i]++, 0) << "cell handed out twice";
      }
    }
    for (int i : FreeEntries(nm_)) ASSERT_EQ(owner[i]++, 0) << "free cell also in use";
    for (int c : owner) ASSERT_EQ(c, 1) << "cell lost";
  }
  EXPECT_EQ(runtime_error_code(&memory_), kRuntimeOk);
}

INSTANTIATE_TEST_SUITE_P(Layouts, NodeManagerTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Contiguous" : "GranuleTable";
                         });

}  // namespace
}  // namespace sparse_runtime
}  // namespace accelmem

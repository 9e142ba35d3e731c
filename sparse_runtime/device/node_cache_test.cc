#include "sparse_runtime/device/node_cache.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "sparse_runtime/device/node_manager.h"
#include "sparse_runtime/host_memory_pool.h"

namespace accelmem {
namespace sparse_runtime {
namespace {

constexpr int kBatch = NodeCache::kBatch;
constexpr int kIndexBatch = NodeCache::kRecycledIndexBatch;

// Every test runs on both data-list layouts: contiguous (the pool's reservations, the CPU
// default) and chunked with the granule table (the fallback).
class NodeCacheTest : public ::testing::TestWithParam<bool> {
 protected:
  NodeCacheTest() {
    pool_.Attach(&memory_, /*reservations=*/GetParam());
    EXPECT_TRUE(nm_.init(&memory_, 32, 8, /*chunk_num_elements=*/256));
    cache_.init(&nm_);
  }

  // The free list entries not handed out yet, in order.
  static std::vector<int> FreeEntries(const NodeManager& nm) {
    std::vector<int> out;
    for (int k = nm.free_list_used; k < nm.free_list.size(); ++k) {
      out.push_back(nm.free_list.get<int32_t>(k));
    }
    return out;
  }
  static std::vector<int> RecycledEntries(const NodeManager& nm) {
    std::vector<int> out;
    for (int k = 0; k < nm.recycled_list.size(); ++k) {
      out.push_back(nm.recycled_list.get<int32_t>(k));
    }
    return out;
  }

  // Every reserved slot is exactly one of in use (`in_use`), free or recycled.
  static void ExpectSlotInvariant(const NodeManager& nm, const std::vector<int>& in_use) {
    std::vector<int> owner(nm.num_reserved(), 0);
    auto claim = [&](int index, const char* what) {
      ASSERT_GE(index, 0) << what;
      ASSERT_LT(index, static_cast<int>(owner.size())) << what;
      EXPECT_EQ(owner[index], 0) << "slot " << index << " is " << what << " twice or more";
      ++owner[index];
    };
    for (int i : in_use) claim(i, "in use");
    for (int i : FreeEntries(nm)) claim(i, "free");
    for (int i : RecycledEntries(nm)) claim(i, "recycled");
    for (size_t i = 0; i < owner.size(); ++i) EXPECT_EQ(owner[i], 1) << "slot " << i << " lost";
    EXPECT_EQ(nm.num_in_use(), static_cast<int>(in_use.size()));
  }

  // Reserves `n` fresh cells (indices 0 .. n - 1), recycles them in order and collects: the free
  // list is then exactly those indices, in that order.
  void FreeListOfFreshCells(int n) {
    std::vector<int> fresh(n);
    ASSERT_TRUE(nm_.allocate_indices(fresh.data(), n));
    nm_.recycle_indices(fresh.data(), n);
    nm_.gc_serial();
  }

  static bool IsZero(Ptr p, uint64_t bytes) {
    for (uint64_t k = 0; k < bytes; ++k) {
      if (p[k] != 0) return false;
    }
    return true;
  }

  HostMemoryPool pool_;
  RuntimeMemory memory_;
  NodeManager nm_{};
  NodeCache cache_{};
};

// The first allocation reserves one batch of fresh cells with one call; the next kBatch - 1
// allocations come from the cache without touching the manager's counters.
TEST_P(NodeCacheTest, RefillsOneBatchPerSharedCall) {
  Ptr first = cache_.allocate();
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(nm_.data_list.size(), kBatch);
  EXPECT_EQ(cache_.num_cached_free(), kBatch - 1);
  for (int k = 1; k < kBatch; ++k) ASSERT_NE(cache_.allocate(), nullptr);
  EXPECT_EQ(nm_.data_list.size(), kBatch);
  EXPECT_EQ(cache_.num_cached_free(), 0);
  ASSERT_NE(cache_.allocate(), nullptr);
  EXPECT_EQ(nm_.data_list.size(), 2 * kBatch);
}

// Cells come out zeroed, distinct and in index order (fresh cells ascending).
TEST_P(NodeCacheTest, HandsOutDistinctZeroedCellsInOrder) {
  std::set<Ptr> seen;
  for (int k = 0; k < 3 * kBatch + 5; ++k) {
    const int index = cache_.allocate_index();
    ASSERT_EQ(index, k);
    Ptr p = nm_.get_cell(index);
    EXPECT_TRUE(IsZero(p, nm_.element_size));
    EXPECT_TRUE(seen.insert(p).second);
    std::memset(p, 0xab, nm_.element_size);
  }
}

// A cell given back (the last one handed out, unwritten) is the next one handed out, without a
// refill -- also right after the allocation that refilled the cache and at a batch's last cell --
// and the manager still counts every cell exactly once after a flush.
TEST_P(NodeCacheTest, GivenBackCellIsHandedOutNext) {
  std::vector<int> in_use;
  const int first = cache_.allocate_index();  // refills
  cache_.give_back_last();
  EXPECT_EQ(cache_.num_cached_free(), kBatch);
  EXPECT_EQ(cache_.allocate_index(), first);
  in_use.push_back(first);
  for (int k = 1; k < kBatch; ++k) {
    const int index = cache_.allocate_index();
    ASSERT_EQ(index, k);
    if (k % 7 == 0) {
      cache_.give_back_last();
      ASSERT_EQ(cache_.allocate_index(), index);
    }
    in_use.push_back(index);
  }
  ASSERT_EQ(cache_.num_cached_free(), 0);
  cache_.give_back_last();  // the batch's last cell
  EXPECT_EQ(cache_.num_cached_free(), 1);
  EXPECT_EQ(cache_.allocate_index(), kBatch - 1);
  EXPECT_EQ(nm_.data_list.size(), kBatch);   // no second refill
  const int next = cache_.allocate_index();  // refills
  EXPECT_EQ(next, kBatch);
  cache_.give_back_last();
  cache_.flush();
  EXPECT_EQ(nm_.num_in_use(), kBatch);
  ExpectSlotInvariant(nm_, in_use);
  EXPECT_TRUE(IsZero(nm_.get_cell(next), nm_.element_size));
}

// After a GC the cache hands out reusable cells in free-list order: the FIFO reuse order of the
// plain API (cells recycled first come back first), zeroed again.
TEST_P(NodeCacheTest, KeepsFifoReuseOrderAfterGc) {
  std::vector<Ptr> cells;
  for (int k = 0; k < 100; ++k) cells.push_back(nm_.allocate());
  for (Ptr p : cells) std::memset(p, 0x5a, nm_.element_size);
  std::vector<int> order;
  for (int k = 99; k >= 0; k -= 3) {
    cache_.recycle(cells[k]);
    order.push_back(k);
  }
  cache_.flush();
  nm_.gc_serial();
  for (int expected : order) {
    const int index = cache_.allocate_index();
    EXPECT_EQ(index, expected);
    EXPECT_TRUE(IsZero(nm_.get_cell(index), nm_.element_size));
  }
  // The free list is exhausted: fresh cells follow.
  EXPECT_EQ(cache_.allocate_index(), 100);
}

// Refills that must reserve take 1, 2, 4, ... kMaxReservedBatches batches of free-list slots
// with one cursor move each (the reservation clipped at the free list's end), the refills
// between them read the reserved slots without moving the cursor, and cells still come out in
// free-list order. A flush puts the reserved slots not read yet onto the recycled list, in list
// order after the cached free cells, and starts the next reservation at one batch again.
TEST_P(NodeCacheTest, ReservesGrowingRangesOfTheFreeList) {
  const int total = 20 * kBatch;
  std::vector<int> fresh;
  for (int k = 0; k < total; ++k) fresh.push_back(nm_.allocate_index());
  std::mt19937 rng(5);
  std::vector<int> order = fresh;
  std::shuffle(order.begin(), order.end(), rng);
  nm_.recycle_indices(order.data(), total);
  nm_.gc_serial();
  const std::vector<int> free_order = FreeEntries(nm_);
  ASSERT_EQ(static_cast<int>(free_order.size()), total);
  // The cursor after each refill, in batches: reservations of 1, 2 (refill 2), 4 (refill 4), 8
  // (refill 8), then 8 again at refill 16, where only 5 batches are left: the cursor passes the
  // free list's end (as the plain API's does) and the cache reads the 5.
  std::vector<int> cursor_after;
  std::vector<int> handed;
  for (int refill = 1; refill <= 20; ++refill) {
    for (int k = 0; k < kBatch; ++k) handed.push_back(cache_.allocate_index());
    cursor_after.push_back(nm_.free_list_used);
  }
  const std::vector<int> expected_cursor = {1,  3,  3,  7,  7,  7,  7,  15, 15, 15,
                                            15, 15, 15, 15, 15, 23, 23, 23, 23, 23};
  for (int r = 0; r < 20; ++r) {
    EXPECT_EQ(cursor_after[r], expected_cursor[r] * kBatch) << "after refill " << r + 1;
  }
  EXPECT_EQ(handed, free_order);
  EXPECT_EQ(cache_.num_cached_free(), 0);
  EXPECT_EQ(nm_.data_list.size(), total);  // nothing fresh while the free list lasted

  // A new GC (the cache holds no cell, so it need not flush first): 3 * kBatch free again. The
  // next refill reserves 8 batches, clipped to the 3.
  nm_.recycle_indices(handed.data(), 3 * kBatch);
  nm_.gc_serial();
  const std::vector<int> again = FreeEntries(nm_);
  std::vector<int> in_use(handed.begin() + 3 * kBatch, handed.end());
  for (int k = 0; k < 10; ++k) in_use.push_back(cache_.allocate_index());
  EXPECT_EQ(nm_.free_list_used, 8 * kBatch);
  EXPECT_EQ(cache_.num_cached_free(), 3 * kBatch - 10);
  cache_.flush();
  // The cached rest of the first batch, then the two reserved batches, in free-list order.
  EXPECT_EQ(RecycledEntries(nm_), std::vector<int>(again.begin() + 10, again.end()));
  EXPECT_EQ(cache_.num_cached_free(), 0);
  ExpectSlotInvariant(nm_, in_use);
  EXPECT_EQ(nm_.num_in_use(), static_cast<int>(in_use.size()));
  // After the flush the next reservation is one batch again (of the flushed cells, free again
  // after a GC).
  nm_.gc_serial();
  const int before = nm_.free_list_used;
  in_use.push_back(cache_.allocate_index());
  EXPECT_EQ(nm_.free_list_used, before + kBatch);
}

// A cache that still holds reserved free-list slots at a GC (not flushed before it, against the
// contract): the GC moves the free list's entries, so those slots now name cells the free list
// also hands out. The next refill finds them stale, records kErrorStaleCache and reserves anew:
// no index is handed out twice (the leaked cells are reported, not reused). Cached free cells
// survive the GC and are handed out first.
TEST_P(NodeCacheTest, ReservationAcrossAGcIsDroppedNotHandedOutTwice) {
  const int total = 8 * kBatch;
  FreeListOfFreshCells(total);
  std::vector<int> handed;
  for (int k = 0; k < kBatch + 1; ++k) handed.push_back(cache_.allocate_index());
  // Reserved 1 + 2 batches; kBatch - 1 cells cached and one batch reserved, not read.
  ASSERT_EQ(nm_.free_list_used, 3 * kBatch);
  ASSERT_EQ(cache_.num_cached_free(), 2 * kBatch - 1);
  // Recycle some cells in use, then a GC without a flush: the free list is now the 5 unused
  // batches, then the recycled cells.
  nm_.recycle_indices(handed.data(), 10);
  handed.erase(handed.begin(), handed.begin() + 10);
  nm_.gc_serial();
  EXPECT_EQ(cache_.num_cached_free(), kBatch - 1);  // the stale slots are not counted
  EXPECT_EQ(memory_.error_code, kRuntimeOk);
  for (int k = 0; k < kBatch - 1; ++k) handed.push_back(cache_.allocate_index());
  EXPECT_EQ(memory_.error_code, kRuntimeOk);  // cached cells are still good
  handed.push_back(cache_.allocate_index());  // the refill finds the reservation stale
  EXPECT_EQ(memory_.error_code, kErrorStaleCache);
  EXPECT_NE(std::string(memory_.error_message).find("not flushed"), std::string::npos);
  // Everything else the manager holds, through the plain API and the cache: all distinct.
  while (nm_.num_free() > 0) handed.push_back(nm_.allocate_index());
  while (cache_.num_cached_free() > 0) handed.push_back(cache_.allocate_index());
  std::set<int> distinct(handed.begin(), handed.end());
  EXPECT_EQ(distinct.size(), handed.size()) << "a cell was handed out twice";
  for (int i : handed) ASSERT_GE(i, 0);
}

// The same at a flush: the stale slots are dropped (reported), not pushed onto the recycled list.
// Eight batches, so that the GC's compaction moves unused entries into the stale slots: pushing
// them would put cells on the recycled list that the free list holds as well.
TEST_P(NodeCacheTest, FlushAfterAGcDropsTheStaleReservation) {
  const int total = 8 * kBatch;
  FreeListOfFreshCells(total);
  std::vector<int> in_use;
  for (int k = 0; k < kBatch + 1; ++k) in_use.push_back(cache_.allocate_index());
  ASSERT_EQ(nm_.free_list_used, 3 * kBatch);  // slots [2, 3) batches reserved, not read
  nm_.gc_serial();  // not flushed: the 5 unused batches move to slots [0, 5) batches
  cache_.flush();
  EXPECT_EQ(memory_.error_code, kErrorStaleCache);
  EXPECT_EQ(cache_.num_cached_free(), 0);
  // Only the kBatch - 1 cached cells went to the recycled list; no slot is owned twice, and the
  // cells of the dropped batch are the only ones owned by nobody (leaked, and reported).
  EXPECT_EQ(nm_.num_recycled(), kBatch - 1);
  std::vector<int> owner(nm_.num_reserved(), 0);
  for (int i : in_use) ++owner[i];
  for (int i : FreeEntries(nm_)) ++owner[i];
  for (int i : RecycledEntries(nm_)) ++owner[i];
  int leaked = 0;
  for (size_t i = 0; i < owner.size(); ++i) {
    EXPECT_LE(owner[i], 1) << "slot " << i;
    leaked += owner[i] == 0;
  }
  EXPECT_EQ(leaked, kBatch);
  // The cache works on: the next refill reserves one batch of the current free list.
  EXPECT_GE(cache_.allocate_index(), 0);
}

// A reservation clipped at the free list's end leaves a partial batch: it is read into the top
// of the free arrays, give_back_last works on its cells as on a full batch's, and fresh cells
// follow it. Several caches racing past the end leave the cursor past it: num_free() is then 0
// and, after the flushes, every slot is exactly one of in use / free / recycled.
TEST_P(NodeCacheTest, PartialBatchesAndCachesPastTheEnd) {
  const int total = 2 * kBatch + kBatch / 2;
  FreeListOfFreshCells(total);
  const std::vector<int> free_order = FreeEntries(nm_);
  std::vector<int> handed;
  for (int k = 0; k < 2 * kBatch; ++k) handed.push_back(cache_.allocate_index());
  EXPECT_EQ(nm_.free_list_used, 3 * kBatch);  // 1 + 2 batches, clipped to 1.5
  EXPECT_EQ(cache_.num_cached_free(), kBatch / 2);
  const int first_of_partial = cache_.allocate_index();  // reads the half batch
  EXPECT_EQ(cache_.num_cached_free(), kBatch / 2 - 1);
  cache_.give_back_last();
  EXPECT_EQ(cache_.allocate_index(), first_of_partial);
  handed.push_back(first_of_partial);
  while (cache_.num_cached_free() > 0) handed.push_back(cache_.allocate_index());
  EXPECT_EQ(handed, free_order);
  handed.push_back(cache_.allocate_index());  // fresh now
  EXPECT_EQ(handed.back(), total);
  // Two more caches refill past the end; the manager counts no free cell.
  NodeCache more[2] = {};
  for (NodeCache& c : more) {
    c.init(&nm_);
    handed.push_back(c.allocate_index());
  }
  EXPECT_GT(nm_.free_list_used, nm_.free_list.size());
  EXPECT_EQ(nm_.num_free(), 0);
  cache_.flush();
  for (NodeCache& c : more) c.flush();
  ExpectSlotInvariant(nm_, handed);
  EXPECT_EQ(memory_.error_code, kRuntimeOk);
}

// Recycled indices are buffered until kIndexBatch (NodeCache::kRecycledIndexBatch) are held and
// then pushed to the recycled list together, in recycle order. A cell recycled by address joins
// them as its index (contiguous list) or waits in its own buffer, pushed at the same flushes
// (chunked list: addresses first).
TEST_P(NodeCacheTest, BuffersRecycledIndicesUntilABatchIsFull) {
  std::vector<int> indices;
  for (int k = 0; k < kIndexBatch + 2; ++k) indices.push_back(cache_.allocate_index());
  for (int k = 0; k < kIndexBatch; ++k) cache_.recycle_index(indices[k]);
  EXPECT_EQ(nm_.recycled_list.size(), 0);
  EXPECT_EQ(cache_.num_cached_recycled(), kIndexBatch);
  std::vector<int> expected;
  if (GetParam()) {
    // Contiguous: the address becomes its index at once, into the full index buffer, which is
    // pushed first.
    cache_.recycle(nm_.get_cell(indices[kIndexBatch]));
    EXPECT_EQ(nm_.recycled_list.size(), kIndexBatch);
    EXPECT_EQ(cache_.num_cached_recycled(), 1);
    cache_.recycle_index(indices[kIndexBatch + 1]);
    EXPECT_EQ(nm_.recycled_list.size(), kIndexBatch);
    EXPECT_EQ(cache_.num_cached_recycled(), 2);
    expected.assign(indices.begin(), indices.begin() + kIndexBatch);
  } else {
    cache_.recycle(nm_.get_cell(indices[kIndexBatch]));  // the address buffer: no flush yet
    EXPECT_EQ(nm_.recycled_list.size(), 0);
    EXPECT_EQ(cache_.num_cached_recycled(), kIndexBatch + 1);
    cache_.recycle_index(indices[kIndexBatch + 1]);  // the index buffer is full: both are pushed
    EXPECT_EQ(nm_.recycled_list.size(), kIndexBatch + 1);
    EXPECT_EQ(cache_.num_cached_recycled(), 1);
    expected = {indices[kIndexBatch]};
    expected.insert(expected.end(), indices.begin(), indices.begin() + kIndexBatch);
  }
  EXPECT_EQ(RecycledEntries(nm_), expected);
  cache_.flush_recycled();
  if (GetParam()) expected.push_back(indices[kIndexBatch]);
  expected.push_back(indices[kIndexBatch + 1]);
  EXPECT_EQ(RecycledEntries(nm_), expected);
}

// With a contiguous list an address recycled through the cache is buffered as its index, in
// order with recycle_index(), and the list's limit the cache copied is read again only for an
// address beyond it (cells committed since, here by the plain API in later chunks); a chunked
// list's addresses wait in their own buffer and are pushed first.
TEST_P(NodeCacheTest, RecycledAddressesBecomeIndicesInOrder) {
  const bool contiguous = GetParam();
  const int a = cache_.allocate_index();
  const int b = cache_.allocate_index();
  const int d = cache_.allocate_index();
  EXPECT_EQ(cache_.index_limit, 0u);  // not read before the first recycle()
  cache_.recycle_index(a);
  cache_.recycle(nm_.get_cell(b));  // beyond the copied limit: read again
  const uint64_t first_limit = cache_.index_limit;
  if (contiguous) {
    EXPECT_GE(first_limit, static_cast<uint64_t>(kBatch));
  } else {
    EXPECT_EQ(first_limit, 0u);
  }
  cache_.recycle(nm_.get_cell(d));  // below it: indexed without reading it
  EXPECT_EQ(cache_.index_limit, first_limit);
  std::vector<int> later;
  for (int k = 0; k < 3 * 256; ++k) later.push_back(nm_.allocate_index());
  const int c = later.back();
  ASSERT_GE(static_cast<uint64_t>(c), first_limit);
  cache_.recycle(nm_.get_cell(c));  // committed after the copy: read again, then indexed
  if (contiguous) {
    EXPECT_GT(cache_.index_limit, static_cast<uint64_t>(c));
  }
  cache_.recycle_index(later.front());
  EXPECT_EQ(cache_.num_cached_recycled(), 5);
  cache_.flush_recycled();
  EXPECT_EQ(memory_.error_code, kRuntimeOk);
  if (contiguous) {
    EXPECT_EQ(RecycledEntries(nm_), (std::vector<int>{a, b, d, c, later.front()}));
  } else {
    EXPECT_EQ(RecycledEntries(nm_), (std::vector<int>{b, d, c, a, later.front()}));
  }
}

// Addresses that are cell-aligned but not cells of the list -- the element just past the
// committed limit and, with a contiguous list, the zero lead element below the first cell -- are
// reported and dropped at the flush, not indexed.
TEST_P(NodeCacheTest, AlignedAddressOutsideTheCellsIsReported) {
  const int a = cache_.allocate_index();
  const ListManager& data = nm_.data_list;
  std::vector<Ptr> strays;
  if (GetParam()) {
    ASSERT_NE(data.contiguous_base, nullptr);
    strays.push_back(data.contiguous_base + nm_.element_size * data.contiguous_limit);
    strays.push_back(data.contiguous_base - nm_.element_size);
  } else {
    strays.push_back(nm_.get_cell(a) + nm_.element_size * 256);  // past the only chunk
  }
  for (Ptr p : strays) cache_.recycle(p);
  cache_.recycle_index(a);
  cache_.flush_recycled();
  EXPECT_EQ(memory_.error_code, kErrorPtrNotFound);
  EXPECT_EQ(RecycledEntries(nm_), (std::vector<int>{a}));
}

// A recycled cell is not handed out again before a GC (other workers may still read it), even
// though the cache holds it.
TEST_P(NodeCacheTest, RecycledCellIsNotReusedBeforeGc) {
  const int victim = cache_.allocate_index();
  cache_.recycle_index(victim);
  for (int k = 0; k < 4 * kBatch; ++k) EXPECT_NE(cache_.allocate_index(), victim);
  cache_.flush();
  // flush() pushes the cached free cells first, then the buffered recycled ones.
  EXPECT_EQ(RecycledEntries(nm_).back(), victim);
}

// flush() returns the cached free cells (onto the recycled list) and the buffered recycled ones,
// so every slot is exactly one of in use / free / recycled; a GC then makes them all free.
TEST_P(NodeCacheTest, FlushRestoresSlotInvariant) {
  std::vector<int> in_use;
  for (int k = 0; k < 2 * kBatch + 10; ++k) in_use.push_back(cache_.allocate_index());
  for (int k = 0; k < 20; ++k) {
    cache_.recycle_index(in_use.back());
    in_use.pop_back();
  }
  // Before the flush the cache's cells are invisible to the manager: counted as in use.
  EXPECT_EQ(nm_.num_in_use(), 3 * kBatch);
  cache_.flush();
  EXPECT_EQ(cache_.num_cached_free(), 0);
  EXPECT_EQ(cache_.num_cached_recycled(), 0);
  EXPECT_EQ(nm_.num_recycled(), (3 * kBatch - static_cast<int>(in_use.size())));
  ExpectSlotInvariant(nm_, in_use);
  nm_.gc_serial();
  ExpectSlotInvariant(nm_, in_use);
  EXPECT_EQ(nm_.num_free(), 3 * kBatch - static_cast<int>(in_use.size()));
  // Flushing an empty cache changes nothing.
  cache_.flush();
  ExpectSlotInvariant(nm_, in_use);
}

// Cells the cache handed out but that were recycled through the plain API (or vice versa) are
// accounted the same way: the two paths share one manager.
TEST_P(NodeCacheTest, MixesWithThePlainApi) {
  std::vector<int> in_use;
  for (int k = 0; k < 10; ++k) in_use.push_back(cache_.allocate_index());
  for (int k = 0; k < 10; ++k) in_use.push_back(nm_.allocate_index());
  nm_.recycle_index(in_use[0]);
  cache_.recycle_index(in_use[10]);
  in_use.erase(in_use.begin() + 10);
  in_use.erase(in_use.begin());
  cache_.flush();
  ExpectSlotInvariant(nm_, in_use);
}

// An unknown pointer is reported (kErrorPtrNotFound) and dropped when the buffer is flushed; the
// valid cells buffered with it still reach the recycled list.
TEST_P(NodeCacheTest, UnknownPointerIsReportedAndDroppedAtFlush) {
  const int a = cache_.allocate_index();
  const int b = cache_.allocate_index();
  uint64_t outside[8] = {};
  cache_.recycle_index(a);
  cache_.recycle(reinterpret_cast<Ptr>(outside));
  cache_.recycle(nm_.get_cell(b) + 8);  // interior pointer
  cache_.recycle_index(b);
  EXPECT_EQ(memory_.error_code, kRuntimeOk);
  cache_.flush_recycled();
  EXPECT_EQ(memory_.error_code, kErrorPtrNotFound);
  EXPECT_EQ(RecycledEntries(nm_), (std::vector<int>{a, b}));
}

// Running out of chunks is an error the host reads, and allocate returns null (no crash).
TEST_P(NodeCacheTest, OutOfChunksReturnsNullAndRecordsError) {
  NodeManager nm{};
  ASSERT_TRUE(nm.init(&memory_, 8, 8, /*chunk_num_elements=*/kBatch, /*max_num_chunks=*/2));
  NodeCache cache{};
  cache.init(&nm);
  int handed_out = 0;
  while (cache.allocate() != nullptr) {
    ++handed_out;
    ASSERT_LE(handed_out, 2 * kBatch);
  }
  EXPECT_EQ(handed_out, 2 * kBatch);
  EXPECT_EQ(memory_.error_code, kErrorOutOfChunks);
  EXPECT_EQ(cache.allocate_index(), -1);
  // Callers that keep trying after the failure do not move the cursor on (it would overflow
  // after 4 million tries and then index the free list out of bounds).
  const int cursor = nm.free_list_used;
  int32_t out[kBatch];
  for (int k = 0; k < 1000; ++k) {
    ASSERT_EQ(cache.allocate(), nullptr);
    ASSERT_FALSE(nm.allocate_indices(out, kBatch));
  }
  EXPECT_EQ(nm.free_list_used, cursor);
}

// Two workers race on a manager whose free list runs out and whose data list then runs out of
// chunks, through caches, allocate_indices and allocate_index, and keep trying after the
// failures (the cursor give-back). No index is handed out twice, every free-list entry and
// every cell is handed out, and the cursor stays near the free list's end. Run under TSan too.
TEST_P(NodeCacheTest, RacingFailuresHandOutEveryCellOnce) {
  constexpr int kThreads = 2;
  NodeManager nm{};
  ASSERT_TRUE(nm.init(&memory_, 8, 8, /*chunk_num_elements=*/kBatch, /*max_num_chunks=*/16));
  constexpr int kCells = 16 * kBatch;
  std::vector<int32_t> first(5 * kBatch + 100);
  ASSERT_TRUE(nm.allocate_indices(first.data(), static_cast<int>(first.size())));
  nm.recycle_indices(first.data(), static_cast<int>(first.size()));
  nm.gc_serial();  // a free list of 5 batches + 100 entries, then fresh cells up to kCells
  std::vector<std::vector<int32_t>> got(kThreads);
  std::vector<std::thread> workers;
  for (int t = 0; t < kThreads; ++t) {
    workers.emplace_back([&, t] {
      NodeCache cache{};
      cache.init(&nm);
      std::mt19937 rng(77 + t);
      int32_t batch[64];
      for (int failures = 0; failures < 3000;) {
        const int op = static_cast<int>(rng() % 4);
        if (op <= 1) {
          const int32_t i = cache.allocate_index();
          if (i >= 0)
            got[t].push_back(i);
          else
            ++failures;
        } else if (op == 2) {
          const int n = 1 + static_cast<int>(rng() % 64);
          const bool ok = nm.allocate_indices(batch, n);
          for (int k = 0; k < n; ++k) {
            if (batch[k] >= 0) got[t].push_back(batch[k]);
          }
          if (!ok) ++failures;
        } else {
          const int32_t i = nm.allocate_index();
          if (i >= 0)
            got[t].push_back(i);
          else
            ++failures;
        }
      }
      while (cache.num_cached_free() > 0) got[t].push_back(cache.allocate_index());
    });
  }
  for (std::thread& w : workers) w.join();
  std::vector<int32_t> all;
  for (const auto& g : got) all.insert(all.end(), g.begin(), g.end());
  std::sort(all.begin(), all.end());
  EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end()) << "handed out twice";
  // Every free-list entry and every fresh cell but those of a request that straddled the data
  // list's end (refused whole: at most one per thread).
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all.front(), 0);
  EXPECT_LT(all.back(), kCells);
  EXPECT_GE(static_cast<int>(all.size()), kCells - kThreads * kBatch);
  const std::set<int32_t> handed(all.begin(), all.end());
  for (int32_t i : first) EXPECT_EQ(handed.count(i), 1u) << "free entry " << i;
  EXPECT_EQ(memory_.error_code, kErrorOutOfChunks);
  // After 3000 failures each, the cursor is past the end by the fresh cells the batch calls
  // took (they move it, as upstream's allocation does) plus at most one reservation's overshoot
  // per thread: the failures added nothing.
  const int fresh = kCells - static_cast<int>(first.size());
  EXPECT_LE(nm.free_list_used, nm.free_list.size() + fresh +
                                   kThreads * (NodeCache::kMaxReservedBatches * kBatch + 64));
  EXPECT_LE(nm.data_list.size(), kCells + kThreads * kBatch);
}

// Two workers with one cache each run 10^5 randomized allocate/recycle operations in rounds;
// between rounds each flushes its cache, and then every slot is exactly one of in use / free /
// recycled, no index was handed out twice, and every cell came out zeroed. Run under TSan too.
TEST_P(NodeCacheTest, TwoWorkersRandomizedKeepInvariant) {
  constexpr int kThreads = 2;
  constexpr int kRounds = 5;
  constexpr int kOpsPerRound = 10000;  // per thread: 2 * 5 * 10^4 = 10^5 operations
  NodeCache caches[kThreads] = {};
  for (NodeCache& c : caches) c.init(&nm_);
  std::vector<std::vector<int>> live(kThreads);
  std::vector<std::mt19937> rngs;
  for (int t = 0; t < kThreads; ++t) rngs.emplace_back(1234 + t);
  for (int round = 0; round < kRounds; ++round) {
    std::vector<int> bad(kThreads, 0);
    std::vector<std::thread> workers;
    for (int t = 0; t < kThreads; ++t) {
      workers.emplace_back([&, t] {
        NodeCache& cache = caches[t];
        std::vector<int>& mine = live[t];
        std::mt19937& rng = rngs[t];
        for (int op = 0; op < kOpsPerRound; ++op) {
          // Allocate a bit more often than recycle, so the population drifts up and down.
          if (mine.empty() || rng() % 100 < 55) {
            Ptr p = cache.allocate();
            if (p == nullptr) {
              ++bad[t];
              continue;
            }
            uint64_t word;
            std::memcpy(&word, p, sizeof(word));
            if (word != 0) ++bad[t];
            const uint64_t tag = 1 + t;
            std::memcpy(p, &tag, sizeof(tag));
            mine.push_back(nm_.locate(p));
          } else {
            const size_t k = rng() % mine.size();
            std::swap(mine[k], mine.back());
            Ptr p = nm_.get_cell(mine.back());
            uint64_t word;
            std::memcpy(&word, p, sizeof(word));
            if (word != 1u + t) ++bad[t];  // another worker wrote into my cell
            if (rng() % 2 == 0) {
              cache.recycle(p);
            } else {
              cache.recycle_index(mine.back());
            }
            mine.pop_back();
          }
        }
        cache.flush();
      });
    }
    for (std::thread& w : workers) w.join();
    for (int t = 0; t < kThreads; ++t) EXPECT_EQ(bad[t], 0) << "round " << round << " thread " << t;
    std::vector<int> in_use;
    for (const auto& mine : live) in_use.insert(in_use.end(), mine.begin(), mine.end());
    ExpectSlotInvariant(nm_, in_use);
    nm_.gc_serial();
    ExpectSlotInvariant(nm_, in_use);
    for (int i : FreeEntries(nm_)) {
      ASSERT_TRUE(IsZero(nm_.get_cell(i), nm_.element_size)) << i;
    }
  }
  EXPECT_EQ(memory_.error_code, kRuntimeOk);
}

INSTANTIATE_TEST_SUITE_P(Layouts, NodeCacheTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Contiguous" : "GranuleTable";
                         });

}  // namespace
}  // namespace sparse_runtime
}  // namespace accelmem

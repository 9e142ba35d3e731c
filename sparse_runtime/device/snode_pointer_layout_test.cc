// SNode pointer tests over every cell layout (CellLayout), and allocation failure: the
// lookup forms agree with the NodeManager's chunk table, every cell is in use, free or
// recycled exactly once through activation, deactivation, batch deactivation and GC.
#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "sparse_runtime/device/node_cache.h"
#include "sparse_runtime/device/node_manager.h"
#include "sparse_runtime/device/snode_pointer.h"
#include "sparse_runtime/snode_testing.h"

namespace accelmem {
namespace sparse_runtime {
namespace {

// Starts the calling thread's work only once all `n` threads have arrived.
void WaitForAll(std::atomic<int>& go, int n) {
  go.fetch_add(1);
  while (go.load() < n) {
  }
}

// One xorshift32 step: a cheap per-thread random stream for the races below.
void XorShift(u32& x) {
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
}

// After a GC, the manager holds exactly the `active` cells in the slots in use, recycles
// nothing and has every other reserved cell free.
void ExpectGcKeepsOnlySlotCells(NodeManager* nm, i32 active) {
  nm->gc_serial();
  EXPECT_EQ(nm->num_recycled(), 0);
  EXPECT_EQ(nm->num_in_use(), active);
  EXPECT_EQ(nm->num_reserved(), nm->num_in_use() + nm->num_free());
}

// Checks that every reserved cell of `nm` is exactly once in one of the `slots` slots of `node`,
// on the free list (not handed out) or on the recycled list, and that the manager counts the cells
// in the slots as in use. Returns how many slots hold a cell.
i32 ExpectEveryCellOnce(Ptr m, Ptr node, i32 slots, NodeManager* nm, int round) {
  const i32 reserved = nm->num_reserved();
  std::vector<int> seen(reserved, 0);
  i32 active = 0;
  for (i32 i = 0; i < slots; ++i) {
    const PointerSlot v = *Pointer_slot(m, node, i);
    if (!Pointer_is_cell(v)) continue;
    ++active;
    const i32 index = Pointer_cell_index(v);
    EXPECT_GE(index, 0);
    EXPECT_LT(index, reserved);
    if (index >= 0 && index < reserved) ++seen[index];
  }
  for (i32 k = nm->free_list_used; k < nm->free_list.size(); ++k) {
    ++seen[nm->free_list.get<i32>(k)];
  }
  for (i32 k = 0; k < nm->recycled_list.size(); ++k) ++seen[nm->recycled_list.get<i32>(k)];
  for (i32 index = 0; index < reserved; ++index) {
    EXPECT_EQ(seen[index], 1) << "cell " << index << " round " << round;
  }
  EXPECT_EQ(nm->num_in_use(), active);
  return active;
}

// A pointer SNode of `slots` 16-byte cells in the root of its own test context, with the
// cells' NodeManager: the setup every test below shares. `layout`: kContiguous binds the meta to
// the contiguous data list (the CPU runtime's default); kChunked gives the manager a chunked data
// list (no reservations, as on the device); kUnbound keeps the contiguous list but never binds
// the meta (a meta filled without Pointer_bind_cells must still work).
enum class CellLayout { kContiguous, kChunked, kUnbound };

struct PointerUnderTest {
  explicit PointerUnderTest(i32 slots, CellLayout layout = CellLayout::kContiguous)
      : ctx(4, 4096, /*reservations=*/layout != CellLayout::kChunked) {
    ctx.FillMeta(&meta.base, 1, 16, slots);
    m = reinterpret_cast<Ptr>(&meta);
    nm = ctx.MakeAllocator(1, 16);
    node = ctx.root();
    if (layout != CellLayout::kUnbound) Pointer_bind_cells(&meta, nm);
  }
  SNodeTestContext ctx;
  PointerMeta meta{};
  Ptr m = nullptr;
  NodeManager* nm = nullptr;
  Ptr node = nullptr;
};

// The tests below run on each CellLayout.
class SNodePointerLayoutTest : public ::testing::TestWithParam<CellLayout> {};

// A slot's value names the cell its lookups return, on every layout: cells activated in a
// shuffled order are distinct, zero, inside the manager's data list and equal to
// NodeManager::get_cell of the slot's index (computed by the chunk table, independently of the
// meta's cached origin); a value written through one form of lookup reads back through the
// others; after deactivation, a GC and re-activation the recycled cells come back.
TEST_P(SNodePointerLayoutTest, SlotValueNamesTheCellItsLookupsReturn) {
  constexpr i32 kSlots = 1000;
  PointerUnderTest p(kSlots, GetParam());
  const Ptr m = p.m, node = p.node;
  NodeManager* const nm = p.nm;
  EXPECT_EQ(p.meta.cell_origin != 0, GetParam() == CellLayout::kContiguous);
  EXPECT_EQ(nm->data_list.is_contiguous(), GetParam() != CellLayout::kChunked);
  const StaticMeta<kSlots, 16> sm{m};
  ASSERT_TRUE(sm.matches());
  const auto view = Pointer_view(sm);  // origin and stride cached: 0 unless bound and contiguous
  EXPECT_EQ(view.cell_origin, p.meta.cell_origin);
  PointerView<StaticMeta<kSlots, 16>, true> contiguous;
  const bool has_contiguous = Pointer_contiguous_view(sm, &contiguous);
  EXPECT_EQ(has_contiguous, GetParam() == CellLayout::kContiguous);
  std::vector<i32> order(kSlots);
  for (i32 i = 0; i < kSlots; ++i) order[i] = (i * 617) % kSlots;  // 617 is prime to 1000
  for (int round = 0; round < 2; ++round) {
    std::set<Ptr> cells;
    for (i32 i : order) Pointer_activate(m, node, i);
    for (i32 i = 0; i < kSlots; ++i) {
      const PointerSlot v = *Pointer_slot(m, node, i);
      ASSERT_TRUE(Pointer_is_cell(v)) << "slot " << i;
      const i32 k = Pointer_cell_index(v);
      ASSERT_GE(k, 0);
      ASSERT_LT(k, nm->num_reserved());
      const Ptr cell = nm->get_cell(k);
      EXPECT_EQ(Pointer_lookup_element(m, node, i), cell) << "slot " << i;
      EXPECT_EQ(Pointer_lookup_element_inline(sm, node, i), cell) << "slot " << i;
      EXPECT_EQ(Pointer_lookup_element_inline(view, node, i), cell) << "slot " << i;
      EXPECT_TRUE(Pointer_is_active_inline(view, node, i));
      EXPECT_EQ(Pointer_cell(m, node, i), cell) << "slot " << i;
      EXPECT_EQ(Pointer_lookup_cell(m, node, i), cell) << "slot " << i;
      // Already active: activate-and-get hands back the same cell through every form.
      EXPECT_EQ(Pointer_activate_cell(m, node, i), cell) << "slot " << i;
      Ptr got = nullptr;
      EXPECT_TRUE(Pointer_activate_cell_inline(sm, node, i, &got));
      EXPECT_EQ(got, cell) << "slot " << i;
      got = nullptr;
      EXPECT_TRUE(Pointer_activate_cell_inline(view, node, i, &got));
      EXPECT_EQ(got, cell) << "slot " << i;
      if (has_contiguous) {
        EXPECT_EQ(Pointer_lookup_element_inline(contiguous, node, i), cell) << "slot " << i;
        got = nullptr;
        EXPECT_TRUE(Pointer_activate_cell_inline(contiguous, node, i, &got));
        EXPECT_EQ(got, cell) << "slot " << i;
      }
      EXPECT_EQ(nm->locate(cell), k);
      EXPECT_TRUE(cells.insert(cell).second) << "cell of slot " << i << " handed out twice";
      i32 value;
      std::memcpy(&value, cell, sizeof(value));
      EXPECT_EQ(value, 0) << "slot " << i << " round " << round;
      value = i + 1;
      std::memcpy(Pointer_lookup_element_inline(sm, node, i), &value, sizeof(value));
    }
    Pointer_activate_inline(view, node, 0);  // already active: no new cell
    EXPECT_EQ(nm->num_in_use(), kSlots);
    for (i32 i = 0; i < kSlots; ++i) {
      i32 value;
      std::memcpy(&value, Pointer_lookup_element(m, node, i), sizeof(value));
      EXPECT_EQ(value, i + 1) << "slot " << i;
    }
    for (i32 i : order) Pointer_deactivate(m, node, i);
    EXPECT_EQ(nm->num_recycled(), kSlots);
    EXPECT_EQ(Pointer_lookup_cell(m, node, 3), nullptr);  // inactive: null, not the ambient
    // Its lookup, in every form, is the ambient element, a zero cell that is no cell of the
    // manager (with contiguous cells: the lead element in front of cell 0, reached with no test).
    {
      const Ptr ambient = runtime_ambient_element(p.ctx.rt(), 1);
      EXPECT_EQ(Pointer_lookup_element(m, node, 3), ambient);
      EXPECT_EQ(Pointer_lookup_element_inline(sm, node, 3), ambient);
      EXPECT_EQ(Pointer_lookup_element_inline(view, node, 3), ambient);
      if (has_contiguous) {
        EXPECT_EQ(Pointer_lookup_element_inline(contiguous, node, 3), ambient);
        EXPECT_EQ(ambient + nm->element_size, nm->get_cell(0));
      }
      EXPECT_EQ(nm->data_list.find_index(ambient), -1);
      for (u64 b = 0; b < nm->element_size; ++b) ASSERT_EQ(ambient[b], 0) << b;
    }
    EXPECT_EQ(Pointer_lookup_element_inline(view, node, 0), runtime_ambient_element(p.ctx.rt(), 1));
    // Activating an inactive cell through the view takes a fresh cell (the recycled ones wait for
    // the GC); deactivated again for the count below.
    Pointer_activate_inline(view, node, 5);
    const Ptr fresh = Pointer_lookup_element_inline(view, node, 5);
    EXPECT_EQ(fresh, nm->get_cell(Pointer_cell_index(*Pointer_slot(m, node, 5))));
    EXPECT_EQ(nm->locate(fresh), kSlots);  // round 0: a new cell; round 1: the last free one
    Pointer_deactivate(m, node, 5);
    // Activate-and-get of inactive cells allocates them and hands back the cell later lookups
    // return (a fresh, zeroed one): through the view, and through the contiguous view if any.
    Ptr activated = nullptr;
    ASSERT_TRUE(Pointer_activate_cell_inline(view, node, 7, &activated));
    EXPECT_EQ(activated, Pointer_lookup_element(m, node, 7));
    EXPECT_EQ(nm->locate(activated), Pointer_cell_index(*Pointer_slot(m, node, 7)));
    if (has_contiguous) {
      ASSERT_TRUE(Pointer_activate_cell_inline(contiguous, node, 8, &activated));
      EXPECT_EQ(activated, Pointer_lookup_element(m, node, 8));
      EXPECT_EQ(Pointer_lookup_element_inline(contiguous, node, 9),
                runtime_ambient_element(p.ctx.rt(), 1));
      Pointer_deactivate(m, node, 8);
    }
    Pointer_deactivate(m, node, 7);
    nm->gc_serial();
    EXPECT_EQ(nm->num_in_use(), 0);
  }
  EXPECT_EQ(nm->num_reserved(), kSlots + 1 + (GetParam() == CellLayout::kContiguous ? 2 : 1))
      << "the second round reused the recycled cells";
  EXPECT_EQ(p.ctx.error(), 0);
}

// Racing activations (plain, and activate-and-get) and deactivations of the same and of
// different cells, from threads using the NodeManager directly and threads using their own
// NodeCache, lose and duplicate no cell:
// afterwards (caches flushed) every reserved cell is exactly once either in a slot, on the free
// list or on the recycled list, and after a GC the manager counts exactly
// the cells in the slots as in use.
TEST_P(SNodePointerLayoutTest, EveryCellInUseFreeOrRecycledExactlyOnce) {
  constexpr i32 kSlots = 64;
  constexpr int kThreads = 4;
  constexpr int kOps = 20000;
  PointerUnderTest p(kSlots, GetParam());
  SNodeTestContext& ctx = p.ctx;
  const Ptr m = p.m, node = p.node;
  NodeManager* const nm = p.nm;
  ASSERT_GE(4096u, Pointer_container_size(kSlots));
  std::vector<NodeCache> caches(kThreads);
  for (NodeCache& c : caches) c.init(nm);
  for (int round = 0; round < 3; ++round) {
    std::atomic<int> go{0};
    // Deactivations that reported taking their cell: each must have recycled exactly one.
    std::atomic<i64> taken{0};
    const i64 recycled_at_start = nm->num_recycled();
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        NodeCache* cache = t % 2 == 0 ? nullptr : &caches[t];
        u32 x = 0x9e3779b9u * static_cast<u32>(t + 1 + 17 * round);
        WaitForAll(go, kThreads);
        for (int k = 0; k < kOps; ++k) {
          XorShift(x);
          // Half the operations on 4 hot cells (the same cells on every thread).
          const i32 i = static_cast<i32>((x >> 8) % ((x & 1) != 0 ? 4 : kSlots));
          if ((x & 2) != 0 && (x & 4) != 0) {
            // Activate-and-get: when it reports a cell, the cell is one of this manager's (it
            // may report none only if deactivations kept winning its retries).
            Ptr cell = nullptr;
            if (Pointer_activate_cell_inline(RuntimeMeta{m}, node, i, &cell, cache)) {
              EXPECT_GE(nm->locate(cell), 0);
            }
          } else if ((x & 2) != 0) {
            Pointer_activate_cached(m, node, i, cache);
            // Whoever finds the cell active sees a cell of this manager.
            Ptr cell = Pointer_cell(m, node, i);
            if (cell != nullptr) {
              EXPECT_GE(nm->locate(cell), 0);
            }
          } else if (Pointer_deactivate_cached(m, node, i, cache)) {
            taken.fetch_add(1, std::memory_order_relaxed);
          }
          (void)Pointer_lookup_element(m, node, i);
        }
      });
    }
    for (auto& th : threads) th.join();
    i64 cached_free = 0;  // a flush puts these on the recycled list too
    for (NodeCache& c : caches) cached_free += c.num_cached_free();
    for (NodeCache& c : caches) c.flush();
    ASSERT_EQ(ctx.error(), 0);
    // Besides those, a lock-free activation through the manager that lost its race recycled the
    // cell it allocated (one through a cache gave it back to the cache): at least these, and
    // every cell exactly once (below).
    EXPECT_GE(nm->num_recycled(), recycled_at_start + taken.load() + cached_free) << round;
    if (kPointerClaimsSlot) {  // a claiming activation never allocates a cell it does not keep
      EXPECT_EQ(nm->num_recycled(), recycled_at_start + taken.load() + cached_free) << round;
    }

    for (i32 i = 0; i < kSlots; ++i) {
      EXPECT_EQ(Pointer_is_active(m, node, i), Pointer_is_cell(*Pointer_slot(m, node, i)));
    }
    const i32 active = ExpectEveryCellOnce(m, node, kSlots, nm, round);
    ExpectGcKeepsOnlySlotCells(nm, active);
  }
}

// Owned deactivation (no CAS) does what the CAS form does: every active cell it is called on
// becomes inactive (lookups read the ambient element again) and is recycled exactly once,
// and repeated calls and inactive cells are harmless; with and without a NodeCache.
TEST_P(SNodePointerLayoutTest, DeactivatesAndRecyclesEachActiveCellOnce) {
  constexpr i32 kSlots = 300;
  for (bool use_cache : {false, true}) {
    PointerUnderTest p(kSlots, GetParam());
    SNodeTestContext& ctx = p.ctx;
    const Ptr m = p.m, node = p.node;
    NodeManager* const nm = p.nm;
    ASSERT_GE(4096u, Pointer_container_size(kSlots));
    auto cache = std::make_unique<NodeCache>();
    cache->init(nm);
    NodeCache* c = use_cache ? cache.get() : nullptr;
    for (i32 i = 0; i < kSlots; i += 3) Pointer_activate(m, node, i);  // 100 active cells
    for (i32 i = kSlots - 1; i >= 0; --i) Pointer_deactivate_owned(m, node, i, c);
    for (i32 i = 0; i < kSlots; i += 6) Pointer_deactivate_owned(m, node, i, c);  // again
    cache->flush();
    EXPECT_EQ(ctx.error(), 0);
    Ptr ambient = runtime_ambient_element(ctx.rt(), 1);
    for (i32 i = 0; i < kSlots; ++i) {
      EXPECT_FALSE(Pointer_is_active(m, node, i)) << "cell " << i;
      EXPECT_EQ(Pointer_lookup_element(m, node, i), ambient) << "cell " << i;
    }
    EXPECT_EQ(nm->num_recycled(), 100);
    EXPECT_EQ(nm->num_in_use(), 0);
    ExpectEveryCellOnce(m, node, kSlots, nm, 0);
  }
}

// Owners deactivating their own cells (each cell owned by one thread: i % kOwners), half through
// their NodeCache, while other threads activate and look up every cell, lose and duplicate no
// cell: afterwards every reserved cell is exactly once in a slot, on the free list or on the
// recycled list, and a GC leaves exactly the slots' cells in use.
TEST_P(SNodePointerLayoutTest, OwnedDeactivationRacingActivationsKeepsEveryCellOnce) {
  constexpr i32 kSlots = 512;
  constexpr int kOwners = 4;
  constexpr int kActivators = 2;
  PointerUnderTest p(kSlots, GetParam());
  SNodeTestContext& ctx = p.ctx;
  const Ptr m = p.m, node = p.node;
  NodeManager* const nm = p.nm;
  ASSERT_GE(4096u, Pointer_container_size(kSlots));
  std::vector<NodeCache> caches(kOwners + kActivators);
  for (NodeCache& c : caches) c.init(nm);
  for (int round = 0; round < 4; ++round) {
    for (i32 i = 0; i < kSlots; ++i) Pointer_activate(m, node, i);
    std::atomic<int> go{0};
    std::atomic<int> owners_done{0};
    constexpr int kThreads = kOwners + kActivators;
    std::vector<std::thread> threads;
    for (int t = 0; t < kOwners; ++t) {
      threads.emplace_back([&, t] {
        NodeCache* cache = t % 2 == 0 ? nullptr : &caches[t];
        u32 x = 0x9e3779b9u * static_cast<u32>(t + 1 + 13 * round);
        WaitForAll(go, kThreads);
        for (int pass = 0; pass < 8; ++pass) {
          for (i32 k = 0; k < kSlots / kOwners; ++k) {
            XorShift(x);
            const i32 i = static_cast<i32>(x % (kSlots / kOwners)) * kOwners + t;
            Pointer_deactivate_owned(m, node, i, cache);
          }
        }
        owners_done.fetch_add(1);
      });
    }
    for (int a = 0; a < kActivators; ++a) {
      threads.emplace_back([&, a] {
        NodeCache* cache = a == 0 ? nullptr : &caches[kOwners + a];
        WaitForAll(go, kThreads);
        for (int k = 0; owners_done.load() < kOwners || k < kSlots; ++k) {
          const i32 i = static_cast<i32>((k * 61 + a * 7) % kSlots);
          Pointer_activate_cached(m, node, i, cache);
          Ptr cell = Pointer_cell(m, node, i);
          if (cell != nullptr) {
            EXPECT_GE(nm->locate(cell), 0);
          }
          (void)Pointer_lookup_element(m, node, i);
        }
      });
    }
    for (auto& th : threads) th.join();
    for (NodeCache& c : caches) c.flush();
    ASSERT_EQ(ctx.error(), 0);
    const i32 active = ExpectEveryCellOnce(m, node, kSlots, nm, round);
    ExpectGcKeepsOnlySlotCells(nm, active);
    // Without activators, one pass of the owners leaves every cell inactive and recycled once.
    for (i32 i = 0; i < kSlots; ++i) Pointer_activate(m, node, i);
    std::vector<std::thread> solo;
    for (int t = 0; t < kOwners; ++t) {
      solo.emplace_back([&, t] {
        for (i32 i = t; i < kSlots; i += kOwners) Pointer_deactivate_owned(m, node, i, &caches[t]);
      });
    }
    for (auto& th : solo) th.join();
    for (NodeCache& c : caches) c.flush();
    for (i32 i = 0; i < kSlots; ++i) EXPECT_FALSE(Pointer_is_active(m, node, i)) << i;
    EXPECT_EQ(ExpectEveryCellOnce(m, node, kSlots, nm, round), 0);
    nm->gc_serial();
  }
}

// Batch deactivation does what per-call deactivation does for every listed index, in and across
// blocks: listed active cells become inactive and are recycled once each (repeats and inactive
// cells are harmless), unlisted cells stay active, with and without a NodeCache.
TEST_P(SNodePointerLayoutTest, DeactivateIndicesRecyclesEachListedCellOnce) {
  constexpr i32 kSlots = 500;
  for (bool use_cache : {false, true}) {
    PointerUnderTest p(kSlots, GetParam());
    SNodeTestContext& ctx = p.ctx;
    const Ptr m = p.m, node = p.node;
    NodeManager* const nm = p.nm;
    ASSERT_GE(4096u, Pointer_container_size(kSlots));
    auto cache = std::make_unique<NodeCache>();
    cache->init(nm);
    for (i32 i = 0; i < kSlots; i += 2) Pointer_activate(m, node, i);  // odd cells inactive
    // Every index < 400 once (its even ones active), then 0..9 again: spans several prefetch
    // blocks and recycle batches.
    std::vector<i32> indices;
    for (i32 i = 399; i >= 0; --i) indices.push_back(i);
    for (i32 i = 0; i < 10; ++i) indices.push_back(i);
    ASSERT_GT(static_cast<i32>(indices.size()), 3 * kPointerDeactivateBlock);
    ASSERT_GT(200, kPointerDeactivateRecycleBatch);
    Pointer_deactivate_indices(m, node, indices.data(), static_cast<i32>(indices.size()),
                               use_cache ? cache.get() : nullptr);
    cache->flush();
    EXPECT_EQ(ctx.error(), 0);
    for (i32 i = 0; i < kSlots; ++i) {
      EXPECT_EQ(Pointer_is_active(m, node, i), i >= 400 && i % 2 == 0) << "cell " << i;
    }
    // The 200 active listed cells (the cache allocated nothing, so its flush adds none).
    EXPECT_EQ(nm->num_recycled(), 200);
    EXPECT_EQ(nm->num_in_use(), 50);
    // n == 0 touches nothing.
    Pointer_deactivate_indices(m, node, indices.data(), 0, nullptr);
    EXPECT_EQ(nm->num_recycled(), 200);
  }
}

// Threads deactivating overlapping index sets with the batch form (half through their own
// NodeCache, half through the manager), racing per-call deactivations and activations of the
// same cells, lose and duplicate no cell: afterwards (caches flushed) every reserved cell is
// exactly once in a slot, on the free list or on the recycled list, and without activations
// every listed cell is inactive and recycled exactly once.
TEST_P(SNodePointerLayoutTest, BatchDeactivationRecyclesEveryCellExactlyOnce) {
  constexpr i32 kSlots = 512;
  constexpr int kThreads = 4;
  PointerUnderTest p(kSlots, GetParam());
  SNodeTestContext& ctx = p.ctx;
  const Ptr m = p.m, node = p.node;
  NodeManager* const nm = p.nm;
  ASSERT_GE(4096u, Pointer_container_size(kSlots));
  std::vector<NodeCache> caches(kThreads);
  for (NodeCache& c : caches) c.init(nm);
  for (int round = 0; round < 6; ++round) {
    const bool with_activations = round % 2 == 1;
    for (i32 i = 0; i < kSlots; ++i) Pointer_activate(m, node, i);
    // Thread t lists cells [t * kSlots / 8, t * kSlots / 8 + kSlots / 2) in a shuffled order, so
    // neighbouring threads share half their cells; cells of the last eighth are listed by none.
    std::vector<std::vector<i32>> lists(kThreads);
    for (int t = 0; t < kThreads; ++t) {
      u32 x = 0x9e3779b9u * static_cast<u32>(t + 1 + 31 * round);
      for (i32 k = 0; k < kSlots / 2; ++k) lists[t].push_back(t * (kSlots / 8) + k);
      for (i32 k = kSlots / 2 - 1; k > 0; --k) {
        XorShift(x);
        std::swap(lists[t][k], lists[t][x % static_cast<u32>(k + 1)]);
      }
    }
    std::atomic<int> go{0};
    const int num_threads = kThreads + (with_activations ? 1 : 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        NodeCache* cache = t % 2 == 0 ? nullptr : &caches[t];
        WaitForAll(go, num_threads);
        const std::vector<i32>& list = lists[t];
        const i32 half = static_cast<i32>(list.size()) / 2;
        Pointer_deactivate_indices(m, node, list.data(), half, cache);
        // The second half: per call on one thread of each kind, batched on the others.
        if (t < 2) {
          for (i32 k = half; k < static_cast<i32>(list.size()); ++k) {
            Pointer_deactivate_cached(m, node, list[k], cache);
          }
        } else {
          Pointer_deactivate_indices(m, node, list.data() + half,
                                     static_cast<i32>(list.size()) - half, cache);
        }
      });
    }
    if (with_activations) {
      threads.emplace_back([&] {
        WaitForAll(go, num_threads);
        for (int k = 0; k < 4 * kSlots; ++k) Pointer_activate(m, node, (k * 37) % kSlots);
      });
    }
    for (auto& th : threads) th.join();
    for (NodeCache& c : caches) c.flush();
    ASSERT_EQ(ctx.error(), 0);

    if (!with_activations) {
      // Cells [0, 7/8 kSlots) are listed by some thread; the rest by none.
      for (i32 i = 0; i < kSlots; ++i) {
        EXPECT_EQ(*Pointer_slot(m, node, i) != 0, i >= kSlots / 8 * 7)
            << "slot " << i << " round " << round;
      }
    }
    const i32 active = ExpectEveryCellOnce(m, node, kSlots, nm, round);
    nm->gc_serial();
    EXPECT_EQ(nm->num_in_use(), active);
    EXPECT_EQ(nm->num_reserved(), nm->num_in_use() + nm->num_free());
  }
}

// When the allocator cannot provide a cell, the cell stays inactive and the error is recorded.
TEST(SNodePointerLimitTest, AllocationFailureLeavesCellInactive) {
  SNodeTestContext ctx;
  PointerMeta meta{};
  ctx.FillMeta(&meta.base, 1, 8, 4);
  Ptr m = reinterpret_cast<Ptr>(&meta);
  ASSERT_TRUE(runtime_initialize_snode_allocator(ctx.rt(), 1, 8, 8, 1, /*max_num_chunks=*/1));
  Pointer_activate(m, ctx.root(), 0);
  Pointer_activate(m, ctx.root(), 1);
  EXPECT_TRUE(Pointer_is_active(m, ctx.root(), 0));
  EXPECT_FALSE(Pointer_is_active(m, ctx.root(), 1));
  EXPECT_EQ(ctx.error(), kErrorOutOfChunks);
  EXPECT_EQ(Pointer_lookup_element(m, ctx.root(), 1), runtime_ambient_element(ctx.rt(), 1));
  // Activate-and-get reports the failure instead of handing out the ambient element, and leaves
  // the caller's pointer alone.
  EXPECT_EQ(Pointer_activate_cell(m, ctx.root(), 2), nullptr);
  Ptr untouched = ctx.root();
  EXPECT_FALSE(Pointer_activate_cell_inline(RuntimeMeta{m}, ctx.root(), 3, &untouched));
  EXPECT_EQ(untouched, ctx.root());
  EXPECT_FALSE(Pointer_is_active(m, ctx.root(), 2));
  EXPECT_FALSE(Pointer_is_active(m, ctx.root(), 3));
  // An already-active cell is still handed back.
  EXPECT_EQ(Pointer_activate_cell(m, ctx.root(), 0), Pointer_lookup_element(m, ctx.root(), 0));
}

INSTANTIATE_TEST_SUITE_P(Layouts, SNodePointerLayoutTest,
                         ::testing::Values(CellLayout::kContiguous, CellLayout::kChunked,
                                           CellLayout::kUnbound),
                         [](const ::testing::TestParamInfo<CellLayout>& info) {
                           switch (info.param) {
                             case CellLayout::kContiguous:
                               return "Contiguous";
                             case CellLayout::kChunked:
                               return "Chunked";
                             case CellLayout::kUnbound:
                               return "Unbound";
                           }
                           return "Unknown";
                         });

}  // namespace
}  // namespace sparse_runtime
}  // namespace accelmem

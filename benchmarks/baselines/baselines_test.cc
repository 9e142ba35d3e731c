// Tests that the upstream baselines behave as upstream's runtime does: which cell each allocation
// gets, the order of recycling and reuse, the addresses lookups return, and which cells a
// struct-for over regenerated lists visits.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#include "benchmarks/baselines/upstream_gc.h"
#include "benchmarks/baselines/upstream_list_manager.h"
#include "benchmarks/baselines/upstream_node_manager.h"
#include "benchmarks/baselines/upstream_snodes.h"
#include "benchmarks/baselines/upstream_struct_for.h"
#include "benchmarks/baselines/upstream_thread_pool.h"
#include "gtest/gtest.h"

namespace accelmem {
namespace baselines {
namespace {

bool IsZero(const uint8_t* p, size_t bytes) {
  return std::all_of(p, p + bytes, [](uint8_t b) { return b == 0; });
}

// Elements are numbered in reservation order; each chunk holds a power-of-two count, addresses
// advance by element_size inside a chunk.
TEST(UpstreamListManagerTest, ReservesInOrderAndAllocatesChunksOnTouch) {
  UpstreamListManager list(12, 4);
  EXPECT_EQ(list.num_chunks(), 0);
  for (int32_t i = 0; i < 10; ++i) EXPECT_EQ(list.reserve_new_element(), i);
  EXPECT_EQ(list.size(), 10);
  EXPECT_EQ(list.num_chunks(), 3);
  for (int32_t i = 0; i < 10; ++i) {
    EXPECT_EQ(list.get_element_ptr(i), list.chunk(i / 4) + 12 * (i % 4));
  }
  list.clear();  // lazy: chunks stay
  EXPECT_EQ(list.size(), 0);
  EXPECT_EQ(list.num_chunks(), 3);
  EXPECT_EQ(list.reserve_new_element(), 0);
}

// ptr2index inverts get_element_ptr for every element of every chunk; a pointer inside an element
// gives that element (upstream divides); a pointer outside every chunk gives -1.
TEST(UpstreamListManagerTest, Ptr2IndexScansChunks) {
  UpstreamListManager list(24, 8);
  for (int32_t i = 0; i < 50; ++i) list.reserve_new_element();
  for (int32_t i = 0; i < 50; ++i) EXPECT_EQ(list.ptr2index(list.get_element_ptr(i)), i);
  EXPECT_EQ(list.ptr2index(list.get_element_ptr(17) + 5), 17);
  int32_t outside = 0;
  EXPECT_EQ(list.ptr2index(&outside), -1);
}

// append copies element_size bytes into the next element.
TEST(UpstreamListManagerTest, AppendCopiesTheElement) {
  UpstreamListManager list(sizeof(int32_t), 4);
  for (int32_t v : {7, 8, 9, 10, 11}) list.append(&v);
  EXPECT_EQ(list.size(), 5);
  for (int32_t i = 0; i < 5; ++i) EXPECT_EQ(list.get<int32_t>(i), 7 + i);
}

// Fresh cells come from the data list in order; recycled cells go to the recycled list in
// recycling order; after gc_serial they are zero and handed out again first-recycled first.
TEST(UpstreamNodeManagerTest, RecycleAndGcReuseInRecyclingOrder) {
  UpstreamNodeManager nm(32, 4);
  std::vector<Ptr> cells;
  for (int k = 0; k < 10; ++k) {
    cells.push_back(nm.allocate());
    EXPECT_EQ(cells.back(), nm.data_list->get_element_ptr(k));
    std::memset(cells.back(), 0xab, 32);
  }
  for (int k : {7, 2, 9, 0}) nm.recycle(cells[k]);
  ASSERT_EQ(nm.recycled_list->size(), 4);
  EXPECT_EQ(nm.recycled_list->get<int32_t>(0), 7);
  EXPECT_EQ(nm.recycled_list->get<int32_t>(3), 0);
  nm.gc_serial();
  EXPECT_EQ(nm.recycled_list->size(), 0);
  EXPECT_EQ(nm.free_list->size(), 4);
  EXPECT_EQ(nm.free_list_used, 0);
  for (int k : {7, 2, 9, 0}) {
    Ptr p = nm.allocate();
    EXPECT_EQ(p, cells[k]);
    EXPECT_TRUE(IsZero(p, 32));
  }
  EXPECT_EQ(nm.allocate(), nm.data_list->get_element_ptr(10));  // free list spent: a fresh cell
  EXPECT_EQ(cells[1][0], 0xab);                                 // never recycled: untouched
}

// gc_serial moves the free list's unused entries to its head, before the newly recycled ones.
TEST(UpstreamNodeManagerTest, GcSerialKeepsUnusedFreeEntriesFirst) {
  UpstreamNodeManager nm(16, 4);
  std::vector<Ptr> cells;
  for (int k = 0; k < 6; ++k) cells.push_back(nm.allocate());
  for (int k : {0, 1, 2, 3}) nm.recycle(cells[k]);
  nm.gc_serial();  // free list: 0 1 2 3
  Ptr a = nm.allocate();
  EXPECT_EQ(a, cells[0]);  // cursor 1: entries 1 2 3 unused
  nm.recycle(cells[5]);
  nm.gc_serial();  // free list: 1 2 3 5
  ASSERT_EQ(nm.free_list->size(), 4);
  EXPECT_EQ(nm.free_list->get<int32_t>(0), 1);
  EXPECT_EQ(nm.free_list->get<int32_t>(1), 2);
  EXPECT_EQ(nm.free_list->get<int32_t>(2), 3);
  EXPECT_EQ(nm.free_list->get<int32_t>(3), 5);
}

// The three phases leave the same cells zeroed and free as gc_serial, whatever the launch shape;
// phase 0 with at most half the entries used moves only the last `used` entries to the head.
TEST(UpstreamGcTest, ThreePhasesMatchSerialGc) {
  for (int32_t grid : {1, 3}) {
    for (int32_t block : {1, 4}) {
      UpstreamNodeManager serial(13, 8);  // 13-byte cells: most are not 4-byte aligned
      UpstreamNodeManager parallel(13, 8);
      std::vector<Ptr> s_cells, p_cells;
      for (int k = 0; k < 40; ++k) {
        s_cells.push_back(serial.allocate());
        p_cells.push_back(parallel.allocate());
      }
      for (int k = 0; k < 40; k += 3) {
        serial.recycle(s_cells[k]);
        parallel.recycle(p_cells[k]);
      }
      serial.gc_serial();
      UpstreamGcParallel(&parallel, 1, 1);
      for (int k = 0; k < 3; ++k) {  // use 3 of the 14 free entries
        serial.allocate();
        parallel.allocate();
      }
      for (int k = 1; k < 40; k += 3) {
        std::memset(s_cells[k], 0x5a, 13);
        std::memset(p_cells[k], 0x5a, 13);
        serial.recycle(s_cells[k]);
        parallel.recycle(p_cells[k]);
      }
      serial.gc_serial();
      UpstreamGcParallel(&parallel, grid, block);
      ASSERT_EQ(parallel.free_list->size(), serial.free_list->size());
      EXPECT_EQ(parallel.free_list_used, 0);
      EXPECT_EQ(parallel.recycled_list->size(), 0);
      EXPECT_EQ(parallel.recycle_list_size_backup, 13);
      std::vector<int32_t> s_free, p_free;
      for (int32_t i = 0; i < serial.free_list->size(); ++i) {
        s_free.push_back(serial.free_list->get<int32_t>(i));
        p_free.push_back(parallel.free_list->get<int32_t>(i));
      }
      // 11 unused entries (3 of 14 used): phase 0 moved entries 11..13 to 0..2.
      EXPECT_EQ(p_free[0], s_free[8]);
      EXPECT_EQ(p_free[3], s_free[0]);
      std::sort(s_free.begin(), s_free.end());
      std::sort(p_free.begin(), p_free.end());
      EXPECT_EQ(p_free, s_free);
      for (int k = 1; k < 40; k += 3) EXPECT_TRUE(IsZero(p_cells[k], 13)) << k;
    }
  }
}

// A small runtime with one pointer SNode (id 3), as the benchmarks build it.
struct PointerFixture {
  static constexpr int64_t kN = 64;
  PointerFixture() : nm(8, 16), node(UpstreamPointerContainerBytes(kN)) {
    rt.node_allocators[3] = &nm;
    rt.ambient_elements[3] = ambient;
    context.runtime = &rt;
    meta.snode_id = 3;
    meta.element_size = 8;
    meta.max_num_elements = kN;
    meta.context = &context;
  }
  Ptr m() { return reinterpret_cast<Ptr>(&meta); }
  Ptr n() { return reinterpret_cast<Ptr>(node.data()); }
  UpstreamNodeManager nm;
  UpstreamRuntime rt;
  UpstreamRuntimeContext context;
  UpstreamStructMeta meta;
  std::vector<uint64_t> node;  // kN lock words, then kN pointers (8-byte aligned)
  uint8_t ambient[8] = {};
};

// Activation allocates one cell per pointer cell, stored in the pointer slot after the n lock
// words; a second activation is a no-op; lookups return the cell or the ambient element;
// deactivation recycles the cell (its index goes to the recycled list) and nulls the slot.
TEST(UpstreamSnodesTest, PointerActivateLookupDeactivate) {
  PointerFixture f;
  EXPECT_FALSE(UpstreamPointer_is_active(f.m(), f.n(), 5));
  EXPECT_EQ(UpstreamPointer_lookup_element(f.m(), f.n(), 5), f.ambient);
  UpstreamPointer_activate(f.m(), f.n(), 5);
  UpstreamPointer_activate(f.m(), f.n(), 9);
  UpstreamPointer_activate(f.m(), f.n(), 5);
  EXPECT_EQ(f.nm.data_list->size(), 2);
  Ptr cell5 = f.nm.data_list->get_element_ptr(0);
  EXPECT_EQ(reinterpret_cast<Ptr>(f.node[PointerFixture::kN + 5]), cell5);
  EXPECT_EQ(UpstreamPointer_lookup_element(f.m(), f.n(), 5), cell5);
  EXPECT_EQ(UpstreamPointer_lookup_element(f.m(), f.n(), 9), f.nm.data_list->get_element_ptr(1));
  EXPECT_TRUE(UpstreamPointer_is_active(f.m(), f.n(), 9));
  EXPECT_EQ(UpstreamPointer_get_num_elements(f.m(), f.n()), PointerFixture::kN);
  using Inlined = UpstreamInlinedPointer<PointerFixture::kN>;
  EXPECT_EQ(Inlined::lookup_element(f.n(), 5, f.ambient), cell5);
  EXPECT_EQ(Inlined::lookup_element(f.n(), 6, f.ambient), f.ambient);
  EXPECT_TRUE(Inlined::is_active(f.n(), 9));
  Inlined::activate(f.n(), 6, &f.nm);
  EXPECT_EQ(UpstreamPointer_lookup_element(f.m(), f.n(), 6), f.nm.data_list->get_element_ptr(2));
  UpstreamPointer_deactivate(f.m(), f.n(), 5);
  UpstreamPointer_deactivate(f.m(), f.n(), 5);
  EXPECT_FALSE(UpstreamPointer_is_active(f.m(), f.n(), 5));
  ASSERT_EQ(f.nm.recycled_list->size(), 1);
  EXPECT_EQ(f.nm.recycled_list->get<int32_t>(0), 0);
  f.nm.gc_serial();
  UpstreamPointer_activate(f.m(), f.n(), 40);  // reuses the recycled cell
  EXPECT_EQ(UpstreamPointer_lookup_element(f.m(), f.n(), 40), cell5);
  for (int32_t i = 0; i < PointerFixture::kN; ++i) EXPECT_EQ(f.node[i], 0u);  // locks released
}

// Dense and bitmasked cells sit at node + element_size * i; bitmasked mask words follow the
// n cells, one bit per cell.
TEST(UpstreamSnodesTest, DenseAndBitmaskedAddressesAndBits) {
  constexpr int64_t kN = 100;
  UpstreamStructMeta meta;
  meta.element_size = 12;
  meta.max_num_elements = kN;
  Ptr m = reinterpret_cast<Ptr>(&meta);
  std::vector<uint32_t> storage(UpstreamBitmaskedContainerBytes(12, kN) / 4 + 1);
  Ptr node = reinterpret_cast<Ptr>(storage.data());
  EXPECT_EQ(UpstreamDense_lookup_element(m, node, 7), node + 84);
  EXPECT_EQ(UpstreamInlinedDense<12>::lookup_element(node, 7), node + 84);
  EXPECT_EQ(UpstreamBitmasked_lookup_element(m, node, 99), node + 12 * 99);
  using Inlined = UpstreamInlinedBitmasked<12, kN>;
  EXPECT_EQ(Inlined::lookup_element(node, 99), node + 12 * 99);
  UpstreamBitmasked_activate(m, node, 33);
  Inlined::activate(node, 70);
  EXPECT_EQ(storage[300 + 1], 2u);  // mask word 1 (cells 32..63) at byte 1200
  EXPECT_TRUE(UpstreamBitmasked_is_active(m, node, 70));
  EXPECT_TRUE(Inlined::is_active(node, 33));
  EXPECT_FALSE(UpstreamBitmasked_is_active(m, node, 34));
  UpstreamBitmasked_deactivate(m, node, 33);
  EXPECT_FALSE(Inlined::is_active(node, 33));
  EXPECT_TRUE(IsZero(node, 1200));  // the cells are never written by the mask operations
}

// Appends number elements 0, 1, ...; element i lives in chunk i / chunk_size of the linked list,
// after the chunk's next pointer; deactivation recycles every chunk and resets the length.
TEST(UpstreamSnodesTest, DynamicAppendWalksTheChunkList) {
  constexpr int32_t kChunk = 4;
  UpstreamNodeManager nm(UpstreamDynamicChunkBytes(4, kChunk), 8);
  UpstreamRuntime rt;
  uint8_t ambient[4] = {};
  rt.node_allocators[1] = &nm;
  rt.ambient_elements[1] = ambient;
  UpstreamRuntimeContext context{&rt};
  UpstreamDynamicMeta meta;
  meta.base.snode_id = 1;
  meta.base.element_size = 4;
  meta.base.max_num_elements = 1000;
  meta.base.context = &context;
  meta.chunk_size = kChunk;
  Ptr m = reinterpret_cast<Ptr>(&meta);
  UpstreamDynamicNode dyn{};
  Ptr node = reinterpret_cast<Ptr>(&dyn);
  for (int32_t k = 0; k < 10; ++k) EXPECT_EQ(UpstreamDynamic_append(m, node, 100 + k), k);
  EXPECT_EQ(UpstreamDynamic_get_num_elements(m, node), 10);
  EXPECT_EQ(nm.data_list->size(), 3);  // 3 chunks of 4
  for (int32_t k = 0; k < 10; ++k) {
    Ptr chunk = nm.data_list->get_element_ptr(k / kChunk);
    Ptr cell = UpstreamDynamic_lookup_element(m, node, k);
    EXPECT_EQ(cell, chunk + 8 + 4 * (k % kChunk));
    EXPECT_EQ(*reinterpret_cast<int32_t*>(cell), 100 + k);
  }
  EXPECT_EQ(UpstreamDynamic_lookup_element(m, node, 10), ambient);
  UpstreamDynamic_deactivate(m, node);
  EXPECT_EQ(UpstreamDynamic_get_num_elements(m, node), 0);
  EXPECT_EQ(dyn.ptr, nullptr);
  ASSERT_EQ(nm.recycled_list->size(), 3);
  for (int32_t c = 0; c < 3; ++c) EXPECT_EQ(nm.recycled_list->get<int32_t>(c), c);
}

// Every task id of a launch runs once, on any number of workers, launch after launch.
TEST(UpstreamThreadPoolTest, RunsEveryTaskOnce) {
  UpstreamThreadPool pool(3);
  for (int threads : {1, 2, 3, 5}) {
    for (int splits : {0, 1, 7, 1000}) {
      std::vector<int> hits(static_cast<size_t>(splits), 0);
      std::mutex mu;
      struct Ctx {
        std::vector<int>* hits;
        std::mutex* mu;
      } ctx{&hits, &mu};
      pool.Run(splits, threads, &ctx, [](void* p, int thread_id, int i) {
        Ctx& c = *static_cast<Ctx*>(p);
        std::lock_guard<std::mutex> lock(*c.mu);
        ++(*c.hits)[static_cast<size_t>(i)];
        EXPECT_GE(thread_id, 0);
        EXPECT_LT(thread_id, 3);
      });
      EXPECT_EQ(std::count(hits.begin(), hits.end(), 1), splits) << threads << " " << splits;
    }
  }
}

// Visited cells: (index 0, index 1, address).
using Cell = std::tuple<int32_t, int32_t, Ptr>;
using CellSet = std::set<Cell>;
using CellList = std::vector<Cell>;

// A two-level tree root -> pointer(P0 x P1) -> dense(D0 x D1) of 4-byte cells (a pointer cell
// holds the dense container), pointer cells from an UpstreamNodeManager; some pointer cells
// active (a fixed random choice).
template <int32_t P0, int32_t P1, int32_t D0, int32_t D1>
struct ListgenFixture {
  using PointerS = UpstreamPointerSNode<UpstreamAxes<P0, P1>>;
  using DenseS = UpstreamDenseSNode<UpstreamAxes<D0, D1>, 4>;
  static constexpr int64_t kBlocks = int64_t{P0} * P1;
  static constexpr int64_t kCells = int64_t{D0} * D1;

  explicit ListgenFixture(double active_fraction)
      : nm(4 * kCells, 16),
        container(2 * kBlocks, 0),
        root_list(NewUpstreamElementList()),
        pointer_list(NewUpstreamElementList()),
        dense_list(NewUpstreamElementList()) {
    pointer.ambient = ambient;
    std::mt19937 rng(11);
    for (int32_t b = 0; b < kBlocks; ++b) {
      if (std::uniform_real_distribution<double>(0, 1)(rng) < active_fraction) {
        PointerS::Inlined::activate(root(), b, &nm);
        active.push_back(b);
      }
    }
    UpstreamInitRootList(root_list.get(), root());
  }
  Ptr root() { return reinterpret_cast<Ptr>(container.data()); }  // the pointer at offset 0
  // clear_list + listgen for each SNode below the root, as before every struct-for.
  void Listgen() {
    pointer_list->clear();
    UpstreamElementListgenRoot(UpstreamRootSNode{}, *root_list, pointer, pointer_list.get());
    dense_list->clear();
    UpstreamElementListgenNonroot(pointer, *pointer_list, DenseS{}, dense_list.get());
  }
  // The model: (i, j, address) of every cell of every active block.
  CellSet Model() {
    CellSet cells;
    for (int32_t b : active) {
      Ptr block = Block(b);
      for (int32_t c = 0; c < kCells; ++c) {
        cells.emplace((b / P1) * D0 + c / D1, (b % P1) * D1 + c % D1, block + 4 * c);
      }
    }
    return cells;
  }
  Ptr Block(int32_t b) {
    return reinterpret_cast<Ptr>(container[static_cast<size_t>(kBlocks + b)]);
  }
  // Pointer_deactivate: recycle the block, null its slot.
  void Deactivate(int32_t b) {
    nm.recycle(Block(b));
    container[static_cast<size_t>(kBlocks + b)] = 0;
  }
  // The cells a struct-for visits on `threads` workers, with how often each is visited.
  CellList Visit(UpstreamThreadPool* pool, int threads) {
    std::vector<CellList> seen(static_cast<size_t>(pool->max_num_threads()));
    const DenseS leaf;
    UpstreamParallelStructFor(
        pool, threads, *dense_list, UpstreamStructForShapeOf(kCells, kBlocks),
        [&](const UpstreamElement& e, int32_t lower, int32_t upper, int thread_id) {
          UpstreamStructForCells(
              leaf, e, lower, upper, [&](Ptr cell, const UpstreamPhysicalCoordinates& coord) {
                seen[static_cast<size_t>(thread_id)].emplace_back(coord.val[0], coord.val[1], cell);
              });
        });
    CellList all;
    for (const auto& s : seen) all.insert(all.end(), s.begin(), s.end());
    std::sort(all.begin(), all.end());
    return all;
  }

  UpstreamNodeManager nm;
  std::vector<uint64_t> container;  // kBlocks lock words, then kBlocks pointers
  uint8_t ambient[4 * kCells] = {};
  PointerS pointer;
  std::unique_ptr<UpstreamListManager> root_list, pointer_list, dense_list;
  std::vector<int32_t> active;
};

// 64 x 40 blocks of 4 x 4 cells: the root's listgen cuts the 2,560 pointer cells into elements
// of 1,024, 1,024 and 512; the nonroot listgen appends one element per active block, in block
// order, with the block's coordinates; the struct-for visits exactly the active cells, each once,
// at the dense container's addresses, on one and on two workers, and again after a change.
TEST(UpstreamStructForTest, VisitsExactlyTheActiveCells2D) {
  using F = ListgenFixture<64, 40, 4, 4>;
  F f(0.3);
  f.Listgen();
  ASSERT_EQ(f.pointer_list->size(), 3);
  EXPECT_EQ(f.pointer_list->get<UpstreamElement>(2).loop_bounds[0], 2048);
  EXPECT_EQ(f.pointer_list->get<UpstreamElement>(2).loop_bounds[1], 2560);
  ASSERT_EQ(f.dense_list->size(), static_cast<int32_t>(f.active.size()));
  for (size_t k = 0; k < f.active.size(); ++k) {
    const UpstreamElement& e = f.dense_list->get<UpstreamElement>(static_cast<int32_t>(k));
    EXPECT_EQ(e.element, f.Block(f.active[k]));
    EXPECT_EQ(e.pcoord.val[0], f.active[k] / 40);
    EXPECT_EQ(e.pcoord.val[1], f.active[k] % 40);
    EXPECT_EQ(e.loop_bounds[1], 16);
  }
  UpstreamThreadPool pool(2);
  for (int threads : {1, 2}) {
    const auto visited = f.Visit(&pool, threads);
    const auto model = f.Model();
    EXPECT_EQ(visited.size(), model.size()) << threads;  // each cell once
    EXPECT_EQ(CellSet(visited.begin(), visited.end()), model);
  }
  // Deactivate a block, activate another: the regenerated lists follow.
  f.Deactivate(f.active[0]);
  f.active.erase(f.active.begin());
  int32_t fresh = 0;
  while (std::find(f.active.begin(), f.active.end(), fresh) != f.active.end()) ++fresh;
  F::PointerS::Inlined::activate(f.root(), fresh, &f.nm);
  f.active.push_back(fresh);
  f.Listgen();
  const auto visited = f.Visit(&pool, 2);
  EXPECT_EQ(visited.size(), f.Model().size());
  EXPECT_EQ(CellSet(visited.begin(), visited.end()), f.Model());
}

// 1-D: 200 blocks of 2,048 cells: each active block gives two list elements ([0, 1024) and
// [1024, 2048)), each split into 8 tasks of 128 cells; the struct-for still visits each active
// cell once, with its global index. No active block: nothing is visited.
TEST(UpstreamStructForTest, VisitsExactlyTheActiveCells1DLongBlocks) {
  using F = ListgenFixture<200, 1, 2048, 1>;
  const UpstreamStructForShape shape = UpstreamStructForShapeOf(2048, 200);
  EXPECT_EQ(shape.element_size, 1024);
  EXPECT_EQ(shape.element_split, 8);
  EXPECT_EQ(UpstreamStructForShapeOf(2048, 50).element_split, 21);  // block_dim 50: 1024 / 50
  F f(0.5);
  f.Listgen();
  EXPECT_EQ(f.pointer_list->size(), 1);
  ASSERT_EQ(f.dense_list->size(), 2 * static_cast<int32_t>(f.active.size()));
  UpstreamThreadPool pool(2);
  const auto visited = f.Visit(&pool, 2);
  EXPECT_EQ(visited.size(), f.Model().size());
  EXPECT_EQ(CellSet(visited.begin(), visited.end()), f.Model());
  F none(0.0);
  none.Listgen();
  EXPECT_EQ(none.dense_list->size(), 0);
  EXPECT_TRUE(none.Visit(&pool, 2).empty());
}

}  // namespace
}  // namespace baselines
}  // namespace accelmem

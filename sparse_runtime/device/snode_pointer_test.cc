#include "sparse_runtime/device/snode_pointer.h"

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
#include "sparse_runtime/snode_testing.h"

namespace accelmem {
namespace sparse_runtime {
namespace {

class SNodePointerTest : public ::testing::Test {
 protected:
  SNodePointerTest() {
    ctx_.FillMeta(&meta_.base, 1, 32, 8);
    m_ = reinterpret_cast<Ptr>(&meta_);
    nm_ = ctx_.MakeAllocator(1, 32);
    Pointer_bind_cells(&meta_, nm_);
  }
  // After racing activations of `slots` slots: one cell in use per slot, and every other cell
  // ever reserved (a lock-free loser's) recycled.
  void ExpectOneCellInUsePerSlot(i32 slots) {
    EXPECT_EQ(nm_->num_in_use(), slots);
    EXPECT_EQ(nm_->data_list.size(), slots + nm_->num_recycled());
  }
  SNodeTestContext ctx_;
  PointerMeta meta_{};
  Ptr m_ = nullptr;
  NodeManager* nm_ = nullptr;
};

// Only a change of the active set marks the meta (the host's struct-for list cache reads it):
// an activation that installs a cell and a deactivation that takes one, on every form.
TEST_F(SNodePointerTest, StructureChangesMarkTheMeta) {
  Ptr node = ctx_.root();
  EXPECT_EQ(meta_.base.structure_changed, 0u);
  Pointer_activate(m_, node, 2);
  EXPECT_EQ(meta_.base.structure_changed, 1u);
  meta_.base.structure_changed = 0;
  Pointer_activate(m_, node, 2);                  // already active
  EXPECT_FALSE(Pointer_deactivate(m_, node, 5));  // never active
  EXPECT_EQ(meta_.base.structure_changed, 0u);
  EXPECT_TRUE(Pointer_deactivate(m_, node, 2));
  EXPECT_EQ(meta_.base.structure_changed, 1u);
  meta_.base.structure_changed = 0;
  Pointer_activate(m_, node, 4);
  Pointer_activate(m_, node, 6);
  meta_.base.structure_changed = 0;
  const i32 indices[] = {4, 6};
  Pointer_deactivate_indices(m_, node, indices, 2, nullptr);
  EXPECT_EQ(meta_.base.structure_changed, 1u);
  // Through a NodeCache: the cached per-call form and the owner's form.
  NodeCache cache{};
  cache.init(nm_);
  Pointer_activate_cached(m_, node, 1, &cache);
  Pointer_activate_cached(m_, node, 3, &cache);
  meta_.base.structure_changed = 0;
  EXPECT_FALSE(Pointer_deactivate_cached(m_, node, 2, &cache));  // inactive
  Pointer_deactivate_owned(m_, node, 2, &cache);
  EXPECT_EQ(meta_.base.structure_changed, 0u);
  EXPECT_TRUE(Pointer_deactivate_cached(m_, node, 1, &cache));
  EXPECT_EQ(meta_.base.structure_changed, 1u);
  meta_.base.structure_changed = 0;
  Pointer_deactivate_owned(m_, node, 3, &cache);
  EXPECT_EQ(meta_.base.structure_changed, 1u);
  cache.flush();
}

// Inactive cells resolve to the shared, all-zero ambient element.
TEST_F(SNodePointerTest, InactiveCellsReadAmbient) {
  Ptr node = ctx_.root();
  EXPECT_FALSE(Pointer_is_active(m_, node, 3));
  Ptr ambient = runtime_ambient_element(ctx_.rt(), 1);
  EXPECT_EQ(Pointer_lookup_element(m_, node, 3), ambient);
  for (int b = 0; b < 32; ++b) EXPECT_EQ(ambient[b], 0);
}

// Activation takes a zeroed cell from the NodeManager and publishes its index + 1 in slot i.
TEST_F(SNodePointerTest, ActivationAllocatesOneCell) {
  Ptr node = ctx_.root();
  Pointer_activate(m_, node, 5);
  EXPECT_TRUE(Pointer_is_active(m_, node, 5));
  Ptr cell = Pointer_lookup_element(m_, node, 5);
  EXPECT_EQ(*Pointer_slot(m_, node, 5), 1u);  // cell index 0, stored + 1
  EXPECT_EQ(Pointer_cell(m_, node, 5), cell);
  EXPECT_EQ(nm_->locate(cell), 0);
  Pointer_activate(m_, node, 5);  // already active: no new cell
  EXPECT_EQ(nm_->data_list.size(), 1);
  EXPECT_EQ(Pointer_container_size(8), 32u);  // one 4-byte slot per cell, no lock array
}

// Deactivation recycles the cell (O(1)) and resets the slot to 0; twice is harmless, and only the
// call that took the cell says so.
TEST_F(SNodePointerTest, DeactivationRecyclesOnce) {
  Ptr node = ctx_.root();
  EXPECT_FALSE(Pointer_deactivate(m_, node, 2));  // never active
  Pointer_activate(m_, node, 2);
  Ptr cell = Pointer_lookup_element(m_, node, 2);
  std::memset(cell, 9, 32);
  EXPECT_TRUE(Pointer_deactivate(m_, node, 2));
  EXPECT_FALSE(Pointer_deactivate(m_, node, 2));
  EXPECT_FALSE(Pointer_is_active(m_, node, 2));
  EXPECT_EQ(nm_->num_recycled(), 1);
  EXPECT_EQ(Pointer_lookup_element(m_, node, 2), runtime_ambient_element(ctx_.rt(), 1));
  // After GC the same cell comes back, zeroed (FIFO reuse).
  nm_->gc_serial();
  Pointer_activate(m_, node, 7);
  EXPECT_EQ(Pointer_lookup_element(m_, node, 7), cell);
  for (int b = 0; b < 32; ++b) EXPECT_EQ(cell[b], 0);
}

// Racing activations of one cell leave exactly one cell in use; a lock-free loser's cell is
// recycled, and a claiming activation (the CUDA protocol) allocates no second cell at all.
TEST_F(SNodePointerTest, ConcurrentActivationLeavesOneCellInUse) {
  Ptr node = ctx_.root();
  for (int round = 0; round < 8; ++round) {
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t) threads.emplace_back([&] { Pointer_activate(m_, node, round); });
    for (auto& th : threads) th.join();
  }
  ExpectOneCellInUsePerSlot(8);
  if (kPointerClaimsSlot) {
    EXPECT_EQ(nm_->num_recycled(), 0);
  }
}

// Where activation claims slots (CUDA), a claimed slot reads as inactive in every form -- is_active
// false, no cell, lookups give the ambient element -- and deactivation leaves it alone.
TEST_F(SNodePointerTest, ClaimedSlotReadsInactive) {
  if (!kPointerClaimsSlot) GTEST_SKIP() << "lock-free activation never claims a slot";
  Ptr node = ctx_.root();
  const StaticMeta<8, 32> sm{m_};
  PointerView<StaticMeta<8, 32>, true> cv;
  ASSERT_TRUE(Pointer_contiguous_view(sm, &cv));
  const Ptr ambient = runtime_ambient_element(ctx_.rt(), 1);
  *Pointer_slot(m_, node, 2) = kPointerClaimed;
  EXPECT_FALSE(Pointer_is_active(m_, node, 2));
  EXPECT_FALSE(Pointer_is_active_inline(sm, node, 2));
  EXPECT_EQ(Pointer_cell(m_, node, 2), nullptr);
  EXPECT_EQ(Pointer_lookup_element(m_, node, 2), ambient);
  EXPECT_EQ(Pointer_lookup_element_inline(sm, node, 2), ambient);
  EXPECT_EQ(Pointer_lookup_element_inline(Pointer_view(sm), node, 2), ambient);
  EXPECT_EQ(Pointer_lookup_element_inline(cv, node, 2), ambient);
  Ptr cell = nullptr;
  EXPECT_FALSE(Pointer_lookup_cell_view(m_, node, 2, Pointer_cells_origin(m_),
                                        Pointer_cells_stride(m_), &cell));
  EXPECT_EQ(cell, nullptr);
  NodeCache cache{};
  cache.init(nm_);
  EXPECT_FALSE(Pointer_deactivate(m_, node, 2));
  EXPECT_FALSE(Pointer_deactivate_cached(m_, node, 2, &cache));
  Pointer_deactivate_owned(m_, node, 2, nullptr);
  const i32 indices[] = {2, 2};
  Pointer_deactivate_indices(m_, node, indices, 2, nullptr);
  Pointer_deactivate_indices(m_, node, indices, 2, &cache);
  EXPECT_EQ(*Pointer_slot(m_, node, 2), kPointerClaimed);
  EXPECT_EQ(cache.num_cached_recycled(), 0);
  EXPECT_EQ(nm_->num_recycled(), 0);
  *Pointer_slot(m_, node, 2) = 0;
}

// Where activation claims slots, an activation that finds the slot claimed waits for the
// claimer's cell and hands back that cell, allocating none of its own.
TEST_F(SNodePointerTest, ActivationWaitsForTheClaimersCell) {
  if (!kPointerClaimsSlot) GTEST_SKIP() << "lock-free activation never claims a slot";
  Ptr node = ctx_.root();
  const i32 k = nm_->allocate_index();  // the claimer's cell
  ASSERT_GE(k, 0);
  *Pointer_slot(m_, node, 5) = kPointerClaimed;
  std::atomic<bool> returned{false};
  Ptr got = nullptr;
  std::thread waiter([&] {
    got = Pointer_activate_cell(m_, node, 5);
    returned.store(true);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(returned.load()) << "returned while the slot was claimed";
  atomic_store_release(Pointer_slot(m_, node, 5), Pointer_slot_value(k));  // the claimer publishes
  waiter.join();
  EXPECT_EQ(got, nm_->get_cell(k));
  EXPECT_EQ(nm_->data_list.size(), 1);  // the waiter allocated nothing
  EXPECT_EQ(nm_->num_recycled(), 0);
}

// The losing side of a race, made deterministic: a cell published in a slot that holds a cell
// already is given back -- cached free again (the cache hands it out next, and nothing is
// recycled), or recycled into the manager without a cache -- and the slot keeps its cell.
TEST_F(SNodePointerTest, PublishingIntoAnActiveSlotGivesTheCellBack) {
  Ptr node = ctx_.root();
  Pointer_activate(m_, node, 4);
  const PointerSlot held = *Pointer_slot(m_, node, 4);
  const i32 k = nm_->allocate_index();
  ASSERT_GE(k, 0);
  EXPECT_FALSE(Pointer_publish_cell(m_, node, 4, k, nullptr));
  EXPECT_EQ(*Pointer_slot(m_, node, 4), held);
  ASSERT_EQ(nm_->num_recycled(), 1);
  EXPECT_EQ(nm_->recycled_list.get<i32>(0), k);

  NodeCache cache{};
  cache.init(nm_);
  const i32 c = cache.allocate_index();
  ASSERT_GE(c, 0);
  const i32 after_refill = cache.num_cached_free();
  EXPECT_FALSE(Pointer_publish_cell(m_, node, 4, c, &cache));
  EXPECT_EQ(*Pointer_slot(m_, node, 4), held);
  EXPECT_EQ(cache.num_cached_free(), after_refill + 1);
  EXPECT_EQ(cache.num_cached_recycled(), 0);
  EXPECT_EQ(nm_->num_recycled(), 1);
  EXPECT_EQ(cache.allocate_index(), c);  // handed out next

  // Into an inactive slot the cell is published, and is what the slot's lookups return.
  EXPECT_TRUE(Pointer_publish_cell(m_, node, 6, c, &cache));
  EXPECT_EQ(*Pointer_slot(m_, node, 6), Pointer_slot_value(c));
  EXPECT_EQ(Pointer_lookup_element(m_, node, 6), nm_->get_cell(c));
  cache.flush();
  EXPECT_EQ(ctx_.error(), 0);
}

// The inline forms over a compile-time meta and over the run-time meta do what the X_* entry
// points do: same slot, same cell, same ambient element, one allocation per cell.
TEST_F(SNodePointerTest, InlineFormsMatchEntryPoints) {
  Ptr node = ctx_.root();
  const StaticMeta<8, 32> sm{m_};
  const RuntimeMeta rm{m_};
  ASSERT_TRUE(sm.matches());
  EXPECT_FALSE((StaticMeta<8, 16>{m_}.matches()));
  Ptr ambient = runtime_ambient_element(ctx_.rt(), 1);
  for (i32 i = 0; i < 8; ++i) {
    EXPECT_EQ(Pointer_slot_of(sm, node, i), Pointer_slot(m_, node, i));
    EXPECT_FALSE(Pointer_is_active_inline(sm, node, i));
    EXPECT_EQ(Pointer_lookup_element_inline(sm, node, i), ambient);
    EXPECT_EQ(Pointer_lookup_element_inline(rm, node, i), ambient);
  }
  Pointer_activate_inline(sm, node, 3);
  Pointer_activate_inline(sm, node, 3);  // already active: the fast path, no new cell
  Pointer_activate_inline(rm, node, 3);
  Pointer_activate(m_, node, 3);
  EXPECT_EQ(nm_->data_list.size(), 1);
  EXPECT_TRUE(Pointer_is_active_inline(sm, node, 3));
  EXPECT_TRUE(Pointer_is_active_inline(rm, node, 3));
  Ptr cell = Pointer_lookup_element(m_, node, 3);
  EXPECT_NE(cell, ambient);
  EXPECT_EQ(Pointer_lookup_element_inline(sm, node, 3), cell);
  EXPECT_EQ(Pointer_lookup_element_inline(rm, node, 3), cell);
  Pointer_deactivate_inline(sm, node, 3);
  Pointer_deactivate_inline(sm, node, 3);  // already inactive: nothing recycled
  EXPECT_EQ(nm_->num_recycled(), 1);
  EXPECT_FALSE(Pointer_is_active(m_, node, 3));
  EXPECT_EQ(Pointer_lookup_element_inline(sm, node, 3), ambient);
}

// A PointerStaticMeta (the cells' stride a constant) gives the addresses the entry points give:
// lookups of active and inactive cells, activate-and-hand-back, through itself and through both
// views; matches() holds for the stride the manager uses (32 for 32-byte cells) and not for
// another, and holds for any stride when the cells are chunked (the constant is then unused).
TEST_F(SNodePointerTest, CompileTimeStrideGivesTheEntryPointsAddresses) {
  Ptr node = ctx_.root();
  // The stride as a kernel builder writes it: NodeManager's rule, at compile time.
  static_assert(NodeManager::cell_stride(4, 4) == 8 && NodeManager::cell_stride(20, 8) == 24);
  using Static = PointerStaticMeta<8, 32, NodeManager::cell_stride(32, 8)>;
  const Static sm{m_};
  ASSERT_EQ(Pointer_cells_stride(m_), 32u);
  ASSERT_TRUE(sm.matches());
  EXPECT_FALSE((PointerStaticMeta<8, 32, 40>{m_}.matches()));
  EXPECT_FALSE((PointerStaticMeta<8, 16, 32>{m_}.matches()));
  PointerView<Static, true> cv;
  ASSERT_TRUE(Pointer_contiguous_view(sm, &cv));
  const PointerView<Static> v = Pointer_view(sm);
  for (i32 i : {1, 4, 6}) Pointer_activate(m_, node, i);  // cells 0, 1, 2 of the manager
  for (i32 i = 0; i < 8; ++i) {
    const Ptr expected = Pointer_lookup_element(m_, node, i);
    EXPECT_EQ(Pointer_lookup_element_inline(sm, node, i), expected) << i;
    EXPECT_EQ(Pointer_lookup_element_inline(v, node, i), expected) << i;
    EXPECT_EQ(Pointer_lookup_element_inline(cv, node, i), expected) << i;
  }
  for (i32 i = 0; i < 8; ++i) {
    Ptr a = nullptr, b = nullptr, c = nullptr;
    ASSERT_TRUE(Pointer_activate_cell_inline(sm, node, i, &a));
    ASSERT_TRUE(Pointer_activate_cell_inline(v, node, i, &b));
    ASSERT_TRUE(Pointer_activate_cell_inline(cv, node, i, &c));
    const Ptr expected = Pointer_lookup_element(m_, node, i);
    EXPECT_EQ(a, expected) << i;
    EXPECT_EQ(b, expected) << i;
    EXPECT_EQ(c, expected) << i;
    EXPECT_EQ(expected, nm_->get_cell(Pointer_cell_index(*Pointer_slot(m_, node, i)))) << i;
  }
  EXPECT_EQ(nm_->data_list.size(), 8);
  // The constant is what a static meta's lookup uses: a mismatched one (which matches() rejects)
  // places cells at origin + v * 40. Its views do not: no contiguous view is made, and the plain
  // view finds the cells through the chunk table, for lookups and activations alike.
  const PointerStaticMeta<8, 32, 40> wrong{m_};
  PointerView<PointerStaticMeta<8, 32, 40>, true> wrong_cv;
  EXPECT_FALSE(Pointer_contiguous_view(wrong, &wrong_cv));
  const PointerView<PointerStaticMeta<8, 32, 40>> wrong_v = Pointer_view(wrong);
  const uptr origin = Pointer_cells_origin(m_);
  for (i32 i = 0; i < 8; ++i) {
    const PointerSlot v = *Pointer_slot(m_, node, i);
    EXPECT_EQ(Pointer_lookup_element_inline(wrong, node, i), reinterpret_cast<Ptr>(origin + v * 40))
        << i;
    const Ptr expected = Pointer_lookup_element(m_, node, i);
    EXPECT_EQ(Pointer_lookup_element_inline(wrong_v, node, i), expected) << i;
    Ptr cell = nullptr;
    ASSERT_TRUE(Pointer_activate_cell_inline(wrong_v, node, i, &cell));
    EXPECT_EQ(cell, expected) << i;
  }
  // Chunked cells: the constant is never used, so any stride matches.
  PointerMeta chunked = meta_;
  chunked.cell_origin = 0;
  chunked.cell_stride = 0;
  EXPECT_TRUE((PointerStaticMeta<8, 32, 40>{reinterpret_cast<Ptr>(&chunked)}.matches()));
  EXPECT_EQ(ctx_.error(), 0);
}

// Pointer_with_view calls its function once, with the contiguous view where the cells are
// contiguous and the general view where they are chunked or the static stride mismatches, and
// hands back what the function returns; lookups through the view it passes are the entry points'.
TEST_F(SNodePointerTest, WithViewChoosesTheContiguousViewOnlyWhereItHolds) {
  const Ptr node = ctx_.root();
  for (i32 i : {0, 5}) Pointer_activate(m_, node, i);
  // Returns 1 for the contiguous view, 2 for the general one, after checking its lookups.
  auto probe = [&](const auto& m) {
    int calls = 0;
    const int kind = Pointer_with_view(m, [&](const auto& view) {
      ++calls;
      for (i32 i = 0; i < 8; ++i) {
        EXPECT_EQ(Pointer_lookup_element_inline(view, node, i), Pointer_lookup_element(m_, node, i))
            << i;
      }
      using View = std::decay_t<decltype(view)>;
      return std::is_same_v<View, PointerView<std::decay_t<decltype(m)>, true>> ? 1 : 2;
    });
    EXPECT_EQ(calls, 1);
    return kind;
  };
  EXPECT_EQ(probe(PointerStaticMeta<8, 32, 32>{m_}), 1);
  EXPECT_EQ(probe(RuntimeMeta{m_}), 1);
  EXPECT_EQ(probe(PointerStaticMeta<8, 32, 40>{m_}), 2);  // the wrong stride: chunk table
  PointerMeta chunked = meta_;
  chunked.cell_origin = 0;
  EXPECT_EQ(probe(PointerStaticMeta<8, 32, 32>{reinterpret_cast<Ptr>(&chunked)}), 2);
  EXPECT_EQ(ctx_.error(), 0);
}

// Racing inline activations of one cell (through a compile-time meta) allocate exactly one cell.
TEST_F(SNodePointerTest, ConcurrentInlineActivationAllocatesOnce) {
  Ptr node = ctx_.root();
  const StaticMeta<8, 32> sm{m_};
  for (int round = 0; round < 8; ++round) {
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t) {
      threads.emplace_back([&] { Pointer_activate_inline(sm, node, round); });
    }
    for (auto& th : threads) th.join();
  }
  ExpectOneCellInUsePerSlot(8);
  for (i32 i = 0; i < 8; ++i) EXPECT_TRUE(Pointer_is_active(m_, node, i));
}

// Racing activations that hand back the cell, of one cell from four threads through each form
// (out of line, through the StaticMeta, through a contiguous view), leave one cell in use (the
// losers' cells recycled), and every thread gets that cell: the one later lookups return.
TEST_F(SNodePointerTest, ConcurrentActivateCellHandsEveryThreadTheSameCell) {
  Ptr node = ctx_.root();
  const StaticMeta<8, 32> sm{m_};
  PointerView<StaticMeta<8, 32>, true> cv;
  ASSERT_TRUE(Pointer_contiguous_view(sm, &cv));
  constexpr int kThreads = 4;
  for (int round = 0; round < 8; ++round) {
    std::atomic<int> go{0};
    std::vector<Ptr> got(kThreads, nullptr);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        go.fetch_add(1);
        while (go.load() < kThreads) {
        }
        if (t % 3 == 0) {
          got[t] = Pointer_activate_cell(m_, node, round);
        } else if (t % 3 == 1) {
          EXPECT_TRUE(Pointer_activate_cell_inline(sm, node, round, &got[t]));
        } else {
          EXPECT_TRUE(Pointer_activate_cell_inline(cv, node, round, &got[t]));
        }
      });
    }
    for (auto& th : threads) th.join();
    const Ptr cell = Pointer_lookup_element(m_, node, round);
    EXPECT_NE(cell, runtime_ambient_element(ctx_.rt(), 1));
    for (int t = 0; t < kThreads; ++t)
      EXPECT_EQ(got[t], cell) << "round " << round << " thread " << t;
  }
  ExpectOneCellInUsePerSlot(8);
  EXPECT_EQ(ctx_.error(), 0);
}

// A model check of the compile-time forms, for several cell types, on contiguous and on chunked
// cells: random activations (each filling its cell with a pattern of its tag), deactivations and
// collections, against a plain map of slot -> tag. After every step, every slot is looked up
// through the static meta, its view, its contiguous view (where one is made) and the entry
// point: an active slot must give the cell the NodeManager's chunk table gives for the slot's
// index, holding the pattern last written for that slot; an inactive one the ambient element; a
// newly activated cell must be all zero. A stride wrong by any amount makes neighbouring cells
// overlap, and a collection that leaves any byte of a recycled cell unzeroed shows too (no
// pattern byte is zero).
template <u64 kSize, u64 kAlignment>
struct CellType {
  static constexpr u64 size = kSize;
  static constexpr u64 alignment = kAlignment;
};
template <typename Cell>
class PointerStaticModelTest : public ::testing::Test {};
using ModelCellTypes =
    ::testing::Types<CellType<4, 4>, CellType<8, 8>, CellType<12, 4>, CellType<20, 8>,
                     CellType<32, 8>, CellType<40, 8>, CellType<64, 16>, CellType<72, 8>>;
TYPED_TEST_SUITE(PointerStaticModelTest, ModelCellTypes);

TYPED_TEST(PointerStaticModelTest, CompileTimeFormsFollowAModel) {
  constexpr u64 kSize = TypeParam::size;
  constexpr i64 kSlots = 48;
  using Static =
      PointerStaticMeta<kSlots, kSize, NodeManager::cell_stride(kSize, TypeParam::alignment)>;
  for (bool contiguous : {true, false}) {
    SNodeTestContext ctx(4, 4096, contiguous);
    PointerMeta meta{};
    ctx.FillMeta(&meta.base, 1, kSize, kSlots);
    NodeManager* nm = ctx.MakeAllocator(1, kSize, TypeParam::alignment);
    Pointer_bind_cells(&meta, nm);
    const Ptr m = reinterpret_cast<Ptr>(&meta);
    const Ptr node = ctx.root();
    const Ptr ambient = runtime_ambient_element(ctx.rt(), 1);
    const Static sm{m};
    ASSERT_TRUE(sm.matches());
    const PointerView<Static> view = Pointer_view(sm);
    PointerView<Static, true> cview;
    const bool has_cview = Pointer_contiguous_view(sm, &cview);
    EXPECT_EQ(has_cview, contiguous);
    std::map<i32, u32> model;  // active slot -> its tag
    std::mt19937_64 rng(kSize * 2 + contiguous);
    u32 next_tag = 1;
    // Byte b of the pattern of tag t: never zero.
    auto pattern = [](u32 t, u64 b) { return static_cast<u8>((t * 7 + b) | 1); };
    auto holds = [&](Ptr cell, u32 t) {
      for (u64 b = 0; b < kSize; ++b) {
        if (cell[b] != pattern(t, b)) return false;
      }
      return true;
    };
    for (int step = 0; step < 600; ++step) {
      const i32 i = static_cast<i32>(rng() % kSlots);
      const int op = static_cast<int>(rng() % 10);
      if (op < 6) {  // activate and write, through one of the five forms
        Ptr cell = nullptr;
        switch (rng() % 5) {
          case 0:
            ASSERT_TRUE(Pointer_activate_cell_inline(sm, node, i, &cell));
            break;
          case 1:
            ASSERT_TRUE(Pointer_activate_cell_inline(view, node, i, &cell));
            break;
          case 2:
            if (has_cview) {
              ASSERT_TRUE(Pointer_activate_cell_inline(cview, node, i, &cell));
              break;
            }
            [[fallthrough]];  // chunked cells: no contiguous view, so the next form
          case 3:             // activate, then look up, through the view Pointer_with_view chooses
            cell = Pointer_with_view(sm, [&](const auto& v) {
              Pointer_activate_inline(v, node, i);
              return Pointer_lookup_element_inline(v, node, i);
            });
            break;
          default:
            Pointer_activate(m, node, i);
            cell = Pointer_lookup_element(m, node, i);
        }
        ASSERT_NE(cell, ambient);
        if (model.count(i) == 0) {  // a fresh cell is all zero
          for (u64 b = 0; b < kSize; ++b) ASSERT_EQ(cell[b], 0) << "slot " << i << " byte " << b;
        }
        const u32 tag = next_tag++;
        for (u64 b = 0; b < kSize; ++b) cell[b] = pattern(tag, b);
        model[i] = tag;
      } else if (op < 9) {
        EXPECT_EQ(Pointer_deactivate(m, node, i), model.erase(i) == 1) << i;
      } else {
        nm->gc_serial();
      }
      for (i32 k = 0; k < kSlots; ++k) {
        const Ptr entry = Pointer_lookup_element(m, node, k);
        const auto it = model.find(k);
        if (it == model.end()) {
          ASSERT_EQ(entry, ambient) << "step " << step << " slot " << k;
        } else {
          ASSERT_EQ(entry, nm->get_cell(Pointer_cell_index(*Pointer_slot(m, node, k))))
              << "step " << step << " slot " << k;
          ASSERT_TRUE(holds(entry, it->second)) << "step " << step << " slot " << k;
        }
        ASSERT_EQ(Pointer_lookup_element_inline(sm, node, k), entry) << k;
        ASSERT_EQ(Pointer_lookup_element_inline(view, node, k), entry) << k;
        if (has_cview) {
          ASSERT_EQ(Pointer_lookup_element_inline(cview, node, k), entry) << k;
        }
      }
    }
    for (u64 b = 0; b < kSize; ++b) EXPECT_EQ(ambient[b], 0) << b;
    EXPECT_EQ(ctx.error(), 0);
  }
}

}  // namespace
}  // namespace sparse_runtime
}  // namespace accelmem

// Random operation sequences on a NodeManager and its NodeCaches, checked step by step against a
// plain model that shares no code with them: a map from cell address to state (in use, cached,
// buffered for recycling, recycled, free). Cells are tagged with their owner when handed out, so a
// cell handed out twice, or one handed out without being zeroed, is seen at once.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "sparse_runtime/device/node_cache.h"
#include "sparse_runtime/device/node_manager.h"
#include "sparse_runtime/host_memory_pool.h"

namespace accelmem {
namespace sparse_runtime {
namespace {

constexpr int kCaches = 3;

// Where the model says a cell is.
enum class Where { kInUse, kRecycled, kFree };

struct Model {
  std::map<Ptr, Where> cells;  // every cell the manager ever handed out or holds
  std::vector<Ptr> in_use;     // handed out, owned by the test
};

// Parameters: data-list layout (contiguous reservation or granule table), cell size, chunk size.
class NodeManagerModelTest : public ::testing::TestWithParam<std::tuple<bool, int, int>> {
 protected:
  NodeManagerModelTest() { pool_.Attach(&memory_, /*reservations=*/std::get<0>(GetParam())); }

  HostMemoryPool pool_;
  RuntimeMemory memory_;
  NodeManager nm_{};
};

bool AllZero(Ptr p, int bytes) {
  for (int k = 0; k < bytes; ++k) {
    if (p[k] != 0) return false;
  }
  return true;
}

// Rule: under any interleaving of per-cell and batch allocation and recycling, through the manager
// and through caches, with cache flushes and GCs in between, every cell handed out is zero and not
// in use elsewhere; the manager's counters match the model after every flush; and after a GC every
// recycled cell is free again, exactly once. Half the GCs run with one cache not flushed (against
// its contract): the free-list slots it had reserved are then reported (kErrorStaleCache) and
// leaked, never handed out twice, and the counters match the model plus the leaked cells.
TEST_P(NodeManagerModelTest, RandomOperationsMatchTheModel) {
  const int cell_bytes = std::get<1>(GetParam());
  const int chunk = std::get<2>(GetParam());
  ASSERT_TRUE(nm_.init(&memory_, cell_bytes, 8, chunk));
  std::vector<std::unique_ptr<NodeCache>> caches;
  for (int c = 0; c < kCaches; ++c) {
    caches.push_back(std::make_unique<NodeCache>());
    caches.back()->init(&nm_);
  }
  Model model;
  int64_t leaked = 0;      // reserved slots of caches not flushed before a GC
  int stale_expected = 0;  // stale reservations left behind, each to be reported once
  int stale_reported = 0;
  std::mt19937 rng(static_cast<unsigned>(cell_bytes * 131 + chunk));
  uint8_t next_tag = 1;

  auto take = [&](Ptr p) {
    ASSERT_NE(p, nullptr);
    auto it = model.cells.find(p);
    if (it != model.cells.end()) {
      // Reuse is allowed only for cells the model has as free (zeroed by a GC).
      ASSERT_EQ(it->second, Where::kFree) << "cell handed out while in use or not yet collected";
    }
    ASSERT_TRUE(AllZero(p, cell_bytes)) << "cell handed out without being zeroed";
    std::memset(p, next_tag, cell_bytes);  // a second hand-out of this cell would not be zero
    next_tag = static_cast<uint8_t>(next_tag % 250 + 1);
    model.cells[p] = Where::kInUse;
    model.in_use.push_back(p);
  };
  auto pick_in_use = [&]() {
    const size_t i = rng() % model.in_use.size();
    std::swap(model.in_use[i], model.in_use.back());
    Ptr p = model.in_use.back();
    model.in_use.pop_back();
    model.cells[p] = Where::kRecycled;
    return p;
  };
  // Flushes every cache but `unflushed` (whose cells count as in use in the manager).
  auto check_counters = [&](const NodeCache* unflushed = nullptr) {
    for (auto& cache : caches) {
      if (cache.get() != unflushed) cache->flush();
    }
    int64_t in_use = 0;
    int64_t recycled = 0;
    for (const auto& entry : model.cells) {
      in_use += entry.second == Where::kInUse;
      recycled += entry.second == Where::kRecycled;
    }
    const int64_t held =
        unflushed == nullptr ? 0 : unflushed->num_cached_free() + unflushed->num_cached_recycled();
    ASSERT_EQ(nm_.num_in_use(), in_use + leaked + held);
    // Flushed cache-free cells go to the recycled list as well: at least the model's recycled
    // (but for those still buffered in the unflushed cache).
    ASSERT_GE(nm_.num_recycled() + held, recycled);
    ASSERT_EQ(nm_.num_reserved(), nm_.num_in_use() + nm_.num_free() + nm_.num_recycled());
  };

  for (int step = 0; step < 6000; ++step) {
    const int op = static_cast<int>(rng() % 100);
    NodeCache& cache = *caches[rng() % kCaches];
    if (op < 25) {
      ASSERT_NO_FATAL_FAILURE(take(nm_.allocate()));
    } else if (op < 45) {
      ASSERT_NO_FATAL_FAILURE(take(cache.allocate()));
    } else if (op < 47) {
      // Many at once through one cache: refills that reserve several batches of the free list
      // and refills that read slots reserved before.
      const int n = 1 + static_cast<int>(rng() % (3 * NodeCache::kBatch));
      for (int k = 0; k < n; ++k) ASSERT_NO_FATAL_FAILURE(take(cache.allocate()));
    } else if (op < 52) {
      const int n = 1 + static_cast<int>(rng() % 300);
      std::vector<Ptr> out(n);
      ASSERT_TRUE(nm_.allocate_cells(out.data(), n));
      for (Ptr p : out) ASSERT_NO_FATAL_FAILURE(take(p));
    } else if (model.in_use.empty()) {
      continue;
    } else if (op < 65) {
      nm_.recycle(pick_in_use());
    } else if (op < 78) {
      cache.recycle(pick_in_use());
    } else if (op < 81) {
      nm_.recycle_index(nm_.locate(pick_in_use()));
    } else if (op < 84) {
      // Up to 300 at once through the cache's index buffer, so that it fills and is pushed.
      const int n = 1 + static_cast<int>(rng() % std::min<size_t>(model.in_use.size(), 300));
      for (int k = 0; k < n; ++k) cache.recycle_index(nm_.locate(pick_in_use()));
    } else if (op < 90) {
      const int n = 1 + static_cast<int>(rng() % std::min<size_t>(model.in_use.size(), 300));
      std::vector<Ptr> cells;
      for (int k = 0; k < n; ++k) cells.push_back(pick_in_use());
      ASSERT_EQ(nm_.recycle_cells(cells.data(), n), 0);
    } else if (op < 97) {
      ASSERT_NO_FATAL_FAILURE(check_counters());
    } else {
      // Half the GCs leave a cache unflushed: the one holding the most reserved slots, if any.
      NodeCache* unflushed = nullptr;
      if (rng() % 2 == 0) {
        unflushed = caches[rng() % kCaches].get();
        for (auto& c : caches) {
          if (c->reserved_epoch == nm_.gc_epoch &&
              c->reserved_end - c->reserved_next >
                  unflushed->reserved_end - unflushed->reserved_next) {
            unflushed = c.get();
          }
        }
      }
      ASSERT_NO_FATAL_FAILURE(check_counters(unflushed));
      if (unflushed != nullptr && unflushed->reserved_epoch == nm_.gc_epoch) {
        leaked += unflushed->reserved_end - unflushed->reserved_next;
        stale_expected += unflushed->reserved_end > unflushed->reserved_next;
      }
      const int32_t recycled_before = nm_.num_recycled();
      const int32_t free_before = nm_.num_free();
      nm_.gc_serial();
      ASSERT_EQ(nm_.num_recycled(), 0);
      ASSERT_EQ(nm_.num_free(), free_before + recycled_before);
      for (auto& entry : model.cells) {
        if (entry.second == Where::kRecycled) entry.second = Where::kFree;
      }
      // Every free-list entry not handed out names a distinct cell the model has as free or has
      // never seen (flushed cache cells), and none in use.
      std::set<int32_t> seen;
      for (int32_t k = nm_.free_list_used; k < nm_.free_list.size(); ++k) {
        const int32_t index = nm_.free_list.get<int32_t>(k);
        ASSERT_TRUE(seen.insert(index).second) << "index " << index << " twice on the free list";
        auto it = model.cells.find(nm_.get_cell(index));
        if (it != model.cells.end()) {
          ASSERT_EQ(it->second, Where::kFree);
        }
      }
    }
    // At most one cache holds a stale reservation at a time (each GC flushes all others first),
    // so a step reports at most one and the slot shows each report.
    if (runtime_error_code(&memory_) == kErrorStaleCache) {
      ++stale_reported;
      ASSERT_LE(stale_reported, stale_expected) << "a stale reservation reported twice";
      memory_.error_code = kRuntimeOk;
    }
    ASSERT_EQ(runtime_error_code(&memory_), kRuntimeOk) << memory_.error_message;
  }
  // Return everything and collect: the manager ends with every reserved cell free.
  while (!model.in_use.empty()) nm_.recycle(pick_in_use());
  ASSERT_NO_FATAL_FAILURE(check_counters());
  if (runtime_error_code(&memory_) == kErrorStaleCache) {  // the final flushes
    ++stale_reported;
    memory_.error_code = kRuntimeOk;
  }
  EXPECT_EQ(stale_reported, stale_expected) << "every stale reservation is reported, once";
  ASSERT_EQ(runtime_error_code(&memory_), kRuntimeOk) << memory_.error_message;
  nm_.gc_serial();
  EXPECT_GT(leaked, 0) << "no GC found a cache holding a reservation: the case went untested";
  EXPECT_EQ(nm_.num_in_use(), leaked);
  EXPECT_EQ(nm_.num_free(), nm_.num_reserved() - leaked);
}

INSTANTIATE_TEST_SUITE_P(LayoutsAndShapes, NodeManagerModelTest,
                         ::testing::Combine(::testing::Bool(), ::testing::Values(8, 24, 64),
                                            ::testing::Values(16, 256)),
                         [](const ::testing::TestParamInfo<std::tuple<bool, int, int>>& info) {
                           return std::string(std::get<0>(info.param) ? "contiguous" : "granule") +
                                  "_cell" + std::to_string(std::get<1>(info.param)) + "_chunk" +
                                  std::to_string(std::get<2>(info.param));
                         });

}  // namespace
}  // namespace sparse_runtime
}  // namespace accelmem

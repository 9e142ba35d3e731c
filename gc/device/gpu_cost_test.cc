// What the device runtime's hot paths cost on a GPU, counted on the CPU: this test is built with
// ACCELMEM_ARCH_COUNTING and ACCELMEM_POINTER_CLAIMS_SLOT (the CUDA activation protocol), so every
// arch.h primitive charges the instructions its CUDA lowering issues (a fence, an atomic, an
// acquire load, ...). Each path runs GPU-shaped, one lane after another (the harness of
// phase2_refill_and_zero_test: phase 0 on kMaxGcWorkers workers, phase 1 on a block of 256 lanes,
// phase 2 on 1056 blocks of 64 lanes, CudaGc's default geometry on an H100/H200), and its totals
// must equal its row of gc/device/testdata/gpu_costs.txt: a change that adds a fence or an atomic
// to allocation, recycling, a pointer lookup or a GC phase fails here, without a GPU. A mismatch
// prints the measured table ready to paste. The collection is also compared with gc_serial on a
// twin heap byte for byte, so the counted run is a correct one.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "gc/device/gc_scratch.h"
#include "gc/device/phase0_compact_free_list.h"
#include "gc/device/phase1_swap_lists.h"
#include "gc/device/phase2_refill_and_zero.h"
#include "gtest/gtest.h"
#include "sparse_runtime/device/arch.h"
#include "sparse_runtime/device/node_manager.h"
#include "sparse_runtime/device/runtime_context.h"
#include "sparse_runtime/device/runtime_memory.h"
#include "sparse_runtime/device/snode_pointer.h"

#if !defined(ACCELMEM_ARCH_COUNTING) || !defined(ACCELMEM_ARCH_WARP_EMULATION)
#error "gpu_cost_test needs the counting and warp-emulation builds of arch.h"
#endif

namespace accelmem {
namespace gc {
namespace {

using sparse_runtime::ArchCost;
using sparse_runtime::PointerMeta;
using sparse_runtime::PointerSlot;
using sparse_runtime::RuntimeContext;
using sparse_runtime::RuntimeMeta;

// What one path cost, summed over its lanes.
struct PathCost {
  int64_t cells = 0;
  int64_t counts[sparse_runtime::kNumArchCosts] = {};
  int64_t hottest = 0;  // atomics on the most used address (a shared counter's serialization)
  int64_t chain = 0;    // the longest lane's fences + atomics + acquire loads (round trips)
  int64_t fence() const { return counts[sparse_runtime::kCostFence]; }
  int64_t atomic() const { return counts[sparse_runtime::kCostAtomic]; }
};

// Receives arch.h's charges while a path runs; lanes are set by the harness.
class CostCounter {
 public:
  CostCounter() {
    current_ = this;
    sparse_runtime::arch_cost_hook = &Hook;
  }
  ~CostCounter() {
    sparse_runtime::arch_cost_hook = nullptr;
    current_ = nullptr;
  }
  void SetLane(int64_t lane) { lane_ = lane; }
  // Lanes run one after another (SetLane), or as threads of an emulated warp (thread_lane).
  static thread_local int64_t thread_lane;
  PathCost Finish(int64_t cells) const {
    PathCost cost;
    cost.cells = cells;
    for (const auto& [lane, counts] : lanes_) {
      for (int k = 0; k < sparse_runtime::kNumArchCosts; ++k) cost.counts[k] += counts[k];
      const int64_t chain = counts[sparse_runtime::kCostFence] +
                            counts[sparse_runtime::kCostAtomic] +
                            counts[sparse_runtime::kCostAcquireLoad];
      cost.chain = std::max(cost.chain, chain);
    }
    for (const auto& [address, n] : atomics_at_) cost.hottest = std::max(cost.hottest, n);
    return cost;
  }

 private:
  using Counts = std::vector<int64_t>;
  static void Hook(ArchCost cost, const void* address) {
    CostCounter* self = current_;
    std::lock_guard<std::mutex> lock(self->mu_);
    Counts& counts = self->lanes_[thread_lane >= 0 ? thread_lane : self->lane_];
    if (counts.empty()) counts.assign(sparse_runtime::kNumArchCosts, 0);
    ++counts[cost];
    if (cost == sparse_runtime::kCostAtomic) ++self->atomics_at_[address];
  }
  static CostCounter* current_;
  std::mutex mu_;
  int64_t lane_ = 0;
  std::map<int64_t, Counts> lanes_;
  std::unordered_map<const void*, int64_t> atomics_at_;
};
CostCounter* CostCounter::current_ = nullptr;
thread_local int64_t CostCounter::thread_lane = -1;

// 32 host threads as one warp, behind arch.h's warp collectives (ACCELMEM_ARCH_WARP_EMULATION).
// warp_active_mask() gathers the lanes that reach a collective together: a lane waits until every
// lane still running has joined its group, or until kGather has passed (the lanes that diverged
// elsewhere then form groups of their own, as activemask may return any subset of the warp); the
// group's lanes then exchange keys (warp_match_any) and values (warp_shfl) through it, each
// exchange behind a barrier of the group. Every lane of a group must make the same collective calls
// in the same order (warp_aggregated_add_relaxed does). Mutexes only: TSan sees every exchange.
class WarpEmulator {
 public:
  static constexpr int kLanes = 32;
  // Runs body(lane) on kLanes threads as one warp; one warp at a time.
  static void Run(const std::function<void(int)>& body) {
    WarpEmulator warp;
    static const sparse_runtime::ArchWarpEmulator ops = {&Lane, &ActiveMask, &MatchAny, &Shfl};
    current_ = &warp;
    sparse_runtime::arch_warp_emulator = &ops;
    warp.running_ = kLanes;
    std::vector<std::thread> threads;
    for (int lane = 0; lane < kLanes; ++lane) {
      threads.emplace_back([&warp, &body, lane] {
        lane_ = lane;
        body(lane);
        std::lock_guard<std::mutex> lock(warp.mu_);
        --warp.running_;
        warp.cv_.notify_all();
      });
    }
    for (std::thread& thread : threads) thread.join();
    sparse_runtime::arch_warp_emulator = nullptr;
    current_ = nullptr;
  }

 private:
  static constexpr std::chrono::milliseconds kGather{20};
  struct Group {
    uint32_t mask = 0;
    int members = 0;
    bool closed = false;
    std::mutex mu;
    std::condition_variable cv;
    int arrived = 0;
    uint64_t generation = 0;
    uint64_t keys[kLanes] = {};
    uint64_t values[kLanes] = {};
    void Barrier() {
      std::unique_lock<std::mutex> lock(mu);
      const uint64_t g = generation;
      if (++arrived == members) {
        arrived = 0;
        ++generation;
        cv.notify_all();
      } else {
        cv.wait(lock, [&] { return generation != g; });
      }
    }
  };

  static uint32_t Lane() { return static_cast<uint32_t>(lane_); }
  static uint32_t ActiveMask() {
    WarpEmulator* w = current_;
    std::unique_lock<std::mutex> lock(w->mu_);
    if (w->open_ == nullptr) {
      w->open_ = std::make_shared<Group>();
      w->deadline_ = std::chrono::steady_clock::now() + kGather;
    }
    std::shared_ptr<Group> g = w->open_;
    g->mask |= uint32_t{1} << lane_;
    ++g->members;
    w->cv_.notify_all();
    w->cv_.wait_until(lock, w->deadline_, [&] { return g->closed || g->members == w->running_; });
    if (!g->closed) {
      g->closed = true;
      w->open_ = nullptr;
      w->cv_.notify_all();
    }
    group_ = g;
    return g->mask;
  }
  static uint32_t MatchAny(uint32_t mask, uint64_t key) {
    Group& g = *group_;
    {
      std::lock_guard<std::mutex> lock(g.mu);
      g.keys[lane_] = key;
    }
    g.Barrier();
    uint32_t peers = 0;
    {
      std::lock_guard<std::mutex> lock(g.mu);
      for (int l = 0; l < kLanes; ++l) {
        if ((mask >> l & 1) != 0 && g.keys[l] == key) peers |= uint32_t{1} << l;
      }
    }
    g.Barrier();  // the keys may be written again after this
    return peers;
  }
  static uint64_t Shfl(uint32_t, uint64_t value, uint32_t src_lane) {
    Group& g = *group_;
    {
      std::lock_guard<std::mutex> lock(g.mu);
      g.values[lane_] = value;
    }
    g.Barrier();
    uint64_t out;
    {
      std::lock_guard<std::mutex> lock(g.mu);
      out = g.values[src_lane];
    }
    g.Barrier();
    return out;
  }

  static WarpEmulator* current_;
  static thread_local int lane_;
  static thread_local std::shared_ptr<Group> group_;
  std::mutex mu_;
  std::condition_variable cv_;
  int running_ = 0;
  std::shared_ptr<Group> open_;
  std::chrono::steady_clock::time_point deadline_;
};
WarpEmulator* WarpEmulator::current_ = nullptr;
thread_local int WarpEmulator::lane_ = 0;
thread_local std::shared_ptr<WarpEmulator::Group> WarpEmulator::group_;

// GPU geometry: CudaGc's defaults on a 132-SM card (8 blocks of 64 lanes per SM).
constexpr int kWorkers0 = kMaxGcWorkers;
constexpr int kPhase1Lanes = 256;
constexpr int kBlocks2 = 1056;
constexpr int kLanes2 = 64;
constexpr int kCells = 8192;         // cells per counted path
constexpr uint64_t kCellBytes = 64;  // as the issue's collection rows
constexpr int kSnode = 1;

// A runtime context on a preallocated pool, as the CUDA device runtime builds it (chunked data
// list found through the granule table), with one pointer SNode's NodeManager.
struct DeviceHeap {
  DeviceHeap() : pool(64 << 20) {
    sparse_runtime::runtime_memory_init_preallocated(&rt.memory, pool.data(), pool.size());
    EXPECT_TRUE(sparse_runtime::runtime_context_init(&rt, 2, 4096));
    EXPECT_TRUE(
        sparse_runtime::runtime_initialize_snode_allocator(&rt, kSnode, kCellBytes, 8, 4096, 1024));
    nm = sparse_runtime::runtime_node_manager(&rt, kSnode);
    scratch.min_bucket_shift = kCudaMinBucketShift;
    scratch.order = kGcOrderSorted;
  }
  std::vector<uint8_t> pool;
  RuntimeContext rt{};
  NodeManager* nm = nullptr;
  GcScratch scratch{};
};

// Allocates n fresh cells (not counted), filling each with a nonzero byte.
std::vector<int32_t> AllocateFilled(DeviceHeap* heap, int n) {
  std::vector<int32_t> cells(n);
  for (int k = 0; k < n; ++k) {
    cells[k] = heap->nm->allocate_index();
    std::fill_n(heap->nm->get_cell(cells[k]), kCellBytes, static_cast<uint8_t>(k % 251 + 1));
  }
  return cells;
}

// The collection, GPU-shaped: prepare on one thread, phase 0 on kWorkers0 threads, phase 1 on one
// block (every lane's count, a barrier, every lane's finish with lane 0 last), phase 2 on kBlocks2
// blocks of kLanes2 lanes (lanes in reverse: lane 0 clears the bitmap after the block barrier).
// Each kernel's cost goes to costs[name] when `costs` is given.
void CollectAsGrid(DeviceHeap* heap, int64_t cells, std::map<std::string, PathCost>* costs) {
  auto run = [&](const std::string& name, auto&& body) {
    if (costs == nullptr) return body(nullptr);
    CostCounter counter;
    body(&counter);
    (*costs)[name] = counter.Finish(cells);
  };
  auto lane = [](CostCounter* c, int64_t l) {
    if (c != nullptr) c->SetLane(l);
  };
  run("gc_prepare",
      [&](CostCounter*) { ASSERT_TRUE(gc_scratch_reserve(&heap->scratch, heap->nm, kWorkers0)); });
  run("gc_phase0", [&](CostCounter* c) {
    for (int w = 0; w < kWorkers0; ++w) {
      lane(c, w);
      gc_phase0_compact_free_list(heap->nm, &heap->scratch, w, kWorkers0);
    }
  });
  run("gc_phase1", [&](CostCounter* c) {
    std::vector<GcPlan> plans(kPhase1Lanes);
    for (int l = 0; l < kPhase1Lanes; ++l) {
      lane(c, l);
      plans[l] = gc_make_plan(heap->nm, &heap->scratch, kWorkers0);
      gc_phase1_count(plans[l], &heap->scratch, l, kPhase1Lanes);
      sparse_runtime::block_barrier();
    }
    for (int l = kPhase1Lanes - 1; l >= 0; --l) {
      lane(c, l);
      gc_phase1_finish(heap->nm, &heap->scratch, plans[l], l, kPhase1Lanes);
    }
  });
  run("gc_phase2", [&](CostCounter* c) {
    for (int w = 0; w < kBlocks2; ++w) {
      for (int l = kLanes2 - 1; l >= 0; --l) {
        lane(c, int64_t{w} * kLanes2 + l);
        gc_phase2_refill_and_zero(heap->nm, &heap->scratch, w, kBlocks2, l, kLanes2);
      }
    }
  });
}

// Every path of the table, measured into *out.
void MeasureAll(std::map<std::string, PathCost>* out) {
  std::map<std::string, PathCost>& costs = *out;
  {  // Allocation from the free list: one cell per lane after a collection filled the list.
    DeviceHeap heap;
    const std::vector<int32_t> cells = AllocateFilled(&heap, 2 * kCells);
    for (int32_t index : cells) heap.nm->recycle_index(index);
    heap.nm->gc_serial();
    CostCounter counter;
    for (int l = 0; l < kCells; ++l) {
      counter.SetLane(l);
      EXPECT_GE(heap.nm->allocate_index(), 0);
    }
    costs["allocate"] = counter.Finish(kCells);
  }
  {  // Allocation of never used cells (the free list empty).
    DeviceHeap heap;
    CostCounter counter;
    for (int l = 0; l < kCells; ++l) {
      counter.SetLane(l);
      EXPECT_GE(heap.nm->allocate_index(), 0);
    }
    costs["allocate_fresh"] = counter.Finish(kCells);
  }
  {  // Recycling by index (the device kernels') and by address (locate through the granule table).
    DeviceHeap heap;
    const std::vector<int32_t> cells = AllocateFilled(&heap, 2 * kCells);
    {
      CostCounter counter;
      for (int l = 0; l < kCells; ++l) {
        counter.SetLane(l);
        heap.nm->recycle_index(cells[l]);
      }
      costs["recycle"] = counter.Finish(kCells);
    }
    CostCounter counter;
    for (int l = 0; l < kCells; ++l) {
      counter.SetLane(l);
      heap.nm->recycle(heap.nm->get_cell(cells[kCells + l]));
    }
    costs["recycle_ptr"] = counter.Finish(kCells);
  }
  {  // Pointer lookups and is_active on the device's metas (no contiguous origin: chunk table).
    DeviceHeap heap;
    const std::vector<int32_t> cells = AllocateFilled(&heap, kCells);
    PointerMeta meta{};
    meta.base.snode_id = kSnode;
    meta.base.element_size = kCellBytes;
    meta.base.max_num_elements = kCells;
    meta.base.context = &heap.rt;
    meta.cell_stride = heap.nm->element_size;
    std::vector<PointerSlot> slots(kCells);
    for (int k = 0; k < kCells; ++k) slots[k] = static_cast<PointerSlot>(cells[k] + 1);
    const RuntimeMeta m{reinterpret_cast<sparse_runtime::Ptr>(&meta)};
    const auto node = reinterpret_cast<sparse_runtime::Ptr>(slots.data());
    {
      CostCounter counter;
      for (int l = 0; l < kCells; ++l) {
        counter.SetLane(l);
        EXPECT_EQ(sparse_runtime::Pointer_lookup_element_inline(m, node, l),
                  heap.nm->get_cell(cells[l]));
      }
      costs["lookup"] = counter.Finish(kCells);
    }
    CostCounter counter;
    for (int l = 0; l < kCells; ++l) {
      counter.SetLane(l);
      EXPECT_TRUE(sparse_runtime::Pointer_is_active_inline(m, node, l));
    }
    costs["is_active"] = counter.Finish(kCells);
  }
  {  // A collection of kCells cells of 64 B (every other one of 2 * kCells), compared with
     // gc_serial on a twin heap: the same free list entry for entry, the same bytes everywhere.
    DeviceHeap grid, serial;
    for (DeviceHeap* h : {&grid, &serial}) {
      const std::vector<int32_t> cells = AllocateFilled(h, 2 * kCells);
      for (int k = 0; k < 2 * kCells; k += 2) h->nm->recycle_index(cells[k]);
    }
    CollectAsGrid(&grid, kCells, &costs);
    serial.nm->gc_serial();
    EXPECT_EQ(sparse_runtime::runtime_error_code(&grid.rt.memory), 0);
    EXPECT_EQ(grid.nm->free_list.size(), serial.nm->free_list.size());
    for (int k = 0; k < serial.nm->free_list.size(); ++k) {
      ASSERT_EQ(grid.nm->free_list.get<int32_t>(k), serial.nm->free_list.get<int32_t>(k)) << k;
    }
    for (int k = 0; k < 2 * kCells; ++k) {
      ASSERT_EQ(std::memcmp(grid.nm->get_cell(k), serial.nm->get_cell(k), kCellBytes), 0) << k;
    }
  }
}

std::string Format(const std::map<std::string, PathCost>& costs) {
  std::string out =
      "# path            cells  fence  atomic  hottest  chain  ld.acq  st.rel  ld.vol  st.vol  "
      "barrier\n";
  for (const auto& [name, c] : costs) {
    char line[256];
    std::snprintf(line, sizeof(line),
                  "%-16s %6lld %6lld %7lld %8lld %6lld %7lld %7lld %7lld %7lld %8lld\n",
                  name.c_str(), static_cast<long long>(c.cells), static_cast<long long>(c.fence()),
                  static_cast<long long>(c.atomic()), static_cast<long long>(c.hottest),
                  static_cast<long long>(c.chain),
                  static_cast<long long>(c.counts[sparse_runtime::kCostAcquireLoad]),
                  static_cast<long long>(c.counts[sparse_runtime::kCostReleaseStore]),
                  static_cast<long long>(c.counts[sparse_runtime::kCostVolatileLoad]),
                  static_cast<long long>(c.counts[sparse_runtime::kCostVolatileStore]),
                  static_cast<long long>(c.counts[sparse_runtime::kCostBarrier]));
    out += line;
  }
  return out;
}

// The checked-in table: path -> its 10 numbers, in Format's order.
std::map<std::string, std::vector<int64_t>> ReadBudgets() {
  std::ifstream in("gc/device/testdata/gpu_costs.txt");
  EXPECT_TRUE(in.good()) << "gc/device/testdata/gpu_costs.txt not in the runfiles";
  std::map<std::string, std::vector<int64_t>> rows;
  std::string line;
  while (std::getline(in, line)) {
    line = line.substr(0, line.find('#'));
    std::istringstream fields(line);
    std::string name;
    if (!(fields >> name)) continue;
    std::vector<int64_t> values;
    for (int64_t v; fields >> v;) values.push_back(v);
    rows[name] = values;
  }
  return rows;
}

std::vector<int64_t> Values(const PathCost& c) {
  return {c.cells,
          c.fence(),
          c.atomic(),
          c.hottest,
          c.chain,
          c.counts[sparse_runtime::kCostAcquireLoad],
          c.counts[sparse_runtime::kCostReleaseStore],
          c.counts[sparse_runtime::kCostVolatileLoad],
          c.counts[sparse_runtime::kCostVolatileStore],
          c.counts[sparse_runtime::kCostBarrier]};
}

// Every path's totals equal its row of the table (exactly: a count that fell must be lowered in
// the table too, or a later regression back to it would pass).
TEST(GpuCostTest, PathsCostWhatTheTableSays) {
  std::map<std::string, PathCost> costs;
  MeasureAll(&costs);
  ASSERT_FALSE(HasFailure());
  const auto budgets = ReadBudgets();
  bool all_match = costs.size() == budgets.size();
  for (const auto& [name, cost] : costs) {
    auto row = budgets.find(name);
    const bool match = row != budgets.end() && row->second == Values(cost);
    EXPECT_TRUE(match) << name << " differs from its row of gc/device/testdata/gpu_costs.txt";
    all_match &= match;
  }
  if (!all_match) {
    ADD_FAILURE() << "measured (paste into gc/device/testdata/gpu_costs.txt):\n" << Format(costs);
  }
  // Per cell, for the log.
  for (const auto& [name, c] : costs) {
    std::printf("%-16s fences/cell %.3f  atomics/cell %.3f  hottest/32 cells %.2f  chain %lld\n",
                name.c_str(), double(c.fence()) / c.cells, double(c.atomic()) / c.cells,
                32.0 * c.hottest / c.cells, static_cast<long long>(c.chain));
  }
}

// The issue's targets that hold today, asserted on their own (the table pins every count; these
// say which ones are promises): allocation from the free list, pointer lookups and is_active pay
// no fence; recycling and fresh allocation pay fences only when a lane creates a list chunk (the
// locked slow path, about one per 4096 cells); phase 0 is one OR per cell and no fence. Not met
// yet, and printed instead: at most one atomic on a shared counter per 32 cells (allocation and
// recycling take one each when lanes run one at a time; WarpsTakeOneSharedAtomicPer32Cells counts
// them in whole warps).
TEST(GpuCostTest, TargetsThatHold) {
  std::map<std::string, PathCost> costs;
  MeasureAll(&costs);
  ASSERT_FALSE(HasFailure());
  for (const char* path : {"allocate", "lookup", "is_active", "gc_phase0", "gc_phase2"}) {
    EXPECT_EQ(costs[path].fence(), 0) << path;
  }
  for (const char* path : {"allocate_fresh", "recycle", "recycle_ptr"}) {
    EXPECT_LE(costs[path].fence() * 256, costs[path].cells) << path;
  }
  EXPECT_EQ(costs["gc_phase0"].atomic(), costs["gc_phase0"].cells);
  for (const char* path : {"allocate", "recycle"}) {
    const PathCost& c = costs[path];
    std::printf("%s, one lane at a time: %.2f shared-counter atomics per 32 cells\n", path,
                32.0 * c.hottest / c.cells);
  }
}

// Allocation and recycling from 32 lanes of one emulated warp: the warp-aggregated counters hand
// out every index exactly once (the free list's cells first, then fresh ones past its end, in one
// run), every recycled index lands on the recycled list once, and the bookkeeping adds up. Runs
// under TSan and ASan like every test here.
TEST(GpuCostTest, WarpAggregatedCountersHandOutEachIndexOnce) {
  constexpr int kPerLane = 96;
  constexpr int kFree = 1000;  // fewer than the warp takes: lanes cross into fresh cells
  DeviceHeap heap;
  const std::vector<int32_t> cells = AllocateFilled(&heap, kFree);
  for (int32_t index : cells) heap.nm->recycle_index(index);
  heap.nm->gc_serial();
  std::vector<std::vector<int32_t>> taken(WarpEmulator::kLanes);
  WarpEmulator::Run([&](int lane) {
    for (int k = 0; k < kPerLane; ++k) taken[lane].push_back(heap.nm->allocate_index());
    for (int k = 0; k < kPerLane; k += 2) heap.nm->recycle_index(taken[lane][k]);
  });
  std::set<int32_t> all;
  for (const auto& lane : taken) {
    for (int32_t index : lane) {
      ASSERT_GE(index, 0);
      EXPECT_TRUE(all.insert(index).second) << "index " << index << " handed out twice";
    }
  }
  const int total = WarpEmulator::kLanes * kPerLane;
  EXPECT_EQ(static_cast<int>(all.size()), total);
  EXPECT_EQ(*all.rbegin(), total - 1);  // the free list's 1000 cells and fresh ones, no gap
  std::set<int32_t> recycled;
  for (int k = 0; k < heap.nm->recycled_list.size(); ++k) {
    EXPECT_TRUE(recycled.insert(heap.nm->recycled_list.get<int32_t>(k)).second);
  }
  EXPECT_EQ(static_cast<int>(recycled.size()), total / 2);
  EXPECT_EQ(heap.nm->num_in_use(), total / 2);
  EXPECT_EQ(sparse_runtime::runtime_error_code(&heap.rt.memory), 0);
}

// With whole warps, allocation from the free list and recycling by index take one atomic on their
// shared counter per 32 cells (the issue's target), counted as in PathsCostWhatTheTableSays but
// with the lanes as threads of emulated warps. A group that splits (a lane delayed past the
// emulator's gathering time) costs one more atomic; a few are tolerated.
TEST(GpuCostTest, WarpsTakeOneSharedAtomicPer32Cells) {
  constexpr int kPerLane = 64;
  constexpr int kCellsHere = WarpEmulator::kLanes * kPerLane;
  DeviceHeap heap;
  const std::vector<int32_t> cells = AllocateFilled(&heap, 2 * kCellsHere);
  for (int32_t index : cells) heap.nm->recycle_index(index);
  heap.nm->gc_serial();
  std::vector<std::vector<int32_t>> taken(WarpEmulator::kLanes);
  PathCost allocate, recycle;
  {
    CostCounter counter;
    WarpEmulator::Run([&](int lane) {
      CostCounter::thread_lane = lane;
      for (int k = 0; k < kPerLane; ++k) taken[lane].push_back(heap.nm->allocate_index());
    });
    allocate = counter.Finish(kCellsHere);
  }
  {
    CostCounter counter;
    WarpEmulator::Run([&](int lane) {
      CostCounter::thread_lane = lane;
      for (int32_t index : taken[lane]) heap.nm->recycle_index(index);
    });
    recycle = counter.Finish(kCellsHere);
  }
  for (const auto& [name, c] : {std::make_pair("allocate", allocate), {"recycle", recycle}}) {
    std::printf("%s in warps: %.2f shared-counter atomics per 32 cells, %lld fences\n", name,
                32.0 * c.hottest / c.cells, static_cast<long long>(c.fence()));
    EXPECT_LE(c.hottest, kCellsHere / 32 + 4) << name;
    EXPECT_EQ(c.fence(), 0) << name;
  }
}

// The counter itself: a fence, an atomic on one address and an acquire load are charged as the
// CUDA lowering issues them, per lane, and the hottest address is found.
TEST(GpuCostTest, CounterChargesWhatCudaIssues) {
  CostCounter counter;
  int32_t word = 0;
  counter.SetLane(0);
  sparse_runtime::grid_memfence();
  sparse_runtime::atomic_add_relaxed(&word, 1);
  counter.SetLane(1);
  sparse_runtime::atomic_add_relaxed(&word, 1);
  (void)sparse_runtime::atomic_load_acquire(&word);
  const PathCost cost = counter.Finish(2);
  EXPECT_GE(cost.fence(), 1);
  EXPECT_EQ(cost.atomic(), 2);
  EXPECT_EQ(cost.hottest, 2);
  EXPECT_GE(cost.chain, 2);
}

}  // namespace
}  // namespace gc
}  // namespace accelmem

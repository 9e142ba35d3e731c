#include "gc/device/phase2_refill_and_zero.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gc/device/gc_scratch.h"
#include "gc/device/gc_serial.h"
#include "gc/device/phase0_compact_free_list.h"
#include "gc/device/phase1_swap_lists.h"
#include "gc/gc_testing.h"
#include "gtest/gtest.h"

namespace accelmem {
namespace gc {
namespace {

using testing::AllCells;
using testing::CheckCollected;
using testing::FreeList;
using testing::RandomRound;
using testing::Snapshot;
using testing::TakeSnapshot;
using testing::TestHeap;

constexpr uint8_t kGuard = 0xAB;

// Cooperative zeroing: for every misalignment of the start, length and lane count, the lanes'
// writes partition exactly [p, p + n): each byte is written by one lane, guard bytes never.
TEST(Phase2Test, CooperativeZeroPartitionsTheRange) {
  for (int lanes = 1; lanes <= 5; ++lanes) {
    for (int offset = 0; offset < 8; ++offset) {
      for (int n = 0; n <= 70; ++n) {
        alignas(16) uint8_t buffer[128];
        std::vector<int> writes(sizeof(buffer), 0);
        for (int lane = 0; lane < lanes; ++lane) {
          std::memset(buffer, kGuard, sizeof(buffer));
          gc_zero_cooperative(buffer + 16 + offset, n, lane, lanes);
          for (size_t k = 0; k < sizeof(buffer); ++k) writes[k] += buffer[k] != kGuard;
        }
        for (int k = 0; k < static_cast<int>(sizeof(buffer)); ++k) {
          const bool inside = k >= 16 + offset && k < 16 + offset + n;
          ASSERT_EQ(writes[k], inside ? 1 : 0)
              << "lanes=" << lanes << " offset=" << offset << " n=" << n << " byte=" << k;
        }
      }
    }
  }
}

// Lane 0 owns the unaligned head and the tail; the other lanes only write aligned 4-byte words.
TEST(Phase2Test, OnlyLaneZeroWritesHeadAndTail) {
  alignas(16) uint8_t buffer[64];
  std::memset(buffer, kGuard, sizeof(buffer));
  gc_zero_cooperative(buffer + 1, 42, /*lane=*/1, /*lanes=*/2);  // [1, 43): head 1..3, tail 40..42
  for (int k = 0; k < 4; ++k) EXPECT_EQ(buffer[k], kGuard) << k;
  for (int k = 40; k < 64; ++k) EXPECT_EQ(buffer[k], kGuard) << k;
  for (int k = 8; k < 12; ++k) EXPECT_EQ(buffer[k], 0) << k;      // word 1 belongs to lane 1
  for (int k = 4; k < 8; ++k) EXPECT_EQ(buffer[k], kGuard) << k;  // word 0 belongs to lane 0
}

// Runs the three phases; phase 2 as `workers` blocks of `lanes` lanes simulated one after the
// other (lanes in reverse so lane 0, which clears the bitmap after the block barrier, runs last).
void Collect(TestHeap* heap, int workers, int lanes) {
  ASSERT_TRUE(gc_scratch_reserve(&heap->scratch, &heap->nm, workers));
  for (int w = 0; w < workers; ++w)
    gc_phase0_compact_free_list(&heap->nm, &heap->scratch, w, workers);
  gc_phase1_swap_lists(&heap->nm, &heap->scratch, workers);
  for (int w = 0; w < workers; ++w) {
    for (int lane = lanes - 1; lane >= 0; --lane) {
      gc_phase2_refill_and_zero(&heap->nm, &heap->scratch, w, workers, lane, lanes);
    }
  }
}

// A collection shaped as on a GPU, simulated one lane after the other: `workers0` phase-0
// workers; phase 1 on `phase1_lanes` lanes of one block (every lane's plan and count, then every
// lane's finish, lane 0 last); phase 2 on `workers2` blocks of `lanes` lanes (lanes in reverse).
struct GridShape {
  int workers0, phase1_lanes, workers2, lanes;
};
void CollectAsGrid(TestHeap* heap, const GridShape& g) {
  ASSERT_TRUE(gc_scratch_reserve(&heap->scratch, &heap->nm, g.workers0));
  for (int w = 0; w < g.workers0; ++w) {
    gc_phase0_compact_free_list(&heap->nm, &heap->scratch, w, g.workers0);
  }
  const GcPlan plan = gc_make_plan(&heap->nm, &heap->scratch, g.workers0);
  for (int l = 0; l < g.phase1_lanes; ++l) gc_phase1_count(plan, &heap->scratch, l, g.phase1_lanes);
  for (int l = g.phase1_lanes - 1; l >= 0; --l) {
    gc_phase1_finish(&heap->nm, &heap->scratch, plan, l, g.phase1_lanes);
  }
  for (int w = 0; w < g.workers2; ++w) {
    for (int lane = g.lanes - 1; lane >= 0; --lane) {
      gc_phase2_refill_and_zero(&heap->nm, &heap->scratch, w, g.workers2, lane, g.lanes);
    }
  }
}

// GPU-shaped collections (one-word buckets, a block's lanes zeroing different cells, phase 1 on
// many lanes) give exactly gc_serial's result on a twin heap with the same history: the same free
// list entry for entry and the same bytes in every cell, for cells of 8 bytes to 4 KiB (8- and
// 16-byte store units, lanes left over, cells wider than the block), in both orders, over two
// rounds (refills after kept entries, across free-list chunks). The first shape is the H200's
// default grid, on a device-style preallocated pool (chunks found through the granule table).
TEST(Phase2Test, GpuShapedCollectionsMatchSerialGc) {
  const GridShape shapes[] = {{kMaxGcWorkers, 256, 1056, 64}, {24, 64, 33, 64}, {5, 3, 7, 3}};
  for (uint64_t node_size : {8u, 24u, 64u, 72u, 256u, 4096u}) {
    for (int s = 0; s < 3; ++s) {
      for (int32_t order : {kGcOrderSorted, kGcOrderRecycle}) {
        SCOPED_TRACE(::testing::Message()
                     << "node_size=" << node_size << " shape=" << s << " order=" << order);
        TestHeap grid(node_size, 256), serial(node_size, 256);
        // Round 1 takes over half the free list: below that, several workers compact it into a
        // rotation of the serial order (phase0_compact_free_list.h).
        const int allocs[2] = {node_size <= 256 ? 6000 : 600, node_size <= 256 ? 2500 : 300};
        std::vector<uint8_t> device_pool;
        if (s == 0) {  // the device's memory: one preallocated, zero-filled region
          device_pool.resize((uint64_t{1} << 20) + 4 * (allocs[0] + allocs[1]) * node_size);
          sparse_runtime::runtime_memory_init_preallocated(&grid.memory, device_pool.data(),
                                                           device_pool.size());
          grid.nm = NodeManager{};
          ASSERT_TRUE(grid.nm.init(&grid.memory, node_size, 8, 256, /*max_num_chunks=*/1024));
        }
        for (TestHeap* h : {&grid, &serial}) {
          h->scratch.order = order;
          h->scratch.min_bucket_shift = kCudaMinBucketShift;
        }
        std::mt19937_64 rng_grid(node_size * 7 + s), rng_serial(node_size * 7 + s);
        for (int round = 0; round < 2; ++round) {
          const double fraction = round == 0 ? 0.7 : 0.5;  // round 0: over 4096 refills
          RandomRound(&grid, &rng_grid, allocs[round], fraction);
          RandomRound(&serial, &rng_serial, allocs[round], fraction);
          const Snapshot before = TakeSnapshot(grid);
          CollectAsGrid(&grid, shapes[s]);
          ASSERT_TRUE(gc_serial(&serial.nm, &serial.scratch));
          EXPECT_EQ(grid.scratch.plan.order, order);
          ASSERT_TRUE(CheckCollected(grid, before)) << "round " << round;
          ASSERT_EQ(FreeList(grid.nm), FreeList(serial.nm)) << "round " << round;
          ASSERT_EQ(grid.nm.free_list_used, serial.nm.free_list_used);
          ASSERT_TRUE(AllCells(grid.nm) == AllCells(serial.nm)) << "round " << round;
        }
        if (order == kGcOrderSorted && s == 0 && node_size <= 256) {
          EXPECT_EQ(grid.scratch.plan.bucket_shift, kCudaMinBucketShift);
          EXPECT_GT(grid.scratch.plan.num_buckets, 50);
        }
      }
    }
  }
}

// Sorted order: recycled cells are refilled after the kept free entries in ascending order;
// every invariant holds, for one and several lanes and workers, with cells of odd sizes.
TEST(Phase2Test, SortedRefillIsAscending) {
  for (uint64_t node_size : {8u, 24u, 64u, 200u}) {
    for (int workers : {1, 3}) {
      for (int lanes : {1, 4}) {
        TestHeap heap(node_size, 256);
        heap.scratch.order = kGcOrderSorted;
        std::mt19937_64 rng(node_size * 31 + workers * 7 + lanes);
        RandomRound(&heap, &rng, 3000, 0.5);
        const Snapshot before = TakeSnapshot(heap);
        const int kept = static_cast<int>(testing::UnusedFree(heap.nm).size());
        Collect(&heap, workers, lanes);
        EXPECT_EQ(heap.scratch.plan.order, kGcOrderSorted);
        ASSERT_TRUE(CheckCollected(heap, before));
        std::vector<int32_t> free_list = FreeList(heap.nm);
        EXPECT_TRUE(std::is_sorted(free_list.begin() + kept, free_list.end()));
      }
    }
  }
}

// The per-cell paths (small cells; streamed whole-line cells) write the free list from registers
// and fall back to the checked writer where a free-list chunk (4096 entries) ends inside a bitmap
// word: with more than 4096 refills, every index lands once and in ascending order, each recycled
// cell is zero and nothing else is written, without streaming and streaming with 64-byte (where
// the CPU has AVX-512F), 32-byte (where it has AVX) and 16-byte stores.
TEST(Phase2Test, PerCellPathsAcrossFreeListChunks) {
  for (uint64_t node_size : {16u, 64u, 128u, 256u, 200u}) {
    // 0: no streaming; else streaming with stores of at most this many bytes.
    for (uint32_t streaming : {0u, 16u, 32u, 64u}) {
      TestHeap heap(node_size, 1024);
      heap.scratch.order = kGcOrderSorted;
      heap.scratch.streaming_zero_bytes = streaming == 0 ? 0 : 1;
      heap.scratch.streaming_store_bytes = streaming;
      std::mt19937_64 rng(node_size + streaming);
      RandomRound(&heap, &rng, 20000, 0.6);
      Collect(&heap, 1, 1);
      // Use some free entries and recycle again: the refill starts at an odd free-list slot.
      RandomRound(&heap, &rng, 1001, 0.7);
      const Snapshot before = TakeSnapshot(heap);
      const int kept = static_cast<int>(testing::UnusedFree(heap.nm).size());
      Collect(&heap, 1, 1);
      ASSERT_GT(heap.scratch.plan.num_refill, NodeManager::kMinIndexListChunk);
      ASSERT_TRUE(CheckCollected(heap, before)) << node_size << " " << streaming;
      std::vector<int32_t> free_list = FreeList(heap.nm);
      EXPECT_TRUE(std::is_sorted(free_list.begin() + kept, free_list.end())) << node_size;
    }
  }
}

// Recycling order: the free list gets the recycled indices in recycling order (as upstream
// gc_serial), adjacent and reversed runs included.
TEST(Phase2Test, RecyclingOrderRefill) {
  for (int lanes : {1, 3}) {
    TestHeap heap(48, 64);
    heap.scratch.order = kGcOrderRecycle;
    for (int i = 0; i < 400; ++i) {
      ASSERT_EQ(heap.nm.allocate_index(), i);
      testing::FillCell(&heap.nm, i, 1);
    }
    std::vector<int32_t> order = {10, 11, 12, 13, 70, 69, 68, 60, 61, 127, 128, 129, 5, 300};
    for (int32_t r : order) heap.nm.recycle_index(r);
    const Snapshot before = TakeSnapshot(heap);
    Collect(&heap, 2, lanes);
    EXPECT_EQ(heap.scratch.plan.order, kGcOrderRecycle);
    ASSERT_TRUE(CheckCollected(heap, before));
    EXPECT_EQ(FreeList(heap.nm), order);
  }
}

// Streaming (non-temporal) zeroing, forced on for small collections: exactly the recycled cells
// become zero, whatever the cell size relative to cache lines, in both orders, with the 64-byte
// stores (where the CPU has AVX-512F), the 32-byte ones (where it has AVX) and the 16-byte ones.
TEST(Phase2Test, StreamingZeroesExactlyTheCells) {
  for (uint32_t store_bytes : {16u, 32u, 64u}) {
    for (int32_t order : {kGcOrderSorted, kGcOrderRecycle}) {
      for (uint64_t node_size : {8u, 16u, 64u, 72u, 128u, 200u, 264u, 1000u, 4096u}) {
        TestHeap heap(node_size, 64);
        heap.scratch.order = order;
        heap.scratch.streaming_zero_bytes = 1;
        heap.scratch.streaming_store_bytes = store_bytes;
        std::mt19937_64 rng(node_size + order);
        RandomRound(&heap, &rng, 700, 0.6);
        const Snapshot before = TakeSnapshot(heap);
        Collect(&heap, 2, 1);
        ASSERT_TRUE(CheckCollected(heap, before)) << node_size << " store bytes " << store_bytes;
      }
    }
  }
}

// The L2 size as Linux reports it for CPU 0 (sysfs cache index 2, a unified level-2 cache), or 0.
uint64_t SysfsL2Bytes() {
  const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index2/";
  auto read = [&](const char* name) {
    std::ifstream in(dir + name);
    std::string value;
    in >> value;
    return value;
  };
  if (read("level") != "2" || read("type") != "Unified") return 0;
  const std::string size = read("size");  // e.g. "1024K"
  if (size.empty() || size.back() != 'K') return 0;
  return std::stoull(size.substr(0, size.size() - 1)) << 10;
}

// The whole-line threshold is half the L2 (2 MiB where the L2 is unknown or implausibly small, at
// most the small-cell threshold); the L2 phase 2 reads from CPUID is the one Linux reports, where
// it does; and phase 2 follows the threshold for the CPU it runs on: a collection of 64-byte cells
// zeroing exactly the threshold streams, one cell less does not; an explicit streaming_zero_bytes
// overrides it; 32-byte cells, below 16 MiB, never stream by default.
TEST(Phase2Test, StreamingThresholdIsHalfTheL2) {
  EXPECT_EQ(gc_line_streaming_bytes(0), kStreamingLineZeroBytes);
  EXPECT_EQ(gc_line_streaming_bytes(uint64_t{32} << 10), kStreamingLineZeroBytes);
  EXPECT_EQ(gc_line_streaming_bytes(uint64_t{1} << 20), uint64_t{512} << 10);
  EXPECT_EQ(gc_line_streaming_bytes(uint64_t{2} << 20), uint64_t{1} << 20);
  EXPECT_EQ(gc_line_streaming_bytes(uint64_t{0xffff} << 10), kStreamingZeroBytes);
  EXPECT_EQ(gc_cpu_l2_bytes(), gc_cpu_l2_bytes());  // read once, the same afterwards
#if defined(__x86_64__)
  const uint64_t sysfs = SysfsL2Bytes();
  if (sysfs != 0) {
    EXPECT_EQ(gc_cpu_l2_bytes(), sysfs);
  }
#endif
  const uint64_t threshold = gc_line_streaming_bytes(gc_cpu_l2_bytes());
  // Plans a collection of `cells` recycled cells of `node_size` (phases 0 and 1) and asks.
  auto streams = [](uint64_t node_size, int64_t cells, uint64_t explicit_bytes) {
    TestHeap heap(node_size, 4096);
    heap.scratch.streaming_zero_bytes = explicit_bytes;
    for (int64_t i = 0; i < cells; ++i) heap.nm.recycle_index(heap.nm.allocate_index());
    EXPECT_TRUE(gc_scratch_reserve(&heap.scratch, &heap.nm, 1));
    gc_phase0_compact_free_list(&heap.nm, &heap.scratch, 0, 1);
    gc_phase1_swap_lists(&heap.nm, &heap.scratch, 1);
    EXPECT_EQ(heap.scratch.plan.num_refill, cells);
    const bool result = gc_phase2_streams(&heap.nm, &heap.scratch);
    gc_phase2_refill_and_zero(&heap.nm, &heap.scratch, 0, 1);
    return result;
  };
  const int64_t cells = static_cast<int64_t>(threshold / 64);
#if defined(__x86_64__)
  EXPECT_TRUE(streams(64, cells, 0)) << cells;
  EXPECT_TRUE(streams(64, 1, 1));
#endif
  EXPECT_FALSE(streams(64, cells - 1, 0)) << cells;
  EXPECT_FALSE(streams(32, 2 * cells, 0)) << cells;
}

// The value of field `name` of CPU 0 in /proc/cpuinfo ("flags", "vendor_id", "cpu family"), or
// an empty string.
std::string CpuinfoField(const std::string& name) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const size_t end = line.find_last_not_of(" \t", colon - 1);
    if (end == std::string::npos || line.compare(0, end + 1, name) != 0 || end + 1 != name.size()) {
      continue;
    }
    const size_t value = line.find_first_not_of(' ', colon + 1);
    return value == std::string::npos ? std::string() : line.substr(value);
  }
  return {};
}

// Streamed lines are written with the store width the CPU supports, as Linux reports its
// features (which it clears where the OS does not save the wider registers): by default 64 bytes
// on AMD family 1Ah (26) and later with AVX-512F, else 32 with AVX, else 16; asked for, 16, 32 or
// 64 (rounded down to one of these), capped at what the CPU supports.
TEST(Phase2Test, StreamingStoreWidthFollowsTheCpu) {
  GcScratch scratch{};
  const uint32_t chosen = gc_streaming_store_bytes(&scratch);
  uint32_t supported = 16;
#if defined(__x86_64__)
  std::istringstream words(CpuinfoField("flags"));
  std::vector<std::string> flags;
  for (std::string flag; words >> flag;) flags.push_back(flag);
  if (flags.empty()) GTEST_SKIP() << "no CPU flags in /proc/cpuinfo";
  auto has = [&](const char* flag) {
    return std::find(flags.begin(), flags.end(), flag) != flags.end();
  };
  supported = has("avx512f") ? 64u : has("avx") ? 32u : 16u;
  const std::string family = CpuinfoField("cpu family");
  const bool zen5_or_later =
      CpuinfoField("vendor_id") == "AuthenticAMD" && !family.empty() && std::stoi(family) >= 26;
  EXPECT_EQ(chosen, supported == 64 && !zen5_or_later ? 32u : supported);
#else
  EXPECT_EQ(chosen, 16u);
#endif
  for (uint32_t asked : {1u, 16u, 31u, 32u, 48u, 64u, 65u}) {
    scratch.streaming_store_bytes = asked;
    const uint32_t width = asked >= 64 ? 64u : asked >= 32 ? 32u : 16u;
    EXPECT_EQ(gc_streaming_store_bytes(&scratch), std::min(width, supported)) << asked;
  }
}

// Runs that cross data-chunk boundaries are split there (chunks are not adjacent in memory).
TEST(Phase2Test, RunsAcrossChunks) {
  for (int32_t order : {kGcOrderSorted, kGcOrderRecycle}) {
    TestHeap heap(16, 8);  // 8 cells per chunk
    heap.scratch.order = order;
    for (int i = 0; i < 64; ++i) {
      ASSERT_EQ(heap.nm.allocate_index(), i);
      testing::FillCell(&heap.nm, i, 2);
    }
    for (int i = 5; i < 43; ++i) heap.nm.recycle_index(i);
    const Snapshot before = TakeSnapshot(heap);
    Collect(&heap, 1, 1);
    ASSERT_TRUE(CheckCollected(heap, before));
  }
}

}  // namespace
}  // namespace gc
}  // namespace accelmem

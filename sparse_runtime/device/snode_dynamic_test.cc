#include "sparse_runtime/device/snode_dynamic.h"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "sparse_runtime/snode_testing.h"

namespace accelmem {
namespace sparse_runtime {
namespace {

// dynamic(32, chunk 4) of i32 cells.
class SNodeDynamicTest : public ::testing::Test {
 protected:
  SNodeDynamicTest() {
    ctx_.FillMeta(&meta_.base, 1, 4, 32);
    DynamicMeta_set_chunking(&meta_, 4, 4);
    m_ = reinterpret_cast<Ptr>(&meta_);
    nm_ = ctx_.MakeAllocator(1, Dynamic_node_size(4, 4, 4), 8);
    node_ = ctx_.root();
  }
  int32_t& At(int i) { return *reinterpret_cast<int32_t*>(Dynamic_lookup_element(m_, node_, i)); }

  SNodeTestContext ctx_;
  DynamicMeta meta_;
  Ptr m_ = nullptr;
  NodeManager* nm_ = nullptr;
  Ptr node_ = nullptr;
};

// Chunks hold an aligned 16-byte header (next pointer, chunk index) and aligned cells: a stride
// of 32 bytes for 4 i32 cells and 40 for 5 (upstream: 28, misaligned, #6316).
TEST_F(SNodeDynamicTest, ChunkStrideIsAligned) {
  EXPECT_EQ(Dynamic_node_size(4, 4, 5), 36u);
  EXPECT_EQ(nm_->element_size, 32u);
  NodeManager other{};
  ASSERT_TRUE(other.init(&ctx_.rt()->memory, Dynamic_node_size(4, 4, 5), 8));
  EXPECT_EQ(other.element_size, 40u);
  EXPECT_EQ(Dynamic_chunk_header(16), 16u);
  EXPECT_EQ(Dynamic_chunk_header(32), 32u);
}

// Every change of the length marks the meta (the host's struct-for list cache reads it):
// activation past the length, append and clear; activation below the length and clearing an
// empty list do not.
TEST_F(SNodeDynamicTest, LengthChangesMarkTheMeta) {
  EXPECT_EQ(meta_.base.structure_changed, 0u);
  Dynamic_activate(m_, node_, 5);
  EXPECT_EQ(meta_.base.structure_changed, 1u);
  meta_.base.structure_changed = 0;
  Dynamic_activate(m_, node_, 2);  // below the length
  EXPECT_EQ(meta_.base.structure_changed, 0u);
  int32_t len;
  ASSERT_NE(Dynamic_allocate(m_, node_, &len), nullptr);
  EXPECT_EQ(meta_.base.structure_changed, 1u);
  meta_.base.structure_changed = 0;
  Dynamic_deactivate(m_, node_);
  EXPECT_EQ(meta_.base.structure_changed, 1u);
  meta_.base.structure_changed = 0;
  Dynamic_deactivate(m_, node_);  // already empty
  EXPECT_EQ(meta_.base.structure_changed, 0u);
}

// Appends return consecutive positions and grow the chunk list one chunk per chunk_size cells.
TEST_F(SNodeDynamicTest, AppendGrowsChunks) {
  for (int k = 0; k < 10; ++k) {
    int32_t len = -1;
    Ptr slot = Dynamic_allocate(m_, node_, &len);
    ASSERT_NE(slot, nullptr);
    EXPECT_EQ(len, k);
    *reinterpret_cast<int32_t*>(slot) = 100 + k;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(slot) % 4, 0u);
  }
  EXPECT_EQ(Dynamic_get_num_elements(m_, node_), 10);
  EXPECT_EQ(Dynamic_num_chunks(m_, node_), 3);
  for (int k = 0; k < 10; ++k) EXPECT_EQ(At(k), 100 + k);
  EXPECT_TRUE(Dynamic_is_active(m_, node_, 9));
  EXPECT_FALSE(Dynamic_is_active(m_, node_, 10));
}

// Upstream probe: activating x[20] of an empty dynamic(32, chunk 4) sets n = 21 and allocates 6
// chunks; holes read 0; past the length reads the ambient element.
TEST_F(SNodeDynamicTest, ActivateCreatesChunksUpToIndex) {
  Dynamic_activate(m_, node_, 20);
  EXPECT_EQ(Dynamic_get_num_elements(m_, node_), 21);
  EXPECT_EQ(Dynamic_num_chunks(m_, node_), 6);
  EXPECT_EQ(At(4), 0);
  EXPECT_EQ(At(20), 0);
  EXPECT_EQ(Dynamic_lookup_element(m_, node_, 25), runtime_ambient_element(ctx_.rt(), 1));
  int32_t len = 0;
  ASSERT_NE(Dynamic_allocate(m_, node_, &len), nullptr);
  EXPECT_EQ(len, 21);
}

// Deactivation sets the length to 0 and recycles every chunk.
TEST_F(SNodeDynamicTest, DeactivateRecyclesEveryChunk) {
  for (int k = 0; k < 13; ++k) {
    int32_t len;
    *reinterpret_cast<int32_t*>(Dynamic_allocate(m_, node_, &len)) = 7;
  }
  EXPECT_EQ(Dynamic_num_chunks(m_, node_), 4);
  Dynamic_deactivate(m_, node_);
  EXPECT_EQ(Dynamic_get_num_elements(m_, node_), 0);
  EXPECT_EQ(Dynamic_num_chunks(m_, node_), 0);
  EXPECT_EQ(nm_->num_recycled(), 4);
  EXPECT_EQ(nm_->num_in_use(), 0);
  nm_->gc_serial();
  EXPECT_EQ(nm_->num_free(), 4);
  // Appending again reuses the zeroed chunks.
  int32_t len;
  Ptr slot = Dynamic_allocate(m_, node_, &len);
  EXPECT_EQ(len, 0);
  EXPECT_EQ(*reinterpret_cast<int32_t*>(slot), 0);
  EXPECT_EQ(nm_->data_list.size(), 4);
}

// Appending or activating past the declared size is an error, not an overrun (#6866).
TEST_F(SNodeDynamicTest, OverflowIsAnError) {
  for (int k = 0; k < 32; ++k) {
    int32_t len;
    ASSERT_NE(Dynamic_allocate(m_, node_, &len), nullptr);
  }
  int32_t len = -1;
  EXPECT_EQ(Dynamic_allocate(m_, node_, &len), nullptr);
  EXPECT_EQ(len, 32);
  EXPECT_EQ(ctx_.error(), kErrorDynamicOverflow);
  EXPECT_EQ(Dynamic_get_num_elements(m_, node_), 32);
  EXPECT_EQ(Dynamic_num_chunks(m_, node_), 8);
  runtime_reset_error(&ctx_.rt()->memory);
  Dynamic_activate(m_, node_, 40);
  EXPECT_EQ(ctx_.error(), kErrorDynamicOverflow);
  EXPECT_EQ(Dynamic_get_num_elements(m_, node_), 32);
}

// Appends after a deactivation start a fresh list (the generation bump stops stale appends).
TEST_F(SNodeDynamicTest, AppendAfterDeactivateStartsOver) {
  for (int round = 0; round < 3; ++round) {
    for (int k = 0; k < 6; ++k) {
      int32_t len;
      Ptr slot = Dynamic_allocate(m_, node_, &len);
      ASSERT_NE(slot, nullptr);
      ASSERT_EQ(len, k);
      *reinterpret_cast<int32_t*>(slot) = round * 10 + k;
    }
    for (int k = 0; k < 6; ++k) EXPECT_EQ(At(k), round * 10 + k);
    Dynamic_deactivate(m_, node_);
    EXPECT_EQ(Dynamic_length(reinterpret_cast<DynamicNode*>(node_)), 0);
    EXPECT_EQ(reinterpret_cast<DynamicNode*>(node_)->state >> 32, static_cast<uint64_t>(round + 1));
  }
}

// Appends racing with deactivations never hand out a slot of a recycled chunk twice and never
// lose a chunk: afterwards every chunk is either on the list or recycled. Both sides run until
// each has done its share, whichever the scheduler starts first (under TSan the deactivator once
// finished all its rounds before the first append).
TEST_F(SNodeDynamicTest, AppendsRaceDeactivations) {
  std::atomic<bool> stop{false};
  std::atomic<int> deactivations{0};
  std::thread deactivator([&] {
    while (!stop.load()) {
      Dynamic_deactivate(m_, node_);
      deactivations.fetch_add(1);
      std::this_thread::yield();
    }
  });
  int appended = 0;
  while (appended < 2000 || deactivations.load() < 300) {
    int32_t len;
    Ptr slot = Dynamic_allocate(m_, node_, &len);
    if (slot == nullptr) {
      EXPECT_EQ(ctx_.error(), kErrorDynamicOverflow);
      runtime_reset_error(&ctx_.rt()->memory);
      continue;
    }
    ++appended;
  }
  stop = true;
  deactivator.join();
  EXPECT_GE(appended, 2000);
  // In use = reserved - free - recycled: a chunk linked into a detached list would count here.
  EXPECT_EQ(nm_->num_in_use(), Dynamic_num_chunks(m_, node_));
}

// Non-power-of-two chunk sizes use division and behave the same (chunk 3: 10 appends, 4 chunks).
TEST(SNodeDynamicChunkingTest, NonPowerOfTwoChunks) {
  SNodeTestContext ctx;
  DynamicMeta meta;
  ctx.FillMeta(&meta.base, 1, 8, 12);
  DynamicMeta_set_chunking(&meta, 3, 8);
  EXPECT_EQ(meta.chunk_shift, -1);
  Ptr m = reinterpret_cast<Ptr>(&meta);
  ctx.MakeAllocator(1, Dynamic_node_size(8, 8, 3), 8);
  for (int k = 0; k < 10; ++k) {
    int32_t len;
    *reinterpret_cast<int64_t*>(Dynamic_allocate(m, ctx.root(), &len)) = k * k;
  }
  EXPECT_EQ(Dynamic_num_chunks(m, ctx.root()), 4);
  for (int k = 0; k < 10; ++k) {
    EXPECT_EQ(*reinterpret_cast<int64_t*>(Dynamic_lookup_element(m, ctx.root(), k)), k * k);
  }
  DynamicMeta pow2;
  DynamicMeta_set_chunking(&pow2, 64, 4);
  EXPECT_EQ(pow2.chunk_shift, 6);
  EXPECT_EQ(Dynamic_chunk_of(&pow2, 130), 2);
  EXPECT_EQ(Dynamic_offset_in_chunk(&pow2, 130), 2);
}

// Two threads appending to one list get distinct positions and no value is lost.
TEST_F(SNodeDynamicTest, ConcurrentAppendsAreDistinct) {
  std::vector<std::vector<int32_t>> got(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < 16; ++k) {
        int32_t len;
        Ptr slot = Dynamic_allocate(m_, node_, &len);
        *reinterpret_cast<int32_t*>(slot) = len + 1000;
        got[t].push_back(len);
      }
    });
  }
  for (auto& th : threads) th.join();
  std::set<int32_t> all(got[0].begin(), got[0].end());
  all.insert(got[1].begin(), got[1].end());
  EXPECT_EQ(all.size(), 32u);
  for (int k = 0; k < 32; ++k) EXPECT_EQ(At(k), k + 1000);
}

}  // namespace
}  // namespace sparse_runtime
}  // namespace accelmem

#include "sparse_runtime/device/list_manager.h"

#include <algorithm>
#include <cstdint>
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

class ListManagerTest : public ::testing::Test {
 protected:
  ListManagerTest() { pool_.Attach(&memory_); }
  HostMemoryPool pool_;
  RuntimeMemory memory_;
  ListManager list_{};
};

// The chunk size must be a power of two (upstream's message).
TEST_F(ListManagerTest, RejectsNonPowerOfTwoChunks) {
  EXPECT_FALSE(list_.init(&memory_, 4, 12));
  EXPECT_EQ(runtime_error_code(&memory_), kErrorInvalidArgument);
  EXPECT_NE(std::string(memory_.error_message).find("must be POT"), std::string::npos);
}

// Elements are reserved in order and chunks are allocated only when first touched.
TEST_F(ListManagerTest, ChunksAreAllocatedLazily) {
  ASSERT_TRUE(list_.init(&memory_, 8, 4));
  EXPECT_EQ(list_.get_num_active_chunks(), 0);
  for (int k = 0; k < 4; ++k) EXPECT_EQ(list_.reserve_new_element(), k);
  EXPECT_EQ(list_.get_num_active_chunks(), 1);
  EXPECT_EQ(list_.reserve_new_element(), 4);
  EXPECT_EQ(list_.get_num_active_chunks(), 2);
  EXPECT_EQ(list_.size(), 5);
}

// get_element_ptr is chunks[i >> log2] + element_size * (i & mask).
TEST_F(ListManagerTest, ElementAddressIsChunkPlusStride) {
  ASSERT_TRUE(list_.init(&memory_, 12, 8));
  ASSERT_EQ(list_.reserve_new_elements(20), 0);
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(list_.get_element_ptr(i), list_.chunks[i / 8] + 12 * (i % 8)) << i;
  }
}

// Values pushed across chunk boundaries read back in order.
TEST_F(ListManagerTest, PushBackAndGetAcrossChunks) {
  ASSERT_TRUE(list_.init(&memory_, sizeof(int64_t), 16));
  for (int64_t v = 0; v < 1000; ++v) ASSERT_EQ(list_.push_back(v * v), v);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(list_.get<int64_t>(i), int64_t{i} * i);
}

// clear() is lazy: the size drops to zero but chunks and contents stay; resize restores it.
TEST_F(ListManagerTest, ClearIsLazyAndResizeRestores) {
  ASSERT_TRUE(list_.init(&memory_, 4, 4));
  for (int32_t v = 0; v < 10; ++v) list_.push_back(v + 100);
  list_.clear();
  EXPECT_EQ(list_.size(), 0);
  EXPECT_EQ(list_.get_num_active_chunks(), 3);
  EXPECT_EQ(list_.get<int32_t>(9), 109);
  list_.resize(10);
  EXPECT_EQ(list_.size(), 10);
  EXPECT_EQ(list_.push_back(int32_t{7}), 10);
}

// append copies element_size bytes.
TEST_F(ListManagerTest, AppendCopiesElement) {
  ASSERT_TRUE(list_.init(&memory_, 3, 4));
  const char data[3] = {'a', 'b', 'c'};
  ASSERT_EQ(list_.append(data), 0);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(list_.get_element_ptr(0)), 3), "abc");
}

// Running out of chunks is a recorded error and returns -1 / null, not a crash.
TEST_F(ListManagerTest, OutOfChunksIsAnError) {
  ASSERT_TRUE(list_.init(&memory_, 8, 2, /*max_num_chunks=*/2));
  for (int k = 0; k < 4; ++k) ASSERT_EQ(list_.reserve_new_element(), k);
  EXPECT_EQ(runtime_error_code(&memory_), kRuntimeOk);
  EXPECT_EQ(list_.reserve_new_element(), -1);
  EXPECT_EQ(list_.allocate(), nullptr);
  EXPECT_EQ(runtime_error_code(&memory_), kErrorOutOfChunks);
  EXPECT_NE(std::string(memory_.error_message).find("out of chunks"), std::string::npos);
  EXPECT_EQ(list_.reserve_new_elements(3), -1);
}

// Range copies cross chunk boundaries correctly in both directions.
TEST_F(ListManagerTest, RangeCopiesCrossChunks) {
  ASSERT_TRUE(list_.init(&memory_, sizeof(int32_t), 8));
  ASSERT_EQ(list_.reserve_new_elements(40), 0);
  std::vector<int32_t> in(30);
  for (int k = 0; k < 30; ++k) in[k] = 1000 + k;
  list_.write_range(5, 30, in.data());
  for (int k = 0; k < 30; ++k) EXPECT_EQ(list_.get<int32_t>(5 + k), 1000 + k);
  EXPECT_EQ(list_.get<int32_t>(4), 0);
  EXPECT_EQ(list_.get<int32_t>(35), 0);
  std::vector<int32_t> out(17);
  list_.read_range(7, 17, out.data());
  for (int k = 0; k < 17; ++k) EXPECT_EQ(out[k], 1002 + k);
}

// An exhausted memory pool is reported as out of memory.
TEST(ListManagerPoolTest, OutOfMemoryIsAnError) {
  HostMemoryPool pool(/*limit_bytes=*/3 * 4096);
  RuntimeMemory memory;
  pool.Attach(&memory);
  ListManager list{};
  ASSERT_TRUE(list.init(&memory, 4096, 1, /*max_num_chunks=*/16));
  EXPECT_NE(list.allocate(), nullptr);
  EXPECT_NE(list.allocate(), nullptr);
  EXPECT_EQ(list.allocate(), nullptr);
  EXPECT_EQ(runtime_error_code(&memory), kErrorOutOfMemory);
}

// ptr2index inverts get_element_ptr for every element, also for non-power-of-two element sizes.
TEST_F(ListManagerTest, Ptr2IndexInvertsElementPtr) {
  for (uint64_t element_size : {8u, 12u, 24u, 64u, 72u, 1000u}) {
    ListManager list{};
    ASSERT_TRUE(list.init(&memory_, element_size, 16, 64, /*enable_ptr2index=*/true));
    ASSERT_EQ(list.reserve_new_elements(500), 0);
    for (int i = 0; i < 500; ++i) {
      ASSERT_EQ(list.ptr2index(list.get_element_ptr(i)), i) << element_size;
    }
    // Chunks are aligned to the next power of two of their size.
    for (int c = 0; c < list.get_num_active_chunks(); ++c) {
      EXPECT_EQ(
          reinterpret_cast<uintptr_t>(list.chunks[c]) % (uint64_t{1} << list.log2_chunk_alignment),
          0u);
    }
  }
  EXPECT_EQ(runtime_error_code(&memory_), kRuntimeOk);
}

// Pointers that are not the start of an element of this list give -1 and a recorded error.
TEST_F(ListManagerTest, Ptr2IndexRejectsForeignAndInteriorPointers) {
  ASSERT_TRUE(list_.init(&memory_, 24, 16, 64, /*enable_ptr2index=*/true));
  ASSERT_EQ(list_.reserve_new_elements(20), 0);
  int on_stack = 0;
  EXPECT_EQ(list_.ptr2index(&on_stack), -1);
  EXPECT_EQ(runtime_error_code(&memory_), kErrorPtrNotFound);
  runtime_reset_error(&memory_);
  EXPECT_EQ(list_.ptr2index(list_.get_element_ptr(3) + 5), -1);  // interior
  EXPECT_EQ(runtime_error_code(&memory_), kErrorPtrNotFound);
  runtime_reset_error(&memory_);
  // Past the last element of a chunk (the alignment slack of the granule).
  EXPECT_EQ(list_.ptr2index(list_.chunks[0] + 24 * 16), -1);
  EXPECT_EQ(runtime_error_code(&memory_), kErrorPtrNotFound);
}

// The batch forms agree with ptr2index / get_element_ptr element by element, in sequential and
// in shuffled order across chunks, and report unknown or interior pointers as -1.
TEST_F(ListManagerTest, BatchFormsMatchSingleElementCalls) {
  for (uint64_t element_size : {8u, 24u, 64u, 72u}) {
    ListManager list{};
    ASSERT_TRUE(list.init(&memory_, element_size, 16, 64, /*enable_ptr2index=*/true));
    ASSERT_EQ(list.reserve_new_elements(300), 0);
    std::vector<int32_t> indices(300);
    for (int i = 0; i < 300; ++i) indices[i] = i;
    std::mt19937 rng(7);
    for (int round = 0; round < 2; ++round) {
      if (round == 1) std::shuffle(indices.begin(), indices.end(), rng);
      std::vector<Ptr> ptrs(300);
      list.element_ptrs(indices.data(), 300, ptrs.data());
      for (int k = 0; k < 300; ++k) ASSERT_EQ(ptrs[k], list.get_element_ptr(indices[k]));
      std::vector<int32_t> back(300, -7);
      ASSERT_EQ(list.ptrs2indices(ptrs.data(), 300, back.data()), 0);
      EXPECT_EQ(back, indices) << element_size;
    }
    EXPECT_EQ(runtime_error_code(&memory_), kRuntimeOk);
    int on_stack = 0;
    Ptr bad[4] = {list.get_element_ptr(5), reinterpret_cast<Ptr>(&on_stack),
                  list.get_element_ptr(6) + 4, list.get_element_ptr(7) + 1};
    int32_t out[4];
    EXPECT_EQ(list.ptrs2indices(bad, 4, out), 3);
    EXPECT_EQ(out[0], 5);
    EXPECT_EQ(out[1], -1);
    EXPECT_EQ(out[2], -1);
    EXPECT_EQ(out[3], -1);
    EXPECT_EQ(runtime_error_code(&memory_), kErrorPtrNotFound);
    runtime_reset_error(&memory_);
  }
}

// Batches that look like runs in one chunk (first, middle and last pointer share it) take the
// run path: in address order and reversed they agree with ptr2index; a pointer of another chunk,
// an interior pointer or a foreign run inside such a batch still gives the right answer.
TEST_F(ListManagerTest, Ptrs2IndicesRunsInOneChunk) {
  for (uint64_t element_size : {8u, 24u, 72u}) {
    ListManager list{};
    ASSERT_TRUE(list.init(&memory_, element_size, 512, 8, /*enable_ptr2index=*/true));
    ASSERT_EQ(list.reserve_new_elements(1024), 0);  // two chunks
    std::vector<int32_t> indices(256);
    for (int k = 0; k < 256; ++k) indices[k] = 100 + k;  // all in chunk 0
    for (int round = 0; round < 2; ++round) {
      if (round == 1) std::reverse(indices.begin(), indices.end());
      std::vector<Ptr> ptrs(256);
      list.element_ptrs(indices.data(), 256, ptrs.data());
      std::vector<int32_t> back(256, -7);
      ASSERT_EQ(list.ptrs2indices(ptrs.data(), 256, back.data()), 0);
      EXPECT_EQ(back, indices) << element_size;
    }
    std::vector<int32_t> mixed = indices;
    mixed[77] = 700;  // chunk 1, between a first, middle and last of chunk 0
    std::vector<Ptr> ptrs(256);
    list.element_ptrs(mixed.data(), 256, ptrs.data());
    std::vector<int32_t> back(256, -7);
    ASSERT_EQ(list.ptrs2indices(ptrs.data(), 256, back.data()), 0);
    EXPECT_EQ(back, mixed) << element_size;
    EXPECT_EQ(runtime_error_code(&memory_), kRuntimeOk);
    ptrs[31] += 1;  // interior
    ASSERT_EQ(list.ptrs2indices(ptrs.data(), 256, back.data()), 1);
    EXPECT_EQ(back[31], -1);
    back[31] = mixed[31];
    EXPECT_EQ(back, mixed) << element_size;
    EXPECT_EQ(runtime_error_code(&memory_), kErrorPtrNotFound);
    runtime_reset_error(&memory_);
    // A run inside memory the list does not own.
    std::vector<uint64_t> foreign(64);
    std::vector<Ptr> stray(32);
    for (int k = 0; k < 32; ++k) stray[k] = reinterpret_cast<Ptr>(&foreign[k]);
    std::vector<int32_t> none(32, 0);
    EXPECT_EQ(list.ptrs2indices(stray.data(), 32, none.data()), 32);
    EXPECT_EQ(none, std::vector<int32_t>(32, -1));
    runtime_reset_error(&memory_);
  }
}

// Chunks whose granules collide in the table (spread over more granules than it has slots) are
// found by the full probe: ptr2index and ptrs2indices (whose fast pass reads home slots only)
// still invert get_element_ptr for every element.
TEST_F(ListManagerTest, Ptr2IndexResolvesGranuleTableCollisions) {
  ListManager list{};
  // 8 chunks of 16 elements of 8 B: G = 128 B, a table of 16 slots.
  ASSERT_TRUE(list.init(&memory_, 8, 16, 8, /*enable_ptr2index=*/true));
  for (int c = 0; c < 8; ++c) {
    // Memory taken between the chunks spreads them over > 16 granules.
    ASSERT_NE(allocate_aligned(&memory_, 2048 + 128 * c, 128, true), nullptr);
    ASSERT_EQ(list.reserve_new_elements(16), 16 * c);
  }
  int displaced = 0;
  for (int c = 0; c < 8; ++c) {
    const uint64_t granule =
        reinterpret_cast<uint64_t>(list.chunks[c]) >> list.log2_chunk_alignment;
    displaced += list.granule_keys[list.granule_home_slot(granule)] != granule ? 1 : 0;
  }
  ASSERT_GT(displaced, 0) << "no collision: the test would not exercise the probe";
  std::vector<int32_t> indices(128);
  for (int i = 0; i < 128; ++i) indices[i] = i;
  std::shuffle(indices.begin(), indices.end(), std::mt19937(3));
  std::vector<Ptr> ptrs(128);
  list.element_ptrs(indices.data(), 128, ptrs.data());
  std::vector<int32_t> back(128, -7);
  EXPECT_EQ(list.ptrs2indices(ptrs.data(), 128, back.data()), 0);
  EXPECT_EQ(back, indices);
  for (int k = 0; k < 128; ++k) EXPECT_EQ(list.ptr2index(ptrs[k]), indices[k]);
  EXPECT_EQ(runtime_error_code(&memory_), kRuntimeOk);
}

// Without enable_ptr2index, ptr2index reports an error.
TEST_F(ListManagerTest, Ptr2IndexRequiresTable) {
  ASSERT_TRUE(list_.init(&memory_, 8, 16));
  ASSERT_NE(list_.allocate(), nullptr);
  EXPECT_EQ(list_.ptr2index(list_.get_element_ptr(0)), -1);
  EXPECT_EQ(runtime_error_code(&memory_), kErrorPtrNotFound);
}

// Concurrent reservations hand out every index exactly once.
TEST_F(ListManagerTest, ConcurrentReservationsAreDistinct) {
  ASSERT_TRUE(list_.init(&memory_, 4, 64, 1024, /*enable_ptr2index=*/true));
  constexpr int kPerThread = 20000;
  std::vector<std::vector<int>> got(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < kPerThread; ++k) {
        int i = (k % 3 == 0) ? list_.reserve_new_elements(2) : list_.reserve_new_element();
        got[t].push_back(i);
        list_.get<int32_t>(i) = i;
        if (k % 3 == 0) {
          got[t].push_back(i + 1);
          list_.get<int32_t>(i + 1) = i + 1;
        }
        EXPECT_EQ(list_.ptr2index(list_.get_element_ptr(i)), i);
      }
    });
  }
  for (auto& th : threads) th.join();
  std::set<int> all(got[0].begin(), got[0].end());
  all.insert(got[1].begin(), got[1].end());
  EXPECT_EQ(all.size(), got[0].size() + got[1].size());
  EXPECT_EQ(static_cast<int>(all.size()), list_.size());
  EXPECT_EQ(*all.begin(), 0);
  EXPECT_EQ(*all.rbegin(), list_.size() - 1);
  for (int i : all) EXPECT_EQ(list_.get<int32_t>(i), i);
}

}  // namespace
}  // namespace sparse_runtime
}  // namespace accelmem

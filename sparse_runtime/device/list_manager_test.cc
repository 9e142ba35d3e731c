#include "sparse_runtime/device/list_manager.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
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

// Callers that keep trying once the list is full do not move its counter on: a reservation that
// lay wholly past the capacity is taken back (else 2^32 tries would wrap the counter back to
// indices handed out already). One that straddled the end is refused whole, its in-range part
// unused.
TEST_F(ListManagerTest, RetriesPastTheEndKeepTheCounter) {
  ASSERT_TRUE(list_.init(&memory_, 8, 2, /*max_num_chunks=*/2));
  for (int k = 0; k < 3; ++k) ASSERT_EQ(list_.reserve_new_element(), k);
  EXPECT_EQ(list_.reserve_new_elements(2), -1);  // [3, 5) straddles the capacity of 4
  EXPECT_EQ(list_.size(), 5);
  EXPECT_EQ(list_.valid_size(), 3);  // entry 3 was never written
  const ListManager::Appender appender = list_.appender();
  for (int k = 0; k < 100000; ++k) {
    ASSERT_EQ(list_.reserve_new_element(), -1);
    ASSERT_EQ(list_.reserve_new_elements(1 + k % 7), -1);
    ASSERT_EQ(appender.push_back(int64_t{k}), -1);
    ASSERT_EQ(list_.push_back(int64_t{k}), -1);
  }
  EXPECT_EQ(list_.size(), 5);
  EXPECT_EQ(list_.valid_size(), 3);
  EXPECT_EQ(runtime_error_code(&memory_), kErrorOutOfChunks);
  list_.clear();
  EXPECT_EQ(list_.valid_size(), 0);
  EXPECT_EQ(list_.reserve_new_element(), 0);
  EXPECT_EQ(list_.valid_size(), 1);  // the refusal is forgotten with the entries
}

// A chunk that cannot be allocated (out of memory) below the capacity leaves a hole: appends
// after it may succeed once memory is back, but valid_size() stops at the hole, so readers never
// take the unwritten entry (a fresh chunk's zero, or an earlier fill's stale value) for data.
HostAllocateFn real_allocate = nullptr;
bool refuse_allocations = false;
void* MaybeRefuse(void* pool, u64 size, u64 alignment) {
  return refuse_allocations ? nullptr : real_allocate(pool, size, alignment);
}

TEST_F(ListManagerTest, ValidSizeStopsAtAnOutOfMemoryHole) {
  ASSERT_TRUE(list_.init(&memory_, sizeof(int32_t), 4, /*max_num_chunks=*/8));
  for (int k = 0; k < 8; ++k) ASSERT_EQ(list_.push_back(int32_t{100 + k}), k);
  real_allocate = memory_.host_allocate;
  memory_.host_allocate = MaybeRefuse;
  refuse_allocations = true;
  EXPECT_EQ(list_.push_back(int32_t{108}), -1);  // index 8 needs chunk 2
  EXPECT_EQ(runtime_error_code(&memory_), kErrorOutOfMemory);
  refuse_allocations = false;
  EXPECT_EQ(list_.push_back(int32_t{109}), 9);  // chunk 2 now exists; entry 8 is a hole
  EXPECT_EQ(list_.reserve_new_elements(3), 10);
  EXPECT_EQ(list_.size(), 13);
  EXPECT_EQ(list_.valid_size(), 8);
  refuse_allocations = true;
  EXPECT_EQ(list_.reserve_new_elements(4), -1);  // [13, 17): chunk 4 refused, 3 holds 12..15
  EXPECT_EQ(list_.valid_size(), 8);              // the lowest refusal wins
  memory_.host_allocate = real_allocate;
  list_.resize(8);
  EXPECT_EQ(list_.valid_size(), 8);
  EXPECT_EQ(list_.push_back(int32_t{108}), 8);
  EXPECT_EQ(list_.valid_size(), 9);
}

// Property test against a plain model (a map from index to the value written there): random
// appends (one at a time, through an Appender, in ranges), clears, and refusals of chunk memory
// switched on and off, on both layouts. Every index handed out is new since the last clear and
// below the capacity, valid_size() is the written prefix and each entry in it holds what was
// written there, the counter
// stays near the capacity however many appends are refused, and the refusals are all reported.
HostCommitFn real_commit = nullptr;
bool MaybeRefuseCommit(void* pool, void* address, u64 size) {
  return !refuse_allocations && real_commit(pool, address, size);
}

class ListManagerModelTest : public ::testing::TestWithParam<bool> {};

TEST_P(ListManagerModelTest, RandomAppendsWithRefusalsMatchTheModel) {
  const bool contiguous = GetParam();
  HostMemoryPool pool;
  RuntimeMemory memory;
  pool.Attach(&memory, /*reservations=*/contiguous);
  ListManager list{};
  ASSERT_TRUE(list.init(&memory, sizeof(int32_t), 8, /*max_num_chunks=*/12,
                        /*enable_ptr2index=*/contiguous));
  ASSERT_EQ(list.is_contiguous(), contiguous);
  real_allocate = memory.host_allocate;
  real_commit = memory.host_commit;
  memory.host_allocate = MaybeRefuse;
  memory.host_commit = MaybeRefuseCommit;
  refuse_allocations = false;
  const int64_t capacity = list.capacity();
  std::map<int32_t, int32_t> written;  // since the last clear
  std::mt19937 rng(contiguous ? 11 : 12);
  int32_t next_value = 1;
  int refused = 0;
  for (int step = 0; step < 20000; ++step) {
    const int op = static_cast<int>(rng() % 100);
    if (op < 3) {
      refuse_allocations = !refuse_allocations;
    } else if (op < 5) {
      list.clear();
      written.clear();
    } else if (op < 55) {
      const int32_t v = next_value++;
      const int32_t i = op < 30 ? list.push_back(v) : list.appender().push_back(v);
      if (i < 0) {
        ++refused;
        continue;
      }
      ASSERT_LT(i, capacity);
      ASSERT_TRUE(written.emplace(i, v).second) << "index " << i << " handed out twice";
    } else {
      const int32_t n = 1 + static_cast<int32_t>(rng() % 12);
      const int32_t first = list.reserve_new_elements(n);
      if (first < 0) {
        ++refused;
        continue;
      }
      ASSERT_LE(first + int64_t{n}, capacity);
      std::vector<int32_t> values(n);
      for (int32_t& v : values) v = next_value++;
      list.write_range(first, n, values.data());
      for (int32_t k = 0; k < n; ++k) {
        ASSERT_TRUE(written.emplace(first + k, values[k]).second) << first + k << " twice";
      }
    }
    const int32_t valid = list.valid_size();
    ASSERT_LE(valid, list.size());
    // Single-threaded, every entry handed out is written at once: the written prefix ends
    // exactly at the first refused entry (or at the size), which is where valid_size() must.
    int32_t prefix = 0;
    while (written.count(prefix) != 0) ++prefix;
    ASSERT_EQ(valid, prefix) << "at step " << step;
    ASSERT_LE(list.size(), capacity + 12) << "the counter ran on at step " << step;
    for (int32_t k = 0; k < valid; ++k) {
      auto it = written.find(k);
      ASSERT_NE(it, written.end()) << "entry " << k << " below valid_size() was never written";
      ASSERT_EQ(list.get<int32_t>(k), it->second) << k;
    }
  }
  memory.host_allocate = real_allocate;
  memory.host_commit = real_commit;
  EXPECT_GT(refused, 100);
  EXPECT_NE(runtime_error_code(&memory), kRuntimeOk);
}

INSTANTIATE_TEST_SUITE_P(Layouts, ListManagerModelTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return std::string(info.param ? "Contiguous" : "Chunked");
                         });

// An Appender taken before the list grows appends exactly what push_back appends (checked
// against a std::vector model), across chunk boundaries (each new chunk through the out-of-line
// write), in the contiguous and the chunked layout, and refuses the element past the last chunk
// with kErrorOutOfChunks as push_back does.
TEST(ListManagerAppenderTest, AppendsWhatPushBackAppendsInBothLayouts) {
  for (const bool contiguous : {true, false}) {
    SCOPED_TRACE(contiguous ? "contiguous" : "chunked");
    HostMemoryPool pool;
    RuntimeMemory memory;
    pool.Attach(&memory);
    ListManager list{};
    ASSERT_TRUE(list.init(&memory, sizeof(int32_t), 8, /*max_num_chunks=*/4,
                          /*enable_ptr2index=*/true, /*allow_contiguous=*/contiguous));
    ASSERT_EQ(list.is_contiguous(), contiguous);
    const ListManager::Appender appender = list.appender();
    std::vector<int32_t> model;
    std::mt19937 rng(contiguous ? 7 : 11);
    for (int k = 0; k < 32; ++k) {
      const int32_t v = static_cast<int32_t>(rng());
      ASSERT_EQ(k % 2 == 0 ? appender.push_back(v) : list.push_back(v), k);
      model.push_back(v);
    }
    EXPECT_EQ(list.get_num_active_chunks(), 4);
    ASSERT_EQ(list.size(), 32);
    for (int k = 0; k < 32; ++k) EXPECT_EQ(list.get<int32_t>(k), model[k]) << k;
    EXPECT_EQ(runtime_error_code(&memory), kRuntimeOk);
    EXPECT_EQ(appender.push_back(int32_t{5}), -1);
    EXPECT_EQ(runtime_error_code(&memory), kErrorOutOfChunks);
  }
}

// At the end of the index space the Appender refuses kMaxIndex + 1 as reserve_new_element does.
TEST(ListManagerAppenderTest, RefusesTheLastInt32) {
  HostMemoryPool pool;
  RuntimeMemory memory;
  pool.Attach(&memory);
  ListManager list{};
  ASSERT_TRUE(list.init(&memory, 1, 1 << 12, /*max_num_chunks=*/(1 << 19),
                        /*enable_ptr2index=*/false, /*allow_contiguous=*/false));
  list.resize(ListManager::kMaxIndex);
  const ListManager::Appender appender = list.appender();
  EXPECT_EQ(appender.push_back(uint8_t{9}), ListManager::kMaxIndex);
  EXPECT_EQ(list.get<uint8_t>(ListManager::kMaxIndex), 9);
  EXPECT_EQ(runtime_error_code(&memory), kRuntimeOk);
  EXPECT_EQ(appender.push_back(uint8_t{9}), -1);
  EXPECT_EQ(runtime_error_code(&memory), kErrorOutOfChunks);
  EXPECT_EQ(appender.push_back(uint8_t{9}), -1);  // the counter was given back: still full
  EXPECT_EQ(list.size(), ListManager::kMaxIndex + 1);
}

// A list of 1-byte elements in chunks of 2^12, 2^19 chunks (exactly 2^31 elements), chunked so
// that only the chunks touched are allocated, its counter set to `size`.
struct ListAtTheEnd {
  explicit ListAtTheEnd(i32 size) {
    pool.Attach(&memory);
    ok = list.init(&memory, 1, 1 << 12, /*max_num_chunks=*/(1 << 19),
                   /*enable_ptr2index=*/false, /*allow_contiguous=*/false);
    list.resize(size);
  }
  HostMemoryPool pool;
  RuntimeMemory memory;
  ListManager list{};
  bool ok = false;
};

// The index space ends at kMaxIndex = 2^31 - 2, for one element and for a range: the last i32
// value is refused with kErrorOutOfChunks rather than handed out (a contiguous list's ptr2index
// could not name it). Chunked layout, so that only the last chunk is allocated.
TEST(ListManagerIndexSpaceTest, IndexSpaceEndsBeforeTheLastInt32) {
  EXPECT_EQ(ListManager::kMaxIndex, 0x7ffffffe);
  ListAtTheEnd one(ListManager::kMaxIndex);
  ASSERT_TRUE(one.ok);
  EXPECT_EQ(one.list.reserve_new_element(), ListManager::kMaxIndex);
  EXPECT_EQ(runtime_error_code(&one.memory), kRuntimeOk);
  EXPECT_NE(one.list.get_element_ptr(ListManager::kMaxIndex), nullptr);
  EXPECT_EQ(one.list.reserve_new_element(), -1);
  EXPECT_EQ(runtime_error_code(&one.memory), kErrorOutOfChunks);
  EXPECT_EQ(one.list.size(), ListManager::kMaxIndex + 1);
  EXPECT_EQ(one.list.reserve_new_element(), -1);  // the counter was given back: still full
  EXPECT_EQ(one.list.size(), ListManager::kMaxIndex + 1);

  ListAtTheEnd past(ListManager::kMaxIndex - 1);
  ASSERT_TRUE(past.ok);
  EXPECT_EQ(past.list.reserve_new_elements(3), -1);  // would end at 2^31 - 1
  EXPECT_EQ(runtime_error_code(&past.memory), kErrorOutOfChunks);
  ListAtTheEnd last(ListManager::kMaxIndex - 1);
  ASSERT_TRUE(last.ok);
  EXPECT_EQ(last.list.reserve_new_elements(2), ListManager::kMaxIndex - 1);  // ends at kMaxIndex
  EXPECT_EQ(runtime_error_code(&last.memory), kRuntimeOk);
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

// ptr2index inverts get_element_ptr for every element, also for non-power-of-two element sizes,
// in the contiguous layout and in the granule-table layout.
TEST_F(ListManagerTest, Ptr2IndexInvertsElementPtr) {
  for (bool contiguous : {true, false}) {
    for (uint64_t element_size : {8u, 12u, 24u, 64u, 72u, 1000u}) {
      ListManager list{};
      ASSERT_TRUE(list.init(&memory_, element_size, 16, 64, /*enable_ptr2index=*/true,
                            /*allow_contiguous=*/contiguous));
      ASSERT_EQ(list.is_contiguous(), contiguous);
      ASSERT_EQ(list.reserve_new_elements(500), 0);
      for (int i = 0; i < 500; ++i) {
        ASSERT_EQ(list.ptr2index(list.get_element_ptr(i)), i) << element_size;
      }
      if (contiguous) continue;
      // Granule layout: chunks are aligned to the next power of two of their size.
      for (int c = 0; c < list.get_num_active_chunks(); ++c) {
        EXPECT_EQ(reinterpret_cast<uintptr_t>(list.chunks[c]) %
                      (uint64_t{1} << list.log2_chunk_alignment),
                  0u);
      }
    }
  }
  EXPECT_EQ(runtime_error_code(&memory_), kRuntimeOk);
}

// Pointers that are not the start of an element of this list give -1 and a recorded error
// (granule-table layout).
TEST_F(ListManagerTest, Ptr2IndexRejectsForeignAndInteriorPointers) {
  ASSERT_TRUE(list_.init(&memory_, 24, 16, 64, /*enable_ptr2index=*/true,
                         /*allow_contiguous=*/false));
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
// in shuffled order across chunks, and report unknown or interior pointers as -1 (both layouts).
TEST_F(ListManagerTest, BatchFormsMatchSingleElementCalls) {
  for (int variant = 0; variant < 8; ++variant) {
    constexpr uint64_t kSizes[4] = {8, 24, 64, 72};
    const uint64_t element_size = kSizes[variant % 4];
    const bool contiguous = variant < 4;
    ListManager list{};
    ASSERT_TRUE(list.init(&memory_, element_size, 16, 64, /*enable_ptr2index=*/true,
                          /*allow_contiguous=*/contiguous));
    ASSERT_EQ(list.is_contiguous(), contiguous);
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

// element_ptrs (four elements per step where vectorized, then one at a time) against
// get_element_ptr for every batch length 0..13 at every start in the index array, with random
// indices, cells of 8 B to 64 KiB, both layouts; nothing past out[n - 1] is written.
TEST_F(ListManagerTest, ElementPtrsEveryLengthAndStart) {
  for (const bool contiguous : {true, false}) {
    for (uint64_t element_size : {8u, 24u, 64u, 4104u, 65536u}) {
      SCOPED_TRACE(std::to_string(element_size) + (contiguous ? " contiguous" : " chunked"));
      ListManager list{};
      ASSERT_TRUE(list.init(&memory_, element_size, 16, 64, /*enable_ptr2index=*/true,
                            /*allow_contiguous=*/contiguous));
      ASSERT_EQ(list.is_contiguous(), contiguous);
      constexpr int kElements = 200;
      ASSERT_EQ(list.reserve_new_elements(kElements), 0);
      std::mt19937 rng(static_cast<uint32_t>(element_size));
      std::vector<int32_t> indices(64);
      for (int32_t& i : indices) i = static_cast<int32_t>(rng() % kElements);
      indices[5] = kElements - 1;
      indices[6] = 0;
      Ptr* const sentinel = reinterpret_cast<Ptr*>(&rng);
      for (int n = 0; n <= 13; ++n) {
        for (int start = 0; start + n + 1 <= static_cast<int>(indices.size()); start += 3) {
          std::vector<Ptr> out(n + 1, reinterpret_cast<Ptr>(sentinel));
          list.element_ptrs(indices.data() + start, n, out.data());
          for (int k = 0; k < n; ++k) {
            ASSERT_EQ(out[k], list.get_element_ptr(indices[start + k])) << n << " " << start;
          }
          ASSERT_EQ(out[n], reinterpret_cast<Ptr>(sentinel)) << n << " " << start;
        }
      }
    }
  }
  EXPECT_EQ(runtime_error_code(&memory_), kRuntimeOk);
}

// element_ptrs where index * size passes 2^32 (cells of 1 MiB, 4.3 GB of committed address space,
// never touched): the 32 x 32 -> 64-bit products keep their high bits.
TEST_F(ListManagerTest, ElementPtrsPastFourGigabytes) {
  ListManager list{};
  ASSERT_TRUE(list.init(&memory_, uint64_t{1} << 20, 16, 512, /*enable_ptr2index=*/true,
                        /*allow_contiguous=*/true));
  ASSERT_TRUE(list.is_contiguous());
  constexpr int32_t kElements = 4112;  // 4112 MiB > 4 GiB
  ASSERT_EQ(list.reserve_new_elements(kElements), 0);
  const std::vector<int32_t> indices = {4111, 4096, 1, 4095, 4100, 0, 4097, 2048, 4111};
  std::vector<Ptr> out(indices.size());
  list.element_ptrs(indices.data(), static_cast<int32_t>(indices.size()), out.data());
  for (size_t k = 0; k < indices.size(); ++k) {
    EXPECT_EQ(out[k], list.get_element_ptr(indices[k])) << indices[k];
    EXPECT_EQ(static_cast<uint64_t>(out[k] - list.get_element_ptr(0)),
              static_cast<uint64_t>(indices[k]) << 20);
  }
  EXPECT_EQ(runtime_error_code(&memory_), kRuntimeOk);
}

// Granule layout: batches that look like runs in one chunk (first, middle and last pointer share
// it) take the run path: in address order and reversed they agree with ptr2index; a pointer of
// another chunk, an interior pointer or a foreign run inside such a batch still gives the right
// answer.
TEST_F(ListManagerTest, Ptrs2IndicesRunsInOneChunk) {
  for (uint64_t element_size : {8u, 24u, 72u}) {
    ListManager list{};
    ASSERT_TRUE(list.init(&memory_, element_size, 512, 8, /*enable_ptr2index=*/true,
                          /*allow_contiguous=*/false));
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

// Granule layout: chunks whose granules collide in the table (spread over more granules than it has
// slots) are found by the full probe: ptr2index and ptrs2indices (whose fast pass reads home slots
// only) still invert get_element_ptr for every element.
TEST_F(ListManagerTest, Ptr2IndexResolvesGranuleTableCollisions) {
  ListManager list{};
  // 8 chunks of 16 elements of 8 B: G = 128 B, a table of 16 slots.
  ASSERT_TRUE(list.init(&memory_, 8, 16, 8, /*enable_ptr2index=*/true, /*allow_contiguous=*/false));
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

// Contiguous layout: the list is one reservation, element i at base + i * element_size, and the
// index <-> address round trip holds over many chunks, singly and in batches, in any order.
TEST_F(ListManagerTest, ContiguousRoundTripOverManyChunks) {
  for (uint64_t element_size : {uint64_t{8}, uint64_t{24}, uint64_t{64}, uint64_t{72}}) {
    ListManager list{};
    ASSERT_TRUE(list.init(&memory_, element_size, 8, 1024, /*enable_ptr2index=*/true));
    ASSERT_TRUE(list.is_contiguous());
    ASSERT_EQ(list.reserve_new_elements(5000), 0);  // 625 chunks
    EXPECT_EQ(list.get_num_active_chunks(), 625);
    std::vector<int32_t> indices(5000);
    for (int i = 0; i < 5000; ++i) {
      ASSERT_EQ(list.get_element_ptr(i), list.contiguous_base + element_size * i) << i;
      ASSERT_EQ(list.ptr2index(list.get_element_ptr(i)), i) << i;
      indices[i] = i;
    }
    std::shuffle(indices.begin(), indices.end(), std::mt19937(11));
    std::vector<Ptr> ptrs(5000);
    list.element_ptrs(indices.data(), 5000, ptrs.data());
    std::vector<int32_t> back(5000, -7);
    EXPECT_EQ(list.ptrs2indices(ptrs.data(), 5000, back.data()), 0);
    EXPECT_EQ(back, indices) << element_size;
    EXPECT_EQ(runtime_error_code(&memory_), kRuntimeOk);
  }
}

// Contiguous layout: foreign pointers, interior pointers, the address just below the base and
// cells of chunks that are not committed yet are all rejected with kErrorPtrNotFound.
TEST_F(ListManagerTest, ContiguousRejectsUnknownAndInteriorPointers) {
  ASSERT_TRUE(list_.init(&memory_, 24, 16, 64, /*enable_ptr2index=*/true));
  ASSERT_TRUE(list_.is_contiguous());
  ASSERT_EQ(list_.reserve_new_elements(20), 0);  // chunks 0 and 1 committed
  int on_stack = 0;
  const Ptr base = list_.contiguous_base;
  const Ptr bad[] = {reinterpret_cast<Ptr>(&on_stack),
                     base + 24 * 3 + 5,
                     base + 1,
                     base - 24,
                     base - 48,
                     base - 1,
                     base + 24 * 32,
                     base + 24 * 100};
  for (Ptr p : bad) {
    EXPECT_EQ(list_.ptr2index(p), -1) << static_cast<const void*>(p);
    EXPECT_EQ(runtime_error_code(&memory_), kErrorPtrNotFound);
    runtime_reset_error(&memory_);
  }
  int32_t out[8];
  EXPECT_EQ(list_.ptrs2indices(bad, 8, out), 8);
  EXPECT_EQ(list_.ptr2index(nullptr), -1);
  for (int32_t v : out) EXPECT_EQ(v, -1);
  EXPECT_EQ(runtime_error_code(&memory_), kErrorPtrNotFound);
  runtime_reset_error(&memory_);
  // The last cell of the committed prefix is known, the first one past it is not.
  EXPECT_EQ(list_.ptr2index(base + 24 * 31), 31);
  EXPECT_EQ(list_.find_index(base + 24 * 32), -1);
  EXPECT_EQ(runtime_error_code(&memory_), kRuntimeOk);
}

// Contiguous layout: the lead elements in front of element 0 are committed and zero from init on
// (before any chunk), every reserved index lies after them, and ptr2index rejects them (above).
TEST_F(ListManagerTest, ContiguousLeadElementsAreZeroAndNeverHandedOut) {
  for (uint64_t element_size : {8u, 24u, 104u, 4096u}) {
    ListManager list{};
    ASSERT_TRUE(list.init(&memory_, element_size, 16, 64, /*enable_ptr2index=*/true));
    ASSERT_TRUE(list.is_contiguous());
    const Ptr base = list.contiguous_base;
    const Ptr lead = base - ListManager::kContiguousLeadElements * element_size;
    for (uint64_t b = 0; b < ListManager::kContiguousLeadElements * element_size; ++b) {
      ASSERT_EQ(lead[b], 0) << element_size << " byte " << b;
    }
    // Cells keep the alignment they would have at a chunk's start.
    const uint64_t alignment = std::max<uint64_t>(element_size & (~element_size + 1), 64);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(base) % alignment, 0u) << element_size;
    const int32_t first = list.reserve_new_elements(40);
    ASSERT_EQ(first, 0);
    for (int32_t k = 0; k < 40; ++k) EXPECT_GE(list.get_element_ptr(k), base);
    EXPECT_EQ(list.find_index(lead), -1);
    EXPECT_EQ(list.find_index(base - element_size), -1);
    EXPECT_EQ(runtime_error_code(&memory_), kRuntimeOk);
  }
}

// Contiguous layout: using up the reservation's chunks is kErrorOutOfChunks (no crash, no write
// past the reservation), and the cells already handed out stay valid.
TEST_F(ListManagerTest, ContiguousReservationExhaustionIsOutOfChunks) {
  ASSERT_TRUE(list_.init(&memory_, 64, 4, /*max_num_chunks=*/3, /*enable_ptr2index=*/true));
  ASSERT_TRUE(list_.is_contiguous());
  for (int k = 0; k < 12; ++k) {
    Ptr p = list_.allocate();
    ASSERT_NE(p, nullptr);
    std::memset(p, 0x5a, 64);
  }
  EXPECT_EQ(runtime_error_code(&memory_), kRuntimeOk);
  EXPECT_EQ(list_.allocate(), nullptr);
  EXPECT_EQ(runtime_error_code(&memory_), kErrorOutOfChunks);
  runtime_reset_error(&memory_);
  EXPECT_EQ(list_.reserve_new_elements(2), -1);
  EXPECT_EQ(runtime_error_code(&memory_), kErrorOutOfChunks);
  EXPECT_EQ(list_.get_num_active_chunks(), 3);
  EXPECT_EQ(list_.ptr2index(list_.get_element_ptr(11)), 11);
}

// Contiguous layout: a pool whose byte limit stops the commit gives kErrorOutOfMemory, not a
// crash; the committed cells stay usable.
TEST(ListManagerPoolTest, ContiguousCommitOverLimitIsOutOfMemory) {
  HostMemoryPool pool(/*limit_bytes=*/64 * 1024);
  RuntimeMemory memory;
  pool.Attach(&memory);
  ListManager list{};
  // 4 KiB chunks; the chunk table takes one page of the limit.
  ASSERT_TRUE(list.init(&memory, 64, 64, /*max_num_chunks=*/64, /*enable_ptr2index=*/true));
  ASSERT_TRUE(list.is_contiguous());
  int32_t got = 0;
  while (got < 64 * 64 && list.allocate() != nullptr) ++got;
  EXPECT_LT(got, 64 * 64);
  EXPECT_GT(got, 0);
  EXPECT_EQ(runtime_error_code(&memory), kErrorOutOfMemory);
  EXPECT_LE(pool.bytes_mapped(), 64u * 1024);
  std::memset(list.get_element_ptr(got - 1), 1, 64);
  EXPECT_EQ(list.ptr2index(list.get_element_ptr(got - 1)), got - 1);
}

// Fallback: a memory without reservation callbacks (as the preallocated device mode) keeps the
// chunked layout with the granule table, which behaves as before.
TEST(ListManagerPoolTest, FallbackWithoutReservationsUsesGranuleTable) {
  HostMemoryPool pool;
  RuntimeMemory memory;
  pool.Attach(&memory, /*reservations=*/false);
  ListManager list{};
  ASSERT_TRUE(list.init(&memory, 24, 16, 64, /*enable_ptr2index=*/true));
  EXPECT_FALSE(list.is_contiguous());
  EXPECT_NE(list.granule_keys, nullptr);
  EXPECT_EQ(pool.num_reservations(), 0u);
  ASSERT_EQ(list.reserve_new_elements(100), 0);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(list.ptr2index(list.get_element_ptr(i)), i);
  EXPECT_EQ(list.ptr2index(list.get_element_ptr(3) + 1), -1);
  EXPECT_EQ(runtime_error_code(&memory), kErrorPtrNotFound);
  // The preallocated mode cannot reserve either.
  std::vector<uint64_t> region(1 << 16);
  RuntimeMemory device;
  runtime_memory_init_preallocated(&device, reinterpret_cast<Ptr>(region.data()),
                                   region.size() * sizeof(uint64_t));
  ListManager on_device{};
  ASSERT_TRUE(on_device.init(&device, 24, 16, 64, /*enable_ptr2index=*/true));
  EXPECT_FALSE(on_device.is_contiguous());
  ASSERT_EQ(on_device.reserve_new_elements(50), 0);
  for (int i = 0; i < 50; ++i) ASSERT_EQ(on_device.ptr2index(on_device.get_element_ptr(i)), i);
}

// A refused reservation (the pool's address-space cap) falls back to the granule table silently.
TEST(ListManagerPoolTest, RefusedReservationFallsBack) {
  HostMemoryPool pool(/*limit_bytes=*/0, /*max_reserved_bytes=*/uint64_t{1} << 30);
  RuntimeMemory memory;
  pool.Attach(&memory);
  ListManager list{};
  ASSERT_TRUE(list.init(&memory, 64, 16384, 2048, /*enable_ptr2index=*/true));  // wants 2 GiB
  EXPECT_FALSE(list.is_contiguous());
  EXPECT_EQ(pool.num_reservations(), 0u);
  EXPECT_EQ(runtime_error_code(&memory), kRuntimeOk);
  ASSERT_EQ(list.reserve_new_elements(40000), 0);
  EXPECT_EQ(list.ptr2index(list.get_element_ptr(39999)), 39999);
  // A list that fits is still contiguous.
  ListManager small{};
  ASSERT_TRUE(small.init(&memory, 64, 16384, 64, /*enable_ptr2index=*/true));  // 64 MiB
  EXPECT_TRUE(small.is_contiguous());
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

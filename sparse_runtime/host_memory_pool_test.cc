#include "sparse_runtime/host_memory_pool.h"

#include <cstdint>
#include <cstring>

#include "gtest/gtest.h"

namespace accelmem {
namespace sparse_runtime {
namespace {

// Allocations are zero-filled and aligned as requested, including alignments above a page.
TEST(HostMemoryPoolTest, ZeroFilledAndAligned) {
  HostMemoryPool pool;
  for (uint64_t alignment : {uint64_t{8}, uint64_t{4096}, uint64_t{1} << 16, uint64_t{1} << 21}) {
    auto* p = static_cast<unsigned char*>(pool.Allocate(10000, alignment));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % alignment, 0u);
    for (int k = 0; k < 10000; ++k) ASSERT_EQ(p[k], 0);
    std::memset(p, 0xab, 10000);
  }
  EXPECT_EQ(pool.num_mappings(), 4u);
  EXPECT_EQ(pool.bytes_mapped(), 4u * 12288u);
}

// Destroying a pool unmaps every byte it handed out.
TEST(HostMemoryPoolTest, DestructionReturnsEveryByte) {
  const uint64_t before = HostMemoryPool::LiveBytesAllProcess();
  {
    HostMemoryPool pool;
    for (int k = 0; k < 10; ++k) ASSERT_NE(pool.Allocate(1 << 20, 1 << 20), nullptr);
    EXPECT_EQ(HostMemoryPool::LiveBytesAllProcess(), before + 10 * (1 << 20));
  }
  EXPECT_EQ(HostMemoryPool::LiveBytesAllProcess(), before);
}

// The byte limit makes further allocations fail (null), as an exhausted device pool would.
TEST(HostMemoryPoolTest, LimitIsEnforced) {
  HostMemoryPool pool(/*limit_bytes=*/16384);
  EXPECT_NE(pool.Allocate(8192, 8), nullptr);
  EXPECT_NE(pool.Allocate(8192, 8), nullptr);
  EXPECT_EQ(pool.Allocate(1, 8), nullptr);
}

// Attach routes RuntimeMemory allocations to the pool.
TEST(HostMemoryPoolTest, AttachServesRuntimeMemory) {
  HostMemoryPool pool;
  RuntimeMemory memory;
  pool.Attach(&memory);
  Ptr p = allocate_aligned(&memory, 100, 128, true);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 128, 0u);
  EXPECT_EQ(pool.num_mappings(), 1u);
}

// A reservation maps no memory; commits make a growing prefix usable and zero-filled, count as
// mapped bytes (rounded to the commit step) and are undone when the pool is destroyed.
TEST(HostMemoryPoolTest, ReserveAndCommitPrefix) {
  const uint64_t before = HostMemoryPool::LiveBytesAllProcess();
  {
    HostMemoryPool pool;
    auto* base = static_cast<unsigned char*>(pool.Reserve(1 << 20, 1 << 16));
    ASSERT_NE(base, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(base) % (1 << 16), 0u);
    EXPECT_EQ(pool.bytes_mapped(), 0u);
    EXPECT_EQ(pool.bytes_reserved(), 1u << 20);
    ASSERT_TRUE(pool.Commit(base, 100));
    EXPECT_EQ(pool.bytes_mapped(), 4096u);
    for (int k = 0; k < 4096; ++k) ASSERT_EQ(base[k], 0);
    std::memset(base, 1, 4096);
    // A commit past the committed end also commits the gap; one inside it is free.
    ASSERT_TRUE(pool.Commit(base + 5 * 4096, 4096));
    EXPECT_EQ(pool.bytes_mapped(), 6u * 4096);
    ASSERT_TRUE(pool.Commit(base + 4096, 10));
    EXPECT_EQ(pool.bytes_mapped(), 6u * 4096);
    std::memset(base, 2, 6 * 4096);
    EXPECT_EQ(HostMemoryPool::LiveBytesAllProcess(), before + 6 * 4096);
    // Outside any reservation, or past its end: refused.
    EXPECT_FALSE(pool.Commit(base + (1 << 20), 1));
    EXPECT_FALSE(pool.Commit(base + (1 << 20) - 1, 2));
    int on_stack = 0;
    EXPECT_FALSE(pool.Commit(&on_stack, 4));
  }
  EXPECT_EQ(HostMemoryPool::LiveBytesAllProcess(), before);
}

// A huge-page reservation's first commit rounds to pages (a data list's lead elements), every
// later one to whole 2 MiB steps from its start.
TEST(HostMemoryPoolTest, HugeReservationCommitsPagesThenSteps) {
  constexpr uint64_t kStep = uint64_t{2} << 20;
  HostMemoryPool pool;
  auto* base = static_cast<unsigned char*>(pool.Reserve(4 * kStep, 64));
  ASSERT_NE(base, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(base) % kStep, 0u);
  ASSERT_TRUE(pool.Commit(base, 256));  // a data list's lead elements
  EXPECT_EQ(pool.bytes_mapped(), 4096u);
  ASSERT_TRUE(pool.Commit(base + 4096, 100 * 1024));  // the first chunk: the first step
  EXPECT_EQ(pool.bytes_mapped(), kStep);
  ASSERT_TRUE(pool.Commit(base + kStep + 5, 1));
  EXPECT_EQ(pool.bytes_mapped(), 2 * kStep);
  for (uint64_t k = 0; k < 2 * kStep; k += 4096) ASSERT_EQ(base[k], 0) << k;
}

// Commits respect the byte limit; reservations beyond the address-space cap are refused.
TEST(HostMemoryPoolTest, CommitLimitAndReservationCap) {
  HostMemoryPool pool(/*limit_bytes=*/3 * 4096);
  auto* base = static_cast<unsigned char*>(pool.Reserve(1 << 20, 4096));
  ASSERT_NE(base, nullptr);
  EXPECT_TRUE(pool.Commit(base, 3 * 4096));
  EXPECT_FALSE(pool.Commit(base, 3 * 4096 + 1));
  EXPECT_EQ(pool.Allocate(1, 8), nullptr);
  HostMemoryPool capped(/*limit_bytes=*/0, /*max_reserved_bytes=*/uint64_t{1} << 30);
  EXPECT_NE(capped.Reserve(uint64_t{1} << 29, 4096), nullptr);
  EXPECT_EQ(capped.Reserve(uint64_t{1} << 30, 4096), nullptr);
  EXPECT_EQ(capped.bytes_reserved(), uint64_t{1} << 29);
}

// Large reservations are 2 MiB-aligned and, after their first commit, committed in whole 2 MiB
// steps (huge pages).
TEST(HostMemoryPoolTest, LargeReservationsCommitHugeSteps) {
  HostMemoryPool pool;
  auto* base = static_cast<unsigned char*>(pool.Reserve(64 << 20, 64));
  ASSERT_NE(base, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(base) % (2 << 20), 0u);
  ASSERT_TRUE(pool.Commit(base, 100));
  ASSERT_TRUE(pool.Commit(base, 1 << 20));
  EXPECT_EQ(pool.bytes_mapped(), 2u << 20);
  base[(2 << 20) - 1] = 1;
}

// Attach without reservations leaves the memory without reserve/commit callbacks (the fallback).
TEST(HostMemoryPoolTest, AttachWithOrWithoutReservations) {
  HostMemoryPool pool;
  RuntimeMemory memory;
  pool.Attach(&memory);
  EXPECT_NE(reserve_address_space(&memory, 1 << 20, 64), nullptr);
  pool.Attach(&memory, /*reservations=*/false);
  EXPECT_EQ(reserve_address_space(&memory, 1 << 20, 64), nullptr);
  EXPECT_EQ(pool.num_reservations(), 1u);
}

}  // namespace
}  // namespace sparse_runtime
}  // namespace accelmem

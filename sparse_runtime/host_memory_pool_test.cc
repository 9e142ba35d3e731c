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

}  // namespace
}  // namespace sparse_runtime
}  // namespace accelmem

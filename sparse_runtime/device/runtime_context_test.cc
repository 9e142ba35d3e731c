#include "sparse_runtime/device/runtime_context.h"

#include <cstdint>
#include <cstring>

#include "gtest/gtest.h"
#include "sparse_runtime/host_memory_pool.h"

namespace accelmem {
namespace sparse_runtime {
namespace {

class RuntimeContextTest : public ::testing::Test {
 protected:
  RuntimeContextTest() {
    std::memset(&rt_, 0, sizeof(rt_));
    pool_.Attach(&rt_.memory);
  }
  HostMemoryPool pool_;
  RuntimeContext rt_;
};

// The root buffer is rounded up to 4096 bytes, page-aligned and zero-filled.
TEST_F(RuntimeContextTest, RootBufferIsZeroedAndRounded) {
  ASSERT_TRUE(runtime_context_init(&rt_, 3, 5000));
  EXPECT_EQ(rt_.root_size, 8192u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(rt_.root) % 4096, 0u);
  for (uint64_t b = 0; b < rt_.root_size; ++b) ASSERT_EQ(rt_.root[b], 0);
  for (int id = 0; id < 3; ++id) {
    EXPECT_EQ(rt_.node_managers[id], nullptr);
    EXPECT_EQ(rt_.ambient_elements[id], nullptr);
  }
}

// A sparse SNode gets one NodeManager and one zeroed ambient element of its cell size: with the
// host pool's reservations, the lead cell in front of the contiguous cells, aligned as a cell
// (element size 104: 8 bytes); otherwise 128-aligned.
TEST_F(RuntimeContextTest, AllocatorAndAmbientPerSparseSNode) {
  ASSERT_TRUE(runtime_context_init(&rt_, 3, 64));
  ASSERT_TRUE(runtime_initialize_snode_allocator(&rt_, 2, 100, 4, 16, 64));
  NodeManager* nm = runtime_node_manager(&rt_, 2);
  ASSERT_NE(nm, nullptr);
  EXPECT_EQ(nm->element_size, 104u);
  Ptr ambient = runtime_ambient_element(&rt_, 2);
  ASSERT_NE(ambient, nullptr);
  if (nm->data_list.is_contiguous()) {
    EXPECT_EQ(ambient, nm->data_list.contiguous_base - nm->element_size);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(ambient) % 8, 0u);
  } else {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(ambient) % 128, 0u);
  }
  EXPECT_EQ(rt_.ambient_sizes[2], 104u);
  for (int b = 0; b < 104; ++b) EXPECT_EQ(ambient[b], 0);
  EXPECT_EQ(runtime_node_manager(&rt_, 1), nullptr);
}

// Per-tree tables have no fixed SNode limit (upstream caps global ids at 1024, #4065).
TEST_F(RuntimeContextTest, ManySNodes) {
  ASSERT_TRUE(runtime_context_init(&rt_, 5000, 64));
  ASSERT_TRUE(runtime_initialize_snode_allocator(&rt_, 4999, 8, 8, 16, 4));
  EXPECT_NE(runtime_node_manager(&rt_, 4999), nullptr);
  EXPECT_FALSE(runtime_initialize_snode_allocator(&rt_, 5000, 8, 8, 16, 4));
  EXPECT_EQ(runtime_error_code(&rt_), kErrorInvalidArgument);
}

// Every runtime byte (root, tables, managers, chunks, ambient) comes from the pool, and an
// exhausted pool is an error.
TEST(RuntimeContextPoolTest, EverythingComesFromThePool) {
  HostMemoryPool pool(/*limit_bytes=*/64 * 4096);
  RuntimeContext rt;
  std::memset(&rt, 0, sizeof(rt));
  pool.Attach(&rt.memory);
  ASSERT_TRUE(runtime_context_init(&rt, 2, 64));
  const uint64_t before = pool.bytes_mapped();
  ASSERT_TRUE(runtime_initialize_snode_allocator(&rt, 1, 64, 8, 16, 4));
  EXPECT_GT(pool.bytes_mapped(), before);
  NodeManager* nm = runtime_node_manager(&rt, 1);
  ASSERT_NE(nm->allocate(), nullptr);
  runtime_gc_serial(&rt, 1);
  EXPECT_FALSE(runtime_context_init(&rt, 2, 1 << 30));
  EXPECT_EQ(runtime_error_code(&rt), kErrorOutOfMemory);
}

}  // namespace
}  // namespace sparse_runtime
}  // namespace accelmem

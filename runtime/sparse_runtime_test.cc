// The sparse runtime suite (sparse_runtime_test_suite.cc) on the native backend, plus the native
// backend's own parallel allocation path (per-worker NodeCaches).
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/sparse_runtime_test_suite.h"

namespace accelmem {
namespace runtime {

using sparse_runtime::Axis;
using sparse_runtime::SNode;
using sparse_runtime::SNodeTree;
namespace {

INSTANTIATE_TEST_SUITE_P(Native, SparseRuntimeTest,
                         ::testing::Values(RuntimeBackendParam{"Native", nullptr}),
                         RuntimeBackendName);

// A tree with a dense "driver" branch to run ParallelStructFor over and a pointer branch that the
// visitors allocate in: 4096 pointer cells of 4 floats each.
struct CacheTree {
  CacheTree() {
    seed = &tree.root().dense(Axis(0), 64);
    seed->place<int32_t>("seed");
    ptr = &tree.root().pointer(Axis(1), 4096);
    ptr->dense(Axis(1), 4).place<float>("x");
    EXPECT_TRUE(tree.Finalize().ok());
    x = tree.FindPlace("x");
  }
  SNodeTree tree;
  SNode* seed = nullptr;
  SNode* ptr = nullptr;
  const SNode* x = nullptr;
};

// Pointer cells activated from ParallelStructFor workers come from the workers' NodeCaches: every
// write lands, the caches are handed back when the struct-for ends (the automatic collection
// returns the unused cached cells to the free list), and every slot is in use, free or recycled
// exactly once.
TEST(NativeSparseRuntimeTest, ParallelActivationThroughWorkerCaches) {
  CacheTree t;
  SparseRuntimeOptions options;
  options.num_threads = 4;
  auto rt = SparseRuntime::Create(t.tree, options);
  ASSERT_TRUE(rt.ok()) << rt.status();
  SparseRuntime& r = **rt;
  ASSERT_TRUE(r.ParallelStructFor(*t.seed, [&](absl::Span<const int32_t> index, void*, int) {
                 // 63 per task: the workers' counts are not multiples of the cache batch.
                 for (int32_t m = 0; m < 63; ++m) {
                   const int32_t j = (index[0] * 64 + m) * 4;
                   EXPECT_TRUE(r.Write<float>(*t.x, {j}, static_cast<float>(j + 1)).ok());
                 }
               }).ok());
  const SNodeMemoryStats stats = r.Stats(*t.ptr);
  EXPECT_EQ(stats.cells_in_use, 64 * 63);
  EXPECT_EQ(stats.cells_recycled, 0) << "cached cells were handed back and collected";
  EXPECT_EQ(stats.cells_reserved, stats.cells_in_use + stats.cells_free);
  EXPECT_TRUE(r.CheckInvariants().ok()) << r.CheckInvariants();
  for (int32_t j = 0; j < 16384; ++j) {
    const bool written = j % 4 == 0 && (j / 4) % 64 != 63;
    ASSERT_EQ(r.Read<float>(*t.x, {j}).value(), written ? j + 1.0f : 0.0f) << j;
  }
}

// Deactivations from ParallelStructFor workers recycle into the workers' caches; after the
// struct-for the cells are collected (zeroed, free), and later activations reuse them.
TEST(NativeSparseRuntimeTest, ParallelDeactivationThroughWorkerCaches) {
  CacheTree t;
  SparseRuntimeOptions options;
  options.num_threads = 4;
  auto rt = SparseRuntime::Create(t.tree, options);
  ASSERT_TRUE(rt.ok()) << rt.status();
  SparseRuntime& r = **rt;
  for (int32_t c = 0; c < 4096; ++c) ASSERT_TRUE(r.Write<float>(*t.x, {4 * c + 1}, 2.0f).ok());
  ASSERT_TRUE(r.ParallelStructFor(*t.seed, [&](absl::Span<const int32_t> index, void*, int) {
                 for (int32_t m = 0; m < 64; m += 2) {
                   EXPECT_TRUE(r.Deactivate(*t.ptr, {index[0] * 64 + m}).ok());
                 }
               }).ok());
  SNodeMemoryStats stats = r.Stats(*t.ptr);
  EXPECT_EQ(stats.cells_in_use, 2048);
  EXPECT_EQ(stats.cells_recycled, 0);
  EXPECT_TRUE(r.CheckInvariants().ok()) << r.CheckInvariants();
  for (int32_t c = 0; c < 4096; ++c) {
    ASSERT_EQ(r.Read<float>(*t.x, {4 * c + 1}).value(), c % 2 == 0 ? 0.0f : 2.0f) << c;
  }
  const int64_t reserved = stats.cells_reserved;
  ASSERT_TRUE(r.ParallelStructFor(*t.seed, [&](absl::Span<const int32_t> index, void*, int) {
                 for (int32_t m = 0; m < 64; m += 2) {
                   EXPECT_TRUE(r.Activate(*t.ptr, {index[0] * 64 + m}).ok());
                 }
               }).ok());
  stats = r.Stats(*t.ptr);
  EXPECT_EQ(stats.cells_in_use, 4096);
  EXPECT_EQ(stats.cells_reserved, reserved) << "collected cells are reused, none newly reserved";
  EXPECT_TRUE(r.CheckInvariants().ok()) << r.CheckInvariants();
}

// Garbage of many allocator SNodes is collected in one pass (the runtime's way) or one
// collection per allocator (UpstreamEmulation::one_pass_gc off): the same cells end free and zeroed
// either way, and SNodes without garbage are not collected.
TEST(NativeSparseRuntimeTest, OnePassCollectsEverySNodeWithGarbage) {
  SNodeTree tree;
  std::vector<SNode*> pointers;
  for (int k = 0; k < 6; ++k) {
    pointers.push_back(&tree.root().pointer(Axis(0), 64));
    // Cell sizes 16, 32, 48, 16, 32, 48 bytes: two allocators of each size.
    pointers.back()->dense(Axis(0), 4 * (1 + k % 3)).place<float>("x" + std::to_string(k));
  }
  ASSERT_TRUE(tree.Finalize().ok());
  for (bool one_pass : {true, false}) {
    SCOPED_TRACE(one_pass);
    SparseRuntimeOptions options;
    options.auto_collect = false;
    options.gc_workers = 2;
    UpstreamEmulation upstream;
    upstream.one_pass_gc = one_pass;
    auto rt = SparseRuntimeTestPeer::Create(tree, options, upstream);
    ASSERT_TRUE(rt.ok()) << rt.status();
    SparseRuntime& r = **rt;
    for (int round = 1; round <= 3; ++round) {
      for (int k = 0; k < 6; ++k) {
        const SNode& x = *tree.FindPlace("x" + std::to_string(k));
        const int32_t cells = 4 * (1 + k % 3);
        for (int32_t b = 0; b < 64; ++b) {
          ASSERT_TRUE(r.Write<float>(x, {b * cells}, 7.0f).ok());
        }
        if (k == 4) continue;  // keeps its cells: no garbage
        for (int32_t b = 0; b < 64; b += 2) ASSERT_TRUE(r.Deactivate(*pointers[k], {b}).ok());
      }
      ASSERT_TRUE(r.CollectGarbage().ok());
      EXPECT_EQ(r.num_gc_collections(), 5 * round);
      EXPECT_EQ(r.num_gc_passes(), one_pass ? round : 5 * round);
      for (int k = 0; k < 6; ++k) {
        const SNodeMemoryStats stats = r.Stats(*pointers[k]);
        EXPECT_EQ(stats.cells_recycled, 0) << k;
        EXPECT_EQ(stats.cells_in_use, k == 4 ? 64 : 32) << k;
      }
      ASSERT_TRUE(r.CheckInvariants().ok()) << r.CheckInvariants();
    }
    // Reactivated cells come back zeroed (the collection zeroed them).
    for (int k = 0; k < 6; ++k) {
      const SNode& x = *tree.FindPlace("x" + std::to_string(k));
      const int32_t cells = 4 * (1 + k % 3);
      ASSERT_TRUE(r.Activate(*pointers[k], {0}).ok());
      auto v = r.Read<float>(x, {cells - 1});
      ASSERT_TRUE(v.ok());
      EXPECT_EQ(*v, 0.0f) << k;
    }
  }
}

}  // namespace
}  // namespace runtime
}  // namespace accelmem

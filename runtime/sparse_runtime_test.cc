// The sparse runtime suite (sparse_runtime_test_suite.cc) on the native backend, plus the native
// backend's own parallel allocation path (per-worker NodeCaches).
#include <cstdint>

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

}  // namespace
}  // namespace runtime
}  // namespace accelmem

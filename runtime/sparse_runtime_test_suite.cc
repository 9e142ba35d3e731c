#include "runtime/sparse_runtime_test_suite.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace accelmem {
namespace sparse_runtime {

std::unique_ptr<SparseRuntime> SparseRuntimeTest::Make(SNodeTree& tree,
                                                       SparseRuntimeOptions options) {
  absl::Status status = tree.Finalize();
  EXPECT_TRUE(status.ok()) << status;
  options.kernel_backend = GetParam().factory;
  auto rt = SparseRuntime::Create(tree, options);
  EXPECT_TRUE(rt.ok()) << rt.status();
  return std::move(rt).value();
}

std::string RuntimeBackendName(const ::testing::TestParamInfo<RuntimeBackendParam>& info) {
  return info.param.name;
}

namespace {

using ::testing::HasSubstr;

const Axis i(0), j(1), k(2);

SparseRuntimeOptions Threads(int n) {
  SparseRuntimeOptions options;
  options.num_threads = n;
  return options;
}

// Garbage collection only on explicit CollectGarbage(), so recycled cells can be observed.
SparseRuntimeOptions ManualGc() {
  SparseRuntimeOptions options;
  options.auto_collect = false;
  return options;
}

// Reads of never-activated pointer, bitmasked and dynamic cells return 0 (the ambient value).
TEST_P(SparseRuntimeTest, InactiveCellsReadZero) {
  SNodeTree tree;
  tree.root().pointer(i, 4).place<float>("p");
  tree.root().bitmasked(j, 4).place<int32_t>("b");
  tree.root().dense(i, 2).dynamic(k, 8, 4).place<double>("d");
  auto rt = Make(tree);
  EXPECT_EQ(rt->Read<float>(*tree.FindPlace("p"), {3}).value(), 0.0f);
  EXPECT_EQ(rt->Read<int32_t>(*tree.FindPlace("b"), {2}).value(), 0);
  EXPECT_EQ(rt->Read<double>(*tree.FindPlace("d"), {1, 5}).value(), 0.0);
  EXPECT_FALSE(rt->IsActive(*tree.FindPlace("p")->parent(), {3}).value());
  EXPECT_TRUE(rt->CheckInvariants().ok());
}

// A write activates its path and reads back; other cells of the block read 0.
TEST_P(SparseRuntimeTest, WriteActivatesPath) {
  SNodeTree tree;
  tree.root().dense({i, j}, {4, 4}).pointer({i, j}, {8, 8}).dynamic(k, 64, 16).place<float>("x");
  auto rt = Make(tree);
  const SNode& x = *tree.FindPlace("x");
  const SNode& dyn = *x.parent();
  const SNode& ptr = *dyn.parent();
  ASSERT_TRUE(rt->Write<float>(x, {9, 17, 20}, 2.5f).ok());
  EXPECT_EQ(rt->Read<float>(x, {9, 17, 20}).value(), 2.5f);
  EXPECT_EQ(rt->Read<float>(x, {9, 17, 3}).value(), 0.0f);
  EXPECT_TRUE(rt->IsActive(ptr, {9, 17}).value());
  EXPECT_FALSE(rt->IsActive(ptr, {9, 16}).value());
  EXPECT_EQ(rt->Length(dyn, {9, 17}).value(), 21);
  EXPECT_EQ(rt->Stats(ptr).cells_in_use, 1);
  EXPECT_EQ(rt->Stats(dyn).cells_in_use, 2);  // chunks of 16: indices 0..20
}

// Upstream probe: activate cells 1 and 2, deactivate 1 + GC, reactivating 1 reuses its slot and
// reads 0; activating 3 takes a fresh slot.
TEST_P(SparseRuntimeTest, DeactivateGcReactivateReusesZeroedCell) {
  SNodeTree tree;
  tree.root().pointer(i, 8).dense(i, 4).place<int32_t>("x");
  auto rt = Make(tree, ManualGc());
  const SNode& x = *tree.FindPlace("x");
  const SNode& ptr = *x.parent()->parent();
  ASSERT_TRUE(rt->Write<int32_t>(x, {4 * 1 + 2}, 11).ok());
  ASSERT_TRUE(rt->Write<int32_t>(x, {4 * 2 + 3}, 22).ok());
  NodeManager* nm = runtime_node_manager(rt->context(), ptr.id());
  Ptr cell1 = Pointer_lookup_element(rt->meta(ptr), rt->context()->root, 1);
  ASSERT_TRUE(rt->Deactivate(ptr, {1}).ok());
  EXPECT_EQ(rt->Read<int32_t>(x, {6}).value(), 0);
  EXPECT_EQ(rt->Stats(ptr).cells_recycled, 1);
  ASSERT_TRUE(rt->CollectGarbage().ok());
  EXPECT_EQ(rt->Stats(ptr).cells_free, 1);
  ASSERT_TRUE(rt->Activate(ptr, {1}).ok());
  EXPECT_EQ(Pointer_lookup_element(rt->meta(ptr), rt->context()->root, 1), cell1);
  EXPECT_EQ(rt->Read<int32_t>(x, {6}).value(), 0);
  EXPECT_EQ(rt->Read<int32_t>(x, {11}).value(), 22);
  ASSERT_TRUE(rt->Activate(ptr, {3}).ok());
  EXPECT_EQ(nm->locate(Pointer_lookup_element(rt->meta(ptr), rt->context()->root, 3)), 2);
  EXPECT_EQ(nm->data_list.size(), 3);
  EXPECT_TRUE(rt->CheckInvariants().ok());
}

// With auto_collect, the runtime collects right after a deactivating Deactivate: the cell is free
// again (not recycled), zeroed, and reused FIFO, without an explicit CollectGarbage.
TEST_P(SparseRuntimeTest, AutoCollectAfterDeactivate) {
  SNodeTree tree;
  tree.root().pointer(i, 8).dense(i, 4).place<int32_t>("x");
  SparseRuntimeOptions options;
  options.auto_collect = true;
  auto rt = Make(tree, options);
  const SNode& x = *tree.FindPlace("x");
  const SNode& ptr = *x.parent()->parent();
  ASSERT_TRUE(rt->Write<int32_t>(x, {4 * 1 + 2}, 11).ok());
  Ptr cell1 = Pointer_lookup_element(rt->meta(ptr), rt->context()->root, 1);
  ASSERT_TRUE(rt->Deactivate(ptr, {1}).ok());
  EXPECT_EQ(rt->Stats(ptr).cells_recycled, 0);
  EXPECT_EQ(rt->Stats(ptr).cells_free, 1);
  EXPECT_EQ(rt->num_gc_collections(), 1);
  ASSERT_TRUE(rt->Activate(ptr, {5}).ok());
  EXPECT_EQ(Pointer_lookup_element(rt->meta(ptr), rt->context()->root, 5), cell1);
  EXPECT_EQ(rt->Read<int32_t>(x, {4 * 5 + 2}).value(), 0);
  EXPECT_TRUE(rt->CheckInvariants().ok());
}

// Collection runs only for allocators that have recycled cells: deactivating an inactive cell,
// or an explicit CollectGarbage with nothing recycled, runs no collection.
TEST_P(SparseRuntimeTest, CollectOnlyWhenCellsAreRecycled) {
  SNodeTree tree;
  tree.root().pointer(i, 8).pointer(i, 4).place<int32_t>("x");
  SparseRuntimeOptions options;
  options.auto_collect = true;
  auto rt = Make(tree, options);
  const SNode& x = *tree.FindPlace("x");
  const SNode& outer = *x.parent()->parent();
  ASSERT_TRUE(rt->Deactivate(outer, {3}).ok());  // never active: nothing recycled
  ASSERT_TRUE(rt->CollectGarbage().ok());
  EXPECT_EQ(rt->num_gc_collections(), 0);
  ASSERT_TRUE(rt->Write<int32_t>(x, {4 * 2 + 1}, 7).ok());
  ASSERT_TRUE(rt->Deactivate(outer, {2}).ok());  // recycles one outer and one inner cell
  EXPECT_EQ(rt->num_gc_collections(), 2);
  ASSERT_TRUE(rt->CollectGarbage().ok());
  EXPECT_EQ(rt->num_gc_collections(), 2);
}

// Deactivations inside a struct-for visitor are collected once the struct-for ends (a batch),
// never from inside the visitor.
TEST_P(SparseRuntimeTest, AutoCollectAfterStructForBatch) {
  SNodeTree tree;
  tree.root().pointer(i, 16).dense(i, 2).place<int32_t>("x");
  SparseRuntimeOptions options;
  options.auto_collect = true;
  options.num_threads = 2;
  auto rt = Make(tree, options);
  const SNode& x = *tree.FindPlace("x");
  const SNode& ptr = *x.parent()->parent();
  for (int32_t k = 0; k < 16; ++k) ASSERT_TRUE(rt->Write<int32_t>(x, {2 * k}, k + 1).ok());
  ASSERT_TRUE(rt->ParallelStructFor(ptr, [&](absl::Span<const int32_t> index, void*, int) {
                  if (index[0] % 2 == 0) {
                    EXPECT_TRUE(rt->Deactivate(ptr, index).ok());
                  }
                }).ok());
  EXPECT_EQ(rt->Stats(ptr).cells_recycled, 0);
  EXPECT_EQ(rt->Stats(ptr).cells_free, 8);
  EXPECT_EQ(rt->num_gc_collections(), 1);
  EXPECT_EQ(rt->Read<int32_t>(x, {2 * 3}).value(), 4);
  EXPECT_TRUE(rt->CheckInvariants().ok());
}

// A deactivated bitmasked cell under dense reads 0 (upstream returns stale data).
TEST_P(SparseRuntimeTest, BitmaskedUnderDense) {
  SNodeTree tree;
  tree.root().dense(i, 3).bitmasked(i, 5).place<int16_t>("v");
  auto rt = Make(tree);
  const SNode& v = *tree.FindPlace("v");
  const SNode& bm = *v.parent();
  for (int n = 0; n < 15; n += 2) ASSERT_TRUE(rt->Write<int16_t>(v, {n}, int16_t(n + 1)).ok());
  for (int n = 0; n < 15; ++n) {
    EXPECT_EQ(rt->IsActive(bm, {n}).value(), n % 2 == 0) << n;
    EXPECT_EQ(rt->Read<int16_t>(v, {n}).value(), n % 2 == 0 ? n + 1 : 0);
  }
  ASSERT_TRUE(rt->Deactivate(bm, {6}).ok());
  EXPECT_FALSE(rt->IsActive(bm, {6}).value());
  EXPECT_EQ(rt->Read<int16_t>(v, {6}).value(), 0);
  ASSERT_TRUE(rt->Activate(bm, {6}).ok());
  EXPECT_EQ(rt->Read<int16_t>(v, {6}).value(), 0);
  int count = 0;
  ASSERT_TRUE(rt->StructFor(v, [&](absl::Span<const int32_t>, void*) { ++count; }).ok());
  EXPECT_EQ(count, 8);
}

// Pointer under pointer: deactivating the outer cell deactivates the inner ones first, so no
// inner cell leaks (upstream hazard 11) and both allocators get their cells back after GC.
TEST_P(SparseRuntimeTest, NestedPointerUnderPointer) {
  SNodeTree tree;
  tree.root().pointer(i, 4).pointer(i, 4).dense(i, 2).place<int32_t>("x");
  auto rt = Make(tree, ManualGc());
  const SNode& x = *tree.FindPlace("x");
  const SNode& inner = *x.parent()->parent();
  const SNode& outer = *inner.parent();
  for (int n = 0; n < 32; n += 3) ASSERT_TRUE(rt->Write<int32_t>(x, {n}, n).ok());
  EXPECT_EQ(rt->Stats(outer).cells_in_use, 4);
  EXPECT_EQ(rt->Stats(inner).cells_in_use, 11);
  ASSERT_TRUE(rt->Deactivate(outer, {1}).ok());  // covers x[8..15]: inner cells 4..7
  EXPECT_EQ(rt->Stats(outer).cells_recycled, 1);
  EXPECT_EQ(rt->Stats(inner).cells_recycled, 3);  // x 9, 12, 15 -> inner 4, 6, 7
  EXPECT_TRUE(rt->CheckInvariants().ok());
  ASSERT_TRUE(rt->CollectGarbage().ok());
  EXPECT_TRUE(rt->CheckInvariants().ok());
  for (int n = 0; n < 32; ++n) {
    const bool live = n % 3 == 0 && (n < 8 || n >= 16);
    EXPECT_EQ(rt->Read<int32_t>(x, {n}).value(), live ? n : 0) << n;
  }
  EXPECT_FALSE(rt->IsActive(inner, {5}).value());
  // Activating an inner cell under an inactive outer cell activates the outer one too.
  ASSERT_TRUE(rt->Activate(inner, {5}).ok());
  EXPECT_TRUE(rt->IsActive(outer, {1}).value());
  EXPECT_TRUE(rt->CheckInvariants().ok());
}

// Dynamic lists: appends grow chunks, length, overflow past the declared size is an error,
// deactivate returns every chunk.
TEST_P(SparseRuntimeTest, DynamicAppendLengthDeactivate) {
  SNodeTree tree;
  tree.root().dense(i, 3).dynamic(j, 10, 4).place<int32_t>("a");
  auto rt = Make(tree, ManualGc());
  const SNode& a = *tree.FindPlace("a");
  const SNode& dyn = *a.parent();
  for (int n = 0; n < 10; ++n) EXPECT_EQ(rt->Append<int32_t>(a, {1}, 100 + n).value(), n);
  EXPECT_EQ(rt->Length(dyn, {1}).value(), 10);
  EXPECT_EQ(rt->Length(dyn, {0}).value(), 0);
  EXPECT_EQ(rt->Stats(dyn).cells_in_use, 3);
  auto overflow = rt->Append<int32_t>(a, {1}, 7);
  EXPECT_EQ(overflow.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(overflow.status().message(), HasSubstr("declared size"));
  EXPECT_EQ(rt->Length(dyn, {1}).value(), 10);
  EXPECT_EQ(rt->Read<int32_t>(a, {1, 9}).value(), 109);
  ASSERT_TRUE(rt->Deactivate(dyn, {1}).ok());
  EXPECT_EQ(rt->Length(dyn, {1}).value(), 0);
  EXPECT_EQ(rt->Stats(dyn).cells_recycled, 3);
  EXPECT_EQ(rt->Stats(dyn).cells_in_use, 0);
  EXPECT_EQ(rt->Read<int32_t>(a, {1, 9}).value(), 0);
  ASSERT_TRUE(rt->CollectGarbage().ok());
  EXPECT_EQ(rt->Append<int32_t>(a, {1}, 5).value(), 0);
  EXPECT_EQ(rt->Read<int32_t>(a, {1, 1}).value(), 0);  // reused chunk is zero
  EXPECT_TRUE(rt->CheckInvariants().ok());
}

// Struct-for visits every active cell once on non-power-of-two shapes, serially and in
// parallel (upstream's floor split skips cell 24 of pointer(ij,3).dense(ij,5)).
TEST_P(SparseRuntimeTest, StructForCountsNonPowerOfTwo) {
  SNodeTree tree;
  tree.root().pointer({i, j}, {3, 3}).dense({i, j}, {5, 5}).place<int32_t>("x");
  tree.root().pointer(k, 4).dense(k, 129).place<int32_t>("y");
  auto rt = Make(tree, Threads(2));
  const SNode& x = *tree.FindPlace("x");
  const SNode& y = *tree.FindPlace("y");
  ASSERT_TRUE(rt->Write<int32_t>(x, {4, 4}, 1).ok());   // pointer cell (0,0)
  ASSERT_TRUE(rt->Write<int32_t>(x, {14, 9}, 1).ok());  // pointer cell (2,1)
  for (int n = 0; n < 516; n += 129) ASSERT_TRUE(rt->Write<int32_t>(y, {n}, 1).ok());
  std::set<std::pair<int, int>> seen;
  ASSERT_TRUE(rt->StructFor(x, [&](absl::Span<const int32_t> idx, void* value) {
                  EXPECT_TRUE(seen.insert({idx[0], idx[1]}).second);
                  *static_cast<int32_t*>(value) += 10;
                }).ok());
  EXPECT_EQ(seen.size(), 50u);
  EXPECT_TRUE(seen.count({4, 4}) && seen.count({14, 9}) && seen.count({10, 5}) &&
              seen.count({14, 9}));
  EXPECT_EQ(rt->Read<int32_t>(x, {4, 4}).value(), 11);
  std::vector<std::atomic<int>> hits(516);
  ASSERT_TRUE(rt->ParallelStructFor(y, [&](absl::Span<const int32_t> idx, void*, int) {
                  hits[idx[0]].fetch_add(1);
                }).ok());
  for (int n = 0; n < 516; ++n) ASSERT_EQ(hits[n].load(), 1) << n;
  std::atomic<int> x_count{0};
  ASSERT_TRUE(rt->ParallelStructFor(x, [&](absl::Span<const int32_t>, void*, int) {
                  x_count.fetch_add(1);
                }).ok());
  EXPECT_EQ(x_count.load(), 50);
}

// Struct-for over a dynamic place visits every element of every list once, in order, with the
// container index and the position.
TEST_P(SparseRuntimeTest, StructForOverDynamicLists) {
  SNodeTree tree;
  tree.root().dense(i, 3).dynamic(j, 50, 4).place<int32_t>("d");
  auto rt = Make(tree, Threads(2));
  const SNode& d = *tree.FindPlace("d");
  for (int n = 0; n < 13; ++n) ASSERT_TRUE(rt->Append<int32_t>(d, {0}, 100 + n).ok());
  for (int n = 0; n < 50; ++n) ASSERT_TRUE(rt->Append<int32_t>(d, {2}, 200 + n).ok());
  std::vector<std::vector<int>> got;
  ASSERT_TRUE(rt->StructFor(d, [&](absl::Span<const int32_t> idx, void* v) {
                  got.push_back({idx[0], idx[1], *static_cast<int32_t*>(v)});
                }).ok());
  ASSERT_EQ(got.size(), 63u);
  for (int n = 0; n < 13; ++n) EXPECT_EQ(got[n], (std::vector<int>{0, n, 100 + n}));
  for (int n = 0; n < 50; ++n) EXPECT_EQ(got[13 + n], (std::vector<int>{2, n, 200 + n}));
  std::atomic<int> sum{0};
  ASSERT_TRUE(rt->ParallelStructFor(d, [&](absl::Span<const int32_t> idx, void* v, int) {
                  sum += *static_cast<int32_t*>(v) - 100 * (idx[0] / 2 + 1) - idx[1];
                }).ok());
  EXPECT_EQ(sum.load(), 0);
}

// Multi-axis odometer: every cell of a 3-D non-power-of-two block gets its own index.
TEST_P(SparseRuntimeTest, StructForMultiAxisIndices) {
  SNodeTree tree;
  tree.root().pointer({i, j, k}, {2, 3, 2}).dense({i, j, k}, {3, 5, 7}).place<int32_t>("v");
  auto rt = Make(tree);
  const SNode& v = *tree.FindPlace("v");
  ASSERT_TRUE(rt->Write<int32_t>(v, {4, 12, 9}, 1).ok());  // pointer cell (1, 2, 1)
  std::set<std::vector<int>> seen;
  ASSERT_TRUE(rt->StructFor(v, [&](absl::Span<const int32_t> idx, void*) {
                  EXPECT_TRUE(seen.insert({idx[0], idx[1], idx[2]}).second);
                }).ok());
  EXPECT_EQ(seen.size(), 105u);
  EXPECT_EQ(*seen.begin(), (std::vector<int>{3, 10, 7}));
  EXPECT_EQ(*seen.rbegin(), (std::vector<int>{5, 14, 13}));
  EXPECT_TRUE(seen.count({4, 12, 9}));
}

// A struct-for over a non-place SNode reports indices at that SNode's resolution.
TEST_P(SparseRuntimeTest, StructForIndicesAtSNodeResolution) {
  SNodeTree tree;
  tree.root().pointer({i, j}, {4, 4}).dense({i, j}, {2, 2}).place<float>("x");
  auto rt = Make(tree);
  const SNode& x = *tree.FindPlace("x");
  const SNode& ptr = *x.parent()->parent();
  ASSERT_TRUE(rt->Write<float>(x, {3, 2}, 1.0f).ok());
  std::vector<std::vector<int>> got;
  ASSERT_TRUE(rt->StructFor(ptr, [&](absl::Span<const int32_t> idx, void*) {
                  got.push_back({idx[0], idx[1]});
                }).ok());
  EXPECT_EQ(got, (std::vector<std::vector<int>>{{1, 1}}));
}

// Visitors may read and write through the runtime; collecting garbage from one is refused.
TEST_P(SparseRuntimeTest, VisitorsCanCallTheRuntime) {
  SNodeTree tree;
  tree.root().pointer(i, 8).dense(i, 8).place<int32_t>("a").place<int32_t>("b");
  auto rt = Make(tree, Threads(2));
  const SNode& a = *tree.FindPlace("a");
  const SNode& b = *tree.FindPlace("b");
  for (int n = 0; n < 64; n += 5) ASSERT_TRUE(rt->Write<int32_t>(a, {n}, n).ok());
  ASSERT_TRUE(rt->ParallelStructFor(a, [&](absl::Span<const int32_t> idx, void* value, int) {
                  const int32_t v = *static_cast<int32_t*>(value);
                  EXPECT_TRUE(rt->Write<int32_t>(b, idx, v * 2).ok());
                  EXPECT_EQ(rt->CollectGarbage().code(), absl::StatusCode::kFailedPrecondition);
                }).ok());
  EXPECT_EQ(rt->Read<int32_t>(b, {35}).value(), 70);
}

// Allocator exhaustion surfaces as ResourceExhausted from the operation that needed the cell.
TEST_P(SparseRuntimeTest, OutOfChunksIsReported) {
  SNodeTree tree;
  tree.root().pointer(i, 64).place<int64_t>("x");
  SparseRuntimeOptions options;
  options.chunk_num_elements = 4;
  options.max_num_chunks = 2;
  auto rt = Make(tree, options);
  const SNode& x = *tree.FindPlace("x");
  for (int n = 0; n < 8; ++n) ASSERT_TRUE(rt->Write<int64_t>(x, {n}, n).ok());
  absl::Status status = rt->Write<int64_t>(x, {8}, 8);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(status.message(), HasSubstr("out of chunks"));
  EXPECT_EQ(rt->Read<int64_t>(x, {8}).value(), 0);
  // Freed cells become available again after GC.
  ASSERT_TRUE(rt->Deactivate(*x.parent(), {0}).ok());
  ASSERT_TRUE(rt->CollectGarbage().ok());
  EXPECT_TRUE(rt->Write<int64_t>(x, {8}, 8).ok());
}

// Exhausting the memory limit is reported too.
TEST_P(SparseRuntimeTest, MemoryLimitIsReported) {
  SNodeTree tree;
  tree.root().pointer(i, 1024).dense(i, 1024).place<double>("x");
  SparseRuntimeOptions options;
  options.chunk_num_elements = 1;
  options.max_num_chunks = 16;
  options.memory_limit_bytes = 8 << 20;
  auto rt = Make(tree, options);
  absl::Status status;
  int n = 0;
  for (; n < 1024 && status.ok(); ++n)
    status = rt->Write<double>(*tree.FindPlace("x"), {n * 1024}, 1.0);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_LT(n, 1024);
}

// Bad arguments give clear errors.
TEST_P(SparseRuntimeTest, ArgumentErrors) {
  SNodeTree tree;
  tree.root().dense({i, j}, {3, 5}).place<float>("x");
  auto rt = Make(tree);
  const SNode& x = *tree.FindPlace("x");
  EXPECT_EQ(rt->Read<float>(x, {1}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(rt->Read<float>(x, {3, 0}).status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(rt->Read<float>(x, {-1, 0}).status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(rt->Read<int32_t>(x, {0, 0}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(rt->Append<float>(x, {0}, 1.0f).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(rt->Length(*x.parent(), {0}).status().code(), absl::StatusCode::kInvalidArgument);
  SNodeTree unfinished;
  unfinished.root().dense(i, 2).place<float>("x");
  EXPECT_EQ(SparseRuntime::Create(unfinished).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

// Destroying a runtime returns every byte it mapped (upstream leaks allocators, #5777).
TEST_P(SparseRuntimeTest, DestructionReturnsEveryByte) {
  const uint64_t before = HostMemoryPool::LiveBytesAllProcess();
  for (int round = 0; round < 3; ++round) {
    SNodeTree tree;
    tree.root().pointer(i, 64).dynamic(j, 100, 8).place<int32_t>("x");
    auto rt = Make(tree);
    for (int n = 0; n < 64; ++n)
      ASSERT_TRUE(rt->Append<int32_t>(*tree.FindPlace("x"), {n}, n).ok());
    EXPECT_GT(rt->bytes_mapped(), 0u);
    EXPECT_GT(HostMemoryPool::LiveBytesAllProcess(), before);
  }
  EXPECT_EQ(HostMemoryPool::LiveBytesAllProcess(), before);
}

// Statistics: in use + free + recycled = reserved, and bytes are counted.
TEST_P(SparseRuntimeTest, MemoryStatistics) {
  SNodeTree tree;
  tree.root().pointer(i, 100).place<int32_t>("x");
  auto rt = Make(tree, ManualGc());
  const SNode& x = *tree.FindPlace("x");
  const SNode& ptr = *x.parent();
  for (int n = 0; n < 30; ++n) ASSERT_TRUE(rt->Write<int32_t>(x, {n}, 1).ok());
  for (int n = 0; n < 10; ++n) ASSERT_TRUE(rt->Deactivate(ptr, {n}).ok());
  SNodeMemoryStats s = rt->Stats(ptr);
  EXPECT_EQ(s.cells_in_use, 20);
  EXPECT_EQ(s.cells_recycled, 10);
  EXPECT_EQ(s.cells_free, 0);
  EXPECT_EQ(s.cells_reserved, 30);
  EXPECT_GT(s.bytes_reserved, 0u);
  ASSERT_TRUE(rt->CollectGarbage().ok());
  s = rt->Stats(ptr);
  EXPECT_EQ(s.cells_free, 10);
  EXPECT_EQ(s.cells_recycled, 0);
  EXPECT_EQ(rt->Stats(tree.root()).cells_reserved, 0);
}

// The invariant checker detects a corrupted ambient element (what upstream's unactivated writes
// cause) and a lost slot.
TEST_P(SparseRuntimeTest, CheckInvariantsDetectsCorruption) {
  SNodeTree tree;
  tree.root().pointer(i, 8).place<int32_t>("x");
  auto rt = Make(tree);
  const SNode& ptr = *tree.FindPlace("x")->parent();
  ASSERT_TRUE(rt->Activate(ptr, {2}).ok());
  ASSERT_TRUE(rt->CheckInvariants().ok());
  runtime_ambient_element(rt->context(), ptr.id())[0] = 1;
  EXPECT_THAT(rt->CheckInvariants().message(), HasSubstr("ambient element was written"));
  runtime_ambient_element(rt->context(), ptr.id())[0] = 0;
  *Pointer_slot(rt->meta(ptr), rt->context()->root, 2) = nullptr;  // drop the cell on the floor
  EXPECT_THAT(rt->CheckInvariants().message(), HasSubstr("lost"));
}

// ---------------------------------------------------------------------------------------------
// Errors belong to the call that raised them, under any concurrency.

// An integer from the environment (the stress sizes: e.g. ACCELMEM_STRESS_OPS=1000000 by hand),
// or `fallback`.
int64_t EnvInt(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  return std::strtoll(v, nullptr, 10);
}

// Counts the calls whose status (or value) is not the one that call must return.
struct Tally {
  int64_t calls = 0;
  int64_t wrong_status = 0;
  int64_t wrong_value = 0;
  std::vector<std::string> examples;  // the first few, for the failure message

  void Status(const char* what, const absl::Status& got, absl::StatusCode want) {
    ++calls;
    if (got.code() == want) return;
    ++wrong_status;
    if (examples.size() < 8) {
      examples.push_back(
          absl::StrCat(what, ": want ", absl::StatusCodeToString(want), ", got ", got.ToString()));
    }
  }
  void Value(const char* what, int64_t got, int64_t want) {
    if (got == want) return;
    ++wrong_value;
    if (examples.size() < 8) examples.push_back(absl::StrCat(what, ": want ", want, ", got ", got));
  }
  template <typename T>
  void Result(const char* what, const absl::StatusOr<T>& got, absl::StatusCode want,
              int64_t want_value) {
    Status(what, got.status(), want);
    if (got.ok() && want == absl::StatusCode::kOk) Value(what, *got, want_value);
  }
  void Add(const Tally& other) {
    calls += other.calls;
    wrong_status += other.wrong_status;
    wrong_value += other.wrong_value;
    for (const std::string& e : other.examples) {
      if (examples.size() < 8) examples.push_back(e);
    }
  }
  std::string Summary() const {
    return absl::StrCat(wrong_status, " misattributed statuses and ", wrong_value,
                        " wrong values in ", calls,
                        " calls; first: ", absl::StrJoin(examples, " | "));
  }
};

// Starts `n` threads that spin until all are running, then run body(t); joins them.
template <typename Fn>
void RunTogether(int n, const Fn& body) {
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < n; ++t) {
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < n) std::this_thread::yield();
      body(t);
    });
  }
  for (std::thread& th : threads) th.join();
}

// The reported scenario: one thread appends to a full dynamic list (every call must be
// OutOfRange), another writes and deactivates pointer cells (every call must succeed); no call
// may get the other thread's status or an error-less failure. With automatic collection (each
// deactivation collects, exclusively) and without (the two threads overlap more).
TEST_P(SparseRuntimeTest, ConcurrentErrorsStayWithTheirCall) {
  const int64_t rounds = EnvInt("ACCELMEM_STRESS_OPS", 30000) / 6;
  for (const bool auto_collect : {true, false}) {
    SNodeTree tree;
    tree.root().dense(i, 1).dynamic(j, 4, 4).place<int32_t>("d");
    tree.root().pointer(k, 64).place<int32_t>("p");
    SparseRuntimeOptions options;
    options.auto_collect = auto_collect;
    auto rt = Make(tree, options);
    const SNode& d = *tree.FindPlace("d");
    const SNode& p = *tree.FindPlace("p");
    for (int n = 0; n < 4; ++n) ASSERT_TRUE(rt->Append<int32_t>(d, {0}, n).ok());
    Tally tallies[2];
    RunTogether(2, [&](int t) {
      Tally& tally = tallies[t];
      for (int64_t r = 0; r < rounds; ++r) {
        if (t == 0) {
          tally.Status("append to a full list", rt->Append<int32_t>(d, {0}, 1).status(),
                       absl::StatusCode::kOutOfRange);
        } else {
          const int32_t cell = static_cast<int32_t>(r % 64);
          tally.Status("pointer write", rt->Write<int32_t>(p, {cell}, 7), absl::StatusCode::kOk);
          tally.Status("pointer deactivate", rt->Deactivate(*p.parent(), {cell}),
                       absl::StatusCode::kOk);
        }
      }
    });
    tallies[0].Add(tallies[1]);
    std::cout << "[reported scenario] auto_collect " << auto_collect << ": " << tallies[0].Summary()
              << "\n";
    EXPECT_EQ(tallies[0].wrong_status, 0)
        << "auto_collect " << auto_collect << ": " << tallies[0].Summary();
    EXPECT_EQ(rt->Length(*d.parent(), {0}).value(), 4);
    EXPECT_TRUE(rt->CollectGarbage().ok());
    EXPECT_TRUE(rt->CheckInvariants().ok());
  }
}

// Runtime errors raised inside a struct-for's tasks (here by a runtime function the visitor calls
// directly: appending to a full list) are that struct-for's status, serial and parallel; they
// reach no later call and do not stay in the shared slot.
TEST_P(SparseRuntimeTest, StructForOwnsItsTasksErrors) {
  SNodeTree tree;
  tree.root().dense(i, 1).dynamic(j, 2, 2).place<int32_t>("d");
  tree.root().dense(k, 16384).place<int32_t>("s");  // 16 struct-for tasks
  auto rt = Make(tree, Threads(2));
  const SNode& d = *tree.FindPlace("d");
  const SNode& dyn = *d.parent();
  const SNode& s = *tree.FindPlace("s");
  for (int n = 0; n < 2; ++n) ASSERT_TRUE(rt->Append<int32_t>(d, {0}, n).ok());
  Ptr list = nullptr;
  ASSERT_TRUE(rt->StructFor(*dyn.parent(), [&](absl::Span<const int32_t>, void* cell) {
                  list = static_cast<Ptr>(cell) + dyn.offset_in_parent_cell();
                }).ok());
  ASSERT_NE(list, nullptr);
  auto append_directly = [&](absl::Span<const int32_t> index) {
    if (index[0] % 1024 != 3) return;  // once per task
    int32_t length = 0;
    EXPECT_EQ(Dynamic_allocate(rt->meta(dyn), list, &length), nullptr);
  };
  absl::Status status = rt->ParallelStructFor(
      s, [&](absl::Span<const int32_t> index, void*, int) { append_directly(index); });
  EXPECT_EQ(status.code(), absl::StatusCode::kOutOfRange) << status;
  EXPECT_THAT(status.message(), HasSubstr("declared size"));
  status =
      rt->StructFor(s, [&](absl::Span<const int32_t> index, void*) { append_directly(index); });
  EXPECT_EQ(status.code(), absl::StatusCode::kOutOfRange) << status;
  EXPECT_EQ(runtime_error_code(&rt->context()->memory), kRuntimeOk);
  EXPECT_EQ(rt->Length(dyn, {0}).value(), 2);
  EXPECT_TRUE(rt->ParallelStructFor(s, [](absl::Span<const int32_t>, void*, int) {}).ok());
  EXPECT_TRUE(rt->CollectGarbage().ok());
}

// The stress tree. Thread t owns pointer and bitmasked cells [t * kPerThread, (t + 1) *
// kPerThread) of p and b, lists [t * kLists, (t + 1) * kLists) of d, and cell t of s (the
// struct-for driver); e's allocator is exhausted up front (its first kCapacity cells are
// active), so every activation of another e cell fails, deterministically.
constexpr int kMaxStressThreads = 16;
constexpr int kPerThread = 16;
constexpr int kLists = 4;
constexpr int kListSize = 8;
constexpr int kCapacity = 4096;  // cells per allocator: chunk_num_elements, one chunk

struct StressTree {
  StressTree() {
    tree.root().pointer(i, kMaxStressThreads * kPerThread).place<int32_t>("p");
    tree.root().bitmasked(i, kMaxStressThreads * kPerThread).place<int32_t>("b");
    tree.root().dense(i, kMaxStressThreads * kLists).dynamic(j, kListSize, 4).place<int32_t>("d");
    tree.root().pointer(i, 2 * kCapacity).place<int32_t>("e");
    tree.root().dense(i, kMaxStressThreads).place<int32_t>("s");
  }
  void Find() {
    p = tree.FindPlace("p");
    b = tree.FindPlace("b");
    d = tree.FindPlace("d");
    e = tree.FindPlace("e");
    s = tree.FindPlace("s");
  }
  SNodeTree tree;
  const SNode* p = nullptr;
  const SNode* b = nullptr;
  const SNode* d = nullptr;
  const SNode* e = nullptr;
  const SNode* s = nullptr;
};

// What thread t's calls must return: the state of the cells it owns.
struct StressModel {
  int32_t p[kPerThread] = {};  // 0 also when inactive (reads of inactive cells are 0)
  bool p_active[kPerThread] = {};
  int32_t b[kPerThread] = {};
  bool b_active[kPerThread] = {};
  int32_t len[kLists] = {};
  int32_t d[kLists][kListSize] = {};
};

// Appends to thread t's list `c` (through the API), checking the result against the model.
void StressAppend(SparseRuntime& rt, const StressTree& st, StressModel& m, Tally& tally, int t,
                  int c, int32_t v) {
  const int32_t list = t * kLists + c;
  if (m.len[c] < kListSize) {
    tally.Result("append", rt.Append<int32_t>(*st.d, {list}, v), absl::StatusCode::kOk, m.len[c]);
    m.d[c][m.len[c]++] = v;
  } else {
    tally.Status("append to a full list", rt.Append<int32_t>(*st.d, {list}, v).status(),
                 absl::StatusCode::kOutOfRange);
  }
}

void StressWriteP(SparseRuntime& rt, const StressTree& st, StressModel& m, Tally& tally, int t,
                  int x, int32_t v) {
  tally.Status("pointer write", rt.Write<int32_t>(*st.p, {t * kPerThread + x}, v),
               absl::StatusCode::kOk);
  m.p[x] = v;
  m.p_active[x] = true;
}

// One thread of the stress test: `n` calls of every kind of the host API on the cells thread t
// owns (plus out-of-range, malformed and exhausted calls and GC), each checked against what it
// must return.
void StressThread(SparseRuntime& rt, const StressTree& st, int t, int64_t n, Tally& tally) {
  std::mt19937 rng(0x5eed + t);
  StressModel m;
  const SNode& p = *st.p;
  const SNode& ptr = *p.parent();
  const SNode& b = *st.b;
  const SNode& bm = *b.parent();
  const SNode& d = *st.d;
  const SNode& dyn = *d.parent();
  const SNode& e = *st.e;
  const SNode& s = *st.s;
  constexpr auto kOk = absl::StatusCode::kOk;
  constexpr auto kOutOfRange = absl::StatusCode::kOutOfRange;
  constexpr auto kInvalid = absl::StatusCode::kInvalidArgument;
  constexpr auto kExhausted = absl::StatusCode::kResourceExhausted;
  while (tally.calls < n) {
    const uint32_t r = rng();
    const int x = static_cast<int>((r >> 8) % kPerThread);
    const int32_t cell = t * kPerThread + x;
    const int c = static_cast<int>((r >> 12) % kLists);
    const int32_t list = t * kLists + c;
    const int32_t jj = static_cast<int32_t>((r >> 16) % kListSize);
    const int32_t v = static_cast<int32_t>(r >> 4) | 1;
    const int32_t far = static_cast<int32_t>((r >> 20) % 1000);
    switch (r % 32) {
      case 0:
      case 1:
        StressWriteP(rt, st, m, tally, t, x, v);
        break;
      case 2:
        tally.Result("pointer read", rt.Read<int32_t>(p, {cell}), kOk, m.p[x]);
        break;
      case 3:
        tally.Status("pointer activate", rt.Activate(ptr, {cell}), kOk);
        m.p_active[x] = true;
        break;
      case 4:
        tally.Status("pointer deactivate", rt.Deactivate(ptr, {cell}), kOk);
        m.p[x] = 0;
        m.p_active[x] = false;
        break;
      case 5:
        tally.Result("pointer is_active", rt.IsActive(ptr, {cell}), kOk, m.p_active[x]);
        break;
      case 6:
        tally.Status("bitmasked write", rt.Write<int32_t>(b, {cell}, v), kOk);
        m.b[x] = v;
        m.b_active[x] = true;
        break;
      case 7:
        tally.Result("bitmasked read", rt.Read<int32_t>(b, {cell}), kOk, m.b[x]);
        break;
      case 8:
        tally.Status("bitmasked activate", rt.Activate(bm, {cell}), kOk);
        m.b_active[x] = true;
        break;
      case 9:
        tally.Status("bitmasked deactivate", rt.Deactivate(bm, {cell}), kOk);
        m.b[x] = 0;
        m.b_active[x] = false;
        break;
      case 10:
        tally.Result("bitmasked is_active", rt.IsActive(bm, {cell}), kOk, m.b_active[x]);
        break;
      case 11:
      case 12:
      case 13:
        StressAppend(rt, st, m, tally, t, c, v);
        break;
      case 14:
        tally.Result("length", rt.Length(dyn, {list}), kOk, m.len[c]);
        break;
      case 15:
        tally.Status("dynamic write", rt.Write<int32_t>(d, {list, jj}, v), kOk);
        m.d[c][jj] = v;
        m.len[c] = std::max(m.len[c], jj + 1);
        break;
      case 16:
        tally.Result("dynamic read", rt.Read<int32_t>(d, {list, jj}), kOk, m.d[c][jj]);
        break;
      case 17:
        tally.Result("dynamic is_active", rt.IsActive(dyn, {list, jj}), kOk, jj < m.len[c]);
        break;
      case 18:
        tally.Status("dynamic deactivate", rt.Deactivate(dyn, {list}), kOk);
        m.len[c] = 0;
        for (int32_t& value : m.d[c]) value = 0;
        break;
      case 19:  // coordinates outside the index space
        switch (far % 9) {
          case 0:
            tally.Status("write out of range",
                         rt.Write<int32_t>(p, {kMaxStressThreads * kPerThread + far}, v),
                         kOutOfRange);
            break;
          case 1:
            tally.Status("read out of range", rt.Read<int32_t>(b, {-1 - far}).status(),
                         kOutOfRange);
            break;
          case 2:
            tally.Status("activate out of range",
                         rt.Activate(ptr, {kMaxStressThreads * kPerThread + far}), kOutOfRange);
            break;
          case 3:
            tally.Status("is_active out of range", rt.IsActive(bm, {-1 - far}).status(),
                         kOutOfRange);
            break;
          case 4:
            tally.Status("append out of range",
                         rt.Append<int32_t>(d, {kMaxStressThreads * kLists + far}, v).status(),
                         kOutOfRange);
            break;
          case 5:
            tally.Status("length out of range", rt.Length(dyn, {-1 - far}).status(), kOutOfRange);
            break;
          case 6:
            tally.Status("deactivate out of range",
                         rt.Deactivate(ptr, {kMaxStressThreads * kPerThread + far}), kOutOfRange);
            break;
          case 7:
            tally.Status("dynamic read out of range",
                         rt.Read<int32_t>(d, {list, kListSize + far}).status(), kOutOfRange);
            break;
          default:
            tally.Status("exhausted write out of range",
                         rt.Write<int32_t>(e, {2 * kCapacity + far}, v), kOutOfRange);
            break;
        }
        break;
      case 20:  // malformed calls
        switch (far % 4) {
          case 0:
            tally.Status("write with two indices", rt.Write<int32_t>(p, {cell, 0}, v), kInvalid);
            break;
          case 1:
            tally.Status("read of the wrong type", rt.Read<float>(p, {cell}).status(), kInvalid);
            break;
          case 2:
            tally.Status("deactivate a place", rt.Deactivate(p, {cell}), kInvalid);
            break;
          default:
            tally.Status("append to a pointer place", rt.Append<int32_t>(p, {}, v).status(),
                         kInvalid);
            break;
        }
        break;
      case 21:
      case 22: {  // the exhausted allocator: activations fail, reads and queries do not
        const int32_t fresh = kCapacity + static_cast<int32_t>((r >> 8) % kCapacity);
        const int32_t used = static_cast<int32_t>((r >> 8) % kCapacity);
        switch (far % 4) {
          case 0:
            tally.Status("exhausted write", rt.Write<int32_t>(e, {fresh}, v), kExhausted);
            break;
          case 1:
            tally.Status("exhausted activate", rt.Activate(*e.parent(), {fresh}), kExhausted);
            break;
          case 2:
            tally.Result("exhausted read", rt.Read<int32_t>(e, {used}), kOk, used + 1);
            break;
          default:
            tally.Result("exhausted is_active", rt.IsActive(*e.parent(), {fresh}), kOk, 0);
            break;
        }
        break;
      }
      case 23:
        tally.Status("collect garbage", rt.CollectGarbage(), kOk);
        break;
      case 24:
      case 25: {  // struct-fors whose visitor calls the runtime for this thread's cell of s
        const bool parallel = r % 32 == 25;
        auto visit = [&](absl::Span<const int32_t> index) {
          if (index[0] != t) return;
          StressAppend(rt, st, m, tally, t, c, v);
          StressWriteP(rt, st, m, tally, t, x, v);
          tally.Status("nested out of range", rt.Length(dyn, {-1}).status(), kOutOfRange);
          tally.Status("collect garbage inside a visitor", rt.CollectGarbage(),
                       absl::StatusCode::kFailedPrecondition);
        };
        if (parallel) {
          tally.Status("parallel struct-for",
                       rt.ParallelStructFor(
                           s, [&](absl::Span<const int32_t> index, void*, int) { visit(index); }),
                       kOk);
        } else {
          tally.Status(
              "struct-for",
              rt.StructFor(s, [&](absl::Span<const int32_t> index, void*) { visit(index); }), kOk);
        }
        break;
      }
      default:  // the common mix again: writes, appends and deactivations dominate
        if (r & 0x100) {
          StressAppend(rt, st, m, tally, t, c, v);
        } else {
          tally.Status("pointer deactivate", rt.Deactivate(ptr, {cell}), kOk);
          m.p[x] = 0;
          m.p_active[x] = false;
        }
        break;
    }
  }
}

// Threads mixing failing and succeeding calls of every kind get exactly their own statuses and
// values (ACCELMEM_STRESS_OPS calls in all, ACCELMEM_STRESS_THREADS threads).
TEST_P(SparseRuntimeTest, StressEveryCallGetsItsOwnStatus) {
  StressTree st;
  SparseRuntimeOptions options;
  options.chunk_num_elements = kCapacity;
  options.max_num_chunks = 1;
  options.num_threads = 2;
  auto rt = Make(st.tree, options);
  st.Find();
  for (int32_t n = 0; n < kCapacity; ++n) ASSERT_TRUE(rt->Write<int32_t>(*st.e, {n}, n + 1).ok());
  ASSERT_EQ(rt->Write<int32_t>(*st.e, {kCapacity}, 1).code(), absl::StatusCode::kResourceExhausted);
  const int threads = static_cast<int>(std::min<int64_t>(
      kMaxStressThreads, std::max<int64_t>(1, EnvInt("ACCELMEM_STRESS_THREADS", 4))));
  const int64_t total = EnvInt("ACCELMEM_STRESS_OPS", 20000);
  std::vector<Tally> tallies(threads);
  RunTogether(threads, [&](int t) {
    StressThread(*rt, st, t, (total + threads - 1) / threads, tallies[t]);
  });
  Tally all;
  for (const Tally& tally : tallies) all.Add(tally);
  std::cout << "[stress] " << threads << " threads: " << all.Summary() << "\n";
  EXPECT_EQ(all.wrong_status, 0) << all.Summary();
  EXPECT_EQ(all.wrong_value, 0) << all.Summary();
  EXPECT_GE(all.calls, total);
}

}  // namespace
}  // namespace sparse_runtime
}  // namespace accelmem

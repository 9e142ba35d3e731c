#include "runtime/sparse_runtime_test_suite.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace accelmem {
namespace runtime {

using sparse_runtime::Axis;
using sparse_runtime::HostMemoryPool;
using sparse_runtime::NodeManager;
using sparse_runtime::Pointer_lookup_element;
using sparse_runtime::Pointer_slot;
using sparse_runtime::Ptr;
using sparse_runtime::runtime_ambient_element;
using sparse_runtime::runtime_node_manager;
using sparse_runtime::SNode;
using sparse_runtime::SNodeTree;

std::unique_ptr<SparseRuntime> SparseRuntimeTest::Make(SNodeTree& tree,
                                                       SparseRuntimeOptions options,
                                                       const UpstreamEmulation& upstream) {
  absl::Status status = tree.Finalize();
  EXPECT_TRUE(status.ok()) << status;
  options.kernel_backend = GetParam().factory;
  auto rt = SparseRuntimeTestPeer::Create(tree, options, upstream);
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
// inner cell leaks (upstream leaks them) and both allocators get their cells back after GC.
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
  const NodeManager* nm = runtime_node_manager(rt->context(), ptr.id());
  if (nm->data_list.is_contiguous()) {  // the zero cell in front of cell 0 is the ambient element
    Ptr lead = nm->data_list.contiguous_base - nm->element_size;
    lead[3] = 1;
    EXPECT_THAT(rt->CheckInvariants().message(), HasSubstr("ambient element was written"));
    lead[3] = 0;
  }
  ASSERT_TRUE(rt->CheckInvariants().ok());
  *Pointer_slot(rt->meta(ptr), rt->context()->root, 2) = 0;  // drop the cell on the floor
  EXPECT_THAT(rt->CheckInvariants().message(), HasSubstr("lost"));
}

}  // namespace
}  // namespace runtime
}  // namespace accelmem

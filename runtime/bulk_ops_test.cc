// The bulk operations against models, read back through the host API (whose point operations
// find cells by the runtime's own index arithmetic, so an address the bulk operations computed
// for the wrong cell shows up as a wrong value).
#include "runtime/bulk_ops.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/sparse_runtime.h"

namespace accelmem {
namespace runtime {
namespace {

using sparse_runtime::Axis;
using sparse_runtime::SNode;
using sparse_runtime::SNodeTree;

const Axis i(0), j(1);

std::unique_ptr<SparseRuntime> Make(SNodeTree& tree, int threads = 2) {
  EXPECT_TRUE(tree.Finalize().ok());
  SparseRuntimeOptions options;
  options.num_threads = threads;
  auto rt = SparseRuntime::Create(tree, options);
  EXPECT_TRUE(rt.ok()) << rt.status();
  return std::move(rt).value();
}

template <typename T>
T Get(SparseRuntime& rt, const SNode& place, std::vector<int32_t> index) {
  absl::StatusOr<T> v = rt.Read<T>(place, index);
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : T{};
}

// Copy, FillIndex and Transform change exactly the active cells, on a 2-D grid with shapes that
// are not powers of two (a dense leaf: runs), and on a bitmasked leaf (runs of one cell).
TEST(BulkOpsTest, CopyFillAndTransformVisitTheActiveCells) {
  for (bool dense_leaf : {true, false}) {
    SCOPED_TRACE(dense_leaf);
    SNodeTree tree;
    SNode& blocks = tree.root().pointer({i, j}, {3, 4});
    SNode& leaf = dense_leaf ? blocks.dense({i, j}, {5, 3}) : blocks.bitmasked({i, j}, {5, 3});
    leaf.place<float>("x").place<float>("y").place<uint8_t>("u");
    auto rt = Make(tree);
    const SNode& x = *tree.FindPlace("x");
    const SNode& y = *tree.FindPlace("y");
    const SNode& u = *tree.FindPlace("u");
    std::vector<std::pair<int32_t, int32_t>> active = {{0, 0}, {7, 11}, {14, 2}, {6, 6}};
    for (auto [a, b] : active) ASSERT_TRUE(rt->Activate(leaf, {a, b}).ok());
    ASSERT_TRUE(FillIndex(*rt, x, 1, 2.0, 0.5).ok());
    ASSERT_TRUE(FillIndex(*rt, u, 0, 100.0, 0.0).ok());  // saturates at 255
    ASSERT_TRUE(Copy(*rt, x, y).ok());
    ASSERT_TRUE(Transform(*rt, x, 1.0, 0.0, 1.0, 1.0).ok());  // x / (1 + x)
    int visited = 0;
    for (int32_t a = 0; a < 15; ++a) {
      for (int32_t b = 0; b < 12; ++b) {
        const bool on = *rt->IsActive(leaf, {a, b});
        visited += on;
        const float fill = on ? 2.0f * b + 0.5f : 0.0f;
        EXPECT_EQ(Get<float>(*rt, y, {a, b}), fill) << a << "," << b;
        EXPECT_FLOAT_EQ(Get<float>(*rt, x, {a, b}), fill / (1.0f + fill)) << a << "," << b;
        EXPECT_EQ(Get<uint8_t>(*rt, u, {a, b}), on ? std::min(255, 100 * a) : 0);
      }
    }
    EXPECT_EQ(visited, dense_leaf ? 4 * 15 : 4);
  }
}

TEST(BulkOpsTest, ArgumentsAreChecked) {
  SNodeTree tree, other;
  SNode& leaf = tree.root().dense(i, 4);
  leaf.place<float>("x").place<int32_t>("n");
  tree.root().dense(i, 4).place<float>("z");
  other.root().dense(i, 4).place<float>("x");
  auto rt = Make(tree);
  ASSERT_TRUE(other.Finalize().ok());
  const SNode& x = *tree.FindPlace("x");
  const SNode& n = *tree.FindPlace("n");
  EXPECT_EQ(Copy(*rt, x, *tree.FindPlace("z")).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Copy(*rt, x, n).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Copy(*rt, x, *other.FindPlace("x")).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(FillIndex(*rt, leaf, 0, 1, 0).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(FillIndex(*rt, x, 1, 1, 0).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Transform(*rt, n, 1, 0, 1, 1).code(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(FillIndex(*rt, n, 0, 1, 0).ok());
  ASSERT_TRUE(Transform(*rt, n, 3, 1, 0, 2).ok());  // integers: (3v + 1) / 2 in double
  EXPECT_EQ(Get<int32_t>(*rt, n, {2}), 3);          // 3.5 truncates
  const int32_t rows[] = {1, 4};
  EXPECT_EQ(ScatterAdd(*rt, x, {rows, 2, 1}, nullptr, false, 1).code(),
            absl::StatusCode::kOutOfRange);
}

// ScatterAdd equals a serial model for every path: a dense parent with a small key space (a
// table of container bases; one and two axes, shapes that are not powers of two), with a big one
// (the batch's keys, activated first), and a sparse parent (a read and a write per row); values
// per row and a scalar; one and two workers. Values are read back through the host API, whose
// cell arithmetic (CellIndices) is the runtime's own: an address the scatter computed for another
// cell fails here.
TEST(BulkOpsTest, ScatterAddMatchesAModel) {
  struct Layout {
    const char* name;
    std::vector<int32_t> extents;  // per index position
    void (*build)(SNodeTree&);
  };
  const Layout layouts[] = {
      {"small_keys",
       {60},
       [](SNodeTree& t) { t.root().pointer(i, 12).dense(i, 5).place<int32_t>("x"); }},
      {"two_axes",
       {15, 12},
       [](SNodeTree& t) {
         t.root().pointer({i, j}, {3, 4}).dense({i, j}, {5, 3}).place<int32_t>("x");
       }},
      {"big_keys",
       {1 << 22},
       [](SNodeTree& t) { t.root().pointer(i, 1 << 21).dense(i, 2).place<int32_t>("x"); }},
      {"sparse_parent",
       {60},
       [](SNodeTree& t) { t.root().dense(i, 6).pointer(i, 10).place<int32_t>("x"); }},
  };
  std::mt19937 rng(11);
  for (const Layout& layout : layouts) {
    const int ndim = static_cast<int>(layout.extents.size());
    for (int threads : {1, 2}) {
      for (bool scalar : {false, true}) {
        SCOPED_TRACE(::testing::Message()
                     << layout.name << " threads " << threads << " scalar " << scalar);
        SNodeTree tree;
        layout.build(tree);
        auto rt = Make(tree);
        const SNode& x = *tree.FindPlace("x");
        std::map<std::vector<int32_t>, int32_t> model;
        ScatterScratch scratch;
        for (int round = 0; round < 3; ++round) {
          const int n = 400;
          std::vector<int32_t> rows(n * ndim), values(n);
          for (int k = 0; k < n; ++k) {
            for (int d = 0; d < ndim; ++d) {
              // At most 50 distinct coordinates per axis, spread over the extent.
              const int32_t e = layout.extents[d], spread = std::min(e, 50);
              rows[k * ndim + d] = static_cast<int32_t>(rng() % spread) * (e / spread);
            }
            values[k] = static_cast<int32_t>(rng() % 7) - 3;
          }
          const int32_t one = 5;
          ASSERT_TRUE(ScatterAdd(*rt, x, {rows.data(), n, ndim}, scalar ? &one : values.data(),
                                 scalar, threads, &scratch)
                          .ok());
          for (int k = 0; k < n; ++k) {
            model[std::vector<int32_t>(rows.begin() + k * ndim, rows.begin() + (k + 1) * ndim)] +=
                scalar ? one : values[k];
          }
          for (const auto& [cell, sum] : model) ASSERT_EQ(Get<int32_t>(*rt, x, cell), sum);
        }
      }
    }
  }
}

// RunRows covers [0, n) once in contiguous ranges; the lowest failing range's error wins.
TEST(BulkOpsTest, RunRowsCoversTheRowsOnce) {
  SNodeTree tree;
  tree.root().dense(i, 4).place<int32_t>("x");
  auto rt = Make(tree);
  std::vector<std::atomic<int>> seen(1000);
  std::mutex mu;
  int ranges = 0;
  ASSERT_TRUE(RunRows(*rt, 1000, 3, [&](int64_t b, int64_t e) {
                for (int64_t k = b; k < e; ++k) ++seen[k];
                std::lock_guard<std::mutex> guard(mu);
                ++ranges;
                return absl::OkStatus();
              }).ok());
  EXPECT_EQ(ranges, 3);
  for (const auto& s : seen) EXPECT_EQ(s.load(), 1);
  absl::Status status = RunRows(*rt, 1000, 3, [&](int64_t b, int64_t) {
    return b == 0 ? absl::OkStatus() : absl::InternalError(std::to_string(b));
  });
  EXPECT_EQ(status.message(), "333");
}

}  // namespace
}  // namespace runtime
}  // namespace accelmem

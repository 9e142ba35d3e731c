// Randomized histories of mixed operations, checked against a model and against the allocator
// invariant: every NodeManager slot is exactly one of in use / free / recycled, free cells and
// ambient elements are zero. The two-thread test is meant to run under --config=tsan as well.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/sparse_runtime.h"

namespace accelmem {
namespace runtime {

using sparse_runtime::Axis;
using sparse_runtime::SNode;
using sparse_runtime::SNodeTree;
namespace {

// a: pointer(8) > pointer(4) > dense(2) on axis 0 (64 cells); d: dense(8) > dynamic(40, chunk 4);
// b: dense(4) > bitmasked(8) on axis 3; s: pointer(32) on axis 4, shared by both threads.
struct Fixture {
  Fixture() {
    const Axis i(0), j(1), k(2), m(3), n(4);
    tree.root().pointer(i, 8).pointer(i, 4).dense(i, 2).place<int32_t>("a");
    tree.root().dense(j, 8).dynamic(k, 40, 4).place<int32_t>("d");
    tree.root().dense(m, 4).bitmasked(m, 8).place<int32_t>("b");
    tree.root().pointer(n, 32).place<int32_t>("s");
    EXPECT_TRUE(tree.Finalize().ok());
    SparseRuntimeOptions options;
    options.chunk_num_elements = 8;  // small chunks: many chunk boundaries
    options.num_threads = 2;
    rt = std::move(SparseRuntime::Create(tree, options)).value();
    a = tree.FindPlace("a");
    d = tree.FindPlace("d");
    b = tree.FindPlace("b");
    s = tree.FindPlace("s");
    inner = a->parent()->parent();
    outer = inner->parent();
  }
  SNodeTree tree;
  std::unique_ptr<SparseRuntime> rt;
  const SNode* a;
  const SNode* d;
  const SNode* b;
  const SNode* s;
  const SNode* inner;
  const SNode* outer;
};

// What one thread expects of the cells it owns.
struct Model {
  std::map<int, int32_t> a;               // index -> value (absent = 0)
  std::map<int, std::vector<int32_t>> d;  // row -> list
  std::map<int, int32_t> b;
};

// Runs `ops` random operations on the cells owned by `owner` (of `owners`), updating `model`.
void RunHistory(Fixture& f, Model& model, int owner, int owners, int ops, uint32_t seed,
                bool check_often) {
  std::mt19937 rng(seed);
  auto pick = [&](int count) { return static_cast<int>(rng() % count); };
  auto own = [&](int cell) { return cell % owners == owner; };
  for (int op = 0; op < ops; ++op) {
    switch (pick(14)) {
      case 0:
      case 1: {  // write a
        int idx = pick(64);
        if (!own(idx / 8)) break;
        int32_t v = static_cast<int32_t>(rng() % 1000 + 1);
        ASSERT_TRUE(f.rt->Write<int32_t>(*f.a, {idx}, v).ok());
        model.a[idx] = v;
        break;
      }
      case 2: {  // read a
        int idx = pick(64);
        if (!own(idx / 8)) break;
        auto it = model.a.find(idx);
        ASSERT_EQ(f.rt->Read<int32_t>(*f.a, {idx}).value(), it == model.a.end() ? 0 : it->second)
            << "a[" << idx << "]";
        break;
      }
      case 3: {  // deactivate an inner pointer cell (2 values)
        int cell = pick(32);
        if (!own(cell / 4)) break;
        ASSERT_TRUE(f.rt->Deactivate(*f.inner, {cell}).ok());
        model.a.erase(2 * cell);
        model.a.erase(2 * cell + 1);
        break;
      }
      case 4: {  // deactivate an outer pointer cell (8 values)
        int cell = pick(8);
        if (!own(cell)) break;
        ASSERT_TRUE(f.rt->Deactivate(*f.outer, {cell}).ok());
        for (int x = 8 * cell; x < 8 * cell + 8; ++x) model.a.erase(x);
        break;
      }
      case 5:
      case 6: {  // append d
        int row = pick(8);
        if (!own(row)) break;
        int32_t v = static_cast<int32_t>(rng() % 1000 + 1);
        auto pos = f.rt->Append<int32_t>(*f.d, {row}, v);
        std::vector<int32_t>& list = model.d[row];
        if (list.size() == 40) {
          ASSERT_EQ(pos.status().code(), absl::StatusCode::kOutOfRange);
        } else {
          ASSERT_TRUE(pos.ok()) << pos.status();
          ASSERT_EQ(*pos, static_cast<int32_t>(list.size()));
          list.push_back(v);
        }
        break;
      }
      case 7: {  // read d / length
        int row = pick(8);
        if (!own(row)) break;
        const std::vector<int32_t>& list = model.d[row];
        ASSERT_EQ(f.rt->Length(*f.d->parent(), {row}).value(), static_cast<int32_t>(list.size()));
        int at = pick(40);
        ASSERT_EQ(f.rt->Read<int32_t>(*f.d, {row, at}).value(),
                  at < static_cast<int>(list.size()) ? list[at] : 0);
        break;
      }
      case 8: {  // deactivate a dynamic list
        int row = pick(8);
        if (!own(row)) break;
        ASSERT_TRUE(f.rt->Deactivate(*f.d->parent(), {row}).ok());
        model.d[row].clear();
        break;
      }
      case 9: {  // write / deactivate b
        int idx = pick(32);
        if (!own(idx)) break;
        if (rng() % 3 == 0) {
          ASSERT_TRUE(f.rt->Deactivate(*f.b->parent(), {idx}).ok());
          model.b.erase(idx);
        } else {
          int32_t v = static_cast<int32_t>(rng() % 1000 + 1);
          ASSERT_TRUE(f.rt->Write<int32_t>(*f.b, {idx}, v).ok());
          model.b[idx] = v;
        }
        break;
      }
      case 10: {  // read b
        int idx = pick(32);
        if (!own(idx)) break;
        auto it = model.b.find(idx);
        ASSERT_EQ(f.rt->Read<int32_t>(*f.b, {idx}).value(), it == model.b.end() ? 0 : it->second);
        break;
      }
      case 11: {  // shared pointer s: anyone (de)activates any cell; owners write theirs
        int idx = pick(32);
        switch (pick(4)) {
          case 0:
            ASSERT_TRUE(f.rt->Activate(*f.s->parent(), {idx}).ok());
            break;
          case 1:
            ASSERT_TRUE(f.rt->Deactivate(*f.s->parent(), {idx}).ok());
            break;
          case 2:
            ASSERT_TRUE(f.rt->IsActive(*f.s->parent(), {idx}).ok());
            break;
          default:
            if (own(idx)) {
              ASSERT_TRUE(f.rt->Write<int32_t>(*f.s, {idx}, 7).ok());
            }
            break;
        }
        break;
      }
      case 12:  // garbage collection (rarely)
        if (pick(50) == 0) {
          ASSERT_TRUE(f.rt->CollectGarbage().ok());
        }
        break;
      case 13:
        if (pick(2) == 0) {  // statistics are readable while others allocate
          SNodeMemoryStats stats = f.rt->Stats(*f.inner);
          ASSERT_GE(stats.cells_reserved, 0);
          ASSERT_GE(stats.cells_free, 0);
          break;
        }
        if (check_often && pick(20) == 0) {
          absl::Status status = f.rt->CheckInvariants();
          ASSERT_TRUE(status.ok()) << status;
        }
        break;
    }
  }
}

void CheckModel(Fixture& f, const Model& model, int owner, int owners) {
  for (int idx = 0; idx < 64; ++idx) {
    if ((idx / 8) % owners != owner) continue;
    auto it = model.a.find(idx);
    EXPECT_EQ(f.rt->Read<int32_t>(*f.a, {idx}).value(), it == model.a.end() ? 0 : it->second);
  }
  for (const auto& [row, list] : model.d) {
    if (row % owners != owner) continue;
    ASSERT_EQ(f.rt->Length(*f.d->parent(), {row}).value(), static_cast<int32_t>(list.size()));
    for (size_t x = 0; x < list.size(); ++x) {
      EXPECT_EQ(f.rt->Read<int32_t>(*f.d, {row, static_cast<int32_t>(x)}).value(), list[x]);
    }
  }
  for (int idx = 0; idx < 32; ++idx) {
    if (idx % owners != owner) continue;
    auto it = model.b.find(idx);
    EXPECT_EQ(f.rt->Read<int32_t>(*f.b, {idx}).value(), it == model.b.end() ? 0 : it->second);
  }
}

// Serial random histories keep values and allocator invariants at every check.
TEST(SparseRuntimeInvariantsTest, SerialRandomHistories) {
  for (uint32_t seed = 1; seed <= 5; ++seed) {
    Fixture f;
    Model model;
    RunHistory(f, model, 0, 1, 4000, seed, /*check_often=*/true);
    ASSERT_FALSE(::testing::Test::HasFatalFailure());
    CheckModel(f, model, 0, 1);
    absl::Status status = f.rt->CheckInvariants();
    ASSERT_TRUE(status.ok()) << status;
    ASSERT_TRUE(f.rt->CollectGarbage().ok());
    status = f.rt->CheckInvariants();
    ASSERT_TRUE(status.ok()) << status;
    // Struct-for agrees with the model.
    int64_t sum = 0;
    ASSERT_TRUE(f.rt->StructFor(*f.a, [&](absl::Span<const int32_t>,
                                          void* v) { sum += *static_cast<int32_t*>(v); })
                    .ok());
    int64_t want = 0;
    for (const auto& [idx, v] : model.a) want += v;
    EXPECT_EQ(sum, want);
  }
}

// 10^5 mixed operations from two threads (5 * 10^4 each) with GC and invariant checks racing
// them; afterwards every slot is in exactly one state and each thread's cells hold its values.
TEST(SparseRuntimeInvariantsTest, TwoThreadRandomHistory) {
  Fixture f;
  std::vector<Model> models(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back(
        [&, t] { RunHistory(f, models[t], t, 2, 50000, 1000 + t, /*check_often=*/true); });
  }
  for (auto& th : threads) th.join();
  absl::Status status = f.rt->CheckInvariants();
  ASSERT_TRUE(status.ok()) << status;
  for (int t = 0; t < 2; ++t) CheckModel(f, models[t], t, 2);
  ASSERT_TRUE(f.rt->CollectGarbage().ok());
  status = f.rt->CheckInvariants();
  ASSERT_TRUE(status.ok()) << status;
  std::atomic<int64_t> visited{0};
  ASSERT_TRUE(f.rt->ParallelStructFor(
                      *f.a, [&](absl::Span<const int32_t>, void*, int) { visited.fetch_add(1); })
                  .ok());
  int64_t active_inner = 0;
  for (int cell = 0; cell < 32; ++cell) active_inner += f.rt->IsActive(*f.inner, {cell}).value();
  EXPECT_EQ(visited.load(), 2 * active_inner);
}

}  // namespace
}  // namespace runtime
}  // namespace accelmem

// Struct-fors against a model while the tree changes between and inside them: the native runtime
// reuses a leaf's element lists until an SNode they depend on changes structure (see
// the struct-for engine, runtime/internal/struct_for.h), so every interleaving of activations,
// deactivations, collections, writes from visitors and struct-fors must still visit exactly the
// model's active cells, with their values. Run for every backend of SparseRuntimeTest (native, CPU
// JIT).
#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "runtime/sparse_runtime_test_suite.h"

namespace accelmem {
namespace runtime {
namespace {

using sparse_runtime::Axis;
using sparse_runtime::SNode;
using sparse_runtime::SNodeTree;

const Axis i(0), j(1);

// One tree shape: `leaf_cells` cells of place x over [0, n), activated in blocks of `block`
// cells: a block is active when any of its cells is (dense leaves: then all of them are).
struct Shape {
  const char* name;
  int n;
  int block;        // cells per outer cell (the level a deactivation of a block removes)
  bool dense_leaf;  // the leaf level is dense: a block's cells are active together
  void (*build)(SNodeTree& tree);
};

const Shape kShapes[] = {
    {"pointer_dense", 64, 8, true,
     [](SNodeTree& t) { t.root().pointer(i, 8).dense(i, 8).place<int32_t>("x"); }},
    {"pointer_pointer", 64, 8, false,
     [](SNodeTree& t) { t.root().pointer(i, 8).pointer(i, 8).place<int32_t>("x"); }},
    {"dense_bitmasked", 64, 8, false,
     [](SNodeTree& t) { t.root().dense(i, 8).bitmasked(i, 8).place<int32_t>("x"); }},
    {"pointer_bitmasked", 64, 16, false,
     [](SNodeTree& t) { t.root().pointer(i, 4).bitmasked(i, 16).place<int32_t>("x"); }},
};

// The model: value per active cell.
using Model = std::map<int, int32_t>;

// How a struct-for visits: serially, in parallel, in parallel by runs of cells.
enum class Visit { kSerial, kParallel, kRuns };

void ExpectVisitsMatch(SparseRuntime& rt, const SNode& x, const Model& model, Visit how,
                       const std::string& where) {
  Model seen;
  std::mutex mu;
  absl::Status s;
  if (how == Visit::kRuns) {
    // A run of n cells stands for cells first, first + 1, ... (1-D trees) at the stride.
    s = rt.ParallelStructForRuns(
        x, [&](absl::Span<const int32_t> first, void* v, int32_t n, uint64_t stride, int) {
          std::lock_guard<std::mutex> guard(mu);
          EXPECT_TRUE(n == 1 || stride >= sizeof(int32_t)) << where;
          for (int32_t k = 0; k < n; ++k) {
            const auto* value =
                reinterpret_cast<const int32_t*>(static_cast<const char*>(v) + k * stride);
            EXPECT_TRUE(seen.emplace(first[0] + k, *value).second) << where;
          }
        });
  } else if (how == Visit::kParallel) {
    s = rt.ParallelStructFor(x, [&](absl::Span<const int32_t> idx, void* v, int) {
      std::lock_guard<std::mutex> guard(mu);
      EXPECT_TRUE(seen.emplace(idx[0], *static_cast<int32_t*>(v)).second) << where;
    });
  } else {
    s = rt.StructFor(x, [&](absl::Span<const int32_t> idx, void* v) {
      EXPECT_TRUE(seen.emplace(idx[0], *static_cast<int32_t*>(v)).second) << where;
    });
  }
  ASSERT_TRUE(s.ok()) << where << ": " << s;
  EXPECT_EQ(seen, model) << where;
}

TEST_P(SparseRuntimeTest, StructForListsFollowEveryStructureChange) {
  for (const Shape& shape : kShapes) {
    for (uint32_t seed = 0; seed < 12; ++seed) {
      SNodeTree tree;
      shape.build(tree);
      SparseRuntimeOptions options;
      options.num_threads = 2;
      options.auto_collect = seed % 2 == 0;
      auto rt = Make(tree, options);
      const SNode& x = *tree.FindPlace("x");
      const SNode& block_level = *x.parent()->parent();  // the outer level (pointer or dense)
      const SNode& cell_level = *x.parent();
      std::mt19937 rng(seed * 7919 + static_cast<uint32_t>(shape.n));
      Model model;
      auto activate_block = [&](int b) {
        if (!shape.dense_leaf) return;
        for (int c = b * shape.block; c < (b + 1) * shape.block; ++c) model.emplace(c, 0);
      };
      auto write = [&](int c, int32_t v) {
        ASSERT_TRUE(rt->Write<int32_t>(x, {c}, v).ok());
        activate_block(c / shape.block);
        model[c] = v;
      };
      for (int step = 0; step < 120; ++step) {
        const std::string where =
            absl::StrCat(shape.name, " seed ", seed, " step ", step, " backend ", GetParam().name);
        const int c = static_cast<int>(rng() % shape.n);
        const int b = c / shape.block;
        switch (rng() % 9) {
          case 0:
          case 1:
            write(c, static_cast<int32_t>(rng() % 1000) + 1);
            break;
          case 2:  // a cell of the leaf level (a whole block where the leaf is dense)
            if (!shape.dense_leaf) {
              ASSERT_TRUE(rt->Deactivate(cell_level, {c}).ok()) << where;
              model.erase(c);
              break;
            }
            [[fallthrough]];
          case 3:  // a block of the outer level, if it can be deactivated
            if (block_level.type() == sparse_runtime::SNodeType::kDense) break;
            ASSERT_TRUE(rt->Deactivate(block_level, {b}).ok()) << where;  // at its resolution
            model.erase(model.lower_bound(b * shape.block),
                        model.lower_bound((b + 1) * shape.block));
            break;
          case 4:
            ASSERT_TRUE(rt->CollectGarbage().ok()) << where;
            break;
          case 5: {  // a struct-for whose visitor activates the next cell (writes from visitors)
            const Model before = model;
            std::vector<int> added;
            std::mutex mu;
            ASSERT_TRUE(rt->ParallelStructFor(
                              x,
                              [&](absl::Span<const int32_t> idx, void*, int) {
                                const int next = (idx[0] + 1) % shape.n;
                                if (before.count(next)) return;
                                EXPECT_TRUE(rt->Write<int32_t>(x, {next}, next + 5000).ok());
                                std::lock_guard<std::mutex> guard(mu);
                                added.push_back(next);
                              })
                            .ok())
                << where;
            for (int a : added) {
              activate_block(a / shape.block);
              model[a] = a + 5000;
            }
            break;
          }
          default: {  // struct-fors, twice: the second may reuse the first's lists
            const Visit first = static_cast<Visit>(rng() % 3);
            const Visit second = static_cast<Visit>(rng() % 3);
            ExpectVisitsMatch(*rt, x, model, first, where);
            const int64_t lists = SparseRuntimeTestPeer::list_generations(*rt);
            ExpectVisitsMatch(*rt, x, model, second, where + " (again)");
            if (SparseRuntimeTestPeer::reuses_struct_for_lists(*rt)) {
              EXPECT_EQ(SparseRuntimeTestPeer::list_generations(*rt), lists)
                  << where << ": nothing changed, same lists";
            }
            break;
          }
        }
        if (HasFailure()) return;
      }
      ExpectVisitsMatch(*rt, x, model, Visit::kRuns,
                        absl::StrCat(shape.name, " seed ", seed, " end"));
      ASSERT_TRUE(rt->CheckInvariants().ok());
    }
  }
}

// A dynamic leaf: appends lengthen the lists the struct-for walks, so each one makes new lists;
// without appends the lists are reused.
TEST_P(SparseRuntimeTest, StructForListsFollowDynamicLengths) {
  SNodeTree tree;
  tree.root().pointer(i, 4).dynamic(Axis(1), 64, 8).place<int32_t>("d");
  auto rt = Make(tree);
  const SNode& d = *tree.FindPlace("d");
  int64_t expected_sum = 0;
  for (int round = 0; round < 20; ++round) {
    const int32_t container = round % 4;
    ASSERT_TRUE(rt->Append<int32_t>(d, {container}, round).ok());
    expected_sum += round;
    for (int repeat = 0; repeat < 2; ++repeat) {
      int64_t sum = 0;
      const int64_t lists = SparseRuntimeTestPeer::list_generations(*rt);
      ASSERT_TRUE(rt->StructFor(d, [&](absl::Span<const int32_t>, void* v) {
                      sum += *static_cast<int32_t*>(v);
                    }).ok());
      EXPECT_EQ(sum, expected_sum) << "round " << round;
      if (SparseRuntimeTestPeer::reuses_struct_for_lists(*rt) && repeat == 1) {
        EXPECT_EQ(SparseRuntimeTestPeer::list_generations(*rt), lists);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// A case per primitive that marks its SNode's meta (StructMeta_mark_changed): a struct-for makes
// and caches its list, the primitive changes an SNode the list depends on, and the next
// struct-fors (serial and parallel) must visit exactly the model's cells; with lists reused, the
// first of them must make one new list. Each mark, removed, fails its case (the device tests
// cover the forms the host API never calls: owned pointer deactivation and the claiming
// activation).
using Cells = std::set<std::vector<int32_t>>;

// The index sets of blocks of 8 cells of a 1-D leaf.
Cells Blocks(std::initializer_list<int> blocks) {
  Cells cells;
  for (int b : blocks) {
    for (int c = 8 * b; c < 8 * b + 8; ++c) cells.insert({c});
  }
  return cells;
}

Cells VisitSerial(SparseRuntime& rt, const SNode& x) {
  Cells seen;
  absl::Status s = rt.StructFor(x, [&](absl::Span<const int32_t> idx, void*) {
    EXPECT_TRUE(seen.emplace(idx.begin(), idx.end()).second);
  });
  EXPECT_TRUE(s.ok()) << s;
  return seen;
}

Cells VisitParallel(SparseRuntime& rt, const SNode& x) {
  Cells seen;
  std::mutex mu;
  absl::Status s = rt.ParallelStructFor(x, [&](absl::Span<const int32_t> idx, void*, int) {
    std::lock_guard<std::mutex> guard(mu);
    EXPECT_TRUE(seen.emplace(idx.begin(), idx.end()).second);
  });
  EXPECT_TRUE(s.ok()) << s;
  return seen;
}

struct MarkCase {
  const char* primitive;
  void (*build)(SNodeTree& tree);  // a place "x"
  void (*setup)(SparseRuntime& rt, const SNodeTree& tree);
  void (*change)(SparseRuntime& rt, const SNodeTree& tree);
  Cells before, after;
};

const SNode& X(const SNodeTree& tree) { return *tree.FindPlace("x"); }
// The level `up` levels above x.
const SNode& Level(const SNodeTree& tree, int up) {
  const SNode* s = &X(tree);
  for (int k = 0; k < up; ++k) s = s->parent();
  return *s;
}
void Write(SparseRuntime& rt, const SNodeTree& tree, std::vector<int32_t> index) {
  ASSERT_TRUE(rt.Write<int32_t>(X(tree), index, 1).ok());
}
void Append(SparseRuntime& rt, const SNodeTree& tree, int32_t container, int times) {
  for (int k = 0; k < times; ++k) ASSERT_TRUE(rt.Append<int32_t>(X(tree), {container}, k).ok());
}
// Deactivates a cell of the level `up` levels above x, indexed at that level's resolution.
void Deactivate(SparseRuntime& rt, const SNodeTree& tree, int up, std::vector<int32_t> index) {
  ASSERT_TRUE(rt.Deactivate(Level(tree, up), index).ok());
}

void BitmaskedTree(SNodeTree& t) { t.root().bitmasked(i, 4).dense(i, 8).place<int32_t>("x"); }
void PointerTree(SNodeTree& t) { t.root().pointer(i, 4).dense(i, 8).place<int32_t>("x"); }
// A pointer level with nothing sparse below it, under a dense level whose deactivation clears it
// with the batch form (Pointer_deactivate_indices).
void DensePointerTree(SNodeTree& t) {
  t.root().dense(i, 2).pointer(i, 4).dense(i, 8).place<int32_t>("x");
}
// Besides x, a dense field y for a struct-for whose visitor deactivates a pointer cell of x's tree
// (through the worker's NodeCache).
void PointerAndDenseTree(SNodeTree& t) {
  PointerTree(t);
  t.root().dense(i, 2).place<int32_t>("y");
}
void DynamicTree(SNodeTree& t) { t.root().pointer(i, 4).dynamic(j, 64, 8).place<int32_t>("x"); }

Cells DynamicCells(int32_t container, int32_t length) {
  Cells cells;
  for (int32_t k = 0; k < length; ++k) cells.insert({container, k});
  return cells;
}
Cells Union(Cells a, const Cells& b) {
  a.insert(b.begin(), b.end());
  return a;
}

std::vector<MarkCase> MarkCases() {
  return {
      {"bitmasked activation", &BitmaskedTree,
       [](SparseRuntime& rt, const SNodeTree& t) { Write(rt, t, {3}); },
       [](SparseRuntime& rt, const SNodeTree& t) { Write(rt, t, {20}); }, Blocks({0}),
       Blocks({0, 2})},
      {"bitmasked deactivation", &BitmaskedTree,
       [](SparseRuntime& rt, const SNodeTree& t) {
         Write(rt, t, {3});
         Write(rt, t, {20});
       },
       [](SparseRuntime& rt, const SNodeTree& t) { Deactivate(rt, t, 2, {2}); }, Blocks({0, 2}),
       Blocks({0})},
      {"pointer activation", &PointerTree,
       [](SparseRuntime& rt, const SNodeTree& t) { Write(rt, t, {3}); },
       [](SparseRuntime& rt, const SNodeTree& t) { Write(rt, t, {20}); }, Blocks({0}),
       Blocks({0, 2})},
      {"pointer deactivation", &PointerTree,
       [](SparseRuntime& rt, const SNodeTree& t) {
         Write(rt, t, {3});
         Write(rt, t, {20});
       },
       [](SparseRuntime& rt, const SNodeTree& t) { Deactivate(rt, t, 2, {2}); }, Blocks({0, 2}),
       Blocks({0})},
      {"pointer deactivation from a struct-for", &PointerAndDenseTree,
       [](SparseRuntime& rt, const SNodeTree& t) {
         Write(rt, t, {3});
         Write(rt, t, {20});
       },
       [](SparseRuntime& rt, const SNodeTree& t) {
         ASSERT_TRUE(rt.ParallelStructFor(*t.FindPlace("y"), [&](absl::Span<const int32_t> idx,
                                                                 void*, int) {
                         if (idx[0] == 1) Deactivate(rt, t, 2, {2});
                       }).ok());
       },
       Blocks({0, 2}), Blocks({0})},
      {"pointer batch deactivation", &DensePointerTree,
       [](SparseRuntime& rt, const SNodeTree& t) {
         Write(rt, t, {3});
         Write(rt, t, {40});
       },
       [](SparseRuntime& rt, const SNodeTree& t) { Deactivate(rt, t, 3, {1}); }, Blocks({0, 5}),
       Blocks({0})},
      {"dynamic activation", &DynamicTree,
       [](SparseRuntime& rt, const SNodeTree& t) { Append(rt, t, 0, 3); },
       [](SparseRuntime& rt, const SNodeTree& t) {
         Write(rt, t, {0, 10});
       },
       DynamicCells(0, 3), DynamicCells(0, 11)},
      {"dynamic append", &DynamicTree,
       [](SparseRuntime& rt, const SNodeTree& t) { Append(rt, t, 0, 3); },
       [](SparseRuntime& rt, const SNodeTree& t) { Append(rt, t, 0, 2); }, DynamicCells(0, 3),
       DynamicCells(0, 5)},
      // A stale list of a cleared dynamic leaf visits nothing (the walk stops at the missing
      // chunk), so here only the new list tells that the clear was seen.
      {"dynamic clear", &DynamicTree,
       [](SparseRuntime& rt, const SNodeTree& t) {
         Append(rt, t, 0, 3);
         Append(rt, t, 1, 2);
       },
       [](SparseRuntime& rt, const SNodeTree& t) { Deactivate(rt, t, 1, {0}); },
       Union(DynamicCells(0, 3), DynamicCells(1, 2)), DynamicCells(1, 2)},
  };
}

// Rule: after each marking primitive, struct-fors with reused lists visit exactly the changed
// structure, and the first of them makes a new list (nothing changed: none).
TEST_P(SparseRuntimeTest, StructForListsFollowEveryMarkingPrimitive) {
  for (const MarkCase& c : MarkCases()) {
    SCOPED_TRACE(c.primitive);
    SNodeTree tree;
    c.build(tree);
    auto rt = Make(tree);
    const SNode& x = X(tree);
    c.setup(*rt, tree);
    ASSERT_FALSE(HasFatalFailure());
    EXPECT_EQ(VisitSerial(*rt, x), c.before);
    int64_t lists = SparseRuntimeTestPeer::list_generations(*rt);
    EXPECT_EQ(VisitParallel(*rt, x), c.before);
    if (SparseRuntimeTestPeer::reuses_struct_for_lists(*rt))
      EXPECT_EQ(SparseRuntimeTestPeer::list_generations(*rt), lists);
    c.change(*rt, tree);
    ASSERT_FALSE(HasFatalFailure());
    lists = SparseRuntimeTestPeer::list_generations(*rt);
    EXPECT_EQ(VisitSerial(*rt, x), c.after);
    if (SparseRuntimeTestPeer::reuses_struct_for_lists(*rt))
      EXPECT_EQ(SparseRuntimeTestPeer::list_generations(*rt), lists + 1);
    EXPECT_EQ(VisitParallel(*rt, x), c.after);
    EXPECT_TRUE(rt->CheckInvariants().ok());
  }
}

// Rule: struct-fors racing fresh activations (and then deactivations) of the bitmasked level
// above a dense leaf never leave a stale list behind: once the writers are done, a struct-for
// (reusing lists) visits exactly what one on a runtime that never reuses lists visits. Writers on
// two threads, struct-fors looping on a third; rounds of fresh blocks (run it under
// --config=tsan as well).
TEST_P(SparseRuntimeTest, StructForListsSurviveRacingActivations) {
  constexpr int kBlocks = 1024;
  constexpr int kWriters = 2;
  constexpr int kBlocksPerWriter = 4;
  constexpr int kRounds = 48;
  auto build = [](SNodeTree& t) { t.root().bitmasked(i, kBlocks).dense(i, 8).place<int32_t>("x"); };
  SNodeTree tree, reference_tree;
  build(tree);
  build(reference_tree);
  auto rt = Make(tree);
  UpstreamEmulation no_reuse;
  no_reuse.reuse_struct_for_lists = false;
  auto reference = Make(reference_tree, {}, no_reuse);
  const SNode& x = X(tree);
  const SNode& bitmasked = *x.parent()->parent();
  int next_block = 0;
  Cells model;
  for (int round = 0; round < kRounds; ++round) {
    SCOPED_TRACE(absl::StrCat("round ", round));
    // Even rounds activate fresh blocks, odd rounds deactivate the previous round's blocks (every
    // other one), so both marks race list builds.
    const bool activate = round % 2 == 0;
    const int first = activate ? next_block : next_block - kWriters * kBlocksPerWriter;
    std::vector<int> blocks;
    for (int k = 0; k < kWriters * kBlocksPerWriter; ++k) {
      if (activate || k % 2 == 0) blocks.push_back(first + k);
    }
    if (activate) next_block += kWriters * kBlocksPerWriter;
    std::atomic<int> writers_left{kWriters};
    std::thread looper([&] {
      // At least one struct-for after the writers start; more while they run.
      do {
        rt->StructFor(x, [](absl::Span<const int32_t>, void*) {}).IgnoreError();
      } while (writers_left.load(std::memory_order_acquire) > 0);
    });
    std::vector<std::thread> writers;
    for (int w = 0; w < kWriters; ++w) {
      writers.emplace_back([&, w] {
        for (size_t k = w; k < blocks.size(); k += kWriters) {
          const int32_t cell = 8 * blocks[k] + static_cast<int32_t>(k % 8);
          absl::Status s =
              activate ? rt->Write<int32_t>(x, {cell}, 1) : rt->Deactivate(bitmasked, {blocks[k]});
          EXPECT_TRUE(s.ok()) << s;
        }
        writers_left.fetch_sub(1, std::memory_order_acq_rel);
      });
    }
    for (std::thread& t : writers) t.join();
    looper.join();
    for (int b : blocks) {
      const int32_t cell = 8 * b;
      ASSERT_TRUE((activate ? reference->Write<int32_t>(X(reference_tree), {cell}, 1)
                            : reference->Deactivate(Level(reference_tree, 2), {b}))
                      .ok());
      for (int32_t c = cell; c < cell + 8; ++c) {
        if (activate) {
          model.insert({c});
        } else {
          model.erase({c});
        }
      }
    }
    const Cells expected = VisitSerial(*reference, X(reference_tree));
    ASSERT_EQ(expected, model);
    ASSERT_EQ(VisitSerial(*rt, x), expected);
    ASSERT_EQ(VisitParallel(*rt, x), expected);
  }
}

}  // namespace
}  // namespace runtime
}  // namespace accelmem

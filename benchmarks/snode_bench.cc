// snode_bench: the sparse runtime's SNode operations against upstream's algorithms and plain
// baselines.
//
//   * Interleaved rows (see the section below and benchmarks/baselines/paired_timing.h): for
//     pointer activation (after a GC / already active), deactivation (LIFO / random, every form),
//     lookup and is_active (sequential / random), dense lookup, bitmasked activation (from
//     inactive / already active) and lookup, and dynamic append on one thread, one row runs the
//     re-implemented upstream function (//benchmarks/baselines, out of line, the meta read from
//     memory), upstream's inlined form where it has one (the meta's constants known at compile
//     time, as in a generated kernel), accelmem's X_* entry point and its header-inline form
//     (`X_op_inline` over a StaticMeta) on the same number of cells in the same order, round by
//     round, plus floors (bare slot loads; CAS + shared push) and a plain array where they tell
//     what the operation cannot go below. Only the operation is timed (thread CPU time);
//     re-activation and GC between rounds are untimed. Counters vs_upstream and
//     vs_upstream_inlined: upstream's time per operation / accelmem's (> 1: accelmem is faster).
//   * The host API's Write for its per-call overhead.
//   * Dynamic append from 1 and 2 threads (wall time) against std::vector::push_back and a
//     std::mutex-guarded vector.
//   * Pointer activation from ParallelStructFor workers, with and without the per-worker
//     NodeCaches, on 1 and 2 threads.
//   * Struct-for visit rate (StructFor / ParallelStructFor over a fully active
//     pointer(1024).dense(1024) of f32) against a plain loop over a dense float array.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "benchmark/benchmark.h"
#include "benchmarks/baselines/paired_timing.h"
#include "benchmarks/baselines/upstream_node_manager.h"
#include "benchmarks/baselines/upstream_snodes.h"
#include "benchmarks/baselines/upstream_tree.h"
#include "benchmarks/snode_bench_upstream_dynamic.h"
#include "runtime/sparse_runtime.h"
#include "runtime/sparse_runtime_test_peer.h"

namespace {

using namespace accelmem::sparse_runtime;  // NOLINT: benchmark brevity
using accelmem::baselines::UpstreamDynamicNode;
using accelmem::baselines::UpstreamNodeManager;
using accelmem::runtime::SparseRuntime;
using accelmem::runtime::SparseRuntimeOptions;

constexpr int32_t kCells = 1 << 20;

// 0, 1, ..., n - 1, shuffled when `random` (the same order for both rows of a pair).
std::vector<int32_t> Order(int32_t n, bool random) {
  std::vector<int32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  if (random) std::shuffle(order.begin(), order.end(), std::mt19937(7));
  return order;
}

int64_t sink = 0;  // results of the lookup loops

// Whether a compile-time meta agrees with the tree's run-time meta (skips the row if not).
template <typename M>
bool StaticOk(benchmark::State& state, const M& m) {
  if (m.matches()) return true;
  state.SkipWithError("compile-time meta does not match the tree");
  return false;
}

// ---------------------------------------------------------------------------------------------
// accelmem: one SNode under the root of its own tree.
struct Tree {
  template <typename Build>
  explicit Tree(Build&& build) {
    build(tree.root());
    if (!tree.Finalize().ok()) std::abort();
    rt = std::move(SparseRuntime::Create(tree)).value();
  }
  // Binds meta/node to the parent of the place `name`.
  void Bind(const char* name) {
    snode = tree.FindPlace(name)->parent();
    meta = rt->meta(*snode);
    node = rt->context()->root + snode->offset_in_parent_cell();
  }
  SNodeTree tree;
  std::unique_ptr<SparseRuntime> rt;
  const SNode* snode = nullptr;
  Ptr meta = nullptr;
  Ptr node = nullptr;
};

// root.pointer(i, 2^20).place<int32>("x"): one NodeManager cell (8 B) per active pointer cell.
struct PointerTree : Tree {
  PointerTree() : Tree([](SNode& root) { root.pointer(Axis(0), kCells).place<int32_t>("x"); }) {
    Bind("x");
  }
  // The meta's shape as compile-time constants (2^20 cells of one int32, and the allocator's
  // stride for them, 8 bytes: what a kernel builder knows from the cell type); checked in StaticOk.
  using Static = PointerStaticMeta<kCells, 4, NodeManager::cell_stride(4, alignof(int32_t))>;
  Static sm() const { return Static{meta}; }
  void ActivateAll() {
    for (int32_t i = 0; i < kCells; ++i) Pointer_activate(meta, node, i);
  }
  void Collect() {
    if (!rt->CollectGarbage().ok()) std::abort();
  }
  void DeactivateAllAndCollect() {
    for (int32_t i = 0; i < kCells; ++i) Pointer_deactivate(meta, node, i);
    Collect();
  }
};

using accelmem::baselines::UpstreamTree;

struct UpstreamPointerTree : UpstreamTree {
  UpstreamPointerTree()
      : UpstreamTree(8, kCells, accelmem::baselines::UpstreamPointerContainerBytes(kCells), 8) {}
  void ActivateAll() {
    for (int32_t i = 0; i < kCells; ++i)
      accelmem::baselines::UpstreamPointer_activate(m(), node, i);
  }
  void DeactivateAllAndCollect() {
    for (int32_t i = 0; i < kCells; ++i) {
      accelmem::baselines::UpstreamPointer_deactivate(m(), node, i);
    }
    nm->gc_serial();
  }
};
using UpstreamInlinedPointer = accelmem::baselines::UpstreamInlinedPointer<kCells>;

// ---------------------------------------------------------------------------------------------
// Interleaved rows (benchmarks/baselines/paired_timing.h): one row per operation and order holds
// upstream's function out of line (`upstream`, the meta read from memory), upstream's inlined
// form over compile-time constants (`upstream_inlined`, as its code generator emits it),
// accelmem's X_* entry point (`accelmem`) and its header-inline form over a StaticMeta
// (`inlined`, as a kernel built from C++ or JIT-linked with the runtime bitcode gets it). The two
// upstream contenders share one tree and the two accelmem ones another, so within a row only the
// code differs. Each iteration runs every contender's round once (rotating the order); counters:
// `<name>_ns` (median CPU ns per cell), vs_upstream = upstream / accelmem and vs_upstream_inlined
// = upstream_inlined / inlined (medians of per-iteration ratios; > 1: accelmem is faster). The
// Time column is accelmem's round.
using accelmem::baselines::Comparison;
using accelmem::baselines::Contender;
using accelmem::baselines::RunInterleaved;
namespace baselines = accelmem::baselines;

const std::vector<Comparison>& VsUpstream() {
  static const std::vector<Comparison> comparisons = {{"vs_upstream", "upstream", "accelmem"}};
  return comparisons;
}
const std::vector<Comparison>& VsBoth() {
  static const std::vector<Comparison> comparisons = {
      {"vs_upstream", "upstream", "accelmem"},
      {"vs_upstream_inlined", "upstream_inlined", "inlined"}};
  return comparisons;
}

// The pointer rows add `inlined_view`: the inline form over Pointer_view(StaticMeta), the cells'
// origin read once (in a register, as a kernel loop keeps it; the stride is the meta's constant).
const std::vector<Comparison>& VsBothAndView() {
  static const std::vector<Comparison> comparisons = {
      {"vs_upstream", "upstream", "accelmem"},
      {"vs_upstream_inlined", "upstream_inlined", "inlined"},
      {"view_vs_upstream_inlined", "upstream_inlined", "inlined_view"}};
  return comparisons;
}

// Rounds over `order` (every cell once). The per-cell function is copied into a local first: a
// local whose address never escapes stays in registers, where an acquire load in the loop body
// would otherwise make the compiler reload a captured value from memory on every cell.
template <typename Op>
std::function<void()> EachCell(const std::vector<int32_t>& order, Op op) {
  return [&order, op] {
    const Op f = op;
    for (const int32_t *p = order.data(), *end = p + order.size(); p != end; ++p) f(*p);
  };
}
// Adds f(i) over `order` into `sink` (a count for a bool, a sum of values for a value).
template <typename F>
std::function<void()> Accumulate(const std::vector<int32_t>& order, F op) {
  return [&order, op] {
    const F f = op;
    int64_t total = 0;
    for (const int32_t *p = order.data(), *end = p + order.size(); p != end; ++p) total += f(*p);
    sink += total;
  };
}
// Sums the int32 at each cell's lookup(i) (the value is loaded, as a kernel reading it would).
template <typename Lookup>
std::function<void()> SumLookups(const std::vector<int32_t>& order, Lookup lookup) {
  return Accumulate(order, [lookup](int32_t i) -> int64_t {
    return *reinterpret_cast<const int32_t*>(lookup(i));
  });
}
// The four contenders of a lookup row. First writes each cell's index into it through the two
// out-of-line lookups, so that the value loads read written memory (a never-written cell maps
// the kernel's shared zero page, which would make every value load hit the cache).
template <typename Up, typename UpInlined, typename Ours, typename OursInlined>
std::vector<Contender> LookupContenders(const std::vector<int32_t>& order, Up upstream,
                                        UpInlined upstream_inlined, Ours accelmem,
                                        OursInlined inlined) {
  for (int32_t i = 0; i < kCells; ++i) {
    *reinterpret_cast<int32_t*>(upstream(i)) = i;
    *reinterpret_cast<int32_t*>(accelmem(i)) = i;
  }
  return {{"upstream", SumLookups(order, upstream)},
          {"upstream_inlined", SumLookups(order, upstream_inlined)},
          {"accelmem", SumLookups(order, accelmem)},
          {"inlined", SumLookups(order, inlined)}};
}

// Pointer: root.pointer(i, 2^20).place<int32>, one NodeManager cell (8 B) per active cell.
//
// Activation of cells that are all inactive, each taking a cell from the allocator's free list
// (untimed before each round: everything deactivated and collected).
void BM_Pointer_Activate_AfterGc(benchmark::State& state) {
  const std::vector<int32_t> order = Order(kCells, false);
  UpstreamPointerTree up;
  PointerTree t;
  up.ActivateAll();
  t.ActivateAll();
  RunInterleaved(
      state, kCells,
      {{"upstream",
        EachCell(order, [m = up.m(), node = up.node](
                            int32_t i) { baselines::UpstreamPointer_activate(m, node, i); }),
        [&] { up.DeactivateAllAndCollect(); }},
       {"accelmem",
        EachCell(order, [m = t.meta, node = t.node](int32_t i) { Pointer_activate(m, node, i); }),
        [&] { t.DeactivateAllAndCollect(); }}},
      "accelmem", VsUpstream());
}

// Activation of cells that are all active already (a test of the slot and nothing else), with
// `floor`: one plain load of each slot (what any already-active test must read).
void BM_Pointer_Activate_AlreadyActive(benchmark::State& state) {
  const std::vector<int32_t> order = Order(kCells, false);
  UpstreamPointerTree up;
  PointerTree t;
  up.ActivateAll();
  t.ActivateAll();
  const PointerTree::Static sm = t.sm();
  if (!StaticOk(state, sm)) return;
  UpstreamNodeManager* const nm = up.nm.get();
  RunInterleaved(
      state, kCells,
      {{"upstream",
        EachCell(order, [m = up.m(), node = up.node](
                            int32_t i) { baselines::UpstreamPointer_activate(m, node, i); })},
       {"upstream_inlined",
        EachCell(order, [node = up.node,
                         nm](int32_t i) { UpstreamInlinedPointer::activate(node, i, nm); })},
       {"accelmem",
        EachCell(order, [m = t.meta, node = t.node](int32_t i) { Pointer_activate(m, node, i); })},
       {"inlined",
        EachCell(order, [sm, node = t.node](int32_t i) { Pointer_activate_inline(sm, node, i); })},
       {"inlined_view", EachCell(order, [v = Pointer_view(sm), node = t.node](
                                            int32_t i) { Pointer_activate_inline(v, node, i); })},
       {"floor", Accumulate(order,
                            [slots = Pointer_slot(t.meta, t.node, 0)](int32_t i) {
                              return Pointer_is_cell(atomic_load_acquire(slots + i));
                            })}},
      "accelmem", VsBothAndView());
}

// Deactivation of every cell, in reverse activation order (/random:0) or a random order; before
// each round, untimed, the tree is collected and fully re-activated. Besides the plain per-call
// form (`accelmem`, one CAS per cell and recycling into the NodeManager): `inlined`, its
// header-inline form over the StaticMeta (what a C++ kernel loop gets); `cached`, the per-call
// Pointer_deactivate_cached through one NodeCache (one CAS per cell, recycling into the cache);
// `owned`, Pointer_deactivate_owned through the same cache, for a caller that is the only
// deactivator of its cells (no CAS: a release store of null), and `inlined_owned`, its
// header-inline form over the StaticMeta; `indices` and `indices_cached`, the batch entry point
// Pointer_deactivate_indices over the whole order array (slots prefetched one block ahead),
// recycling through the NodeManager with one recycle_cells per block or through the NodeCache.
// A cache's final flush is timed. `floor_cas_push` (on a tree of its own, slots restored before
// each round): what any lock-free deactivation with a shared recycled list must do per cell --
// load the slot, one compare-and-swap of it to null, one atomic add on a shared counter to append
// the cell's index (NodeManager::recycle's atomic); locked instructions keep later loads from
// passing them, so the misses do not overlap. `floor_cas` (same tree, same restore): the load and
// the compare-and-swap alone, what any per-call deactivation that may race with another
// deactivation of the same cell pays before it recycles anything. Counters `<name>_vs_upstream`
// for each form.
std::vector<int32_t> DeactivationOrder(const benchmark::State& state) {
  std::vector<int32_t> order = Order(kCells, state.range(0) != 0);
  if (state.range(0) == 0) std::reverse(order.begin(), order.end());
  return order;
}

struct DeactivateCache {
  explicit DeactivateCache(const PointerTree& t) : cache(new NodeCache()) {
    const StructMeta* m = as_struct_meta(t.meta);
    cache->init(runtime_node_manager(m->context, m->snode_id));
  }
  std::unique_ptr<NodeCache> cache;
};

void BM_Pointer_Deactivate(benchmark::State& state) {
  const std::vector<int32_t> order = DeactivationOrder(state);
  UpstreamPointerTree up;
  PointerTree t;
  const PointerTree::Static sm = t.sm();
  if (!StaticOk(state, sm)) return;
  DeactivateCache c(t);
  NodeCache* const cache = c.cache.get();
  auto reactivate = [&] {
    t.Collect();
    t.ActivateAll();
  };
  // Ends a round through the cache with its flush (timed).
  auto flushed = [cache](std::function<void()> round) {
    return [cache, round] {
      round();
      cache->flush();
    };
  };
  // The floor's own tree and its fully active slots, restored before each of its rounds.
  PointerTree floor_tree;
  floor_tree.ActivateAll();
  PointerSlot* const slots = Pointer_slot(floor_tree.meta, floor_tree.node, 0);
  const std::vector<PointerSlot> saved(slots, slots + kCells);
  std::vector<int32_t> pushed(kCells);
  int32_t num_pushed = 0;
  std::vector<Comparison> comparisons = {{"vs_upstream", "upstream", "accelmem"}};
  for (const char* form :
       {"inlined", "cached", "owned", "inlined_owned", "indices", "indices_cached"}) {
    comparisons.push_back({std::string(form) + "_vs_upstream", "upstream", form});
  }
  RunInterleaved(
      state, kCells,
      {{"upstream",
        EachCell(order, [m = up.m(), node = up.node](
                            int32_t i) { baselines::UpstreamPointer_deactivate(m, node, i); }),
        [&] {
          up.nm->gc_serial();
          up.ActivateAll();
        }},
       {"accelmem",
        EachCell(order, [m = t.meta, node = t.node](int32_t i) { Pointer_deactivate(m, node, i); }),
        reactivate},
       {"inlined",
        EachCell(order, [sm, node = t.node](int32_t i) { Pointer_deactivate_inline(sm, node, i); }),
        reactivate},
       {"cached",
        flushed(EachCell(order, [m = t.meta, node = t.node, cache](
                                    int32_t i) { Pointer_deactivate_cached(m, node, i, cache); })),
        reactivate},
       {"owned",
        flushed(EachCell(order, [m = t.meta, node = t.node, cache](
                                    int32_t i) { Pointer_deactivate_owned(m, node, i, cache); })),
        reactivate},
       {"inlined_owned",
        flushed(EachCell(order,
                         [sm, node = t.node, cache](int32_t i) {
                           Pointer_deactivate_owned_inline(sm, node, i, cache);
                         })),
        reactivate},
       {"indices",
        [&order, m = t.meta, node = t.node] {
          Pointer_deactivate_indices(m, node, order.data(), kCells, nullptr);
        },
        reactivate},
       {"indices_cached", flushed([&order, m = t.meta, node = t.node, cache] {
          Pointer_deactivate_indices(m, node, order.data(), kCells, cache);
        }),
        reactivate},
       {"floor_cas_push",
        EachCell(order,
                 [slots, p = pushed.data(), n = &num_pushed](int32_t i) {
                   PointerSlot v = atomic_load_acquire(slots + i);
                   if (Pointer_is_cell(v) && atomic_cas(slots + i, &v, PointerSlot{0})) {
                     p[atomic_add(n, 1)] = i;
                   }
                 }),
        [&] {
          std::copy(saved.begin(), saved.end(), slots);
          num_pushed = 0;
        }},
       {"floor_cas",
        EachCell(order,
                 [slots](int32_t i) {
                   PointerSlot v = atomic_load_acquire(slots + i);
                   if (Pointer_is_cell(v)) atomic_cas(slots + i, &v, PointerSlot{0});
                 }),
        [&] { std::copy(saved.begin(), saved.end(), slots); }}},
      "accelmem", comparisons);
  std::copy(saved.begin(), saved.end(), slots);  // leave the floor tree consistent for its GC
}

// Lookup of every (active) cell and a load of its value, sequential or random order; besides the
// four contenders of LookupContenders, `inlined_view` (through Pointer_view) and
// `inlined_contiguous` (through Pointer_contiguous_view: no chunk-table test); and the lookup
// without the value's load (the addresses summed), upstream's inlined form against the
// contiguous view: `upstream_inlined_address`, `inlined_contiguous_address`.
void BM_Pointer_Lookup(benchmark::State& state) {
  const std::vector<int32_t> order = Order(kCells, state.range(0) != 0);
  UpstreamPointerTree up;
  PointerTree t;
  up.ActivateAll();
  t.ActivateAll();
  const PointerTree::Static sm = t.sm();
  if (!StaticOk(state, sm)) return;
  std::vector<Contender> contenders = LookupContenders(
      order,
      [m = up.m(), node = up.node](int32_t i) {
        return baselines::UpstreamPointer_lookup_element(m, node, i);
      },
      [node = up.node, ambient = up.rt->ambient_elements[0]](int32_t i) {
        return UpstreamInlinedPointer::lookup_element(node, i, ambient);
      },
      [m = t.meta, node = t.node](int32_t i) { return Pointer_lookup_element(m, node, i); },
      [sm, node = t.node](int32_t i) { return Pointer_lookup_element_inline(sm, node, i); });
  contenders.push_back(
      {"inlined_view", SumLookups(order, [v = Pointer_view(sm), node = t.node](int32_t i) {
         return Pointer_lookup_element_inline(v, node, i);
       })});
  std::vector<Comparison> comparisons = VsBothAndView();
  PointerView<PointerTree::Static, true> contiguous;
  if (Pointer_contiguous_view(sm, &contiguous)) {  // the CPU pool's default; else not timed
    contenders.push_back(
        {"inlined_contiguous", SumLookups(order, [v = contiguous, node = t.node](int32_t i) {
           return Pointer_lookup_element_inline(v, node, i);
         })});
    comparisons.push_back(
        {"contiguous_vs_upstream_inlined", "upstream_inlined", "inlined_contiguous"});
    // The lookup alone, without the value's load: the addresses summed. Separates what the lookup
    // costs from the traffic of the cells it leads to (which the value load adds to every form).
    contenders.push_back({"inlined_contiguous_address",
                          Accumulate(order, [v = contiguous, node = t.node](int32_t i) {
                            return reinterpret_cast<int64_t>(
                                Pointer_lookup_element_inline(v, node, i));
                          })});
    // Beside upstream's other two, not last: a round leaves its tree's memory warm for the next
    // contender in the rotation, and last it warmed upstream's slots for `upstream` alone, while
    // `accelmem` starts after upstream's rounds. Both out-of-line forms must start on the other
    // tree's memory: with this contender last, the random out-of-line lookup read slower than
    // upstream's on the Zen 5 VM, while a near copy of accelmem's function timed after accelmem's
    // own rounds took under half its time (benchmarks/history/2026-12-03.md).
    contenders.insert(
        contenders.begin() + 2,
        {"upstream_inlined_address",
         Accumulate(order, [node = up.node, ambient = up.rt->ambient_elements[0]](int32_t i) {
           return reinterpret_cast<int64_t>(
               UpstreamInlinedPointer::lookup_element(node, i, ambient));
         })});
    comparisons.push_back(
        {"address_vs_upstream_inlined", "upstream_inlined_address", "inlined_contiguous_address"});
  }
  RunInterleaved(state, kCells, contenders, "accelmem", comparisons);
}

// is_active of every (active) cell, sequential or random order, with `floor`: one plain load of
// each slot in the same order.
void BM_Pointer_IsActive(benchmark::State& state) {
  const std::vector<int32_t> order = Order(kCells, state.range(0) != 0);
  UpstreamPointerTree up;
  PointerTree t;
  up.ActivateAll();
  t.ActivateAll();
  const PointerTree::Static sm = t.sm();
  if (!StaticOk(state, sm)) return;
  RunInterleaved(
      state, kCells,
      {{"upstream", Accumulate(order,
                               [m = up.m(), node = up.node](int32_t i) {
                                 return baselines::UpstreamPointer_is_active(m, node, i);
                               })},
       {"upstream_inlined",
        Accumulate(order, [node = up.node](
                              int32_t i) { return UpstreamInlinedPointer::is_active(node, i); })},
       {"accelmem", Accumulate(order, [m = t.meta, node = t.node](
                                          int32_t i) { return Pointer_is_active(m, node, i); })},
       {"inlined",
        Accumulate(order, [sm, node = t.node](
                              int32_t i) { return Pointer_is_active_inline(sm, node, i); })},
       {"inlined_view",
        Accumulate(order, [v = Pointer_view(sm), node = t.node](
                              int32_t i) { return Pointer_is_active_inline(v, node, i); })},
       {"floor", Accumulate(order,
                            [slots = Pointer_slot(t.meta, t.node, 0)](int32_t i) {
                              return Pointer_is_cell(atomic_load_acquire(slots + i));
                            })}},
      "accelmem", VsBothAndView());
}

// ---------------------------------------------------------------------------------------------
// Dense lookup: root.dense(i, 2^20).place<int32>, every cell looked up and loaded, with `array`:
// the same loads from a plain std::vector<int32_t>.
void BM_Dense_Lookup(benchmark::State& state) {
  const std::vector<int32_t> order = Order(kCells, state.range(0) != 0);
  UpstreamTree up(4, kCells, 4 * uint64_t{kCells}, 0);
  Tree t([](SNode& root) { root.dense(Axis(0), kCells).place<int32_t>("d"); });
  t.Bind("d");
  const StaticMeta<kCells, 4> sm{t.meta};
  if (!StaticOk(state, sm)) return;
  std::vector<Contender> contenders = LookupContenders(
      order,
      [m = up.m(), node = up.node](int32_t i) {
        return baselines::UpstreamDense_lookup_element(m, node, i);
      },
      [node = up.node](int32_t i) {
        return baselines::UpstreamInlinedDense<4>::lookup_element(node, i);
      },
      [m = t.meta, node = t.node](int32_t i) { return Dense_lookup_element(m, node, i); },
      [sm, node = t.node](int32_t i) { return Dense_lookup_element_inline(sm, node, i); });
  std::vector<int32_t> values(kCells);
  for (int32_t i = 0; i < kCells; ++i) values[i] = i;
  contenders.push_back(
      {"array", SumLookups(order, [v = values.data()](int32_t i) { return v + i; })});
  RunInterleaved(state, kCells, contenders, "accelmem", VsBoth());
}

// ---------------------------------------------------------------------------------------------
// Bitmasked: root.bitmasked(i, 2^20).place<int32>. Activation of every cell from all inactive
// (the mask / flags cleared, untimed, before each round), activation of cells all active already
// (kernels activate the path on every write: upstream ORs unconditionally, accelmem tests the
// cell's flag byte first), and lookup of every active cell; sequential or random order.
using UpstreamInlinedBitmasked = baselines::UpstreamInlinedBitmasked<4, kCells>;

struct UpstreamBitmaskedTree : UpstreamTree {
  UpstreamBitmaskedTree()
      : UpstreamTree(4, kCells, baselines::UpstreamBitmaskedContainerBytes(4, kCells), 0) {}
  void Clear() { std::memset(node + 4 * uint64_t{kCells}, 0, kCells / 8); }
  void ActivateAll() {
    for (int32_t i = 0; i < kCells; ++i) baselines::UpstreamBitmasked_activate(m(), node, i);
  }
};

struct BitmaskedTree : Tree {
  BitmaskedTree() : Tree([](SNode& root) { root.bitmasked(Axis(0), kCells).place<int32_t>("b"); }) {
    Bind("b");
  }
  using Static = StaticMeta<kCells, 4>;
  Static sm() const { return Static{meta}; }
  void Clear() {
    for (int32_t i = 0; i < kCells; ++i) Bitmasked_deactivate(meta, node, i);
  }
  void ActivateAll() {
    for (int32_t i = 0; i < kCells; ++i) Bitmasked_activate(meta, node, i);
  }
};

// The four activation contenders; `clear` before each round (or none, for already active).
void BitmaskedActivation(benchmark::State& state, bool clear) {
  const std::vector<int32_t> order = Order(kCells, state.range(0) != 0);
  UpstreamBitmaskedTree up;
  BitmaskedTree t;
  const BitmaskedTree::Static sm = t.sm();
  if (!StaticOk(state, sm)) return;
  up.ActivateAll();
  t.ActivateAll();
  std::function<void()> clear_up, clear_t;
  if (clear) {
    clear_up = [&] { up.Clear(); };
    clear_t = [&] { t.Clear(); };
  }
  RunInterleaved(
      state, kCells,
      {{"upstream",
        EachCell(order, [m = up.m(), node = up.node](
                            int32_t i) { baselines::UpstreamBitmasked_activate(m, node, i); }),
        clear_up},
       {"upstream_inlined",
        EachCell(order,
                 [node = up.node](int32_t i) { UpstreamInlinedBitmasked::activate(node, i); }),
        clear_up},
       {"accelmem",
        EachCell(order, [m = t.meta, node = t.node](int32_t i) { Bitmasked_activate(m, node, i); }),
        clear_t},
       {"inlined",
        EachCell(order, [sm, node = t.node](int32_t i) { Bitmasked_activate_inline(sm, node, i); }),
        clear_t}},
      "accelmem", VsBoth());
}

void BM_Bitmasked_Activate(benchmark::State& state) { BitmaskedActivation(state, true); }
void BM_Bitmasked_Activate_AlreadyActive(benchmark::State& state) {
  BitmaskedActivation(state, false);
}

void BM_Bitmasked_Lookup(benchmark::State& state) {
  const std::vector<int32_t> order = Order(kCells, state.range(0) != 0);
  UpstreamBitmaskedTree up;
  BitmaskedTree t;
  const BitmaskedTree::Static sm = t.sm();
  if (!StaticOk(state, sm)) return;
  up.ActivateAll();
  t.ActivateAll();
  RunInterleaved(
      state, kCells,
      LookupContenders(
          order,
          [m = up.m(), node = up.node](int32_t i) {
            return baselines::UpstreamBitmasked_lookup_element(m, node, i);
          },
          [node = up.node](int32_t i) { return UpstreamInlinedBitmasked::lookup_element(node, i); },
          [m = t.meta, node = t.node](int32_t i) { return Bitmasked_lookup_element(m, node, i); },
          [sm, node = t.node](int32_t i) { return Bitmasked_lookup_element_inline(sm, node, i); }),
      "accelmem", VsBoth());
}

// The host API on the same tree: index checks, shared lock, walk, activation, store; 1 or 2
// threads writing disjoint halves.
template <typename Fn>
void RunThreads(int threads, Fn&& fn);

void BM_HostApi_Write(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  PointerTree t;
  const SNode& x = *t.tree.FindPlace("x");
  for (auto _ : state) {
    RunThreads(threads, [&](int w) {
      const int32_t per = kCells / threads;
      for (int32_t i = w * per; i < (w + 1) * per; ++i) {
        if (!t.rt->Write<int32_t>(x, {i}, i).ok()) std::abort();
      }
    });
  }
  state.SetItemsProcessed(state.iterations() * kCells);
}

// ---------------------------------------------------------------------------------------------
// Dynamic append: root.dynamic(i, 2^22, chunk 4096).place<int32>; 2^20 appends from empty (the
// list deactivated and collected, untimed, before each round).
constexpr int32_t kAppends = 1 << 20;
constexpr int32_t kDynamicChunk = 4096;

struct DynamicTree : Tree {
  DynamicTree()
      : Tree([](SNode& root) {
          root.dynamic(Axis(0), 4 * kAppends, kDynamicChunk).place<int32_t>("d");
        }) {
    Bind("d");
  }
};

struct UpstreamDynamicTree : UpstreamTree {
  static constexpr uint64_t kNodeBytes = sizeof(Ptr) + 4 * kDynamicChunk;  // link, then cells
  UpstreamDynamicTree() : UpstreamTree(4, 4 * kAppends, sizeof(UpstreamDynamicNode), kNodeBytes) {
    meta.chunk_size = kDynamicChunk;
    // Replace UpstreamTree's allocator (nothing allocated yet) by one with upstream's clamp.
    nm = std::make_unique<UpstreamNodeManager>(
        kNodeBytes,
        baselines::UpstreamClampedChunkNumElements(kNodeBytes,
                                                   UpstreamNodeManager::kRuntimeChunkNumElements),
        baselines::UpstreamAllocator{&accelmem::sparse_runtime::HostMemoryPool::AllocateCallback,
                                     &pool});
    rt->node_allocators[0] = nm.get();
  }
  void Clear() {
    baselines::UpstreamDynamic_deactivate(m(), node);
    nm->gc_serial();
  }
};

// Both rows append the same way: one allocate call, then the store of the value at the cell.
void BM_Dynamic_Append(benchmark::State& state) {
  UpstreamDynamicTree up;
  DynamicTree t;
  RunInterleaved(
      state, kAppends,
      {{"upstream",
        [m = up.m(), node = up.node] {
          for (int32_t k = 0; k < kAppends; ++k) {
            int32_t len;
            *reinterpret_cast<int32_t*>(baselines::UpstreamDynamic_allocate(m, node, &len)) = k;
          }
        },
        [&] { up.Clear(); }},
       {"accelmem",
        [m = t.meta, node = t.node] {
          for (int32_t k = 0; k < kAppends; ++k) {
            int32_t len;
            *reinterpret_cast<int32_t*>(Dynamic_allocate(m, node, &len)) = k;
          }
        },
        [&] {
          Dynamic_deactivate(t.meta, t.node);
          if (!t.rt->CollectGarbage().ok()) std::abort();
        }}},
      "accelmem", VsUpstream());
  if (baselines::UpstreamDynamic_get_num_elements(up.m(), up.node) != kAppends ||
      Dynamic_get_num_elements(t.meta, t.node) != kAppends) {
    state.SkipWithError("wrong length");
  }
  // Upstream's allocator reserved each chunk of the list once, in the first round, later rounds
  // reusing them: its asserting paths (touch_chunk on a reservation) ran 256 times in the row.
  if (up.nm->data_list->size() != kAppends / kDynamicChunk) {
    state.SkipWithError("upstream allocator reserved chunks in a timed round");
  }
}

template <typename Fn>
void RunThreads(int threads, Fn&& fn) {
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back([&, t] { fn(t); });
  fn(0);
  for (auto& th : pool) th.join();
}

// 1 or 2 threads appending to one list (wall time), next to the std::vector rows.
void BM_Dynamic_AppendThreads(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  DynamicTree t;
  auto round = [&] {
    RunThreads(threads, [&](int) {
      for (int32_t k = 0; k < kAppends / threads; ++k) {
        int32_t len;
        *reinterpret_cast<int32_t*>(Dynamic_allocate(t.meta, t.node, &len)) = k;
      }
    });
  };
  round();
  for (auto _ : state) {
    state.PauseTiming();
    Dynamic_deactivate(t.meta, t.node);
    if (!t.rt->CollectGarbage().ok()) std::abort();
    state.ResumeTiming();
    round();
  }
  state.SetItemsProcessed(state.iterations() * kAppends);
}

void BM_StdVector_PushBack(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  std::vector<int32_t> v;
  std::mutex mu;
  for (auto _ : state) {
    state.PauseTiming();
    v.clear();
    v.shrink_to_fit();
    state.ResumeTiming();
    if (threads == 1) {
      for (int32_t k = 0; k < kAppends; ++k) v.push_back(k);
    } else {
      RunThreads(threads, [&](int) {
        for (int32_t k = 0; k < kAppends / threads; ++k) {
          std::lock_guard<std::mutex> lock(mu);
          v.push_back(k);
        }
      });
    }
  }
  state.SetItemsProcessed(state.iterations() * kAppends);
}

// Struct-for over a fully active pointer(1024).dense(1024) of f32.
struct StructForTree {
  explicit StructForTree(int threads) {
    tree.root().pointer(Axis(0), 1024).dense(Axis(0), 1024).place<float>("v");
    if (!tree.Finalize().ok()) std::abort();
    SparseRuntimeOptions options;
    options.num_threads = threads;
    rt = std::move(SparseRuntime::Create(tree, options)).value();
    v = tree.FindPlace("v");
    for (int32_t i = 0; i < kCells; ++i) {
      if (!rt->Write<float>(*v, {i}, 1.0f).ok()) std::abort();
    }
  }
  SNodeTree tree;
  std::unique_ptr<SparseRuntime> rt;
  const SNode* v;
};

void BM_StructFor_Visit(benchmark::State& state) {
  StructForTree t(1);
  double sum = 0;
  for (auto _ : state) {
    if (!t.rt->StructFor(*t.v, [&](absl::Span<const int32_t> index,
                                   void* value) { sum += *static_cast<float*>(value) + index[0]; })
             .ok()) {
      std::abort();
    }
  }
  benchmark::DoNotOptimize(sum);
  state.SetItemsProcessed(state.iterations() * kCells);
}

void BM_ParallelStructFor_Visit(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  StructForTree t(threads);
  std::vector<double> sums(threads * 8);
  for (auto _ : state) {
    if (!t.rt->ParallelStructFor(*t.v,
                                 [&](absl::Span<const int32_t> index, void* value, int w) {
                                   sums[w * 8] += *static_cast<float*>(value) + index[0];
                                 })
             .ok()) {
      std::abort();
    }
  }
  benchmark::DoNotOptimize(sums.data());
  state.SetItemsProcessed(state.iterations() * kCells);
}

// Pointer activation from ParallelStructFor workers: a dense(4096) driver (4 struct-for tasks)
// whose visitor activates 64 pointer cells each (2^18 in all, through the host API), with the
// per-worker NodeCaches
// (/caches:1, the default) or straight from the NodeManager (/caches:0, one shared atomic per
// cell, as upstream); everything is deactivated and collected between iterations, untimed.
void BM_ParallelStructFor_Activate(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  SNodeTree tree;
  constexpr int32_t kActivated = 1 << 18;  // the two axes' index space must fit in 2^31
  SNode& driver = tree.root().dense(Axis(0), 4096);
  driver.place<int32_t>("d");
  SNode& ptr = tree.root().pointer(Axis(1), kActivated);
  ptr.place<int32_t>("x");
  if (!tree.Finalize().ok()) std::abort();
  SparseRuntimeOptions options;
  options.num_threads = threads;
  options.auto_collect = false;
  accelmem::runtime::UpstreamEmulation upstream;
  upstream.worker_caches = state.range(1) != 0;
  auto rt =
      std::move(accelmem::runtime::SparseRuntimeTestPeer::Create(tree, options, upstream)).value();
  for (auto _ : state) {
    if (!rt->ParallelStructFor(driver, [&](absl::Span<const int32_t> index, void*, int) {
             for (int32_t m = 0; m < 64; ++m) {
               if (!rt->Activate(ptr, {index[0] * 64 + m}).ok()) std::abort();
             }
           }).ok()) {
      std::abort();
    }
    state.PauseTiming();
    Ptr meta = rt->meta(ptr);
    Ptr node = rt->context()->root + ptr.offset_in_parent_cell();
    for (int32_t i = 0; i < kActivated; ++i) Pointer_deactivate(meta, node, i);
    if (!rt->CollectGarbage().ok()) std::abort();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * kActivated);
}

void BM_DenseLoop_Visit(benchmark::State& state) {
  std::vector<float> values(kCells, 1.0f);
  double sum = 0;
  for (auto _ : state) {
    for (int32_t i = 0; i < kCells; ++i) sum += values[i] + i;
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * kCells);
}

// Interleaved rows: manual time (the thread CPU time of accelmem's round).
void Interleaved(benchmark::internal::Benchmark* b) {
  b->UseManualTime()->Unit(benchmark::kMillisecond);
}
void InterleavedOrder(benchmark::internal::Benchmark* b) {
  b->ArgName("random")->Arg(0)->Arg(1)->UseManualTime()->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_Pointer_Activate_AfterGc)->Apply(Interleaved);
BENCHMARK(BM_Pointer_Activate_AlreadyActive)->Apply(Interleaved);
BENCHMARK(BM_Pointer_Deactivate)->Apply(InterleavedOrder);
BENCHMARK(BM_Pointer_Lookup)->Apply(InterleavedOrder);
BENCHMARK(BM_Pointer_IsActive)->Apply(InterleavedOrder);
BENCHMARK(BM_Dense_Lookup)->Apply(InterleavedOrder);
BENCHMARK(BM_Bitmasked_Activate)->Apply(InterleavedOrder);
BENCHMARK(BM_Bitmasked_Activate_AlreadyActive)->Apply(InterleavedOrder);
BENCHMARK(BM_Bitmasked_Lookup)->Apply(InterleavedOrder);
BENCHMARK(BM_Dynamic_Append)->Apply(Interleaved);

// The rows without an upstream contender.
BENCHMARK(BM_HostApi_Write)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_Dynamic_AppendThreads)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_StdVector_PushBack)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_StructFor_Visit)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ParallelStructFor_Visit)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_ParallelStructFor_Activate)
    ->ArgNames({"threads", "caches"})
    ->Args({1, 0})
    ->Args({1, 1})
    ->Args({2, 0})
    ->Args({2, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_DenseLoop_Visit)->Unit(benchmark::kMillisecond);

}  // namespace

// snode_bench: the sparse runtime's SNode operations against upstream's algorithms and plain
// baselines.
//
//   * Upstream pairs: for pointer activation (after a GC / already active), deactivation (LIFO /
//     random), lookup and is_active (sequential / random), dense lookup, bitmasked activation
//     (from inactive / already active) and lookup, and dynamic append on one thread, a
//     `BM_Upstream_<op>` row runs the re-implemented upstream function (//benchmarks/baselines,
//     out of line, the meta read from memory) on the same number of cells in the same order,
//     right before accelmem's `BM_<op>` row; for the lookups, is_active and the activations
//     without allocation a `BM_UpstreamInlined_<op>` row adds upstream's inlined form (the meta's
//     constants known at compile time, as in a generated kernel). Both rows of a pair time only
//     the operation (thread CPU time, reported as manual time; re-activation and GC between
//     rounds are untimed) and accelmem's row reports `vs_upstream` (and `vs_upstream_inlined`) =
//     upstream's time per operation / accelmem's (see benchmarks/baselines/paired_timing.h).
//     Where an inlined upstream row exists, a `BM_Inlined_<op>` row follows accelmem's: its
//     header-inline form (`X_op_inline` over a StaticMeta, the shape known at compile time), on
//     the same cells in the same order, with the same counters.
//   * Pointer deactivation through a NodeCache (per call, with the CAS and, for a caller that
//     owns its cells, without: Pointer_deactivate_owned) and through the batch entry point
//     Pointer_deactivate_indices, on the same cells in the same order as the deactivation pair.
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
#include "runtime/sparse_runtime.h"
#include "sparse_runtime/host_memory_pool.h"

namespace {

using namespace accelmem::sparse_runtime;  // NOLINT: benchmark brevity
using accelmem::baselines::PairedRow;
using accelmem::baselines::UpstreamAllocator;
using accelmem::baselines::UpstreamDynamicMeta;
using accelmem::baselines::UpstreamDynamicNode;
using accelmem::baselines::UpstreamNodeManager;
using accelmem::baselines::UpstreamRuntime;
using accelmem::baselines::UpstreamRuntimeContext;

constexpr int32_t kCells = 1 << 20;

// 0, 1, ..., n - 1, shuffled when `random` (the same order for both rows of a pair).
std::vector<int32_t> Order(int32_t n, bool random) {
  std::vector<int32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  if (random) std::shuffle(order.begin(), order.end(), std::mt19937(7));
  return order;
}

std::string Key(const char* op, benchmark::State& state) {
  return std::string(op) + "/" + std::to_string(state.range(0));
}

// Ends a baseline row: items processed, and its time per item remembered under `key`.
void FinishBaseline(benchmark::State& state, PairedRow& row, const std::string& key,
                    int64_t items) {
  row.RecordBaseline(key, static_cast<double>(items));
  state.SetItemsProcessed(state.iterations() * items);
}

// Ends accelmem's row: items processed, vs_upstream and (where it ran) vs_upstream_inlined.
void FinishOurs(benchmark::State& state, PairedRow& row, const std::string& key, int64_t items) {
  row.ReportAgainst(key, static_cast<double>(items));
  row.ReportAgainst(key + "#inlined", static_cast<double>(items), "vs_upstream_inlined");
  state.SetItemsProcessed(state.iterations() * items);
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
  // The meta's shape as compile-time constants (2^20 cells of one int32); checked in StaticOk.
  using Static = StaticMeta<kCells, 4>;
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

// upstream: one SNode (id 0) with its container, allocator and ambient element, all memory from a
// HostMemoryPool as accelmem's runtime uses (same page size and huge-page advice).
struct UpstreamTree {
  UpstreamTree(uint64_t element_size, int64_t n, uint64_t container_bytes,
               uint64_t allocator_node_bytes) {
    if (allocator_node_bytes > 0) {
      UpstreamAllocator allocator{&HostMemoryPool::AllocateCallback, &pool};
      nm = std::make_unique<UpstreamNodeManager>(
          allocator_node_bytes, UpstreamNodeManager::kRuntimeChunkNumElements, allocator);
      rt->node_allocators[0] = nm.get();
    }
    rt->ambient_elements[0] = static_cast<Ptr>(pool.Allocate(64, 64));
    context.runtime = rt.get();
    meta.base.snode_id = 0;
    meta.base.element_size = element_size;
    meta.base.max_num_elements = n;
    meta.base.context = &context;
    node = static_cast<Ptr>(pool.Allocate(container_bytes, 4096));  // fresh: zero
    if (node == nullptr || rt->ambient_elements[0] == nullptr) std::abort();
  }
  Ptr m() { return reinterpret_cast<Ptr>(&meta); }
  HostMemoryPool pool;
  std::unique_ptr<UpstreamNodeManager> nm;
  std::unique_ptr<UpstreamRuntime> rt = std::make_unique<UpstreamRuntime>();
  UpstreamRuntimeContext context;
  UpstreamDynamicMeta meta;  // meta.base for the kinds other than dynamic
  Ptr node = nullptr;
};

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
// Pointer activation of cells that are all inactive, each taking a cell from the allocator's free
// list (everything deactivated and collected, untimed, between rounds).
void BM_Upstream_Pointer_Activate_AfterGc(benchmark::State& state) {
  UpstreamPointerTree t;
  t.ActivateAll();
  t.DeactivateAllAndCollect();
  PairedRow row(state);
  for (auto _ : state) {
    row.Time([&] { t.ActivateAll(); });
    t.DeactivateAllAndCollect();
  }
  FinishBaseline(state, row, "Pointer_Activate_AfterGc", kCells);
}

void BM_Pointer_Activate_AfterGc(benchmark::State& state) {
  PointerTree t;
  t.ActivateAll();
  t.DeactivateAllAndCollect();
  PairedRow row(state);
  for (auto _ : state) {
    row.Time([&] { t.ActivateAll(); });
    t.DeactivateAllAndCollect();
  }
  FinishOurs(state, row, "Pointer_Activate_AfterGc", kCells);
}

// Activation of cells that are all active already (a test of the slot and nothing else).
void BM_Upstream_Pointer_Activate_AlreadyActive(benchmark::State& state) {
  UpstreamPointerTree t;
  t.ActivateAll();
  PairedRow row(state);
  for (auto _ : state) row.Time([&] { t.ActivateAll(); });
  FinishBaseline(state, row, "Pointer_Activate_AlreadyActive", kCells);
}

void BM_UpstreamInlined_Pointer_Activate_AlreadyActive(benchmark::State& state) {
  UpstreamPointerTree t;
  t.ActivateAll();
  PairedRow row(state);
  for (auto _ : state) {
    row.Time([&] {
      for (int32_t i = 0; i < kCells; ++i) UpstreamInlinedPointer::activate(t.node, i, t.nm.get());
    });
  }
  FinishBaseline(state, row, "Pointer_Activate_AlreadyActive#inlined", kCells);
}

void BM_Pointer_Activate_AlreadyActive(benchmark::State& state) {
  PointerTree t;
  t.ActivateAll();
  PairedRow row(state);
  for (auto _ : state) row.Time([&] { t.ActivateAll(); });
  FinishOurs(state, row, "Pointer_Activate_AlreadyActive", kCells);
}

void BM_Inlined_Pointer_Activate_AlreadyActive(benchmark::State& state) {
  PointerTree t;
  t.ActivateAll();
  const PointerTree::Static sm = t.sm();
  if (!StaticOk(state, sm)) return;
  const Ptr node = t.node;  // in a register, as in a kernel
  PairedRow row(state);
  for (auto _ : state) {
    row.Time([&] {
      for (int32_t i = 0; i < kCells; ++i) Pointer_activate_inline(sm, node, i);
    });
  }
  FinishOurs(state, row, "Pointer_Activate_AlreadyActive", kCells);
}

// Deactivation of every cell, in reverse activation order (/random:0) or a random order; the
// cells are re-activated and collected, untimed, between rounds.
std::vector<int32_t> DeactivationOrder(const benchmark::State& state) {
  std::vector<int32_t> order = Order(kCells, state.range(0) != 0);
  if (state.range(0) == 0) std::reverse(order.begin(), order.end());
  return order;
}

void BM_Upstream_Pointer_Deactivate(benchmark::State& state) {
  const std::vector<int32_t> order = DeactivationOrder(state);
  UpstreamPointerTree t;
  PairedRow row(state);
  for (auto _ : state) {
    t.ActivateAll();
    row.Time([&] {
      for (int32_t i : order) accelmem::baselines::UpstreamPointer_deactivate(t.m(), t.node, i);
    });
    t.nm->gc_serial();
  }
  FinishBaseline(state, row, Key("Pointer_Deactivate", state), kCells);
}

// Every accelmem deactivation row: deactivate_all(order) on the fully active tree `t`, then the
// flush of `cache` (if any), timed; re-activation and GC between rounds untimed.
template <typename DeactivateAll>
void TimeDeactivation(benchmark::State& state, PointerTree& t, NodeCache* cache,
                      const DeactivateAll& deactivate_all) {
  const std::vector<int32_t> order = DeactivationOrder(state);
  PairedRow row(state);
  for (auto _ : state) {
    t.ActivateAll();
    row.Time([&] {
      deactivate_all(order);
      if (cache != nullptr) cache->flush();
    });
    t.Collect();
  }
  FinishOurs(state, row, Key("Pointer_Deactivate", state), kCells);
}

void BM_Pointer_Deactivate(benchmark::State& state) {
  PointerTree t;
  TimeDeactivation(state, t, nullptr, [&](const std::vector<int32_t>& order) {
    for (int32_t i : order) Pointer_deactivate(t.meta, t.node, i);
  });
}

// The forms of deactivation that avoid per-cell shared atomics, on the same cells in the same
// order as BM_Pointer_Deactivate: _Cached is the per-call Pointer_deactivate_cached through one
// NodeCache (one CAS per cell, recycling into the cache); _Owned the per-call
// Pointer_deactivate_owned through the same cache, for a caller that is the only deactivator of
// its cells (no CAS: a release store of null), out of line and (_Inlined_) through the
// header-inline form over the compile-time meta, as a kernel built from C++ or JIT-linked with
// the runtime bitcode calls it; _Indices is the batch entry point Pointer_deactivate_indices over
// the whole order array (slots prefetched one block ahead), which recycles through the
// NodeManager with one recycle_cells per block (/cache:0) or through the NodeCache (/cache:1).
// The cache's final flush is timed.
struct DeactivateCache {
  explicit DeactivateCache(const PointerTree& t) : cache(new NodeCache()) {
    const StructMeta* m = as_struct_meta(t.meta);
    cache->init(runtime_node_manager(m->context, m->snode_id));
  }
  std::unique_ptr<NodeCache> cache;
};

void BM_Pointer_Deactivate_Cached(benchmark::State& state) {
  PointerTree t;
  DeactivateCache c(t);
  NodeCache* const cache = c.cache.get();
  TimeDeactivation(state, t, cache, [&](const std::vector<int32_t>& order) {
    for (int32_t i : order) Pointer_deactivate_cached(t.meta, t.node, i, cache);
  });
}

void BM_Pointer_Deactivate_Owned(benchmark::State& state) {
  PointerTree t;
  DeactivateCache c(t);
  NodeCache* const cache = c.cache.get();
  TimeDeactivation(state, t, cache, [&](const std::vector<int32_t>& order) {
    for (int32_t i : order) Pointer_deactivate_owned(t.meta, t.node, i, cache);
  });
}

void BM_Inlined_Pointer_Deactivate_Owned(benchmark::State& state) {
  PointerTree t;
  const PointerTree::Static sm = t.sm();
  if (!StaticOk(state, sm)) return;
  DeactivateCache c(t);
  NodeCache* const cache = c.cache.get();
  TimeDeactivation(state, t, cache, [&](const std::vector<int32_t>& order) {
    const Ptr node = t.node;  // in a register, as in a kernel
    for (int32_t i : order) Pointer_deactivate_owned_inline(sm, node, i, cache);
  });
}

void BM_Pointer_Deactivate_Indices(benchmark::State& state) {
  PointerTree t;
  DeactivateCache c(t);
  NodeCache* const cache = state.range(1) != 0 ? c.cache.get() : nullptr;
  TimeDeactivation(state, t, cache, [&](const std::vector<int32_t>& order) {
    Pointer_deactivate_indices(t.meta, t.node, order.data(), kCells, cache);
  });
}

// Floors for the pointer rows, on the same tree's slot array (2^20 slots, 8 MiB) in the same
// order: (1) one plain load per slot, counting the cells (what any lookup, is_active or
// already-active activation must read; independent loads, so the CPU overlaps their misses; in
// sequential order a plain loop over the slots, without the order array);
// (2) what any lock-free deactivation with a shared recycled list must do per cell: load the
// slot, one compare-and-swap of it to null, and one atomic add on a shared counter to append the
// cell's index (NodeManager::recycle's atomic). Locked instructions do not let later loads pass
// them, so in (2) the misses no longer overlap. Thread CPU time, manual; slots restored untimed.
void BM_Floor_Pointer_SlotLoad(benchmark::State& state) {
  const std::vector<int32_t> order = Order(kCells, state.range(0) != 0);
  PointerTree t;
  t.ActivateAll();
  Ptr* const slots = Pointer_slot(t.meta, t.node, 0);
  PairedRow row(state);
  for (auto _ : state) {
    int64_t cells = 0;
    if (state.range(0) == 0) {  // sequential: no order array to read
      row.Time([&] {
        for (int32_t i = 0; i < kCells; ++i)
          cells += Pointer_is_cell(atomic_load_acquire(slots + i));
      });
    } else {
      row.Time([&] {
        for (int32_t i : order) cells += Pointer_is_cell(atomic_load_acquire(slots + i));
      });
    }
    sink += cells;
  }
  state.SetItemsProcessed(state.iterations() * kCells);
}

void BM_Floor_Pointer_CasAndPush(benchmark::State& state) {
  const std::vector<int32_t> order = DeactivationOrder(state);
  PointerTree t;
  t.ActivateAll();
  Ptr* const slots = Pointer_slot(t.meta, t.node, 0);
  const std::vector<Ptr> saved(slots, slots + kCells);
  std::vector<int32_t> pushed(kCells);
  int32_t num_pushed = 0;
  PairedRow row(state);
  for (auto _ : state) {
    std::copy(saved.begin(), saved.end(), slots);
    num_pushed = 0;
    row.Time([&] {
      for (int32_t i : order) {
        Ptr v = atomic_load_acquire(slots + i);
        if (Pointer_is_cell(v) && atomic_cas(slots + i, &v, static_cast<Ptr>(nullptr))) {
          pushed[atomic_add(&num_pushed, 1)] = i;
        }
      }
    });
  }
  std::copy(saved.begin(), saved.end(), slots);
  state.SetItemsProcessed(state.iterations() * kCells);
}

// Lookup of every (active) cell and a load of its value, sequential or random order.
void BM_Upstream_Pointer_Lookup(benchmark::State& state) {
  const std::vector<int32_t> order = Order(kCells, state.range(0) != 0);
  UpstreamPointerTree t;
  t.ActivateAll();
  PairedRow row(state);
  for (auto _ : state) {
    row.Time([&] {
      int64_t sum = 0;
      for (int32_t i : order) {
        sum += *reinterpret_cast<int32_t*>(
            accelmem::baselines::UpstreamPointer_lookup_element(t.m(), t.node, i));
      }
      sink += sum;
    });
  }
  FinishBaseline(state, row, Key("Pointer_Lookup", state), kCells);
}

void BM_UpstreamInlined_Pointer_Lookup(benchmark::State& state) {
  const std::vector<int32_t> order = Order(kCells, state.range(0) != 0);
  UpstreamPointerTree t;
  t.ActivateAll();
  Ptr ambient = t.rt->ambient_elements[0];
  PairedRow row(state);
  for (auto _ : state) {
    row.Time([&] {
      int64_t sum = 0;
      for (int32_t i : order) {
        sum +=
            *reinterpret_cast<int32_t*>(UpstreamInlinedPointer::lookup_element(t.node, i, ambient));
      }
      sink += sum;
    });
  }
  FinishBaseline(state, row, Key("Pointer_Lookup", state) + "#inlined", kCells);
}

void BM_Pointer_Lookup(benchmark::State& state) {
  const std::vector<int32_t> order = Order(kCells, state.range(0) != 0);
  PointerTree t;
  t.ActivateAll();
  PairedRow row(state);
  for (auto _ : state) {
    row.Time([&] {
      int64_t sum = 0;
      for (int32_t i : order) {
        sum += *reinterpret_cast<int32_t*>(Pointer_lookup_element(t.meta, t.node, i));
      }
      sink += sum;
    });
  }
  FinishOurs(state, row, Key("Pointer_Lookup", state), kCells);
}

void BM_Inlined_Pointer_Lookup(benchmark::State& state) {
  const std::vector<int32_t> order = Order(kCells, state.range(0) != 0);
  PointerTree t;
  t.ActivateAll();
  const PointerTree::Static sm = t.sm();
  if (!StaticOk(state, sm)) return;
  const Ptr node = t.node;  // in a register, as in a kernel
  PairedRow row(state);
  for (auto _ : state) {
    row.Time([&] {
      int64_t sum = 0;
      for (int32_t i : order) {
        sum += *reinterpret_cast<int32_t*>(Pointer_lookup_element_inline(sm, node, i));
      }
      sink += sum;
    });
  }
  FinishOurs(state, row, Key("Pointer_Lookup", state), kCells);
}

// is_active of every (active) cell, sequential or random order.
void BM_Upstream_Pointer_IsActive(benchmark::State& state) {
  const std::vector<int32_t> order = Order(kCells, state.range(0) != 0);
  UpstreamPointerTree t;
  t.ActivateAll();
  PairedRow row(state);
  for (auto _ : state) {
    row.Time([&] {
      int64_t n = 0;
      for (int32_t i : order) n += accelmem::baselines::UpstreamPointer_is_active(t.m(), t.node, i);
      sink += n;
    });
  }
  FinishBaseline(state, row, Key("Pointer_IsActive", state), kCells);
}

void BM_UpstreamInlined_Pointer_IsActive(benchmark::State& state) {
  const std::vector<int32_t> order = Order(kCells, state.range(0) != 0);
  UpstreamPointerTree t;
  t.ActivateAll();
  PairedRow row(state);
  for (auto _ : state) {
    row.Time([&] {
      int64_t n = 0;
      for (int32_t i : order) n += UpstreamInlinedPointer::is_active(t.node, i);
      sink += n;
    });
  }
  FinishBaseline(state, row, Key("Pointer_IsActive", state) + "#inlined", kCells);
}

void BM_Pointer_IsActive(benchmark::State& state) {
  const std::vector<int32_t> order = Order(kCells, state.range(0) != 0);
  PointerTree t;
  t.ActivateAll();
  PairedRow row(state);
  for (auto _ : state) {
    row.Time([&] {
      int64_t n = 0;
      for (int32_t i : order) n += Pointer_is_active(t.meta, t.node, i);
      sink += n;
    });
  }
  FinishOurs(state, row, Key("Pointer_IsActive", state), kCells);
}

void BM_Inlined_Pointer_IsActive(benchmark::State& state) {
  const std::vector<int32_t> order = Order(kCells, state.range(0) != 0);
  PointerTree t;
  t.ActivateAll();
  const PointerTree::Static sm = t.sm();
  if (!StaticOk(state, sm)) return;
  const Ptr node = t.node;  // in a register, as in a kernel
  PairedRow row(state);
  for (auto _ : state) {
    row.Time([&] {
      int64_t n = 0;
      for (int32_t i : order) n += Pointer_is_active_inline(sm, node, i);
      sink += n;
    });
  }
  FinishOurs(state, row, Key("Pointer_IsActive", state), kCells);
}

// ---------------------------------------------------------------------------------------------
// Dense lookup: root.dense(i, 2^20).place<int32>, every cell looked up and loaded.
void BM_Upstream_Dense_Lookup(benchmark::State& state) {
  const std::vector<int32_t> order = Order(kCells, state.range(0) != 0);
  UpstreamTree t(4, kCells, 4 * uint64_t{kCells}, 0);
  PairedRow row(state);
  for (auto _ : state) {
    row.Time([&] {
      int64_t sum = 0;
      for (int32_t i : order) {
        sum += *reinterpret_cast<int32_t*>(
            accelmem::baselines::UpstreamDense_lookup_element(t.m(), t.node, i));
      }
      sink += sum;
    });
  }
  FinishBaseline(state, row, Key("Dense_Lookup", state), kCells);
}

void BM_UpstreamInlined_Dense_Lookup(benchmark::State& state) {
  const std::vector<int32_t> order = Order(kCells, state.range(0) != 0);
  UpstreamTree t(4, kCells, 4 * uint64_t{kCells}, 0);
  PairedRow row(state);
  for (auto _ : state) {
    row.Time([&] {
      int64_t sum = 0;
      for (int32_t i : order) {
        sum += *reinterpret_cast<int32_t*>(
            accelmem::baselines::UpstreamInlinedDense<4>::lookup_element(t.node, i));
      }
      sink += sum;
    });
  }
  FinishBaseline(state, row, Key("Dense_Lookup", state) + "#inlined", kCells);
}

void BM_Dense_Lookup(benchmark::State& state) {
  const std::vector<int32_t> order = Order(kCells, state.range(0) != 0);
  Tree t([](SNode& root) { root.dense(Axis(0), kCells).place<int32_t>("d"); });
  t.Bind("d");
  PairedRow row(state);
  for (auto _ : state) {
    row.Time([&] {
      int64_t sum = 0;
      for (int32_t i : order) {
        sum += *reinterpret_cast<int32_t*>(Dense_lookup_element(t.meta, t.node, i));
      }
      sink += sum;
    });
  }
  FinishOurs(state, row, Key("Dense_Lookup", state), kCells);
}

void BM_Inlined_Dense_Lookup(benchmark::State& state) {
  const std::vector<int32_t> order = Order(kCells, state.range(0) != 0);
  Tree t([](SNode& root) { root.dense(Axis(0), kCells).place<int32_t>("d"); });
  t.Bind("d");
  const StaticMeta<kCells, 4> sm{t.meta};
  if (!StaticOk(state, sm)) return;
  const Ptr node = t.node;  // in a register, as in a kernel
  PairedRow row(state);
  for (auto _ : state) {
    row.Time([&] {
      int64_t sum = 0;
      for (int32_t i : order) {
        sum += *reinterpret_cast<int32_t*>(Dense_lookup_element_inline(sm, node, i));
      }
      sink += sum;
    });
  }
  FinishOurs(state, row, Key("Dense_Lookup", state), kCells);
}

// ---------------------------------------------------------------------------------------------
// Bitmasked: root.bitmasked(i, 2^20).place<int32>. Activation of every cell from all inactive
// (the mask / flags cleared, untimed, between rounds), and lookup of every active cell, sequential
// or random order.
using UpstreamInlinedBitmasked = accelmem::baselines::UpstreamInlinedBitmasked<4, kCells>;

struct UpstreamBitmaskedTree : UpstreamTree {
  UpstreamBitmaskedTree()
      : UpstreamTree(4, kCells, accelmem::baselines::UpstreamBitmaskedContainerBytes(4, kCells),
                     0) {}
  void Clear() { std::memset(node + 4 * uint64_t{kCells}, 0, kCells / 8); }
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
};

void BM_Upstream_Bitmasked_Activate(benchmark::State& state) {
  const std::vector<int32_t> order = Order(kCells, state.range(0) != 0);
  UpstreamBitmaskedTree t;
  PairedRow row(state);
  for (auto _ : state) {
    t.Clear();
    row.Time([&] {
      for (int32_t i : order) accelmem::baselines::UpstreamBitmasked_activate(t.m(), t.node, i);
    });
  }
  FinishBaseline(state, row, Key("Bitmasked_Activate", state), kCells);
}

void BM_UpstreamInlined_Bitmasked_Activate(benchmark::State& state) {
  const std::vector<int32_t> order = Order(kCells, state.range(0) != 0);
  UpstreamBitmaskedTree t;
  PairedRow row(state);
  for (auto _ : state) {
    t.Clear();
    row.Time([&] {
      for (int32_t i : order) UpstreamInlinedBitmasked::activate(t.node, i);
    });
  }
  FinishBaseline(state, row, Key("Bitmasked_Activate", state) + "#inlined", kCells);
}

void BM_Bitmasked_Activate(benchmark::State& state) {
  const std::vector<int32_t> order = Order(kCells, state.range(0) != 0);
  BitmaskedTree t;
  PairedRow row(state);
  for (auto _ : state) {
    t.Clear();
    row.Time([&] {
      for (int32_t i : order) Bitmasked_activate(t.meta, t.node, i);
    });
  }
  FinishOurs(state, row, Key("Bitmasked_Activate", state), kCells);
}

void BM_Inlined_Bitmasked_Activate(benchmark::State& state) {
  const std::vector<int32_t> order = Order(kCells, state.range(0) != 0);
  BitmaskedTree t;
  const BitmaskedTree::Static sm = t.sm();
  if (!StaticOk(state, sm)) return;
  const Ptr node = t.node;  // in a register, as in a kernel
  PairedRow row(state);
  for (auto _ : state) {
    t.Clear();
    row.Time([&] {
      for (int32_t i : order) Bitmasked_activate_inline(sm, node, i);
    });
  }
  FinishOurs(state, row, Key("Bitmasked_Activate", state), kCells);
}

// Activation of cells that are all active already (kernels activate the path on every write):
// upstream ORs unconditionally, accelmem tests the cell's flag byte first.
void BM_Upstream_Bitmasked_Activate_AlreadyActive(benchmark::State& state) {
  const std::vector<int32_t> order = Order(kCells, state.range(0) != 0);
  UpstreamBitmaskedTree t;
  for (int32_t i = 0; i < kCells; ++i)
    accelmem::baselines::UpstreamBitmasked_activate(t.m(), t.node, i);
  PairedRow row(state);
  for (auto _ : state) {
    row.Time([&] {
      for (int32_t i : order) accelmem::baselines::UpstreamBitmasked_activate(t.m(), t.node, i);
    });
  }
  FinishBaseline(state, row, Key("Bitmasked_Activate_AlreadyActive", state), kCells);
}

void BM_UpstreamInlined_Bitmasked_Activate_AlreadyActive(benchmark::State& state) {
  const std::vector<int32_t> order = Order(kCells, state.range(0) != 0);
  UpstreamBitmaskedTree t;
  for (int32_t i = 0; i < kCells; ++i) UpstreamInlinedBitmasked::activate(t.node, i);
  PairedRow row(state);
  for (auto _ : state) {
    row.Time([&] {
      for (int32_t i : order) UpstreamInlinedBitmasked::activate(t.node, i);
    });
  }
  FinishBaseline(state, row, Key("Bitmasked_Activate_AlreadyActive", state) + "#inlined", kCells);
}

void BM_Bitmasked_Activate_AlreadyActive(benchmark::State& state) {
  const std::vector<int32_t> order = Order(kCells, state.range(0) != 0);
  BitmaskedTree t;
  for (int32_t i = 0; i < kCells; ++i) Bitmasked_activate(t.meta, t.node, i);
  PairedRow row(state);
  for (auto _ : state) {
    row.Time([&] {
      for (int32_t i : order) Bitmasked_activate(t.meta, t.node, i);
    });
  }
  FinishOurs(state, row, Key("Bitmasked_Activate_AlreadyActive", state), kCells);
}

void BM_Inlined_Bitmasked_Activate_AlreadyActive(benchmark::State& state) {
  const std::vector<int32_t> order = Order(kCells, state.range(0) != 0);
  BitmaskedTree t;
  const BitmaskedTree::Static sm = t.sm();
  if (!StaticOk(state, sm)) return;
  const Ptr node = t.node;  // in a register, as in a kernel
  for (int32_t i = 0; i < kCells; ++i) Bitmasked_activate_inline(sm, node, i);
  PairedRow row(state);
  for (auto _ : state) {
    row.Time([&] {
      for (int32_t i : order) Bitmasked_activate_inline(sm, node, i);
    });
  }
  FinishOurs(state, row, Key("Bitmasked_Activate_AlreadyActive", state), kCells);
}

void BM_Upstream_Bitmasked_Lookup(benchmark::State& state) {
  const std::vector<int32_t> order = Order(kCells, state.range(0) != 0);
  UpstreamBitmaskedTree t;
  for (int32_t i = 0; i < kCells; ++i)
    accelmem::baselines::UpstreamBitmasked_activate(t.m(), t.node, i);
  PairedRow row(state);
  for (auto _ : state) {
    row.Time([&] {
      int64_t sum = 0;
      for (int32_t i : order) {
        sum += *reinterpret_cast<int32_t*>(
            accelmem::baselines::UpstreamBitmasked_lookup_element(t.m(), t.node, i));
      }
      sink += sum;
    });
  }
  FinishBaseline(state, row, Key("Bitmasked_Lookup", state), kCells);
}

void BM_UpstreamInlined_Bitmasked_Lookup(benchmark::State& state) {
  const std::vector<int32_t> order = Order(kCells, state.range(0) != 0);
  UpstreamBitmaskedTree t;
  for (int32_t i = 0; i < kCells; ++i) UpstreamInlinedBitmasked::activate(t.node, i);
  PairedRow row(state);
  for (auto _ : state) {
    row.Time([&] {
      int64_t sum = 0;
      for (int32_t i : order) {
        sum += *reinterpret_cast<int32_t*>(UpstreamInlinedBitmasked::lookup_element(t.node, i));
      }
      sink += sum;
    });
  }
  FinishBaseline(state, row, Key("Bitmasked_Lookup", state) + "#inlined", kCells);
}

void BM_Bitmasked_Lookup(benchmark::State& state) {
  const std::vector<int32_t> order = Order(kCells, state.range(0) != 0);
  BitmaskedTree t;
  for (int32_t i = 0; i < kCells; ++i) Bitmasked_activate(t.meta, t.node, i);
  PairedRow row(state);
  for (auto _ : state) {
    row.Time([&] {
      int64_t sum = 0;
      for (int32_t i : order) {
        sum += *reinterpret_cast<int32_t*>(Bitmasked_lookup_element(t.meta, t.node, i));
      }
      sink += sum;
    });
  }
  FinishOurs(state, row, Key("Bitmasked_Lookup", state), kCells);
}

void BM_Inlined_Bitmasked_Lookup(benchmark::State& state) {
  const std::vector<int32_t> order = Order(kCells, state.range(0) != 0);
  BitmaskedTree t;
  const BitmaskedTree::Static sm = t.sm();
  if (!StaticOk(state, sm)) return;
  const Ptr node = t.node;  // in a register, as in a kernel
  for (int32_t i = 0; i < kCells; ++i) Bitmasked_activate_inline(sm, node, i);
  PairedRow row(state);
  for (auto _ : state) {
    row.Time([&] {
      int64_t sum = 0;
      for (int32_t i : order) {
        sum += *reinterpret_cast<int32_t*>(Bitmasked_lookup_element_inline(sm, node, i));
      }
      sink += sum;
    });
  }
  FinishOurs(state, row, Key("Bitmasked_Lookup", state), kCells);
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

// Baseline for lookups: a plain array of the same values.
void BM_DenseArray_Lookup(benchmark::State& state) {
  const bool random = state.range(0) != 0;
  std::vector<int32_t> values(kCells, 1);
  std::vector<int32_t> order(kCells);
  std::iota(order.begin(), order.end(), 0);
  if (random) std::shuffle(order.begin(), order.end(), std::mt19937(7));
  int64_t sum = 0;
  for (auto _ : state) {
    for (int32_t i : order) sum += values[i];
  }
  benchmark::DoNotOptimize(sum);
  state.SetItemsProcessed(state.iterations() * kCells);
}

// ---------------------------------------------------------------------------------------------
// Dynamic append: root.dynamic(i, 2^22, chunk 4096).place<int32>; 2^20 appends from empty (the
// list deactivated and collected, untimed, between rounds).
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
  UpstreamDynamicTree()
      : UpstreamTree(4, 4 * kAppends, sizeof(UpstreamDynamicNode),
                     accelmem::baselines::UpstreamDynamicChunkBytes(4, kDynamicChunk)) {
    meta.chunk_size = kDynamicChunk;
  }
  void Clear() {
    accelmem::baselines::UpstreamDynamic_deactivate(m(), node);
    nm->gc_serial();
  }
};

void BM_Upstream_Dynamic_Append(benchmark::State& state) {
  UpstreamDynamicTree t;
  PairedRow row(state);
  for (auto _ : state) {
    t.Clear();
    row.Time([&] {
      for (int32_t k = 0; k < kAppends; ++k)
        accelmem::baselines::UpstreamDynamic_append(t.m(), t.node, k);
    });
  }
  if (accelmem::baselines::UpstreamDynamic_get_num_elements(t.m(), t.node) != kAppends) {
    state.SkipWithError("wrong length");
  }
  FinishBaseline(state, row, "Dynamic_Append", kAppends);
}

void BM_Dynamic_Append(benchmark::State& state) {
  DynamicTree t;
  PairedRow row(state);
  for (auto _ : state) {
    Dynamic_deactivate(t.meta, t.node);
    if (!t.rt->CollectGarbage().ok()) std::abort();
    row.Time([&] {
      for (int32_t k = 0; k < kAppends; ++k) {
        int32_t len;
        *reinterpret_cast<int32_t*>(Dynamic_allocate(t.meta, t.node, &len)) = k;
      }
    });
  }
  if (Dynamic_get_num_elements(t.meta, t.node) != kAppends) state.SkipWithError("wrong length");
  FinishOurs(state, row, "Dynamic_Append", kAppends);
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
  options.worker_caches = state.range(1) != 0;
  options.auto_collect = false;
  auto rt = std::move(SparseRuntime::Create(tree, options)).value();
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

// Upstream pairs: manual time (thread CPU time of the operation only), baseline rows first.
void Paired(benchmark::internal::Benchmark* b) {
  b->UseManualTime()->Unit(benchmark::kMillisecond);
}
void PairedOrder(benchmark::internal::Benchmark* b) {
  b->ArgName("random")->Arg(0)->Arg(1)->UseManualTime()->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_Upstream_Pointer_Activate_AfterGc)->Apply(Paired);
BENCHMARK(BM_Pointer_Activate_AfterGc)->Apply(Paired);
BENCHMARK(BM_Upstream_Pointer_Activate_AlreadyActive)->Apply(Paired);
BENCHMARK(BM_UpstreamInlined_Pointer_Activate_AlreadyActive)->Apply(Paired);
BENCHMARK(BM_Pointer_Activate_AlreadyActive)->Apply(Paired);
BENCHMARK(BM_Inlined_Pointer_Activate_AlreadyActive)->Apply(Paired);
BENCHMARK(BM_Upstream_Pointer_Deactivate)->Apply(PairedOrder);
BENCHMARK(BM_Pointer_Deactivate)->Apply(PairedOrder);
BENCHMARK(BM_Pointer_Deactivate_Cached)->Apply(PairedOrder);
BENCHMARK(BM_Pointer_Deactivate_Owned)->Apply(PairedOrder);
BENCHMARK(BM_Inlined_Pointer_Deactivate_Owned)->Apply(PairedOrder);
BENCHMARK(BM_Pointer_Deactivate_Indices)
    ->ArgNames({"random", "cache"})
    ->ArgsProduct({{0, 1}, {0, 1}})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Floor_Pointer_CasAndPush)->Apply(PairedOrder);
BENCHMARK(BM_Floor_Pointer_SlotLoad)->Apply(PairedOrder);
BENCHMARK(BM_Upstream_Pointer_Lookup)->Apply(PairedOrder);
BENCHMARK(BM_UpstreamInlined_Pointer_Lookup)->Apply(PairedOrder);
BENCHMARK(BM_Pointer_Lookup)->Apply(PairedOrder);
BENCHMARK(BM_Inlined_Pointer_Lookup)->Apply(PairedOrder);
BENCHMARK(BM_Upstream_Pointer_IsActive)->Apply(PairedOrder);
BENCHMARK(BM_UpstreamInlined_Pointer_IsActive)->Apply(PairedOrder);
BENCHMARK(BM_Pointer_IsActive)->Apply(PairedOrder);
BENCHMARK(BM_Inlined_Pointer_IsActive)->Apply(PairedOrder);
BENCHMARK(BM_Upstream_Dense_Lookup)->Apply(PairedOrder);
BENCHMARK(BM_UpstreamInlined_Dense_Lookup)->Apply(PairedOrder);
BENCHMARK(BM_Dense_Lookup)->Apply(PairedOrder);
BENCHMARK(BM_Inlined_Dense_Lookup)->Apply(PairedOrder);
BENCHMARK(BM_Upstream_Bitmasked_Activate)->Apply(PairedOrder);
BENCHMARK(BM_UpstreamInlined_Bitmasked_Activate)->Apply(PairedOrder);
BENCHMARK(BM_Bitmasked_Activate)->Apply(PairedOrder);
BENCHMARK(BM_Inlined_Bitmasked_Activate)->Apply(PairedOrder);
BENCHMARK(BM_Upstream_Bitmasked_Activate_AlreadyActive)->Apply(PairedOrder);
BENCHMARK(BM_UpstreamInlined_Bitmasked_Activate_AlreadyActive)->Apply(PairedOrder);
BENCHMARK(BM_Bitmasked_Activate_AlreadyActive)->Apply(PairedOrder);
BENCHMARK(BM_Inlined_Bitmasked_Activate_AlreadyActive)->Apply(PairedOrder);
BENCHMARK(BM_Upstream_Bitmasked_Lookup)->Apply(PairedOrder);
BENCHMARK(BM_UpstreamInlined_Bitmasked_Lookup)->Apply(PairedOrder);
BENCHMARK(BM_Bitmasked_Lookup)->Apply(PairedOrder);
BENCHMARK(BM_Inlined_Bitmasked_Lookup)->Apply(PairedOrder);
BENCHMARK(BM_Upstream_Dynamic_Append)->Apply(Paired);
BENCHMARK(BM_Dynamic_Append)->Apply(Paired);

// Plain baselines and the rows without an upstream pair.
BENCHMARK(BM_DenseArray_Lookup)->ArgName("random")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
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

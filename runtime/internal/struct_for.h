// File: runtime/internal/struct_for.h
//
// StructForEngine: how the native host runtime visits the active cells of an SNode, one per
// SparseRuntime (which forwards its StructFor / ParallelStructFor* here and keeps the argument
// checks, locking, error statuses and garbage collection). It owns
//   * list generation: the active containers of a leaf (ListElement), and the list cache that
//     reuses a leaf's list while no SNode it depends on changed structure (the StructMeta
//     structure_changed flags, folded into generations per SNode);
//   * the walk over one container's cells (VisitRange), the serial struct-for, and runs (a dense
//     leaf's task range at a fixed stride, one call);
//   * the two task regimes of the parallel struct-for: a native list split into tasks of at most
//     1024 cells (runs: 65536, handed out in groups), and a kernel backend's extent split into
//     ranges;
//   * the worker caches: one NodeCache per (pool worker, pointer SNode), through which pointer
//     cells activated or deactivated inside a parallel struct-for go, flushed when it ends.
// It runs its tasks on a TaskPool (runtime::ThreadPool, a layer above, adapted by SparseRuntime)
// and marks their threads through thread_state.h. Nothing here locks the runtime: callers hold
// its shared lock.
#ifndef ACCELMEM_RUNTIME_INTERNAL_STRUCT_FOR_H_
#define ACCELMEM_RUNTIME_INTERNAL_STRUCT_FOR_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "runtime/internal/thread_state.h"
#include "sparse_runtime/device/node_cache.h"
#include "sparse_runtime/device/runtime_context.h"
#include "sparse_runtime/snode_tree.h"

namespace accelmem {
namespace runtime {
namespace internal {

constexpr int32_t kListgenMaxCells = 1024;  // upstream taichi_listgen_max_element_size

// One active container of a leaf: its address, its cells, and the coordinates of its parent cell
// per axis.
struct ListElement {
  sparse_runtime::Ptr container;
  int32_t num_cells;
  std::array<int32_t, sparse_runtime::kMaxAxes> base;
};
using ElementList = std::vector<ListElement>;

// The engine's switches. Both are on in production; off, they emulate upstream for the
// benchmarks that compare the two (reached through SparseRuntimeTestPeer, never the public
// options).
struct StructForOptions {
  // Pointer cells (de)activated inside a parallel struct-for go through one NodeCache per worker
  // (no shared atomic per cell). Off: straight from the SNode's NodeManager.
  bool worker_caches = true;
  // A native struct-for reuses the lists of the previous one over the same leaf while no SNode
  // they depend on changed structure. Off: lists before every struct-for.
  bool reuse_lists = true;
};

// The threads the engine's tasks run on: fn(task, worker) for every task in [0, n), `grain`
// tasks per claim, worker in [0, num_threads()); returns when all are done.
class TaskPool {
 public:
  virtual ~TaskPool() = default;
  virtual int num_threads() const = 0;
  virtual void ParallelFor(int64_t n, absl::FunctionRef<void(int64_t task, int worker)> fn,
                           int64_t grain) = 0;
};

class StructForEngine {
 public:
  using Visitor = absl::FunctionRef<void(absl::Span<const int32_t> index, void* cell)>;
  using ParallelVisitor =
      absl::FunctionRef<void(absl::Span<const int32_t> index, void* cell, int worker)>;
  using RunVisitor = absl::FunctionRef<void(absl::Span<const int32_t> first_index, void* first,
                                            int32_t count, uint64_t stride_bytes, int worker)>;
  // One task of a kernel backend's struct-for: the outermost level's cells [begin, end).
  using ExtentTask = absl::FunctionRef<absl::Status(int64_t begin, int64_t end, int worker)>;

  // `metas[id]`: SNode id's StructMeta. The tree, context and metas outlive the engine.
  StructForEngine(const sparse_runtime::SNodeTree& tree, sparse_runtime::RuntimeContext* context,
                  std::vector<sparse_runtime::Ptr> metas, const StructForOptions& options);
  StructForEngine(const StructForEngine&) = delete;
  StructForEngine& operator=(const StructForEngine&) = delete;

  // The active containers of `leaf`: the list of the last call for this leaf while no SNode it
  // depends on (its ancestors, and itself if dynamic) changed structure since, else a new one
  // (list_generations() counts those).
  std::shared_ptr<const ElementList> ListGen(const sparse_runtime::SNode& leaf);
  // Whether lists are reused: the option, where the process can run the heavy fence that the
  // cache's protocol needs (sparse_runtime/asymmetric_fence.h).
  bool reuses_lists();
  int64_t list_generations() const { return list_generations_.load(std::memory_order_relaxed); }
  // Wall time spent obtaining lists (generating or reusing them).
  double list_generation_seconds() const {
    return 1e-9 * static_cast<double>(list_generation_ns_.load(std::memory_order_relaxed));
  }

  // Visits every active cell of `snode` (for a place: its values) once, in layout order.
  void StructFor(const sparse_runtime::SNode& snode, Visitor visit);
  // The same on `pool`, one task per range of at most 1024 cells of a container (ceiling splits:
  // no cell skipped). Each task routes its runtime errors to `record` and runs marked as holding
  // the runtime's lock and as a worker of it; pointer cells go through the worker caches, flushed
  // at the end by the outermost parallel struct-for. Returns whether the flush recycled cells
  // (the caller's GC is then due).
  bool ParallelStructFor(const sparse_runtime::SNode& snode, TaskPool& pool,
                         sparse_runtime::RuntimeErrorRecord* record, ParallelVisitor visit);
  // By runs: a dense leaf's task range of a container is one call (tasks of up to 65536 cells,
  // handed out in groups); other leaves give runs of one cell.
  bool ParallelStructForRuns(const sparse_runtime::SNode& snode, TaskPool& pool,
                             sparse_runtime::RuntimeErrorRecord* record, RunVisitor visit);
  // The kernel backend's regime: the outermost level's `extent` cells in ceiling splits over
  // `pool` (at most 1024 parts; `runs`: 16 per thread, as a run visitor's call costs the same for
  // any length), each task marked and routed as above. The first failing task's status.
  absl::Status ParallelExtent(int64_t extent, bool runs, TaskPool& pool,
                              sparse_runtime::RuntimeErrorRecord* record, ExtentTask task);

  // Sizes the worker caches for `workers` pool threads (once the pool exists; with the option).
  void InitWorkerCaches(int workers);
  // The calling thread's cache for `s` when it is a worker of this runtime's parallel struct-for
  // and `s` is a pointer SNode, else null.
  sparse_runtime::NodeCache* WorkerCache(const sparse_runtime::SNode& s) {
    if (tls_worker_runtime != context_ || tls_worker < 0 || caches_.empty()) return nullptr;
    sparse_runtime::NodeCache* cache =
        &caches_[static_cast<size_t>(tls_worker) * tree_.num_snodes() + s.id()];
    return cache->manager != nullptr ? cache : nullptr;
  }

 private:
  // A cell range [lo, hi) of list element `element`.
  struct Task {
    int32_t element, lo, hi;
  };
  using RangeVisitor =
      absl::FunctionRef<void(const sparse_runtime::SNode& leaf, uint64_t offset,
                             const ListElement& e, int32_t lo, int32_t hi, int worker)>;
  // Per leaf SNode id: the generations of the leaf's dependencies when `list` was made.
  struct ListCache {
    std::vector<uint64_t> generations;
    std::shared_ptr<const ElementList> list;
  };

  sparse_runtime::Ptr meta(const sparse_runtime::SNode& s) const { return metas_[s.id()]; }
  void ListGenRec(const sparse_runtime::SNode& leaf, int depth, sparse_runtime::Ptr cell,
                  const std::array<int32_t, sparse_runtime::kMaxAxes>& base, ElementList* out);
  // Folds the structure_changed flags into the generations; then the generations `leaf`'s list
  // depends on (guarded by list_cache_mu_).
  std::vector<uint64_t> DependencyGenerations(const sparse_runtime::SNode& leaf);
  // Calls fn(index, cell) for the active cells [lo, hi) of one list element (a template so that
  // the visitor is called directly, without a second indirection).
  template <typename Fn>
  void VisitRange(const sparse_runtime::SNode& leaf, uint64_t value_offset, const ListElement& e,
                  int32_t lo, int32_t hi, const Fn& fn);
  // The list regime: the leaf's list split into tasks of at most `max_task_cells`, visit_range
  // called for each on `pool`; then the outermost struct-for flushes the worker caches.
  bool RunListTasks(const sparse_runtime::SNode& snode, TaskPool& pool,
                    sparse_runtime::RuntimeErrorRecord* record, bool runs,
                    RangeVisitor visit_range);
  // Flushes every worker cache; true if anything reached the recycled list.
  bool FlushWorkerCaches();

  const sparse_runtime::SNodeTree& tree_;
  sparse_runtime::RuntimeContext* const context_;
  const std::vector<sparse_runtime::Ptr> metas_;
  const StructForOptions options_;

  // caches_[worker * num_snodes + id] (the pool serializes ParallelFor calls, so a worker index
  // names one thread at a time); sized once by InitWorkerCaches.
  std::vector<sparse_runtime::NodeCache> caches_;
  std::mutex caches_mu_;  // held by the top-level native parallel struct-for

  // The list cache. A generation counts the times the SNode's StructMeta::structure_changed flag
  // was found set (and cleared) here, so one flag serves every leaf below it.
  std::mutex list_cache_mu_;
  bool reuse_lists_ = false;                     // guarded by list_cache_mu_
  std::vector<uint64_t> structure_generations_;  // per SNode id (guarded by list_cache_mu_)
  std::vector<ListCache> list_caches_;           // per SNode id (guarded by list_cache_mu_)
  std::atomic<int64_t> list_generations_{0};
  std::atomic<int64_t> list_generation_ns_{0};
};

}  // namespace internal
}  // namespace runtime
}  // namespace accelmem

#endif  // ACCELMEM_RUNTIME_INTERNAL_STRUCT_FOR_H_

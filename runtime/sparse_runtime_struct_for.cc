// SparseRuntime's struct-fors: list generation over the active containers of a leaf, the
// per-container cell walk, the serial and parallel struct-for, and the thread pool's worker caches.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "runtime/host_scopes.h"
#include "runtime/internal/snode_kinds.h"
#include "runtime/sparse_runtime.h"
#include "sparse_runtime/asymmetric_fence.h"

namespace accelmem {
namespace runtime {

using sparse_runtime::HasAllocator;
using sparse_runtime::IsSparse;
using sparse_runtime::kMaxAxes;
using sparse_runtime::NodeCache;
using sparse_runtime::Ptr;
using sparse_runtime::runtime_node_manager;
using sparse_runtime::RuntimeErrorRecord;
using sparse_runtime::SNode;
using sparse_runtime::SNodeType;
using sparse_runtime::StructForExtent;
using sparse_runtime::u32;

using internal::kListgenMaxCells;
using internal::RouteScope;
using internal::tls_locked_runtime;
using internal::tls_worker_runtime;
using internal::WorkerScope;

void SparseRuntime::ListGenRec(const SNode& leaf, int depth, Ptr cell,
                               const std::array<int32_t, kMaxAxes>& base,
                               std::vector<ListElement>* out) {
  const SNode& level = *leaf.path()[depth];
  Ptr container = cell + level.offset_in_parent_cell();
  const int32_t n = NumElements(level, container);
  if (&level == &leaf) {
    out->push_back({container, n, base});
    return;
  }
  const bool has_allocator = HasAllocator(level.type());
  std::array<int32_t, kMaxAxes> refined;
  for (int32_t i = 0; i < n; ++i) {
    Ptr child_cell;
    if (has_allocator) {
      child_cell = ActiveCellOne(level, container, i);
      if (child_cell == nullptr) continue;
    } else {
      if (!IsActiveOne(level, container, i)) continue;
      child_cell = LookupOne(level, container, i);
    }
    refined = base;
    int64_t l = i;
    for (auto it = level.axes().rbegin(); it != level.axes().rend(); ++it) {
      const int64_t shape = level.shape(*it);
      refined[*it] = static_cast<int32_t>(base[*it] * shape + l % shape);
      l /= shape;
    }
    ListGenRec(leaf, depth + 1, child_cell, refined, out);
  }
}

std::shared_ptr<const std::vector<SparseRuntime::ListElement>> SparseRuntime::ListGen(
    const SNode& leaf) {
  const auto start = std::chrono::steady_clock::now();
  struct AddTime {
    std::atomic<int64_t>* total;
    std::chrono::steady_clock::time_point start;
    ~AddTime() {
      total->fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(
                           std::chrono::steady_clock::now() - start)
                           .count(),
                       std::memory_order_relaxed);
    }
  } add_time{&list_generation_ns_, start};
  std::lock_guard<std::mutex> guard(list_cache_mu_);
  // Fold every sparse SNode's changed-flag into its generation (clearing it serves every leaf).
  // A load first: an unchanged SNode's meta line is not written.
  bool cleared = false;
  for (int id = 0; id < tree_.num_snodes(); ++id) {
    const SNode& s = tree_.snode(id);
    if (!IsSparse(s.type())) continue;
    u32* flag = &sparse_runtime::as_struct_meta(meta(s))->structure_changed;
    if (sparse_runtime::atomic_load_relaxed(flag) != 0 &&
        sparse_runtime::atomic_exchange(flag, u32{0}) != 0) {
      ++structure_generations_[id];
      cleared = true;
    }
  }
  // Between the clear and the walk, the heavy fence of StructMeta_mark_changed's protocol: a
  // change whose mark read the 1 just cleared is visible to the walk below (see there). Without
  // it (not available, or failed) no list can be trusted: none is reused from then on.
  if (cleared && reuse_lists_ && !sparse_runtime::AsymmetricFenceHeavy()) reuse_lists_ = false;
  // The list depends on which cells of the levels above the leaf are active, and on the length
  // of a dynamic leaf's containers (a pointer or bitmasked leaf's cells are tested as visited).
  std::vector<uint64_t> generations;
  const auto& path = leaf.path();
  for (size_t depth = 1; depth < path.size(); ++depth) {
    const SNode& level = *path[depth];
    if (&level != &leaf || level.type() == SNodeType::kDynamic) {
      generations.push_back(structure_generations_[level.id()]);
    }
  }
  ListCache& cache = list_caches_[leaf.id()];
  if (reuse_lists_ && cache.list != nullptr && cache.generations == generations) {
    return cache.list;
  }
  auto out = std::make_shared<std::vector<ListElement>>();
  std::array<int32_t, kMaxAxes> base;
  base.fill(0);
  if (leaf.parent() == nullptr) {
    out->push_back({context_.root, 1, base});
  } else {
    ListGenRec(leaf, 1, context_.root, base, out.get());
  }
  list_generations_.fetch_add(1, std::memory_order_relaxed);
  cache.generations = std::move(generations);
  cache.list = std::move(out);
  return cache.list;
}

bool SparseRuntime::reuses_struct_for_lists() {
  std::lock_guard<std::mutex> guard(list_cache_mu_);
  return backend_ == nullptr && reuse_lists_;
}

template <typename Fn>
void SparseRuntime::VisitRange(const SNode& leaf, uint64_t value_offset, const ListElement& e,
                               int32_t lo, int32_t hi, const Fn& fn) {
  if (lo >= hi) return;
  const Ptr m = meta(leaf);
  // One loop per kind, its state local to it (nothing the visitor call could alias).
  internal::WithKind(leaf.type(), [&](auto kind) {
    const std::vector<int>& index_axes = leaf.index_axes();
    const std::vector<int>& axes = leaf.axes();
    const int num_axes = static_cast<int>(axes.size());
    // Odometer over the leaf's axes (row-major, last axis fastest): decomposed once, then
    // incremented, so no division per cell.
    int64_t digit[kMaxAxes];
    int64_t shape[kMaxAxes];
    int64_t l = lo;
    for (int a = num_axes - 1; a >= 0; --a) {
      shape[a] = leaf.shape(axes[a]);
      digit[a] = l % shape[a];
      l /= shape[a];
    }
    std::array<int32_t, kMaxAxes> coord = e.base;
    for (int a = 0; a < num_axes; ++a) {
      coord[axes[a]] = static_cast<int32_t>(e.base[axes[a]] * shape[a] + digit[a]);
    }
    int32_t index[kMaxAxes];
    const size_t num_indices = index_axes.size();
    typename decltype(kind)::Cursor cursor(m, e.container, lo);
    for (int32_t i = lo; i < hi; ++i) {
      if (cursor.ended()) return;  // a dynamic list was shortened meanwhile
      const Ptr cell = cursor.Next(i);
      if (cell != nullptr) {
        for (size_t k = 0; k < num_indices; ++k) index[k] = coord[index_axes[k]];
        fn(absl::Span<const int32_t>(index, num_indices), cell + value_offset);
      }
      for (int a = num_axes - 1; a >= 0; --a) {
        const int axis = axes[a];
        if (++digit[a] < shape[a]) {
          ++coord[axis];
          break;
        }
        digit[a] = 0;
        coord[axis] = static_cast<int32_t>(e.base[axis] * shape[a]);
      }
    }
  });
}

absl::Status SparseRuntime::StructFor(const SNode& snode, Visitor visit) {
  absl::Status status = StructForUnlocked(snode, visit);
  if (!status.ok()) return status;
  return MaybeAutoCollect();
}

absl::Status SparseRuntime::StructForUnlocked(const SNode& snode, Visitor visit) {
  if (&snode != &tree_.snode(snode.id())) {
    return absl::InvalidArgumentError("SNode does not belong to this runtime's tree");
  }
  const bool is_place = snode.type() == SNodeType::kPlace;
  const SNode& leaf = is_place ? *snode.parent() : snode;
  const uint64_t offset = is_place ? snode.offset_in_parent_cell() : 0;
  SharedLock lock(this);
  OpErrors errors(this);
  if (backend_ != nullptr) {
    return errors.Finish(backend_->StructFor(snode, 0, StructForExtent(leaf), visit),
                         "struct-for over", snode);
  }
  const std::shared_ptr<const std::vector<ListElement>> list = ListGen(leaf);
  for (const ListElement& e : *list) {
    VisitRange(leaf, offset, e, 0, e.num_cells, visit);
  }
  return errors.Finish(absl::OkStatus(), "struct-for over", snode);
}

ThreadPool* SparseRuntime::pool() {
  std::lock_guard<std::mutex> guard(thread_pool_mu_);
  if (thread_pool_ == nullptr) {
    thread_pool_ = std::make_unique<ThreadPool>(options_.num_threads);
    InitWorkerCaches(thread_pool_->num_threads());
  }
  return thread_pool_.get();
}

void SparseRuntime::InitWorkerCaches(int workers) {
  if (!options_.worker_caches) return;
  const int n = tree_.num_snodes();
  caches_ = std::vector<NodeCache>(static_cast<size_t>(workers) * n);
  for (int w = 0; w < workers; ++w) {
    for (int id = 0; id < n; ++id) {
      NodeCache& cache = caches_[static_cast<size_t>(w) * n + id];
      std::memset(static_cast<void*>(&cache), 0, sizeof(cache));
      if (tree_.snode(id).type() == SNodeType::kPointer) {
        cache.init(runtime_node_manager(&context_, id));
      }
    }
  }
}

bool SparseRuntime::FlushWorkerCaches() {
  bool recycled = false;
  for (NodeCache& cache : caches_) {
    if (cache.manager == nullptr) continue;
    if (cache.num_cached_free() > 0 || cache.num_cached_recycled() > 0) recycled = true;
    cache.flush();
  }
  return recycled;
}

absl::Status SparseRuntime::ParallelStructFor(const SNode& snode, ParallelVisitor visit) {
  absl::Status status = ParallelStructForUnlocked(snode, visit);
  if (!status.ok()) return status;
  return MaybeAutoCollect();
}

absl::Status SparseRuntime::ParallelStructForUnlocked(const SNode& snode, ParallelVisitor visit) {
  return ParallelStructForTasks(
      snode,
      [&](const SNode& leaf, uint64_t offset, const ListElement& e, int32_t lo, int32_t hi,
          int worker) {
        VisitRange(leaf, offset, e, lo, hi, [&](absl::Span<const int32_t> index, void* cell) {
          visit(index, cell, worker);
        });
      },
      visit, /*runs=*/nullptr);
}

absl::Status SparseRuntime::ParallelStructForRuns(const SNode& snode, RunVisitor visit) {
  absl::Status status = ParallelStructForTasks(
      snode,
      [&](const SNode& leaf, uint64_t offset, const ListElement& e, int32_t lo, int32_t hi,
          int worker) {
        if (lo >= hi) return;
        if (leaf.type() != SNodeType::kDense) {
          VisitRange(leaf, offset, e, lo, hi, [&](absl::Span<const int32_t> index, void* cell) {
            visit(index, cell, 1, 0, worker);
          });
          return;
        }
        // A dense container: cells lo..hi-1 at the container's stride, all active. The first
        // cell's index from the odometer of VisitRange, one cell long.
        const uint64_t stride = sparse_runtime::as_struct_meta(meta(leaf))->element_size;
        int32_t first_index[kMaxAxes];
        size_t num_indices = 0;
        VisitRange(leaf, offset, e, lo, lo + 1, [&](absl::Span<const int32_t> index, void*) {
          num_indices = index.size();
          std::copy(index.begin(), index.end(), first_index);
        });
        Ptr first = e.container + static_cast<uint64_t>(lo) * stride + offset;
        visit(absl::Span<const int32_t>(first_index, num_indices), first, hi - lo, stride, worker);
      },
      [&](absl::Span<const int32_t> index, void* cell, int worker) {
        visit(index, cell, 1, 0, worker);
      },
      &visit);
  if (!status.ok()) return status;
  return MaybeAutoCollect();
}

absl::Status SparseRuntime::ParallelStructForTasks(const SNode& snode, RangeVisitor visit_range,
                                                   ParallelVisitor per_cell,
                                                   const RunVisitor* run_visit) {
  const bool runs = run_visit != nullptr;
  if (&snode != &tree_.snode(snode.id())) {
    return absl::InvalidArgumentError("SNode does not belong to this runtime's tree");
  }
  const bool is_place = snode.type() == SNodeType::kPlace;
  const SNode& leaf = is_place ? *snode.parent() : snode;
  const uint64_t offset = is_place ? snode.offset_in_parent_cell() : 0;
  ThreadPool* threads = pool();
  SharedLock lock(this);
  OpErrors errors(this);
  RuntimeErrorRecord* const record = errors.record();
  if (backend_ != nullptr) {
    // Split the outermost level's cells (ceiling splits) over the pool; each task runs the
    // backend's struct-for over its range. A run visitor's call costs the same for any length,
    // so runs take a few tasks per thread (each task pays a kernel call and its error routing:
    // with 1024 tasks that was a third of a 2^23-cell copy on two threads).
    const int64_t n = StructForExtent(leaf);
    const int64_t parts = std::min<int64_t>(
        n, runs ? int64_t{16} * threads->num_threads() : int64_t{kListgenMaxCells});
    std::mutex error_mu;
    absl::Status error;
    threads->ParallelFor(parts, [&](int64_t t, int worker) {
      // The task's runtime errors are the struct-for's.
      RouteScope route(&context_.memory, record);
      const SparseRuntime* previous = tls_locked_runtime;
      tls_locked_runtime = this;
      absl::Status status =
          runs ? backend_->StructForRuns(
                     snode, n * t / parts, n * (t + 1) / parts,
                     [&](absl::Span<const int32_t> index, void* first, int32_t count,
                         uint64_t stride) { (*run_visit)(index, first, count, stride, worker); })
               : backend_->StructFor(snode, n * t / parts, n * (t + 1) / parts,
                                     [&](absl::Span<const int32_t> index, void* cell) {
                                       per_cell(index, cell, worker);
                                     });
      tls_locked_runtime = previous;
      if (!status.ok()) {
        std::lock_guard<std::mutex> guard(error_mu);
        if (error.ok()) error = status;
      }
    });
    return errors.Finish(error, "parallel struct-for over", snode);
  }
  const std::shared_ptr<const std::vector<ListElement>> cached = ListGen(leaf);
  const std::vector<ListElement>& list = *cached;
  // Split every container into ceil(n / 1024) parts (ceiling division: no cell is skipped).
  struct Task {
    int32_t element, lo, hi;
  };
  std::vector<Task> tasks;
  for (size_t k = 0; k < list.size(); ++k) {
    const int32_t n = list[k].num_cells;
    // Upstream's task size for cell visitors; a run visitor's call costs the same for any length.
    const int32_t max_cells = runs ? int32_t{1} << 16 : kListgenMaxCells;
    const int32_t parts = (n + max_cells - 1) / max_cells;
    for (int32_t p = 0; p < parts; ++p) {
      const int32_t lo = static_cast<int32_t>(static_cast<int64_t>(n) * p / parts);
      const int32_t hi = static_cast<int32_t>(static_cast<int64_t>(n) * (p + 1) / parts);
      tasks.push_back({static_cast<int32_t>(k), lo, hi});
    }
  }
  const bool nested = tls_worker_runtime == this;  // an inline struct-for inside a task
  // One top-level parallel struct-for at a time uses (and then flushes) the worker caches.
  std::unique_lock<std::mutex> caches_lock(caches_mu_, std::defer_lock);
  if (!nested) caches_lock.lock();
  const int64_t grain =
      runs ? std::max<int64_t>(1, static_cast<int64_t>(tasks.size()) / (8 * threads->num_threads()))
           : 1;
  threads->ParallelFor(
      static_cast<int64_t>(tasks.size()),
      [&](int64_t t, int worker) {
        // The task's runtime errors are the struct-for's.
        RouteScope route(&context_.memory, record);
        // Tasks run under the caller's shared lock: mark it so re-entrant calls do not re-lock.
        const SparseRuntime* previous = tls_locked_runtime;
        tls_locked_runtime = this;
        WorkerScope scope(this, worker);
        const Task& task = tasks[t];
        visit_range(leaf, offset, list[task.element], task.lo, task.hi, worker);
        tls_locked_runtime = previous;
      },
      grain);
  // The workers are done: hand their cached cells back (the outermost struct-for only; an inline
  // nested one leaves them to it). Recycled cells make the automatic collection run.
  if (!nested && FlushWorkerCaches()) deactivated_since_gc_.store(true, std::memory_order_relaxed);
  return errors.Finish(absl::OkStatus(), "parallel struct-for over", snode);
}

}  // namespace runtime
}  // namespace accelmem

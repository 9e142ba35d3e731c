#include "runtime/internal/struct_for.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <utility>

#include "runtime/internal/snode_kinds.h"
#include "sparse_runtime/asymmetric_fence.h"

namespace accelmem {
namespace runtime {
namespace internal {

using sparse_runtime::HasAllocator;
using sparse_runtime::IsSparse;
using sparse_runtime::kMaxAxes;
using sparse_runtime::NodeCache;
using sparse_runtime::Ptr;
using sparse_runtime::RuntimeErrorRecord;
using sparse_runtime::SNode;
using sparse_runtime::SNodeType;
using sparse_runtime::u32;

namespace {

// A place's struct-for visits its parent's cells, at the place's offset in them.
const SNode& LeafOf(const SNode& snode) {
  return snode.type() == SNodeType::kPlace ? *snode.parent() : snode;
}
uint64_t ValueOffset(const SNode& snode) {
  return snode.type() == SNodeType::kPlace ? snode.offset_in_parent_cell() : 0;
}

// Adds the scope's wall time to `total`.
class AddTime {
 public:
  explicit AddTime(std::atomic<int64_t>* total)
      : total_(total), start_(std::chrono::steady_clock::now()) {}
  ~AddTime() {
    total_->fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now() - start_)
                          .count(),
                      std::memory_order_relaxed);
  }

 private:
  std::atomic<int64_t>* total_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace

StructForEngine::StructForEngine(const sparse_runtime::SNodeTree& tree,
                                 sparse_runtime::RuntimeContext* context, std::vector<Ptr> metas,
                                 const StructForOptions& options)
    : tree_(tree),
      context_(context),
      metas_(std::move(metas)),
      options_(options),
      reuse_lists_(options.reuse_lists && sparse_runtime::AsymmetricFenceHeavyAvailable()),
      structure_generations_(tree.num_snodes(), 0),
      list_caches_(tree.num_snodes()) {}

void StructForEngine::ListGenRec(const SNode& leaf, int depth, Ptr cell,
                                 const std::array<int32_t, kMaxAxes>& base, ElementList* out) {
  const SNode& level = *leaf.path()[depth];
  const Ptr m = meta(level);
  Ptr container = cell + level.offset_in_parent_cell();
  const int32_t n = NumCells(level, m, container);
  if (&level == &leaf) {
    out->push_back({container, n, base});
    return;
  }
  const bool has_allocator = HasAllocator(level.type());
  std::array<int32_t, kMaxAxes> refined;
  for (int32_t i = 0; i < n; ++i) {
    Ptr child_cell;
    if (has_allocator) {
      child_cell = ActiveCell(context_, level, m, container, i);
      if (child_cell == nullptr) continue;
    } else {
      if (!IsActiveCell(level, m, container, i)) continue;
      child_cell = LookupCell(level, m, container, i);
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

std::vector<uint64_t> StructForEngine::DependencyGenerations(const SNode& leaf) {
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
  // change whose mark read the 1 just cleared is visible to the walk that follows (see there).
  // Without it (not available, or failed) no list can be trusted: none is reused from then on.
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
  return generations;
}

std::shared_ptr<const ElementList> StructForEngine::ListGen(const SNode& leaf) {
  AddTime add_time(&list_generation_ns_);
  std::lock_guard<std::mutex> guard(list_cache_mu_);
  std::vector<uint64_t> generations = DependencyGenerations(leaf);
  ListCache& cache = list_caches_[leaf.id()];
  if (reuse_lists_ && cache.list != nullptr && cache.generations == generations) {
    return cache.list;
  }
  auto out = std::make_shared<ElementList>();
  std::array<int32_t, kMaxAxes> base;
  base.fill(0);
  if (leaf.parent() == nullptr) {
    out->push_back({context_->root, 1, base});
  } else {
    ListGenRec(leaf, 1, context_->root, base, out.get());
  }
  list_generations_.fetch_add(1, std::memory_order_relaxed);
  cache.generations = std::move(generations);
  cache.list = std::move(out);
  return cache.list;
}

bool StructForEngine::reuses_lists() {
  std::lock_guard<std::mutex> guard(list_cache_mu_);
  return reuse_lists_;
}

template <typename Fn>
void StructForEngine::VisitRange(const SNode& leaf, uint64_t value_offset, const ListElement& e,
                                 int32_t lo, int32_t hi, const Fn& fn) {
  if (lo >= hi) return;
  const Ptr m = meta(leaf);
  // One loop per kind, its state local to it (nothing the visitor call could alias).
  WithKind(leaf.type(), [&](auto kind) {
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

void StructForEngine::StructFor(const SNode& snode, Visitor visit) {
  const SNode& leaf = LeafOf(snode);
  const uint64_t offset = ValueOffset(snode);
  const std::shared_ptr<const ElementList> list = ListGen(leaf);
  for (const ListElement& e : *list) VisitRange(leaf, offset, e, 0, e.num_cells, visit);
}

bool StructForEngine::ParallelStructFor(const SNode& snode, TaskPool& pool,
                                        RuntimeErrorRecord* record, ParallelVisitor visit) {
  return RunListTasks(snode, pool, record, /*runs=*/false,
                      [&](const SNode& leaf, uint64_t offset, const ListElement& e, int32_t lo,
                          int32_t hi, int worker) {
                        VisitRange(leaf, offset, e, lo, hi,
                                   [&](absl::Span<const int32_t> index, void* cell) {
                                     visit(index, cell, worker);
                                   });
                      });
}

bool StructForEngine::ParallelStructForRuns(const SNode& snode, TaskPool& pool,
                                            RuntimeErrorRecord* record, RunVisitor visit) {
  return RunListTasks(
      snode, pool, record, /*runs=*/true,
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
      });
}

bool StructForEngine::RunListTasks(const SNode& snode, TaskPool& pool, RuntimeErrorRecord* record,
                                   bool runs, RangeVisitor visit_range) {
  const SNode& leaf = LeafOf(snode);
  const uint64_t offset = ValueOffset(snode);
  const std::shared_ptr<const ElementList> cached = ListGen(leaf);
  const ElementList& list = *cached;
  // Split every container into ceil(n / max_cells) parts (ceiling division: no cell is skipped):
  // upstream's task size for cell visitors; a run visitor's call costs the same for any length.
  const int32_t max_cells = runs ? int32_t{1} << 16 : kListgenMaxCells;
  std::vector<Task> tasks;
  for (size_t k = 0; k < list.size(); ++k) {
    const int32_t n = list[k].num_cells;
    const int32_t parts = (n + max_cells - 1) / max_cells;
    for (int32_t p = 0; p < parts; ++p) {
      const int32_t lo = static_cast<int32_t>(static_cast<int64_t>(n) * p / parts);
      const int32_t hi = static_cast<int32_t>(static_cast<int64_t>(n) * (p + 1) / parts);
      tasks.push_back({static_cast<int32_t>(k), lo, hi});
    }
  }
  const bool nested = tls_worker_runtime == context_;  // an inline struct-for inside a task
  // One top-level parallel struct-for at a time uses (and then flushes) the worker caches.
  std::unique_lock<std::mutex> caches_lock(caches_mu_, std::defer_lock);
  if (!nested) caches_lock.lock();
  const int64_t grain =
      runs ? std::max<int64_t>(1, static_cast<int64_t>(tasks.size()) / (8 * pool.num_threads()))
           : 1;
  pool.ParallelFor(
      static_cast<int64_t>(tasks.size()),
      [&](int64_t t, int worker) {
        // The task's runtime errors are the struct-for's; it runs under the caller's shared lock
        // (re-entrant calls do not re-lock) as a worker of this runtime.
        RouteScope route(&context_->memory, record);
        LockedScope locked(context_);
        WorkerScope scope(context_, worker);
        const Task& task = tasks[t];
        visit_range(leaf, offset, list[task.element], task.lo, task.hi, worker);
      },
      grain);
  // The workers are done: hand their cached cells back (the outermost struct-for only; an inline
  // nested one leaves them to it).
  return !nested && FlushWorkerCaches();
}

absl::Status StructForEngine::ParallelExtent(int64_t extent, bool runs, TaskPool& pool,
                                             RuntimeErrorRecord* record, ExtentTask task) {
  // Each task pays a kernel call and its error routing: with 1024 tasks that was a third of a
  // 2^23-cell copy by runs on two threads, hence fewer parts for runs.
  const int64_t n = extent;
  const int64_t parts =
      std::min<int64_t>(n, runs ? int64_t{16} * pool.num_threads() : int64_t{kListgenMaxCells});
  std::mutex error_mu;
  absl::Status error;
  pool.ParallelFor(
      parts,
      [&](int64_t t, int worker) {
        RouteScope route(&context_->memory, record);
        LockedScope locked(context_);
        absl::Status status = task(n * t / parts, n * (t + 1) / parts, worker);
        if (!status.ok()) {
          std::lock_guard<std::mutex> guard(error_mu);
          if (error.ok()) error = status;
        }
      },
      /*grain=*/1);
  return error;
}

void StructForEngine::InitWorkerCaches(int workers) {
  if (!options_.worker_caches) return;
  const int n = tree_.num_snodes();
  caches_ = std::vector<NodeCache>(static_cast<size_t>(workers) * n);
  for (int w = 0; w < workers; ++w) {
    for (int id = 0; id < n; ++id) {
      NodeCache& cache = caches_[static_cast<size_t>(w) * n + id];
      std::memset(static_cast<void*>(&cache), 0, sizeof(cache));
      if (tree_.snode(id).type() == SNodeType::kPointer) {
        cache.init(sparse_runtime::runtime_node_manager(context_, id));
      }
    }
  }
}

bool StructForEngine::FlushWorkerCaches() {
  bool recycled = false;
  for (NodeCache& cache : caches_) {
    if (cache.manager == nullptr) continue;
    if (cache.num_cached_free() > 0 || cache.num_cached_recycled() > 0) recycled = true;
    cache.flush();
  }
  return recycled;
}

}  // namespace internal
}  // namespace runtime
}  // namespace accelmem

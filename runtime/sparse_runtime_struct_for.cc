// SparseRuntime's struct-fors: argument checks, the shared lock, the error record and the
// automatic collection around the struct-for engine (runtime/internal/struct_for.h), which owns
// the lists, the task regimes and the worker caches; the thread pool, created on first use.
#include <memory>
#include <mutex>

#include "runtime/host_scopes.h"
#include "runtime/internal/struct_for.h"
#include "runtime/sparse_runtime.h"

namespace accelmem {
namespace runtime {

using sparse_runtime::SNode;
using sparse_runtime::SNodeType;
using sparse_runtime::StructForExtent;

namespace {

// The engine's tasks on a ThreadPool (a layer above the engine).
class PoolTasks : public internal::TaskPool {
 public:
  explicit PoolTasks(ThreadPool* pool) : pool_(pool) {}
  int num_threads() const override { return pool_->num_threads(); }
  void ParallelFor(int64_t n, absl::FunctionRef<void(int64_t, int)> fn, int64_t grain) override {
    pool_->ParallelFor(n, fn, grain);
  }

 private:
  ThreadPool* pool_;
};

absl::Status CheckOwnSNode(const sparse_runtime::SNodeTree& tree, const SNode& snode) {
  if (&snode != &tree.snode(snode.id())) {
    return absl::InvalidArgumentError("SNode does not belong to this runtime's tree");
  }
  return absl::OkStatus();
}

}  // namespace

ThreadPool* SparseRuntime::pool() {
  std::lock_guard<std::mutex> guard(thread_pool_mu_);
  if (thread_pool_ == nullptr) {
    thread_pool_ = std::make_unique<ThreadPool>(options_.num_threads);
    engine_->InitWorkerCaches(thread_pool_->num_threads());
  }
  return thread_pool_.get();
}

absl::Status SparseRuntime::StructFor(const SNode& snode, Visitor visit) {
  absl::Status status = StructForUnlocked(snode, visit);
  if (!status.ok()) return status;
  return MaybeAutoCollect();
}

absl::Status SparseRuntime::StructForUnlocked(const SNode& snode, Visitor visit) {
  absl::Status status = CheckOwnSNode(tree_, snode);
  if (!status.ok()) return status;
  SharedLock lock(this);
  OpErrors errors(this);
  if (backend_ != nullptr) {
    const SNode& leaf = snode.type() == SNodeType::kPlace ? *snode.parent() : snode;
    return errors.Finish(backend_->StructFor(snode, 0, StructForExtent(leaf), visit),
                         "struct-for over", snode);
  }
  engine_->StructFor(snode, visit);
  return errors.Finish(absl::OkStatus(), "struct-for over", snode);
}

absl::Status SparseRuntime::ParallelStructFor(const SNode& snode, ParallelVisitor visit) {
  absl::Status status = ParallelStructForUnlocked(snode, visit, /*runs=*/nullptr);
  if (!status.ok()) return status;
  return MaybeAutoCollect();
}

absl::Status SparseRuntime::ParallelStructForRuns(const SNode& snode, RunVisitor visit) {
  absl::Status status = ParallelStructForUnlocked(
      snode,
      [&](absl::Span<const int32_t> index, void* cell, int worker) {
        visit(index, cell, 1, 0, worker);
      },
      &visit);
  if (!status.ok()) return status;
  return MaybeAutoCollect();
}

absl::Status SparseRuntime::ParallelStructForUnlocked(const SNode& snode, ParallelVisitor per_cell,
                                                      const RunVisitor* runs) {
  absl::Status status = CheckOwnSNode(tree_, snode);
  if (!status.ok()) return status;
  PoolTasks tasks(pool());
  SharedLock lock(this);
  OpErrors errors(this);
  if (backend_ != nullptr) {
    // The backend's struct-for over ranges of the outermost level's cells.
    const SNode& leaf = snode.type() == SNodeType::kPlace ? *snode.parent() : snode;
    status = engine_->ParallelExtent(
        StructForExtent(leaf), runs != nullptr, tasks, errors.record(),
        [&](int64_t begin, int64_t end, int worker) {
          if (runs != nullptr) {
            return backend_->StructForRuns(
                snode, begin, end,
                [&](absl::Span<const int32_t> index, void* first, int32_t count, uint64_t stride) {
                  (*runs)(index, first, count, stride, worker);
                });
          }
          return backend_->StructFor(
              snode, begin, end,
              [&](absl::Span<const int32_t> index, void* cell) { per_cell(index, cell, worker); });
        });
    return errors.Finish(status, "parallel struct-for over", snode);
  }
  const bool recycled = runs != nullptr
                            ? engine_->ParallelStructForRuns(snode, tasks, errors.record(), *runs)
                            : engine_->ParallelStructFor(snode, tasks, errors.record(), per_cell);
  // Cells the worker caches handed back make the automatic collection run.
  if (recycled) deactivated_since_gc_.store(true, std::memory_order_relaxed);
  return errors.Finish(absl::OkStatus(), "parallel struct-for over", snode);
}

}  // namespace runtime
}  // namespace accelmem

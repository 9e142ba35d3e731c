// File: runtime/sparse_runtime.h
//
// SparseRuntime: the host API over one materialized SNode tree, on the CPU. Ordinary C++ with
// abseil. By default every operation runs the natively compiled runtime; with
// SparseRuntimeOptions::kernel_backend the cell operations (Activate, Deactivate, IsActive, Read,
// Write, Append, Length, (Parallel)StructFor) run through a KernelBackend instead, e.g. the JIT
// kernels of //runtime/cpu:jit_backend, with the same argument checks, locking, error statuses and
// garbage collection (this target does not depend on LLVM; the JIT backend is in runtime/cpu/).
//
//   SNodeTree tree;  ... build ...;  tree.Finalize();
//   auto rt = SparseRuntime::Create(tree).value();
//   rt->Write<float>(*x, {3, 5}, 1.5f);          // activates the path, as a Taichi write does
//   float v = rt->Read<float>(*x, {3, 5}).value();  // inactive cells read 0
//   rt->Deactivate(*ptr, {0, 1});                  // also deactivates everything below
//   rt->CollectGarbage();                          // zero recycled cells, make them reusable
//   rt->StructFor(*x, [](absl::Span<const int32_t> index, void* value) { ... });
//
// Indices: an SNode's index has one coordinate per axis on its path, ascending axis order
// (SNode::index_axes); coordinate a in [0, extent(a)). For dynamic SNodes, Append / Length and
// Deactivate take the *container* index (the parent's index, without the dynamic axis).
//
// Semantics (those of Taichi's runtime, with its known bugs fixed):
//   * Write activates every sparse level of the path; Activate(S) also activates S's ancestors
//     (upstream writes into the shared ambient element instead).
//   * Reads of inactive cells return 0, including deactivated bitmasked cells.
//   * Deactivate(S) first deactivates every active sparse cell below S's cell (upstream leaks the
//     inner cells); for pointer/dynamic the cells are recycled and become reusable,
//     zeroed, after garbage collection (FIFO reuse as upstream), which the runtime runs itself
//     after each deactivating batch (SparseRuntimeOptions::auto_collect) or on CollectGarbage.
//   * Append past a dynamic's declared size is an OutOfRange error; allocator exhaustion is
//     ResourceExhausted; coordinates outside the index space are OutOfRange; a NodeCache kept
//     across a GC without a flush (kErrorStaleCache; the runtime flushes its own) is
//     FailedPrecondition.
//   * StructFor / ParallelStructFor visit every active cell of S (for a place: of its parent)
//     exactly once, for any shape (ceiling splits; upstream skips cells on uneven shapes).
//   * Destroying the runtime returns every byte (all memory comes from one HostMemoryPool).
//
// Errors: every call returns its own status. An error the runtime records while a call runs
// (allocator exhausted, dynamic overflow, ...) goes to that call's own error record (routed per
// thread, see runtime_memory.h), never to a concurrent call; the workers of ParallelStructFor
// route theirs to the struct-for that launched them. Errors recorded by runtime functions that a
// visitor calls directly (not through this API) are the struct-for's.
//
// Thread safety: every method may be called from many threads at once. Operations hold a shared
// lock (a ShardedRwLock: readers do not contend); CollectGarbage and CheckInvariants hold it
// exclusively. Callbacks of (Parallel)StructFor
// may call the runtime (but not CollectGarbage: FailedPrecondition). Conflicting operations on
// the same cell in parallel (deactivating a cell while writing below it) are races, as upstream:
// memory stays safe, values may be lost.
#ifndef ACCELMEM_RUNTIME_SPARSE_RUNTIME_H_
#define ACCELMEM_RUNTIME_SPARSE_RUNTIME_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "gc/gc_collector.h"
#include "runtime/sharded_rw_lock.h"
#include "runtime/thread_pool.h"
#include "sparse_runtime/device/node_cache.h"
#include "sparse_runtime/device/runtime_context.h"
#include "sparse_runtime/device/snode_kind_table.h"
#include "sparse_runtime/host_memory_pool.h"
#include "sparse_runtime/point_op.h"
#include "sparse_runtime/snode_tree.h"

namespace accelmem {
namespace runtime {

class SparseRuntime;
class SparseRuntimeTestPeer;
namespace internal {
class StructForEngine;
struct StructForOptions;
// Room for the meta struct of one SNode of any kind (SparseRuntime::meta() points into one): the
// common StructMeta and a member per row of sparse_runtime/device/snode_kind_table.h, named
// after the kind (`dense`, `pointer`, ...).
union MetaStorage {
  sparse_runtime::StructMeta base;
#define ACCELMEM_META_STORAGE_MEMBER(Kind, kind, Meta, ...) sparse_runtime::Meta kind;
  ACCELMEM_SNODE_KINDS(ACCELMEM_META_STORAGE_MEMBER)
#undef ACCELMEM_META_STORAGE_MEMBER
};
}  // namespace internal

// PointOp (the cell operations of an execution backend) is in sparse_runtime/point_op.h.

// An execution backend for SparseRuntime's cell operations (see the file comment). Called with
// SparseRuntime's shared lock held; must be thread-safe.
class KernelBackend {
 public:
  using Visitor = absl::FunctionRef<void(absl::Span<const int32_t> index, void* cell)>;
  virtual ~KernelBackend() = default;
  virtual absl::StatusOr<int64_t> RunPoint(sparse_runtime::PointOp op,
                                           const sparse_runtime::SNode& snode, const int32_t* coord,
                                           void* value) = 0;
  // Visits, in layout order, the active cells of `snode` (for a place: its values) whose cell of
  // the outermost path level (snode.path()[1]) has index in [begin, end) (the root: 0).
  virtual absl::Status StructFor(const sparse_runtime::SNode& snode, int64_t begin, int64_t end,
                                 Visitor visit) = 0;
  // The same by runs: `count` cells `stride` bytes apart from `first` (the cell at first_index).
  // By default runs of one cell through StructFor.
  using RunVisitor = absl::FunctionRef<void(absl::Span<const int32_t> first_index, void* first,
                                            int32_t count, uint64_t stride)>;
  virtual absl::Status StructForRuns(const sparse_runtime::SNode& snode, int64_t begin, int64_t end,
                                     RunVisitor visit) {
    return StructFor(snode, begin, end, [&](absl::Span<const int32_t> index, void* cell) {
      visit(index, cell, 1, 0);
    });
  }
};
using KernelBackendFactory =
    std::function<absl::StatusOr<std::unique_ptr<KernelBackend>>(SparseRuntime* rt)>;

struct SparseRuntimeOptions {
  // Threads of ParallelStructFor (including the caller); 0 = hardware concurrency.
  int num_threads = 0;
  // NodeManager cells per chunk (a power of two; halved for big cells as upstream).
  int32_t chunk_num_elements = sparse_runtime::NodeManager::kDefaultChunkNumElements;
  int32_t max_num_chunks = sparse_runtime::ListManager::kDefaultMaxNumChunks;
  // Cap on the bytes the runtime maps (0 = unlimited); beyond it operations fail with
  // ResourceExhausted.
  uint64_t memory_limit_bytes = 0;
  // Collect garbage automatically after every operation batch that may deactivate (a Deactivate
  // call, or a (Parallel)StructFor whose visitor deactivated something), and then only for the
  // SNodes that have recycled cells (upstream runs its three GC kernels for every sparse SNode
  // after every such task, #6594). On by default; off: recycled cells wait for CollectGarbage().
  bool auto_collect = true;
  // Workers of the garbage collector's CPU pool (1 = serial on the calling thread). A collection
  // collects every allocator with recycled cells in one pass (gc/device/gc_batch.h: one wake-up
  // of the GC pool and three barriers in all).
  int gc_workers = 1;
  // Runs the cell operations through a backend created for the runtime (e.g.
  // runtime::cpu::JitBackend::Factory()); empty: the native runtime.
  KernelBackendFactory kernel_backend;
};

// Allocator statistics of one SNode (zeros for SNodes without an allocator).
struct SNodeMemoryStats {
  int64_t cells_in_use = 0;
  int64_t cells_free = 0;
  int64_t cells_recycled = 0;
  int64_t cells_reserved = 0;   // ever reserved = in use + free + recycled
  uint64_t bytes_reserved = 0;  // chunks and tables of the allocator's lists
};

class SparseRuntime {
 public:
  using Visitor = absl::FunctionRef<void(absl::Span<const int32_t> index, void* cell)>;
  using ParallelVisitor =
      absl::FunctionRef<void(absl::Span<const int32_t> index, void* cell, int worker)>;
  // A run of `count` consecutive active cells of one container: the index of the first, its
  // value, and the bytes from one cell's value to the next (the cells that follow have the next
  // indices in layout order, last axis fastest).
  using RunVisitor = absl::FunctionRef<void(absl::Span<const int32_t> first_index, void* first,
                                            int32_t count, uint64_t stride_bytes, int worker)>;

  // `tree` must be finalized and must outlive the runtime.
  static absl::StatusOr<std::unique_ptr<SparseRuntime>> Create(
      const sparse_runtime::SNodeTree& tree, const SparseRuntimeOptions& options = {});
  ~SparseRuntime();
  SparseRuntime(const SparseRuntime&) = delete;
  SparseRuntime& operator=(const SparseRuntime&) = delete;

  const sparse_runtime::SNodeTree& tree() const { return tree_; }

  absl::Status Activate(const sparse_runtime::SNode& snode, absl::Span<const int32_t> index);
  absl::Status Deactivate(const sparse_runtime::SNode& snode, absl::Span<const int32_t> index);
  absl::StatusOr<bool> IsActive(const sparse_runtime::SNode& snode,
                                absl::Span<const int32_t> index);

  template <typename T>
  absl::StatusOr<T> Read(const sparse_runtime::SNode& place, absl::Span<const int32_t> index) {
    T value{};
    absl::Status status = ReadRaw(place, sparse_runtime::DataTypeOf<T>(), index, &value);
    if (!status.ok()) return status;
    return value;
  }
  template <typename T>
  absl::Status Write(const sparse_runtime::SNode& place, absl::Span<const int32_t> index, T value) {
    return WriteRaw(place, sparse_runtime::DataTypeOf<T>(), index, &value);
  }
  // Appends `value` to the dynamic list holding `place`; returns its position (the old length).
  template <typename T>
  absl::StatusOr<int32_t> Append(const sparse_runtime::SNode& place,
                                 absl::Span<const int32_t> container_index, T value) {
    return AppendRaw(place, sparse_runtime::DataTypeOf<T>(), container_index, &value);
  }
  absl::StatusOr<int32_t> Length(const sparse_runtime::SNode& dynamic,
                                 absl::Span<const int32_t> container_index);

  absl::Status ReadRaw(const sparse_runtime::SNode& place, sparse_runtime::DataType dtype,
                       absl::Span<const int32_t> index, void* out);
  absl::Status WriteRaw(const sparse_runtime::SNode& place, sparse_runtime::DataType dtype,
                        absl::Span<const int32_t> index, const void* value);
  absl::StatusOr<int32_t> AppendRaw(const sparse_runtime::SNode& place,
                                    sparse_runtime::DataType dtype,
                                    absl::Span<const int32_t> container_index, const void* value);

  // Visits every active cell of `snode` (for a place: the value addresses of its parent's active
  // cells) once, serially in layout order / in parallel on the thread pool.
  // A struct-for of the native runtime reuses the element lists (the active containers) of the
  // previous one over the same leaf while no activation or deactivation changed an SNode they
  // depend on, on any path (runtime/internal/struct_for.h).
  absl::Status StructFor(const sparse_runtime::SNode& snode, Visitor visit);
  absl::Status ParallelStructFor(const sparse_runtime::SNode& snode, ParallelVisitor visit);
  // ParallelStructFor by runs: where the leaf is dense (every cell of an active container is
  // active, at a fixed stride) a task's whole range of a container is one call, so the visitor's
  // loop can run at memory speed; other leaves (and kernel backends) give runs of one cell.
  absl::Status ParallelStructForRuns(const sparse_runtime::SNode& snode, RunVisitor visit);

  // Garbage collection (//gc:gc_collector) of every allocator SNode that has recycled cells:
  // recycled cells are zeroed (in address order) and become free again, reused FIFO.
  absl::Status CollectGarbage();
  // Collections that actually ran (one per SNode allocator that had recycled cells).
  int64_t num_gc_collections();
  // Passes of the collector that collected anything (one per CollectGarbage).
  int64_t num_gc_passes();

  SNodeMemoryStats Stats(const sparse_runtime::SNode& snode);
  // Bytes mapped by the runtime's pool (root, tables, chunks, ambient elements).
  uint64_t bytes_mapped() const { return pool_.bytes_mapped(); }

  // Checks, exclusively: every reserved slot of every NodeManager is exactly one of in use
  // (reachable from the tree), free, or recycled; free cells and ambient elements are all zero.
  absl::Status CheckInvariants();

  // The runtime's worker pool (the threads of ParallelStructFor, created on first use), for
  // host loops over its cells such as runtime/bulk_ops.h.
  ThreadPool& thread_pool() { return *pool(); }

  // The kernel backend, or null for the native runtime.
  KernelBackend* kernel_backend() { return backend_.get(); }

  // Low-level access (benchmarks, codegen): the runtime context and an SNode's meta struct.
  sparse_runtime::RuntimeContext* context() { return &context_; }
  sparse_runtime::Ptr meta(const sparse_runtime::SNode& snode) {
    return reinterpret_cast<sparse_runtime::Ptr>(&metas_[snode.id()]);
  }

 private:
  // Benchmarks and tests create runtimes that emulate upstream through it
  // (runtime/sparse_runtime_test_peer.h), and read the engine's counters.
  friend class SparseRuntimeTestPeer;
  class SharedLock;
  class OpErrors;

  // With one_pass_gc false, one collection per allocator (as upstream runs its GC kernels per
  // SNode, #6594); `struct_for`: the engine's switches.
  static absl::StatusOr<std::unique_ptr<SparseRuntime>> Create(
      const sparse_runtime::SNodeTree& tree, const SparseRuntimeOptions& options, bool one_pass_gc,
      const internal::StructForOptions& struct_for);
  SparseRuntime(const sparse_runtime::SNodeTree& tree, const SparseRuntimeOptions& options);
  absl::Status Init(const internal::StructForOptions& struct_for);
  // The cell of path[upto] (activating sparse levels if `activate`); null when a level is
  // inactive (read) or on error (*status set from the operation's `errors`).
  sparse_runtime::Ptr WalkTo(const sparse_runtime::SNode& snode, const int32_t* cell_index,
                             int upto, bool activate, OpErrors& errors, absl::Status* status);
  // (De)activates cell i (pointer cells through the worker's cache inside a parallel struct-for).
  void ActivateOne(const sparse_runtime::SNode& s, sparse_runtime::Ptr container, int32_t i);
  void DeactivateOne(const sparse_runtime::SNode& s, sparse_runtime::Ptr container, int32_t i);
  void DeactivateSubtree(const sparse_runtime::SNode& s, sparse_runtime::Ptr cell);
  ThreadPool* pool();
  absl::Status DeactivateUnlocked(const sparse_runtime::SNode& snode,
                                  absl::Span<const int32_t> index);
  absl::Status StructForUnlocked(const sparse_runtime::SNode& snode, Visitor visit);
  // The engine's parallel struct-for (by runs when `runs` is given), or the kernel backend's.
  absl::Status ParallelStructForUnlocked(const sparse_runtime::SNode& snode,
                                         ParallelVisitor per_cell, const RunVisitor* runs);
  // Collects every allocator with recycled cells; the caller holds gc_mu_ exclusively.
  absl::Status CollectLocked();
  // With options_.auto_collect: collects if a deactivation happened since the last collection
  // and the caller is not inside a struct-for visitor (the struct-for collects when it ends).
  absl::Status MaybeAutoCollect();
  // Runs `op` on the backend, retrying while an activation met a concurrent deactivation;
  // failures recorded in the operation's `errors` become statuses.
  absl::StatusOr<int64_t> RunBackend(OpErrors& errors, sparse_runtime::PointOp op,
                                     const sparse_runtime::SNode& snode, const int32_t* coord,
                                     void* value);

  const sparse_runtime::SNodeTree& tree_;
  const SparseRuntimeOptions options_;
  bool one_pass_gc_ = true;
  sparse_runtime::HostMemoryPool pool_;
  sparse_runtime::RuntimeContext context_;
  std::vector<internal::MetaStorage> metas_;
  ShardedRwLock gc_mu_;
  // Lists, task regimes and worker caches of the struct-fors (created by Init).
  std::unique_ptr<internal::StructForEngine> engine_;
  std::mutex thread_pool_mu_;
  std::unique_ptr<ThreadPool> thread_pool_;     // created on first use (guarded by thread_pool_mu_)
  std::unique_ptr<gc::GcCollector> collector_;  // guarded by gc_mu_ (exclusive)
  std::atomic<bool> deactivated_since_gc_{false};
  std::unique_ptr<KernelBackend> backend_;
};

// A runtime error code (sparse_runtime/device/runtime_context.h) as a status, for every execution
// path (native, CPU JIT, CUDA): out of chunks or memory -> ResourceExhausted, dynamic overflow
// or index out of range -> OutOfRange, invalid argument -> InvalidArgument, stale cache ->
// FailedPrecondition, anything else -> Internal. The message reads "`what`: `message`"; for
// kRuntimeOk (a failure without a recorded error) it says so.
absl::Status RuntimeErrorStatus(int32_t code, absl::string_view message, absl::string_view what);

}  // namespace runtime
}  // namespace accelmem

#endif  // ACCELMEM_RUNTIME_SPARSE_RUNTIME_H_

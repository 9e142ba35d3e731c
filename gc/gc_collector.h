// File: gc/gc_collector.h
//
// GcCollector: what a runtime calls to collect its NodeManagers, so that deciding *when* to
// collect stays one line in the runtime. It owns one GcScratch per manager and a CpuParallelGc
// pool, and collects a manager only when it has recycled cells (upstream inserts three GC kernels
// for every sparse SNode after every deactivating task, #6594; without recycled cells a
// collection would only compact the free list, which the cursor makes unnecessary). CollectAll
// collects every manager with garbage in one pass (gc/device/gc_batch.h): one wake-up of the pool
// and three barriers for all of them, the managers ordered by cell size.
//
// Intended use (SparseRuntime): after an operation batch that may deactivate (Deactivate, a
// kernel containing deactivations), and on an explicit CollectGarbage, call CollectAll over the
// allocator SNodes' managers (or CollectIfNeeded for the ones the batch touched) while holding
// the runtime exclusively.
//
// All managers passed to one collector must share one RuntimeMemory (the scratch lives in it);
// another memory is refused with FailedPrecondition. Not thread-safe: one call at a time.
#ifndef ACCELMEM_GC_GC_COLLECTOR_H_
#define ACCELMEM_GC_GC_COLLECTOR_H_

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "gc/device/gc_batch.h"
#include "gc/device/gc_scratch.h"
#include "gc/gc_cpu_parallel.h"
#include "sparse_runtime/device/node_manager.h"
#include "sparse_runtime/device/runtime_memory.h"

namespace accelmem {
namespace gc {

struct GcCollectorOptions {
  // Workers of the CPU pool (1 = serial on the caller).
  int num_workers = 1;
  // Collections zeroing fewer bytes run on the caller alone (see CpuParallelGc).
  uint64_t min_parallel_bytes = CpuParallelGc::kDefaultMinParallelBytes;
  // kGcOrderAuto, kGcOrderSorted or kGcOrderRecycle.
  int32_t order = kGcOrderAuto;
};

class GcCollector {
 public:
  explicit GcCollector(const GcCollectorOptions& options = {});

  // True iff collecting `nm` would do useful work: it has recycled cells.
  static bool NeedsCollection(const NodeManager& nm);

  // Collects `nm` if it needs it; returns whether a collection ran.
  absl::StatusOr<bool> CollectIfNeeded(NodeManager* nm);
  // Collects every manager that needs it (null entries are skipped) in one pass; returns how
  // many were collected.
  absl::StatusOr<int> CollectAll(absl::Span<NodeManager* const> managers);

  // Managers collected so far (a pass over three managers counts three).
  int64_t num_collections() const { return num_collections_; }
  // Passes run so far (CollectIfNeeded or CollectAll calls that collected anything).
  int64_t num_passes() const { return num_passes_; }

 private:
  // Checks that `nm` is of this collector's runtime memory.
  absl::Status CheckMemory(const NodeManager* nm);
  // The scratch of `nm` (created zero-initialized on first use).
  GcScratch* ScratchFor(const NodeManager* nm);

  const int32_t order_;
  CpuParallelGc pool_;
  sparse_runtime::RuntimeMemory* memory_ = nullptr;
  std::unordered_map<const NodeManager*, std::unique_ptr<GcScratch>> scratches_;
  std::vector<GcBatchEntry> entries_;  // CollectAll's table, kept to reuse its memory
  int64_t num_collections_ = 0;
  int64_t num_passes_ = 0;
};

}  // namespace gc
}  // namespace accelmem

#endif  // ACCELMEM_GC_GC_COLLECTOR_H_

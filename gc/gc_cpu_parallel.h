// File: gc/gc_cpu_parallel.h
//
// CpuParallelGc: runs the three GC phases of a NodeManager on a pool of CPU threads that plays the
// GPU's grid (each thread is one block of one lane): phase 0 on every worker, a barrier, phase 1
// on worker 0 alone, a barrier, phase 2 on every worker, a final barrier. The calling thread is
// worker 0, so a pool of one worker runs the phases serially without any thread switch.
//
// Synchronization uses std::mutex / std::condition_variable / std::atomic only (TSan sees all of
// it): the barrier spins briefly on an atomic generation counter when there are no more workers
// than hardware threads, then blocks on a condition variable. Small collections (below
// min_parallel_bytes of recycled cells) run serially on the caller.
//
// Host code. One Collect or CollectBatch at a time per object (Collect is not reentrant); the
// NodeManager must be quiescent (no allocate/recycle in flight) during Collect.
#ifndef ACCELMEM_GC_GC_CPU_PARALLEL_H_
#define ACCELMEM_GC_GC_CPU_PARALLEL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gc/device/gc_batch.h"
#include "gc/device/gc_scratch.h"
#include "sparse_runtime/device/node_manager.h"

namespace accelmem {
namespace gc {

class CpuParallelGc {
 public:
  // Collections zeroing fewer bytes than this run on the calling thread alone (waking the pool
  // costs more than it saves; on a busy machine much more).
  static constexpr uint64_t kDefaultMinParallelBytes = uint64_t{4} << 20;

  // `num_workers` in [1, kMaxGcWorkers]; starts num_workers - 1 threads. `min_parallel_bytes`:
  // see above (0: always use every worker).
  explicit CpuParallelGc(int num_workers, uint64_t min_parallel_bytes = kDefaultMinParallelBytes);
  ~CpuParallelGc();
  CpuParallelGc(const CpuParallelGc&) = delete;
  CpuParallelGc& operator=(const CpuParallelGc&) = delete;

  int num_workers() const { return num_workers_; }

  // Collects `nm` (grows `scratch` first). Returns an error status carrying the runtime's message
  // if the collection recorded a runtime error (e.g. an out-of-range recycled index).
  absl::Status Collect(NodeManager* nm, GcScratch* scratch);
  // Collects every manager of `entries` that has recycled cells in one pass (gc/device/
  // gc_batch.h; each entry has its own scratch): the managers at or above min_parallel_bytes on
  // the pool together (one wake-up and three barriers for all of them), the smaller ones as whole
  // collections, spread over the workers by bytes when together they reach min_parallel_bytes,
  // else on the caller. Returns how many managers were collected, or an error status carrying
  // the runtime's message if the collection recorded a runtime error.
  absl::StatusOr<int> CollectBatch(GcBatchEntry* entries, int n);

 private:
  // Reusable barrier for num_workers_ threads.
  class Barrier {
   public:
    Barrier(int count, bool spin) : count_(count), spin_(spin) {}
    void Wait();

   private:
    const int count_;
    const bool spin_;
    std::atomic<int> arrived_{0};
    std::atomic<uint64_t> generation_{0};
    std::mutex mu_;
    std::condition_variable cv_;
  };

  // Runs the phases of the (prepared) table on every worker; with `split`, whole collections by
  // split_owner_ instead.
  void RunParallel(GcBatchEntry* entries, int n, bool split = false);
  // Runs the whole collections of split_entries_ spread over the workers.
  void RunSplit();
  void WorkerLoop(int worker);
  void RunPhases(int worker);

  const int num_workers_;
  const uint64_t min_parallel_bytes_;
  Barrier barrier_;
  std::mutex mu_;
  std::condition_variable job_cv_;
  uint64_t job_generation_ = 0;      // guarded by mu_
  bool stop_ = false;                // guarded by mu_
  GcBatchEntry* entries_ = nullptr;  // the current job, published under mu_
  int num_entries_ = 0;
  bool split_ = false;                          // the job: whole collections by owner, not phases
  std::vector<GcBatchEntry> parallel_entries_;  // CollectBatch: managers over the threshold
  std::vector<GcBatchEntry> split_entries_;     // CollectBatch: the smaller ones
  std::vector<int> split_owner_;                // worker of each split entry
  std::vector<std::thread> threads_;
};

}  // namespace gc
}  // namespace accelmem

#endif  // ACCELMEM_GC_GC_CPU_PARALLEL_H_

// File: gc/device/gc_batch.h
//
// One collection of every allocator with garbage, in one pass: the three phases run once over a
// table of NodeManagers instead of once per NodeManager.
//
// Why: upstream launches its three GC kernels for every sparse SNode after every deactivating
// task (taichi-dev/taichi #6594), so a program with many SNodes pays three launches (or, on the
// CPU pool, a wake-up and three barriers) per SNode, most of them for a few cells. Here every
// worker runs phase 0 of each manager of the table, then one thread (or block) runs each manager's
// phase 1, then every worker runs each manager's phase 2: three grid-wide barriers (kernel
// boundaries on a GPU) for the whole table. The per-manager work is unchanged (each manager keeps
// its own GcScratch: plans, bitmaps and bucket counters are per manager), so the result of a batch
// is exactly that of collecting each manager alone. Managers without recycled cells are skipped, as
// GcCollector does. The host orders the table by cell size, so one pass covers the allocators
// that share a cell size together (the zeroing loop's shape depends on it).
//
// Protocol (the same num_workers everywhere, no allocation or recycling in flight on any manager
// of the table): the rows of ACCELMEM_GC_BATCH_STEPS in order, a barrier after each:
// gc_batch_prepare (one thread), gc_batch_phase0 (every worker), gc_batch_phase1 (one thread or
// block), gc_batch_phase2 (every worker). The managers may belong to different RuntimeMemory
// objects; each scratch grows from its manager's memory.
//
// Freestanding C++17 (see sparse_runtime/device/arch.h).
#ifndef ACCELMEM_GC_DEVICE_GC_BATCH_H_
#define ACCELMEM_GC_DEVICE_GC_BATCH_H_

#include "gc/device/gc_scratch.h"
#include "sparse_runtime/device/node_manager.h"

namespace accelmem {
namespace gc {

// Who runs a step of the collection (the launch shape of a step on a GPU).
enum GcRunner : i32 {
  kGcOneThread = 0,    // one thread (one-thread launch)
  kGcEveryThread = 1,  // every worker, one thread each (a grid of blocks of threads)
  kGcOneBlock = 2,     // one thread, or the lanes of one block
  kGcEveryBlock = 3,   // every worker, one block each, its threads the lanes
};

// True iff every worker runs a step of `runner` (else one thread, or one block, runs it).
ACCELMEM_RT_INLINE bool gc_runner_is_every_worker(GcRunner runner) {
  return runner == kGcEveryThread || runner == kGcEveryBlock;
}

// The phases of one collection after gc_batch_prepare, in launch order, each followed by a
// barrier: X(phase, runner, arg) for gc_batch_<phase>, a GcBatchPhaseFn (runner: a GcRunner);
// `arg` is passed through, so that other lists can be built from this one. The one statement of
// the phase order: the CPU pool (gc/gc_cpu_parallel.cc) runs these rows, the CUDA GC declares,
// names and launches its kernels from ACCELMEM_GC_BATCH_STEPS (runtime/cuda/device/
// cuda_entry_points.h, runtime/cuda/gc_cuda.cc).
#define ACCELMEM_GC_BATCH_PHASES(X, arg) \
  X(phase0, kGcEveryThread, arg)         \
  X(phase1, kGcOneBlock, arg)            \
  X(phase2, kGcEveryBlock, arg)
// Every step of a collection in launch order: the one-thread prepare, then the phases.
#define ACCELMEM_GC_BATCH_STEPS(X, arg) \
  X(prepare, kGcOneThread, arg) ACCELMEM_GC_BATCH_PHASES(X, arg)

// One manager of a batch. `active` is written by gc_batch_prepare and read by the phases.
struct GcBatchEntry {
  NodeManager* nm;
  GcScratch* scratch;  // this manager's own, zero-initialized once (see gc_scratch.h)
  i32 active;          // 1: it has recycled cells and is collected by this batch
  i32 reserved;        // padding (keeps the layout the same on every target)
};

// True iff collecting `nm` does useful work: it has recycled cells.
ACCELMEM_RT_INLINE bool gc_needs_collection(const NodeManager* nm) {
  return nm->recycled_list.valid_size() > 0;
}

// One thread: marks the entries to collect and grows their scratch for `num_workers` workers.
// Returns how many entries are active. A scratch that could not grow (recorded in its runtime
// memory) still collects, in recycling order.
i32 gc_batch_prepare(GcBatchEntry* entries, i32 n, i32 num_workers);
// The phases: for worker `worker` of `num_workers`, lane `lane` of `lanes` (the signature every
// row of ACCELMEM_GC_BATCH_PHASES shares; a phase ignores what its runner does not have).
using GcBatchPhaseFn = void (*)(GcBatchEntry* entries, i32 n, i32 worker, i32 num_workers, i32 lane,
                                i32 lanes);
// Phase 0 of every active entry, for worker `worker` of `num_workers` (one thread a worker: no
// lanes).
void gc_batch_phase0(GcBatchEntry* entries, i32 n, i32 worker, i32 num_workers, i32 lane = 0,
                     i32 lanes = 1);
// Phase 1 of every active entry: one thread, or every lane of one block (lane `lane` of
// `lanes`, gc_phase1_swap_lists_block); `worker` is unused (one worker runs it).
void gc_batch_phase1(GcBatchEntry* entries, i32 n, i32 worker, i32 num_workers, i32 lane = 0,
                     i32 lanes = 1);
// Phase 2 of every active entry, for worker `worker` (lane `lane` of `lanes`). A worker moves to
// the next manager as soon as it finds no more work in one (no barrier between managers).
void gc_batch_phase2(GcBatchEntry* entries, i32 n, i32 worker, i32 num_workers, i32 lane = 0,
                     i32 lanes = 1);
// The whole batch on the calling thread (one worker: each manager's phases back to back, the same
// result). Returns the number of entries collected.
i32 gc_batch_serial(GcBatchEntry* entries, i32 n);

}  // namespace gc
}  // namespace accelmem

#endif  // ACCELMEM_GC_DEVICE_GC_BATCH_H_

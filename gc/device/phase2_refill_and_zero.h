// File: gc/device/phase2_refill_and_zero.h
//
// GC phase 2 (upstream gc_parallel_2, "zero_fill"): every worker
// (a GPU block, or a CPU pool worker with one lane) takes recycled cells, lane 0 writes each index
// to the free-list slot phase 1 reserved for it, and the worker's lanes zero the cell memory
// together. Exactly element_size bytes per cell are zeroed (#427), nothing else is written.
//
// Sorted plan: workers claim bitmap buckets (an atomic counter with one lane per worker; with
// several lanes, bucket b belongs to worker b mod num_workers so the lanes agree without
// communicating), scan their words in address order, zero each run of adjacent recycled cells
// inside one data chunk with one memset, write the run's indices to the bucket's free-list range
// and clear the scanned bitmap words (restoring the all-zero invariant). With several lanes the
// lanes instead zero different cells side by side, a few lanes a cell (see sorted_bucket_lanes),
// and each cell's first lane writes its index; the free list comes out the same.
// Recycling plan: worker w takes the w-th contiguous slice of the backed-up recycled list, in
// recycling order; indices that continue a run (ascending or descending, same chunk) extend it.
//
// Zeroing (one lane): small cells (<= 64 B, a multiple of 8) and streamed cells of whole cache
// lines are zeroed one by one straight from the bitmap bits, in the same pass that writes their
// indices (no runs: they buy nothing there). Otherwise runs of at most 128 bytes take a few inline
// 16-byte stores, longer ones one memset. Non-temporal stores (x86-64) replace them once the
// collection zeroes at least gc_streaming_threshold() bytes: half the CPU's L2 for cells of 64 B
// or more (whole-line writes skip the read-for-ownership of every line not in L1/L2, so they
// write faster than ordinary stores once the cells are unlikely to be in L2), 16 MiB for smaller
// cells (more than the caches hold); scratch->streaming_zero_bytes overrides both. Whole cache
// lines are streamed, in the widest stores the CPU has (gc_streaming_store_bytes), partial ones
// stored; an sfence ends the phase. The zeroed cells then are not in the caches.
//
// Several lanes (lanes > 1) are a GPU block: on the CPU, arch.h's block_barrier is a no-op, so
// native callers pass lane 0 of 1.
//
// Freestanding C++17 (see sparse_runtime/device/arch.h).
#ifndef ACCELMEM_GC_DEVICE_PHASE2_REFILL_AND_ZERO_H_
#define ACCELMEM_GC_DEVICE_PHASE2_REFILL_AND_ZERO_H_

#include "gc/device/gc_scratch.h"
#include "sparse_runtime/device/node_manager.h"

namespace accelmem {
namespace gc {

// Zeroes [p, p + n) together with the other lanes of a block, as upstream's zero-fill: lane 0
// zeroes the unaligned head up to the first 4-byte boundary, every lane then zeroes the 4-byte
// words lane, lane + lanes, ..., and lane 0 zeroes the tail bytes after the last whole word. The
// union over lanes 0..lanes-1 is exactly [p, p + n); no byte outside is written. With lanes == 1
// it is one memset.
void gc_zero_cooperative(Ptr p, u64 n, i32 lane, i32 lanes);

// The L2 cache size of the CPU this runs on, from CPUID (x86-64 native builds; read once), or 0
// where it is unknown (other targets, the JIT-linked bitcode).
u64 gc_cpu_l2_bytes();
// The width in bytes of the non-temporal stores phase 2 streams whole lines with. By default
// (scratch->streaming_store_bytes == 0) the widest the CPU supports, but 64 (AVX-512F) only on
// AMD family 1Ah (Zen 5) and later, where it was measured faster: else 32 (AVX) or 16. Set, the
// field asks for 16, 32 or 64 (rounded down to one of these), capped at what the CPU supports.
// Always 16 in the JIT-linked bitcode.
u32 gc_streaming_store_bytes(const GcScratch* scratch);
// Whether phase 2 zeroes nm's next collection (as planned in scratch) with non-temporal stores.
bool gc_phase2_streams(const NodeManager* nm, const GcScratch* scratch);

// Phase 2 for worker `worker` in [0, num_workers), lane `lane` in [0, lanes).
void gc_phase2_refill_and_zero(NodeManager* nm, GcScratch* scratch, i32 worker, i32 num_workers,
                               i32 lane = 0, i32 lanes = 1);

}  // namespace gc
}  // namespace accelmem

#endif  // ACCELMEM_GC_DEVICE_PHASE2_REFILL_AND_ZERO_H_

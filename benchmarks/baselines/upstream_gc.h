// File: benchmarks/baselines/upstream_gc.h
//
// The three-phase parallel garbage collection of Taichi's LLVM runtime
// (https://github.com/taichi-dev/taichi/blob/master/taichi/runtime/llvm/runtime_module/runtime.cpp,
// gc_parallel_0/1/2, launched one after another as GPU kernels), re-implemented for benchmarks
// and tests over UpstreamNodeManager. Each phase is written for one thread of a grid
// (block_idx, thread_idx of grid_dim blocks of block_dim threads), as upstream; UpstreamGcParallel
// runs every thread of every phase in turn on the calling thread, which gives the same final
// state as a parallel launch (the threads of a phase write disjoint data, except the free-list
// appends, whose order differs only across blocks).
//
//   phase 0: move the free list's unused entries to its head. If more than half are used
//            (2 * used > size), the tail [used, size) is copied to [0, size - used) (no overlap);
//            otherwise only the last `used` entries move to [0, used), the rest stay in place.
//   phase 1: one thread: free_list.resize(max(size - used, 0)), used = 0,
//            recycle_list_size_backup = recycled_list.size(), recycled_list.clear().
//   phase 2: block b takes recycled entries b, b + grid_dim, ...: thread 0 pushes the index on
//            the free list; the threads zero the cell in 4-byte words, thread t starting at word
//            t with a stride of block_dim words (bytes before the first 4-byte boundary and after
//            the last whole word are zeroed one by one).
//
// The serial GC that upstream's CPU backend runs is UpstreamNodeManager::gc_serial.
#ifndef ACCELMEM_BENCHMARKS_BASELINES_UPSTREAM_GC_H_
#define ACCELMEM_BENCHMARKS_BASELINES_UPSTREAM_GC_H_

#include <cstdint>

#include "benchmarks/baselines/upstream_node_manager.h"

namespace accelmem {
namespace baselines {

// Thread `linear_thread_idx` of `num_threads` (= grid_dim * block_dim).
void UpstreamGcPhase0(UpstreamNodeManager* nm, int32_t linear_thread_idx, int32_t num_threads);
void UpstreamGcPhase1(UpstreamNodeManager* nm);
void UpstreamGcPhase2(UpstreamNodeManager* nm, int32_t block_idx, int32_t thread_idx,
                      int32_t grid_dim, int32_t block_dim);

// All three phases, every thread of a grid_dim x block_dim launch in turn.
void UpstreamGcParallel(UpstreamNodeManager* nm, int32_t grid_dim, int32_t block_dim);

}  // namespace baselines
}  // namespace accelmem

#endif  // ACCELMEM_BENCHMARKS_BASELINES_UPSTREAM_GC_H_

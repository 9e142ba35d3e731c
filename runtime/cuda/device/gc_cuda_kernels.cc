// GPU entry points of the CUDA garbage collector (//runtime/cuda:gc_cuda), declared in
// cuda_entry_points.h, compiled only to nvptx64 bitcode (//runtime/cuda:gc_cuda_kernels_bc) and
// linked with the runtime's nvptx64 module (runtime_cuda.bc) by //runtime/cuda:ptx_codegen.
// Freestanding C++17 (sparse_runtime/device/arch.h), extern "C" names so the host driver finds
// them without demangling.
//
// The GC kernels are upstream's three-kernel collection (codegen_cuda.cpp) after a one-thread
// prepare, one kernel per step of gc_batch.h's ACCELMEM_GC_BATCH_STEPS: phase 0 and 2 on a grid of
// blocks, phase 1 on one block (upstream: one thread); the kernel boundaries are the grid-wide
// barriers. They collect a table of managers in one pass; the host collects one manager as a table
// of one, so there is one set of kernels (and one of PTX budgets) to keep. The accelmem_cuda_nm_*
// kernels build and inspect a NodeManager that lives in device memory (its
// RuntimeMemory draws from one preallocated, zero-filled device pool), so that the collector can be
// tested and measured on its own, without the rest of the runtime.
#include "gc/device/gc_batch.h"
#include "gc/device/gc_scratch.h"
#include "runtime/cuda/device/cuda_entry_points.h"
#include "sparse_runtime/device/node_manager.h"
#include "sparse_runtime/device/runtime_memory.h"

using accelmem::gc::GcBatchEntry;
using accelmem::gc::GcScratch;
using accelmem::sparse_runtime::atomic_add;
using accelmem::sparse_runtime::block_dim;
using accelmem::sparse_runtime::block_idx;
using accelmem::sparse_runtime::grid_dim;
using accelmem::sparse_runtime::i32;
using accelmem::sparse_runtime::i64;
using accelmem::sparse_runtime::NodeManager;
using accelmem::sparse_runtime::Ptr;
using accelmem::sparse_runtime::RuntimeMemory;
using accelmem::sparse_runtime::thread_idx;
using accelmem::sparse_runtime::u32;
using accelmem::sparse_runtime::u64;
using accelmem::sparse_runtime::u8;

namespace {

inline __attribute__((always_inline)) i64 global_thread() {
  return static_cast<i64>(block_idx()) * block_dim() + thread_idx();
}
inline __attribute__((always_inline)) i64 grid_threads() {
  return static_cast<i64>(grid_dim()) * block_dim();
}

}  // namespace

extern "C" {

// Host and device must agree on the layout of the structs they share: out[0..4) = sizeof
// RuntimeMemory, NodeManager, GcScratch, GcBatchEntry as compiled for the device (one thread).
void accelmem_cuda_layout(i64* out) {
  out[0] = sizeof(RuntimeMemory);
  out[1] = sizeof(NodeManager);
  out[2] = sizeof(GcScratch);
  out[3] = sizeof(GcBatchEntry);
}

// One thread: `memory` takes the zero-filled pool [pool, pool + pool_size) and `nm` (zeroed) is
// initialized for cells of `node_size` bytes. *ok = 1 on success, else 0 (error in `memory`).
void accelmem_cuda_nm_init(RuntimeMemory* memory, Ptr pool, u64 pool_size, NodeManager* nm,
                           u64 node_size, i32 chunk_num_elements, i32* ok) {
  accelmem::sparse_runtime::runtime_memory_init_preallocated(memory, pool, pool_size);
  *ok = nm->init(memory, node_size, 8, chunk_num_elements) ? 1 : 0;
}

// Thread t < n: out[t] = an allocated cell's index (-1 on error).
void accelmem_cuda_nm_allocate(NodeManager* nm, i32* out, i32 n) {
  for (i64 t = global_thread(); t < n; t += grid_threads()) out[t] = nm->allocate_index();
}

// Thread t < n recycles indices[t].
void accelmem_cuda_nm_recycle(NodeManager* nm, const i32* indices, i32 n) {
  for (i64 t = global_thread(); t < n; t += grid_threads()) nm->recycle_index(indices[t]);
}

// Fills the cells indices[0..n) with the byte `value` (one block a cell, the lanes stride over it).
void accelmem_cuda_nm_fill(NodeManager* nm, const i32* indices, i32 n, u32 value) {
  const u64 size = nm->element_size;
  for (i64 c = block_idx(); c < n; c += grid_dim()) {
    u8* cell = nm->get_cell(indices[c]);
    for (u64 b = thread_idx(); b < size; b += block_dim()) cell[b] = static_cast<u8>(value);
  }
}

// out[0..5) = num_reserved, num_free, num_recycled, num_in_use, error code (one thread).
void accelmem_cuda_nm_stats(const NodeManager* nm, i32* out) {
  out[0] = nm->num_reserved();
  out[1] = nm->num_free();
  out[2] = nm->num_recycled();
  out[3] = nm->num_in_use();
  out[4] = accelmem::sparse_runtime::runtime_error_code(nm->memory);
}

// Copies the free list's unused entries [free_list_used, size) to out (at most capacity of them).
void accelmem_cuda_nm_free_indices(const NodeManager* nm, i32* out, i32 capacity) {
  const i32 used = nm->free_list_used;
  const i32 size = nm->free_list.size();
  for (i64 t = global_thread(); used + t < size && t < capacity; t += grid_threads()) {
    out[t] = nm->free_list.get<i32>(static_cast<i32>(used + t));
  }
}

// Counts the non-zero bytes of the cells indices[0..n) into *count (atomically).
void accelmem_cuda_nm_count_nonzero(const NodeManager* nm, const i32* indices, i32 n, u64* count) {
  const u64 size = nm->element_size;
  for (i64 c = block_idx(); c < n; c += grid_dim()) {
    const u8* cell = nm->get_cell(indices[c]);
    u64 nonzero = 0;
    for (u64 b = thread_idx(); b < size; b += block_dim()) nonzero += cell[b] != 0;
    if (nonzero != 0) atomic_add(count, nonzero);
  }
}

// ---- The collection of a table of managers (gc/device/gc_batch.h), in launch order: the same
// four launches for every allocator with garbage, instead of four per allocator
// (taichi-dev/taichi #6594). num_workers is the phase-0 worker count (<= the grid's threads and
// <= kMaxGcWorkers), the same for every step. ----

// One thread: marks the entries with recycled cells and grows their scratch.
void accelmem_cuda_gc_batch_prepare(GcBatchEntry* entries, i32 n, i32 num_workers) {
  accelmem::gc::gc_batch_prepare(entries, n, num_workers);
}

// Grid of blocks: global thread t < num_workers is phase-0 worker t of every active entry.
void accelmem_cuda_gc_batch_phase0(GcBatchEntry* entries, i32 n, i32 num_workers) {
  const i64 t = global_thread();
  if (t < num_workers) accelmem::gc::gc_batch_phase0(entries, n, static_cast<i32>(t), num_workers);
}

// One block (any size; the host launches CudaGc::phase1_block_dim() threads): phase 1 of every
// active entry, the bitmap counted by every thread of the block.
void accelmem_cuda_gc_batch_phase1(GcBatchEntry* entries, i32 n, i32 num_workers) {
  accelmem::gc::gc_batch_phase1(entries, n, 0, num_workers, thread_idx(), block_dim());
}

// Grid of blocks: block b is phase-2 worker b of grid_dim of every active entry, its threads the
// lanes (phase 2's workers are the blocks, not the num_workers of phase 0).
void accelmem_cuda_gc_batch_phase2(GcBatchEntry* entries, i32 n, i32 /*num_workers*/) {
  accelmem::gc::gc_batch_phase2(entries, n, block_idx(), grid_dim(), thread_idx(), block_dim());
}

}  // extern "C"

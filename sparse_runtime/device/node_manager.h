// File: sparse_runtime/device/node_manager.h
//
// NodeManager: the per-SNode cell allocator of the sparse runtime (upstream runtime.cpp
// NodeManager). Cells live in `data_list`; reusable cells are named
// by i32 indices on `free_list`; deactivated cells go to `recycled_list` and become reusable only
// after a garbage collection zero-fills them and moves them to the free list. Every cell handed out
// is all-zero (fresh pool memory or GC-zeroed).
//
//   allocate():  old = atomic_add(free_list_used, 1)   (skipped once free_list_used >= size)
//                index = old < free_list.size() ? free_list[old] : data_list.reserve_new_element()
//   recycle(p):  recycled_list.push_back(locate(p))            -- O(1), see ListManager::ptr2index
//                (data_list is one contiguous reservation where the memory can reserve address
//                space, the CPU host pool: locate is a subtract, a multiply and a compare)
//   gc_serial(): compact the unused tail [free_list_used, size) of the free list to its head,
//                reset the cursor, zero every recycled cell and append its index (FIFO reuse),
//                clear the recycled list.
//
// The GC phases (gc/) operate directly on the fields below; docs/sparse_runtime.md documents
// the state machine they must preserve. Fields are public on purpose (upstream exports them too).
//
// Sizing (as upstream, with the alignment fix): element_size = round_up(max(node_size, 8),
// alignment) with alignment = max(8, requested); chunk_num_elements (default 16384, the value the
// upstream runtime passes) is a power of two, halved while a data chunk would exceed 128 MiB.
// Metadata is at most 8 bytes per cell (a 4-byte free-list entry and a 4-byte recycled-list entry)
// plus the per-chunk tables (and the data list's granule table in the chunked fallback layout).
//
// Thread safety: allocate, recycle, locate and the batch calls may run concurrently with each
// other. gc_serial needs exclusive access (no allocate/recycle in flight). allocate()/recycle()
// cost one shared atomic each, which contends when several workers allocate at once: busy workers
// should go through a per-worker NodeCache (node_cache.h), which uses the batch calls.
//
// Freestanding C++17 (see arch.h). Zero-initialize, then call init().
#ifndef ACCELMEM_SPARSE_RUNTIME_DEVICE_NODE_MANAGER_H_
#define ACCELMEM_SPARSE_RUNTIME_DEVICE_NODE_MANAGER_H_

#include "sparse_runtime/device/arch.h"
#include "sparse_runtime/device/list_manager.h"
#include "sparse_runtime/device/runtime_memory.h"

namespace accelmem {
namespace sparse_runtime {

struct alignas(64) NodeManager {
  static constexpr i32 kDefaultChunkNumElements = 16 * 1024;
  static constexpr i32 kUpstreamDefaultChunkNumElements = 128 * 1024;  // when -1 is passed
  static constexpr u64 kMaxChunkBytes = u64{128} << 20;
  // Index lists (free/recycled) use at least this many entries per chunk.
  static constexpr i32 kMinIndexListChunk = 4096;
  // Cells per shared atomic in allocate_cells / recycle_cells (their index buffer on the stack,
  // 2 KiB) and per NodeCache refill / flush (see NodeCache::kBatch).
  static constexpr i32 kCellBlock = 512;

  using list_data_type = i32;

  // The stride (element_size) init gives cells of node_size bytes at `alignment`: at least 8
  // bytes, rounded up to the alignment, itself at least 8. Generated kernels rely on it.
  static ACCELMEM_RT_INLINE constexpr u64 cell_stride(u64 node_size, u64 alignment) {
    return round_up_u64(max_of<u64>(node_size, 8), max_of<u64>(8, alignment));
  }

  RuntimeMemory* memory;
  u64 node_size;     // requested cell size
  u64 element_size;  // cell stride: round_up(max(node_size, 8), alignment)
  u64 alignment;     // max(8, requested alignment)
  i32 chunk_num_elements;
  // GC phase 1 stores recycled_list.size() here before lazily clearing the recycled list, so that
  // phase 2 still knows how many entries to process.
  i32 recycle_list_size_backup;
  // Collections since init, wrapping (gc_serial and GC phase 1 count them; every GC must). A
  // NodeCache records it with each free-list reservation: a GC moves the free list's entries, so
  // slots reserved before it name other cells after it (NodeCache reports and drops such a
  // reservation). Only compared for equality: unsigned, so that wrapping is defined.
  u32 gc_epoch;
  // Cursor into free_list: entries [0, free_list_used) have been handed out since the last GC.
  // Racing allocations can bump it past free_list.size() (they then fall through to fresh
  // cells), so it may exceed the size until the next GC. Between GCs it never goes back below
  // a value it has reached: a batch call that gets no cell with every slot past the end gives
  // its slots back (the cursor stays at or past the end), nothing else lowers it.
  alignas(64) i32 free_list_used;
  ListManager free_list;      // i32 indices of zeroed, reusable cells
  ListManager recycled_list;  // i32 indices of cells recycled since the last GC (not zeroed)
  ListManager data_list;      // the cells; size() = cells ever reserved (never decreases)

  // node_size > 0; alignment a power of two (0 means 8); chunk_num_elements a power of two or -1
  // (upstream's 128K default). max_num_chunks bounds each list's chunk table. Returns false and
  // records an error on bad parameters or when out of memory.
  bool init(RuntimeMemory* memory, u64 node_size, u64 alignment = 8,
            i32 chunk_num_elements = kDefaultChunkNumElements,
            i32 max_num_chunks = ListManager::kDefaultMaxNumChunks);

  // A zeroed cell, or null after recording an error (out of chunks / memory).
  ACCELMEM_RT_INLINE Ptr allocate() {
    const i32 index = allocate_index();
    return index < 0 ? nullptr : data_list.get_element_ptr(index);
  }
  // The index of a zeroed cell, or -1 (error recorded). In the header: a call per cell was a
  // quarter of the time of an allocation after a GC (8.3 ns against upstream's header-inline
  // 6.6 ns, node_manager_bench BM_AllocateAfterGc). The cursor atomic is skipped once the free
  // list is visibly exhausted (until the next GC the cursor never goes back below the end once
  // there, so the atomic could only fall through too): fresh cells cost one atomic.
  ACCELMEM_RT_INLINE i32 allocate_index() {
    // The free list's size changes only in a GC, which runs alone: one load serves both tests.
    // Relaxed cursor and entry: the cursor only hands out slot numbers (it publishes nothing),
    // and the entries, the free list's chunks and the zeroed cells they name were written by the
    // last GC, which every allocation is ordered after by other means (a kernel boundary on a
    // GPU; on the CPU the GC's exclusive access). On CUDA a fenced add waited for the lane's
    // earlier accesses twice per cell; a warp's lanes take their slots with one add.
    const i32 free_size = free_list.size();
    if (atomic_load_relaxed(&free_list_used) < free_size) {
      const i32 old = warp_aggregated_add_relaxed(&free_list_used, 1);  // one add per warp
      if (old < free_size) {
        return *reinterpret_cast<const list_data_type*>(free_list.get_element_ptr_relaxed(old));
      }
    }
    return allocate_fresh_index();
  }
  // A never used cell from the data list (out of line: the rarer path).
  i32 allocate_fresh_index();
  // Fills out[0..n) with the indices of n zeroed cells using one atomic on the cursor and at most
  // one on the data list. Returns false (error recorded) if the data list runs out; then the
  // entries from the failure on are -1 (and, when all n slots lay past the free list's end, the
  // cursor is moved back by n: repeated failures cannot overflow it).
  bool allocate_indices(i32* out, i32 n);
  // The part of allocate_indices after its atomic: `old` is the cursor value the caller's atomic
  // add of `advanced` (>= n) to free_list_used returned (slots [old, old + n) are the caller's).
  // A failure that handed out no cell moves the cursor back by `advanced`.
  bool take_indices(i32 old, i32 advanced, i32* out, i32 n);

  // allocate_indices + the cells' addresses: out[0..n) = n zeroed cells (one atomic per 512).
  // Returns false (error recorded) if the data list runs out; then the entries from the failure
  // on are null.
  bool allocate_cells(Ptr* out, i32 n);

  // Puts the cell at `p` on the recycled list. An unknown pointer records kErrorPtrNotFound and is
  // ignored (upstream pushes -1 and later corrupts memory).
  void recycle(Ptr p);
  void recycle_index(i32 index);
  // Appends n indices to the recycled list with one atomic.
  void recycle_indices(const i32* indices, i32 n);
  // recycle() of cells[0..n), located in one tight loop (ListManager::ptrs2indices) and appended
  // with one atomic per 512. Unknown pointers are skipped and reported once (kErrorPtrNotFound);
  // returns how many there were.
  i32 recycle_cells(const Ptr* cells, i32 n);

  // Index of the cell at `p`, or -1 (error recorded).
  ACCELMEM_RT_INLINE i32 locate(const void* p) const { return data_list.ptr2index(p); }
  ACCELMEM_RT_INLINE Ptr get_cell(i32 index) const { return data_list.get_element_ptr(index); }

  // The CPU serial GC (upstream gc_serial, equivalent in effect): see the file comment.
  // Contiguous runs of recycled cells within a chunk are zeroed with one memset.
  void gc_serial();

  // Bookkeeping queries (exact only when quiescent).
  // Cells ever reserved (data_list.size(), clamped to the list capacity).
  i32 num_reserved() const;
  // Zeroed cells on the free list not handed out yet.
  i32 num_free() const;
  // Recycled cells a GC will collect (the recycled list's valid prefix: see
  // ListManager::valid_size).
  ACCELMEM_RT_INLINE i32 num_recycled() const { return recycled_list.valid_size(); }
  // num_reserved() - num_free() - num_recycled().
  i32 num_in_use() const;
  // Bytes of chunks held by the three lists and their tables.
  u64 bytes_reserved() const;
};

}  // namespace sparse_runtime
}  // namespace accelmem

#endif  // ACCELMEM_SPARSE_RUNTIME_DEVICE_NODE_MANAGER_H_

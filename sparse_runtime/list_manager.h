// File: sparse_runtime/list_manager.h
//
// ListManager: an unbounded array of fixed-size elements stored in lazily allocated chunks of a
// power-of-two number of elements (upstream runtime.cpp ListManager, taichi-sparse-runtime.md
// §3.1). Index -> address is O(1): chunks[i >> log2] + element_size * (i & mask). Chunks are
// allocated on first touch under double-checked locking and published with an atomic release store;
// element reservation is one atomic add. `clear()` is lazy (chunks and contents are kept).
//
// Differences from upstream (all deliberate):
//   * The chunk table is allocated from the runtime memory at init with `max_num_chunks` entries
//     (default 131072, as upstream), instead of a 1 MiB array inside the object.
//   * Running out of chunks (or memory) records an error in RuntimeMemory and returns -1 / null
//     instead of asserting and carrying on.
//   * ptr2index is O(1) (upstream scans every chunk): each chunk is aligned to G, the smallest
//   power
//     of two >= its byte size, so `p >> log2(G)` names exactly one chunk; a small open-addressing
//     table (enabled per list with `enable_ptr2index`) maps that granule number to the chunk index;
//     the chunk starts at its granule, so the offset is p mod G (no load of the chunk table), and
//     it is divided by element_size with an exact-division reciprocal.
//     Unknown or interior pointers are reported as kErrorPtrNotFound and give -1.
//
// Thread safety: reserve_new_element(s), touch_chunk, get_element_ptr, ptr2index and append may
// run concurrently. clear/resize are bookkeeping calls for quiescent phases (GC).
//
// Freestanding C++17 (see arch.h). Zero-initialize, then call init().
#ifndef ACCELMEM_SPARSE_RUNTIME_LIST_MANAGER_H_
#define ACCELMEM_SPARSE_RUNTIME_LIST_MANAGER_H_

#include "sparse_runtime/arch.h"
#include "sparse_runtime/runtime_memory.h"

namespace accelmem {
namespace sparse_runtime {

struct alignas(64) ListManager {
  static constexpr i32 kDefaultMaxNumChunks = 128 * 1024;
  // Chunk count limit imposed by the granule table's packing (index + 1 in 20 bits).
  static constexpr i32 kMaxMaxNumChunks = (1 << 20) - 1;

  // --- read-mostly configuration (set by init) ---
  RuntimeMemory* memory;
  Ptr* chunks;         // [max_num_chunks]; null = not allocated yet
  u64* granule_table;  // [granule_table_mask + 1] or null (ptr2index disabled)
  u64 granule_table_mask;
  u64 element_size;
  u64 element_size_odd_inverse;  // inverse of (element_size >> element_size_shift) mod 2^64
  i32 element_size_shift;        // trailing zero bits of element_size
  i32 log2_chunk_num_elements;
  i32 max_num_elements_per_chunk;
  i32 max_num_chunks;
  i32 log2_chunk_alignment;  // log2(G)
  i32 lock;                  // guards chunk allocation
  // --- hot, written concurrently ---
  alignas(64) i32 num_elements;
  i32 num_active_chunks;

  // Returns false (and records kErrorInvalidArgument / kErrorOutOfMemory) on bad parameters:
  // element_size == 0, num_elements_per_chunk not a power of two, or max_num_chunks out of
  // [1, kMaxMaxNumChunks].
  bool init(RuntimeMemory* memory, u64 element_size, i32 num_elements_per_chunk,
            i32 max_num_chunks = kDefaultMaxNumChunks, bool enable_ptr2index = false);

  // Atomically reserves one element (allocating its chunk if needed); returns its index, or -1
  // after recording kErrorOutOfChunks / kErrorOutOfMemory.
  ACCELMEM_RT_INLINE i32 reserve_new_element() {
    i32 i = atomic_add(&num_elements, 1);
    if (i >= 0 && touch_chunk(i >> log2_chunk_num_elements)) return i;
    return reserve_failed(i);
  }
  // Reserves `n` consecutive elements; returns the first index or -1 (see above).
  i32 reserve_new_elements(i32 n);
  // Ensures chunk `c` exists. False on error (recorded).
  ACCELMEM_RT_INLINE bool touch_chunk(i32 c) {
    if (c >= 0 && c < max_num_chunks && atomic_load_acquire(&chunks[c]) != nullptr) return true;
    return touch_chunk_slow(c);
  }
  bool touch_chunk_slow(i32 c);
  i32 reserve_failed(i32 i);

  ACCELMEM_RT_INLINE Ptr get_element_ptr(i32 i) const {
    Ptr chunk = atomic_load_acquire(&chunks[i >> log2_chunk_num_elements]);
    return chunk + element_size * static_cast<u64>(i & (max_num_elements_per_chunk - 1));
  }
  template <typename T>
  ACCELMEM_RT_INLINE T& get(i32 i) const {
    return *reinterpret_cast<T*>(get_element_ptr(i));
  }
  // Copies elements [first, first + n) to/from `buffer` (element_size bytes each), one memcpy per
  // chunk touched. The range must be reserved (chunks exist).
  void read_range(i32 first, i32 n, void* buffer) const;
  void write_range(i32 first, i32 n, const void* buffer);

  // touch_chunk + get_element_ptr; null on error.
  Ptr touch_and_get(i32 i);

  // reserve_new_element + get_element_ptr; null on error.
  Ptr allocate();
  // Appends a copy of element_size bytes from `data`; returns the index or -1.
  i32 append(const void* data);
  template <typename T>
  ACCELMEM_RT_INLINE i32 push_back(const T& t) {
    i32 i = reserve_new_element();
    if (i >= 0) get<T>(i) = t;
    return i;
  }

  ACCELMEM_RT_INLINE i32 size() const { return atomic_load_acquire(&num_elements); }
  // Lazy: keeps chunks and contents.
  ACCELMEM_RT_INLINE void clear() { atomic_store_release(&num_elements, 0); }
  ACCELMEM_RT_INLINE void resize(i32 n) { atomic_store_release(&num_elements, n); }

  // Index of the element at address `p` (O(1)). Requires enable_ptr2index. Returns -1 and records
  // kErrorPtrNotFound if p is not the start of an element of an allocated chunk.
  ACCELMEM_RT_INLINE i32 ptr2index(const void* p) const {
    if (granule_table != nullptr) {
      const u64 address = reinterpret_cast<u64>(p);
      const u64 granule = address >> log2_chunk_alignment;
      u64 h = granule_hash(granule);
      for (;;) {
        const u64 entry = atomic_load_acquire(&granule_table[h]);
        if (entry == 0) break;
        if ((entry >> kGranuleValueBits) == granule) {
          const i32 c = static_cast<i32>(entry & kGranuleValueMask) - 1;
          // The chunk starts exactly at its granule (it is allocated G-aligned), so the offset
          // needs no load of chunks[c].
          const u64 offset = address & ((u64{1} << log2_chunk_alignment) - 1);
          if (offset >= chunk_bytes()) break;
          if ((offset & ((u64{1} << element_size_shift) - 1)) != 0) break;
          // Exact division by element_size = odd << shift: for a multiple of 2^shift that is not
          // a multiple of element_size the modular quotient is >= the chunk size.
          const u64 q = (offset >> element_size_shift) * element_size_odd_inverse;
          if (q >= static_cast<u64>(max_num_elements_per_chunk)) break;
          return (c << log2_chunk_num_elements) + static_cast<i32>(q);
        }
        h = (h + 1) & granule_table_mask;
      }
    }
    return ptr_not_found();
  }
  i32 ptr_not_found() const;

  // Batch forms for per-worker caches (NodeCache): one call per batch, the list's constants
  // held in registers across the loop. ptrs2indices writes ptr2index(ptrs[k]) to out[k] (-1 for
  // an unknown pointer, error recorded) and returns how many were unknown; one-entry memo of the
  // last granule, so runs of cells in one chunk skip the table. element_ptrs writes
  // get_element_ptr(indices[k]) to out[k] (the elements' chunks must exist).
  i32 ptrs2indices(const Ptr* ptrs, i32 n, i32* out) const;
  void element_ptrs(const i32* indices, i32 n, Ptr* out) const;

  // Granule table packing: (granule << kGranuleValueBits) | (chunk index + 1); 0 = empty.
  static constexpr i32 kGranuleValueBits = 20;
  static constexpr u64 kGranuleValueMask = (u64{1} << kGranuleValueBits) - 1;
  ACCELMEM_RT_INLINE u64 granule_hash(u64 granule) const {
    // Nearly the identity: chunks mapped close together land in neighbouring entries (few
    // pages of the table are touched); the xor folds in the bits above the table size.
    return (granule ^ (granule >> 17) ^ (granule >> 34)) & granule_table_mask;
  }

  ACCELMEM_RT_INLINE i32 get_num_active_chunks() const {
    return atomic_load_acquire(&num_active_chunks);
  }
  ACCELMEM_RT_INLINE u64 chunk_bytes() const {
    return element_size * static_cast<u64>(max_num_elements_per_chunk);
  }
  // Capacity in elements: max_num_chunks * max_num_elements_per_chunk (may exceed 2^31 - 1; the
  // usable index space is additionally capped at 2^31 - 1).
  ACCELMEM_RT_INLINE i64 capacity() const {
    i64 c = static_cast<i64>(max_num_chunks) * max_num_elements_per_chunk;
    return c < 0x7fffffff ? c : 0x7fffffff;
  }
};

}  // namespace sparse_runtime
}  // namespace accelmem

#endif  // ACCELMEM_SPARSE_RUNTIME_LIST_MANAGER_H_

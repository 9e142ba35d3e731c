// File: sparse_runtime/device/list_manager.h
//
// ListManager: an unbounded array of fixed-size elements stored in lazily allocated chunks of a
// power-of-two number of elements (upstream runtime.cpp ListManager). Index -> address is O(1):
// chunks[i >> log2] + element_size * (i & mask). Chunks are allocated on first touch under
// double-checked locking and published with an atomic release store; element reservation is one
// atomic add. `clear()` is lazy (chunks and contents are kept).
//
// Differences from upstream (all deliberate):
//   * The chunk table is allocated from the runtime memory at init with `max_num_chunks` entries
//     (default 131072, as upstream), instead of a 1 MiB array inside the object.
//   * Running out of chunks (or memory) records an error in RuntimeMemory and returns -1 / null
//     instead of asserting and carrying on.
//   * ptr2index is O(1) (upstream scans every chunk), in one of two layouts chosen at init:
//     - Contiguous (lists with enable_ptr2index whose RuntimeMemory can reserve address space,
//       i.e. the CPU host pool): the whole list lives in ONE virtual reservation made at init
//       (capacity * element_size bytes plus the lead elements below, which alone are committed
//       at init); chunk c is committed on first touch
//       at base + c * chunk_bytes (the committed chunks are always a prefix: touching chunk c
//       commits every chunk below it too). index = (p - base) / element_size by exact division
//       (multiply by the odd part's inverse, rotate), accepted if below the committed elements.
//       No table, no per-chunk alignment slack. `chunks[c]` is still filled, so chunk-wise code
//       (read_range, the GC's segment loops) works unchanged. In front of the base the
//       reservation holds kContiguousLeadElements more elements, committed and zero at init, that
//       are never handed out and that ptr2index rejects: what index -1 would address is
//       readable zero memory, so a lookup that maps a slot value straight to base + (v - 1) *
//       element_size (the pointer SNode, whose inactive slots hold 0) needs no test (the runtime
//       makes that lead element the SNode's ambient element).
//     - Granule table (the fallback: no reservation callback, the preallocated device mode, or
//       a reservation that failed): each chunk is aligned to G, the smallest power of two >= its
//       byte size, so `p >> log2(G)` names exactly one chunk; a small open-addressing table maps
//       that granule number to the chunk index; the chunk starts at its granule, so the offset is
//       p mod G (no load of the chunk table), divided by element_size exactly as above.
//     Unknown or interior pointers are reported as kErrorPtrNotFound and give -1 in both.
//
// How the contiguous layout maps onto the memory sources (RuntimeMemory::host_reserve /
// host_commit, runtime_memory.h):
//   * CPU (HostMemoryPool): reserve = mmap(PROT_NONE, MAP_NORESERVE), commit = mprotect(READ |
//     WRITE) of the next prefix (pages fault in lazily, zero-filled), release = munmap when the
//     pool is destroyed.
//   * CUDA (a driver-API pool could provide the same two callbacks): reserve =
//     cuMemAddressReserve(size rounded to cuMemGetAllocationGranularity); commit = cuMemCreate of
//     the granule-rounded growth + cuMemMap at the committed end + cuMemSetAccess + cuMemsetD8 to
//     zero it; release = cuMemUnmap / cuMemRelease per handle, then cuMemAddressFree. Commits are
//     host calls, so a device-side list could only grow between launches (device code never calls
//     the callbacks: a device build treats an uncommitted chunk as out of memory).
//   * The preallocated device mode keeps the granule table: its bump region has a fixed size
//     and the final size of each list is not known at init, so reserving each list's capacity up
//     front would either exhaust the region or cap the lists below max_num_chunks.
//
// Thread safety: reserve_new_element(s), touch_chunk, get_element_ptr, ptr2index, append and
// Appender::push_back may run concurrently. clear/resize are bookkeeping calls for quiescent
// phases (GC).
//
// Freestanding C++17 (see arch.h). Zero-initialize, then call init().
#ifndef ACCELMEM_SPARSE_RUNTIME_DEVICE_LIST_MANAGER_H_
#define ACCELMEM_SPARSE_RUNTIME_DEVICE_LIST_MANAGER_H_

#include "sparse_runtime/device/arch.h"
#include "sparse_runtime/device/runtime_memory.h"

namespace accelmem {
namespace sparse_runtime {

struct alignas(64) ListManager {
  static constexpr i32 kDefaultMaxNumChunks = 128 * 1024;
  // Chunk count limit (the chunk table stays <= 8 MiB, the granule table <= 24 MiB).
  static constexpr i32 kMaxMaxNumChunks = (1 << 20) - 1;

  // --- read-mostly configuration (set by init) ---
  RuntimeMemory* memory;
  Ptr* chunks;  // [max_num_chunks]; null = not allocated yet
  // Granule table for ptr2index (null: disabled), two arrays of granule_table_mask + 1 slots
  // (twice the chunk limit, so probes stay short): the granule number of the chunk in the slot
  // (0 = empty; published last, with release) and the index of its first element. Open
  // addressing from the home slot (granule - granule_base) & mask; granule_base is the chunk
  // table's own granule, so chunks mapped near it take consecutive home slots.
  u64* granule_keys;
  i32* granule_firsts;
  u64 granule_table_mask;
  u64 granule_base;
  // Contiguous layout (null: chunked, granule table if enabled): the address of element 0; the
  // reservation holds the lead elements (see the file comment) and then max_num_chunks chunks
  // back to back.
  static constexpr i32 kContiguousLeadElements = 1;
  Ptr contiguous_base;
  u64 element_size;
  u64 element_size_odd_inverse;  // inverse of (element_size >> element_size_shift) mod 2^64
  i32 element_size_shift;        // trailing zero bits of element_size
  i32 log2_chunk_num_elements;
  i32 max_num_elements_per_chunk;
  i32 max_num_chunks;
  i32 log2_chunk_alignment;  // log2(G)
  i32 lock;                  // guards chunk allocation
  // Contiguous layout: chunks [0, committed_chunks) are committed; contiguous_limit =
  // committed_chunks * elements per chunk (clamped to 2^31 - 1), the bound of find_index. Written
  // under `lock` (the limit with release), read-mostly.
  i32 committed_chunks;
  i32 contiguous_limit;
  // --- hot, written concurrently ---
  alignas(64) i32 num_elements;
  i32 num_active_chunks;
  // The lowest first index of a reservation refused below the capacity (a chunk that could not be
  // allocated, a range straddling the end) since the last clear()/resize(); kNoRefusal if none.
  // Entries from there on may never have been written (stale contents of an earlier fill, or a
  // chunk that does not exist): valid_size() stops before them.
  i32 refused_from;
  static constexpr i32 kNoRefusal = 0x7fffffff;

  // A contiguous reservation is at most this big (address space, not memory): 2^31 cells of up to
  // 128 B fit; lists of bigger elements get max_num_chunks lowered to what fits (their data would
  // exceed 256 GiB first).
  static constexpr u64 kMaxReservationBytes = u64{256} << 30;

  // Returns false (and records kErrorInvalidArgument / kErrorOutOfMemory) on bad parameters:
  // element_size == 0, num_elements_per_chunk not a power of two, or max_num_chunks out of
  // [1, kMaxMaxNumChunks]. With enable_ptr2index and allow_contiguous, the list takes the
  // contiguous layout if `memory` can reserve address space (see the file comment; the
  // reservation failing is not an error: the list falls back to the granule table).
  bool init(RuntimeMemory* memory, u64 element_size, i32 num_elements_per_chunk,
            i32 max_num_chunks = kDefaultMaxNumChunks, bool enable_ptr2index = false,
            bool allow_contiguous = true);
  ACCELMEM_RT_INLINE bool is_contiguous() const { return contiguous_base != nullptr; }

  // Atomically reserves one element (allocating its chunk if needed); returns its index, or -1
  // after recording kErrorOutOfChunks / kErrorOutOfMemory.
  // Indices stop at kMaxIndex (capacity() is at most 2^31 - 1 elements): the last i32 value is
  // never handed out, so every index has a successor count that fits an i32 (the contiguous
  // layout's ptr2index limit is one).
  static constexpr i32 kMaxIndex = 0x7ffffffe;
  // The counter's add is relaxed (here, in reserve_new_elements and in Appender::push_back): it
  // only hands out indices; an element's chunk is published by touch_chunk (release / acquire)
  // and its contents by whatever the caller publishes it with, never by the counter. One element
  // at a time, a warp's lanes share one add (warp_aggregated_add_relaxed).
  ACCELMEM_RT_INLINE i32 reserve_new_element() {
    i32 i = warp_aggregated_add_relaxed(&num_elements, 1);
    if (static_cast<u32>(i) <= static_cast<u32>(kMaxIndex) &&
        touch_chunk(i >> log2_chunk_num_elements)) {
      return i;
    }
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
  // Element i (reserved by the caller) gets the low `bytes` (<= 8) bytes of `bits` after touching
  // its chunk; false on error (recorded). Out of line: the rare part of Appender::push_back.
  bool write_new_element(i32 i, u64 bits, u64 bytes);
  // Contiguous layout: commits chunks [committed_chunks, c] (under the lock).
  bool commit_through(i32 c);
  // The failure path of a one-element reservation at index i: reports, gives it back, -1.
  i32 reserve_failed(i32 i);
  // After a refused reservation [first, first + n): undoes the counter's advance if the range lies
  // wholly past the capacity (see size()), else lowers refused_from to first.
  void record_refusal(i32 first, i32 n);

  ACCELMEM_RT_INLINE Ptr get_element_ptr(i32 i) const {
    return element_in(atomic_load_acquire(&chunks[i >> log2_chunk_num_elements]), i);
  }
  // get_element_ptr with a relaxed load of the chunk pointer, for callers that are ordered after
  // the chunk's publication by other means (a kernel boundary, a barrier): on CUDA the acquire
  // load is a membar.gl that waits for the thread's earlier stores (the GC's zeroing loops).
  ACCELMEM_RT_INLINE Ptr get_element_ptr_relaxed(i32 i) const {
    return element_in(atomic_load_relaxed(&chunks[i >> log2_chunk_num_elements]), i);
  }
  ACCELMEM_RT_INLINE Ptr element_in(Ptr chunk, i32 i) const {
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
  // Appends t (sizeof(T) <= 8); returns its index or -1 (error recorded). See Appender.
  template <typename T>
  ACCELMEM_RT_INLINE i32 push_back(const T& t) {
    return appender().push_back(t);
  }

  // push_back with what it reads besides the element counter taken beforehand, into registers.
  // Why: a locked instruction holds every later load until it completes, so a caller that
  // appends right after one (Pointer_deactivate appends the cell it took with its slot CAS) would
  // add the loads of the list's fields to every call; taking an Appender before the locked
  // instruction overlaps them with it. Valid while the list is not re-initialized (the chunk
  // table's address and the geometry never change after init).
  struct Appender {
    ListManager* list;
    Ptr* chunks;
    u64 element_size;
    i32 log2_chunk_num_elements;
    i32 chunk_mask;
    i32 max_num_chunks;

    template <typename T>
    ACCELMEM_RT_INLINE i32 push_back(const T& t) const {
      const i32 i = warp_aggregated_add_relaxed(&list->num_elements, 1);  // see reserve_new_element
      if (static_cast<u32>(i) > static_cast<u32>(kMaxIndex)) return list->reserve_failed(i);
      const i32 c = i >> log2_chunk_num_elements;
      const Ptr chunk = c < max_num_chunks ? atomic_load_acquire(&chunks[c]) : nullptr;
      if (__builtin_expect(chunk == nullptr, 0)) {
        // The value travels in a register: passing its address would spill it on every call.
        static_assert(sizeof(T) <= sizeof(u64), "Appender elements fit 8 bytes");
        u64 bits = 0;
        mem_copy(&bits, &t, sizeof(T));
        return list->write_new_element(i, bits, sizeof(T)) ? i : -1;
      }
      *reinterpret_cast<T*>(chunk + element_size * static_cast<u64>(i & chunk_mask)) = t;
      return i;
    }
  };
  ACCELMEM_RT_INLINE Appender appender() {
    return {this,
            chunks,
            element_size,
            log2_chunk_num_elements,
            max_num_elements_per_chunk - 1,
            max_num_chunks};
  }

  // A refused reservation still advanced the counter: one that lay wholly past the capacity takes
  // its elements back (record_refusal), so the counter stays within a few reservations of the
  // capacity however often callers retry; one below the capacity leaves entries that may never
  // be written, which valid_size() excludes. Negative (only reachable with 2^31 elements
  // requested at once) reads as full.
  ACCELMEM_RT_INLINE i32 size() const {
    const i32 n = atomic_load_acquire(&num_elements);
    return n >= 0 ? n : kMaxIndex + 1;
  }
  // The entries [0, valid_size()) were all written: size() cut at the first refused reservation.
  // Readers of a list that many threads append to (the recycled list) read this far only; what
  // was appended past a refusal is dropped (its cells leak; the refusal recorded an error).
  ACCELMEM_RT_INLINE i32 valid_size() const {
    return min_of(size(), atomic_load_relaxed(&refused_from));
  }
  // Lazy: keeps chunks and contents.
  ACCELMEM_RT_INLINE void clear() { resize(0); }
  ACCELMEM_RT_INLINE void resize(i32 n) {
    atomic_store_relaxed(&refused_from, kNoRefusal);
    atomic_store_release(&num_elements, n);
  }

  // Index of the element at address `p` (O(1)). Requires enable_ptr2index. Returns -1 and records
  // kErrorPtrNotFound if p is not the start of an element of an allocated chunk.
  ACCELMEM_RT_INLINE i32 ptr2index(const void* p) const {
    const i32 i = find_index(p);
    return i >= 0 ? i : ptr_not_found();
  }
  // ptr2index without the error report (-1 for an unknown pointer).
  ACCELMEM_RT_INLINE i32 find_index(const void* p) const {
    const u64 address = reinterpret_cast<u64>(p);
    if (contiguous_base != nullptr) {
      // Relaxed: a caller holding a cell's address synchronized with its chunk's commit already.
      const u64 q = contiguous_quotient(address);
      return q < static_cast<u64>(atomic_load_relaxed(&contiguous_limit)) ? static_cast<i32>(q)
                                                                          : -1;
    }
    if (granule_keys == nullptr) return -1;
    const u64 granule = address >> log2_chunk_alignment;
    const u64 q = offset_quotient(address);
    if (q >= static_cast<u64>(max_num_elements_per_chunk)) return -1;
    const i32 first = granule_first(granule);
    return first < 0 ? -1 : first + static_cast<i32>(q);
  }
  // Index of the first element of the chunk in `granule`, or -1 (the full probe).
  ACCELMEM_RT_INLINE i32 granule_first(u64 granule) const {
    for (u64 h = granule_home_slot(granule);; h = (h + 1) & granule_table_mask) {
      const u64 key = atomic_load_acquire(&granule_keys[h]);
      if (key == 0) return -1;
      if (key == granule) return granule_firsts[h];
    }
  }
  // (address mod G) / element_size if that division is exact; otherwise a value >=
  // max_num_elements_per_chunk. The chunk starts exactly at its granule (it is allocated
  // G-aligned), so the offset needs no load of the chunk table. Exact division by element_size =
  // odd << shift (Hacker's Delight 10-17): multiply by the odd part's inverse mod 2^64 and rotate
  // right by shift; a non-multiple of element_size gives a value > 2^64 / element_size, far above
  // the chunk size, and a multiple past the chunk's end gives its quotient, >= the chunk size.
  ACCELMEM_RT_INLINE u64 offset_quotient(u64 address) const {
    const u64 offset = address & ((u64{1} << log2_chunk_alignment) - 1);
    return rotate_right(offset * element_size_odd_inverse, element_size_shift);
  }
  // Contiguous layout: (address - base) / element_size if exact, else a value >= 2^64 /
  // element_size (above any element count); an address below the base wraps to a huge offset.
  ACCELMEM_RT_INLINE u64 contiguous_quotient(u64 address) const {
    return contiguous_quotient(address, reinterpret_cast<u64>(contiguous_base),
                               element_size_odd_inverse, element_size_shift);
  }
  // The same from copies of the list's constants (a loop's registers, a NodeCache's fields).
  static ACCELMEM_RT_INLINE u64 contiguous_quotient(u64 address, u64 base, u64 inverse, i32 shift) {
    return rotate_right((address - base) * inverse, shift);
  }
  static ACCELMEM_RT_INLINE u64 rotate_right(u64 x, i32 s) {
    return (x >> s) | (x << ((64 - s) & 63));
  }
  i32 ptr_not_found() const;

  // Batch forms for per-worker caches (NodeCache): one call per batch, the list's constants
  // held in registers across the loop. Contiguous layout: one subtract, multiply, rotate and
  // compare per pointer, whatever the order. Granule table: ptrs2indices writes ptr2index(ptrs[k])
  // to out[k] (-1 for an unknown pointer, error recorded once) and returns how many were unknown. A
  // batch whose first, middle and last pointer share a chunk (cells released in address order or
  // its reverse, as a struct-for deactivates them) is first tried against that chunk alone, with no
  // table lookup per pointer; otherwise the loop looks only at each granule's home slot of the
  // table, without branches on the data (cells freed in random order would mispredict them), and
  // a second pass probes further for the rare pointer whose chunk collided. element_ptrs writes
  // get_element_ptr(indices[k]) to out[k] (indices >= 0, the elements' chunks must exist).
  i32 ptrs2indices(const Ptr* ptrs, i32 n, i32* out) const;
  void element_ptrs(const i32* indices, i32 n, Ptr* out) const;

  ACCELMEM_RT_INLINE u64 granule_home_slot(u64 granule) const {
    return (granule - granule_base) & granule_table_mask;
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

#endif  // ACCELMEM_SPARSE_RUNTIME_DEVICE_LIST_MANAGER_H_

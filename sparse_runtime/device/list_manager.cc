// Freestanding implementation of ListManager (see list_manager.h).
#include "sparse_runtime/device/list_manager.h"

namespace accelmem {
namespace sparse_runtime {
bool ListManager::init(RuntimeMemory* memory_in, u64 element_size_in, i32 num_elements_per_chunk,
                       i32 max_num_chunks_in, bool enable_ptr2index, bool allow_contiguous) {
  memory = memory_in;
  if (element_size_in == 0) {
    report_error(memory, kErrorInvalidArgument, "ListManager: element_size must be positive");
    return false;
  }
  if (num_elements_per_chunk <= 0 ||
      !is_power_of_two_u64(static_cast<u64>(num_elements_per_chunk))) {
    report_error(memory, kErrorInvalidArgument, "max_num_elements_per_chunk must be POT.",
                 num_elements_per_chunk);
    return false;
  }
  if (max_num_chunks_in <= 0 || max_num_chunks_in > kMaxMaxNumChunks) {
    report_error(memory, kErrorInvalidArgument, "ListManager: max_num_chunks out of range",
                 max_num_chunks_in);
    return false;
  }
  element_size = element_size_in;
  element_size_shift = __builtin_ctzll(element_size);
  u64 odd = element_size >> element_size_shift;
  u64 inv = odd;  // Newton iteration: each step doubles the number of correct low bits.
  for (i32 k = 0; k < 6; ++k) inv *= 2 - odd * inv;
  element_size_odd_inverse = inv;
  max_num_elements_per_chunk = num_elements_per_chunk;
  log2_chunk_num_elements = log2_floor_u64(static_cast<u64>(num_elements_per_chunk));
  max_num_chunks = max_num_chunks_in;
  u64 alignment = next_power_of_two_u64(chunk_bytes());
  if (alignment < 64) alignment = 64;
  log2_chunk_alignment = log2_floor_u64(alignment);
  lock = 0;
  num_elements = 0;
  num_active_chunks = 0;
  refused_from = kNoRefusal;
  granule_keys = nullptr;
  granule_firsts = nullptr;
  granule_table_mask = 0;
  granule_base = 0;
  contiguous_base = nullptr;
  committed_chunks = 0;
  contiguous_limit = 0;
  if (enable_ptr2index && allow_contiguous) {
    // Room for max_num_chunks chunks, but no more than the i32 index space or the reservation cap.
    u64 num_chunks = static_cast<u64>(max_num_chunks);
    num_chunks = min_of(num_chunks, u64{1} << (31 - log2_chunk_num_elements));
    num_chunks = min_of(num_chunks, kMaxReservationBytes / chunk_bytes());
    // Cells keep the alignment they would have at the start of a chunk: the largest power of two
    // dividing element_size (at least a cache line).
    const u64 cell_alignment = max_of<u64>(u64{1} << element_size_shift, 64);
    // The lead elements in front of element 0, rounded so that the cells keep their alignment.
    const u64 lead = round_up_u64(kContiguousLeadElements * element_size, cell_alignment);
    Ptr reservation = nullptr;
    if (num_chunks > 0) {
      reservation =
          reserve_address_space(memory, num_chunks * chunk_bytes() + lead, cell_alignment);
    }
    if (reservation != nullptr) {
      // Committed (zero-filled) now and never written: out of memory here is an error.
      if (!commit_address_space(memory, reservation, lead, true)) return false;
      contiguous_base = reservation + lead;
      max_num_chunks = static_cast<i32>(num_chunks);
    }
  }
  chunks = reinterpret_cast<Ptr*>(
      allocate_aligned(memory, sizeof(Ptr) * static_cast<u64>(max_num_chunks), 64, true));
  if (chunks == nullptr) return false;
  if (contiguous_base != nullptr) return true;  // no granule table needed
  if (enable_ptr2index) {
    u64 table_size = next_power_of_two_u64(2 * static_cast<u64>(max_num_chunks));
    granule_keys =
        reinterpret_cast<u64*>(allocate_aligned(memory, sizeof(u64) * table_size, 64, true));
    granule_firsts =
        reinterpret_cast<i32*>(allocate_aligned(memory, sizeof(i32) * table_size, 64, true));
    if (granule_keys == nullptr || granule_firsts == nullptr) {
      granule_keys = nullptr;
      return false;
    }
    granule_table_mask = table_size - 1;
    granule_base = reinterpret_cast<u64>(chunks) >> log2_chunk_alignment;
  }
  return true;
}

bool ListManager::touch_chunk_slow(i32 c) {
  if (c < 0 || c >= max_num_chunks) {
    report_error(memory, kErrorOutOfChunks, "List manager out of chunks.", max_num_chunks);
    return false;
  }
  if (atomic_load_acquire(&chunks[c]) != nullptr) return true;
  if (contiguous_base != nullptr) return commit_through(c);
  locked_task(
      &lock,
      [&] {
        Ptr p = allocate_aligned(memory, chunk_bytes(), u64{1} << log2_chunk_alignment, true);
        if (p == nullptr) return;
        if (granule_keys != nullptr) {
          // Key 0 marks an empty slot; no chunk lies in granule 0 (below G).
          u64 granule = reinterpret_cast<u64>(p) >> log2_chunk_alignment;
          u64 h = granule_home_slot(granule);
          while (atomic_load_relaxed(&granule_keys[h]) != 0) h = (h + 1) & granule_table_mask;
          granule_firsts[h] = static_cast<i32>(static_cast<u64>(c) << log2_chunk_num_elements);
          atomic_store_release(&granule_keys[h], granule);
        }
        atomic_add(&num_active_chunks, 1);
        atomic_store_release(&chunks[c], p);
      },
      [&] { return atomic_load_acquire(&chunks[c]) == nullptr; });
  return atomic_load_acquire(&chunks[c]) != nullptr;
}

bool ListManager::commit_through(i32 c) {
  locked_task(
      &lock,
      [&] {
        // The committed chunks stay a prefix: commit every chunk up to c in one call.
        const i32 first = committed_chunks;
        const u64 bytes = chunk_bytes();
        if (!commit_address_space(memory, contiguous_base + bytes * static_cast<u64>(first),
                                  bytes * static_cast<u64>(c + 1 - first), true)) {
          return;
        }
        committed_chunks = c + 1;
        const i64 limit = static_cast<i64>(c + 1) << log2_chunk_num_elements;
        // The limit before the chunk pointers: whoever sees a chunk (acquire) sees its limit.
        atomic_store_release(&contiguous_limit, static_cast<i32>(min_of<i64>(limit, 0x7fffffff)));
        atomic_add(&num_active_chunks, c + 1 - first);
        for (i32 k = first; k <= c; ++k) {
          atomic_store_release(&chunks[k], contiguous_base + bytes * static_cast<u64>(k));
        }
      },
      [&] { return atomic_load_acquire(&chunks[c]) == nullptr; });
  return atomic_load_acquire(&chunks[c]) != nullptr;
}

bool ListManager::write_new_element(i32 i, u64 bits, u64 bytes) {
  Ptr p = touch_and_get(i);
  if (p == nullptr) {
    record_refusal(i, 1);
    return false;
  }
  mem_copy(p, &bits, min_of(bytes, u64{sizeof(bits)}));  // low bytes: every target is little-endian
  return true;
}

void ListManager::record_refusal(i32 first, i32 n) {
  // Every element of the failed reservation lies past the capacity, so the counter was at least
  // the capacity before this caller's add and stays there: no index is handed out twice. Why:
  // callers that keep trying after the list is full would otherwise wrap the counter through
  // the negative values back to indices already handed out.
  if (first < 0 || first >= capacity()) {
    atomic_add(&num_elements, -n);
    return;
  }
  // Below the capacity: entries from `first` on may stay unwritten. Rare (out of memory, the
  // list's last chunk), so a CAS loop.
  i32 seen = atomic_load_relaxed(&refused_from);
  while (first < seen && !atomic_cas(&refused_from, &seen, first)) {
  }
}

i32 ListManager::reserve_failed(i32 i) {
  // Past the index space (otherwise touch_chunk failed and recorded why).
  if (i < 0 || i > kMaxIndex) {
    report_error(memory, kErrorOutOfChunks, "List manager out of chunks.", i);
  }
  record_refusal(i, 1);
  return -1;
}

i32 ListManager::reserve_new_elements(i32 n) {
  if (n <= 0) return size();
  if (n > capacity()) {  // never fits; refused before the counter moves (2^31 could wrap it)
    report_error(memory, kErrorOutOfChunks, "List manager out of chunks.", max_num_chunks);
    return -1;
  }
  i32 first = atomic_add_relaxed(&num_elements, n);  // see reserve_new_element
  i64 last = static_cast<i64>(first) + n - 1;
  if (first < 0 || last > kMaxIndex) {
    report_error(memory, kErrorOutOfChunks, "List manager out of chunks.", max_num_chunks);
    record_refusal(first, n);
    return -1;
  }
  for (i64 c = first >> log2_chunk_num_elements; c <= (last >> log2_chunk_num_elements); ++c) {
    if (!touch_chunk(static_cast<i32>(c))) {
      record_refusal(first, n);
      return -1;
    }
  }
  return first;
}

void ListManager::read_range(i32 first, i32 n, void* buffer) const {
  Ptr out = static_cast<Ptr>(buffer);
  while (n > 0) {
    const i32 in_chunk = max_num_elements_per_chunk - (first & (max_num_elements_per_chunk - 1));
    const i32 count = min_of(n, in_chunk);
    mem_copy(out, get_element_ptr(first), element_size * static_cast<u64>(count));
    out += element_size * static_cast<u64>(count);
    first += count;
    n -= count;
  }
}

void ListManager::write_range(i32 first, i32 n, const void* buffer) {
  const u8* in = static_cast<const u8*>(buffer);
  while (n > 0) {
    const i32 in_chunk = max_num_elements_per_chunk - (first & (max_num_elements_per_chunk - 1));
    const i32 count = min_of(n, in_chunk);
    mem_copy(get_element_ptr(first), in, element_size * static_cast<u64>(count));
    in += element_size * static_cast<u64>(count);
    first += count;
    n -= count;
  }
}

Ptr ListManager::touch_and_get(i32 i) {
  if (i < 0 || !touch_chunk(i >> log2_chunk_num_elements)) return nullptr;
  return get_element_ptr(i);
}

Ptr ListManager::allocate() {
  i32 i = reserve_new_element();
  return i < 0 ? nullptr : get_element_ptr(i);
}

i32 ListManager::append(const void* data) {
  i32 i = reserve_new_element();
  if (i >= 0) mem_copy(get_element_ptr(i), data, element_size);
  return i;
}

i32 ListManager::ptrs2indices(const Ptr* ptrs, i32 n, i32* out) const {
  if (contiguous_base != nullptr) {
    const u64 base = reinterpret_cast<u64>(contiguous_base);
    const u64 inverse = element_size_odd_inverse;
    const i32 shift = element_size_shift;
    // Relaxed: see find_index.
    const u64 limit = static_cast<u64>(atomic_load_relaxed(&contiguous_limit));
    i32 unknown = 0;
    for (i32 k = 0; k < n; ++k) {
      const u64 q = contiguous_quotient(reinterpret_cast<u64>(ptrs[k]), base, inverse, shift);
      const bool ok = q < limit;
      out[k] = ok ? static_cast<i32>(q) : -1;
      unknown += ok ? 0 : 1;
    }
    if (unknown > 0) ptr_not_found();  // reported once
    return unknown;
  }
  if (granule_keys == nullptr) {
    for (i32 k = 0; k < n; ++k) out[k] = ptr_not_found();
    return n;
  }
  // Constants in locals: the stores to out[] must not force them to be reloaded.
  const u64* keys = granule_keys;
  const i32* firsts = granule_firsts;
  const u64 table_mask = granule_table_mask;
  const u64 base = granule_base;
  const i32 log2_granule = log2_chunk_alignment;
  const u64 offset_mask = (u64{1} << log2_granule) - 1;
  const i32 shift = element_size_shift;
  const u64 inverse = element_size_odd_inverse;
  const u64 per_chunk = static_cast<u64>(max_num_elements_per_chunk);
  // Runs in one chunk: only the quotient per pointer, each granule compared with the first's. A
  // pointer elsewhere (or not at an element of the chunk) sends the batch to the general loop.
  constexpr i32 kMinRun = 16;
  if (n >= kMinRun) {
    const u64 run_granule = reinterpret_cast<u64>(ptrs[0]) >> log2_granule;
    if ((reinterpret_cast<u64>(ptrs[n / 2]) >> log2_granule) == run_granule &&
        (reinterpret_cast<u64>(ptrs[n - 1]) >> log2_granule) == run_granule) {
      const i32 first = granule_first(run_granule);
      if (first >= 0) {
        u64 stray = 0;
        for (i32 k = 0; k < n; ++k) {
          const u64 address = reinterpret_cast<u64>(ptrs[k]);
          const u64 q = rotate_right((address & offset_mask) * inverse, shift);
          stray |= ((address >> log2_granule) ^ run_granule) | static_cast<u64>(q >= per_chunk);
          // Unsigned: a stray q may be huge (the batch is then redone below).
          out[k] = static_cast<i32>(static_cast<u32>(first) + static_cast<u32>(q));
        }
        if (stray == 0) return 0;
      }
    }
  }
  // Pass 1: home slots only, no branch on the data. Chunks mapped close together occupy
  // consecutive home slots, so this resolves nearly every pointer; a miss (collision or unknown
  // pointer) leaves -1.
  bool any_miss = false;
  for (i32 k = 0; k < n; ++k) {
    const u64 address = reinterpret_cast<u64>(ptrs[k]);
    const u64 granule = address >> log2_granule;
    const u64 q = rotate_right((address & offset_mask) * inverse, shift);
    const u64 h = (granule - base) & table_mask;
    // Relaxed: the caller got `address` from a cell of a published chunk, and the chunk's slot
    // was filled before the chunk was published (slots are never emptied).
    const bool ok = (atomic_load_relaxed(&keys[h]) == granule) & (q < per_chunk);
    out[k] = ok ? firsts[h] + static_cast<i32>(q) : -1;
    any_miss |= !ok;
  }
  if (!any_miss) return 0;
  // Pass 2: the full probe for the misses.
  i32 unknown = 0;
  for (i32 k = 0; k < n; ++k) {
    if (out[k] >= 0) continue;
    out[k] = find_index(ptrs[k]);
    unknown += out[k] < 0 ? 1 : 0;
  }
  if (unknown > 0) ptr_not_found();  // reported once
  return unknown;
}

#if defined(ARCH_x64) && defined(__SSE2__)
namespace {
typedef unsigned long long v2u64 __attribute__((vector_size(16)));
typedef int v4i32 __attribute__((vector_size(16)));
// out[k] = base + size * indices[k] for k < n rounded down to 4, two 32 x 32 -> 64-bit multiplies
// (pmuludq) per four indices; returns the count done. Exact for size < 2^32 and indices >= 0
// (a negative index would be taken as 2^32 + index).
// Why: GCC at -O2 leaves the loop scalar, one 64-bit multiply and one store per element, and a
// NodeCache refill spent about as long here as a cell's whole allocate() (node_manager_bench).
ACCELMEM_RT_INLINE i32 element_ptrs_x4(const i32* indices, i32 n, u64 base, u64 size, Ptr* out) {
  const v4i32 vsize = reinterpret_cast<v4i32>(v2u64{size, size});
  const v2u64 vbase = {base, base};
  i32 k = 0;
  for (; k + 4 <= n; k += 4) {
    v4i32 four;
    __builtin_memcpy(&four, indices + k, 16);
    const v2u64 even = reinterpret_cast<v2u64>(__builtin_ia32_pmuludq128(four, vsize));  // 0, 2
    const v2u64 odd = reinterpret_cast<v2u64>(                                           // 1, 3
        __builtin_ia32_pmuludq128(reinterpret_cast<v4i32>(reinterpret_cast<v2u64>(four) >> 32),
                                  vsize));
#if defined(__clang__)
    const v2u64 lo = __builtin_shufflevector(even, odd, 0, 2) + vbase;
    const v2u64 hi = __builtin_shufflevector(even, odd, 1, 3) + vbase;
#else
    const v2u64 lo = __builtin_shuffle(even, odd, v2u64{0, 2}) + vbase;
    const v2u64 hi = __builtin_shuffle(even, odd, v2u64{1, 3}) + vbase;
#endif
    __builtin_memcpy(out + k, &lo, 16);
    __builtin_memcpy(out + k + 2, &hi, 16);
  }
  return k;
}
}  // namespace
#endif

void ListManager::element_ptrs(const i32* indices, i32 n, Ptr* out) const {
  if (contiguous_base != nullptr) {
    const Ptr base = contiguous_base;
    const u64 size = element_size;
    i32 k = 0;
#if defined(ARCH_x64) && defined(__SSE2__)
    if (size <= 0xffffffffu)
      k = element_ptrs_x4(indices, n, reinterpret_cast<u64>(base), size, out);
#endif
    for (; k < n; ++k) out[k] = base + size * static_cast<u64>(indices[k]);
    return;
  }
  Ptr* const table = chunks;
  const i32 log2_per_chunk = log2_chunk_num_elements;
  const i32 mask = max_num_elements_per_chunk - 1;
  const u64 size = element_size;
  for (i32 k = 0; k < n; ++k) {
    const i32 i = indices[k];
    // Relaxed: the caller already synchronized with the chunk's publication (it reserved the
    // element, or got its index from a free list built after the chunk existed).
    out[k] = atomic_load_relaxed(&table[i >> log2_per_chunk]) + size * static_cast<u64>(i & mask);
  }
}

i32 ListManager::ptr_not_found() const {
  report_error(memory, kErrorPtrNotFound, "ptr not found.");
  return -1;
}

}  // namespace sparse_runtime
}  // namespace accelmem

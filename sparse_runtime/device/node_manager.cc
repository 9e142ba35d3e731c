// Freestanding implementation of NodeManager (see node_manager.h).
#include "sparse_runtime/device/node_manager.h"

namespace accelmem {
namespace sparse_runtime {

bool NodeManager::init(RuntimeMemory* memory_in, u64 node_size_in, u64 alignment_in,
                       i32 chunk_num_elements_in, i32 max_num_chunks) {
  memory = memory_in;
  if (node_size_in == 0) {
    report_error(memory, kErrorInvalidArgument, "NodeManager: node_size must be positive");
    return false;
  }
  if (alignment_in == 0) alignment_in = 8;
  if (!is_power_of_two_u64(alignment_in)) {
    report_error(memory, kErrorInvalidArgument, "NodeManager: alignment is not a power of two",
                 static_cast<i64>(alignment_in));
    return false;
  }
  if (chunk_num_elements_in == -1) chunk_num_elements_in = kUpstreamDefaultChunkNumElements;
  if (chunk_num_elements_in <= 0 || !is_power_of_two_u64(static_cast<u64>(chunk_num_elements_in))) {
    report_error(memory, kErrorInvalidArgument, "max_num_elements_per_chunk must be POT.",
                 chunk_num_elements_in);
    return false;
  }
  node_size = node_size_in;
  alignment = max_of<u64>(8, alignment_in);
  element_size = cell_stride(node_size, alignment);
  while (chunk_num_elements_in > 1 &&
         static_cast<u64>(chunk_num_elements_in) * element_size > kMaxChunkBytes) {
    chunk_num_elements_in /= 2;
  }
  chunk_num_elements = chunk_num_elements_in;
  free_list_used = 0;
  recycle_list_size_backup = 0;
  gc_epoch = 0;
  i32 index_chunk = max_of(chunk_num_elements, kMinIndexListChunk);
  return free_list.init(memory, sizeof(list_data_type), index_chunk, max_num_chunks) &&
         recycled_list.init(memory, sizeof(list_data_type), index_chunk, max_num_chunks) &&
         data_list.init(memory, element_size, chunk_num_elements, max_num_chunks,
                        /*enable_ptr2index=*/true);
}

i32 NodeManager::allocate_fresh_index() { return data_list.reserve_new_element(); }

bool NodeManager::allocate_indices(i32* out, i32 n) {
  if (n <= 0) return true;
  return take_indices(atomic_add(&free_list_used, n), n, out, n);
}

bool NodeManager::take_indices(i32 old, i32 advanced, i32* out, i32 n) {
  const i32 free_size = free_list.size();
  i32 k = min_of(n, max_of(free_size - old, 0));
  if (k > 0) {
    free_list.read_range(old, k, out);
    // A batch caller (a NodeCache refill) most likely takes the next n entries next: fetched now,
    // they arrive while this batch is handed out instead of stalling the next refill (the list
    // is read front to back once after each GC, mostly from L3 or memory).
#if defined(ARCH_x64) && !defined(ACCELMEM_ARCH_COUNTING)  // CUDA: no prefetch (see below)
    constexpr i32 kPrefetchNextBatch = 64;  // smaller batches: callers one cell at a time
    if (n >= kPrefetchNextBatch) {
      const i64 next_end =
          min_of(static_cast<i64>(old) + 2 * static_cast<i64>(n), static_cast<i64>(free_size));
      constexpr i32 kPerLine = 64 / static_cast<i32>(sizeof(list_data_type));
      for (i64 i = static_cast<i64>(old) + n; i < next_end; i += kPerLine) {
        prefetch_for_read(free_list.get_element_ptr(static_cast<i32>(i)));
      }
    }
#endif
  }
  if (k == n) return true;
  i32 first = data_list.reserve_new_elements(n - k);
  if (first < 0) {
    // Out of cells with every slot past the free list's end: none was handed out, so take the
    // slots back (the cursor stays at or past the end, no slot is handed out twice). Why: a
    // caller that keeps retrying after running out of memory would otherwise overflow it.
    if (k == 0) atomic_add(&free_list_used, -advanced);
    for (; k < n; ++k) out[k] = -1;
    return false;
  }
  for (i32 j = 0; k < n; ++k, ++j) out[k] = first + j;
  return true;
}

bool NodeManager::allocate_cells(Ptr* out, i32 n) {
  i32 indices[kCellBlock];
  for (i32 k = 0; k < n; k += kCellBlock) {
    const i32 m = min_of(kCellBlock, n - k);
    if (allocate_indices(indices, m)) {
      data_list.element_ptrs(indices, m, out + k);
      continue;
    }
    for (i32 j = 0; j < m; ++j) out[k + j] = indices[j] >= 0 ? get_cell(indices[j]) : nullptr;
    for (i32 j = k + m; j < n; ++j) out[j] = nullptr;
    return false;
  }
  return true;
}

void NodeManager::recycle(Ptr p) {
  i32 index = locate(p);
  if (index >= 0) recycled_list.push_back<list_data_type>(index);
}

void NodeManager::recycle_index(i32 index) { recycled_list.push_back<list_data_type>(index); }

void NodeManager::recycle_indices(const i32* indices, i32 n) {
  if (n <= 0) return;
  i32 first = recycled_list.reserve_new_elements(n);
  if (first >= 0) recycled_list.write_range(first, n, indices);
}

i32 NodeManager::recycle_cells(const Ptr* cells, i32 n) {
  i32 indices[kCellBlock];
  i32 unknown = 0;
  for (i32 k = 0; k < n; k += kCellBlock) {
    i32 m = min_of(kCellBlock, n - k);
    const i32 bad = data_list.ptrs2indices(cells + k, m, indices);
    if (bad != 0) {  // drop the unknown pointers (already reported)
      i32 kept = 0;
      for (i32 j = 0; j < m; ++j) {
        if (indices[j] >= 0) indices[kept++] = indices[j];
      }
      m = kept;
      unknown += bad;
    }
    recycle_indices(indices, m);
  }
  return unknown;
}

void NodeManager::gc_serial() {
  constexpr i32 kBlock = 256;
  list_data_type buffer[kBlock];
  // 1. Compact the free list: move the unused tail [used, size) to the head (#1076: not a clear).
  //    Blockwise through a buffer: a block's destination never overlaps a later block's source.
  const i32 used = free_list_used;
  const i32 size = free_list.size();
  const i32 num_unused = max_of(size - used, 0);
  if (used > 0) {
    for (i32 k = 0; k < num_unused; k += kBlock) {
      const i32 n = min_of(kBlock, num_unused - k);
      free_list.read_range(k + used, n, buffer);
      free_list.write_range(k, n, buffer);
    }
  }
  free_list_used = 0;
  free_list.resize(num_unused);
  ++gc_epoch;
  // 2. Zero every recycled cell (exactly element_size bytes, #427) and append its index to the
  //    free list, in recycle order (FIFO reuse). Cells adjacent in one chunk are zeroed together.
  const i32 num_recycled = recycled_list.valid_size();
  if (num_recycled > 0) {
    const i32 first = free_list.reserve_new_elements(num_recycled);
    if (first < 0) {  // error recorded; the recycled list is kept for a later GC
      // The refused slots may have advanced the size over entries never written (stale indices
      // of an earlier cycle, or a chunk that does not exist): cut it back.
      free_list.resize(num_unused);
      return;
    }
    const i32 chunk_mask = data_list.max_num_elements_per_chunk - 1;
    for (i32 r = 0; r < num_recycled; r += kBlock) {
      const i32 n = min_of(kBlock, num_recycled - r);
      recycled_list.read_range(r, n, buffer);
      free_list.write_range(first + r, n, buffer);
      i32 j = 0;
      while (j < n) {
        const i32 begin = buffer[j];
        i32 end = begin + 1;
        ++j;
        while (j < n && (end & chunk_mask) != 0 && buffer[j] == end) {
          ++end;
          ++j;
        }
        mem_zero(data_list.get_element_ptr(begin), element_size * static_cast<u64>(end - begin));
      }
    }
  }
  // 3. Lazy clear.
  recycled_list.clear();
}

i32 NodeManager::num_reserved() const {
  i64 reserved = data_list.size();
  i64 capacity = static_cast<i64>(data_list.get_num_active_chunks()) * chunk_num_elements;
  return static_cast<i32>(min_of(reserved, capacity));
}

i32 NodeManager::num_free() const {
  return max_of(free_list.size() - atomic_load_relaxed(&free_list_used), 0);
}

i32 NodeManager::num_in_use() const { return num_reserved() - num_free() - num_recycled(); }

u64 NodeManager::bytes_reserved() const {
  auto list_bytes = [](const ListManager& l) {
    u64 tables =
        sizeof(Ptr) * static_cast<u64>(l.max_num_chunks) +
        (l.granule_keys != nullptr ? (sizeof(u64) + sizeof(i32)) * (l.granule_table_mask + 1) : 0);
    return static_cast<u64>(l.get_num_active_chunks()) * l.chunk_bytes() + tables;
  };
  return list_bytes(free_list) + list_bytes(recycled_list) + list_bytes(data_list);
}

}  // namespace sparse_runtime
}  // namespace accelmem

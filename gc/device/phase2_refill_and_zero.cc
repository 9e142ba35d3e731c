// Freestanding implementation of GC phase 2 (see phase2_refill_and_zero.h).
#include "gc/device/phase2_refill_and_zero.h"

#if defined(ARCH_x64) && !defined(ACCELMEM_RT_BITCODE) && defined(__x86_64__)
#define ACCELMEM_GC_CPUID 1
#else
#define ACCELMEM_GC_CPUID 0
#endif

namespace accelmem {
namespace gc {
namespace {

#if ACCELMEM_GC_CPUID
// CPUID leaf `leaf` (subleaf 0). Inline assembly: freestanding code has no <cpuid.h>. In a VM
// every CPUID traps to the hypervisor (microseconds), so callers read once per process.
struct CpuidRegs {
  u32 eax, ebx, ecx, edx;
};
CpuidRegs cpuid(u32 leaf) {
  CpuidRegs r{leaf, 0, 0, 0};
  asm volatile("cpuid" : "+a"(r.eax), "=b"(r.ebx), "+c"(r.ecx), "=d"(r.edx));
  return r;
}
#endif

using sparse_runtime::atomic_add;
using sparse_runtime::block_barrier;
using sparse_runtime::ListManager;
using sparse_runtime::mem_zero;
using sparse_runtime::min_of;
using sparse_runtime::prefetch_for_write;
using sparse_runtime::uptr;

ACCELMEM_RT_INLINE void store8(Ptr p) {
  const u64 zero = 0;
  __builtin_memcpy(p, &zero, 8);
}
ACCELMEM_RT_INLINE void store16(Ptr p) {
  const u64 zero[2] = {0, 0};
  __builtin_memcpy(p, zero, 16);
}

// Zeroes [p, p + n) for n <= 128 with a few (overlapping) 8/16-byte stores instead of a memset
// call: most runs of small cells are this short, and the call dominates their cost.
ACCELMEM_RT_INLINE void zero_small(Ptr p, u64 n) {
  if (n >= 32) {
    store16(p);
    store16(p + 16);
    store16(p + n - 32);
    store16(p + n - 16);
    if (n > 64) {
      store16(p + 32);
      store16(p + 48);
      store16(p + n - 64);
      store16(p + n - 48);
    }
  } else if (n >= 16) {
    store16(p);
    store16(p + n - 16);
  } else if (n >= 8) {
    store8(p);
    store8(p + n - 8);
  } else {
    for (u64 k = 0; k < n; ++k) p[k] = 0;
  }
}

#if defined(ARCH_x64) && defined(__SSE2__)
#define ACCELMEM_GC_STREAMING 1
typedef long long gc_v2di __attribute__((vector_size(16)));
// Non-temporal 16-byte store of zero (no read-for-ownership of the line, no cache pollution).
ACCELMEM_RT_INLINE void stream16(Ptr p) {
  gc_v2di zero = {0, 0};
#if defined(__clang__)
  __builtin_nontemporal_store(zero, reinterpret_cast<gc_v2di*>(p));
#else
  __builtin_ia32_movntdq(reinterpret_cast<gc_v2di*>(p), zero);
#endif
}
// Zeroes [p, p + n): streaming stores for the whole cache lines inside, ordinary stores for the
// partial lines at both ends (a partial line streamed would be merged in memory, slower).
ACCELMEM_RT_INLINE void zero_streaming(Ptr p, u64 n) {
  Ptr end = p + n;
  Ptr first_line = reinterpret_cast<Ptr>((reinterpret_cast<uptr>(p) + 63) & ~uptr{63});
  Ptr last_line = reinterpret_cast<Ptr>(reinterpret_cast<uptr>(end) & ~uptr{63});
  if (first_line >= last_line) {  // no whole line
    zero_small(p, n);
    return;
  }
  if (first_line > p) zero_small(p, static_cast<u64>(first_line - p));
  for (Ptr q = first_line; q < last_line; q += 64) {
    stream16(q);
    stream16(q + 16);
    stream16(q + 32);
    stream16(q + 48);
  }
  if (end > last_line) zero_small(last_line, static_cast<u64>(end - last_line));
}
ACCELMEM_RT_INLINE void stream_fence() { __builtin_ia32_sfence(); }
// Zeroes n bytes (a multiple of 64) from the line-aligned p with non-temporal stores.
ACCELMEM_RT_INLINE void stream_lines(Ptr p, u64 n) {
  for (Ptr end = p + n; p < end; p += 64) {
    stream16(p);
    stream16(p + 16);
    stream16(p + 32);
    stream16(p + 48);
  }
}
// The same with two 32-byte (AVX) streaming stores per line, or one 64-byte (AVX-512) store, for
// CPUs that have them (gc_streaming_store_bytes). Why: scattered whole lines streamed in
// wider pieces are written faster: 32-byte pieces beat 16-byte ones, and 64-byte ones beat 32-byte
// ones, on the Zen 5 VM (gc_bench; figures in benchmarks/README.md). Inline assembly, not target
// attributes: the callers (the bucket loops) stay ordinary functions that run on any x86-64, and
// only these branches need the wider registers. A VEX-encoded vpxor zeroes the whole register,
// the upper halves of ymm0 / zmm0 included.
ACCELMEM_RT_INLINE void stream_lines_32(Ptr p, u64 n) {
  for (Ptr end = p + n; p < end; p += 64) {
    asm volatile(
        "vpxor %%xmm0, %%xmm0, %%xmm0\n\t"
        "vmovntdq %%ymm0, %0\n\t"
        "vmovntdq %%ymm0, %1"
        : "=m"(*reinterpret_cast<char(*)[32]>(p)), "=m"(*reinterpret_cast<char(*)[32]>(p + 32))
        :
        : "xmm0");
  }
}
ACCELMEM_RT_INLINE void stream_lines_64(Ptr p, u64 n) {
  for (Ptr end = p + n; p < end; p += 64) {
    asm volatile(
        "vpxor %%xmm0, %%xmm0, %%xmm0\n\t"
        "vmovntdq %%zmm0, %0"
        : "=m"(*reinterpret_cast<char(*)[64]>(p))
        :
        : "xmm0");
  }
}
// After 256- or 512-bit instructions: without it, later SSE code pays a state transition on some
// CPUs. It clears the upper halves of every vector register 0-15, hence the clobbers.
ACCELMEM_RT_INLINE void wide_streams_done() {
  asm volatile("vzeroupper" ::
                   : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",
                     "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
}
// The widest streaming store the CPU (and the OS, which must save the wider registers) supports:
// 64 (AVX-512F), 32 (AVX) or 16. The JIT-linked runtime (ACCELMEM_RT_BITCODE) has no access to the
// host's CPU model, and keeps the 16-byte stores.
ACCELMEM_RT_INLINE u32 streaming_store_bytes_supported() {
#if defined(ACCELMEM_RT_BITCODE)
  return 16;
#else
  if (__builtin_cpu_supports("avx512f")) return 64;
  return __builtin_cpu_supports("avx") ? 32 : 16;
#endif
}
#if ACCELMEM_GC_CPUID
// The CPU's family (CPUID leaf 1) if it is an AMD CPU, else 0; read once per process.
u32 amd_family_cache = ~u32{0};  // ~0: not read yet
u32 amd_cpu_family() {
  u32 family = __atomic_load_n(&amd_family_cache, __ATOMIC_RELAXED);
  if (family == ~u32{0}) {
    family = 0;
    if (__builtin_cpu_is("amd")) {
      const u32 eax = cpuid(1).eax;
      family = (eax >> 8) & 0xf;
      if (family == 0xf) family += (eax >> 20) & 0xff;
    }
    __atomic_store_n(&amd_family_cache, family, __ATOMIC_RELAXED);
  }
  return family;
}
#endif
// The default width: 64-byte stores only where they were measured faster, AMD family 1Ah (Zen 5)
// and later; elsewhere at most 32. Why: on some Intel CPUs 512-bit instructions lower the core's
// clock (their AVX-512 frequency licences), and Zen 5 gained only a few percent (gc_bench,
// BM_Gc_StoreWidths).
ACCELMEM_RT_INLINE u32 streaming_store_bytes_default() {
  const u32 supported = streaming_store_bytes_supported();
#if ACCELMEM_GC_CPUID
  if (supported == 64 && amd_cpu_family() >= 0x1a) return 64;
#endif
  return supported > 32 ? 32 : supported;
}
#else
#define ACCELMEM_GC_STREAMING 0
ACCELMEM_RT_INLINE void zero_streaming(Ptr p, u64 n) { mem_zero(p, n); }
ACCELMEM_RT_INLINE void stream_fence() {}
ACCELMEM_RT_INLINE void stream_lines(Ptr p, u64 n) { mem_zero(p, n); }
ACCELMEM_RT_INLINE void stream_lines_32(Ptr p, u64 n) { mem_zero(p, n); }
ACCELMEM_RT_INLINE void stream_lines_64(Ptr p, u64 n) { mem_zero(p, n); }
ACCELMEM_RT_INLINE void wide_streams_done() {}
ACCELMEM_RT_INLINE u32 streaming_store_bytes_supported() { return 16; }
ACCELMEM_RT_INLINE u32 streaming_store_bytes_default() { return 16; }
#endif

// Calls f with the whole-line streaming function for store_bytes (16, 32 or 64): a lambda type
// of its own per width, so that a loop instantiated on it tests no width per cell.
template <typename F>
ACCELMEM_RT_INLINE void with_line_streamer(u32 store_bytes, F f) {
  if (store_bytes == 64) {
    f([](Ptr p, u64 n) { stream_lines_64(p, n); });
  } else if (store_bytes == 32) {
    f([](Ptr p, u64 n) { stream_lines_32(p, n); });
  } else {
    f([](Ptr p, u64 n) { stream_lines(p, n); });
  }
}

// Zeroes runs of cells [begin, end) of the data list (split at chunk boundaries).
struct Zeroer {
  const ListManager* data;
  u64 element_size;
  i64 chunk;
  i32 lane;
  i32 lanes;
  bool streaming;
  u32 store_bytes;  // streaming: 16 (stream_lines), 32 (stream_lines_32) or 64 (stream_lines_64)

  ACCELMEM_RT_INLINE void bytes(Ptr p, u64 n) const {
    if (lanes > 1) {
      gc_zero_cooperative(p, n, lane, lanes);
    } else if (streaming) {
      if (element_size % 64 == 0) {
        // Whole lines: cells start lines (data chunks are line-aligned).
        with_line_streamer(store_bytes, [p, n](auto stream) { stream(p, n); });
      } else {
        zero_streaming(p, n);
      }
    } else if (n <= 128) {
      zero_small(p, n);
    } else {
      mem_zero(p, n);
    }
  }

  ACCELMEM_RT_INLINE void run(i64 begin, i64 end) const {
    if (((begin ^ (end - 1)) & ~(chunk - 1)) == 0) {  // one chunk (the common case)
      bytes(data->get_element_ptr_relaxed(static_cast<i32>(begin)),
            element_size * static_cast<u64>(end - begin));
      return;
    }
    while (begin < end) {
      const i64 stop = min_of((begin | (chunk - 1)) + 1, end);
      bytes(data->get_element_ptr_relaxed(static_cast<i32>(begin)),
            element_size * static_cast<u64>(stop - begin));
      begin = stop;
    }
  }
};

// Sequential writer of i32 entries into a ListManager from slot `pos` on (chunk-aware).
struct IndexWriter {
  const ListManager* list;
  i64 pos;
  i32* p;
  i64 left;  // slots left in the current chunk from p

  ACCELMEM_RT_INLINE void seek(i64 slot) {
    pos = slot;
    left = 0;
  }
  ACCELMEM_RT_INLINE void refill() {
    const i64 chunk = list->max_num_elements_per_chunk;
    p = reinterpret_cast<i32*>(list->get_element_ptr_relaxed(static_cast<i32>(pos)));
    left = chunk - (pos & (chunk - 1));
  }
  ACCELMEM_RT_INLINE void put(i32 value) {
    if (left == 0) refill();
    *p++ = value;
    --left;
    ++pos;
  }
  // Writes base + b for every set bit b of `word`, ascending.
  ACCELMEM_RT_INLINE void put_bits(i64 base, u64 word) {
    if (left < 64) {
      for (; word != 0; word &= word - 1) put(static_cast<i32>(base + __builtin_ctzll(word)));
      return;
    }
    i32* q = p;
    for (; word != 0; word &= word - 1) *q++ = static_cast<i32>(base + __builtin_ctzll(word));
    const i64 n = q - p;
    p = q;
    left -= n;
    pos += n;
  }
};

// Per-cell zeroing straight from the bitmap bits, without building runs, for the cases where
// runs buy nothing: small cells (element_size <= 64, a multiple of 8: a few inline stores per
// cell; the run bookkeeping and memset calls would cost more than the stores) and streamed cells
// of whole cache lines (a non-temporal line write does not care whether its neighbour is written
// too). Why prefetch (arch.h prefetch_for_write): zeroing scattered cells with ordinary stores
// waits on each line's read-for-ownership when the store reaches it; issued a word of cells
// ahead, the fetches overlap (in a microbenchmark of 10^4 sorted 64-byte cells among 2 * 10^4,
// prefetching made the zeroing several times faster, close to one memset of the same bytes).
// Needs 64 cells of a bitmap word inside one data chunk (chunk >= 64). Streamed cells
// (!kPrefetch): one pass over the bits of a word writes its indices to the free list and zeroes
// its cells (zero_cell(Ptr)). Cells zeroed with ordinary stores (kPrefetch): one pass writes the
// indices and prefetches the cells for writing, and the cells of the previous non-empty word are
// zeroed after that, so that their fetches have had a word's worth of work to complete. The
// writer's cursor lives in registers for the whole bucket.
template <bool kPrefetch, typename ZeroCell>
void cells_bucket(const ListManager& data, u64 element_size, u64* bitmap, const GcPlan& plan,
                  i64 w0, i64 w1, bool clear, bool list, IndexWriter* writer,
                  const ZeroCell& zero_cell) {
  i32* out = writer->p;
  i64 left = writer->left;
  i64 pos = writer->pos;
  u64 pending = 0;  // set bits of the previous non-empty word, not zeroed yet
  Ptr pending_cells = nullptr;
  auto zero_pending = [&] {
    for (; pending != 0; pending &= pending - 1) {
      zero_cell(pending_cells + element_size * static_cast<u64>(__builtin_ctzll(pending)));
    }
  };
  for (i64 w = w0; w < w1; ++w) {
    const u64 word = gc_marked_word(bitmap, plan, w, clear);
    if (word == 0) continue;
    const i64 base = w << 6;
    Ptr cells = data.get_element_ptr_relaxed(static_cast<i32>(base));
    bool fused = list;
    if (list && left < 64) {  // the free list's chunk may end inside this word: the slow path
      writer->p = out;
      writer->left = left;
      writer->pos = pos;
      writer->put_bits(base, word);
      out = writer->p;
      left = writer->left;
      pos = writer->pos;
      fused = false;
    }
    // One pass writes the indices and zeroes (streamed) or prefetches (kPrefetch) the cells.
    i32* q = out;
    for (u64 bits = word; bits != 0; bits &= bits - 1) {
      const i32 bit = __builtin_ctzll(bits);
      if (fused) *q++ = static_cast<i32>(base + bit);
      const Ptr cell = cells + element_size * static_cast<u64>(bit);
      if (kPrefetch) {
        prefetch_for_write(cell);
      } else {
        zero_cell(cell);
      }
    }
    left -= q - out;
    pos += q - out;
    out = q;
    if (kPrefetch) {
      zero_pending();
      pending = word;
      pending_cells = cells;
    }
  }
  zero_pending();
  writer->p = out;
  writer->left = left;
  writer->pos = pos;
}

template <u64 kSize>
void small_cells_bucket(const ListManager& data, u64* bitmap, const GcPlan& plan, i64 w0, i64 w1,
                        bool clear, bool list, IndexWriter* writer) {
  cells_bucket</*kPrefetch=*/true>(data, kSize, bitmap, plan, w0, w1, clear, list, writer,
                                   [](Ptr p) { __builtin_memset(p, 0, kSize); });
}

// Returns false if no per-cell specialization applies.
bool small_cells_dispatch(const ListManager& data, const Zeroer& zeroer, u64* bitmap,
                          const GcPlan& plan, i64 w0, i64 w1, bool clear, bool list,
                          IndexWriter* writer) {
  if (zeroer.lanes != 1 || zeroer.chunk < 64) return false;
  const u64 size = zeroer.element_size;
  if (zeroer.streaming) {
    if (size % 64 != 0) return false;
    // One instantiation per store width, and per width one with the size a constant (64).
    auto streamed = [&](auto stream) {
      if (size == 64) {
        cells_bucket</*kPrefetch=*/false>(data, 64, bitmap, plan, w0, w1, clear, list, writer,
                                          [stream](Ptr p) { stream(p, 64); });
      } else {
        cells_bucket</*kPrefetch=*/false>(data, size, bitmap, plan, w0, w1, clear, list, writer,
                                          [stream, size](Ptr p) { stream(p, size); });
      }
    };
    with_line_streamer(zeroer.store_bytes, streamed);
    return true;
  }
  switch (size) {
    case 8:
      small_cells_bucket<8>(data, bitmap, plan, w0, w1, clear, list, writer);
      return true;
    case 16:
      small_cells_bucket<16>(data, bitmap, plan, w0, w1, clear, list, writer);
      return true;
    case 24:
      small_cells_bucket<24>(data, bitmap, plan, w0, w1, clear, list, writer);
      return true;
    case 32:
      small_cells_bucket<32>(data, bitmap, plan, w0, w1, clear, list, writer);
      return true;
    case 40:
      small_cells_bucket<40>(data, bitmap, plan, w0, w1, clear, list, writer);
      return true;
    case 48:
      small_cells_bucket<48>(data, bitmap, plan, w0, w1, clear, list, writer);
      return true;
    case 56:
      small_cells_bucket<56>(data, bitmap, plan, w0, w1, clear, list, writer);
      return true;
    case 64:
      small_cells_bucket<64>(data, bitmap, plan, w0, w1, clear, list, writer);
      return true;
    default:
      return false;
  }
}

// Sorted order, one lane (lanes > 1: sorted_bucket_lanes).
void sorted_bucket(const GcPlan& plan, GcScratch* scratch, i32 bucket, const Zeroer& zeroer,
                   IndexWriter* writer) {
  const i64 words = gc_bitmap_words(plan.num_indices);
  const i64 w0 = (static_cast<i64>(bucket) << plan.bucket_shift) >> 6;
  const i64 w1 = min_of(((static_cast<i64>(bucket) + 1) << plan.bucket_shift) >> 6, words);
  u64* bitmap = scratch->bitmap;
  const bool list = plan.free_ok != 0;
  writer->seek(static_cast<i64>(plan.free_base) + scratch->bucket_offset[bucket]);
  if (small_cells_dispatch(*zeroer.data, zeroer, bitmap, plan, w0, w1, /*clear=*/true, list,
                           writer)) {
    return;
  }
  i64 run_begin = 0, run_end = -1;  // current run [run_begin, run_end); none when run_end < 0
  for (i64 w = w0; w < w1; ++w) {
    u64 word = gc_marked_word(bitmap, plan, w, /*clear=*/true);
    if (word == 0) continue;
    const i64 base = w << 6;
    if (list) writer->put_bits(base, word);
    while (word != 0) {
      const i32 tz = __builtin_ctzll(word);
      const u64 rest = ~(word >> tz);
      const i32 len = rest == 0 ? 64 - tz : __builtin_ctzll(rest);
      const i64 start = base + tz;
      if (start != run_end) {
        if (run_end >= 0) zeroer.run(run_begin, run_end);
        run_begin = start;
      }
      run_end = start + len;
      word = tz + len >= 64 ? 0 : word & (~u64{0} << (tz + len));
    }
  }
  if (run_end >= 0) zeroer.run(run_begin, run_end);
}

struct alignas(16) Zero16 {
  u64 lo, hi;
};

// Zeroes units part, part + step, ... of the `units` units of type T (8 or 16 bytes) at cell.
template <typename T>
ACCELMEM_RT_INLINE void zero_units(Ptr cell, i64 units, i32 part, i32 step) {
  T* p = reinterpret_cast<T*>(cell);
  for (i64 k = part; k < units; k += step) p[k] = T{};
}

// Sorted order on the `lanes` lanes of a block (a GPU): the lanes zero different cells at once.
// A cell is split into 16-byte units (8-byte ones where the stride is not a multiple of 16;
// strides are multiples of 8 and cells as aligned as their stride allows, see NodeManager) and
// takes span = min(units, lanes) lanes, so groups = lanes / span cells are zeroed side by side
// (64-byte cells on 64 lanes: 16 cells, one store a lane). Every lane walks all the set bits of
// the bucket in order (the same words, so branches on the walk are uniform); the k-th cell goes
// to group k mod groups, and after every `groups` cells each group zeroes its cell. The group's
// first lane writes the index to the cell's free-list slot (the bucket's offset + k), so the
// free list is the same as with one lane. Why: the whole block on one cell at a time (16 of 64
// lanes busy for a 64-byte cell), run after run, made phase 2 latency-bound on a GPU.
void sorted_bucket_lanes(const GcPlan& plan, GcScratch* scratch, i32 bucket, const NodeManager& nm,
                         i32 lane, i32 lanes) {
  const ListManager& data = nm.data_list;
  const ListManager& free_list = nm.free_list;
  const bool wide = data.element_size % 16 == 0;
  const i64 units = static_cast<i64>(data.element_size / (wide ? 16 : 8));
  const i32 span = units < lanes ? static_cast<i32>(units) : lanes;
  const i32 groups = lanes / span;
  const i32 group = lane / span;  // == groups for the lanes left over: they own no cell
  const i32 part = lane % span;
  const bool list = plan.free_ok != 0 && part == 0;
  const i64 words = gc_bitmap_words(plan.num_indices);
  const i64 w0 = (static_cast<i64>(bucket) << plan.bucket_shift) >> 6;
  const i64 w1 = min_of(((static_cast<i64>(bucket) + 1) << plan.bucket_shift) >> 6, words);
  u64* bitmap = scratch->bitmap;
  const i64 first_slot = static_cast<i64>(plan.free_base) + scratch->bucket_offset[bucket];
  i64 rank = 0;   // cells of the bucket walked so far
  i32 turn = 0;   // rank mod groups
  i64 mine = -1;  // this lane's cell of the current round (-1: none), and its rank
  i64 mine_rank = 0;
  auto zero_mine = [&] {
    if (mine < 0) return;
    const Ptr cell = data.get_element_ptr_relaxed(static_cast<i32>(mine));
    if (wide) {
      zero_units<Zero16>(cell, units, part, span);
    } else {
      zero_units<u64>(cell, units, part, span);
    }
    if (list)
      *reinterpret_cast<i32*>(
          free_list.get_element_ptr_relaxed(static_cast<i32>(first_slot + mine_rank))) = mine;
    mine = -1;
  };
  for (i64 w = w0; w < w1; ++w) {
    for (u64 word = gc_marked_word(bitmap, plan, w, /*clear=*/false); word != 0; word &= word - 1) {
      if (turn == group) {
        mine = (w << 6) + __builtin_ctzll(word);
        mine_rank = rank;
      }
      ++rank;
      if (++turn == groups) {
        turn = 0;
        zero_mine();
      }
    }
  }
  zero_mine();
  block_barrier();  // every lane has read the bucket's words
  if (lane == 0) {
    for (i64 w = w0; w < w1; ++w) gc_marked_word(bitmap, plan, w, /*clear=*/true);
  }
}

void recycle_order(NodeManager* nm, const GcPlan& plan, i32 worker, i32 num_workers,
                   const Zeroer& zeroer, IndexWriter* writer) {
  i64 begin, end;
  gc_slice(plan.num_recycled, worker, num_workers, &begin, &end);
  const ListManager& recycled = nm->recycled_list;
  // 1. Lane 0 copies the slice's indices to its reserved free-list slots (a plain copy).
  if (plan.free_ok != 0 && zeroer.lane == 0) {
    writer->seek(plan.free_base + begin);
    gc_for_each_segment<const i32>(recycled, begin, end, [&](const i32* items, i64, i64 n) {
      for (i64 k = 0; k < n;) {
        if (writer->left == 0) writer->refill();
        const i64 m = min_of(n - k, writer->left);
        for (i64 j = 0; j < m; ++j) writer->p[j] = items[k + j];
        writer->p += m;
        writer->left -= m;
        writer->pos += m;
        k += m;
      }
    });
  }
  // 2. Zero the cells in recycling order, merging ascending or descending neighbours into runs.
  i64 run_begin = 0, run_end = -1;
  gc_for_each_segment<const i32>(recycled, begin, end, [&](const i32* items, i64, i64 n) {
    for (i64 k = 0; k < n; ++k) {
      const i64 index = items[k];
      if (index == run_end) {
        ++run_end;
      } else if (index + 1 == run_begin) {
        --run_begin;
      } else {
        if (run_end >= 0) zeroer.run(run_begin, run_end);
        run_begin = index;
        run_end = index + 1;
      }
    }
  });
  if (run_end >= 0) zeroer.run(run_begin, run_end);
}

}  // namespace

void gc_zero_cooperative(Ptr p, u64 n, i32 lane, i32 lanes) {
  if (lanes <= 1) {
    mem_zero(p, n);
    return;
  }
  Ptr end = p + n;
  u64 head = (4 - (reinterpret_cast<uptr>(p) & 3)) & 3;
  if (head > n) head = n;
  Ptr aligned = p + head;
  if (lane == 0) {
    for (Ptr q = p; q < aligned; ++q) *q = 0;
  }
  const u64 words = static_cast<u64>(end - aligned) / 4;
  u32* w = reinterpret_cast<u32*>(aligned);
  for (u64 k = static_cast<u64>(lane); k < words; k += static_cast<u64>(lanes)) w[k] = 0;
  if (lane == 0) {
    for (Ptr q = aligned + 4 * words; q < end; ++q) *q = 0;
  }
}

#if ACCELMEM_GC_CPUID
namespace {
// CPUID's L2 size once per process. Racing first calls each store what their core reports; where
// cores differ (hybrid CPUs) one of those sizes stays, which only moves a performance threshold.
u64 cpu_l2_bytes_cache = 0;  // 0: not read yet; ~0: unknown
}  // namespace
#endif

u64 gc_cpu_l2_bytes() {
#if ACCELMEM_GC_CPUID
  u64 l2 = __atomic_load_n(&cpu_l2_bytes_cache, __ATOMIC_RELAXED);
  if (l2 == 0) {
    // Extended leaf 0x80000006, ECX[31:16]: L2 size in KiB (AMD and Intel alike), where the
    // highest extended leaf (leaf 0x80000000's EAX) reaches it.
    const u32 ecx = cpuid(0x80000000u).eax >= 0x80000006u ? cpuid(0x80000006u).ecx : 0;
    l2 = (ecx >> 16) != 0 ? u64{ecx >> 16} << 10 : ~u64{0};
    __atomic_store_n(&cpu_l2_bytes_cache, l2, __ATOMIC_RELAXED);
  }
  return l2 == ~u64{0} ? 0 : l2;
#else
  return 0;
#endif
}

u32 gc_streaming_store_bytes(const GcScratch* scratch) {
  const u32 asked = scratch->streaming_store_bytes;
  if (asked == 0) return streaming_store_bytes_default();
  const u32 width = asked >= 64 ? 64 : asked >= 32 ? 32 : 16;
  const u32 supported = streaming_store_bytes_supported();
  return width < supported ? width : supported;
}

bool gc_phase2_streams(const NodeManager* nm, const GcScratch* scratch) {
  if (ACCELMEM_GC_STREAMING == 0) return false;
  const u64 zero_bytes = nm->element_size * static_cast<u64>(scratch->plan.num_refill);
  return zero_bytes >= gc_streaming_threshold(scratch, nm->element_size, gc_cpu_l2_bytes());
}

void gc_phase2_refill_and_zero(NodeManager* nm, GcScratch* scratch, i32 worker, i32 num_workers,
                               i32 lane, i32 lanes) {
  const GcPlan plan = scratch->plan;
  if (lanes < 1) lanes = 1;
  if (num_workers < 1) num_workers = 1;
  const bool streaming = gc_phase2_streams(nm, scratch);
  const Zeroer zeroer{
      &nm->data_list, nm->element_size, nm->data_list.max_num_elements_per_chunk, lane,
      lanes,          streaming,        gc_streaming_store_bytes(scratch)};
  IndexWriter writer{&nm->free_list, 0, nullptr, 0};
  if (plan.order == kGcOrderSorted) {
    if (lanes == 1) {
      for (i32 b = atomic_add(&scratch->next_bucket, 1); b < plan.num_buckets;
           b = atomic_add(&scratch->next_bucket, 1)) {
        sorted_bucket(plan, scratch, b, zeroer, &writer);
      }
    } else {
      for (i32 b = worker; b < plan.num_buckets; b += num_workers) {
        sorted_bucket_lanes(plan, scratch, b, *nm, lane, lanes);
      }
    }
  } else {
    recycle_order(nm, plan, worker, num_workers, zeroer, &writer);
  }
  if (zeroer.streaming && zeroer.store_bytes > 16) wide_streams_done();
  if (zeroer.streaming) stream_fence();
}

}  // namespace gc
}  // namespace accelmem

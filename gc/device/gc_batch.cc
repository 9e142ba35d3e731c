#include "gc/device/gc_batch.h"

#include "gc/device/gc_serial.h"
#include "gc/device/phase0_compact_free_list.h"
#include "gc/device/phase1_swap_lists.h"
#include "gc/device/phase2_refill_and_zero.h"

namespace accelmem {
namespace gc {
namespace {

// Marks `e` active iff it has a manager with recycled cells; returns the mark.
bool mark_active(GcBatchEntry& e) {
  e.active = e.nm != nullptr && gc_needs_collection(e.nm) ? 1 : 0;
  return e.active != 0;
}

}  // namespace

i32 gc_batch_prepare(GcBatchEntry* entries, i32 n, i32 num_workers) {
  i32 active = 0;
  for (i32 k = 0; k < n; ++k) {
    if (!mark_active(entries[k])) continue;
    gc_scratch_reserve(entries[k].scratch, entries[k].nm, num_workers);
    ++active;
  }
  return active;
}

void gc_batch_phase0(GcBatchEntry* entries, i32 n, i32 worker, i32 num_workers, i32 /*lane*/,
                     i32 /*lanes*/) {
  for (i32 k = 0; k < n; ++k) {
    if (entries[k].active != 0) {
      gc_phase0_compact_free_list(entries[k].nm, entries[k].scratch, worker, num_workers);
    }
  }
}

void gc_batch_phase1(GcBatchEntry* entries, i32 n, i32 /*worker*/, i32 num_workers, i32 lane,
                     i32 lanes) {
  for (i32 k = 0; k < n; ++k) {
    if (entries[k].active != 0) {
      gc_phase1_swap_lists_block(entries[k].nm, entries[k].scratch, num_workers, lane, lanes);
    }
  }
}

void gc_batch_phase2(GcBatchEntry* entries, i32 n, i32 worker, i32 num_workers, i32 lane,
                     i32 lanes) {
  for (i32 k = 0; k < n; ++k) {
    if (entries[k].active != 0) {
      gc_phase2_refill_and_zero(entries[k].nm, entries[k].scratch, worker, num_workers, lane,
                                lanes);
    }
  }
}

i32 gc_batch_serial(GcBatchEntry* entries, i32 n) {
  // One thread needs no barriers between the phases, so each manager runs all three back to back
  // while its lists are still in cache (grouping the phases, as a grid must, measured slower).
  i32 active = 0;
  for (i32 k = 0; k < n; ++k) {
    if (!mark_active(entries[k])) continue;
    gc_serial(entries[k].nm, entries[k].scratch);
    ++active;
  }
  return active;
}

}  // namespace gc
}  // namespace accelmem

// Freestanding implementation of the serial GC (see gc_serial.h).
#include "gc/device/gc_serial.h"

#include "gc/device/phase0_compact_free_list.h"
#include "gc/device/phase1_swap_lists.h"
#include "gc/device/phase2_refill_and_zero.h"

namespace accelmem {
namespace gc {

bool gc_serial(NodeManager* nm, GcScratch* scratch) {
  gc_scratch_reserve(scratch, nm, 1);
  gc_phase0_compact_free_list(nm, scratch, 0, 1);
  gc_phase1_swap_lists(nm, scratch, 1);
  gc_phase2_refill_and_zero(nm, scratch, 0, 1);
  return sparse_runtime::runtime_error_code(nm->memory) == sparse_runtime::kRuntimeOk;
}

}  // namespace gc
}  // namespace accelmem

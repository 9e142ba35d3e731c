// File: gc/device/gc_serial.h
//
// The serial GC of one NodeManager (upstream gc_serial), run on the
// calling thread: the three phases with one worker. Equivalent in effect to upstream: afterwards
// every recycled cell is zero and on the free list after the free list's unused entries,
// free_list_used == 0, the recycled list is empty, data_list.size() is unchanged and gc_epoch
// counts the collection.
// Differences (better): cells are zeroed in address order when that pays off (see gc_scratch.h),
// runs of adjacent cells take one memset, the free list is refilled without atomics, and
// out-of-range recycled indices are reported instead of corrupting memory.
//
// Needs exclusive access to `nm` (no allocate/recycle in flight). Freestanding C++17.
#ifndef ACCELMEM_GC_DEVICE_GC_SERIAL_H_
#define ACCELMEM_GC_DEVICE_GC_SERIAL_H_

#include "gc/device/gc_scratch.h"
#include "sparse_runtime/device/node_manager.h"

namespace accelmem {
namespace gc {

// Collects `nm` using `scratch` (grown as needed from nm's runtime memory). Returns false if the
// runtime memory has an error recorded afterwards.
bool gc_serial(NodeManager* nm, GcScratch* scratch);

}  // namespace gc
}  // namespace accelmem

#endif  // ACCELMEM_GC_DEVICE_GC_SERIAL_H_

// File: sparse_runtime/device/runtime_memory.h
//
// RuntimeMemory: the memory pool and error sink shared by every runtime object (ListManager,
// NodeManager, SNode functions, runtime context). It is the part of upstream's LLVMRuntime that the
// allocators need, split out so that they do not depend on the whole runtime context.
//
// Memory comes from one of two sources (upstream `allocate_aligned`):
//   * a host callback (CPU): `host_allocate(host_pool, size, alignment)` must return zero-filled
//     memory or null; the host pool owns every byte and releases all of it when the runtime is
//     destroyed (fixing upstream #5777);
//   * a preallocated zero-filled chunk (device): a bump pointer under a spinlock.
// Nothing is freed piecemeal: runtime structures only grow until the runtime is destroyed.
//
// Optionally (host-callback mode only) the source can also reserve address space and commit it
// piecewise: `host_reserve(host_pool, size, alignment)` returns the start of a range of `size`
// bytes that holds no memory yet (or null), `host_commit(host_pool, address, size)` makes
// [address, address + size) of a reservation usable and zero-filled (false when out of memory;
// committing a part that is already committed is allowed and free). The pool releases the
// reservations when it is destroyed. ListManager uses them to keep a data list in one contiguous
// range (see list_manager.h, which also gives the CUDA driver-API equivalent). Without them
// (null callbacks, the preallocated mode, device builds) the lists stay chunked.
//
// Errors: runtime code never aborts. report_error records an error in one of two places:
//   * the record the host routes the calling thread's errors to (`error_record`, a host callback:
//     the host API gives every operation its own RuntimeErrorRecord, so an error reaches exactly
//     the call that raised it, whatever other threads do);
//   * otherwise the memory's shared slot (error_code / error_message): device code, code that runs
//     outside any host operation, and host phases that hold the runtime exclusively (GC).
// In both, the first error wins: its code and message are kept and later ones are dropped; host
// code turns them into absl::Status. Operations that fail return a null pointer / -1 so callers
// can stop.
//
// Freestanding C++17 (see arch.h).
#ifndef ACCELMEM_SPARSE_RUNTIME_DEVICE_RUNTIME_MEMORY_H_
#define ACCELMEM_SPARSE_RUNTIME_DEVICE_RUNTIME_MEMORY_H_

#include "sparse_runtime/device/arch.h"

namespace accelmem {
namespace sparse_runtime {

// Error codes recorded in RuntimeMemory::error_code.
enum RuntimeError : i32 {
  kRuntimeOk = 0,
  kErrorOutOfChunks = 1,      // a ListManager needed a chunk beyond max_num_chunks
  kErrorOutOfMemory = 2,      // the host pool or the preallocated chunk is exhausted
  kErrorPtrNotFound = 3,      // recycle/locate of a pointer that is not a cell of that manager
  kErrorDynamicOverflow = 4,  // append/activate past a dynamic SNode's declared size
  kErrorInvalidArgument = 5,  // bad parameter to a runtime constructor
  kErrorIndexOutOfRange = 6,  // an index outside a container
  kErrorStaleCache = 7,       // a NodeCache kept free-list slots across a GC (not flushed)
};

inline constexpr i32 kErrorMessageCapacity = 256;

// Host allocation callback: zero-filled, `alignment`-aligned (a power of two) memory, or null.
using HostAllocateFn = void* (*)(void* host_pool, u64 size, u64 alignment);

// Host reservation callbacks (see the file comment).
using HostReserveFn = void* (*)(void* host_pool, u64 size, u64 alignment);
using HostCommitFn = bool (*)(void* host_pool, void* address, u64 size);

// One error, owned by whoever created it (e.g. one host operation). Zero-initialized = no error;
// the first report wins (under `lock`, so the workers of one operation may share a record).
struct RuntimeErrorRecord {
  i32 lock;
  i32 code;
  char message[kErrorMessageCapacity];
};

struct RuntimeMemory;
// Host error routing: the record that errors reported into `memory` by the calling thread go to,
// or null for the memory's shared slot. Must be callable from any thread; only called on errors.
using ErrorRecordFn = RuntimeErrorRecord* (*)(const RuntimeMemory* memory);

struct RuntimeMemory {
  HostAllocateFn host_allocate;
  void* host_pool;
  // Preallocated chunk (used when prealloc_size > 0): [prealloc_base, prealloc_base + size).
  u64 prealloc_base;
  u64 prealloc_head;
  u64 prealloc_size;
  i32 allocator_lock;
  i32 error_lock;
  // Bytes requested with request=true (the runtime structures and cells), as upstream.
  u64 total_requested_memory;
  // The shared slot (see the file comment).
  i32 error_code;
  char error_message[kErrorMessageCapacity];
  // Host error routing (null: every error goes to the shared slot). Set before the memory is
  // shared between threads; runtime_memory_init_* clear it. Device builds (ARCH_cuda) ignore it
  // and keep the field only so that host and device agree on the layout.
  ErrorRecordFn error_record;
  // Address-space reservation (null: unavailable). Last, so that the offsets above stay put.
  HostReserveFn host_reserve;
  HostCommitFn host_commit;
};

// Host-callback mode. `memory` must be zero-initialized or freshly constructed.
void runtime_memory_init_host(RuntimeMemory* memory, HostAllocateFn host_allocate, void* host_pool);
// Preallocated-chunk mode over zero-filled [base, base + size).
void runtime_memory_init_preallocated(RuntimeMemory* memory, Ptr base, u64 size);

// Host-callback mode with address-space reservations (both callbacks non-null).
void runtime_memory_init_host_reserving(RuntimeMemory* memory, HostAllocateFn host_allocate,
                                        HostReserveFn host_reserve, HostCommitFn host_commit,
                                        void* host_pool);

// A range of `size` bytes of address space aligned to `alignment`, no memory committed, or null
// when the memory cannot reserve (no callbacks, preallocated mode, device build) or the callback
// refuses. Records no error: callers fall back to chunked allocation.
Ptr reserve_address_space(RuntimeMemory* memory, u64 size, u64 alignment);
// Commits [address, address + size) of a reservation (zero-filled). False after recording
// kErrorOutOfMemory. `request` adds the size to total_requested_memory.
bool commit_address_space(RuntimeMemory* memory, Ptr address, u64 size, bool request);

// Returns zero-filled memory of `size` bytes aligned to `alignment` (a power of two), or null after
// recording kErrorOutOfMemory. `request` adds the size to total_requested_memory.
Ptr allocate_aligned(RuntimeMemory* memory, u64 size, u64 alignment, bool request);

// Records an error in the calling thread's record (memory->error_record) or, without one, in the
// shared slot, if none is recorded there yet. `message` is a NUL-terminated string, truncated to
// kErrorMessageCapacity - 1 characters; `arg` (if >= 0) is appended in decimal after ": ".
void report_error(RuntimeMemory* memory, i32 code, const char* message, i64 arg = -1);
// The same into a given record.
void record_error(RuntimeErrorRecord* record, i32 code, const char* message, i64 arg = -1);

// The error in the shared slot (not the routed records).
ACCELMEM_RT_INLINE i32 runtime_error_code(const RuntimeMemory* memory) {
  return atomic_load_acquire(&memory->error_code);
}

// Clears the shared slot (host code, while no other thread reports into it).
void runtime_reset_error(RuntimeMemory* memory);

ACCELMEM_RT_INLINE i32 error_record_code(const RuntimeErrorRecord* record) {
  return atomic_load_acquire(&record->code);
}
// Clears a record (by its owner, while no other thread reports into it).
void error_record_reset(RuntimeErrorRecord* record);

}  // namespace sparse_runtime
}  // namespace accelmem

#endif  // ACCELMEM_SPARSE_RUNTIME_DEVICE_RUNTIME_MEMORY_H_

// File: sparse_runtime/host_memory_pool.h
//
// HostMemoryPool: the CPU memory source behind a RuntimeMemory (host code, ordinary C++). Every
// allocation is a zero-filled anonymous mapping, aligned as requested (over-mapped, then trimmed),
// committed lazily by the kernel on first touch; mappings of 4 MiB and more are 2 MiB-aligned and
// advised onto transparent huge pages. The pool records every mapping and unmaps all of
// them when it is destroyed, so destroying a runtime returns every byte (upstream leaks its
// NodeManagers and lists, #5777).
//
// A process-wide counter of live pool bytes (LiveBytesAllProcess) lets tests prove that.
//
// Reservations (for the contiguous data lists, see list_manager.h): Reserve maps address space
// only (PROT_NONE, MAP_NORESERVE: no memory, no commit charge), Commit makes the next part of it
// readable and writable (mprotect; the pages are zero-filled and fault in lazily). Commits are
// tracked per reservation as a committed prefix: committing what is already committed is free,
// a commit past the committed end also commits the gap. Reservations of 4 MiB and more are
// 2 MiB-aligned, advised onto transparent huge pages and committed in whole 2 MiB steps from
// their start (except the first commit, rounded to pages: a list's lead elements, committed at
// init, stay one page), so that a growing list gets huge pages as its chunks would. Committed bytes
// count as mapped bytes (the limit, bytes_mapped, LiveBytesAllProcess); reserved address space
// counts separately (bytes_reserved, capped per pool, by default at kMaxReservedBytes: beyond it
// Reserve returns null and the lists fall back to chunks; so does a kernel that refuses the
// mapping). Everything is unmapped when the pool is destroyed.
#ifndef ACCELMEM_SPARSE_RUNTIME_HOST_MEMORY_POOL_H_
#define ACCELMEM_SPARSE_RUNTIME_HOST_MEMORY_POOL_H_

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "sparse_runtime/device/runtime_memory.h"

namespace accelmem {
namespace sparse_runtime {

class HostMemoryPool {
 public:
  // Address space for all reservations of one pool by default (well inside the 128 TiB of a
  // process).
  static constexpr uint64_t kMaxReservedBytes = uint64_t{16} << 40;

  // `limit_bytes` caps the total mapped bytes (0 = unlimited); beyond it Allocate returns null.
  // `max_reserved_bytes` caps the address space of all reservations together.
  explicit HostMemoryPool(uint64_t limit_bytes = 0,
                          uint64_t max_reserved_bytes = kMaxReservedBytes);
  ~HostMemoryPool();
  HostMemoryPool(const HostMemoryPool&) = delete;
  HostMemoryPool& operator=(const HostMemoryPool&) = delete;

  // Zero-filled, `alignment`-aligned (power of two) memory, or null. Thread-safe.
  void* Allocate(uint64_t size, uint64_t alignment);

  // `size` bytes of address space, `alignment`-aligned, nothing committed; null if refused.
  void* Reserve(uint64_t size, uint64_t alignment);
  // Commits [address, address + size) of one reservation (and any uncommitted part below it).
  // False if the range is not inside one reservation, the limit would be exceeded or the kernel
  // refuses.
  bool Commit(void* address, uint64_t size);

  // The HostAllocateFn to put in a RuntimeMemory (host_pool = this).
  static void* AllocateCallback(void* pool, uint64_t size, uint64_t alignment);
  static void* ReserveCallback(void* pool, uint64_t size, uint64_t alignment);
  static bool CommitCallback(void* pool, void* address, uint64_t size);
  // Sets `memory` to host-callback mode over this pool; with `reservations` the memory also gets
  // the reserve/commit callbacks (contiguous data lists), without them the lists stay chunked.
  void Attach(RuntimeMemory* memory, bool reservations = true);

  // Bytes currently mapped by this pool (page-rounded).
  uint64_t bytes_mapped() const;
  uint64_t num_mappings() const;
  // Address space held by reservations (committed or not) and their number.
  uint64_t bytes_reserved() const;
  uint64_t num_reservations() const;
  // Bytes mapped by all live pools in the process.
  static uint64_t LiveBytesAllProcess();

 private:
  struct Mapping {
    void* address;
    size_t length;
  };
  const uint64_t limit_bytes_;
  const uint64_t max_reserved_bytes_;
  mutable std::mutex mu_;
  struct Reservation {
    uintptr_t begin;
    uintptr_t end;
    uintptr_t committed_end;  // [begin, committed_end) is readable and writable
    uint64_t step;            // commit granularity (page or 2 MiB)
  };
  std::vector<Mapping> mappings_;
  std::vector<Reservation> reservations_;
  uint64_t bytes_mapped_ = 0;
  uint64_t bytes_reserved_ = 0;
};

}  // namespace sparse_runtime
}  // namespace accelmem

#endif  // ACCELMEM_SPARSE_RUNTIME_HOST_MEMORY_POOL_H_

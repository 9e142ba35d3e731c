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
  // `limit_bytes` caps the total mapped bytes (0 = unlimited); beyond it Allocate returns null.
  explicit HostMemoryPool(uint64_t limit_bytes = 0);
  ~HostMemoryPool();
  HostMemoryPool(const HostMemoryPool&) = delete;
  HostMemoryPool& operator=(const HostMemoryPool&) = delete;

  // Zero-filled, `alignment`-aligned (power of two) memory, or null. Thread-safe.
  void* Allocate(uint64_t size, uint64_t alignment);

  // The HostAllocateFn to put in a RuntimeMemory (host_pool = this).
  static void* AllocateCallback(void* pool, uint64_t size, uint64_t alignment);
  // Sets `memory` to host-callback mode over this pool.
  void Attach(RuntimeMemory* memory);

  // Bytes currently mapped by this pool (page-rounded).
  uint64_t bytes_mapped() const;
  uint64_t num_mappings() const;
  // Bytes mapped by all live pools in the process.
  static uint64_t LiveBytesAllProcess();

 private:
  struct Mapping {
    void* address;
    size_t length;
  };
  const uint64_t limit_bytes_;
  mutable std::mutex mu_;
  std::vector<Mapping> mappings_;
  uint64_t bytes_mapped_ = 0;
};

}  // namespace sparse_runtime
}  // namespace accelmem

#endif  // ACCELMEM_SPARSE_RUNTIME_HOST_MEMORY_POOL_H_

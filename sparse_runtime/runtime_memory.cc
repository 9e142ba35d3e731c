// Freestanding implementation of RuntimeMemory (see runtime_memory.h).
#include "sparse_runtime/runtime_memory.h"

namespace accelmem {
namespace sparse_runtime {

void runtime_memory_init_host(RuntimeMemory* memory, HostAllocateFn host_allocate,
                              void* host_pool) {
  mem_zero(memory, sizeof(RuntimeMemory));
  memory->host_allocate = host_allocate;
  memory->host_pool = host_pool;
}

void runtime_memory_init_preallocated(RuntimeMemory* memory, Ptr base, u64 size) {
  mem_zero(memory, sizeof(RuntimeMemory));
  memory->prealloc_base = reinterpret_cast<u64>(base);
  memory->prealloc_head = reinterpret_cast<u64>(base);
  memory->prealloc_size = size;
}

Ptr allocate_aligned(RuntimeMemory* memory, u64 size, u64 alignment, bool request) {
  if (alignment == 0) alignment = 1;
  if (!is_power_of_two_u64(alignment)) {
    report_error(memory, kErrorInvalidArgument, "allocate_aligned: alignment is not a power of two",
                 static_cast<i64>(alignment));
    return nullptr;
  }
  Ptr result = nullptr;
  if (memory->prealloc_size > 0) {
    mutex_lock_i32(&memory->allocator_lock);
    u64 head = memory->prealloc_head;
    u64 start = (head + alignment - 1) & ~(alignment - 1);
    u64 end = memory->prealloc_base + memory->prealloc_size;
    if (start >= head && start <= end && size <= end - start) {
      memory->prealloc_head = start + size;
      result = reinterpret_cast<Ptr>(start);
    }
    mutex_unlock_i32(&memory->allocator_lock);
  } else if (memory->host_allocate != nullptr) {
    result = static_cast<Ptr>(memory->host_allocate(memory->host_pool, size, alignment));
  }
  if (result == nullptr) {
    report_error(memory, kErrorOutOfMemory, "out of runtime memory; bytes requested",
                 static_cast<i64>(size));
    return nullptr;
  }
  if (request) atomic_add(&memory->total_requested_memory, size);
  return result;
}

void report_error(RuntimeMemory* memory, i32 code, const char* message, i64 arg) {
  if (atomic_load_acquire(&memory->error_code) != kRuntimeOk) return;
  mutex_lock_i32(&memory->error_lock);
  if (atomic_load_relaxed(&memory->error_code) == kRuntimeOk) {
    i32 n = 0;
    const i32 cap = kErrorMessageCapacity - 1;
    while (n < cap && message[n] != '\0') {
      memory->error_message[n] = message[n];
      ++n;
    }
    if (arg >= 0 && n + 2 < cap) {
      memory->error_message[n++] = ':';
      memory->error_message[n++] = ' ';
      char digits[24];
      i32 d = 0;
      u64 v = static_cast<u64>(arg);
      do {
        digits[d++] = static_cast<char>('0' + v % 10);
        v /= 10;
      } while (v != 0);
      while (d > 0 && n < cap) memory->error_message[n++] = digits[--d];
    }
    memory->error_message[n] = '\0';
    atomic_store_release(&memory->error_code, code);
  }
  mutex_unlock_i32(&memory->error_lock);
}

void runtime_reset_error(RuntimeMemory* memory) {
  mutex_lock_i32(&memory->error_lock);
  memory->error_message[0] = '\0';
  atomic_store_release(&memory->error_code, static_cast<i32>(kRuntimeOk));
  mutex_unlock_i32(&memory->error_lock);
}

}  // namespace sparse_runtime
}  // namespace accelmem

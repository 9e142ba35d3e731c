// Freestanding implementation of RuntimeMemory (see runtime_memory.h).
#include "sparse_runtime/device/runtime_memory.h"

namespace accelmem {
namespace sparse_runtime {

void runtime_memory_init_host(RuntimeMemory* memory, HostAllocateFn host_allocate,
                              void* host_pool) {
  mem_zero(memory, sizeof(RuntimeMemory));
  memory->host_allocate = host_allocate;
  memory->host_pool = host_pool;
}

void runtime_memory_init_host_reserving(RuntimeMemory* memory, HostAllocateFn host_allocate,
                                        HostReserveFn host_reserve, HostCommitFn host_commit,
                                        void* host_pool) {
  runtime_memory_init_host(memory, host_allocate, host_pool);
  memory->host_reserve = host_reserve;
  memory->host_commit = host_commit;
}

void runtime_memory_init_preallocated(RuntimeMemory* memory, Ptr base, u64 size) {
  mem_zero(memory, sizeof(RuntimeMemory));
  memory->prealloc_base = reinterpret_cast<u64>(base);
  memory->prealloc_head = reinterpret_cast<u64>(base);
  memory->prealloc_size = size;
}

namespace {

// allocate_aligned without the error record: null when out of memory (`alignment` is a power of
// two).
Ptr try_allocate_aligned(RuntimeMemory* memory, u64 size, u64 alignment) {
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
  return result;
}

}  // namespace

Ptr allocate_aligned(RuntimeMemory* memory, u64 size, u64 alignment, bool request) {
  if (alignment == 0) alignment = 1;
  if (!is_power_of_two_u64(alignment)) {
    report_error(memory, kErrorInvalidArgument, "allocate_aligned: alignment is not a power of two",
                 static_cast<i64>(alignment));
    return nullptr;
  }
  Ptr result = try_allocate_aligned(memory, size, alignment);
  if (result == nullptr) {
    report_error(memory, kErrorOutOfMemory, "out of runtime memory; bytes requested",
                 static_cast<i64>(size));
    return nullptr;
  }
  if (request) atomic_add(&memory->total_requested_memory, size);
  return result;
}

Ptr reserve_address_space(RuntimeMemory* memory, u64 size, u64 alignment) {
#if defined(ARCH_cuda)
  (void)memory;
  (void)size;
  (void)alignment;
  return nullptr;  // no host callback can run on a device
#else
  if (memory->prealloc_size > 0 || memory->host_reserve == nullptr ||
      memory->host_commit == nullptr || size == 0 || !is_power_of_two_u64(alignment)) {
    return nullptr;
  }
  return static_cast<Ptr>(memory->host_reserve(memory->host_pool, size, alignment));
#endif
}

bool commit_address_space(RuntimeMemory* memory, Ptr address, u64 size, bool request) {
  bool ok = false;
#if !defined(ARCH_cuda)
  if (memory->host_commit != nullptr) ok = memory->host_commit(memory->host_pool, address, size);
#else
  (void)address;
#endif
  if (!ok) {
    report_error(memory, kErrorOutOfMemory, "out of runtime memory; bytes requested",
                 static_cast<i64>(size));
    return false;
  }
  if (request) atomic_add(&memory->total_requested_memory, size);
  return true;
}

namespace {

// First error wins: writes code and message into (lock, code, message) unless an error is there.
void write_error(i32* lock, i32* code_slot, char* out, i32 code, const char* message, i64 arg) {
  if (atomic_load_acquire(code_slot) != kRuntimeOk) return;
  mutex_lock_i32(lock);
  if (atomic_load_relaxed(code_slot) == kRuntimeOk) {
    i32 n = 0;
    const i32 cap = kErrorMessageCapacity - 1;
    while (n < cap && message[n] != '\0') {
      out[n] = message[n];
      ++n;
    }
    if (arg >= 0 && n + 2 < cap) {
      out[n++] = ':';
      out[n++] = ' ';
      char digits[24];
      i32 d = 0;
      u64 v = static_cast<u64>(arg);
      do {
        digits[d++] = static_cast<char>('0' + v % 10);
        v /= 10;
      } while (v != 0);
      while (d > 0 && n < cap) out[n++] = digits[--d];
    }
    out[n] = '\0';
    atomic_store_release(code_slot, code);
  }
  mutex_unlock_i32(lock);
}

void clear_error(i32* lock, i32* code_slot, char* out) {
  mutex_lock_i32(lock);
  out[0] = '\0';
  atomic_store_release(code_slot, static_cast<i32>(kRuntimeOk));
  mutex_unlock_i32(lock);
}

}  // namespace

void report_error(RuntimeMemory* memory, i32 code, const char* message, i64 arg) {
#if !defined(ARCH_cuda)
  // Devices never route (no host callback can run there): no indirect call in device code.
  const ErrorRecordFn route = memory->error_record;
  RuntimeErrorRecord* record = route != nullptr ? route(memory) : nullptr;
  if (record != nullptr) {
    record_error(record, code, message, arg);
    return;
  }
#endif
  write_error(&memory->error_lock, &memory->error_code, memory->error_message, code, message, arg);
}

void record_error(RuntimeErrorRecord* record, i32 code, const char* message, i64 arg) {
  write_error(&record->lock, &record->code, record->message, code, message, arg);
}

void runtime_reset_error(RuntimeMemory* memory) {
  clear_error(&memory->error_lock, &memory->error_code, memory->error_message);
}

void error_record_reset(RuntimeErrorRecord* record) {
  clear_error(&record->lock, &record->code, record->message);
}

}  // namespace sparse_runtime
}  // namespace accelmem

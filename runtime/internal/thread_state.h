// File: runtime/internal/thread_state.h
//
// The per-thread state of the host runtime, below SparseRuntime so that its struct-for engine
// (struct_for.h) can set it too: which runtime a thread holds locked, which runtime's parallel
// struct-for it is a worker of, and where its runtime errors go; and the scopes that set it. A
// runtime is named by its RuntimeContext (one per SparseRuntime, never moved).
#ifndef ACCELMEM_RUNTIME_INTERNAL_THREAD_STATE_H_
#define ACCELMEM_RUNTIME_INTERNAL_THREAD_STATE_H_

#include "sparse_runtime/device/runtime_context.h"

namespace accelmem {
namespace runtime {
namespace internal {

// The runtime whose shared lock this thread holds (re-entrant calls from visitors skip locking).
extern thread_local const sparse_runtime::RuntimeContext* tls_locked_runtime;
// The runtime whose ParallelStructFor this thread is running a task of, and its worker index
// (the worker's NodeCaches are used only for that runtime).
extern thread_local const sparse_runtime::RuntimeContext* tls_worker_runtime;
extern thread_local int tls_worker;

// Marks the current thread as holding `rt`'s shared lock for the scope (the tasks of a parallel
// struct-for run under their caller's lock), restoring the previous mark.
class LockedScope {
 public:
  explicit LockedScope(const sparse_runtime::RuntimeContext* rt) : previous_(tls_locked_runtime) {
    tls_locked_runtime = rt;
  }
  ~LockedScope() { tls_locked_runtime = previous_; }
  LockedScope(const LockedScope&) = delete;
  LockedScope& operator=(const LockedScope&) = delete;

 private:
  const sparse_runtime::RuntimeContext* previous_;
};

// Marks the current thread as worker `worker` of `rt` for the scope (restoring the previous
// marks: a visitor may run another runtime's struct-for inline).
class WorkerScope {
 public:
  WorkerScope(const sparse_runtime::RuntimeContext* rt, int worker)
      : previous_runtime_(tls_worker_runtime), previous_worker_(tls_worker) {
    tls_worker_runtime = rt;
    tls_worker = worker;
  }
  ~WorkerScope() {
    tls_worker_runtime = previous_runtime_;
    tls_worker = previous_worker_;
  }
  WorkerScope(const WorkerScope&) = delete;
  WorkerScope& operator=(const WorkerScope&) = delete;

 private:
  const sparse_runtime::RuntimeContext* previous_runtime_;
  int previous_worker_;
};

// Error routing (runtime_memory.h): the records this thread's runtime errors go to, one link per
// host operation (or struct-for task) in progress on the thread, innermost first. An error
// reported into a runtime's memory goes to the innermost link of that memory; a link with a null
// record sends it to the shared slot (garbage collection, which holds the runtime exclusively).
struct ErrorRoute {
  const sparse_runtime::RuntimeMemory* memory;
  sparse_runtime::RuntimeErrorRecord* record;
  ErrorRoute* outer;
};
extern thread_local ErrorRoute* tls_error_route;

// RuntimeMemory::error_record of every SparseRuntime.
sparse_runtime::RuntimeErrorRecord* RouteError(const sparse_runtime::RuntimeMemory* memory);

// Routes this thread's errors into `memory` to `record` for the scope.
class RouteScope {
 public:
  RouteScope(const sparse_runtime::RuntimeMemory* memory,
             sparse_runtime::RuntimeErrorRecord* record)
      : route_{memory, record, tls_error_route} {
    tls_error_route = &route_;
  }
  ~RouteScope() { tls_error_route = route_.outer; }
  RouteScope(const RouteScope&) = delete;
  RouteScope& operator=(const RouteScope&) = delete;

 private:
  ErrorRoute route_;
};

}  // namespace internal
}  // namespace runtime
}  // namespace accelmem

#endif  // ACCELMEM_RUNTIME_INTERNAL_THREAD_STATE_H_

// File: runtime/host_scopes.h
//
// Internal to //sparse_runtime (sparse_runtime.cc and sparse_runtime_struct_for.cc): the
// per-thread state of the host runtime (which runtime a thread holds locked, which struct-for it
// is a worker of, where its runtime errors go) and the scope objects that set it, plus the
// definitions of SparseRuntime's SharedLock and OpErrors.
#ifndef ACCELMEM_RUNTIME_HOST_SCOPES_H_
#define ACCELMEM_RUNTIME_HOST_SCOPES_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "runtime/sparse_runtime.h"

namespace accelmem {
namespace runtime {
namespace internal {

// The runtime whose shared lock this thread holds (re-entrant calls from visitors skip locking).
extern thread_local const SparseRuntime* tls_locked_runtime;
// The runtime whose ParallelStructFor this thread is running a task of, and its worker index
// (the worker's NodeCaches are used only for that runtime).
extern thread_local const SparseRuntime* tls_worker_runtime;
extern thread_local int tls_worker;

// Marks the current thread as worker `worker` of `rt` for the scope (restoring the previous
// marks: a visitor may run another runtime's struct-for inline).
class WorkerScope {
 public:
  WorkerScope(const SparseRuntime* rt, int worker)
      : previous_runtime_(tls_worker_runtime), previous_worker_(tls_worker) {
    tls_worker_runtime = rt;
    tls_worker = worker;
  }
  ~WorkerScope() {
    tls_worker_runtime = previous_runtime_;
    tls_worker = previous_worker_;
  }

 private:
  const SparseRuntime* previous_runtime_;
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

// A recorded runtime error as a status.
absl::Status ErrorStatus(sparse_runtime::i32 code, const char* message, absl::string_view what);

constexpr int32_t kListgenMaxCells = 1024;  // upstream taichi_listgen_max_element_size

}  // namespace internal

// Shared lock on gc_mu_, skipped when this thread already holds it for the same runtime.
class SparseRuntime::SharedLock {
 public:
  explicit SharedLock(SparseRuntime* rt) : rt_(rt), owns_(internal::tls_locked_runtime != rt) {
    if (owns_) {
      shard_ = rt_->gc_mu_.LockShared();
      previous_ = internal::tls_locked_runtime;
      internal::tls_locked_runtime = rt_;
    }
  }
  ~SharedLock() {
    if (owns_) {
      internal::tls_locked_runtime = previous_;
      rt_->gc_mu_.UnlockShared(shard_);
    }
  }

 private:
  SparseRuntime* rt_;
  bool owns_;
  int shard_ = 0;
  const SparseRuntime* previous_ = nullptr;
};

// The error record of one host operation: while it lives, runtime errors this thread reports into
// the runtime's memory go to it (and those of the workers the operation launches, which route
// theirs here with a RouteScope).
class SparseRuntime::OpErrors {
 public:
  explicit OpErrors(SparseRuntime* rt) : route_(&rt->context_.memory, &record_) {
    record_.lock = 0;
    record_.code = sparse_runtime::kRuntimeOk;
    record_.message[0] = '\0';
  }
  OpErrors(const OpErrors&) = delete;
  OpErrors& operator=(const OpErrors&) = delete;

  sparse_runtime::RuntimeErrorRecord* record() { return &record_; }
  bool failed() const {
    return sparse_runtime::error_record_code(&record_) != sparse_runtime::kRuntimeOk;
  }
  // The recorded error as a status (Internal if none), cleared.
  absl::Status Take(absl::string_view what) {
    absl::Status status =
        internal::ErrorStatus(sparse_runtime::error_record_code(&record_), record_.message, what);
    sparse_runtime::error_record_reset(&record_);
    return status;
  }
  void Clear() { sparse_runtime::error_record_reset(&record_); }
  // `status`, or, if that is OK but an error was recorded, that error: none is lost.
  absl::Status Finish(absl::Status status, const char* verb, const sparse_runtime::SNode& snode) {
    if (status.ok() && failed()) return Take(absl::StrCat(verb, " ", snode.DebugPath()));
    return status;
  }

 private:
  sparse_runtime::RuntimeErrorRecord record_;
  internal::RouteScope route_;
};

}  // namespace runtime
}  // namespace accelmem

#endif  // ACCELMEM_RUNTIME_HOST_SCOPES_H_

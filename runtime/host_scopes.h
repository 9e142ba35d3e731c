// File: runtime/host_scopes.h
//
// Internal to //runtime:sparse_runtime (sparse_runtime.cc and sparse_runtime_struct_for.cc): the
// definitions of SparseRuntime's SharedLock and OpErrors, over the per-thread state of the host
// runtime (which runtime a thread holds locked, where its runtime errors go), which lives in
// runtime/internal/thread_state.h so that the struct-for engine below can set it too.
#ifndef ACCELMEM_RUNTIME_HOST_SCOPES_H_
#define ACCELMEM_RUNTIME_HOST_SCOPES_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "runtime/internal/thread_state.h"
#include "runtime/sparse_runtime.h"

namespace accelmem {
namespace runtime {
namespace internal {

// A recorded runtime error as a status.
absl::Status ErrorStatus(sparse_runtime::i32 code, const char* message, absl::string_view what);

}  // namespace internal

// Shared lock on gc_mu_, skipped when this thread already holds it for the same runtime.
class SparseRuntime::SharedLock {
 public:
  explicit SharedLock(SparseRuntime* rt)
      : rt_(rt), owns_(internal::tls_locked_runtime != &rt->context_) {
    if (owns_) {
      shard_ = rt_->gc_mu_.LockShared();
      previous_ = internal::tls_locked_runtime;
      internal::tls_locked_runtime = &rt_->context_;
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
  const sparse_runtime::RuntimeContext* previous_ = nullptr;
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

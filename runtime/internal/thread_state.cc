#include "runtime/internal/thread_state.h"

namespace accelmem {
namespace runtime {
namespace internal {

thread_local const sparse_runtime::RuntimeContext* tls_locked_runtime = nullptr;
thread_local const sparse_runtime::RuntimeContext* tls_worker_runtime = nullptr;
thread_local int tls_worker = -1;
thread_local ErrorRoute* tls_error_route = nullptr;

sparse_runtime::RuntimeErrorRecord* RouteError(const sparse_runtime::RuntimeMemory* memory) {
  for (ErrorRoute* route = tls_error_route; route != nullptr; route = route->outer) {
    if (route->memory == memory) return route->record;
  }
  return nullptr;
}

}  // namespace internal
}  // namespace runtime
}  // namespace accelmem

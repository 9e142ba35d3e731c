#include "runtime/sparse_runtime_test_peer.h"

#include "runtime/internal/struct_for.h"

namespace accelmem {
namespace runtime {

absl::StatusOr<std::unique_ptr<SparseRuntime>> SparseRuntimeTestPeer::Create(
    const sparse_runtime::SNodeTree& tree, const SparseRuntimeOptions& options,
    const UpstreamEmulation& upstream) {
  internal::StructForOptions struct_for;
  struct_for.worker_caches = upstream.worker_caches;
  struct_for.reuse_lists = upstream.reuse_struct_for_lists;
  return SparseRuntime::Create(tree, options, upstream.one_pass_gc, struct_for);
}

int64_t SparseRuntimeTestPeer::list_generations(const SparseRuntime& rt) {
  return rt.engine_->list_generations();
}

double SparseRuntimeTestPeer::list_generation_seconds(const SparseRuntime& rt) {
  return rt.engine_->list_generation_seconds();
}

bool SparseRuntimeTestPeer::reuses_struct_for_lists(SparseRuntime& rt) {
  return rt.backend_ == nullptr && rt.engine_->reuses_lists();
}

internal::StructForEngine& SparseRuntimeTestPeer::engine(SparseRuntime& rt) { return *rt.engine_; }

}  // namespace runtime
}  // namespace accelmem

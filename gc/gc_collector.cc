#include "gc/gc_collector.h"

namespace accelmem {
namespace gc {

GcCollector::GcCollector(const GcCollectorOptions& options)
    : pool_(options.num_workers, options.min_parallel_bytes) {
  scratch_.order = options.order;
}

bool GcCollector::NeedsCollection(const NodeManager& nm) {
  return nm.recycled_list.valid_size() > 0;
}

absl::StatusOr<bool> GcCollector::CollectIfNeeded(NodeManager* nm) {
  if (!NeedsCollection(*nm)) return false;
  if (memory_ == nullptr) memory_ = nm->memory;
  if (nm->memory != memory_) {
    return absl::FailedPreconditionError(
        "GcCollector: managers of another runtime memory (one collector per runtime)");
  }
  absl::Status status = pool_.Collect(nm, &scratch_);
  if (!status.ok()) return status;
  ++num_collections_;
  return true;
}

absl::StatusOr<int> GcCollector::CollectAll(absl::Span<NodeManager* const> managers) {
  int ran = 0;
  for (NodeManager* nm : managers) {
    if (nm == nullptr) continue;
    absl::StatusOr<bool> collected = CollectIfNeeded(nm);
    if (!collected.ok()) return collected.status();
    ran += *collected ? 1 : 0;
  }
  return ran;
}

}  // namespace gc
}  // namespace accelmem

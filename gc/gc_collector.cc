#include "gc/gc_collector.h"

#include <algorithm>

namespace accelmem {
namespace gc {

GcCollector::GcCollector(const GcCollectorOptions& options)
    : order_(options.order), pool_(options.num_workers, options.min_parallel_bytes) {}

bool GcCollector::NeedsCollection(const NodeManager& nm) { return gc_needs_collection(&nm); }

absl::Status GcCollector::CheckMemory(const NodeManager* nm) {
  if (memory_ == nullptr) memory_ = nm->memory;
  if (nm->memory != memory_) {
    return absl::FailedPreconditionError(
        "GcCollector: managers of another runtime memory (one collector per runtime)");
  }
  return absl::OkStatus();
}

GcScratch* GcCollector::ScratchFor(const NodeManager* nm) {
  std::unique_ptr<GcScratch>& scratch = scratches_[nm];
  if (scratch == nullptr) {
    scratch = std::make_unique<GcScratch>();  // value-initialized: all zero, as the GC needs
    scratch->order = order_;
  }
  return scratch.get();
}

absl::StatusOr<bool> GcCollector::CollectIfNeeded(NodeManager* nm) {
  if (!NeedsCollection(*nm)) return false;
  if (absl::Status s = CheckMemory(nm); !s.ok()) return s;
  absl::Status status = pool_.Collect(nm, ScratchFor(nm));
  if (!status.ok()) return status;
  ++num_collections_;
  ++num_passes_;
  return true;
}

absl::StatusOr<int> GcCollector::CollectAll(absl::Span<NodeManager* const> managers) {
  entries_.clear();
  for (NodeManager* nm : managers) {
    if (nm == nullptr || !NeedsCollection(*nm)) continue;
    if (absl::Status s = CheckMemory(nm); !s.ok()) return s;
    entries_.push_back({nm, ScratchFor(nm), 0, 0});
  }
  if (entries_.empty()) return 0;
  // Allocators of one cell size next to each other: one stretch of the pass each.
  std::stable_sort(entries_.begin(), entries_.end(),
                   [](const GcBatchEntry& a, const GcBatchEntry& b) {
                     return a.nm->element_size < b.nm->element_size;
                   });
  absl::StatusOr<int> collected =
      pool_.CollectBatch(entries_.data(), static_cast<int>(entries_.size()));
  if (!collected.ok()) return collected.status();
  num_collections_ += *collected;
  ++num_passes_;
  return *collected;
}

}  // namespace gc
}  // namespace accelmem

#include "runtime/cpu/kernel_cache.h"

#include <algorithm>
#include <atomic>
#include <utility>

#include "absl/strings/str_cat.h"
#include "runtime/runtime_bitcode.h"

namespace accelmem {
namespace runtime {
namespace cpu {

using codegen::KernelBuilder;
using codegen::KernelModule;
using codegen::RangeFn;
using sparse_runtime::SNode;
using sparse_runtime::SNodeTree;

std::string TreeShapeKey(const SNodeTree& tree) {
  std::string key;
  for (int id = 0; id < tree.num_snodes(); ++id) {
    const SNode& s = tree.snode(id);
    absl::StrAppend(&key, "{", static_cast<int>(s.type()), ",",
                    s.parent() == nullptr ? -1 : s.parent()->id(), ",", static_cast<int>(s.dtype()),
                    ",", s.cell_size(), ",", s.container_size(), ",", s.offset_in_parent_cell(),
                    ",", s.num_cells_per_container(), ",", s.chunk_size(), ",",
                    s.allocator_node_size(), ",", s.has_sparse_descendant(), ",axes");
    for (int axis : s.axes()) absl::StrAppend(&key, ":", axis, "=", s.shape(axis));
    absl::StrAppend(&key, ",index");
    for (int axis : s.index_axes()) absl::StrAppend(&key, ":", axis, "=", s.extent(axis));
    absl::StrAppend(&key, "}");
  }
  return key;
}

absl::StatusOr<std::unique_ptr<KernelCache>> KernelCache::Create(
    absl::string_view runtime_bitcode) {
  auto jit = CpuJit::Create(runtime_bitcode);
  if (!jit.ok()) return jit.status();
  std::unique_ptr<KernelCache> cache(new KernelCache());
  cache->runtime_bitcode_ = runtime_bitcode;
  cache->jit_ = std::move(jit).value();
  return cache;
}

KernelCache* KernelCache::Default() {
  static KernelCache* cache = [] {
    auto created = Create(RuntimeBitcode(RuntimeArch::kX64));
    return created.ok() ? created->release() : nullptr;
  }();
  return cache;
}

absl::StatusOr<std::shared_ptr<const JitModule>> KernelCache::GetOrCompile(absl::string_view spec,
                                                                           const SNodeTree& tree,
                                                                           Build build) {
  std::string key = absl::StrCat(spec, "|", TreeShapeKey(tree));
  std::lock_guard<std::mutex> guard(mu_);
  auto it = modules_.find(key);
  if (it != modules_.end()) {
    ++hits_;
    return it->second;
  }
  ++misses_;
  auto builder = KernelBuilder::Create(runtime_bitcode_, tree);
  if (!builder.ok()) return builder.status();
  absl::Status status = build(**builder);
  if (!status.ok()) return status;
  KernelModule km = (*builder)->Finish();
  auto module = jit_->Compile(std::move(km.module), std::move(km.context), km.entry_points);
  if (!module.ok()) return module.status();
  std::shared_ptr<const JitModule> shared = std::move(module).value();
  modules_.emplace(std::move(key), shared);
  return shared;
}

int64_t KernelCache::hits() const {
  std::lock_guard<std::mutex> guard(mu_);
  return hits_;
}

int64_t KernelCache::misses() const {
  std::lock_guard<std::mutex> guard(mu_);
  return misses_;
}

int64_t ParallelRangeFor(ThreadPool* pool, RangeFn fn, void* ctx, int64_t begin, int64_t end) {
  const int64_t n = end - begin;
  if (n <= 0) return 0;
  const int64_t parts = std::min<int64_t>(n, 4 * static_cast<int64_t>(pool->num_threads()));
  std::atomic<int64_t> total{0};
  std::atomic<bool> failed{false};
  pool->ParallelFor(parts, [&](int64_t p, int) {
    const int64_t lo = begin + n * p / parts;
    const int64_t hi = begin + n * (p + 1) / parts;
    const int64_t r = fn(ctx, lo, hi);
    if (r < 0) {
      failed.store(true, std::memory_order_relaxed);
    } else {
      total.fetch_add(r, std::memory_order_relaxed);
    }
  });
  return failed.load() ? -1 : total.load();
}

}  // namespace cpu
}  // namespace runtime
}  // namespace accelmem

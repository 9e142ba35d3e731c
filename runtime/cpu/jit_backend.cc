#include "runtime/cpu/jit_backend.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace accelmem {
namespace runtime {
namespace cpu {

using codegen::KernelBuilder;
using codegen::PointFn;
using codegen::StructForFn;
using sparse_runtime::kNumPointOps;
using sparse_runtime::PointOp;
using sparse_runtime::SNode;
using sparse_runtime::SNodeType;

namespace {

constexpr int kStructFor = kNumPointOps;
constexpr int kStructForRuns = kNumPointOps + 1;
constexpr int kKinds = kNumPointOps + 2;

struct VisitData {
  KernelBackend::Visitor* visit;
  size_t num_indices;
};

void Trampoline(void* data, const int32_t* index, void* cell) {
  auto* d = static_cast<VisitData*>(data);
  (*d->visit)(absl::Span<const int32_t>(index, d->num_indices), cell);
}

struct RunData {
  KernelBackend::RunVisitor* visit;
  size_t num_indices;
};

void RunTrampoline(void* data, const int32_t* first_index, void* first, int64_t count,
                   int64_t stride) {
  auto* d = static_cast<RunData*>(data);
  (*d->visit)(absl::Span<const int32_t>(first_index, d->num_indices), first,
              static_cast<int32_t>(count), static_cast<uint64_t>(stride));
}

}  // namespace

JitBackend::JitBackend(SparseRuntime* rt, KernelCache* cache)
    : tree_(rt->tree()),
      cache_(cache),
      context_(rt),
      kernels_(new std::atomic<void*>[static_cast<size_t>(rt->tree().num_snodes()) * kKinds]) {
  for (int k = 0; k < tree_.num_snodes() * kKinds; ++k) kernels_[k].store(nullptr);
}

absl::StatusOr<std::unique_ptr<KernelBackend>> JitBackend::Create(SparseRuntime* rt,
                                                                  KernelCache* cache) {
  if (cache == nullptr) cache = KernelCache::Default();
  if (cache == nullptr) return absl::InternalError("JitBackend: the kernel cache failed to start");
  return std::unique_ptr<KernelBackend>(new JitBackend(rt, cache));
}

KernelBackendFactory JitBackend::Factory(KernelCache* cache) {
  return [cache](SparseRuntime* rt) { return Create(rt, cache); };
}

absl::StatusOr<void*> JitBackend::Kernel(int kind, const SNode& snode) {
  std::atomic<void*>& slot = kernels_[static_cast<size_t>(snode.id()) * kKinds + kind];
  void* fn = slot.load(std::memory_order_acquire);
  if (fn != nullptr) return fn;
  const std::string name = absl::StrCat(kind == kStructFor       ? "struct_for"
                                        : kind == kStructForRuns ? "struct_for_runs"
                                                                 : "point",
                                        kind, "_s", snode.id());
  auto module = cache_->GetOrCompile(name, tree_, [&](KernelBuilder& kb) {
    if (kind == kStructFor) return kb.AddStructFor(name, snode);
    if (kind == kStructForRuns) return kb.AddStructForRuns(name, snode);
    return kb.AddPoint(name, static_cast<PointOp>(kind), snode);
  });
  if (!module.ok()) return module.status();
  auto address = (*module)->Lookup(name);
  if (!address.ok()) return address.status();
  {
    std::lock_guard<std::mutex> guard(mu_);
    modules_.push_back(*module);
  }
  slot.store(*address, std::memory_order_release);
  return *address;
}

absl::StatusOr<int64_t> JitBackend::RunPoint(PointOp op, const SNode& snode, const int32_t* coord,
                                             void* value) {
  auto fn = Kernel(static_cast<int>(op), snode);
  if (!fn.ok()) return fn.status();
  return reinterpret_cast<PointFn>(*fn)(context_.get(), coord, value);
}

absl::Status JitBackend::StructFor(const SNode& snode, int64_t begin, int64_t end, Visitor visit) {
  auto fn = Kernel(kStructFor, snode);
  if (!fn.ok()) return fn.status();
  const SNode& leaf = snode.type() == SNodeType::kPlace ? *snode.parent() : snode;
  VisitData data{&visit, static_cast<size_t>(leaf.num_indices())};
  reinterpret_cast<StructForFn> (*fn)(context_.get(), begin, end, &Trampoline, &data);
  return absl::OkStatus();
}

absl::Status JitBackend::StructForRuns(const SNode& snode, int64_t begin, int64_t end,
                                       RunVisitor visit) {
  auto fn = Kernel(kStructForRuns, snode);
  if (!fn.ok()) return fn.status();
  const SNode& leaf = snode.type() == SNodeType::kPlace ? *snode.parent() : snode;
  RunData data{&visit, static_cast<size_t>(leaf.num_indices())};
  reinterpret_cast<codegen::StructForRunsFn> (*fn)(context_.get(), begin, end, &RunTrampoline,
                                                   &data);
  return absl::OkStatus();
}

}  // namespace cpu
}  // namespace runtime
}  // namespace accelmem

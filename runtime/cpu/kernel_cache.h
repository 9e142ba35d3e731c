// File: runtime/cpu/kernel_cache.h
//
// KernelCache: compiled kernel modules (CpuJit) keyed by (kernel spec, tree shape), so that a
// kernel is compiled once per process for every SparseRuntime whose SNode tree has the same shape
// (kernels take the runtime as a KernelContext argument, nothing runtime-specific is baked in).
// A cold compile is expensive (runtime linking, -O3, ORC codegen; jit_bench in
// benchmarks/README.md measures it); a hit is a map lookup.
//
//   auto module = KernelCache::Default()->GetOrCompile("fill", tree, [&](KernelBuilder& kb) {
//     return kb.AddRangeWrite("fill", *x, {{1, 0, 0}}, 1.0, 0.0);
//   });
//
// The spec string must name everything the build callback emits other than the tree (the caller
// chooses it; the tree shape is added by the cache via TreeShapeKey). Thread-safe; compilations
// are serialized. Modules live as long as the cache (the default cache: the process).
//
// ParallelRangeFor splits a range kernel over a ThreadPool (the host side of a parallel
// range-for, as upstream's CPU backend splits a range-for over its thread pool).
#ifndef ACCELMEM_RUNTIME_CPU_KERNEL_CACHE_H_
#define ACCELMEM_RUNTIME_CPU_KERNEL_CACHE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "codegen/kernel_builder.h"
#include "runtime/cpu/jit.h"
#include "runtime/thread_pool.h"
#include "sparse_runtime/snode_tree.h"

namespace accelmem {
namespace runtime {
namespace cpu {

// Identifies a finalized tree's shape as far as generated kernels see it (kinds, axes, shapes,
// sizes, offsets, types, chunking); equal keys => a kernel compiled for one tree runs on the
// other.
std::string TreeShapeKey(const sparse_runtime::SNodeTree& tree);

class KernelCache {
 public:
  using Build = absl::FunctionRef<absl::Status(codegen::KernelBuilder& builder)>;

  // A cache compiling against `runtime_bitcode` (x64), which must outlive it.
  static absl::StatusOr<std::unique_ptr<KernelCache>> Create(absl::string_view runtime_bitcode);
  // The process-wide cache over the embedded x64 runtime (never destroyed).
  static KernelCache* Default();

  // The module of `spec` for `tree`'s shape, built by `build` and compiled on a miss. Build and
  // compile errors are returned (and not cached).
  absl::StatusOr<std::shared_ptr<const JitModule>> GetOrCompile(
      absl::string_view spec, const sparse_runtime::SNodeTree& tree, Build build);

  int64_t hits() const;
  int64_t misses() const;

 private:
  KernelCache() = default;
  absl::string_view runtime_bitcode_;
  std::unique_ptr<CpuJit> jit_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<const JitModule>> modules_;
  int64_t hits_ = 0;
  int64_t misses_ = 0;
};

// Runs `fn` over [begin, end) in contiguous parts on `pool` (ceiling splits, about 4 parts per
// thread); returns the sum of the parts' results, or -1 if a part returned -1.
int64_t ParallelRangeFor(ThreadPool* pool, codegen::RangeFn fn, void* ctx, int64_t begin,
                         int64_t end);

}  // namespace cpu
}  // namespace runtime
}  // namespace accelmem

#endif  // ACCELMEM_RUNTIME_CPU_KERNEL_CACHE_H_

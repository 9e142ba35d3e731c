// jit_bench: JIT kernels over the sparse runtime against the native host API on the same tree.
//
//   * BM_Jit_CompileWriteSumKernels: cold compile time of a write + sum kernel module (kernel
//     builder, runtime linking, -O3, ORC codegen); BM_Jit_CompileCached: the same module from the
//     KernelCache keyed by (kernel spec, tree shape) (a hit: key + map lookup).
//   * BM_Write_{JitKernel,JitParallelRangeFor,HostApi}: writing 2^16 cells of
//     pointer(256).dense(256) f32, one cell per loop index, activating the path, by a JIT
//     range-for kernel (serial, and split over a 2-thread pool) and by SparseRuntime::Write.
//   * BM_Sum_{JitKernel,HostStructFor}: summing the same cells.
//   * BM_Activate_{JitKernel,JitBackend,HostApi}: activating 2^16 pointer cells of
//     pointer(65536) (deactivated and collected outside the timed region each iteration): a JIT
//     range-for write, SparseRuntime::Activate on the JIT backend, and natively.
//   * BM_Activate_JitKernel_AlreadyActive: the same range-for write over cells that are all
//     active already (the runtime's inline fast path: one slot load per level); its counters
//     count the calls left in the optimized kernel module to the runtime's out-of-line
//     Pointer_activate_cell_view / Pointer_lookup_cell_view (the calls the kernels make; 0:
//     inlined into the kernel) and to the activation's slow path Pointer_activate_cell_slow
//     (kept out of line: one call site per loop version LLVM makes).
//   * BM_ActivateWrite_AlreadyActive: that write interleaved with the same steps natively
//     (header-inline forms) and with upstream's inlined functions (see there).
//   * BM_StructFor_{JitKernel,JitBackend,HostApi}: visiting the 2^16 active cells of the first
//     tree with a summing visitor: the struct-for kernel called directly, SparseRuntime::StructFor
//     on the JIT backend, and natively.
//   * BM_Deactivate_JitKernel: the range-deactivate kernel interleaved with the same kernel
//     recycling per call, native per-call and cached deactivation and upstream's (see there).
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "benchmark/benchmark.h"
#include "benchmarks/baselines/paired_timing.h"
#include "benchmarks/baselines/upstream_node_manager.h"
#include "benchmarks/baselines/upstream_snodes.h"
#include "benchmarks/baselines/upstream_tree.h"
#include "codegen/kernel_builder.h"
#include "runtime/cpu/jit.h"
#include "runtime/cpu/jit_backend.h"
#include "runtime/cpu/kernel_cache.h"
#include "runtime/kernel_context.h"
#include "runtime/runtime_bitcode.h"
#include "runtime/sparse_runtime.h"
#include "sparse_runtime/device/snode_pointer.h"
#include "sparse_runtime/device/struct_meta.h"
#include "sparse_runtime/snode_tree.h"

namespace {

using accelmem::baselines::RunInterleaved;
using accelmem::codegen::KernelBuilder;
using accelmem::codegen::RangeFn;
using accelmem::codegen::RangeSumFn;
using accelmem::codegen::StructForFn;
using accelmem::runtime::BoundKernelContext;
using accelmem::runtime::RuntimeArch;
using accelmem::runtime::RuntimeBitcode;
using accelmem::runtime::SparseRuntime;
using accelmem::runtime::SparseRuntimeOptions;
using accelmem::runtime::ThreadPool;
using accelmem::runtime::cpu::CpuJit;
using accelmem::runtime::cpu::JitBackend;
using accelmem::runtime::cpu::JitModule;
using accelmem::runtime::cpu::KernelCache;
using accelmem::sparse_runtime::Axis;
using accelmem::sparse_runtime::SNode;
using accelmem::sparse_runtime::SNodeTree;

constexpr int64_t kCells = 1 << 16;

template <typename T>
T Check(absl::StatusOr<T> value) {
  if (!value.ok()) {
    std::fprintf(stderr, "jit_bench: %s\n", value.status().ToString().c_str());
    std::abort();
  }
  return std::move(value).value();
}

void Check(const absl::Status& status) {
  if (!status.ok()) {
    std::fprintf(stderr, "jit_bench: %s\n", status.ToString().c_str());
    std::abort();
  }
}

struct Fixture {
  explicit Fixture(bool jit_backend = false) {
    tree.root().pointer(Axis(0), 256).dense(Axis(0), 256).place<float>("x");
    Check(tree.Finalize());
    SparseRuntimeOptions options;
    if (jit_backend) options.kernel_backend = JitBackend::Factory();
    rt = Check(SparseRuntime::Create(tree, options));
    x = tree.FindPlace("x");
    jit = Check(CpuJit::Create(RuntimeBitcode(RuntimeArch::kX64)));
    ctx = std::make_unique<BoundKernelContext>(rt.get());
  }
  std::unique_ptr<JitModule> Compile() {
    auto builder = Check(KernelBuilder::Create(RuntimeBitcode(RuntimeArch::kX64), tree));
    Check(builder->AddRangeWrite("write", *x, {{1, 0, 0}}, 1.0, 0.5));
    Check(builder->AddRangeSum("sum", *x, {{1, 0, 0}}));
    auto kernel = builder->Finish();
    return Check(
        jit->Compile(std::move(kernel.module), std::move(kernel.context), kernel.entry_points));
  }
  SNodeTree tree;
  std::unique_ptr<SparseRuntime> rt;
  const SNode* x = nullptr;
  std::unique_ptr<CpuJit> jit;
  std::unique_ptr<BoundKernelContext> ctx;
};

void BM_Jit_CompileWriteSumKernels(benchmark::State& state) {
  Fixture f;
  for (auto _ : state) benchmark::DoNotOptimize(f.Compile());
}
BENCHMARK(BM_Jit_CompileWriteSumKernels)->Unit(benchmark::kMillisecond);

void BM_Write_JitKernel(benchmark::State& state) {
  Fixture f;
  auto module = f.Compile();
  auto write = reinterpret_cast<RangeFn>(Check(module->Lookup("write")));
  for (auto _ : state) benchmark::DoNotOptimize(write(f.ctx->get(), 0, kCells));
  state.SetItemsProcessed(state.iterations() * kCells);
}
BENCHMARK(BM_Write_JitKernel)->Unit(benchmark::kMicrosecond);

void BM_Write_HostApi(benchmark::State& state) {
  Fixture f;
  for (auto _ : state) {
    for (int32_t i = 0; i < kCells; ++i) {
      Check(f.rt->Write<float>(*f.x, {i}, static_cast<float>(i) + 0.5f));
    }
  }
  state.SetItemsProcessed(state.iterations() * kCells);
}
BENCHMARK(BM_Write_HostApi)->Unit(benchmark::kMicrosecond);

void BM_Sum_JitKernel(benchmark::State& state) {
  Fixture f;
  auto module = f.Compile();
  auto write = reinterpret_cast<RangeFn>(Check(module->Lookup("write")));
  auto sum = reinterpret_cast<RangeSumFn>(Check(module->Lookup("sum")));
  write(f.ctx->get(), 0, kCells);
  for (auto _ : state) benchmark::DoNotOptimize(sum(f.ctx->get(), 0, kCells));
  state.SetItemsProcessed(state.iterations() * kCells);
}
BENCHMARK(BM_Sum_JitKernel)->Unit(benchmark::kMicrosecond);

void BM_Sum_HostStructFor(benchmark::State& state) {
  Fixture f;
  for (int32_t i = 0; i < kCells; ++i) Check(f.rt->Write<float>(*f.x, {i}, 1.0f));
  for (auto _ : state) {
    double total = 0;
    Check(f.rt->StructFor(*f.x, [&total](absl::Span<const int32_t>, void* value) {
      total += *static_cast<float*>(value);
    }));
    benchmark::DoNotOptimize(total);
  }
  state.SetItemsProcessed(state.iterations() * kCells);
}
BENCHMARK(BM_Sum_HostStructFor)->Unit(benchmark::kMicrosecond);

void BM_Jit_CompileCached(benchmark::State& state) {
  Fixture f;
  auto build = [&](KernelBuilder& kb) {
    absl::Status s = kb.AddRangeWrite("write", *f.x, {{1, 0, 0}}, 1.0, 0.5);
    if (s.ok()) s = kb.AddRangeSum("sum", *f.x, {{1, 0, 0}});
    return s;
  };
  Check(KernelCache::Default()->GetOrCompile("bench_write_sum", f.tree, build));
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        Check(KernelCache::Default()->GetOrCompile("bench_write_sum", f.tree, build)));
  }
}
BENCHMARK(BM_Jit_CompileCached)->Unit(benchmark::kMicrosecond);

void BM_Write_JitParallelRangeFor(benchmark::State& state) {
  Fixture f;
  auto module = f.Compile();
  auto write = reinterpret_cast<RangeFn>(Check(module->Lookup("write")));
  ThreadPool pool(2);
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        accelmem::runtime::cpu::ParallelRangeFor(&pool, write, f.ctx->get(), 0, kCells));
  }
  state.SetItemsProcessed(state.iterations() * kCells);
}
BENCHMARK(BM_Write_JitParallelRangeFor)->Unit(benchmark::kMicrosecond)->UseRealTime();

// pointer(2^16) of i32: one pointer cell per index.
struct PointerFixture {
  explicit PointerFixture(bool jit_backend) {
    tree.root().pointer(Axis(0), kCells).place<int32_t>("v");
    Check(tree.Finalize());
    SparseRuntimeOptions options;
    options.auto_collect = false;
    if (jit_backend) options.kernel_backend = JitBackend::Factory();
    rt = Check(SparseRuntime::Create(tree, options));
    ptr = tree.FindPlace("v")->parent();
    ctx = std::make_unique<BoundKernelContext>(rt.get());
    module = Check(KernelCache::Default()->GetOrCompile(
        "bench_activate_deactivate", tree, [&](KernelBuilder& kb) {
          absl::Status s = kb.AddRangeWrite("activate", *tree.FindPlace("v"), {{1, 0, 0}}, 0, 1);
          if (s.ok()) s = kb.AddRangeDeactivate("deactivate", *ptr, {{1, 0, 0}});
          return s;
        }));
    activate = reinterpret_cast<RangeFn>(Check(module->Lookup("activate")));
    deactivate = reinterpret_cast<RangeFn>(Check(module->Lookup("deactivate")));
  }
  void Reset(benchmark::State& state) {
    state.PauseTiming();
    if (deactivate(ctx->get(), 0, kCells) < 0) std::abort();
    Check(rt->CollectGarbage());
    state.ResumeTiming();
  }
  SNodeTree tree;
  std::unique_ptr<SparseRuntime> rt;
  const SNode* ptr = nullptr;
  std::unique_ptr<BoundKernelContext> ctx;
  std::shared_ptr<const accelmem::runtime::cpu::JitModule> module;
  RangeFn activate = nullptr;
  RangeFn deactivate = nullptr;
};

void BM_Activate_JitKernel(benchmark::State& state) {
  PointerFixture f(false);
  for (auto _ : state) {
    f.Reset(state);
    if (f.activate(f.ctx->get(), 0, kCells) != kCells) std::abort();
  }
  state.SetItemsProcessed(state.iterations() * kCells);
}
BENCHMARK(BM_Activate_JitKernel)->Unit(benchmark::kMicrosecond);

// Calls to the runtime function `fn` of accelmem::sparse_runtime in the optimized IR of a kernel
// module: to its extern "C" entry point (accelmem_<fn>, kernel_abi.h) or to the C++ function
// itself (Itanium-mangled: ...14sparse_runtime<length><fn>E...).
int CallsTo(const JitModule& module, const std::string& fn) {
  const std::string& ir = module.optimized_ir();
  const std::string needles[] = {"@accelmem_" + fn + "(",
                                 "14sparse_runtime" + std::to_string(fn.size()) + fn + "E"};
  int calls = 0;
  for (const std::string& needle : needles) {
    for (size_t at = ir.find(needle); at != std::string::npos; at = ir.find(needle, at + 1)) {
      const size_t line = ir.rfind('\n', at);
      const std::string head = ir.substr(line + 1, at - line - 1);
      if (head.find("call ") != std::string::npos) ++calls;
    }
  }
  return calls;
}

void BM_Activate_JitKernel_AlreadyActive(benchmark::State& state) {
  PointerFixture f(false);
  if (f.activate(f.ctx->get(), 0, kCells) != kCells) std::abort();
  for (auto _ : state) {
    if (f.activate(f.ctx->get(), 0, kCells) != kCells) std::abort();
  }
  state.SetItemsProcessed(state.iterations() * kCells);
  // 0 calls means "inlined" (so does a misspelt name: the names are those of snode_pointer.h).
  for (const char* fn :
       {"Pointer_activate_cell_view", "Pointer_lookup_cell_view", "Pointer_activate_cell_slow"}) {
    state.counters[std::string("calls_") + fn] = CallsTo(*f.module, fn);
  }
}
BENCHMARK(BM_Activate_JitKernel_AlreadyActive)->Unit(benchmark::kMicrosecond);

// Interleaved (benchmarks/baselines/paired_timing.h): the same range-for write over 2^16 pointer
// cells that are all active already -- per cell: activate (a no-op), look up, store 1 -- by
// `jit` (the kernel above, runtime inlined), `native` (the same steps in C++ through the
// header-inline forms, in a loop that Pointer_with_view(StaticMeta) instantiates for the
// contiguous view, on the same runtime's tree), `native_view` (that loop over Pointer_view: the
// origin tested per cell), `native_fused` (activate and look up fused:
// Pointer_activate_cell_inline, through Pointer_with_view) and `upstream_inlined` (upstream's
// inlined activate and lookup over compile-time constants, on upstream's own pointer container
// and NodeManager from the same kind of pool). One round each per iteration; counters
// `<name>_ns` per cell and jit_vs_upstream_inlined, native_vs_upstream_inlined,
// native_view_vs_upstream_inlined, native_fused_vs_upstream_inlined and jit_vs_native = the
// second-named contender's time / the first-named one's (> 1: the first is faster).
void BM_ActivateWrite_AlreadyActive(benchmark::State& state) {
  namespace sr = accelmem::sparse_runtime;
  namespace baselines = accelmem::baselines;
  PointerFixture f(false);
  if (f.activate(f.ctx->get(), 0, kCells) != kCells) std::abort();
  const sr::Ptr meta = f.rt->meta(*f.ptr);
  const sr::Ptr node = f.rt->context()->root + f.ptr->offset_in_parent_cell();
  using Static =
      sr::PointerStaticMeta<kCells, 4, sr::NodeManager::cell_stride(4, alignof(int32_t))>;
  const Static sm{meta};
  if (!sm.matches()) {
    state.SkipWithError("compile-time meta does not match the tree");
    return;
  }
  // Upstream: its pointer container (lock and pointer per cell) and NodeManager of 8-byte cells.
  baselines::UpstreamTree up(8, kCells, baselines::UpstreamPointerContainerBytes(kCells), 8);
  using UpPointer = baselines::UpstreamInlinedPointer<kCells>;
  for (int32_t i = 0; i < kCells; ++i) UpPointer::activate(up.node, i, up.nm.get());
  // The native activate, look up and write loop over one view (copied into a local: see below).
  auto activate_then_write = [](const auto& view0, sr::Ptr node) {
    const auto view = view0;
    for (int32_t i = 0; i < kCells; ++i) {
      sr::Pointer_activate_inline(view, node, i);
      *reinterpret_cast<int32_t*>(sr::Pointer_lookup_element_inline(view, node, i)) = 1;
    }
  };
  RunInterleaved(
      state, kCells,
      {{"jit",
        [&] {
          if (f.activate(f.ctx->get(), 0, kCells) != kCells) std::abort();
        }},
       // Each round copies what it captured into locals first: the stores into the cells could
       // alias the closure's members, so the compiler would reload them on every cell (a kernel
       // keeps them in locals too).
       {"native",
        [sm0 = sm, node0 = node, activate_then_write] {
          const sr::Ptr node = node0;
          sr::Pointer_with_view(sm0, [node, activate_then_write](const auto& view) {
            activate_then_write(view, node);
          });
        }},
       // The same loop over Pointer_view only: each cell's address tests the view's origin.
       {"native_view", [view0 = sr::Pointer_view(sm), node0 = node,
                        activate_then_write] { activate_then_write(view0, node0); }},
       // The same write through Pointer_activate_cell_inline (one slot load hands back the cell).
       {"native_fused",
        [sm0 = sm, node0 = node] {
          const sr::Ptr node = node0;
          sr::Pointer_with_view(sm0, [node](const auto& view0) {
            const auto view = view0;
            for (int32_t i = 0; i < kCells; ++i) {
              sr::Ptr cell;
              if (sr::Pointer_activate_cell_inline(view, node, i, &cell)) {
                *reinterpret_cast<int32_t*>(cell) = 1;
              }
            }
          });
        }},
       {"upstream_inlined",
        [up_node0 = up.node, ambient0 = up.ambient(), up_nm0 = up.nm.get()] {
          const sr::Ptr up_node = up_node0, ambient = ambient0;
          baselines::UpstreamNodeManager* const up_nm = up_nm0;
          for (int32_t i = 0; i < kCells; ++i) {
            UpPointer::activate(up_node, i, up_nm);
            *reinterpret_cast<int32_t*>(UpPointer::lookup_element(up_node, i, ambient)) = 1;
          }
        }}},
      "jit",
      {{"jit_vs_upstream_inlined", "upstream_inlined", "jit"},
       {"native_vs_upstream_inlined", "upstream_inlined", "native"},
       {"native_view_vs_upstream_inlined", "upstream_inlined", "native_view"},
       {"jit_vs_native", "native", "jit"},
       {"native_fused_vs_upstream_inlined", "upstream_inlined", "native_fused"}});
}
BENCHMARK(BM_ActivateWrite_AlreadyActive)->UseManualTime()->Unit(benchmark::kMicrosecond);

void ActivatePerCell(benchmark::State& state, bool jit_backend) {
  PointerFixture f(jit_backend);
  for (auto _ : state) {
    f.Reset(state);
    for (int32_t i = 0; i < kCells; ++i) Check(f.rt->Activate(*f.ptr, {i}));
  }
  state.SetItemsProcessed(state.iterations() * kCells);
}
void BM_Activate_JitBackend(benchmark::State& state) { ActivatePerCell(state, true); }
BENCHMARK(BM_Activate_JitBackend)->Unit(benchmark::kMicrosecond);
void BM_Activate_HostApi(benchmark::State& state) { ActivatePerCell(state, false); }
BENCHMARK(BM_Activate_HostApi)->Unit(benchmark::kMicrosecond);

void SumVisitor(void* data, const int32_t*, void* cell) {
  *static_cast<double*>(data) += *static_cast<float*>(cell);
}

void BM_StructFor_JitKernel(benchmark::State& state) {
  Fixture f;
  for (int32_t i = 0; i < kCells; ++i) Check(f.rt->Write<float>(*f.x, {i}, 1.0f));
  auto module = Check(KernelCache::Default()->GetOrCompile(
      "bench_struct_for", f.tree, [&](KernelBuilder& kb) { return kb.AddStructFor("sf", *f.x); }));
  auto sf = reinterpret_cast<StructForFn>(Check(module->Lookup("sf")));
  for (auto _ : state) {
    double total = 0;
    sf(f.ctx->get(), 0, accelmem::codegen::StructForExtent(*f.x), &SumVisitor, &total);
    if (total != kCells) std::abort();
  }
  state.SetItemsProcessed(state.iterations() * kCells);
}
BENCHMARK(BM_StructFor_JitKernel)->Unit(benchmark::kMicrosecond);

void StructForThroughRuntime(benchmark::State& state, bool jit_backend) {
  Fixture f(jit_backend);
  for (int32_t i = 0; i < kCells; ++i) Check(f.rt->Write<float>(*f.x, {i}, 1.0f));
  for (auto _ : state) {
    double total = 0;
    Check(f.rt->StructFor(*f.x, [&total](absl::Span<const int32_t>, void* value) {
      total += *static_cast<float*>(value);
    }));
    if (total != kCells) std::abort();
  }
  state.SetItemsProcessed(state.iterations() * kCells);
}
void BM_StructFor_JitBackend(benchmark::State& state) { StructForThroughRuntime(state, true); }
BENCHMARK(BM_StructFor_JitBackend)->Unit(benchmark::kMicrosecond);
void BM_StructFor_HostApi(benchmark::State& state) { StructForThroughRuntime(state, false); }
BENCHMARK(BM_StructFor_HostApi)->Unit(benchmark::kMicrosecond);

// Interleaved: deactivating the 2^16 active cells of pointer(2^16), in index order, by
// `jit` (the range-deactivate kernel: lookup, then Pointer_deactivate_cached through a NodeCache
// on the kernel's stack, flushed before it returns), `jit_per_call` (the same kernel built with
// KernelBuilderOptions::stack_node_cache = false: one Pointer_deactivate, and so one shared
// atomic, per cell), `native` (Pointer_deactivate per cell from C++), `native_cached` (through a
// NodeCache, flushed in the round) and `upstream` (upstream's deactivate, out of line, on its own
// container and NodeManager). Before each round, untimed: a GC and every cell active again.
// Counters `<name>_ns` per cell; jit_vs_upstream, jit_vs_jit_per_call and jit_vs_native_cached =
// the second-named contender's time / the first's (> 1: the first is faster).
void BM_Deactivate_JitKernel(benchmark::State& state) {
  namespace sr = accelmem::sparse_runtime;
  namespace baselines = accelmem::baselines;
  PointerFixture f(false);
  auto per_call_builder = Check(KernelBuilder::Create(
      RuntimeBitcode(RuntimeArch::kX64), f.tree, accelmem::codegen::KernelBuilderOptions{false}));
  Check(per_call_builder->AddRangeDeactivate("deactivate", *f.ptr, {{1, 0, 0}}));
  auto per_call_kernel = per_call_builder->Finish();
  auto per_call_module =
      Check(Check(CpuJit::Create(RuntimeBitcode(RuntimeArch::kX64)))
                ->Compile(std::move(per_call_kernel.module), std::move(per_call_kernel.context),
                          per_call_kernel.entry_points));
  const auto deactivate_per_call =
      reinterpret_cast<RangeFn>(Check(per_call_module->Lookup("deactivate")));
  const sr::Ptr meta = f.rt->meta(*f.ptr);
  const sr::Ptr node = f.rt->context()->root + f.ptr->offset_in_parent_cell();
  auto cache = std::make_unique<sr::NodeCache>();
  cache->init(sr::runtime_node_manager(sr::as_struct_meta(meta)->context, f.ptr->id()));
  auto reactivate = [&f] {
    Check(f.rt->CollectGarbage());
    if (f.activate(f.ctx->get(), 0, kCells) != kCells) std::abort();
  };
  // Upstream: one pointer SNode of 2^16 cells of 8 bytes (pointer cells hold the i32 place).
  baselines::UpstreamTree up(8, kCells, baselines::UpstreamPointerContainerBytes(kCells), 8);
  const sr::Ptr up_m = up.m();
  const sr::Ptr up_node = up.node;
  RunInterleaved(state, kCells,
                 {{"jit",
                   [&f] {
                     if (f.deactivate(f.ctx->get(), 0, kCells) != kCells) std::abort();
                   },
                   reactivate},
                  {"jit_per_call",
                   [&f, deactivate_per_call] {
                     if (deactivate_per_call(f.ctx->get(), 0, kCells) != kCells) std::abort();
                   },
                   reactivate},
                  {"native",
                   [meta, node] {
                     for (int32_t i = 0; i < kCells; ++i) sr::Pointer_deactivate(meta, node, i);
                   },
                   reactivate},
                  {"native_cached",
                   [meta, node, c = cache.get()] {
                     for (int32_t i = 0; i < kCells; ++i)
                       sr::Pointer_deactivate_cached(meta, node, i, c);
                     c->flush();
                   },
                   reactivate},
                  {"upstream",
                   [up_m, up_node] {
                     for (int32_t i = 0; i < kCells; ++i)
                       baselines::UpstreamPointer_deactivate(up_m, up_node, i);
                   },
                   [&] {
                     up.nm->gc_serial();
                     for (int32_t i = 0; i < kCells; ++i)
                       baselines::UpstreamPointer_activate(up_m, up_node, i);
                   }}},
                 "jit",
                 {{"jit_vs_upstream", "upstream", "jit"},
                  {"jit_vs_jit_per_call", "jit_per_call", "jit"},
                  {"jit_vs_native_cached", "native_cached", "jit"},
                  {"native_cached_vs_native", "native", "native_cached"}});
}
BENCHMARK(BM_Deactivate_JitKernel)->UseManualTime()->Unit(benchmark::kMicrosecond);

}  // namespace

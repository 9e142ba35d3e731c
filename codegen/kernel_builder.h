// File: codegen/kernel_builder.h
//
// KernelBuilder: emits LLVM IR (llvm::IRBuilder) for kernels over one SNode tree shape, walking
// the tree through the runtime's X_is_active / X_activate / X_lookup_element chain as Taichi's
// LLVM codegen does. Kernels call the runtime only through the extern "C" functions of
// kernel_abi/kernel_abi.h, declared with the types of their C declarations; the module is meant
// for //runtime/cpu:jit (which links, inlines and optimizes the runtime into it) or
// //runtime/cuda:ptx_codegen (the same IR).
//
//   ASSIGN_OR_RETURN(auto kb, KernelBuilder::Create(RuntimeBitcode(RuntimeArch::kX64), tree));
//   RETURN_IF_ERROR(kb->AddRangeWrite("fill", x, {{1, 0, 0}}, 2.0, 1.0));
//   auto kernel = kb->Finish();
//   ASSIGN_OR_RETURN(auto m, jit->Compile(std::move(kernel.module), std::move(kernel.context),
//                                         kernel.entry_points));
//   BoundKernelContext ctx(rt.get());  fill(ctx.get(), 0, n);
//
// Every kernel takes the runtime as its first argument, a KernelContext* (kernel_abi.h): the
// root, meta and ambient addresses are loaded from it, never baked in, so a compiled module works
// for any SparseRuntime whose tree has the same shape (see kernel_cache.h for the key).
//
// Kernel kinds. Range kernels iterate i over [begin, end) serially (ParallelRangeFor in
// kernel_cache.h splits the range over a thread pool); the place's coordinates are f(i), one
// CoordMap per index axis of the SNode, in SNode::index_axes order; iterations whose coordinates
// fall outside the index space are skipped.
//   * activate   `i64 (ctx, i64 begin, i64 end)`: activates the cell of a non-place SNode at
//     f(i) and its ancestors; returns the number of cells, or -1 as write.
//   * write      `i64 (ctx, i64 begin, i64 end)`: stores i*scale+offset (computed in double,
//     converted to the place's type) at f(i), activating every sparse level of the path; returns
//     the number of cells written, or -1 if an activation failed (allocator exhausted: the error
//     is recorded in the runtime context, as upstream) and the kernel stopped.
//   * sum        `double (ctx, i64 begin, i64 end)`: adds the values at f(i) (as double);
//     inactive cells count as 0.
//   * atomic add `i64 (ctx, begin, end)`: relaxed atomic i*scale+offset into f(i), activating;
//     returns additions or -1. Safe from several threads at once.
//   * deactivate `i64 (ctx, begin, end)`: deactivates the cell of a pointer/bitmasked/dynamic
//     SNode at f(i) (for dynamic: f gives the container index), first everything sparse below it
//     (no leak; upstream leaks them); returns the number of cells this call deactivated (with
//     several threads on one cell, only the one that took it counts it; dense: cells reached;
//     dynamic: lists reached). Safe from several threads at once. Recycled cells are on the
//     recycled list when it returns and become reusable after rt->CollectGarbage() (the host's
//     automatic collection does not see kernels); see KernelBuilderOptions::stack_node_cache.
//   * append     `i64 (ctx, begin, end)`: appends i*scale+offset to the dynamic list holding the
//     place, at container index f(i); returns appends, or -1 on an error recorded in the runtime
//     context (declared size exceeded: OutOfRange; allocator exhausted).
// Point kernels (the JIT execution backend): `i64 (ctx, const i32* coord, i8* value)`, with
// coord[axis] for every axis (kMaxAxes entries), see PointOp for each op's result.
// Struct-for kernels: `i64 (ctx, i64 begin, i64 end, void (*visit)(i8* data, const i32* index,
// i8* cell), i8* data)` visit every active cell of an SNode (for a place: its value in the
// parent's active cells) whose outermost path cell (the cell of path()[1]) lies in [begin, end),
// in layout order, and return the number visited (see StructForExtent). Struct-for-runs kernels
// take `void (*visit)(i8* data, const i32* first_index, i8* first_cell, i64 count, i64 stride)`:
// each container of a dense leaf (its part in [begin, end) at the outermost level) is one call of
// `count` cells, `stride` bytes apart, from the cell at first_index; other leaves give runs of
// one cell (stride 0). They return the number of cells visited.
// GC kernels (upstream gc_parallel_0/1/2(context, snode_id) and gc_serial) collect the
// allocator (NodeManager) of one pointer or dynamic SNode, reached as
// ctx->runtime->node_managers[snode id], by calling the runtime bitcode's own GC functions
// (gc/device/gc_scratch.h, phase*.h, gc_serial.h). `scratch` is a zero-initialized gc::GcScratch in
// memory the kernel can write (host memory for the CPU JIT, device memory on NVPTX); one scratch
// serves every allocator of a runtime, one collection at a time. See GcKernel for the protocol.
//
// Not thread-safe; one builder per module.
#ifndef ACCELMEM_CODEGEN_KERNEL_BUILDER_H_
#define ACCELMEM_CODEGEN_KERNEL_BUILDER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "sparse_runtime/point_op.h"
#include "sparse_runtime/snode_tree.h"

namespace accelmem {
namespace codegen {

// One coordinate as a function of the loop index: (i / divisor) % modulus + offset; modulus 0
// means no modulo. E.g. a 2-D sweep of width W: {{W, 0, 0}, {1, W, 0}}.
struct CoordMap {
  int64_t divisor = 1;
  int64_t modulus = 0;
  int64_t offset = 0;
};

// A finished kernel module, ready for CpuJit::Compile or cuda::CompileToPtx.
struct KernelModule {
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
  std::vector<std::string> entry_points;
};

// The struct-for visitor ABI.
using StructForVisitFn = void (*)(void* data, const int32_t* index, void* cell);
using StructForFn = int64_t (*)(void* ctx, int64_t begin, int64_t end, StructForVisitFn visit,
                                void* data);
using StructForRunsVisitFn = void (*)(void* data, const int32_t* first_index, void* first_cell,
                                      int64_t count, int64_t stride);
using StructForRunsFn = int64_t (*)(void* ctx, int64_t begin, int64_t end,
                                    StructForRunsVisitFn visit, void* data);
using PointFn = int64_t (*)(void* ctx, const int32_t* coord, void* value);
using RangeFn = int64_t (*)(void* ctx, int64_t begin, int64_t end);
using RangeSumFn = double (*)(void* ctx, int64_t begin, int64_t end);
// GC kernels (see GcKernel); `scratch` is a gc::GcScratch*.
using GcPrepareFn = int64_t (*)(void* ctx, void* scratch, int32_t num_workers);
using GcPhase0Fn = void (*)(void* ctx, void* scratch, int32_t worker, int32_t num_workers);
using GcPhase1Fn = void (*)(void* ctx, void* scratch, int32_t num_workers);
using GcPhase2Fn = void (*)(void* ctx, void* scratch, int32_t worker, int32_t num_workers,
                            int32_t lane, int32_t lanes);
using GcSerialFn = int64_t (*)(void* ctx, void* scratch);

// The GC kernels of one SNode allocator. A parallel collection is prepare (one thread), phase 0
// (every worker), phase 1 (one thread), phase 2 (every worker), with a barrier between steps
// (kernel launches on a GPU), all with the same num_workers (at most gc::kMaxGcWorkers), and no
// allocation or recycling of the SNode in flight. On the CPU, lanes = 1 (lane 0).
enum class GcKernel {
  kPrepare,  // GcPrepareFn: gc_scratch_reserve; 1, or 0 when memory ran out (recorded in the
             // runtime context; the collection still works, in recycling order)
  kPhase0,   // GcPhase0Fn: gc_phase0_compact_free_list
  kPhase1,   // GcPhase1Fn: gc_phase1_swap_lists
  kPhase2,   // GcPhase2Fn: gc_phase2_refill_and_zero
  kSerial,   // GcSerialFn: gc_serial, the whole collection on the calling thread; 1, or 0 when
             // the runtime has an error recorded afterwards
};
// (Every GC kernel does nothing, prepare and serial returning 0, when ctx's runtime has no
// allocator for the SNode: a context of another tree shape.)
inline constexpr int kNumGcKernels = 5;

// The name AddGc gives kernel `kind`: prefix + "_prepare" / "_phase0" / "_phase1" / "_phase2" /
// "_serial".
std::string GcKernelName(absl::string_view prefix, GcKernel kind);

// The range [0, extent) of a struct-for kernel over `snode`: the cells of the outermost level of
// its path (1 for the root). The one definition is the sparse runtime's (snode_tree.h), which its
// host struct-for splits the same way.
using sparse_runtime::StructForExtent;

struct KernelBuilderOptions {
  // Range-deactivate kernels over a CPU runtime recycle their pointer cells through a NodeCache
  // on the kernel's stack (Pointer_cache_init in sparse_runtime/device/snode_pointer.h: one
  // shared atomic per 1536 cells instead of one per cell; about 16 KiB of stack per call), flushed
  // before the kernel returns. false: one Pointer_deactivate per cell (as on NVPTX, always).
  bool stack_node_cache = true;
};

class KernelBuilder {
 public:
  // Reads the runtime module (bitcode bytes) for its triple and data layout, and checks it
  // against kernel_abi.h (CheckRuntimeBitcode). `tree` must be finalized and outlive the builder.
  static absl::StatusOr<std::unique_ptr<KernelBuilder>> Create(
      absl::string_view runtime_bitcode, const sparse_runtime::SNodeTree& tree,
      const KernelBuilderOptions& options = {});
  ~KernelBuilder();
  KernelBuilder(const KernelBuilder&) = delete;
  KernelBuilder& operator=(const KernelBuilder&) = delete;

  // Range kernels (above). InvalidArgument when the SNode is not of this builder's tree or of the
  // wrong kind, the number of coordinate maps differs from its index or a divisor/modulus is not
  // positive; AlreadyExists for a name used twice.
  absl::Status AddRangeActivate(absl::string_view name, const sparse_runtime::SNode& snode,
                                const std::vector<CoordMap>& coords);
  absl::Status AddRangeWrite(absl::string_view name, const sparse_runtime::SNode& place,
                             const std::vector<CoordMap>& coords, double scale, double offset);
  absl::Status AddRangeSum(absl::string_view name, const sparse_runtime::SNode& place,
                           const std::vector<CoordMap>& coords);
  absl::Status AddRangeAtomicAdd(absl::string_view name, const sparse_runtime::SNode& place,
                                 const std::vector<CoordMap>& coords, double scale, double offset);
  absl::Status AddRangeDeactivate(absl::string_view name, const sparse_runtime::SNode& snode,
                                  const std::vector<CoordMap>& coords);
  // `place` must sit directly under a dynamic SNode; coords map to the container index (the
  // dynamic's parent's index).
  absl::Status AddRangeAppend(absl::string_view name, const sparse_runtime::SNode& place,
                              const std::vector<CoordMap>& coords, double scale, double offset);

  // A point kernel for the JIT execution backend (op semantics: sparse_runtime::PointOp).
  absl::Status AddPoint(absl::string_view name, sparse_runtime::PointOp op,
                        const sparse_runtime::SNode& snode);
  // A struct-for kernel over the active cells of `snode`.
  absl::Status AddStructFor(absl::string_view name, const sparse_runtime::SNode& snode);
  // The same by runs of cells (a dense leaf container per call; see above).
  absl::Status AddStructForRuns(absl::string_view name, const sparse_runtime::SNode& snode);

  // A GC kernel for the allocator of `snode` (a pointer or dynamic SNode). InvalidArgument for
  // an SNode without an allocator or not of this tree, NotFound when the runtime bitcode lacks
  // the GC functions or the RuntimeContext layout, AlreadyExists for a name used twice.
  absl::Status AddGcKernel(absl::string_view name, GcKernel kind,
                           const sparse_runtime::SNode& snode);
  // The five GC kernels of `snode`, named GcKernelName(prefix, kind).
  absl::Status AddGc(absl::string_view prefix, const sparse_runtime::SNode& snode);

  // For NVPTX (a builder over runtime_cuda.bc): adds `void name(<kernel's params>, i64* result)`
  // around kernel `kernel`, to be marked as the PTX `.entry` (entries cannot return values).
  // Range and struct-for kernels: each thread of the grid runs its ceiling share of
  // [begin, end) and atomically adds its non-negative result to result[0] (as a double for
  // sums), or stores 1 to result[1] when its part failed (-1). Point kernels: global thread 0
  // runs the kernel and stores its result to result[0]. GC kernels take their worker and lane
  // ids from the grid as gc/device/gc_cuda_kernels.cc does:
  //   prepare `void (ctx, scratch, i32 num_workers, i64* result)`: global thread 0, result[0];
  //   phase 0 `void (ctx, scratch, i32 num_workers)`: global thread t < num_workers is worker t;
  //   phase 1 `void (ctx, scratch, i32 num_workers)`: global thread 0;
  //   phase 2 `void (ctx, scratch)`: block b of the grid is worker b, its threads are the lanes
  //     (launch as many blocks as phase 0 had workers; upstream uses blocks of 64 threads);
  //   serial  `void (ctx, scratch, i64* result)`: global thread 0, result[0].
  // NotFound for an unknown kernel, FailedPrecondition when the builder's triple is not NVPTX.
  absl::Status AddDeviceEntry(absl::string_view name, absl::string_view kernel);

  // OK if the runtime module (bitcode bytes) defines every function of kernel_abi.h with the
  // type of its declaration and was compiled with the header's layout; otherwise
  // FailedPrecondition naming each difference (InvalidArgument for bytes that are not bitcode).
  static absl::Status CheckRuntimeBitcode(absl::string_view runtime_bitcode);

  // Verifies nothing; hands the module over (the builder is empty afterwards).
  KernelModule Finish();

  struct Impl;  // private: codegen/internal/emitter.h

 private:
  explicit KernelBuilder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace codegen
}  // namespace accelmem

#endif  // ACCELMEM_CODEGEN_KERNEL_BUILDER_H_

// File: benchmarks/baselines/upstream_struct_for.h
//
// A benchmark-only re-implementation of how Taichi's LLVM backends run a struct-for over a sparse
// tree on the CPU, the baseline for accelmem's SparseRuntime::(Parallel)StructFor(Runs). Sources:
// https://github.com/taichi-dev/taichi/blob/master/taichi/runtime/llvm/runtime_module/runtime.cpp
// (`Element`, `element_listgen_root`, `element_listgen_nonroot`, `parallel_struct_for`,
// `cpu_struct_for_block_helper`), taichi/transforms/offload.cpp (one clear_list and one listgen
// task per SNode below the root on the loop's path, before every struct-for), and
// taichi/codegen/llvm/codegen_llvm.cpp (`create_offload_struct_for`, the body's loop). Kept:
//
//   Element        {Ptr element; i32 loop_bounds[2]; PhysicalCoordinates pcoord} (64 bytes, 12
//                  coordinates), one per container range of at most 1,024 cells, in an
//                  UpstreamListManager per SNode (64 Ki elements a chunk); the root's list holds
//                  one element (the root cell, bounds [0, 1)).
//   listgen root   parent = the root: one child container (lookup_element(root, 0), then the
//                  child's from_parent_element), cut into elements of min(n, 1,024) cells.
//   listgen        for each element of the parent's list, for each cell j in its bounds: refine
//   nonroot        the coordinates by j, and if parent.is_active(element, j), append the child
//                  container (lookup_element, from_parent_element) cut into elements of at most
//                  1,024 cells, each appended on its own (ListManager::append: an atomic add, a
//                  chunk test and a 64-byte copy). Serial on the CPU (the listgen task's loops
//                  start at 0 with a step of 1 there).
//   struct-for     list_size * element_split tasks on the thread pool (UpstreamThreadPool), task
//                  i covering part i % split of element i / split: bounds
//                  [lo + part * size / split, min(lo + (part + 1) * size / split, hi)), with
//                  size = min(leaf cells, 1,024) and split = size / block_dim (block_dim:
//                  min(128, cells of the leaf's parent) on the CPU). The task is the compiled
//                  body: for j in its bounds, refine the coordinates, test is_active where the
//                  leaf is a pointer or bitmasked, run the loop body.
//
// The SNode functions (is_active, lookup_element, get_num_elements, from_parent_element and the
// generated refine_coordinates) are the kinds' code with the meta's constants known at compile
// time (template arguments), inlined: upstream builds each listgen task's StructMeta in the task
// itself from constants, so LLVM resolves the meta's function pointers and inlines them after it
// inlines the runtime into the task. The loop body is a template functor, inlined into the task,
// as upstream compiles it; its per-task call (one per 128 cells here) goes through a function
// pointer, as upstream's pool calls it.
//
// Favourable to upstream, on purpose: the body gets its cell's address from the element
// (element + element_size * j), where upstream's lowered body looks x[I] up from the root on
// every cell (taichi/transforms/lower_access.cpp; on the loop's own tree without activation);
// upstream's per-task copy of the RuntimeContext and its thread-local buffer are left out.
#ifndef ACCELMEM_BENCHMARKS_BASELINES_UPSTREAM_STRUCT_FOR_H_
#define ACCELMEM_BENCHMARKS_BASELINES_UPSTREAM_STRUCT_FOR_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "benchmarks/baselines/upstream_list_manager.h"
#include "benchmarks/baselines/upstream_snodes.h"
#include "benchmarks/baselines/upstream_thread_pool.h"

namespace accelmem {
namespace baselines {

constexpr int kUpstreamMaxNumIndices = 12;                // taichi_max_num_indices
constexpr int32_t kUpstreamListgenMaxElementSize = 1024;  // taichi_listgen_max_element_size
constexpr int32_t kUpstreamElementListChunk = 64 * 1024;  // elements per element-list chunk
constexpr int32_t kUpstreamStructForBlockDim = 128;       // default_gpu_block_dim (CPU too)

struct UpstreamPhysicalCoordinates {
  int32_t val[kUpstreamMaxNumIndices];
};

struct UpstreamElement {
  Ptr element;
  int32_t loop_bounds[2];
  UpstreamPhysicalCoordinates pcoord;
};
static_assert(sizeof(UpstreamElement) == 64, "upstream's Element is 64 bytes");

// The refine_coordinates that upstream generates for an SNode splitting index 0 by kShape0 and
// index 1 by kShape1 (index 1 the faster, row-major; 1 = not split): for every index k,
// out[k] = in[k] * shape_k + (l % (acc_k * shape_k)) / acc_k, in unsigned arithmetic.
template <int32_t kShape0, int32_t kShape1 = 1>
struct UpstreamAxes {
  static constexpr int64_t kNumElements = int64_t{kShape0} * kShape1;
  static inline void refine_coordinates(const UpstreamPhysicalCoordinates& in,
                                        UpstreamPhysicalCoordinates* out, int32_t l) {
    const uint32_t u = static_cast<uint32_t>(l);
    for (int k = 0; k < kUpstreamMaxNumIndices; ++k) out->val[k] = in.val[k];
    if (kShape0 > 1) {
      constexpr uint32_t kAcc = static_cast<uint32_t>(kShape1);
      out->val[0] = in.val[0] * kShape0 + static_cast<int32_t>(u % (kAcc * kShape0) / kAcc);
    }
    if (kShape1 > 1) out->val[1] = in.val[1] * kShape1 + static_cast<int32_t>(u % kShape1);
  }
};

// The SNode kinds as the listgen and struct-for templates call them. kOffset: the byte offset of
// the SNode's container in its parent's cell (from_parent_element, upstream's generated GEP).
struct UpstreamRootSNode {
  static constexpr bool kHasActivity = false;
  static inline int32_t get_num_elements(Ptr) { return 1; }
  static inline bool is_active(Ptr, int32_t) { return true; }
  static inline Ptr lookup_element(Ptr node, int32_t) { return node; }
  static inline void refine_coordinates(const UpstreamPhysicalCoordinates& in,
                                        UpstreamPhysicalCoordinates* out, int32_t) {
    *out = in;
  }
};

template <typename Axes, std::size_t kOffset = 0>
struct UpstreamPointerSNode {
  using Inlined = UpstreamInlinedPointer<Axes::kNumElements>;
  static constexpr bool kHasActivity = true;
  static inline Ptr from_parent_element(Ptr parent_cell) { return parent_cell + kOffset; }
  static inline int32_t get_num_elements(Ptr) { return static_cast<int32_t>(Axes::kNumElements); }
  static inline bool is_active(Ptr node, int32_t i) { return Inlined::is_active(node, i); }
  inline Ptr lookup_element(Ptr node, int32_t i) const {
    return Inlined::lookup_element(node, i, ambient);
  }
  static inline void refine_coordinates(const UpstreamPhysicalCoordinates& in,
                                        UpstreamPhysicalCoordinates* out, int32_t l) {
    Axes::refine_coordinates(in, out, l);
  }
  Ptr ambient = nullptr;  // runtime->ambient_elements[snode_id]
};

template <typename Axes, std::size_t kElementSize, std::size_t kOffset = 0>
struct UpstreamDenseSNode {
  static constexpr bool kHasActivity = false;
  static constexpr std::size_t kCellBytes = kElementSize;
  static inline Ptr from_parent_element(Ptr parent_cell) { return parent_cell + kOffset; }
  static inline int32_t get_num_elements(Ptr) { return static_cast<int32_t>(Axes::kNumElements); }
  static inline bool is_active(Ptr, int32_t) { return true; }
  static inline Ptr lookup_element(Ptr node, int32_t i) {
    return UpstreamInlinedDense<kElementSize>::lookup_element(node, i);
  }
  static inline void refine_coordinates(const UpstreamPhysicalCoordinates& in,
                                        UpstreamPhysicalCoordinates* out, int32_t l) {
    Axes::refine_coordinates(in, out, l);
  }
};

// An element list as upstream's runtime creates one per SNode.
inline UpstreamListManager* NewUpstreamElementList(UpstreamAllocator allocator = {}) {
  return new UpstreamListManager(sizeof(UpstreamElement), kUpstreamElementListChunk, allocator);
}

// runtime_initialize_snodes: the root's list holds the root cell, bounds [0, 1), coordinates 0.
inline void UpstreamInitRootList(UpstreamListManager* root_list, Ptr root_cell) {
  UpstreamElement e{};
  e.element = root_cell;
  e.loop_bounds[0] = 0;
  e.loop_bounds[1] = 1;
  root_list->clear();
  root_list->append(&e);
}

template <typename Parent, typename Child>
void UpstreamElementListgenRoot(const Parent& parent, const UpstreamListManager& parent_list,
                                const Child& child, UpstreamListManager* child_list) {
  const UpstreamElement element = parent_list.get<UpstreamElement>(0);
  Ptr ch_element = child.from_parent_element(parent.lookup_element(element.element, 0));
  const int32_t ch_num_elements = child.get_num_elements(ch_element);
  const int32_t ch_element_size = std::min(ch_num_elements, kUpstreamListgenMaxElementSize);
  for (int32_t c = 0; c * ch_element_size < ch_num_elements; ++c) {
    UpstreamElement elem;
    elem.element = ch_element;
    elem.loop_bounds[0] = c * ch_element_size;
    elem.loop_bounds[1] = std::min((c + 1) * ch_element_size, ch_num_elements);
    elem.pcoord = element.pcoord;  // the root splits no index
    child_list->append(&elem);
  }
}

template <typename Parent, typename Child>
void UpstreamElementListgenNonroot(const Parent& parent, const UpstreamListManager& parent_list,
                                   const Child& child, UpstreamListManager* child_list) {
  const int32_t num_parent_elements = parent_list.size();
  for (int32_t i = 0; i < num_parent_elements; ++i) {
    const UpstreamElement element = parent_list.get<UpstreamElement>(i);
    for (int32_t j = element.loop_bounds[0]; j < element.loop_bounds[1]; ++j) {
      UpstreamPhysicalCoordinates refined_coord;
      parent.refine_coordinates(element.pcoord, &refined_coord, j);
      if (!parent.is_active(element.element, j)) continue;
      Ptr ch_element = child.from_parent_element(parent.lookup_element(element.element, j));
      const int32_t ch_num_elements = child.get_num_elements(ch_element);
      const int32_t ch_element_size = std::min(ch_num_elements, kUpstreamListgenMaxElementSize);
      for (int32_t ch_lower = 0; ch_lower < ch_num_elements; ch_lower += ch_element_size) {
        UpstreamElement elem;
        elem.element = ch_element;
        elem.loop_bounds[0] = ch_lower;
        elem.loop_bounds[1] = std::min(ch_lower + ch_element_size, ch_num_elements);
        elem.pcoord = refined_coord;
        child_list->append(&elem);
      }
    }
  }
}

// The struct-for's list-element size and split for a leaf of `leaf_cells` cells whose parent has
// `parent_cells` cells (create_offload_struct_for, with the CPU's block_dim).
struct UpstreamStructForShape {
  int32_t element_size;
  int32_t element_split;
};
inline UpstreamStructForShape UpstreamStructForShapeOf(int64_t leaf_cells, int64_t parent_cells) {
  const int32_t size =
      static_cast<int32_t>(std::min<int64_t>(leaf_cells, kUpstreamListgenMaxElementSize));
  const int32_t block_dim =
      static_cast<int32_t>(std::min<int64_t>(parent_cells, kUpstreamStructForBlockDim));
  return {size, std::max(1, size / block_dim + (size % block_dim != 0 ? 1 : 0))};
}

// parallel_struct_for on the CPU: task(element, lower, upper, thread_id) for each non-empty part
// of each element of `list`, on `num_threads` of `pool`'s workers.
template <typename Task>
void UpstreamParallelStructFor(UpstreamThreadPool* pool, int num_threads,
                               const UpstreamListManager& list, UpstreamStructForShape shape,
                               const Task& task) {
  struct Ctx {
    const UpstreamListManager* list;
    const Task* task;
    int32_t element_size;
    int32_t element_split;
  } ctx{&list, &task, shape.element_size, shape.element_split};
  // cpu_struct_for_block_helper
  auto helper = [](void* p, int thread_id, int i) {
    const Ctx& c = *static_cast<const Ctx*>(p);
    const int32_t element_id = i / c.element_split;
    const int32_t part_size = c.element_size / c.element_split;
    const int32_t part_id = i % c.element_split;
    const UpstreamElement& e = c.list->template get<UpstreamElement>(element_id);
    const int32_t lower = e.loop_bounds[0] + part_id * part_size;
    const int32_t upper = std::min(e.loop_bounds[0] + (part_id + 1) * part_size, e.loop_bounds[1]);
    if (lower < upper) (*c.task)(e, lower, upper, thread_id);
  };
  pool->Run(list.size() * shape.element_split, num_threads, &ctx, helper);
}

// The compiled task's loop over [lower, upper) of one element of `leaf`'s list:
// body(cell, coordinates) for each cell that is active (every cell of a dense leaf).
template <typename Leaf, typename Body>
inline void UpstreamStructForCells(const Leaf& leaf, const UpstreamElement& e, int32_t lower,
                                   int32_t upper, const Body& body) {
  for (int32_t j = lower; j < upper; ++j) {
    UpstreamPhysicalCoordinates coord;
    leaf.refine_coordinates(e.pcoord, &coord, j);
    if (Leaf::kHasActivity && !leaf.is_active(e.element, j)) continue;
    body(leaf.lookup_element(e.element, j), coord);
  }
}

}  // namespace baselines
}  // namespace accelmem

#endif  // ACCELMEM_BENCHMARKS_BASELINES_UPSTREAM_STRUCT_FOR_H_

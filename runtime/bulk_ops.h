// File: runtime/bulk_ops.h
//
// Bulk operations of the host API: whole loops over the cells of a place, in C++, on the
// runtime's thread pool. accelmem.sparse's Runtime.copy / fill_index / transform / scatter_add
// and its batched point operations are these (the Python binding only converts NumPy arrays and
// releases the GIL), and sparse_workload_bench measures them.
//
//   Copy(rt, src, dst)                       dst[I] = src[I]   (places of one parent and dtype)
//   FillIndex(rt, place, axis, scale, off)   place[I] = I[axis] * scale + off
//   Transform(rt, place, a, b, c, d)         place[I] = (a * v + b) / (c * v + d), v = place[I]
//   ScatterAdd(rt, place, rows, values, ...) place[rows[k]] += values[k], activating paths
//
// The first three visit the active cells by runs (SparseRuntime::ParallelStructForRuns): where
// the place's parent is dense, one call covers a task's range of a container, so the loops run at
// memory speed. ScatterAdd adds through the cells' addresses where the place's parent is dense
// (each row's value found from its container's base, as a compiled kernel finds it), else reads
// and writes each row through the host API; rows are split between workers by cell, so no two
// threads add to one cell and each cell adds its rows in row order (the same sums as one thread).
#ifndef ACCELMEM_RUNTIME_BULK_OPS_H_
#define ACCELMEM_RUNTIME_BULK_OPS_H_

#include <cstdint>
#include <mutex>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "runtime/sparse_runtime.h"
#include "sparse_runtime/snode_tree.h"

namespace accelmem {
namespace runtime {

// n rows of coordinates, `ndim` int32 each (an SNode's index, ascending axis order).
struct IndexRows {
  const int32_t* data = nullptr;
  int64_t n = 0;
  int ndim = 0;
  absl::Span<const int32_t> row(int64_t i) const {
    return absl::Span<const int32_t>(data + i * ndim, static_cast<size_t>(ndim));
  }
};

// dst[I] = src[I] for every active cell of `src` (two places of one parent and dtype: a bit copy).
absl::Status Copy(SparseRuntime& rt, const sparse_runtime::SNode& src,
                  const sparse_runtime::SNode& dst);

// place[I] = I[axis] * scale + offset over the active cells (computed in double, converted to
// the place's dtype; integers saturate, NaN gives 0).
absl::Status FillIndex(SparseRuntime& rt, const sparse_runtime::SNode& place, int axis,
                       double scale, double offset);

// place[I] = (a * v + b) / (c * v + d) over the active cells, v the old value: in the place's
// precision; an integer place needs c == 0 and computes in double (saturating).
absl::Status Transform(SparseRuntime& rt, const sparse_runtime::SNode& place, double a, double b,
                       double c, double d);

// What ScatterAdd keeps from one call to the next, its workers' buffers: fresh memory would fault
// its pages in on first touch, which costs as much as the adds themselves.
struct ScatterScratch {
  struct Worker {
    std::vector<char*> addr;    // the addresses of the rows the worker adds
    std::vector<uint32_t> row;  // and their row numbers
  };
  std::mutex mu;  // a call that finds it held uses buffers of its own
  std::vector<Worker> workers;
};

// place[rows.row(k)] += values[k] for every row (duplicates accumulate; integers wrap), activating
// the paths. `values`: rows.n values of the place's dtype, or with `scalar` one value added to
// every row. Coordinates outside the index space are OutOfRange before anything is added. Up to
// `threads` workers on the runtime's pool (fewer for small batches). `scratch` (optional) keeps
// the workers' buffers between calls.
absl::Status ScatterAdd(SparseRuntime& rt, const sparse_runtime::SNode& place,
                        const IndexRows& rows, const void* values, bool scalar, int threads,
                        ScatterScratch* scratch = nullptr);

// Runs fn(begin, end) over [0, n) split into `threads` contiguous ranges (one when n is small) on
// the runtime's pool; the error of the lowest range wins. The batched point operations of the
// Python binding run their rows so.
absl::Status RunRows(SparseRuntime& rt, int64_t n, int threads,
                     absl::FunctionRef<absl::Status(int64_t begin, int64_t end)> fn);

}  // namespace runtime
}  // namespace accelmem

#endif  // ACCELMEM_RUNTIME_BULK_OPS_H_

// File: python/ext/sparse_module.h
//
// The Python-side handles and batch helpers of the sparse submodule, shared by its batched point
// operations (sparse_module.cc) and its struct-for operations (sparse_struct_for_ops.cc).
#ifndef ACCELMEM_PYTHON_EXT_SPARSE_MODULE_H_
#define ACCELMEM_PYTHON_EXT_SPARSE_MODULE_H_

#include <pybind11/numpy.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "python/ext/common.h"

namespace accelmem {
namespace python {

struct PySNode {
  std::shared_ptr<sr::SNodeTree> tree;
  sr::SNode* node;
};

// Per worker of scatter_add: the addresses (and row numbers) of the rows it adds.
struct ScatterRows {
  std::vector<char*> addr;
  std::vector<uint32_t> row;
};
// What scatter_add keeps from one call to the next, its workers' buffers: fresh memory would
// fault its pages in on first touch, which costs as much as the adds themselves.
struct ScatterScratch {
  std::mutex mu;  // a call that finds it held uses buffers of its own
  std::vector<ScatterRows> workers;
};

struct PyRuntime {
  std::shared_ptr<sr::SNodeTree> tree;
  std::unique_ptr<runtime::SparseRuntime> rt;
  std::string backend;
  std::unique_ptr<ScatterScratch> scratch = std::make_unique<ScatterScratch>();

  // An SNode of this runtime's tree, given as a handle or (places) by name.
  const sr::SNode& Resolve(const py::object& obj) const {
    if (py::isinstance<py::str>(obj)) {
      std::string name = obj.cast<std::string>();
      const sr::SNode* s = tree->FindPlace(name);
      if (s == nullptr) RaiseStatus(absl::InvalidArgumentError("no place named '" + name + "'"));
      return *s;
    }
    const PySNode& s = obj.cast<const PySNode&>();
    if (s.tree != tree) {
      RaiseStatus(absl::InvalidArgumentError("the SNode belongs to another tree"));
    }
    return *s.node;
  }
};

using I32Array = py::array_t<int32_t, py::array::c_style | py::array::forcecast>;

// The coordinates of a batch, checked against an SNode's index space: n rows of ndim int32.
struct Coords {
  I32Array array;
  const int32_t* data = nullptr;
  int64_t n = 0;
  int ndim = 0;
};

// NumPy's name of a dtype ("float32", ...).
const char* NumpyTypeName(sr::DataType t);
// Reads an [N, ndim] (or [N] when ndim is 1) integer array and range-checks every coordinate
// against `s`'s index space before returning (IndexError); `container`: the dynamic axis is left
// out, as Append / Length / Deactivate of a dynamic take the container index.
Coords ReadCoords(const py::object& obj, const sr::SNode& s, bool container);
// ValueError unless `s` is a place.
void CheckPlace(const sr::SNode& s, const char* what);
// `values` as a contiguous array of the place's dtype with n entries (scalars broadcast).
py::array ValuesFor(const sr::SNode& place, const py::object& values, int64_t n);

// Runs fn(worker, workers) -> Status on `threads` threads (the caller is worker 0) with the GIL
// released; the lowest worker's error wins.
template <typename Fn>
void RunWorkers(int threads, const Fn& fn) {
  absl::Status status;
  {
    py::gil_scoped_release release;
    const int t = std::max(1, threads);
    std::vector<absl::Status> statuses(t);
    std::vector<std::thread> workers;
    for (int w = 1; w < t; ++w) workers.emplace_back([&, w] { statuses[w] = fn(w, t); });
    statuses[0] = fn(0, t);
    for (std::thread& th : workers) th.join();
    for (const absl::Status& s : statuses) {
      if (!s.ok()) {
        status = s;
        break;
      }
    }
  }
  Check(status);
}

// Runs fn(begin, end) -> Status over [0, n) split over `threads` threads (one when n is small)
// with the GIL released; the error of the lowest range wins.
template <typename Fn>
void RunRows(int64_t n, int threads, const Fn& fn) {
  const int t = n < 2 * std::max(1, threads) ? 1 : threads;
  RunWorkers(t, [&](int w, int workers) { return fn(n * w / workers, n * (w + 1) / workers); });
}

// Adds copy, fill_index, transform and scatter_add to the Runtime class (sparse_struct_for_ops.cc).
void BindSparseStructForOps(py::class_<PyRuntime>& runtime_class);

}  // namespace python
}  // namespace accelmem

#endif  // ACCELMEM_PYTHON_EXT_SPARSE_MODULE_H_

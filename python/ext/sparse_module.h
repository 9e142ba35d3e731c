// File: python/ext/sparse_module.h
//
// The Python-side handles and batch helpers of the sparse submodule, shared by its batched point
// operations (sparse_module.cc) and its struct-for operations (sparse_struct_for_ops.cc). The
// loops themselves are the runtime's (runtime/bulk_ops.h); here only NumPy and the GIL.
#ifndef ACCELMEM_PYTHON_EXT_SPARSE_MODULE_H_
#define ACCELMEM_PYTHON_EXT_SPARSE_MODULE_H_

#include <pybind11/numpy.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "python/ext/common.h"

namespace accelmem {
namespace python {

struct PySNode {
  std::shared_ptr<sr::SNodeTree> tree;
  sr::SNode* node;
};

struct PyRuntime {
  std::shared_ptr<sr::SNodeTree> tree;
  std::unique_ptr<runtime::SparseRuntime> rt;
  std::string backend;
  // scatter_add's worker buffers, kept from one call to the next.
  std::unique_ptr<runtime::ScatterScratch> scratch = std::make_unique<runtime::ScatterScratch>();

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

// Runs fn(begin, end) -> Status over the batch's rows [0, n), split into `threads` ranges on the
// runtime's pool (runtime::RunRows), with the GIL released; raises the lowest range's error.
template <typename Fn>
void RunRows(PyRuntime& r, int64_t n, int threads, const Fn& fn) {
  absl::Status status;
  {
    py::gil_scoped_release release;
    status = runtime::RunRows(*r.rt, n, threads, fn);
  }
  Check(status);
}

// Adds copy, fill_index, transform and scatter_add to the Runtime class (sparse_struct_for_ops.cc).
void BindSparseStructForOps(py::class_<PyRuntime>& runtime_class);

}  // namespace python
}  // namespace accelmem

#endif  // ACCELMEM_PYTHON_EXT_SPARSE_MODULE_H_

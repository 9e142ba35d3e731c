// File: python/ext/sparse_module.cc
//
// accelmem._accelmem.sparse: SNode trees built in Taichi's style and the SparseRuntime host API
// with batched operations over NumPy coordinate arrays.
//
// Batches: coordinates are an integer array of shape [N, ndim] (ndim = the SNode's number of
// indices; shape [N] is accepted when ndim is 1), read in place when int32 and C-contiguous.
// Every coordinate is range-checked before anything runs, so an IndexError leaves the runtime
// untouched. The GIL is released while a batch runs; with num_threads > 1 the rows are split
// into that many contiguous ranges run on the runtime's thread pool (runtime::RunRows of
// runtime/bulk_ops.h; SparseRuntime is thread-safe).
// Allocator exhaustion (MemoryError) can stop a batch part way: earlier rows stay applied.
// The struct-for operations (copy, fill_index, transform, scatter_add) are bound in
// sparse_struct_for_ops.cc (the loops are runtime/bulk_ops.h).
#include "python/ext/sparse_module.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace accelmem {
namespace python {

using sr::DataType;
using sr::SNode;
using sr::SNodeTree;
using sr::SNodeType;

const char* NumpyTypeName(DataType t) {
  switch (t) {
    case DataType::kI8:
      return "int8";
    case DataType::kI16:
      return "int16";
    case DataType::kI32:
      return "int32";
    case DataType::kI64:
      return "int64";
    case DataType::kU8:
      return "uint8";
    case DataType::kU16:
      return "uint16";
    case DataType::kU32:
      return "uint32";
    case DataType::kU64:
      return "uint64";
    case DataType::kF32:
      return "float32";
    case DataType::kF64:
      return "float64";
  }
  return "int32";
}

namespace {

struct PyTree {
  std::shared_ptr<SNodeTree> tree;
};

// "f32", "float32", numpy.float32, numpy.dtype('float32'), ...
DataType ToDataType(const py::object& obj) {
  static const DataType kAll[] = {DataType::kI8,  DataType::kI16, DataType::kI32, DataType::kI64,
                                  DataType::kU8,  DataType::kU16, DataType::kU32, DataType::kU64,
                                  DataType::kF32, DataType::kF64};
  if (py::isinstance<py::str>(obj)) {
    std::string s = obj.cast<std::string>();
    for (DataType t : kAll) {
      if (s == sr::DataTypeName(t)) return t;
    }
  }
  py::dtype dt;
  try {
    dt = py::dtype::from_args(obj);
  } catch (py::error_already_set&) {
    RaiseStatus(absl::InvalidArgumentError("unsupported dtype " + std::string(py::repr(obj))));
  }
  for (DataType t : kAll) {
    if (dt.equal(py::dtype(NumpyTypeName(t)))) return t;
  }
  RaiseStatus(absl::InvalidArgumentError("unsupported dtype " + std::string(py::str(dt))));
}

std::vector<int64_t> IntList(const py::object& obj, const char* what) {
  std::vector<int64_t> out;
  if (py::isinstance<py::int_>(obj)) {
    out.push_back(obj.cast<int64_t>());
  } else {
    try {
      out = obj.cast<std::vector<int64_t>>();
    } catch (py::cast_error&) {
      RaiseStatus(
          absl::InvalidArgumentError(std::string(what) + " must be an int or a list of ints"));
    }
  }
  return out;
}

// The builder SNode::kind(axes, sizes) of every BUILDER_AXES row of the kinds' table
// (sparse_runtime/device/snode_kind_table.h); the other kinds have builders of their own.
#define ACCELMEM_PY_ADD_CHILD_CASE(Kind, kind, Meta, flags, cells, deactivate, builder) \
  ACCELMEM_PY_ADD_CHILD_CASE_##builder##_(Kind, kind)
#define ACCELMEM_PY_ADD_CHILD_CASE_BUILDER_AXES_(Kind, kind) \
  case SNodeType::k##Kind:                                   \
    return node.kind({Axis(static_cast<int>(axes[I]))...}, {sizes[I]...});
#define ACCELMEM_PY_ADD_CHILD_CASE_BUILDER_OWN_(Kind, kind)
#define ACCELMEM_PY_ADD_CHILD_CASE_BUILDER_NONE_(Kind, kind)

template <size_t... I>
SNode& AddChildN(SNode& node, SNodeType type, const std::vector<int64_t>& axes,
                 const std::vector<int64_t>& sizes, std::index_sequence<I...>) {
  using sr::Axis;
  switch (type) {
    ACCELMEM_SNODE_KINDS(ACCELMEM_PY_ADD_CHILD_CASE)
    default:
      break;
  }
  RaiseStatus(absl::InternalError(std::string("no (axes, sizes) builder for a ") +
                                  sr::SNodeTypeName(type) + " SNode"));
}

#undef ACCELMEM_PY_ADD_CHILD_CASE
#undef ACCELMEM_PY_ADD_CHILD_CASE_BUILDER_AXES_
#undef ACCELMEM_PY_ADD_CHILD_CASE_BUILDER_OWN_
#undef ACCELMEM_PY_ADD_CHILD_CASE_BUILDER_NONE_

template <size_t N>
SNode& AddChildDispatch(SNode& node, SNodeType type, const std::vector<int64_t>& axes,
                        const std::vector<int64_t>& sizes) {
  if (axes.size() == N) return AddChildN(node, type, axes, sizes, std::make_index_sequence<N>());
  if constexpr (N < static_cast<size_t>(sr::kMaxAxes)) {
    return AddChildDispatch<N + 1>(node, type, axes, sizes);
  } else {
    RaiseStatus(absl::InvalidArgumentError("at most 12 axes per SNode"));
  }
}

void CheckBuildable(const PySNode& s) {
  if (s.tree->finalized()) {
    RaiseStatus(absl::InvalidArgumentError(
        "the SNode tree is finalized (a runtime was created from it); build a new tree"));
  }
}

PySNode AddChild(const PySNode& parent, SNodeType type, const py::object& axes_obj,
                 const py::object& sizes_obj) {
  CheckBuildable(parent);
  std::vector<int64_t> axes = IntList(axes_obj, "axes");
  std::vector<int64_t> sizes = IntList(sizes_obj, "sizes");
  if (axes.size() != sizes.size()) {
    RaiseStatus(absl::InvalidArgumentError("one size per axis is needed"));
  }
  if (axes.empty()) RaiseStatus(absl::InvalidArgumentError("at least one axis is needed"));
  for (int64_t a : axes) {
    if (a < 0 || a >= sr::kMaxAxes) {
      RaiseStatus(absl::InvalidArgumentError("axis " + std::to_string(a) + " is outside [0, 12)"));
    }
  }
  SNode& child = AddChildDispatch<1>(*parent.node, type, axes, sizes);
  return PySNode{parent.tree, &child};
}

// Whether a coordinate of rows [0, n) is outside [0, extent) on its axis: unsigned compares
// (negative values wrap to big ones) in blocks without an early exit, which gcc vectorizes at -O2
// for a fixed number of axes (about 3x faster than a loop that stops at the first bad value).
template <int N>
bool AnyOutOfRangeN(const int32_t* data, int64_t n, const uint32_t* extents) {
  uint32_t e[N];
  for (int d = 0; d < N; ++d) e[d] = extents[d];
  constexpr int kBlock = 64;
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    uint32_t bad = 0;
    const int32_t* p = data + i * N;
    for (int k = 0; k < kBlock; ++k) {
      for (int d = 0; d < N; ++d) bad |= static_cast<uint32_t>(p[k * N + d]) >= e[d];
    }
    if (bad) return true;
  }
  for (; i < n; ++i) {
    for (int d = 0; d < N; ++d) {
      if (static_cast<uint32_t>(data[i * N + d]) >= e[d]) return true;
    }
  }
  return false;
}

bool AnyOutOfRange(const int32_t* data, int64_t n, int ndim, const uint32_t* extents) {
  switch (ndim) {
    case 1:
      return AnyOutOfRangeN<1>(data, n, extents);
    case 2:
      return AnyOutOfRangeN<2>(data, n, extents);
    case 3:
      return AnyOutOfRangeN<3>(data, n, extents);
    default:
      for (int64_t k = 0; k < n * ndim; ++k) {
        if (static_cast<uint32_t>(data[k]) >= extents[k % ndim]) return true;
      }
      return false;
  }
}

}  // namespace

Coords ReadCoords(const py::object& obj, const SNode& s, bool container) {
  std::vector<int> axes = s.index_axes();
  if (container) {
    const SNode& dyn = s.type() == SNodeType::kDynamic ? s : *s.parent();
    axes.erase(std::remove(axes.begin(), axes.end(), dyn.axes()[0]), axes.end());
  }
  Coords c;
  c.ndim = static_cast<int>(axes.size());
  py::object input = py::module_::import("numpy").attr("asarray")(obj);
  py::dtype kind = input.attr("dtype").cast<py::dtype>();
  if (kind.kind() != 'i' && kind.kind() != 'u') {
    RaiseStatus(absl::InvalidArgumentError("coordinates must be an integer array, got dtype " +
                                           std::string(py::str(kind))));
  }
  // Wider integers would wrap when converted to int32: reject values outside [0, 2^31) first.
  if (!kind.equal(py::dtype::of<int32_t>()) && input.attr("size").cast<int64_t>() > 0) {
    py::object lo = input.attr("min")(), hi = input.attr("max")();
    py::object bad = lo < py::int_(0) ? lo : (hi > py::int_(INT32_MAX) ? hi : py::object());
    if (bad) {
      RaiseStatus(absl::OutOfRangeError("coordinate " + std::string(py::str(bad)) +
                                        " is outside the index space of " + s.DebugPath()));
    }
  }
  c.array = I32Array::ensure(input);
  if (!c.array) {
    PyErr_Clear();
    RaiseStatus(absl::InvalidArgumentError("coordinates must be an integer array"));
  }
  if (c.array.ndim() == 2 && c.array.shape(1) == c.ndim) {
    c.n = c.array.shape(0);
  } else if (c.array.ndim() == 1 && c.ndim == 1) {
    c.n = c.array.shape(0);
  } else if (c.array.ndim() == 2 && c.ndim == 0 && c.array.shape(1) == 0) {
    c.n = c.array.shape(0);
  } else {
    RaiseStatus(absl::InvalidArgumentError("coordinates must have shape [N, " +
                                           std::to_string(c.ndim) + "] for " + s.DebugPath()));
  }
  c.data = c.array.data();
  // Range check before anything runs (the GIL is released: pure C++): a fast scan, then the
  // first bad coordinate only if there is one.
  int64_t bad = -1;
  int bad_dim = 0;
  {
    py::gil_scoped_release release;
    uint32_t extents[sr::kMaxAxes];
    for (int d = 0; d < c.ndim; ++d) extents[d] = static_cast<uint32_t>(s.extent(axes[d]));
    const bool any_bad = AnyOutOfRange(c.data, c.n, c.ndim, extents);
    for (int64_t i = 0; any_bad && i < c.n && bad < 0; ++i) {
      for (int d = 0; d < c.ndim; ++d) {
        int32_t v = c.data[i * c.ndim + d];
        if (v < 0 || v >= s.extent(axes[d])) {
          bad = i;
          bad_dim = d;
          break;
        }
      }
    }
  }
  if (bad >= 0) {
    RaiseStatus(absl::OutOfRangeError(
        "coordinate " + std::to_string(c.data[bad * c.ndim + bad_dim]) + " of row " +
        std::to_string(bad) + " is outside [0, " + std::to_string(s.extent(axes[bad_dim])) +
        ") on axis " + std::to_string(axes[bad_dim]) + " of " + s.DebugPath()));
  }
  return c;
}

void CheckPlace(const SNode& s, const char* what) {
  if (s.type() != SNodeType::kPlace) {
    RaiseStatus(
        absl::InvalidArgumentError(std::string(what) + " needs a place, got " + s.DebugPath()));
  }
}

// `values` as a contiguous array of the place's dtype with n entries (scalars broadcast).
py::array ValuesFor(const SNode& place, const py::object& values, int64_t n) {
  py::module_ np = py::module_::import("numpy");
  py::object dtype = np.attr("dtype")(NumpyTypeName(place.dtype()));
  py::object arr = np.attr("asarray")(values, dtype);
  if (arr.attr("ndim").cast<int>() == 0) arr = np.attr("full")(n, arr, dtype);
  arr = np.attr("ascontiguousarray")(arr, dtype);
  py::array a = arr.cast<py::array>();
  if (a.ndim() != 1 || a.shape(0) != n) {
    RaiseStatus(absl::InvalidArgumentError("values must be a scalar or a 1-D array of " +
                                           std::to_string(n) + " entries"));
  }
  return a;
}

namespace {

py::array NewArray(DataType t, int64_t n) {
  std::vector<py::ssize_t> shape = {static_cast<py::ssize_t>(n)};
  return py::array(py::dtype(NumpyTypeName(t)), shape);
}

const SNode& DynamicOf(const SNode& s) {
  if (s.type() == SNodeType::kDynamic) return s;
  if (s.type() == SNodeType::kPlace && s.parent()->type() == SNodeType::kDynamic) {
    return *s.parent();
  }
  RaiseStatus(absl::InvalidArgumentError("needs a dynamic SNode or a place under one, got " +
                                         s.DebugPath()));
}

py::dict StatsDict(const runtime::SNodeMemoryStats& s) {
  py::dict d;
  d["cells_in_use"] = s.cells_in_use;
  d["cells_free"] = s.cells_free;
  d["cells_recycled"] = s.cells_recycled;
  d["cells_reserved"] = s.cells_reserved;
  d["bytes_reserved"] = s.bytes_reserved;
  return d;
}

}  // namespace

// `snode.def("kind", ...)` for a BUILDER_AXES row of the kinds' table (see AddChildN).
#define ACCELMEM_PY_DEF_BUILDER(Kind, kind, Meta, flags, cells, deactivate, builder) \
  ACCELMEM_PY_DEF_BUILDER_##builder##_(Kind, kind)
#define ACCELMEM_PY_DEF_BUILDER_BUILDER_AXES_(Kind, kind)                     \
  snode.def(                                                                  \
      #kind,                                                                  \
      [](const PySNode& s, const py::object& axes, const py::object& sizes) { \
        return AddChild(s, SNodeType::k##Kind, axes, sizes);                  \
      },                                                                      \
      py::arg("axes"), py::arg("sizes"), "Adds a " #kind " child; returns it.");
#define ACCELMEM_PY_DEF_BUILDER_BUILDER_OWN_(Kind, kind)
#define ACCELMEM_PY_DEF_BUILDER_BUILDER_NONE_(Kind, kind)
// The kinds' names for the `type` docstring: " 'root' 'dense' ... 'place'".
#define ACCELMEM_PY_KIND_NAME(Kind, kind, ...) " '" #kind "'"

void BindSparse(py::module_& m) {
  m.doc() = "Sparse SNode trees and the sparse runtime host API.";

  py::class_<PySNode> snode(m, "SNode", "One node of an SNode tree (a builder handle).");
  // dense, bitmasked, pointer: every BUILDER_AXES row of the kinds' table.
  ACCELMEM_SNODE_KINDS(ACCELMEM_PY_DEF_BUILDER)
  snode
      .def(
          "dynamic",
          [](const PySNode& s, int axis, int64_t size, int64_t chunk_size) {
            CheckBuildable(s);
            if (axis < 0 || axis >= sr::kMaxAxes) {
              RaiseStatus(absl::InvalidArgumentError("axis " + std::to_string(axis) +
                                                     " is outside [0, 12)"));
            }
            return PySNode{s.tree, &s.node->dynamic(sr::Axis(axis), size, chunk_size)};
          },
          py::arg("axis"), py::arg("size"), py::arg("chunk_size") = 0,
          "Adds a dynamic child (a list of up to `size` cells); returns it.")
      .def(
          "place",
          [](const PySNode& s, const std::string& name, const py::object& dtype) {
            CheckBuildable(s);
            s.node->place(ToDataType(dtype), name);
            return s;
          },
          py::arg("name"), py::arg("dtype"), "Adds a named value; returns this SNode (chains).")
      .def_property_readonly(
          "id", [](const PySNode& s) { return s.node->id(); }, "Id in the tree.")
      .def_property_readonly(
          "type", [](const PySNode& s) { return sr::SNodeTypeName(s.node->type()); },
          "The kind's name, one of:" ACCELMEM_SNODE_KINDS(ACCELMEM_PY_KIND_NAME) ".")
      .def_property_readonly(
          "name", [](const PySNode& s) { return s.node->name(); }, "Name of a place.")
      .def_property_readonly(
          "dtype",
          [](const PySNode& s) -> py::object {
            if (s.node->type() != SNodeType::kPlace) return py::none();
            return py::dtype(NumpyTypeName(s.node->dtype()));
          },
          "NumPy dtype of a place, else None.")
      .def_property_readonly(
          "axes", [](const PySNode& s) { return s.node->axes(); }, "Axes of this level.")
      .def_property_readonly(
          "shape",
          [](const PySNode& s) {
            std::vector<int64_t> out;
            for (int a : s.node->axes()) out.push_back(s.node->shape(a));
            return out;
          },
          "Size per axis of this level.")
      .def_property_readonly(
          "parent",
          [](const PySNode& s) -> py::object {
            if (s.node->parent() == nullptr) return py::none();
            return py::cast(PySNode{s.tree, const_cast<SNode*>(s.node->parent())});
          },
          "Parent SNode (None for the root).")
      .def_property_readonly(
          "children",
          [](const PySNode& s) {
            std::vector<PySNode> out;
            for (SNode* c : s.node->children()) out.push_back(PySNode{s.tree, c});
            return out;
          },
          "Children in declaration order.")
      .def_property_readonly(
          "index_axes",
          [](const PySNode& s) {
            if (!s.tree->finalized()) {
              RaiseStatus(absl::FailedPreconditionError("finalize the tree first"));
            }
            return s.node->index_axes();
          },
          "Axes of this SNode's index (valid once the tree is finalized).")
      .def_property_readonly(
          "extents",
          [](const PySNode& s) {
            if (!s.tree->finalized()) {
              RaiseStatus(absl::FailedPreconditionError("finalize the tree first"));
            }
            std::vector<int64_t> out;
            for (int a : s.node->index_axes()) out.push_back(s.node->extent(a));
            return out;
          },
          "Index-space extent per index axis (valid once the tree is finalized).")
      .def("__repr__", [](const PySNode& s) { return "<SNode " + s.node->DebugPath() + ">"; });

  py::class_<PyTree>(m, "SNodeTree", "An SNode tree: build it from `root`, then create a Runtime.")
      .def(py::init([] { return PyTree{std::make_shared<SNodeTree>()}; }))
      .def_property_readonly(
          "root",
          [](const PyTree& t) {
            return PySNode{t.tree, &t.tree->root()};
          },
          "The root SNode.")
      .def(
          "finalize", [](const PyTree& t) { Check(t.tree->Finalize()); },
          "Validates the tree and computes its layout (ValueError listing every problem).")
      .def_property_readonly(
          "finalized", [](const PyTree& t) { return t.tree->finalized(); }, "Finalized yet?")
      .def_property_readonly(
          "num_snodes", [](const PyTree& t) { return t.tree->num_snodes(); }, "SNode count.")
      .def(
          "place",
          [](const PyTree& t, const std::string& name) {
            const SNode* s = t.tree->FindPlace(name);
            if (s == nullptr) {
              PyErr_SetString(PyExc_KeyError, ("no place named '" + name + "'").c_str());
              throw py::error_already_set();
            }
            return PySNode{t.tree, const_cast<SNode*>(s)};
          },
          py::arg("name"), "The place called `name` (KeyError if none).");

  py::class_<PyRuntime> runtime_class(m, "Runtime",
                                      "The sparse runtime over one finalized SNode tree.");
  runtime_class
      .def(py::init([](const PyTree& tree, const std::string& backend, int num_threads,
                       uint64_t memory_limit_bytes, bool auto_collect, int gc_workers,
                       int32_t chunk_num_elements, int32_t max_num_chunks) {
             Check(tree.tree->Finalize());
             runtime::SparseRuntimeOptions options;
             options.num_threads = num_threads;
             options.memory_limit_bytes = memory_limit_bytes;
             options.auto_collect = auto_collect;
             options.gc_workers = gc_workers;
             if (chunk_num_elements > 0) options.chunk_num_elements = chunk_num_elements;
             if (max_num_chunks > 0) options.max_num_chunks = max_num_chunks;
             if (backend == "jit") {
               options.kernel_backend = JitBackendFactory();
             } else if (backend != "native") {
               RaiseStatus(absl::InvalidArgumentError("unknown backend '" + backend +
                                                      "' (known: native, jit)"));
             }
             absl::StatusOr<std::unique_ptr<runtime::SparseRuntime>> rt;
             {
               py::gil_scoped_release release;
               rt = runtime::SparseRuntime::Create(*tree.tree, options);
             }
             return PyRuntime{tree.tree, Unwrap(std::move(rt)), backend};
           }),
           py::arg("tree"), py::arg("backend") = "native", py::arg("num_threads") = 0,
           py::arg("memory_limit_bytes") = 0, py::arg("auto_collect") = true,
           py::arg("gc_workers") = 1, py::arg("chunk_num_elements") = 0,
           py::arg("max_num_chunks") = 0,
           "Materializes the tree (finalizing it) on the native or the JIT backend.")
      .def_property_readonly(
          "backend", [](const PyRuntime& r) { return r.backend; }, "'native' or 'jit'.")
      .def(
          "activate",
          [](PyRuntime& r, const py::object& snode, const py::object& coords, int threads) {
            const SNode& s = r.Resolve(snode);
            Coords c = ReadCoords(coords, s, false);
            RunRows(r, c.n, threads, [&](int64_t b, int64_t e) {
              for (int64_t i = b; i < e; ++i) {
                absl::Status st = r.rt->Activate(s, {c.data + i * c.ndim, size_t(c.ndim)});
                if (!st.ok()) return st;
              }
              return absl::OkStatus();
            });
          },
          py::arg("snode"), py::arg("coords"), py::arg("num_threads") = 1,
          "Activates the cells of `snode` at `coords` (and their ancestors).")
      .def(
          "deactivate",
          [](PyRuntime& r, const py::object& snode, const py::object& coords, int threads) {
            const SNode& s = r.Resolve(snode);
            Coords c = ReadCoords(coords, s, s.type() == SNodeType::kDynamic);
            RunRows(r, c.n, threads, [&](int64_t b, int64_t e) {
              for (int64_t i = b; i < e; ++i) {
                absl::Status st = r.rt->Deactivate(s, {c.data + i * c.ndim, size_t(c.ndim)});
                if (!st.ok()) return st;
              }
              return absl::OkStatus();
            });
          },
          py::arg("snode"), py::arg("coords"), py::arg("num_threads") = 1,
          "Deactivates the cells (and everything sparse below); a dynamic takes container indices.")
      .def(
          "is_active",
          [](PyRuntime& r, const py::object& snode, const py::object& coords, int threads) {
            const SNode& s = r.Resolve(snode);
            Coords c = ReadCoords(coords, s, false);
            py::array_t<bool> out(static_cast<py::ssize_t>(c.n));
            bool* o = out.mutable_data();
            RunRows(r, c.n, threads, [&](int64_t b, int64_t e) {
              for (int64_t i = b; i < e; ++i) {
                absl::StatusOr<bool> v = r.rt->IsActive(s, {c.data + i * c.ndim, size_t(c.ndim)});
                if (!v.ok()) return v.status();
                o[i] = *v;
              }
              return absl::OkStatus();
            });
            return out;
          },
          py::arg("snode"), py::arg("coords"), py::arg("num_threads") = 1,
          "Whether each cell is active, as a bool array.")
      .def(
          "read",
          [](PyRuntime& r, const py::object& snode, const py::object& coords, int threads) {
            const SNode& s = r.Resolve(snode);
            CheckPlace(s, "read");
            Coords c = ReadCoords(coords, s, false);
            py::array out = NewArray(s.dtype(), c.n);
            char* o = static_cast<char*>(out.mutable_data());
            const int size = sr::DataTypeSize(s.dtype());
            RunRows(r, c.n, threads, [&](int64_t b, int64_t e) {
              for (int64_t i = b; i < e; ++i) {
                absl::Status st = r.rt->ReadRaw(s, s.dtype(), {c.data + i * c.ndim, size_t(c.ndim)},
                                                o + i * size);
                if (!st.ok()) return st;
              }
              return absl::OkStatus();
            });
            return out;
          },
          py::arg("place"), py::arg("coords"), py::arg("num_threads") = 1,
          "Values of `place` at `coords` (0 for inactive cells), as an array of its dtype.")
      .def(
          "write",
          [](PyRuntime& r, const py::object& snode, const py::object& coords,
             const py::object& values, int threads) {
            const SNode& s = r.Resolve(snode);
            CheckPlace(s, "write");
            Coords c = ReadCoords(coords, s, false);
            py::array v = ValuesFor(s, values, c.n);
            const char* in = static_cast<const char*>(v.data());
            const int size = sr::DataTypeSize(s.dtype());
            RunRows(r, c.n, threads, [&](int64_t b, int64_t e) {
              for (int64_t i = b; i < e; ++i) {
                absl::Status st = r.rt->WriteRaw(
                    s, s.dtype(), {c.data + i * c.ndim, size_t(c.ndim)}, in + i * size);
                if (!st.ok()) return st;
              }
              return absl::OkStatus();
            });
          },
          py::arg("place"), py::arg("coords"), py::arg("values"), py::arg("num_threads") = 1,
          "Writes `values` (an array or a scalar) to `place` at `coords`, activating the paths.")
      .def(
          "append",
          [](PyRuntime& r, const py::object& snode, const py::object& coords,
             const py::object& values, int threads) {
            const SNode& s = r.Resolve(snode);
            CheckPlace(s, "append");
            DynamicOf(s);
            Coords c = ReadCoords(coords, s, true);
            py::array v = ValuesFor(s, values, c.n);
            const char* in = static_cast<const char*>(v.data());
            const int size = sr::DataTypeSize(s.dtype());
            py::array_t<int32_t> out(static_cast<py::ssize_t>(c.n));
            int32_t* o = out.mutable_data();
            RunRows(r, c.n, threads, [&](int64_t b, int64_t e) {
              for (int64_t i = b; i < e; ++i) {
                absl::StatusOr<int32_t> p = r.rt->AppendRaw(
                    s, s.dtype(), {c.data + i * c.ndim, size_t(c.ndim)}, in + i * size);
                if (!p.ok()) return p.status();
                o[i] = *p;
              }
              return absl::OkStatus();
            });
            return out;
          },
          py::arg("place"), py::arg("coords"), py::arg("values"), py::arg("num_threads") = 1,
          "Appends `values` to the dynamic lists at the container `coords`; returns the positions.")
      .def(
          "length",
          [](PyRuntime& r, const py::object& snode, const py::object& coords, int threads) {
            const SNode& s = DynamicOf(r.Resolve(snode));
            Coords c = ReadCoords(coords, s, true);
            py::array_t<int32_t> out(static_cast<py::ssize_t>(c.n));
            int32_t* o = out.mutable_data();
            RunRows(r, c.n, threads, [&](int64_t b, int64_t e) {
              for (int64_t i = b; i < e; ++i) {
                absl::StatusOr<int32_t> p = r.rt->Length(s, {c.data + i * c.ndim, size_t(c.ndim)});
                if (!p.ok()) return p.status();
                o[i] = *p;
              }
              return absl::OkStatus();
            });
            return out;
          },
          py::arg("snode"), py::arg("coords"), py::arg("num_threads") = 1,
          "Lengths of the dynamic lists at the container `coords`, as an int32 array.")
      .def(
          "active_indices",
          [](PyRuntime& r, const py::object& snode) {
            const SNode& s = r.Resolve(snode);
            const int ndim = s.num_indices();
            std::vector<int32_t> idx;
            absl::Status st;
            {
              py::gil_scoped_release release;
              st = r.rt->StructFor(s, [&](absl::Span<const int32_t> index, void*) {
                idx.insert(idx.end(), index.begin(), index.end());
              });
            }
            Check(st);
            const py::ssize_t n = ndim == 0 ? 0 : static_cast<py::ssize_t>(idx.size() / ndim);
            py::array_t<int32_t> out({n, static_cast<py::ssize_t>(ndim)});
            if (!idx.empty()) std::memcpy(out.mutable_data(), idx.data(), idx.size() * 4);
            return out;
          },
          py::arg("snode"),
          "Indices of the active cells of `snode`, shape [M, ndim] int32, in layout order.")
      .def(
          "to_numpy",
          [](PyRuntime& r, const py::object& snode) {
            const SNode& s = r.Resolve(snode);
            CheckPlace(s, "to_numpy");
            const int ndim = s.num_indices();
            const int size = sr::DataTypeSize(s.dtype());
            std::vector<int32_t> idx;
            std::vector<char> vals;
            absl::Status st;
            {
              py::gil_scoped_release release;
              st = r.rt->StructFor(s, [&](absl::Span<const int32_t> index, void* cell) {
                idx.insert(idx.end(), index.begin(), index.end());
                const char* p = static_cast<const char*>(cell);
                vals.insert(vals.end(), p, p + size);
              });
            }
            Check(st);
            const int64_t n = static_cast<int64_t>(vals.size() / size);
            py::array_t<int32_t> indices({static_cast<py::ssize_t>(n), py::ssize_t(ndim)});
            if (!idx.empty()) std::memcpy(indices.mutable_data(), idx.data(), idx.size() * 4);
            py::array values = NewArray(s.dtype(), n);
            if (!vals.empty()) std::memcpy(values.mutable_data(), vals.data(), vals.size());
            return py::make_tuple(indices, values);
          },
          py::arg("place"),
          "(indices, values) of the active cells of `place`: [M, ndim] int32 and [M] values.")
      .def(
          "collect_garbage",
          [](PyRuntime& r) {
            absl::Status st;
            {
              py::gil_scoped_release release;
              st = r.rt->CollectGarbage();
            }
            Check(st);
          },
          "Zeroes recycled cells and makes them reusable.")
      .def_property_readonly(
          "num_gc_collections", [](PyRuntime& r) { return r.rt->num_gc_collections(); },
          "Collections that ran (one per allocator with recycled cells).")
      .def_property_readonly(
          "bytes_mapped", [](PyRuntime& r) { return r.rt->bytes_mapped(); },
          "Bytes mapped by the runtime's memory pool.")
      .def(
          "stats",
          [](PyRuntime& r, const py::object& snode) {
            return StatsDict(r.rt->Stats(r.Resolve(snode)));
          },
          py::arg("snode"), "Allocator statistics of one SNode (zeros without an allocator).")
      .def(
          "check_invariants",
          [](PyRuntime& r) {
            absl::Status st;
            {
              py::gil_scoped_release release;
              st = r.rt->CheckInvariants();
            }
            Check(st);
          },
          "Checks the allocators' bookkeeping (RuntimeError on a violation).");
  BindSparseStructForOps(runtime_class);
}

#undef ACCELMEM_PY_DEF_BUILDER
#undef ACCELMEM_PY_DEF_BUILDER_BUILDER_AXES_
#undef ACCELMEM_PY_DEF_BUILDER_BUILDER_OWN_
#undef ACCELMEM_PY_DEF_BUILDER_BUILDER_NONE_
#undef ACCELMEM_PY_KIND_NAME

}  // namespace python
}  // namespace accelmem

// File: python/ext/sparse_struct_for_ops.cc
//
// The struct-for operations of accelmem._accelmem.sparse.Runtime: whole loops over the active
// cells of a place, run in C++ with the GIL released, so that per-cell work written in Python
// runs at about the speed of the same loop written against the C++ host API.
//
//   copy(src, dst)                          dst[I] = src[I]   (places of one parent and dtype)
//   fill_index(place, axis, scale, offset)  place[I] = I[axis] * scale + offset
//   transform(place, a, b, c, d)            place[I] = (a * v + b) / (c * v + d), v = place[I]
//   scatter_add(place, coords, values)      place[coords[k]] += values[k], activating paths
//
// The loops are the runtime's bulk operations (runtime/bulk_ops.h, on the runtime's thread
// pool); this file converts the NumPy arguments, releases the GIL and raises the statuses.
#include <pybind11/numpy.h>

#include <cstdint>

#include "python/ext/sparse_module.h"

namespace accelmem {
namespace python {
namespace {

using sr::SNode;

// Runs op() -> Status with the GIL released; raises its error.
template <typename Op>
void WithoutGil(const Op& op) {
  absl::Status status;
  {
    py::gil_scoped_release release;
    status = op();
  }
  Check(status);
}

void Copy(PyRuntime& r, const py::object& src_obj, const py::object& dst_obj) {
  const SNode& src = r.Resolve(src_obj);
  const SNode& dst = r.Resolve(dst_obj);
  CheckPlace(src, "copy");
  CheckPlace(dst, "copy");
  WithoutGil([&] { return runtime::Copy(*r.rt, src, dst); });
}

void FillIndex(PyRuntime& r, const py::object& obj, int axis, double scale, double offset) {
  const SNode& place = r.Resolve(obj);
  CheckPlace(place, "fill_index");
  WithoutGil([&] { return runtime::FillIndex(*r.rt, place, axis, scale, offset); });
}

void Transform(PyRuntime& r, const py::object& obj, double a, double b, double c, double d) {
  const SNode& place = r.Resolve(obj);
  CheckPlace(place, "transform");
  WithoutGil([&] { return runtime::Transform(*r.rt, place, a, b, c, d); });
}

void ScatterAdd(PyRuntime& r, const py::object& obj, const py::object& coords,
                const py::object& values, int threads) {
  const SNode& place = r.Resolve(obj);
  CheckPlace(place, "scatter_add");
  Coords c = ReadCoords(coords, place, false);
  // A scalar is added to every row without an array of n copies of it.
  const bool scalar = py::module_::import("numpy").attr("ndim")(values).cast<int>() == 0;
  py::array v = ValuesFor(place, values, scalar ? 1 : c.n);
  if (c.n == 0) return;
  const void* in = v.data();
  WithoutGil([&] {
    return runtime::ScatterAdd(*r.rt, place, {c.data, c.n, c.ndim}, in, scalar, threads,
                               r.scratch.get());
  });
}

}  // namespace

void BindSparseStructForOps(py::class_<PyRuntime>& runtime_class) {
  runtime_class
      .def("copy", &Copy, py::arg("src"), py::arg("dst"),
           "dst[I] = src[I] for every active cell of `src` (places of one parent and dtype), "
           "on the runtime's threads.")
      .def("fill_index", &FillIndex, py::arg("place"), py::arg("axis") = 0, py::arg("scale") = 1.0,
           py::arg("offset") = 0.0,
           "place[I] = I[axis] * scale + offset over the active cells (computed in double, "
           "converted to the place's dtype; integers saturate).")
      .def("transform", &Transform, py::arg("place"), py::arg("a") = 1.0, py::arg("b") = 0.0,
           py::arg("c") = 0.0, py::arg("d") = 1.0,
           "place[I] = (a * v + b) / (c * v + d) over the active cells, v the old value (in the "
           "place's precision; integer places need c == 0 and compute in double).")
      .def("scatter_add", &ScatterAdd, py::arg("place"), py::arg("coords"), py::arg("values"),
           py::arg("num_threads") = 1,
           "place[coords[k]] += values[k] for every row (a scalar or an array of N), activating "
           "the paths; duplicate coordinates accumulate.");
}

}  // namespace python
}  // namespace accelmem

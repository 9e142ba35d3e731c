// File: python/ext/module.cc
//
// The CPython extension accelmem._accelmem: one submodule per area (ir, passes, backends, policy,
// sparse). The Python package `accelmem` wraps these with documented, keyword-friendly APIs.
#include "python/ext/common.h"

PYBIND11_MODULE(_accelmem, m) {
  namespace py = ::pybind11;
  namespace ap = ::accelmem::python;
  m.doc() = "accelmem's native extension (use the accelmem package instead).";
  py::module_ ir = m.def_submodule("ir");
  ap::BindIr(ir);
  py::module_ passes = m.def_submodule("passes");
  ap::BindPasses(passes);
  py::module_ backends = m.def_submodule("backends");
  ap::BindBackends(backends);
  py::module_ policy = m.def_submodule("policy");
  ap::BindPolicy(policy);
  py::module_ sparse = m.def_submodule("sparse");
  ap::BindSparse(sparse);
}

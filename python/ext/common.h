// File: python/ext/common.h
//
// Shared helpers of the _accelmem extension: turning absl::Status into Python exceptions, and
// the entry points of each submodule (ir, passes, backends, policy, sparse).
//
// Status codes map to Python exceptions as follows (every call that can fail documents it):
//   InvalidArgument, NotFound, AlreadyExists -> ValueError
//   OutOfRange                               -> IndexError
//   ResourceExhausted                        -> MemoryError
//   Unimplemented                            -> NotImplementedError
//   anything else                            -> RuntimeError
// Located IR errors (`file:line:col: error: message`) become accelmem.ir.ParseError, pass
// failures accelmem.passes.PassError and invalid placements accelmem.policy.PlacementError
// (all ValueError subclasses, defined in accelmem/_errors.py).
//
// Every helper that raises must be called with the GIL held.
#ifndef ACCELMEM_PYTHON_EXT_COMMON_H_
#define ACCELMEM_PYTHON_EXT_COMMON_H_

#include <pybind11/pybind11.h>

#include <string>
#include <utility>

#include "python/ext/project_headers.h"

namespace accelmem {
namespace python {

namespace py = ::pybind11;

// Raises the builtin exception for `status` (which must not be OK).
[[noreturn]] void RaiseStatus(const absl::Status& status);
// Raises accelmem._errors.<class_name>(*args).
[[noreturn]] void RaiseError(const char* class_name, py::tuple args);
// Raises ParseError for a `file:line:col: error: message` status; other messages become a
// ParseError without a location.
[[noreturn]] void RaiseParseError(const absl::Status& status);

inline void Check(const absl::Status& status) {
  if (!status.ok()) RaiseStatus(status);
}
template <typename T>
T Unwrap(absl::StatusOr<T> value) {
  if (!value.ok()) RaiseStatus(value.status());
  return *std::move(value);
}

void BindIr(py::module_& m);
void BindPasses(py::module_& m);
void BindBackends(py::module_& m);
void BindPolicy(py::module_& m);
void BindSparse(py::module_& m);

}  // namespace python
}  // namespace accelmem

#endif  // ACCELMEM_PYTHON_EXT_COMMON_H_

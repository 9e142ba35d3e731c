// File: python/ext/common.cc
#include "python/ext/common.h"

#include <cstdlib>
#include <string>

namespace accelmem {
namespace python {

void RaiseStatus(const absl::Status& status) {
  PyObject* type = PyExc_RuntimeError;
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kAlreadyExists:
      type = PyExc_ValueError;
      break;
    case absl::StatusCode::kOutOfRange:
      type = PyExc_IndexError;
      break;
    case absl::StatusCode::kResourceExhausted:
      type = PyExc_MemoryError;
      break;
    case absl::StatusCode::kUnimplemented:
      type = PyExc_NotImplementedError;
      break;
    default:
      break;
  }
  PyErr_SetString(type, std::string(status.message()).c_str());
  throw py::error_already_set();
}

void RaiseError(const char* class_name, py::tuple args) {
  py::object cls = py::module_::import("accelmem._errors").attr(class_name);
  py::object exc = cls(*args);
  PyErr_SetObject(cls.ptr(), exc.ptr());
  throw py::error_already_set();
}

void RaiseParseError(const absl::Status& status) {
  // The file name may itself contain ':'; the location is the last `:LINE:COL: error: ` in the
  // message.
  const std::string text(status.message());
  const std::string marker = ": error: ";
  size_t at = text.find(marker);
  while (at != std::string::npos) {
    size_t col_start = text.rfind(':', at - 1);
    if (col_start != std::string::npos && col_start > 0) {
      size_t line_start = text.rfind(':', col_start - 1);
      if (line_start != std::string::npos) {
        std::string line = text.substr(line_start + 1, col_start - line_start - 1);
        std::string col = text.substr(col_start + 1, at - col_start - 1);
        auto digits = [](const std::string& s) {
          return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
        };
        if (digits(line) && digits(col)) {
          RaiseError("ParseError",
                     py::make_tuple(text.substr(at + marker.size()), text.substr(0, line_start),
                                    std::atoi(line.c_str()), std::atoi(col.c_str())));
        }
      }
    }
    at = text.find(marker, at + 1);
  }
  RaiseError("ParseError", py::make_tuple(text, py::none(), py::none(), py::none()));
}

}  // namespace python
}  // namespace accelmem

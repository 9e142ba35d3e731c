// File: python/ext/ir_module.h
//
// The Python-side handles of IR nodes, shared by the ir and passes submodules.
#ifndef ACCELMEM_PYTHON_EXT_IR_MODULE_H_
#define ACCELMEM_PYTHON_EXT_IR_MODULE_H_

#include "python/ext/common.h"

namespace accelmem {
namespace python {

struct PyProgram {
  ir::ProgramPtr program;
};
struct PyFunction {
  ir::FunctionPtr function;
};
struct PyStmt {
  ir::StmtPtr stmt;
};
struct PyValue {
  ir::VarPtr var;
};
struct PyMemRef {
  ir::MemRefPtr memref;
};

PyProgram ProgramFromProto(const py::bytes& data);

}  // namespace python
}  // namespace accelmem

#endif  // ACCELMEM_PYTHON_EXT_IR_MODULE_H_

// File: python/ext/project_headers.h
//
// Every accelmem header the Python extension uses, in one place, with short aliases for the
// namespaces. The extension's other sources include only this file (plus pybind11), so moving a
// library to another folder means editing this file and the deps list of //python:_accelmem.
#ifndef ACCELMEM_PYTHON_EXT_PROJECT_HEADERS_H_
#define ACCELMEM_PYTHON_EXT_PROJECT_HEADERS_H_

// Compile side: IR, passes, backends, placement policy.
#include "backends/backend.h"
#include "ir/dtype.h"
#include "ir/expr.h"
#include "ir/function.h"
#include "ir/ir.pb.h"
#include "ir/memory_space.h"
#include "ir/memref.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/program.h"
#include "ir/proto_convert.h"
#include "ir/stmt.h"
#include "ir/structural_equal.h"
#include "ir/types.h"
#include "ir/verifier.h"
#include "ir/visitor.h"
#include "passes/allocate_memory_addr.h"
#include "passes/memory_pipeline.h"
#include "passes/pass.h"
#include "passes/pass_manager.h"
#include "passes/verify_memory_plan.h"
#include "policy/constrained_planner.h"
#include "policy/dsa_problem.h"
#include "policy/lifetime_planner.h"
#include "policy/placement_checker.h"

// Runtime side: the SparseRuntime host API, its bulk operations and the JIT execution backend.
#include "runtime/bulk_ops.h"
#include "runtime/cpu/jit_backend.h"
#include "runtime/sparse_runtime.h"
#include "sparse_runtime/snode_tree.h"

namespace accelmem {
namespace python {

namespace ir = ::accelmem::ir;
namespace passes = ::accelmem::passes;
namespace backends = ::accelmem::backends;
namespace policy = ::accelmem::policy;
namespace sr = ::accelmem::sparse_runtime;  // the SNode tree (sparse_runtime/)
namespace runtime = ::accelmem::runtime;    // the SparseRuntime host API (runtime/)

// The KernelBackendFactory of the JIT backend ("jit" in accelmem.sparse.Runtime).
inline runtime::KernelBackendFactory JitBackendFactory() {
  return ::accelmem::runtime::cpu::JitBackend::Factory();
}

}  // namespace python
}  // namespace accelmem

#endif  // ACCELMEM_PYTHON_EXT_PROJECT_HEADERS_H_

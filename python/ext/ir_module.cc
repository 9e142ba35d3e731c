// File: python/ext/ir_module.cc
//
// accelmem._accelmem.ir: parse / print / protobuf of tile-IR programs and read-only views of
// their functions, statements, values and MemRefs. Every view holds a shared_ptr to the
// immutable node it shows, so a view stays valid after the program object is gone.
#include "python/ext/ir_module.h"

#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "python/ext/common.h"

namespace accelmem {
namespace python {
namespace {

std::string SpaceStr(ir::MemorySpace s) { return std::string(ir::MemorySpaceName(s)); }
std::string DTypeStr(ir::DType d) { return std::string(ir::DTypeName(d)); }

const char* TypeKindName(ir::TypeKind k) {
  switch (k) {
    case ir::TypeKind::kTile:
      return "tile";
    case ir::TypeKind::kTensor:
      return "tensor";
    case ir::TypeKind::kScalar:
      return "scalar";
    case ir::TypeKind::kIndex:
      return "index";
    case ir::TypeKind::kMemRef:
      return "memref";
  }
  return "unknown";
}

const char* StmtKindName(ir::StmtKind k) {
  switch (k) {
    case ir::StmtKind::kAssign:
      return "assign";
    case ir::StmtKind::kEval:
      return "eval";
    case ir::StmtKind::kSeq:
      return "seq";
    case ir::StmtKind::kFor:
      return "for";
    case ir::StmtKind::kIf:
      return "if";
    case ir::StmtKind::kYield:
      return "yield";
    case ir::StmtKind::kReturn:
      return "return";
  }
  return "unknown";
}

py::tuple ShapeTuple(const ir::Shape& shape) {
  py::tuple t(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i].is_static()) {
      t[i] = py::int_(shape[i].value);
    } else {
      t[i] = py::str(shape[i].symbol);
    }
  }
  return t;
}

const ir::Shape* ShapeOf(const ir::Type& t) {
  if (const ir::TileType* tile = ir::AsTile(&t)) return &tile->shape;
  if (const ir::TensorType* tensor = ir::AsTensor(&t)) return &tensor->shape;
  return nullptr;
}

std::vector<PyStmt> Stmts(const ir::StmtPtr& body) {
  std::vector<PyStmt> out;
  if (body == nullptr) return out;
  for (const ir::StmtPtr& s : ir::BodyStmts(body)) out.push_back(PyStmt{s});
  return out;
}

// Every value a function defines, parameters first, nested bodies included, in text order.
std::vector<PyValue> FunctionValues(const ir::Function& f) {
  std::vector<PyValue> out;
  ir::ForEachDefPtr(f, [&out](const ir::VarPtr& v) { out.push_back(PyValue{v}); });
  return out;
}

py::object MemRefOrNone(const ir::MemRefPtr& m) {
  if (m == nullptr) return py::none();
  return py::cast(PyMemRef{m});
}

ir::ProgramPtr ParseText(const std::string& text, const std::string& filename, bool verify) {
  absl::StatusOr<ir::ProgramPtr> program;
  {
    py::gil_scoped_release release;
    program = verify ? ir::ParseAndVerifyProgram(text, filename) : ir::ParseProgram(text, filename);
  }
  if (!program.ok()) RaiseParseError(program.status());
  return *program;
}

}  // namespace

PyProgram ProgramFromProto(const py::bytes& data) {
  ir::pb::Program proto;
  std::string bytes = data;
  if (!proto.ParseFromString(bytes)) {
    RaiseStatus(absl::InvalidArgumentError("not a serialized accelmem.ir.pb.Program message"));
  }
  return PyProgram{Unwrap(ir::FromProto(proto))};
}

void BindIr(py::module_& m) {
  m.doc() = "Tile IR: parse, print, protobuf, and read-only views of programs.";

  py::class_<PyMemRef>(m, "MemRef", "A region of memory that tiles live in (a root or a view).")
      .def_property_readonly(
          "name", [](const PyMemRef& r) { return r.memref->name(); }, "Name of the root.")
      .def_property_readonly(
          "id", [](const PyMemRef& r) { return r.memref->id(); }, "Per-function id of the root.")
      .def_property_readonly(
          "space", [](const PyMemRef& r) { return SpaceStr(r.memref->space()); },
          "Memory space, e.g. 'Vec'.")
      .def_property_readonly(
          "address", [](const PyMemRef& r) { return r.memref->addr(); },
          "Absolute byte address (root address + offset); -1 while unplanned.")
      .def_property_readonly(
          "offset", [](const PyMemRef& r) { return r.memref->offset(); },
          "Byte offset inside the root (0 for a root).")
      .def_property_readonly(
          "size", [](const PyMemRef& r) { return r.memref->size(); }, "Size in bytes.")
      .def_property_readonly(
          "is_root", [](const PyMemRef& r) { return r.memref->is_root(); },
          "True for an allocation, False for a view.")
      .def_property_readonly(
          "is_planned", [](const PyMemRef& r) { return r.memref->is_planned(); },
          "True once the root has an address.")
      .def_property_readonly(
          "root", [](const PyMemRef& r) { return PyMemRef{r.memref->root_ptr()}; },
          "The root allocation this MemRef lives in.")
      .def_property_readonly(
          "slots", [](const PyMemRef& r) { return r.memref->slots(); },
          "Slot count of its root (tile.alloc(..., slots=N)); 0 when not slotted.")
      .def_property_readonly(
          "slot",
          [](const PyMemRef& r) -> py::object {
            if (r.memref->slot() < 0) return py::none();
            return py::int_(r.memref->slot());
          },
          "The slot this MemRef names (memref=m[k]); None otherwise.")
      .def_property_readonly(
          "declared", [](const PyMemRef& r) { return r.memref->declared(); },
          "True when its root is an allocation the author declared (declared=1): no other "
          "buffer may share its bytes.")
      .def("__str__", [](const PyMemRef& r) { return ir::MemRefToString(*r.memref); })
      .def("__repr__", [](const PyMemRef& r) {
        return "<MemRef " + ir::MemRefToString(*r.memref) + " " + SpaceStr(r.memref->space()) +
               " addr=" + std::to_string(r.memref->addr()) +
               " size=" + std::to_string(r.memref->size()) + ">";
      });

  py::class_<PyValue>(m, "Value", "An SSA value (parameter, assignment, loop or branch value).")
      .def_property_readonly(
          "name", [](const PyValue& v) { return v.var->name; }, "Name in the text.")
      .def_property_readonly(
          "type", [](const PyValue& v) { return ir::TypeToString(*v.var->type); },
          "Type in the text form, e.g. 'Tile[[64, 64], FP32, Vec]'.")
      .def_property_readonly(
          "kind", [](const PyValue& v) { return TypeKindName(v.var->type->kind); },
          "'tile', 'tensor', 'scalar', 'index' or 'memref'.")
      .def_property_readonly(
          "is_tile", [](const PyValue& v) { return ir::AsTile(v.var->type) != nullptr; },
          "True for on-chip tiles.")
      .def_property_readonly(
          "shape",
          [](const PyValue& v) -> py::object {
            const ir::Shape* s = ShapeOf(*v.var->type);
            if (s == nullptr) return py::none();
            return ShapeTuple(*s);
          },
          "Shape of a tile or tensor (ints, or str for symbolic dims); None otherwise.")
      .def_property_readonly(
          "dtype",
          [](const PyValue& v) -> py::object {
            const ir::Type& t = *v.var->type;
            if (const ir::TileType* x = ir::AsTile(&t)) return py::str(DTypeStr(x->dtype));
            if (const ir::TensorType* x = ir::AsTensor(&t)) return py::str(DTypeStr(x->dtype));
            if (const ir::ScalarType* x = ir::AsScalar(&t)) return py::str(DTypeStr(x->dtype));
            return py::none();
          },
          "Element type, e.g. 'FP32'; None for index and memref values.")
      .def_property_readonly(
          "space",
          [](const PyValue& v) -> py::object {
            if (const ir::TileType* x = ir::AsTile(v.var->type)) return py::str(SpaceStr(x->space));
            if (const ir::MemRefType* x = ir::AsMemRefType(v.var->type)) {
              return py::str(SpaceStr(x->memref->space()));
            }
            if (ir::AsTensor(v.var->type)) return py::str("DDR");
            return py::none();
          },
          "Memory space of a tile ('Vec', 'Mat', ...), 'DDR' for tensors, else None.")
      .def_property_readonly(
          "layout",
          [](const PyValue& v) -> py::object {
            const ir::TileType* x = ir::AsTile(v.var->type);
            if (x == nullptr || !x->layout) return py::none();
            return py::str(ir::TileLayoutName(*x->layout));
          },
          "Storage layout a tile states ('ND' or 'NZ'); None when it states none.")
      .def_property_readonly(
          "memref", [](const PyValue& v) { return MemRefOrNone(ir::MemRefOf(*v.var->type)); },
          "The MemRef of a tile (None before init_mem_ref) or of a tile.alloc value.")
      .def_property_readonly(
          "line", [](const PyValue& v) { return v.var->loc.line; },
          "1-based line of the definition (0 when made by a pass).")
      .def_property_readonly(
          "column", [](const PyValue& v) { return v.var->loc.col; },
          "1-based column of the definition (0 when made by a pass).")
      .def("__repr__", [](const PyValue& v) {
        return "<Value " + v.var->name + ": " + ir::TypeToString(*v.var->type) + ">";
      });

  py::class_<PyStmt>(m, "Stmt", "A statement; nested bodies are lists of Stmt.")
      .def_property_readonly(
          "kind", [](const PyStmt& s) { return StmtKindName(s.stmt->kind); },
          "'assign', 'eval', 'seq', 'for', 'if', 'yield' or 'return'.")
      .def_property_readonly(
          "line", [](const PyStmt& s) { return s.stmt->loc.line; },
          "1-based line (0 when made by a pass).")
      .def_property_readonly(
          "column", [](const PyStmt& s) { return s.stmt->loc.col; },
          "1-based column (0 when made by a pass).")
      .def_property_readonly(
          "op",
          [](const PyStmt& s) -> py::object {
            const ir::Call* call = nullptr;
            if (const ir::AssignStmt* a = ir::AsAssign(s.stmt.get())) {
              call = ir::AsCall(a->value.get());
            } else if (const ir::EvalStmt* e = ir::AsEval(s.stmt.get())) {
              call = ir::AsCall(e->expr.get());
            }
            if (call == nullptr) return py::none();
            return py::str(call->op);
          },
          "The op called by an assignment or evaluation (e.g. 'tile.add'), else None.")
      .def_property_readonly(
          "target",
          [](const PyStmt& s) -> py::object {
            if (const ir::AssignStmt* a = ir::AsAssign(s.stmt.get())) {
              return py::cast(PyValue{a->var});
            }
            return py::none();
          },
          "The value an assignment defines, else None.")
      .def_property_readonly(
          "results",
          [](const PyStmt& s) {
            std::vector<PyValue> out;
            if (const ir::ForStmt* f = ir::AsFor(s.stmt.get())) {
              for (const ir::VarPtr& v : f->return_vars) out.push_back(PyValue{v});
            } else if (const ir::IfStmt* i = ir::AsIf(s.stmt.get())) {
              for (const ir::VarPtr& v : i->return_vars) out.push_back(PyValue{v});
            } else if (const ir::AssignStmt* a = ir::AsAssign(s.stmt.get())) {
              out.push_back(PyValue{a->var});
            }
            return out;
          },
          "Values the statement defines after it (assignment target, loop/if results).")
      .def_property_readonly(
          "body",
          [](const PyStmt& s) {
            if (const ir::ForStmt* f = ir::AsFor(s.stmt.get())) return Stmts(f->body);
            if (const ir::IfStmt* i = ir::AsIf(s.stmt.get())) return Stmts(i->then_body);
            if (ir::AsSeq(s.stmt.get())) return Stmts(s.stmt);
            return std::vector<PyStmt>{};
          },
          "Loop body, then-branch of an if, or the statements of a seq; [] otherwise.")
      .def_property_readonly(
          "else_body",
          [](const PyStmt& s) {
            if (const ir::IfStmt* i = ir::AsIf(s.stmt.get())) return Stmts(i->else_body);
            return std::vector<PyStmt>{};
          },
          "Else-branch of an if; [] otherwise.")
      .def(
          "print", [](const PyStmt& s) { return ir::PrintStmt(*s.stmt); },
          "The statement (and nested bodies) in canonical text.")
      .def("__str__", [](const PyStmt& s) { return ir::PrintStmt(*s.stmt); })
      .def("__repr__", [](const PyStmt& s) {
        std::string text = ir::PrintStmt(*s.stmt);
        size_t nl = text.find('\n');
        if (nl != std::string::npos) text = text.substr(0, nl);
        return "<Stmt " + text + ">";
      });

  py::class_<PyFunction>(m, "Function", "A function: name, kind, parameters and body.")
      .def_property_readonly(
          "name", [](const PyFunction& f) { return f.function->name; }, "Function name.")
      .def_property_readonly(
          "type",
          [](const PyFunction& f) { return std::string(ir::FunctionTypeName(f.function->type)); },
          "'Opaque', 'InCore', 'AIC', 'AIV' or 'Orchestration'.")
      .def_property_readonly(
          "params",
          [](const PyFunction& f) {
            std::vector<PyValue> out;
            for (const ir::VarPtr& p : f.function->params) out.push_back(PyValue{p});
            return out;
          },
          "Parameters as Values.")
      .def_property_readonly(
          "return_types",
          [](const PyFunction& f) {
            std::vector<std::string> out;
            for (const ir::TypePtr& t : f.function->return_types) {
              out.push_back(ir::TypeToString(*t));
            }
            return out;
          },
          "Return types in text form.")
      .def_property_readonly(
          "statements", [](const PyFunction& f) { return Stmts(f.function->body); },
          "Top-level statements of the body.")
      .def_property_readonly(
          "values", [](const PyFunction& f) { return FunctionValues(*f.function); },
          "Every value the function defines (parameters first), nested bodies included.")
      .def_property_readonly(
          "tiles",
          [](const PyFunction& f) {
            std::vector<PyValue> out;
            for (const PyValue& v : FunctionValues(*f.function)) {
              if (ir::AsTile(v.var->type) != nullptr) out.push_back(v);
            }
            return out;
          },
          "Every tile value, in definition order.")
      .def_property_readonly(
          "memrefs",
          [](const PyFunction& f) {
            std::vector<PyMemRef> out;
            for (const ir::StmtPtr& s : ir::BodyStmts(f.function->body)) {
              if (ir::AsAllocCall(*s) == nullptr) continue;
              const ir::MemRefPtr& m = ir::MemRefOf(*ir::AsAssign(s.get())->var->type);
              if (m != nullptr) out.push_back(PyMemRef{m});
            }
            return out;
          },
          "Root MemRefs allocated by the function's tile.alloc statements, in order.")
      .def(
          "print", [](const PyFunction& f) { return ir::PrintFunction(*f.function); },
          "The function in canonical text.")
      .def("__str__", [](const PyFunction& f) { return ir::PrintFunction(*f.function); })
      .def("__repr__", [](const PyFunction& f) {
        return "<Function " + f.function->name + " (" +
               std::string(ir::FunctionTypeName(f.function->type)) + ")>";
      });

  py::class_<PyProgram>(m, "Program", "An immutable tile-IR program (one or more functions).")
      .def_property_readonly(
          "functions",
          [](const PyProgram& p) {
            std::vector<PyFunction> out;
            for (const ir::FunctionPtr& f : p.program->functions) out.push_back(PyFunction{f});
            return out;
          },
          "Functions in text order.")
      .def(
          "function",
          [](const PyProgram& p, const std::string& name) {
            ir::FunctionPtr f = p.program->Find(name);
            if (f == nullptr) {
              PyErr_SetString(PyExc_KeyError, ("no function named '" + name + "'").c_str());
              throw py::error_already_set();
            }
            return PyFunction{f};
          },
          py::arg("name"), "The function called `name` (KeyError if there is none).")
      .def(
          "print", [](const PyProgram& p) { return ir::PrintProgram(*p.program); },
          "The program in canonical text (parsing it gives an equal program).")
      .def(
          "to_proto",
          [](const PyProgram& p) {
            std::string data;
            if (!ir::ToProto(*p.program).SerializeToString(&data)) {
              RaiseStatus(absl::InternalError("cannot serialize the program"));
            }
            return py::bytes(data);
          },
          "The program as a serialized accelmem.ir.pb.Program message.")
      .def_static("from_proto", &ProgramFromProto, py::arg("data"),
                  "A program from a serialized message (ValueError when malformed).")
      .def(
          "verify",
          [](const PyProgram& p, const std::string& filename) {
            ir::VerifyOptions options;
            options.filename = filename;
            absl::Status s = ir::VerifyProgram(*p.program, options);
            if (!s.ok()) RaiseParseError(s);
          },
          py::arg("filename") = "<input>", "Runs the IR verifier; raises ParseError on failure.")
      .def(
          "structurally_equal",
          [](const PyProgram& a, const PyProgram& b, bool compare_memrefs, bool compare_addresses) {
            ir::StructuralEqualOptions o;
            o.compare_memrefs = compare_memrefs;
            o.compare_addresses = compare_addresses;
            return ir::StructuralEqual(*a.program, *b.program, o);
          },
          py::arg("other"), py::arg("compare_memrefs") = true, py::arg("compare_addresses") = true,
          "Structural equality (names of values do not matter).")
      .def("__eq__", [](const PyProgram& a,
                        const PyProgram& b) { return ir::StructuralEqual(*a.program, *b.program); })
      .def("__hash__", [](const PyProgram& p) { return ir::StructuralHash(*p.program); })
      .def("__str__", [](const PyProgram& p) { return ir::PrintProgram(*p.program); })
      .def("__repr__", [](const PyProgram& p) {
        return "<Program with " + std::to_string(p.program->functions.size()) + " function(s)>";
      });

  m.def(
      "parse",
      [](const std::string& text, const std::string& filename, bool verify) {
        return PyProgram{ParseText(text, filename, verify)};
      },
      py::arg("text"), py::arg("filename") = "<input>", py::arg("verify") = false,
      "Parses tile-IR text; ParseError (file, line, column, message) on the first error.");
}

}  // namespace python
}  // namespace accelmem

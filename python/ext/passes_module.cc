// File: python/ext/passes_module.cc
//
// accelmem._accelmem.passes and .backends: the memory passes as callable objects, the whole
// pipeline with tile_opt's options, the memory-plan check and report, and the process-wide
// backend selection.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "python/ext/common.h"
#include "python/ext/ir_module.h"

namespace accelmem {
namespace python {
namespace {

// Serializes runs that select a backend for their duration (BackendConfig is process-global).
std::mutex& BackendMutex() {
  static std::mutex* mu = new std::mutex;
  return *mu;
}

[[noreturn]] void RaisePassError(const absl::Status& status) {
  RaiseError("PassError", py::make_tuple(std::string(status.message())));
}

passes::MemoryPipelineOptions PipelineOptions(const std::string& planner, double budget_ms) {
  passes::MemoryPipelineOptions options;
  if (planner == "replay" || !passes::ParsePlacementStrategy(planner, &options.allocate.strategy)) {
    RaiseStatus(absl::InvalidArgumentError("unknown planner '" + planner +
                                           "' (known: sequential, greedy, search, constrained)"));
  }
  if (budget_ms < 0) RaiseStatus(absl::InvalidArgumentError("budget_ms must be >= 0"));
  options.allocate.budget = absl::Microseconds(static_cast<int64_t>(budget_ms * 1000));
  return options;
}

// One memory pass (immutable, callable on many programs).
struct PyPass {
  std::shared_ptr<const passes::Pass> pass;

  PyProgram Call(const PyProgram& program) const {
    absl::StatusOr<passes::ProgramResult> result;
    {
      py::gil_scoped_release release;
      result = pass->Run(program.program);
    }
    if (!result.ok()) RaisePassError(result.status());
    return PyProgram{result->program};
  }
};

// A configured pipeline: passes, backend, verification.
struct PyPipeline {
  std::string spec;
  std::string backend;  // "" = use whatever is configured
  bool verify = true;
  bool verify_memory_plan = false;
  std::string filename;
  passes::MemoryPipelineOptions options;
  std::function<void(const std::string&, const PyProgram&)> after_pass;
  std::vector<std::string> names;

  PyProgram Call(const PyProgram& program) const {
    absl::Status error;
    bool parse_like = false;
    ir::ProgramPtr out;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(BackendMutex());
      std::unique_ptr<backends::ScopedBackend> scoped;
      if (!backend.empty()) {
        absl::StatusOr<backends::BackendPtr> b =
            backend == "none" ? absl::StatusOr<backends::BackendPtr>(backends::BackendPtr())
                              : backends::BackendRegistry::Global().Create(backend);
        if (!b.ok()) {
          error = b.status();
        } else {
          scoped = std::make_unique<backends::ScopedBackend>(*b);
        }
      }
      if (error.ok()) {
        passes::PassManagerOptions pm_options;
        pm_options.verify = verify;
        std::string file = filename;
        pm_options.verifier = [file](const ir::Program& p) {
          return passes::VerifyWithActiveBackend(p, file);
        };
        if (after_pass) {
          auto callback = after_pass;
          pm_options.after_pass = [callback](absl::string_view name, const ir::Program& p) {
            py::gil_scoped_acquire acquire;
            callback(std::string(name), PyProgram{std::make_shared<ir::Program>(p.functions)});
          };
        }
        passes::PassManager pm(pm_options);
        error = passes::AddPasses(spec, &pm, options);
        if (error.ok()) {
          absl::StatusOr<passes::ProgramResult> result = pm.Run(program.program);
          if (!result.ok()) {
            error = result.status();
            // Errors of the input's verification carry a location.
            parse_like = absl::StrContains(error.message(), ": error: ");
          } else {
            out = result->program;
            if (verify_memory_plan) error = passes::VerifyMemoryPlan(*out);
          }
        }
      }
    }
    if (!error.ok()) {
      if (error.code() == absl::StatusCode::kNotFound) RaiseStatus(error);
      if (parse_like) RaiseParseError(error);
      RaisePassError(error);
    }
    return PyProgram{out};
  }
};

py::dict ReportDict(const passes::MemoryPlanReport& r) {
  py::dict d;
  d["function"] = r.function;
  d["num_statements"] = r.num_statements;
  py::list buffers;
  for (const passes::PlannedBuffer& b : r.buffers) {
    py::dict x;
    x["name"] = b.name;
    x["space"] = std::string(ir::MemorySpaceName(b.space));
    x["start"] = b.start;
    x["end"] = b.end;
    x["first_stmt"] = b.first_stmt;
    x["last_stmt"] = b.last_stmt;
    x["address"] = b.addr;
    x["size"] = b.size;
    x["memref"] = b.memref;
    buffers.append(x);
  }
  d["buffers"] = buffers;
  py::dict spaces;
  for (const passes::SpaceUsage& s : r.spaces) {
    py::dict x;
    x["high_water"] = s.high_water;
    x["load"] = s.load;
    x["capacity"] = s.capacity;
    spaces[py::str(std::string(ir::MemorySpaceName(s.space)))] = x;
  }
  d["spaces"] = spaces;
  return d;
}

}  // namespace

void BindPasses(py::module_& m) {
  m.doc() = "Memory passes over tile-IR programs and the memory pipeline.";

  py::class_<PyPass>(m, "Pass", "A memory pass; call it on a Program to get the new Program.")
      .def_property_readonly(
          "name", [](const PyPass& p) { return p.pass->Name(); }, "Kebab-case pass name.")
      .def("__call__", &PyPass::Call, py::arg("program"),
           "Runs the pass on every function; PassError on failure. Uses the configured backend.")
      .def("__repr__", [](const PyPass& p) { return "<Pass " + p.pass->Name() + ">"; });

  py::class_<PyPipeline>(m, "Pipeline", "A configured pass pipeline; call it on a Program.")
      .def_property_readonly(
          "passes", [](const PyPipeline& p) { return p.names; }, "Pass names, in order.")
      .def_property_readonly(
          "backend", [](const PyPipeline& p) { return p.backend; },
          "Backend selected while it runs ('' = the configured one).")
      .def("__call__", &PyPipeline::Call, py::arg("program"),
           "Runs the passes (verifying the IR in between when enabled).")
      .def("__repr__", [](const PyPipeline& p) { return "<Pipeline " + p.spec + ">"; });

  m.def(
      "create",
      [](const std::string& name, const std::string& planner, double budget_ms) {
        passes::MemoryPipelineOptions options = PipelineOptions(planner, budget_ms);
        absl::StatusOr<passes::PassPtr> p = passes::CreateMemoryPass(name, options);
        if (!p.ok()) RaiseStatus(absl::InvalidArgumentError(p.status().message()));
        return PyPass{std::shared_ptr<const passes::Pass>(std::move(*p))};
      },
      py::arg("name"), py::arg("planner") = "sequential", py::arg("budget_ms") = 100.0,
      "A pass by name ('init-memref', 'memory-reuse', 'allocate-memory-addr').");

  m.def(
      "pipeline",
      [](const std::string& passes_spec, const std::string& backend, const std::string& planner,
         double budget_ms, bool verify, bool verify_memory_plan, const std::string& filename,
         std::function<void(const std::string&, const PyProgram&)> after_pass) {
        PyPipeline p;
        p.spec = passes_spec;
        p.backend = backend;
        p.verify = verify;
        p.verify_memory_plan = verify_memory_plan;
        p.filename = filename;
        p.options = PipelineOptions(planner, budget_ms);
        p.after_pass = std::move(after_pass);
        if (!backend.empty() && backend != "none") {
          Unwrap(backends::BackendRegistry::Global().Create(backend));
        }
        passes::PassManager pm;
        absl::Status s = passes::AddPasses(passes_spec, &pm, p.options);
        if (!s.ok()) RaiseStatus(absl::InvalidArgumentError(s.message()));
        p.names = pm.PassNames();
        return p;
      },
      py::arg("passes"), py::arg("backend"), py::arg("planner"), py::arg("budget_ms"),
      py::arg("verify"), py::arg("verify_memory_plan"), py::arg("filename"), py::arg("after_pass"),
      "See accelmem.passes.pipeline.");

  m.def("pass_names", &passes::MemoryPassNames, "Known pass names, in pipeline order.");

  m.def(
      "verify_memory_plan",
      [](const PyProgram& program) {
        absl::Status s;
        {
          py::gil_scoped_release release;
          s = passes::VerifyMemoryPlan(*program.program);
        }
        if (!s.ok()) RaisePassError(s);
      },
      py::arg("program"),
      "Proves the plan safe (no live overlap, aligned, within capacity); PassError otherwise.");

  m.def(
      "memory_plan",
      [](const PyProgram& program) {
        py::list out;
        for (const ir::FunctionPtr& f : program.program->functions) {
          absl::StatusOr<passes::MemoryPlanReport> r = passes::AnalyzeMemoryPlan(*f);
          if (!r.ok()) RaisePassError(r.status());
          out.append(ReportDict(*r));
        }
        return out;
      },
      py::arg("program"), "One report dict per function: buffers and per-space usage.");
}

void BindBackends(py::module_& m) {
  m.doc() = "The SoC backends (allocator policy, tile sizes, capacities).";
  m.def(
      "names", [] { return backends::BackendRegistry::Global().Names(); },
      "Registered backend names, sorted.");
  m.def(
      "set",
      [](const std::string& name) {
        std::lock_guard<std::mutex> lock(BackendMutex());
        Check(backends::BackendConfig::SetByName(name));
      },
      py::arg("name"), "Selects a backend process-wide ('none' or '' resets).");
  m.def(
      "current",
      []() -> py::object {
        backends::BackendPtr b = backends::BackendConfig::Get();
        if (b == nullptr) return py::none();
        return py::str(b->Name());
      },
      "Name of the configured backend, or None.");
  m.def(
      "capacity",
      [](const std::string& name, const std::string& space) {
        backends::BackendPtr b = Unwrap(backends::BackendRegistry::Global().Create(name));
        return b->GetMemSize(Unwrap(ir::MemorySpaceFromName(space)));
      },
      py::arg("name"), py::arg("space"),
      "Capacity in bytes of a memory space ('Vec', 'Mat', ...) on a backend; 0 = unknown.");
}

}  // namespace python
}  // namespace accelmem

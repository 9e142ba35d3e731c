// File: python/ext/policy_module.cc
//
// accelmem._accelmem.policy: the lifetime placement planner and the placement checker over
// NumPy arrays. Inputs are read in place (int64, C-contiguous arrays are not copied; other
// integer arrays are converted once); offsets come back as an int64 array that owns the
// planner's result without a copy. And the constrained planner on schema-v1 problems: JSON text
// in, the result as JSON text out (accelmem.policy.solve turns it into a dict), so the problem
// and solution need no Python classes of their own.
#include <pybind11/numpy.h>

#include <memory>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "python/ext/common.h"

namespace accelmem {
namespace python {
namespace {

using I64Array = py::array_t<int64_t, py::array::c_style | py::array::forcecast>;

std::vector<policy::PlacementBuffer> Buffers(const I64Array& lower, const I64Array& upper,
                                             const I64Array& size) {
  if (lower.ndim() != 1 || upper.ndim() != 1 || size.ndim() != 1) {
    RaiseStatus(absl::InvalidArgumentError("lower, upper and size must be 1-D arrays"));
  }
  const py::ssize_t n = lower.shape(0);
  if (upper.shape(0) != n || size.shape(0) != n) {
    RaiseStatus(absl::InvalidArgumentError("lower, upper and size must have the same length"));
  }
  std::vector<policy::PlacementBuffer> buffers(n);
  const int64_t* lo = lower.data();
  const int64_t* hi = upper.data();
  const int64_t* sz = size.data();
  for (py::ssize_t i = 0; i < n; ++i) {
    buffers[i].id = std::to_string(i);
    buffers[i].start = lo[i];
    buffers[i].end = hi[i];
    buffers[i].size = sz[i];
  }
  return buffers;
}

// An int64 array that owns `values` (no copy).
py::array_t<int64_t> OwnedArray(std::vector<int64_t> values) {
  auto* heap = new std::vector<int64_t>(std::move(values));
  py::capsule owner(heap, [](void* p) { delete static_cast<std::vector<int64_t>*>(p); });
  return py::array_t<int64_t>({static_cast<py::ssize_t>(heap->size())}, {sizeof(int64_t)},
                              heap->data(), owner);
}

policy::PlacementLimits Limits(int64_t alignment, int64_t capacity) {
  policy::PlacementLimits limits;
  limits.alignment = alignment;
  limits.capacity = capacity;
  return limits;
}

policy::PlannerOptions Options(const std::string& mode, int64_t alignment, int64_t capacity,
                               double budget_ms) {
  policy::PlannerOptions options;
  if (mode == "greedy") {
    options.mode = policy::PlannerMode::kGreedy;
  } else if (mode == "search") {
    options.mode = policy::PlannerMode::kSearch;
  } else {
    RaiseStatus(absl::InvalidArgumentError("unknown mode '" + mode + "' (known: greedy, search)"));
  }
  if (budget_ms < 0) RaiseStatus(absl::InvalidArgumentError("budget_ms must be >= 0"));
  options.alignment = alignment;
  options.capacity = capacity;
  options.budget = absl::Microseconds(static_cast<int64_t>(budget_ms * 1000));
  return options;
}

// The constrained planner's result for a problem document, as the JSON object that
// accelmem.policy.solve documents ("solution": the solution document, null without a placement).
absl::StatusOr<std::string> SolveToJson(const std::string& text, const std::string& source,
                                        double budget_ms) {
  absl::StatusOr<policy::DsaProblemDocument> document = policy::ParseDsaProblemJson(text, source);
  if (!document.ok()) return document.status();
  policy::ConstrainedOptions options;
  options.budget = absl::Microseconds(static_cast<int64_t>(budget_ms * 1000));
  absl::StatusOr<policy::ConstrainedResult> result =
      policy::SolveConstrained(document->problem, options);
  if (!result.ok()) {
    return absl::Status(result.status().code(),
                        source + ": error: " + std::string(result.status().message()));
  }
  using Json = nlohmann::json;
  // One result as the JSON object accelmem.policy.solve documents; `solution` is the solution
  // document of `solved` (the problem as given, or the pipeline-relaxed one).
  auto to_json = [](const policy::ConstrainedResult& result, Json solution) {
    Json placements = Json::array();
    for (const policy::DsaPlacement& p : result.placements) {
      placements.push_back({{"buffer", p.buffer}, {"pool", p.pool}, {"offset", p.offset}});
    }
    Json pools = Json::array();
    for (const policy::PoolResult& pool : result.pools) {
      pools.push_back({{"pool", pool.pool},
                       {"name", pool.name},
                       {"status", policy::ConstrainedStatusName(pool.status)},
                       {"peak", pool.peak},
                       {"peak_lower_bound", pool.peak_lower_bound},
                       {"load", pool.load},
                       {"load_time", pool.load_time},
                       {"reuse_cost", pool.reuse_cost},
                       {"reuse_lower_bound", pool.reuse_lower_bound},
                       {"reason", pool.reason},
                       {"relaxed_pipeline_groups", pool.relaxed_pipeline_groups}});
    }
    return Json{{"status", policy::ConstrainedStatusName(result.status)},
                {"reuse_cost", result.reuse_cost},
                {"reuse_lower_bound", result.reuse_lower_bound},
                {"total_peak", result.total_peak},
                {"total_peak_lower_bound", result.total_peak_lower_bound},
                {"max_peak", result.max_peak},
                {"max_peak_lower_bound", result.max_peak_lower_bound},
                {"reason", result.reason},
                {"placements", std::move(placements)},
                {"pools", std::move(pools)},
                {"solution", std::move(solution)}};
  };
  Json solution = nullptr;
  if (!result->placements.empty()) {
    solution =
        Json::parse(policy::WriteDsaSolutionJson(policy::MakeSolutionDocument(*document, *result)));
  }
  Json out = to_json(*result, std::move(solution));
  out["relaxed"] = nullptr;
  if (result->relaxed) {
    // The pipeline-relaxed problem's answer: a different problem, never the answer itself.
    Json relaxed = to_json(result->relaxed->result,
                           Json::parse(policy::WriteDsaSolutionJson(
                               policy::MakeRelaxedSolutionDocument(*document, *result))));
    Json groups = Json::array();
    for (const auto& [pool, group] : result->relaxed->groups) {
      groups.push_back({{"pool", pool}, {"group", group}});
    }
    relaxed["relaxed_pipeline_groups"] = std::move(groups);
    out["relaxed"] = std::move(relaxed);
  }
  return out.dump();
}

}  // namespace

void BindPolicy(py::module_& m) {
  m.doc() = "Static buffer placement: planner, LOAD and checker over NumPy arrays.";

  py::class_<policy::PlacementPlan>(m, "PlacementPlan", "The planner's result.")
      .def_property_readonly(
          "offsets",
          [](const policy::PlacementPlan& p) {
            return py::array_t<int64_t>(static_cast<py::ssize_t>(p.offsets.size()),
                                        p.offsets.data());
          },
          "Offsets, one per buffer (a copy).")
      .def_readonly("height", &policy::PlacementPlan::height, "max(offset + size).")
      .def_readonly("load", &policy::PlacementPlan::load, "LOAD, the lower bound.")
      .def_readonly("within_capacity", &policy::PlacementPlan::within_capacity,
                    "height <= capacity (True without one).")
      .def_readonly("method", &policy::PlacementPlan::method, "What produced the result.")
      .def_readonly("search_nodes", &policy::PlacementPlan::search_nodes,
                    "Branch-and-bound nodes explored (search mode).")
      .def_readonly("lower_bound", &policy::PlacementPlan::lower_bound,
                    "Best known lower bound on the height.")
      .def_readonly("proven_optimal", &policy::PlacementPlan::proven_optimal,
                    "height == lower_bound.")
      .def("__repr__", [](const policy::PlacementPlan& p) {
        return "<PlacementPlan height=" + std::to_string(p.height) +
               " load=" + std::to_string(p.load) + " method=" + p.method + ">";
      });

  m.def(
      "plan",
      [](const I64Array& lower, const I64Array& upper, const I64Array& size, int64_t alignment,
         int64_t capacity, const std::string& mode, double budget_ms, uint64_t seed,
         int search_threads) {
        std::vector<policy::PlacementBuffer> buffers = Buffers(lower, upper, size);
        policy::PlannerOptions options = Options(mode, alignment, capacity, budget_ms);
        options.seed = seed;
        options.search_threads = search_threads;
        absl::StatusOr<policy::PlacementPlan> plan;
        {
          py::gil_scoped_release release;
          plan = policy::PlanPlacement(buffers, options);
        }
        return Unwrap(std::move(plan));
      },
      py::arg("lower"), py::arg("upper"), py::arg("size"), py::arg("alignment"),
      py::arg("capacity"), py::arg("mode"), py::arg("budget_ms"), py::arg("seed"),
      py::arg("search_threads"), "See accelmem.policy.plan.");

  m.def(
      "place",
      [](const I64Array& lower, const I64Array& upper, const I64Array& size, int64_t alignment,
         int64_t capacity, const std::string& mode, double budget_ms) {
        std::vector<policy::PlacementBuffer> buffers = Buffers(lower, upper, size);
        policy::PlannerOptions options = Options(mode, alignment, capacity, budget_ms);
        absl::StatusOr<policy::PlacementPlan> plan;
        {
          py::gil_scoped_release release;
          plan = policy::PlanPlacement(buffers, options);
        }
        return OwnedArray(Unwrap(std::move(plan)).offsets);
      },
      py::arg("lower"), py::arg("upper"), py::arg("size"), py::arg("alignment"),
      py::arg("capacity"), py::arg("mode"), py::arg("budget_ms"), "See accelmem.policy.place.");

  m.def(
      "load",
      [](const I64Array& lower, const I64Array& upper, const I64Array& size) {
        std::vector<policy::PlacementBuffer> buffers = Buffers(lower, upper, size);
        Check(policy::ValidateInstance(buffers));
        return policy::ComputeLoad(buffers);
      },
      py::arg("lower"), py::arg("upper"), py::arg("size"), "See accelmem.policy.load.");

  m.def(
      "height",
      [](const I64Array& lower, const I64Array& upper, const I64Array& size,
         const I64Array& offsets) {
        std::vector<policy::PlacementBuffer> buffers = Buffers(lower, upper, size);
        if (offsets.ndim() != 1 || offsets.shape(0) != static_cast<py::ssize_t>(buffers.size())) {
          RaiseStatus(absl::InvalidArgumentError("offsets must be a 1-D array, one per buffer"));
        }
        return policy::PlacementHeight(
            buffers, absl::MakeConstSpan(offsets.data(), static_cast<size_t>(offsets.shape(0))));
      },
      py::arg("lower"), py::arg("upper"), py::arg("size"), py::arg("offsets"),
      "See accelmem.policy.height.");

  m.def(
      "check",
      [](const I64Array& lower, const I64Array& upper, const I64Array& size,
         const I64Array& offsets, int64_t alignment, int64_t capacity) {
        std::vector<policy::PlacementBuffer> buffers = Buffers(lower, upper, size);
        if (offsets.ndim() != 1 || offsets.shape(0) != static_cast<py::ssize_t>(buffers.size())) {
          RaiseStatus(absl::InvalidArgumentError("offsets must be a 1-D array, one per buffer"));
        }
        absl::Status s;
        {
          py::gil_scoped_release release;
          s = policy::CheckPlacement(
              buffers, absl::MakeConstSpan(offsets.data(), static_cast<size_t>(offsets.shape(0))),
              Limits(alignment, capacity));
        }
        if (!s.ok()) RaiseError("PlacementError", py::make_tuple(std::string(s.message())));
      },
      py::arg("lower"), py::arg("upper"), py::arg("size"), py::arg("offsets"), py::arg("alignment"),
      py::arg("capacity"), "See accelmem.policy.check.");

  m.def(
      "solve",
      [](const std::string& text, const std::string& source, double budget_ms) {
        if (!(budget_ms >= 0)) RaiseStatus(absl::InvalidArgumentError("budget_ms must be >= 0"));
        absl::StatusOr<std::string> result;
        {
          py::gil_scoped_release release;
          result = SolveToJson(text, source, budget_ms);
        }
        return Unwrap(std::move(result));
      },
      py::arg("text"), py::arg("source"), py::arg("budget_ms"), "See accelmem.policy.solve.");
}

}  // namespace python
}  // namespace accelmem

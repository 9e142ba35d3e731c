// place: static buffer placement from the command line, on instances in the CSV format of
// the MiniMalloc and idealloc benchmark sets (see third_party/placement_instances), and on
// schema-v1 constrained problems (JSON, see third_party/dsa_solver_corpus), so results compare
// with other tools on the same files.
//
//   place [--mode=greedy|search] [--budget-ms=N] [--capacity=B] [--alignment=A]
//         [--search-threads=N] [-o OUT] INSTANCE.csv
//       Plans a placement with //policy:lifetime_planner, checks it with
//       //policy:placement_checker, writes `id,offset` CSV to OUT (default stdout) and prints
//       height, LOAD and height/LOAD to stderr. Exits 1 if the result is above --capacity.
//   place --check=PLACEMENT.csv [--capacity=B] [--alignment=A] INSTANCE.csv
//       Validates an existing placement (from any tool) against the instance.
//   place [--budget-ms=N] [-o SOLUTION.json] PROBLEM.json
//       Solves a schema-v1 problem with //policy:constrained_planner (budget default 100 ms),
//       proves the result with the independent //policy:dsa_validator (a violation is a planner
//       bug: exit 2), writes the solution document to SOLUTION.json (default stdout) when a
//       placement exists, and prints the status, the reuse cost and its lower bound and one line
//       per pool to stderr. Exits 0 when it fits, 1 when proven infeasible or no fit was found,
//       3 when the problem as given is proven infeasible with pipeline depth hard and fits with
//       it relaxed: the solution written is then the relaxed problem's (metadata "solves", its
//       own status, the groups relaxed, the relaxed problem's fingerprint, so --check against
//       the problem as given rejects it).
//   place --check=SOLUTION.json PROBLEM.json
//       Replays a solution document (from any tool) against the problem: same instance, same
//       fingerprint, every hard constraint; prints its reuse cost and peaks.
//
// Every input error is printed as `file:line: error: ...` (CSV) or `file: json.path: ...`
// (JSON, as the schema-v1 parser words it) and exits 1.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "policy/constrained_planner.h"
#include "policy/dsa_problem.h"
#include "policy/dsa_validator.h"
#include "policy/lifetime_planner.h"
#include "policy/place_csv.h"
#include "policy/placement_checker.h"

namespace {

using accelmem::policy::PlacementBuffer;
namespace policy = ::accelmem::policy;

constexpr char kUsage[] =
    "usage: place [--mode=greedy|search] [--budget-ms=N] [--capacity=BYTES] [--alignment=A]\n"
    "             [--search-threads=N] [-o OUT.csv] INSTANCE.csv\n"
    "       place --check=PLACEMENT.csv [--capacity=BYTES] [--alignment=A] INSTANCE.csv\n"
    "       place [--budget-ms=N] [-o SOLUTION.json] PROBLEM.json\n"
    "       place --check=SOLUTION.json PROBLEM.json\n"
    "INSTANCE.csv has the header id,lower,upper,size (half-open lifetimes [lower, upper));\n"
    "the placement written or checked has the header id,offset. --capacity=0 means unbounded.\n"
    "PROBLEM.json is a schema-v1 problem document, SOLUTION.json a solution document (the\n"
    "schemas of github.com/tonibohnlein/dsa-solver); --budget-ms defaults to 1000 for CSV and\n"
    "100 for JSON. JSON exit status: 0 fits, 1 infeasible or no fit found (or bad input), 2 the\n"
    "planner's placement failed the independent validator (a bug).\n";

int Fail(const std::string& message) {
  std::cerr << message << "\n";
  return 1;
}

int UsageError(const std::string& message) {
  std::cerr << "place: error: " << message << "\n" << kUsage;
  return 1;
}

struct Args {
  std::string mode = "greedy";
  int64_t budget_ms = -1;  // -1: the default of the mode (1000 CSV, 100 JSON).
  int64_t capacity = 0;
  int64_t alignment = 1;
  int64_t search_threads = 0;
  std::string output;
  std::string check;
  std::string instance;
  std::vector<std::string> csv_only;  // CSV-only flags given (an error for JSON problems).
};

// Parses `--name=value` for an integer flag; returns false (with a message) on a bad value.
bool IntFlag(const std::string& arg, const std::string& name, int64_t min, int64_t* value,
             std::string* error) {
  const std::string text = arg.substr(name.size() + 1);
  if (!absl::SimpleAtoi(text, value) || *value < min) {
    *error = absl::StrFormat("%s needs an integer >= %d, got '%s'", name, min, text);
    return false;
  }
  return true;
}

void PrintSummary(const std::string& label, size_t count, int64_t height, int64_t load) {
  const double ratio = load > 0 ? static_cast<double>(height) / static_cast<double>(load) : 1.0;
  std::cerr << absl::StrFormat("%s: %d buffers, height %d, LOAD %d, height/LOAD %.6f\n", label,
                               count, height, load, ratio);
}

// Writes `text` to `path`, or to stdout for "" and "-".
int WriteOutput(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    std::cout << text;
    std::cout.flush();
    return 0;
  }
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) return Fail(path + ": error: cannot write file");
  return 0;
}

bool IsJsonPath(const std::string& path) { return absl::EndsWithIgnoreCase(path, ".json"); }

// Pool id -> number of buffers allowed in it (pools without buffers are absent).
std::map<uint32_t, int> BuffersInPool(const policy::DsaProblem& problem) {
  std::map<uint32_t, int> count;
  for (const policy::DsaBuffer& buffer : problem.buffers) {
    for (uint32_t pool : buffer.allowed_pools) ++count[pool];
  }
  return count;
}

int InternalError(const std::string& path, const std::string& message) {
  std::cerr << path << ": internal error: " << message << "\n";
  return 2;
}

// What the reader skipped (an extension it does not know): said, never fatal.
void Warn(const std::string& path, const policy::DsaProblemDocument& document) {
  for (const std::string& warning : document.warnings) {
    std::cerr << path << ": warning: " << warning << "\n";
  }
}

// place [--budget-ms=N] [-o SOLUTION.json] PROBLEM.json
int SolveJson(const Args& args) {
  absl::StatusOr<std::string> text = policy::ReadTextFile(args.instance);
  if (!text.ok()) return Fail(std::string(text.status().message()));
  absl::StatusOr<policy::DsaProblemDocument> document =
      policy::ParseDsaProblemJson(*text, args.instance);
  if (!document.ok()) return Fail(std::string(document.status().message()));
  Warn(args.instance, *document);

  policy::ConstrainedOptions options;
  options.budget = absl::Milliseconds(args.budget_ms < 0 ? 100 : args.budget_ms);
  const auto started = std::chrono::steady_clock::now();
  absl::StatusOr<policy::ConstrainedResult> result =
      policy::SolveConstrained(document->problem, options);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  if (!result.ok()) {
    // SolveConstrained has the independent validator check every placement it returns; a
    // placement it rejects comes back as an internal error (a planner bug).
    if (result.status().code() == absl::StatusCode::kInternal) {
      return InternalError(args.instance, std::string(result.status().message()));
    }
    return Fail(args.instance + ": error: " + std::string(result.status().message()));
  }
  const bool fits = result->status == policy::ConstrainedStatus::kOptimal ||
                    result->status == policy::ConstrainedStatus::kFeasible;
  // SolveConstrained has the independent validator check both placements (and the costs they
  // report) before it returns, so what is written here has been proven.
  const bool relaxed = !fits && result->relaxed != nullptr;
  if (fits || relaxed) {
    const policy::DsaSolutionDocument solution =
        relaxed ? policy::MakeRelaxedSolutionDocument(*document, *result)
                : policy::MakeSolutionDocument(*document, *result);
    if (int status = WriteOutput(args.output, policy::WriteDsaSolutionJson(solution));
        status != 0) {
      return status;
    }
  }

  const policy::DsaProblem& problem = document->problem;
  const std::map<uint32_t, int> buffers_in_pool = BuffersInPool(problem);
  auto print = [&](const char* what, const policy::ConstrainedResult& r) {
    std::cerr << absl::StrFormat(
        "%s: %sstatus %s, reuse cost %d (lower bound %d), total peak %d, max peak %d, %d "
        "buffers, %d pools, %.1f ms\n",
        args.instance, what, policy::ConstrainedStatusName(r.status), r.reuse_cost,
        r.reuse_lower_bound, r.total_peak, r.max_peak, problem.buffers.size(), problem.pools.size(),
        ms);
    for (const policy::PoolResult& pool : r.pools) {
      if (buffers_in_pool.count(pool.pool) == 0) continue;
      std::string line = absl::StrFormat(
          "pool %d %s: status %s peak %d (lower bound %d) load %d at time %d reuse %d (lower "
          "bound %d)",
          pool.pool, pool.name, policy::ConstrainedStatusName(pool.status), pool.peak,
          pool.peak_lower_bound, pool.load, pool.load_time, pool.reuse_cost,
          pool.reuse_lower_bound);
      if (!pool.relaxed_pipeline_groups.empty()) {
        line += "; relaxed pipeline groups: " + absl::StrJoin(pool.relaxed_pipeline_groups, ", ");
      }
      if (!pool.reason.empty()) line += "; " + pool.reason;
      std::cerr << line << "\n";
    }
  };
  print("", *result);
  if (!fits && !result->reason.empty()) {
    std::cerr << args.instance << ": " << result->reason << "\n";
  }
  if (relaxed) {
    // Not an answer to the problem as given: its own status, groups and fingerprint, exit 3.
    print("pipeline-relaxed problem: ", result->relaxed->result);
    return 3;
  }
  return fits ? 0 : 1;
}

// place --check=SOLUTION.json PROBLEM.json
int CheckJson(const Args& args) {
  absl::StatusOr<std::string> text = policy::ReadTextFile(args.instance);
  if (!text.ok()) return Fail(std::string(text.status().message()));
  absl::StatusOr<policy::DsaProblemDocument> document =
      policy::ParseDsaProblemJson(*text, args.instance);
  if (!document.ok()) return Fail(std::string(document.status().message()));
  Warn(args.instance, *document);
  absl::StatusOr<std::string> solution_text = policy::ReadTextFile(args.check);
  if (!solution_text.ok()) return Fail(std::string(solution_text.status().message()));
  absl::StatusOr<policy::DsaSolutionDocument> solution =
      policy::ParseDsaSolutionJson(*solution_text, args.check);
  if (!solution.ok()) return Fail(std::string(solution.status().message()));

  if (absl::Status s = policy::CheckDsaSolutionDocument(*document, *solution); !s.ok()) {
    return Fail(args.check + ": error: invalid solution: " + std::string(s.message()));
  }
  const policy::DsaSolutionCheck check =
      policy::CheckDsaSolution(document->problem, solution->placements);
  std::cerr << absl::StrFormat(
      "%s: valid: %d placements, reuse cost %d, total peak %d, max peak %d, capacity overflow "
      "%d\n",
      args.check, solution->placements.size(), check.reuse_cost, check.total_peak, check.max_peak,
      check.capacity_overflow);
  const std::map<uint32_t, int> buffers_in_pool = BuffersInPool(document->problem);
  for (const policy::DsaPool& pool : document->problem.pools) {
    if (buffers_in_pool.count(pool.id) == 0) continue;
    auto peak = check.peak_by_pool.find(pool.id);
    std::cerr << absl::StrFormat("pool %d %s: peak %d\n", pool.id, pool.name,
                                 peak == check.peak_by_pool.end() ? 0 : peak->second);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  std::string error;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::cout << kUsage;
      return 0;
    } else if (absl::StartsWith(arg, "--mode=")) {
      args.csv_only.push_back("--mode");
      args.mode = arg.substr(7);
      if (args.mode != "greedy" && args.mode != "search") {
        return UsageError("--mode must be greedy or search, got '" + args.mode + "'");
      }
    } else if (absl::StartsWith(arg, "--budget-ms=")) {
      if (!IntFlag(arg, "--budget-ms", 0, &args.budget_ms, &error)) return UsageError(error);
    } else if (absl::StartsWith(arg, "--capacity=")) {
      args.csv_only.push_back("--capacity");
      if (!IntFlag(arg, "--capacity", 0, &args.capacity, &error)) return UsageError(error);
    } else if (absl::StartsWith(arg, "--search-threads=")) {
      args.csv_only.push_back("--search-threads");
      if (!IntFlag(arg, "--search-threads", 0, &args.search_threads, &error)) {
        return UsageError(error);
      }
    } else if (absl::StartsWith(arg, "--alignment=")) {
      args.csv_only.push_back("--alignment");
      if (!IntFlag(arg, "--alignment", 1, &args.alignment, &error)) return UsageError(error);
    } else if (absl::StartsWith(arg, "--check=")) {
      args.check = arg.substr(8);
      if (args.check.empty()) return UsageError("--check needs a placement file");
    } else if (arg == "-o") {
      if (i + 1 >= argc) return UsageError("-o needs a file name");
      args.output = argv[++i];
    } else if (absl::StartsWith(arg, "-o=") || absl::StartsWith(arg, "--output=")) {
      args.output = arg.substr(arg.find('=') + 1);
    } else if (absl::StartsWith(arg, "-") && arg != "-") {
      return UsageError("unknown option '" + arg + "'");
    } else if (args.instance.empty()) {
      args.instance = arg;
    } else {
      return UsageError("more than one instance file ('" + args.instance + "', '" + arg + "')");
    }
  }
  if (args.instance.empty()) return UsageError("no instance file");

  if (IsJsonPath(args.instance)) {
    if (!args.csv_only.empty()) {
      return UsageError(args.csv_only.front() + " applies to CSV instances only");
    }
    if (!args.check.empty()) {
      if (!args.output.empty()) return UsageError("-o and --check do not go together");
      return CheckJson(args);
    }
    return SolveJson(args);
  }

  absl::StatusOr<std::string> text = accelmem::policy::ReadTextFile(args.instance);
  if (!text.ok()) return Fail(std::string(text.status().message()));
  absl::StatusOr<std::vector<PlacementBuffer>> buffers =
      accelmem::policy::ParseInstanceCsv(*text, args.instance);
  if (!buffers.ok()) return Fail(std::string(buffers.status().message()));

  accelmem::policy::PlacementLimits limits;
  limits.alignment = args.alignment;
  limits.capacity = args.capacity;
  if (absl::Status s = accelmem::policy::ValidateInstance(*buffers, limits); !s.ok()) {
    return Fail(args.instance + ": error: " + std::string(s.message()));
  }
  const int64_t load = accelmem::policy::ComputeLoad(*buffers);

  if (!args.check.empty()) {
    absl::StatusOr<std::string> placement_text = accelmem::policy::ReadTextFile(args.check);
    if (!placement_text.ok()) return Fail(std::string(placement_text.status().message()));
    absl::StatusOr<std::vector<int64_t>> offsets =
        accelmem::policy::ParsePlacementCsv(*placement_text, args.check, *buffers);
    if (!offsets.ok()) return Fail(std::string(offsets.status().message()));
    if (absl::Status s = accelmem::policy::CheckPlacement(*buffers, *offsets, limits); !s.ok()) {
      return Fail(args.check + ": error: invalid placement: " + std::string(s.message()));
    }
    PrintSummary(args.check + ": valid", buffers->size(),
                 accelmem::policy::PlacementHeight(*buffers, *offsets), load);
    return 0;
  }

  accelmem::policy::PlannerOptions options;
  options.mode = args.mode == "search" ? accelmem::policy::PlannerMode::kSearch
                                       : accelmem::policy::PlannerMode::kGreedy;
  options.alignment = args.alignment;
  options.capacity = args.capacity;
  options.budget = absl::Milliseconds(args.budget_ms < 0 ? 1000 : args.budget_ms);
  options.search_threads = static_cast<int>(std::min<int64_t>(args.search_threads, 64));
  const auto started = std::chrono::steady_clock::now();
  absl::StatusOr<accelmem::policy::PlacementPlan> plan =
      accelmem::policy::PlanPlacement(*buffers, options);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  if (!plan.ok()) return Fail(args.instance + ": error: " + std::string(plan.status().message()));
  // The planner's result is proven by the independent checker before it is written.
  if (absl::Status s =
          accelmem::policy::CheckPlacement(*buffers, plan->offsets, {args.alignment, 0});
      !s.ok()) {
    return Fail(args.instance + ": internal error: planner produced an invalid placement: " +
                std::string(s.message()));
  }
  if (int status =
          WriteOutput(args.output, accelmem::policy::FormatPlacementCsv(*buffers, plan->offsets));
      status != 0) {
    return status;
  }
  PrintSummary(args.instance, buffers->size(), plan->height, load);
  if (plan->lower_bound > load) {
    // Search proved that nothing fits under a target above LOAD.
    std::cerr << absl::StrFormat("lower bound %d (proven by search), height/bound %.6f%s\n",
                                 plan->lower_bound,
                                 static_cast<double>(plan->height) / plan->lower_bound,
                                 plan->proven_optimal ? ", optimal" : "");
  } else if (plan->proven_optimal) {
    std::cerr << "height reaches LOAD: optimal\n";
  }
  std::cerr << absl::StrFormat("method %s, %.1f ms%s\n", plan->method, ms,
                               plan->search_nodes > 0
                                   ? absl::StrFormat(", %d search nodes", plan->search_nodes)
                                   : std::string());
  if (!plan->within_capacity) {
    return Fail(absl::StrFormat("%s: error: height %d exceeds --capacity=%d", args.instance,
                                plan->height, args.capacity));
  }
  return 0;
}

// place: static buffer placement from the command line, on instances in the CSV format of
// the MiniMalloc and idealloc benchmark sets (see third_party/placement_instances), so results
// compare with other tools on the same files.
//
//   place [--mode=greedy|search] [--budget-ms=N] [--capacity=B] [--alignment=A]
//         [--search-threads=N] [-o OUT] INSTANCE.csv
//       Plans a placement with //policy:lifetime_planner, checks it with
//       //policy:placement_checker, writes `id,offset` CSV to OUT (default stdout) and prints
//       height, LOAD and height/LOAD to stderr. Exits 1 if the result is above --capacity.
//   place --check=PLACEMENT.csv [--capacity=B] [--alignment=A] INSTANCE.csv
//       Validates an existing placement (from any tool) against the instance.
//
// Every input error is printed as `file:line: error: ...` and exits 1.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "policy/lifetime_planner.h"
#include "policy/place_csv.h"
#include "policy/placement_checker.h"

namespace {

using accelmem::policy::PlacementBuffer;

constexpr char kUsage[] =
    "usage: place [--mode=greedy|search] [--budget-ms=N] [--capacity=BYTES] [--alignment=A]\n"
    "             [--search-threads=N] [-o OUT.csv] INSTANCE.csv\n"
    "       place --check=PLACEMENT.csv [--capacity=BYTES] [--alignment=A] INSTANCE.csv\n"
    "INSTANCE.csv has the header id,lower,upper,size (half-open lifetimes [lower, upper));\n"
    "the placement written or checked has the header id,offset. --capacity=0 means unbounded.\n";

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
  int64_t budget_ms = 1000;
  int64_t capacity = 0;
  int64_t alignment = 1;
  int64_t search_threads = 0;
  std::string output;
  std::string check;
  std::string instance;
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
      args.mode = arg.substr(7);
      if (args.mode != "greedy" && args.mode != "search") {
        return UsageError("--mode must be greedy or search, got '" + args.mode + "'");
      }
    } else if (absl::StartsWith(arg, "--budget-ms=")) {
      if (!IntFlag(arg, "--budget-ms", 0, &args.budget_ms, &error)) return UsageError(error);
    } else if (absl::StartsWith(arg, "--capacity=")) {
      if (!IntFlag(arg, "--capacity", 0, &args.capacity, &error)) return UsageError(error);
    } else if (absl::StartsWith(arg, "--search-threads=")) {
      if (!IntFlag(arg, "--search-threads", 0, &args.search_threads, &error)) {
        return UsageError(error);
      }
    } else if (absl::StartsWith(arg, "--alignment=")) {
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
  options.budget = absl::Milliseconds(args.budget_ms);
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
  const std::string csv = accelmem::policy::FormatPlacementCsv(*buffers, plan->offsets);
  if (args.output.empty() || args.output == "-") {
    std::cout << csv;
    std::cout.flush();
  } else {
    std::ofstream out(args.output, std::ios::binary);
    out << csv;
    out.close();
    if (!out) return Fail(args.output + ": error: cannot write file");
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

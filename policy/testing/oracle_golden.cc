#include "policy/testing/oracle_golden.h"

#include <algorithm>
#include <random>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace accelmem {
namespace policy_testing {

using policy::DsaObjectiveTerm;
using policy::DsaProblem;

DsaGeneratorOptions OracleFamily(int family) {
  DsaGeneratorOptions options;
  if (family == 1) {
    options.tight_probability = 0.8;
    options.unbounded_probability = 0;
    options.penalty_probability = 0.9;
    options.max_buffers = 10;
  } else if (family == 2) {
    options.aligned_probability = 1.0;
    options.reserved_probability = 0.8;
    options.pin_probability = 0.6;
    options.max_buffers = 10;
  } else if (family == 3) {
    options.max_size_units = 1;
    options.tight_probability = 0.9;
    options.unbounded_probability = 0;
    options.reserved_probability = 0;
    options.pin_probability = 0;
    options.colocation_probability = 0;
    options.penalty_probability = 0.9;
    options.min_buffers = 5;
    options.max_buffers = 9;  // Equal sizes are the MILP's slowest case (symmetry).
  } else if (family == 4) {
    options.max_size_units = 4;
    options.tight_probability = 0.9;
    options.unbounded_probability = 0;
    options.reserved_probability = 0;
    options.pin_probability = 0;
    options.penalty_probability = 0.8;
    options.max_buffers = 10;
  } else if (family == 5) {
    options.max_buffers = 9;  // Up to 2^k choices of pools, each one MILP.
    options.two_pools_probability = 0.7;
    options.colocation_probability = 0.6;
    options.pin_probability = 0.5;
    options.multi_pool_probability = 0.25;
    options.cross_pool_colocation_probability = 0.3;
    options.chained_separation_probability = 0.3;
    options.edge_pin_probability = 0.5;
    options.pipeline_probability = 0.5;
    options.every_objective_order = true;
  }
  return options;
}

int OracleFamilySeeds(int family) {
  if (family == 3 || family == 6) return 60;
  if (family == 5) return 200;
  return 150;
}

uint64_t OracleSeed(int family, int index) {
  return family == 6 ? 9000 + index : 1000 * (family + 1) + index;
}

DsaProblem OracleProblem(int family, uint64_t seed) {
  return family == 6 ? GroupedProblem(seed) : GenerateDsaProblem(seed, OracleFamily(family));
}

DsaProblem GroupedProblem(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](int lo, int hi) { return lo + static_cast<int>(rng() % (hi - lo + 1)); };
  constexpr uint64_t kUnit = 32;
  DsaProblem problem;
  policy::DsaPool pool;
  pool.id = 0;
  pool.name = "Mat";
  problem.pools.push_back(pool);
  const int groups = uniform(3, 5);
  std::vector<int> group_of;
  uint64_t largest = 0;
  for (int g = 0; g < groups; ++g) {
    // At most 10 buffers: the MILP slows down steeply past that.
    const int members = std::min<int>(
        uniform(1, 3), 10 - static_cast<int>(problem.buffers.size()) - (groups - 1 - g));
    uint64_t total = 0;
    for (int m = 0; m < members; ++m) {
      policy::DsaBuffer b;
      b.id = static_cast<uint32_t>(problem.buffers.size());
      b.name = "b" + std::to_string(b.id);
      b.size = kUnit * uniform(1, 2);
      b.alignment = kUnit;
      b.live_intervals = {{2 * g, 2 * g + 1}};
      b.allowed_pools = {0};
      total += b.size;
      problem.buffers.push_back(b);
      group_of.push_back(g);
    }
    largest = std::max(largest, total);
  }
  problem.pools[0].capacity = largest + kUnit * uniform(0, 1);
  problem.cost_model.emplace();
  for (size_t a = 0; a < problem.buffers.size(); ++a) {
    for (size_t b = a + 1; b < problem.buffers.size(); ++b) {
      if (group_of[a] == group_of[b] || rng() % 10 >= 7) continue;
      policy::DsaReusePenalty penalty;
      penalty.first = static_cast<uint32_t>(a);
      penalty.second = static_cast<uint32_t>(b);
      penalty.cost = uniform(1, 2);
      problem.cost_model->reuse_penalties.push_back(penalty);
    }
  }
  problem.objective.terms = {DsaObjectiveTerm::kCapacityOverflow, DsaObjectiveTerm::kReuseCost};
  return problem;
}

std::string ProblemFingerprint(const DsaProblem& problem) {
  policy::DsaProblemDocument document;
  document.instance = "generated";
  document.problem = problem;
  return policy::DsaProblemFingerprint(document);
}

namespace {

std::string FormatOptimum(const GoldenOptimum& o) {
  if (!o.feasible) return absl::StrCat(o.fingerprint, " infeasible - R=0 T=0 M=0");
  return absl::StrCat(o.fingerprint, " optimal ", absl::StrJoin(o.terms, ","), " R=", o.reuse_cost,
                      " T=", o.total_peak, " M=", o.max_peak);
}

bool ParseU64(absl::string_view text, uint64_t* out) { return absl::SimpleAtoi(text, out); }

absl::StatusOr<GoldenOptimum> ParseOptimum(const std::vector<std::string>& f, size_t at,
                                           const std::string& where) {
  if (f.size() < at + 6) return absl::InvalidArgumentError(where + ": too few fields");
  GoldenOptimum o;
  o.fingerprint = f[at];
  if (f[at + 1] != "optimal" && f[at + 1] != "infeasible") {
    return absl::InvalidArgumentError(where + ": status '" + f[at + 1] + "'");
  }
  o.feasible = f[at + 1] == "optimal";
  if (o.feasible) {
    for (absl::string_view t : absl::StrSplit(f[at + 2], ',')) {
      uint64_t v = 0;
      if (!ParseU64(t, &v)) return absl::InvalidArgumentError(where + ": term '" + f[at + 2] + "'");
      o.terms.push_back(v);
    }
  }
  const char* keys[] = {"R=", "T=", "M="};
  uint64_t* values[] = {&o.reuse_cost, &o.total_peak, &o.max_peak};
  for (int k = 0; k < 3; ++k) {
    const std::string& field = f[at + 3 + k];
    if (field.rfind(keys[k], 0) != 0 || !ParseU64(field.substr(2), values[k])) {
      return absl::InvalidArgumentError(where + ": field '" + field + "'");
    }
  }
  return o;
}

}  // namespace

std::string FormatGolden(const GoldenEntry& entry) {
  std::string line = absl::StrCat(entry.family, " ", entry.seed, " ", FormatOptimum(entry.given));
  if (entry.relaxed) absl::StrAppend(&line, " ", FormatOptimum(*entry.relaxed));
  return line;
}

absl::StatusOr<std::vector<GoldenEntry>> ParseGolden(const std::string& text) {
  std::vector<GoldenEntry> entries;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    const std::string where = absl::StrCat("line ", line_number);
    GoldenEntry entry;
    uint64_t family = 0;
    if (f.size() < 2 || !ParseU64(f[0], &family) || !ParseU64(f[1], &entry.seed)) {
      return absl::InvalidArgumentError(where + ": no family and seed");
    }
    entry.family = static_cast<int>(family);
    absl::StatusOr<GoldenOptimum> given = ParseOptimum(f, 2, where);
    if (!given.ok()) return given.status();
    entry.given = *given;
    if (f.size() > 8) {
      absl::StatusOr<GoldenOptimum> relaxed = ParseOptimum(f, 8, where);
      if (!relaxed.ok()) return relaxed.status();
      entry.relaxed = *relaxed;
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

}  // namespace policy_testing
}  // namespace accelmem

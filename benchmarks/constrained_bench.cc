// Constrained placement: //policy:constrained_planner on the schema-v1 corpus of
// //third_party/dsa_solver_corpus, next to the published planners' results for the same files
// (results/dsa-rp-v1/paired-objectives.csv, results/minimalloc-dsa-rp-v1/summary.csv) and a
// plain first fit in this file. Every placement a row reports is first proven by the independent
// //policy:dsa_validator (a violation aborts the row), and the costs counted are the validator's.
//
//   BM_Constrained_PyptoLib          the 587 PyPTO-Lib problems, each solved once per iteration
//                                    at the default budget (100 ms). Counters: problems, fits,
//                                    optimal, infeasible_proven, no_fit (all of the problems as
//                                    given), relaxed (of the infeasible ones, those that fit
//                                    with pipeline depth relaxed: another problem), errors,
//                                    median_ms and p95_ms (per problem, one thread); over the 150
//                                    hard/soft pairs: pairs_fit (either fits), pairs_soft_fit,
//                                    pairs_proven (soft optimal, or both proven infeasible),
//                                    pairs_total_reuse (soft reuse costs of the fitting soft
//                                    problems), pairs_above_published and pairs_below_published
//                                    (soft cost against the pair's best_known_cost),
//                                    published_best_total_reuse (439) and published_proven (136).
//   BM_Constrained_MinimallocRp/<L>  the reuse-penalty lift of MiniMalloc A..K, 10 s budget:
//                                    reuse_cost, reuse_lower_bound, published_best (the least
//                                    best_reuse_cost of a validated fitting run), vs_published =
//                                    published_best / max(1, reuse_cost) (>= 1: at or better
//                                    than published), status (ConstrainedStatus code), seconds.
//   BM_Constrained_PyptoLibFirstFit  the baseline: each buffer, in file order, at the lowest
//                                    aligned offset clear of reserved ranges and of the buffers
//                                    placed before it that conflict with it; counts fits and the
//                                    soft problems' reuse cost. Shares no code with the planner.
//
//   ./bazelw run -c opt //benchmarks:constrained_bench
//   ./bazelw run -c opt //benchmarks:constrained_bench -- --benchmark_filter=PyptoLib
//
// Files are read under $BUILD_WORKSPACE_DIRECTORY (set by `bazel run`), else relative to the
// working directory (the runfiles tree).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "benchmark/benchmark.h"
#include "policy/constrained_planner.h"
#include "policy/dsa_problem.h"
#include "policy/dsa_validator.h"
#include "policy/place_csv.h"

namespace accelmem {
namespace {

using policy::ConstrainedStatus;
using policy::DsaPlacement;
using policy::DsaProblem;
using policy::DsaProblemDocument;

constexpr char kCorpus[] = "third_party/dsa_solver_corpus/";
constexpr char kSoftSuffix[] = "-cross-pipe-soft.json";
constexpr char kHardSuffix[] = "-cross-pipe-hard.json";

// What the issue quotes, and what the parsing below must reproduce.
constexpr int kPyptoProblems = 587;
constexpr int kPyptoPairs = 150;
constexpr uint64_t kPublishedPyptoTotalReuse = 439;
constexpr int kPublishedPyptoProven = 136;
constexpr char kMinimallocLetters[] = "ABCDEFGHIJK";
constexpr uint64_t kPublishedMinimallocBest[] = {285, 329, 365, 248, 403, 129,
                                                 450, 474, 902, 572, 1408};

std::string Root() {
  const char* workspace = std::getenv("BUILD_WORKSPACE_DIRECTORY");
  return workspace != nullptr && *workspace != '\0' ? std::string(workspace) + "/" : "";
}

std::string CorpusPath(const std::string& relative) { return Root() + kCorpus + relative; }

bool IsFit(ConstrainedStatus status) {
  return status == ConstrainedStatus::kOptimal || status == ConstrainedStatus::kFeasible;
}

// A CSV file with a header line and no quoted fields (the published result files), as rows of
// column name -> text. Empty with `error` set when the file cannot be read.
std::vector<std::map<std::string, std::string>> ReadCsv(const std::string& path,
                                                        std::string* error) {
  absl::StatusOr<std::string> text = policy::ReadTextFile(path);
  if (!text.ok()) {
    *error = std::string(text.status().message());
    return {};
  }
  std::vector<std::string> lines = absl::StrSplit(*text, '\n', absl::SkipEmpty());
  if (lines.empty()) {
    *error = path + ": empty";
    return {};
  }
  const std::vector<std::string> header = absl::StrSplit(lines[0], ',');
  std::vector<std::map<std::string, std::string>> rows;
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::vector<std::string> fields = absl::StrSplit(lines[i], ',');
    if (fields.size() != header.size()) {
      *error = absl::StrFormat("%s:%d: %d fields, the header has %d", path, i + 1, fields.size(),
                               header.size());
      return {};
    }
    std::map<std::string, std::string> row;
    for (size_t c = 0; c < header.size(); ++c) row[header[c]] = fields[c];
    rows.push_back(std::move(row));
  }
  return rows;
}

uint64_t ToU64(const std::string& text) { return std::strtoull(text.c_str(), nullptr, 10); }

struct CorpusProblem {
  std::string name;  // Path under pypto-lib/ (or minimalloc-dsa-rp/).
  DsaProblemDocument document;
};

// Every problem of pypto-lib/, sorted by path; empty with `error` set on a failure.
const std::vector<CorpusProblem>& PyptoProblems(std::string* error) {
  static std::string* load_error = new std::string();
  static const auto* problems = [] {
    auto* out = new std::vector<CorpusProblem>();
    const std::filesystem::path dir = CorpusPath("pypto-lib");
    std::vector<std::string> files;
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(
             dir, std::filesystem::directory_options::follow_directory_symlink, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      if (it->path().extension() == ".json" && it->is_regular_file()) {
        files.push_back(it->path().lexically_relative(dir).string());
      }
    }
    if (ec) {
      *load_error = dir.string() + ": " + ec.message() + " (run with bazel run)";
      return out;
    }
    std::sort(files.begin(), files.end());
    for (const std::string& file : files) {
      absl::StatusOr<std::string> text = policy::ReadTextFile((dir / file).string());
      absl::StatusOr<DsaProblemDocument> document =
          text.ok() ? policy::ParseDsaProblemJson(*text, file)
                    : absl::StatusOr<DsaProblemDocument>(text.status());
      if (!document.ok()) {
        *load_error = std::string(document.status().message());
        out->clear();
        return out;
      }
      out->push_back({file, *std::move(document)});
    }
    if (out->size() != kPyptoProblems) {
      *load_error = absl::StrFormat("%s: %d problems, expected %d (run with bazel run)",
                                    dir.string(), out->size(), kPyptoProblems);
      out->clear();
    }
    return out;
  }();
  *error = *load_error;
  return *problems;
}

// A hard/soft pair of the corpus and the published best for it.
struct Pair {
  size_t soft = 0;  // Indices into PyptoProblems().
  size_t hard = 0;
  uint64_t published_best = 0;  // best_known_cost.
  bool published_proven = false;
};

// The 150 pairs, joined to paired-objectives.csv (source PyPTO-Lib) by the soft problem's
// metadata: corpus_source_path = source_path and dsa_rp_source_instance = source_instance.
const std::vector<Pair>& PyptoPairs(std::string* error) {
  static std::string* load_error = new std::string();
  static const auto* pairs = [] {
    auto* out = new std::vector<Pair>();
    std::string e;
    const std::vector<CorpusProblem>& problems = PyptoProblems(&e);
    if (!e.empty()) {
      *load_error = e;
      return out;
    }
    const std::string csv_path = CorpusPath("results/dsa-rp-v1/paired-objectives.csv");
    std::map<std::pair<std::string, std::string>, std::map<std::string, std::string>> published;
    for (auto& row : ReadCsv(csv_path, &e)) {
      if (row["source"] != "PyPTO-Lib") continue;
      const auto key = std::make_pair(row["source_path"], row["source_instance"]);
      if (!published.emplace(key, row).second) {
        *load_error = csv_path + ": two rows for " + key.first + " " + key.second;
        return out;
      }
    }
    if (!e.empty()) {
      *load_error = e;
      return out;
    }
    std::map<std::string, size_t> index;
    for (size_t i = 0; i < problems.size(); ++i) index[problems[i].name] = i;
    std::map<std::pair<std::string, std::string>, int> joined;
    for (size_t i = 0; i < problems.size(); ++i) {
      const std::string& name = problems[i].name;
      const size_t suffix = name.size() - (sizeof(kSoftSuffix) - 1);
      if (name.size() < sizeof(kSoftSuffix) ||
          name.compare(suffix, std::string::npos, kSoftSuffix) != 0) {
        continue;
      }
      Pair pair;
      pair.soft = i;
      auto hard = index.find(name.substr(0, suffix) + kHardSuffix);
      if (hard == index.end()) {
        *load_error = name + ": no hard twin";
        return out;
      }
      pair.hard = hard->second;
      const std::map<std::string, std::string>& metadata = problems[i].document.metadata;
      auto path = metadata.find("corpus_source_path");
      auto instance = metadata.find("dsa_rp_source_instance");
      if (path == metadata.end() || instance == metadata.end()) {
        *load_error = name + ": no corpus_source_path / dsa_rp_source_instance metadata";
        return out;
      }
      const auto key = std::make_pair(path->second, instance->second);
      auto row = published.find(key);
      if (row == published.end()) {
        *load_error = name + ": no published row for " + key.first + " " + key.second;
        return out;
      }
      if (++joined[key] > 1) {
        *load_error = name + ": a second soft problem for " + key.first + " " + key.second;
        return out;
      }
      pair.published_best = ToU64(row->second.at("best_known_cost"));
      pair.published_proven = row->second.at("optimum_proven") == "true";
      out->push_back(pair);
    }
    uint64_t total = 0;
    int proven = 0;
    for (const Pair& pair : *out) {
      total += pair.published_best;
      proven += pair.published_proven ? 1 : 0;
    }
    if (out->size() != kPyptoPairs || published.size() != kPyptoPairs ||
        total != kPublishedPyptoTotalReuse || proven != kPublishedPyptoProven) {
      *load_error = absl::StrFormat(
          "pairs %d (csv rows %d), published total %d, proven %d; expected %d, %d, %d", out->size(),
          published.size(), total, proven, kPyptoPairs, kPublishedPyptoTotalReuse,
          kPublishedPyptoProven);
      out->clear();
    }
    return out;
  }();
  *error = *load_error;
  return *pairs;
}

// Validates a placement against the problem it solves; returns the check, or sets `error`.
policy::DsaSolutionCheck Validate(const std::string& name, const DsaProblem& problem,
                                  const std::vector<DsaPlacement>& placements, std::string* error) {
  policy::DsaSolutionCheck check = policy::CheckDsaSolution(problem, placements);
  if (!check.ok() && error->empty()) {
    *error = absl::StrFormat("%s: invalid placement (%d violations), first: %s", name,
                             check.errors.size(), check.errors.front());
  }
  return check;
}

double Percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t at = static_cast<size_t>(q * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(at, values.size() - 1)];
}

// What one problem came to, for the counters.
struct Outcome {
  ConstrainedStatus status = ConstrainedStatus::kNoFitWithinBudget;
  uint64_t reuse_cost = 0;  // The validator's, when it fits.
  bool relaxed = false;
};

// The pair counters shared by the planner's and the first fit's rows.
void PairCounters(benchmark::State& state, const std::vector<Pair>& pairs,
                  const std::vector<Outcome>& outcomes) {
  int fit = 0, soft_fit = 0, proven = 0, above = 0, below = 0, relaxed = 0;
  uint64_t total = 0;
  for (const Pair& pair : pairs) {
    const Outcome& soft = outcomes[pair.soft];
    const Outcome& hard = outcomes[pair.hard];
    if (IsFit(soft.status) || IsFit(hard.status)) ++fit;
    if (soft.status == ConstrainedStatus::kOptimal ||
        (soft.status == ConstrainedStatus::kInfeasible &&
         hard.status == ConstrainedStatus::kInfeasible)) {
      ++proven;
    }
    if (soft.relaxed) ++relaxed;
    if (!IsFit(soft.status)) continue;
    ++soft_fit;
    total += soft.reuse_cost;
    if (soft.reuse_cost > pair.published_best) ++above;
    if (soft.reuse_cost < pair.published_best) ++below;
  }
  uint64_t published_total = 0;
  int published_proven = 0;
  for (const Pair& pair : pairs) {
    published_total += pair.published_best;
    published_proven += pair.published_proven ? 1 : 0;
  }
  state.counters["pairs"] = static_cast<double>(pairs.size());
  state.counters["pairs_fit"] = fit;
  state.counters["pairs_soft_fit"] = soft_fit;
  state.counters["pairs_proven"] = proven;
  state.counters["pairs_relaxed"] = relaxed;
  state.counters["pairs_total_reuse"] = static_cast<double>(total);
  state.counters["pairs_above_published"] = above;
  state.counters["pairs_below_published"] = below;
  state.counters["published_best_total_reuse"] = static_cast<double>(published_total);
  state.counters["published_proven"] = published_proven;
}

void BM_Constrained_PyptoLib(benchmark::State& state) {
  std::string error;
  const std::vector<CorpusProblem>& problems = PyptoProblems(&error);
  const std::vector<Pair>& pairs = PyptoPairs(&error);  // Also fails when the problems do.
  if (!error.empty()) return state.SkipWithError(error.c_str());

  policy::ConstrainedOptions options;  // The default budget, 100 ms.
  std::vector<double> ms;
  std::vector<Outcome> outcomes(problems.size());
  std::vector<absl::StatusOr<policy::ConstrainedResult>> results(problems.size());
  int errors = 0;
  int cost_mismatches = 0;
  std::string first_error;
  for (auto _ : state) {
    for (size_t i = 0; i < problems.size(); ++i) {
      const auto started = std::chrono::steady_clock::now();
      results[i] = policy::SolveConstrained(problems[i].document.problem, options);
      ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
              .count());
    }
    state.PauseTiming();
    errors = 0;
    cost_mismatches = 0;
    for (size_t i = 0; i < problems.size(); ++i) {
      if (!results[i].ok()) {
        if (errors++ == 0) {
          first_error = problems[i].name + ": " + std::string(results[i].status().message());
        }
        outcomes[i] = Outcome();
        continue;
      }
      const policy::ConstrainedResult& result = *results[i];
      Outcome outcome;
      outcome.status = result.status;
      // A pipeline-relaxed answer solves another problem: the problem as given is infeasible
      // (counted so), and the relaxed placement is validated against the relaxed problem.
      outcome.relaxed = result.relaxed != nullptr;
      if (outcome.relaxed) {
        Validate(problems[i].name, result.relaxed->problem, result.relaxed->result.placements,
                 &error);
        if (!error.empty()) return state.SkipWithError(error.c_str());
      }
      if (IsFit(result.status) || !result.placements.empty()) {
        const policy::DsaSolutionCheck check =
            Validate(problems[i].name, problems[i].document.problem, result.placements, &error);
        if (!error.empty()) return state.SkipWithError(error.c_str());
        outcome.reuse_cost = check.reuse_cost;
        if (check.reuse_cost != result.reuse_cost || check.total_peak != result.total_peak) {
          ++cost_mismatches;
        }
      }
      outcomes[i] = outcome;
    }
    state.ResumeTiming();
  }

  int fits = 0, optimal = 0, infeasible = 0, no_fit = 0, relaxed = 0;
  for (const Outcome& outcome : outcomes) {
    fits += IsFit(outcome.status) ? 1 : 0;
    optimal += outcome.status == ConstrainedStatus::kOptimal ? 1 : 0;
    infeasible += outcome.status == ConstrainedStatus::kInfeasible ? 1 : 0;
    no_fit += outcome.status == ConstrainedStatus::kNoFitWithinBudget ? 1 : 0;
    relaxed += outcome.relaxed ? 1 : 0;
  }
  state.counters["problems"] = static_cast<double>(problems.size());
  state.counters["fits"] = fits;
  state.counters["optimal"] = optimal;
  state.counters["infeasible_proven"] = infeasible;
  state.counters["no_fit"] = no_fit - errors;  // An error is counted under errors only.
  state.counters["relaxed"] = relaxed;
  state.counters["errors"] = errors;
  state.counters["cost_mismatches"] = cost_mismatches;  // Planner's cost != validator's.
  state.counters["median_ms"] = Percentile(ms, 0.5);
  state.counters["p95_ms"] = Percentile(ms, 0.95);
  PairCounters(state, pairs, outcomes);
  if (errors > 0) state.SetLabel("first error: " + first_error);
}

// ------------------------------------------------------------------------------- first fit
// The baseline: no search, no order but the file's. Pinned buffers go to their pins first.
// Colocations are not handled (the problem counts as not fitting; the corpus has none).
struct FirstFitResult {
  bool fits = false;
  std::vector<DsaPlacement> placements;
};

bool LiveTogether(const policy::DsaBuffer& a, const policy::DsaBuffer& b) {
  for (const policy::DsaInterval& x : a.live_intervals) {
    for (const policy::DsaInterval& y : b.live_intervals) {
      if (x.lower < y.upper && y.lower < x.upper) return true;
    }
  }
  return false;
}

FirstFitResult FirstFit(const DsaProblem& problem) {
  FirstFitResult out;
  if (!problem.constraints.colocations.empty()) return out;
  const size_t n = problem.buffers.size();
  std::map<uint32_t, size_t> at;
  for (size_t i = 0; i < n; ++i) at[problem.buffers[i].id] = i;
  // conflict[i][j]: i and j may not share bytes when in the same pool.
  std::vector<std::vector<bool>> conflict(n, std::vector<bool>(n, false));
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) {
      conflict[i][j] = conflict[j][i] = LiveTogether(problem.buffers[i], problem.buffers[j]);
    }
  }
  for (const policy::DsaPair& pair : problem.constraints.temporal_exclusions) {
    conflict[at[pair.first]][at[pair.second]] = conflict[at[pair.second]][at[pair.first]] = false;
  }
  for (const policy::DsaSeparation& pair : problem.constraints.separations) {
    conflict[at[pair.first]][at[pair.second]] = conflict[at[pair.second]][at[pair.first]] = true;
  }
  std::vector<std::optional<DsaPlacement>> placed(n);
  std::vector<bool> exclusive(n, false);
  for (const policy::DsaPinnedAllocation& pin : problem.constraints.pinned_allocations) {
    placed[at[pin.buffer]] = DsaPlacement{pin.buffer, pin.pool, pin.offset};
    exclusive[at[pin.buffer]] = pin.exclusive_for_all_time;
  }
  auto clear = [&](size_t i, uint32_t pool, uint64_t offset, size_t skip) {
    const uint64_t end = offset + problem.buffers[i].size;
    const policy::DsaPool& p = problem.pools[policy::FindDsaPool(problem, pool)];
    if (p.capacity && end > *p.capacity) return false;
    for (const policy::DsaAddressRange& r : p.reserved_ranges) {
      if (offset < r.end && r.begin < end) return false;
    }
    for (size_t j = 0; j < n; ++j) {
      if (j == i || j == skip || !placed[j] || placed[j]->pool != pool) continue;
      if (!conflict[i][j] && !exclusive[i] && !exclusive[j]) continue;
      const uint64_t begin_j = placed[j]->offset;
      if (offset < begin_j + problem.buffers[j].size && begin_j < end) return false;
    }
    return true;
  };
  // Pins must be clear of each other.
  for (size_t i = 0; i < n; ++i) {
    if (placed[i] && !clear(i, placed[i]->pool, placed[i]->offset, n)) return out;
  }
  for (size_t i = 0; i < n; ++i) {
    if (placed[i]) continue;
    const policy::DsaBuffer& buffer = problem.buffers[i];
    for (uint32_t pool : buffer.allowed_pools) {
      // Candidates: 0 and every end of a reserved range or placed buffer, aligned up.
      std::vector<uint64_t> candidates = {0};
      for (const policy::DsaAddressRange& r :
           problem.pools[policy::FindDsaPool(problem, pool)].reserved_ranges) {
        candidates.push_back(r.end);
      }
      for (size_t j = 0; j < n; ++j) {
        if (placed[j] && placed[j]->pool == pool) {
          candidates.push_back(placed[j]->offset + problem.buffers[j].size);
        }
      }
      for (uint64_t& c : candidates)
        c = (c + buffer.alignment - 1) / buffer.alignment * buffer.alignment;
      std::sort(candidates.begin(), candidates.end());
      for (uint64_t c : candidates) {
        if (clear(i, pool, c, n)) {
          placed[i] = DsaPlacement{buffer.id, pool, c};
          break;
        }
      }
      if (placed[i]) break;
    }
    if (!placed[i]) return out;
  }
  out.fits = true;
  for (const auto& p : placed) out.placements.push_back(*p);
  return out;
}

void BM_Constrained_PyptoLibFirstFit(benchmark::State& state) {
  std::string error;
  const std::vector<CorpusProblem>& problems = PyptoProblems(&error);
  const std::vector<Pair>& pairs = PyptoPairs(&error);  // Also fails when the problems do.
  if (!error.empty()) return state.SkipWithError(error.c_str());
  std::vector<FirstFitResult> results(problems.size());
  std::vector<Outcome> outcomes(problems.size());
  for (auto _ : state) {
    for (size_t i = 0; i < problems.size(); ++i) {
      results[i] = FirstFit(problems[i].document.problem);
    }
    state.PauseTiming();
    for (size_t i = 0; i < problems.size(); ++i) {
      Outcome outcome;  // No fit: kNoFitWithinBudget (a first fit proves nothing).
      if (results[i].fits) {
        const policy::DsaSolutionCheck check =
            Validate(problems[i].name, problems[i].document.problem, results[i].placements, &error);
        if (!error.empty()) return state.SkipWithError(("first fit: " + error).c_str());
        outcome.status = ConstrainedStatus::kFeasible;
        outcome.reuse_cost = check.reuse_cost;
      }
      outcomes[i] = outcome;
    }
    state.ResumeTiming();
  }
  int fits = 0;
  for (const Outcome& outcome : outcomes) fits += IsFit(outcome.status) ? 1 : 0;
  state.counters["problems"] = static_cast<double>(problems.size());
  state.counters["fits"] = fits;
  PairCounters(state, pairs, outcomes);
}

// ------------------------------------------------------------------------ MiniMalloc lifts
// The least best_reuse_cost, per letter, over the methods with a validated fitting run in
// results/minimalloc-dsa-rp-v1/summary.csv (valid_runs > 0, feasible_runs > 0, no capacity
// overflow); empty with `error` set when the file disagrees with kPublishedMinimallocBest.
const std::map<char, uint64_t>& MinimallocPublished(std::string* error) {
  static std::string* load_error = new std::string();
  static const auto* best = [] {
    auto* out = new std::map<char, uint64_t>();
    const std::string path = CorpusPath("results/minimalloc-dsa-rp-v1/summary.csv");
    std::string e;
    for (auto& row : ReadCsv(path, &e)) {
      // source: benchmarks/minimalloc-dsa-rp/<L>.json
      const std::string& source = row["source"];
      const size_t slash = source.rfind('/');
      if (slash == std::string::npos || source.size() != slash + 7 ||
          source.compare(slash + 2, std::string::npos, ".json") != 0) {
        e = path + ": unexpected source '" + source + "'";
        break;
      }
      if (ToU64(row["valid_runs"]) == 0 || ToU64(row["feasible_runs"]) == 0 ||
          row["best_capacity_overflow"] != "0" || row["best_reuse_cost"].empty()) {
        continue;
      }
      const char letter = source[slash + 1];
      const uint64_t cost = ToU64(row["best_reuse_cost"]);
      auto it = out->find(letter);
      if (it == out->end() || cost < it->second) (*out)[letter] = cost;
    }
    for (size_t i = 0; e.empty() && i < sizeof(kPublishedMinimallocBest) / sizeof(uint64_t); ++i) {
      auto it = out->find(kMinimallocLetters[i]);
      if (it == out->end() || it->second != kPublishedMinimallocBest[i]) {
        e = absl::StrFormat("%s: published best for %c is %d, expected %d", path,
                            kMinimallocLetters[i], it == out->end() ? 0 : it->second,
                            kPublishedMinimallocBest[i]);
      }
    }
    if (!e.empty()) {
      *load_error = e;
      out->clear();
    }
    return out;
  }();
  *error = *load_error;
  return *best;
}

void BM_Constrained_MinimallocRp(benchmark::State& state, char letter) {
  std::string error;
  const std::map<char, uint64_t>& published = MinimallocPublished(&error);
  if (!error.empty()) return state.SkipWithError(error.c_str());
  const std::string name = std::string(1, letter) + ".json";
  absl::StatusOr<std::string> text = policy::ReadTextFile(CorpusPath("minimalloc-dsa-rp/" + name));
  absl::StatusOr<DsaProblemDocument> document =
      text.ok() ? policy::ParseDsaProblemJson(*text, name)
                : absl::StatusOr<DsaProblemDocument>(text.status());
  if (!document.ok()) return state.SkipWithError(std::string(document.status().message()).c_str());

  policy::ConstrainedOptions options;
  options.budget = absl::Seconds(10);
  absl::StatusOr<policy::ConstrainedResult> result;
  double seconds = 0;
  for (auto _ : state) {
    const auto started = std::chrono::steady_clock::now();
    result = policy::SolveConstrained(document->problem, options);
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  }
  if (!result.ok()) return state.SkipWithError(std::string(result.status().message()).c_str());
  uint64_t reuse_cost = result->reuse_cost;
  if (IsFit(result->status) || !result->placements.empty()) {
    const policy::DsaSolutionCheck check =
        Validate(name, document->problem, result->placements, &error);
    if (!error.empty()) return state.SkipWithError(error.c_str());
    reuse_cost = check.reuse_cost;
    state.counters["cost_mismatch"] = check.reuse_cost != result->reuse_cost ? 1 : 0;
    state.counters["peak"] = static_cast<double>(check.max_peak);
  }
  const uint64_t best = published.at(letter);
  state.counters["reuse_cost"] = static_cast<double>(reuse_cost);
  state.counters["reuse_lower_bound"] = static_cast<double>(result->reuse_lower_bound);
  state.counters["published_best"] = static_cast<double>(best);
  state.counters["vs_published"] =
      IsFit(result->status)
          ? static_cast<double>(best) / static_cast<double>(std::max<uint64_t>(1, reuse_cost))
          : 0.0;
  state.counters["status"] = static_cast<double>(static_cast<int>(result->status));
  state.counters["seconds"] = seconds;
  state.SetLabel(policy::ConstrainedStatusName(result->status));
}

const int kRegistered = [] {
  benchmark::RegisterBenchmark("BM_Constrained_PyptoLib", BM_Constrained_PyptoLib)
      ->Unit(benchmark::kSecond)
      ->UseRealTime();
  benchmark::RegisterBenchmark("BM_Constrained_PyptoLibFirstFit", BM_Constrained_PyptoLibFirstFit)
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  for (const char* letter = kMinimallocLetters; *letter != '\0'; ++letter) {
    benchmark::RegisterBenchmark(
        (std::string("BM_Constrained_MinimallocRp/") + *letter).c_str(),
        [l = *letter](benchmark::State& state) { BM_Constrained_MinimallocRp(state, l); })
        ->Unit(benchmark::kSecond)
        ->UseRealTime()
        ->Iterations(1);
  }
  return 0;
}();

}  // namespace
}  // namespace accelmem

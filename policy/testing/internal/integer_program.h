// A small all-integer linear program on our side and one CBC solve of it: what the exact
// oracle of policy/testing/dsa_exact_oracle.h builds its models with (not a public API).
#ifndef ACCELMEM_POLICY_TESTING_INTERNAL_INTEGER_PROGRAM_H_
#define ACCELMEM_POLICY_TESTING_INTERNAL_INTEGER_PROGRAM_H_

#include <utility>
#include <vector>

namespace accelmem {
namespace policy_testing {
namespace internal {

struct Column {
  double lower = 0;
  double upper = 0;
};

struct Row {
  std::vector<int> columns;
  std::vector<double> coefficients;
  char sense = 'L';  // 'L' <=, 'G' >=.
  double rhs = 0;
};

using LinearTerms = std::vector<std::pair<int, double>>;

struct Program {
  std::vector<Column> columns;  // All integer.
  std::vector<Row> rows;

  int AddColumn(double lower, double upper) {
    columns.push_back({lower, upper});
    return static_cast<int>(columns.size()) - 1;
  }
  int AddBinary() { return AddColumn(0, 1); }
  void AddRow(const LinearTerms& terms, char sense, double rhs) {
    Row row;
    for (const auto& [column, coefficient] : terms) {
      row.columns.push_back(column);
      row.coefficients.push_back(coefficient);
    }
    row.sense = sense;
    row.rhs = rhs;
    rows.push_back(std::move(row));
  }
};

enum class Outcome { kOptimal, kInfeasible, kStopped };

struct StageResult {
  Outcome outcome = Outcome::kStopped;
  std::vector<double> values;  // Empty when no solution is known.
};

// Minimises `objective` over `program` within `seconds` (at least 0.01), starting from `start`
// (one value per column) when it is not empty.
StageResult Solve(const Program& program, const LinearTerms& objective, double seconds,
                  const std::vector<double>& start);

}  // namespace internal
}  // namespace policy_testing
}  // namespace accelmem

#endif  // ACCELMEM_POLICY_TESTING_INTERNAL_INTEGER_PROGRAM_H_

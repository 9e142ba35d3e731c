#include "policy/testing/internal/integer_program.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "Cbc_C_Interface.h"

namespace accelmem {
namespace policy_testing {
namespace internal {

// A fresh Cbc_Model per solve: the C interface does not support solving one model twice.
StageResult Solve(const Program& program, const LinearTerms& objective, double seconds,
                  const std::vector<double>& start) {
  std::vector<double> costs(program.columns.size(), 0.0);
  for (const auto& [column, coefficient] : objective) costs[column] += coefficient;
  Cbc_Model* model = Cbc_newModel();
  Cbc_setLogLevel(model, 0);
  for (size_t c = 0; c < program.columns.size(); ++c) {
    const std::string name = "c" + std::to_string(c);
    Cbc_addCol(model, name.c_str(), program.columns[c].lower, program.columns[c].upper, costs[c],
               /*isInteger=*/1, 0, nullptr, nullptr);
  }
  for (size_t r = 0; r < program.rows.size(); ++r) {
    const Row& row = program.rows[r];
    const std::string name = "r" + std::to_string(r);
    Cbc_addRow(model, name.c_str(), static_cast<int>(row.columns.size()), row.columns.data(),
               row.coefficients.data(), row.sense, row.rhs);
  }
  Cbc_setObjSense(model, 1);  // Minimise.
  Cbc_setMaximumSeconds(model, std::max(seconds, 0.01));
  Cbc_setAllowableFractionGap(model, 0.0);
  Cbc_setAllowablePercentageGap(model, 0.0);
  Cbc_setAllowableGap(model, 1e-6);
  if (!start.empty()) {
    std::vector<int> indices(start.size());
    std::iota(indices.begin(), indices.end(), 0);
    Cbc_setMIPStartI(model, static_cast<int>(start.size()), indices.data(), start.data());
  }
  Cbc_solve(model);
  StageResult result;
  if (Cbc_isProvenOptimal(model)) {
    result.outcome = Outcome::kOptimal;
  } else if (Cbc_isProvenInfeasible(model)) {
    result.outcome = Outcome::kInfeasible;
  }
  if (result.outcome != Outcome::kInfeasible) {
    const double* best = Cbc_bestSolution(model);
    if (best != nullptr) result.values.assign(best, best + program.columns.size());
  }
  if (result.outcome == Outcome::kOptimal && result.values.empty()) {
    result.outcome = Outcome::kStopped;  // Not expected; do not trust it.
  }
  Cbc_deleteModel(model);
  return result;
}

}  // namespace internal
}  // namespace policy_testing
}  // namespace accelmem

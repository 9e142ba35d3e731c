#include "policy/constrained_result.h"

namespace accelmem {
namespace policy {

const char* ConstrainedStatusName(ConstrainedStatus status) {
  switch (status) {
    case ConstrainedStatus::kOptimal:
      return "optimal";
    case ConstrainedStatus::kFeasible:
      return "feasible";
    case ConstrainedStatus::kInfeasible:
      return "infeasible";
    case ConstrainedStatus::kNoFitWithinBudget:
      return "no_fit_within_budget";
  }
  return "unknown";
}

}  // namespace policy
}  // namespace accelmem

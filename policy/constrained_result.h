// The result types of the constrained planner (constrained_planner.h), apart from it so that
// the planner's pieces in policy/internal/ (the pool model, the bounds and the search) report in
// them without including the planner above them.
#ifndef ACCELMEM_POLICY_CONSTRAINED_RESULT_H_
#define ACCELMEM_POLICY_CONSTRAINED_RESULT_H_

#include <cstdint>
#include <string>
#include <vector>

namespace accelmem {
namespace policy {

enum class ConstrainedStatus {
  kOptimal,            // The placement is optimal for the objective.
  kFeasible,           // Fits; the lower bounds below are proven, the gap may be open.
  kInfeasible,         // Proven: nothing fits. `reason` says why.
  kNoFitWithinBudget,  // No placement found, and no proof that none exists.
};
const char* ConstrainedStatusName(ConstrainedStatus status);

struct PoolResult {
  uint32_t pool = 0;
  std::string name;
  ConstrainedStatus status = ConstrainedStatus::kNoFitWithinBudget;
  uint64_t reuse_cost = 0;         // Of the placement (when one was found).
  uint64_t reuse_lower_bound = 0;  // Proven.
  uint64_t peak = 0;               // max(offset + size, reserved ends) in the pool.
  uint64_t peak_lower_bound = 0;   // Proven (among placements of the least reuse cost).
  uint64_t load = 0;               // Largest total (aligned) size live at one time, plus reserved.
  int64_t load_time = 0;           // A time at which `load` is reached.
  std::string reason;              // For kInfeasible / kNoFitWithinBudget: why, in words.
  std::vector<uint32_t> relaxed_pipeline_groups;  // Groups whose depth was relaxed.
  int64_t search_nodes = 0;
  std::string method;  // "constrained" or "lifetime_planner:<mode>" for plain pools.
};

}  // namespace policy
}  // namespace accelmem

#endif  // ACCELMEM_POLICY_CONSTRAINED_RESULT_H_

// Generated placement instances that imitate the structure of real compiler traces, for tests
// and benchmarks that must not be tuned to the few public traces in the repository.
//
// Every family takes a seed and a target buffer count and is deterministic (its own random
// helpers on std::mt19937_64, no <random> distributions, so the instances are the same with any
// standard library). Lifetimes are half-open [start, end); sizes are >= 1 and bounded so that
// the total stays far below policy::kMaxPlacementBytes even at 10^6 buffers.
//
// Families:
//  uniform           random starts, lengths and sizes (no structure).
//  chain             a sequential network: each output lives until its consumer, one or two
//                    steps later.
//  ladder            two interleaved branches whose outputs cross (Inception-like rungs).
//  equal_sizes       many buffers of one or two sizes (transformer blocks).
//  few_huge          a few huge buffers among many small ones.
//  skip_connections  U-Net/ResNet activations: encoder outputs live until the matching decoder
//                    step, nested; short temporaries around them.
//  training          forward activations kept for the backward pass, weights and their
//                    gradient accumulators live throughout, short-lived gradient temporaries.
//  weights_and_temps long-lived weights plus many one-to-three-step temporaries.
//  power_law         Pareto-distributed sizes (heavy tail), random lifetimes.
//  somas             a MindSpore SOMAS export of a training step: forward outputs (512-aligned
//                    tensor shapes) live until the next operator or the matching backward one,
//                    gradients two steps, workspaces one, graph inputs throughout.
//  iopddl            an IOPDDL-style trace (Google's IOPDDL challenge): log-normal sizes and
//                    lifetimes over a flat schedule with several moderate hot spots.
#ifndef ACCELMEM_POLICY_TESTING_TRACE_GENERATORS_H_
#define ACCELMEM_POLICY_TESTING_TRACE_GENERATORS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "policy/placement_checker.h"

namespace accelmem {
namespace policy_testing {

using TraceGenerator = std::function<std::vector<policy::PlacementBuffer>(uint64_t seed, int n)>;

struct TraceFamily {
  std::string name;
  TraceGenerator generate;  // About n buffers (at least one for n >= 1).
};

// Every family above, in the order listed.
const std::vector<TraceFamily>& TraceFamilies();

// The family called `name`; aborts if there is none (a typo in a test or benchmark).
const TraceFamily& FindTraceFamily(const std::string& name);

}  // namespace policy_testing
}  // namespace accelmem

#endif  // ACCELMEM_POLICY_TESTING_TRACE_GENERATORS_H_

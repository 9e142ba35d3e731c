// Greedy mode against the textbook rules of production compilers
// (//policy/testing:reference_placers), on thousands of random and structured instances
// (//policy/testing:trace_generators) and on the public traces.
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "policy/lifetime_planner.h"
#include "policy/place_csv.h"
#include "policy/placement_checker.h"
#include "policy/testing/reference_placers.h"
#include "policy/testing/trace_generators.h"

namespace accelmem {
namespace policy {
namespace {

using policy_testing::BestReference;
using policy_testing::FindOverlap;
using policy_testing::ReferencePlace;
using policy_testing::ReferenceResult;
using policy_testing::ReferenceRule;
using policy_testing::TraceFamilies;
using policy_testing::TraceFamily;

// Unstructured instances with the corner cases generators avoid: zero sizes, empty lifetimes,
// duplicates, one shared step.
std::vector<PlacementBuffer> RandomInstance(std::mt19937_64& rng) {
  const int n = static_cast<int>(rng() % 60);
  const int64_t horizon = 1 + static_cast<int64_t>(rng() % 30);
  const int64_t max_size = rng() % 2 ? 8 : 1000;
  std::vector<PlacementBuffer> buffers;
  for (int i = 0; i < n; ++i) {
    const int64_t start = static_cast<int64_t>(rng() % horizon);
    const int64_t end = start + static_cast<int64_t>(rng() % 10);
    const int64_t size = static_cast<int64_t>(rng() % (max_size + 1));
    buffers.push_back(PlacementBuffer{"b" + std::to_string(i), start, end, size});
  }
  return buffers;
}

// Checks one instance: greedy is valid (two independent checks) and no higher than the best
// reference rule, each of which is also valid. Returns greedy's height minus the best's.
int64_t ExpectNeverWorse(const std::vector<PlacementBuffer>& buffers, const std::string& what) {
  auto plan = PlanPlacement(buffers);
  EXPECT_TRUE(plan.ok()) << what << ": " << plan.status();
  if (!plan.ok()) return 0;
  EXPECT_TRUE(CheckPlacement(buffers, plan->offsets).ok()) << what;
  EXPECT_EQ(FindOverlap(buffers, plan->offsets), "") << what;
  EXPECT_EQ(plan->height, PlacementHeight(buffers, plan->offsets)) << what;
  const ReferenceResult best = BestReference(buffers);
  EXPECT_EQ(FindOverlap(buffers, best.offsets), "") << what;
  EXPECT_LE(plan->height, best.height) << what << ": greedy " << plan->method << " is above "
                                       << policy_testing::ReferenceRuleName(best.rule);
  return plan->height - best.height;
}

// Greedy mode is never higher than the best textbook rule, on 3,000 random instances and on
// 4,400 generated ones of every family (sizes 1 to 250 buffers).
TEST(GreedyVersusBaselinesTest, NeverWorseOnRandomAndStructuredInstances) {
  std::mt19937_64 rng(17);
  int instances = 0;
  int strictly_better = 0;
  for (int round = 0; round < 3000; ++round) {
    const std::vector<PlacementBuffer> buffers = RandomInstance(rng);
    strictly_better += ExpectNeverWorse(buffers, "random round " + std::to_string(round)) < 0;
    ++instances;
    if (HasFailure()) return;
  }
  for (const TraceFamily& family : TraceFamilies()) {
    for (uint64_t seed = 1; seed <= 400; ++seed) {
      const int n = 1 + static_cast<int>(rng() % 250);
      const std::vector<PlacementBuffer> buffers = family.generate(seed, n);
      strictly_better += ExpectNeverWorse(buffers, family.name + " seed " + std::to_string(seed) +
                                                       " n " + std::to_string(n)) < 0;
      ++instances;
      if (HasFailure()) return;
    }
  }
  EXPECT_EQ(instances, 3000 + 400 * static_cast<int>(TraceFamilies().size()));
  // The portfolio takes the best of the rules, so it often beats each one (and their best: on
  // different instances different rules win).
  RecordProperty("strictly_better", strictly_better);
}

// Each greedy order reproduces its textbook rule exactly (same offsets), so the portfolio
// contains every baseline; the rules are implemented independently.
TEST(GreedyVersusBaselinesTest, EachOrderIsItsTextbookRule) {
  const std::vector<std::pair<GreedyOrder, ReferenceRule>> pairs = {
      {GreedyOrder::kSize, ReferenceRule::kXlaSpatial},
      {GreedyOrder::kLifetime, ReferenceRule::kXlaTemporal},
      {GreedyOrder::kArea, ReferenceRule::kArea},
      {GreedyOrder::kStart, ReferenceRule::kStart},
      {GreedyOrder::kWholeThenSize, ReferenceRule::kTfliteArena},
      {GreedyOrder::kSizeFirstFit, ReferenceRule::kTfliteMicroFirstFit},
  };
  std::mt19937_64 rng(23);
  for (const TraceFamily& family : TraceFamilies()) {
    for (uint64_t seed = 1; seed <= 30; ++seed) {
      const std::vector<PlacementBuffer> buffers =
          family.generate(seed, 1 + static_cast<int>(rng() % 300));
      for (const auto& [order, rule] : pairs) {
        ASSERT_EQ(GreedyBestFit(buffers, 1, order), ReferencePlace(buffers, rule))
            << family.name << " seed " << seed << " " << GreedyOrderName(order);
      }
    }
  }
}

// Search on instances above the branch and bound's size (the window search around the peak) keeps
// every placement valid and never returns a higher one than greedy.
TEST(GreedyVersusBaselinesTest, LargeInstanceSearchIsValidAndNeverWorse) {
  for (const std::string name : {"training", "iopddl", "somas"}) {
    const std::vector<PlacementBuffer> buffers =
        policy_testing::FindTraceFamily(name).generate(7, 6000);
    auto greedy = PlanPlacement(buffers);
    ASSERT_TRUE(greedy.ok()) << greedy.status();
    PlannerOptions options;
    options.mode = PlannerMode::kSearch;
    options.budget = absl::Seconds(3);
    auto search = PlanPlacement(buffers, options);
    ASSERT_TRUE(search.ok()) << search.status();
    EXPECT_TRUE(CheckPlacement(buffers, search->offsets).ok()) << name;
    EXPECT_EQ(FindOverlap(buffers, search->offsets), "") << name;
    EXPECT_LE(search->height, greedy->height) << name;
    EXPECT_GE(search->height, search->lower_bound) << name;
    EXPECT_EQ(search->lower_bound, search->load) << name;  // Nothing is proven above 4,000.
  }
}

std::vector<PlacementBuffer> LoadInstance(const std::string& path, size_t prefix = 0) {
  auto text = policy::ReadTextFile(path);
  EXPECT_TRUE(text.ok()) << text.status();
  if (!text.ok()) return {};
  auto buffers = policy::ParseInstanceCsv(*text, path);
  EXPECT_TRUE(buffers.ok()) << buffers.status();
  if (!buffers.ok()) return {};
  if (prefix > 0 && buffers->size() > prefix) buffers->resize(prefix);
  return *buffers;
}

// The public traces too (Y_1 by its first 5,000 buffers: the baselines are O(n^2)).
TEST(GreedyVersusBaselinesTest, NeverWorseOnPublicTraces) {
  const std::string dir = "third_party/placement_instances/";
  for (const std::string file :
       {"idealloc/G_1.csv", "idealloc/resnet50.csv", "minimalloc/A.1048576.csv",
        "minimalloc/F.1048576.csv", "minimalloc/K.1048576.csv"}) {
    ExpectNeverWorse(LoadInstance(dir + file), file);
  }
  ExpectNeverWorse(LoadInstance(dir + "idealloc/Y_1.csv", 5000), "Y_1 first 5000");
}

}  // namespace
}  // namespace policy
}  // namespace accelmem

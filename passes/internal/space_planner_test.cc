#include "passes/internal/space_planner.h"

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "passes/liveness.h"
#include "passes/memory_problem.h"
#include "passes/pass_testing.h"
#include "policy/default_memory_allocator_policy.h"
#include "policy/dsa_problem.h"
#include "policy/dsa_validator.h"

namespace accelmem {
namespace passes {
namespace internal {
namespace {

// Four Vec roots of 1024 bytes: a dies where b is defined (an in-place pair), c is loaded after
// b's store and dies in d. a and c, b and d never live together.
constexpr char kChain[] = R"(@function(type=AIV)
def chain(x: Tensor[[16, 16], FP32]) -> Tensor[[16, 16], FP32]:
    mem_vec_0: MemRefType = tile.alloc(Vec, -1, 1024, 0)
    mem_vec_1: MemRefType = tile.alloc(Vec, -1, 1024, 1)
    mem_vec_2: MemRefType = tile.alloc(Vec, -1, 1024, 2)
    mem_vec_3: MemRefType = tile.alloc(Vec, -1, 1024, 3)
    a: Tile[[16, 16], FP32, memref=mem_vec_0] = tile.load(x, [0, 0], [16, 16])
    b: Tile[[16, 16], FP32, memref=mem_vec_1] = tile.exp(a)
    o: Tensor[[16, 16], FP32] = tile.store(b, [0, 0], x)
    c: Tile[[16, 16], FP32, memref=mem_vec_2] = tile.load(o, [0, 0], [16, 16])
    d: Tile[[16, 16], FP32, memref=mem_vec_3] = tile.add(c, c)
    r: Tensor[[16, 16], FP32] = tile.store(d, [0, 0], o)
    return r
)";

// One function with everything PlanSpace needs: roots, lifetimes and (on request) its problem,
// without a backend (no capacity).
class Fixture {
 public:
  explicit Fixture(const char* text, bool with_problem = false)
      : program_(testing::ParseOrDie(text)),
        liveness_(*program_->functions[0]),
        roots_(*program_->functions[0]) {
    for (const RootLifetime& l : ComputeRootLifetimes(liveness_)) {
      life_[l.root] = {l.start, l.end};
    }
    planning_.roots = &roots_;
    planning_.life = &life_;
    if (with_problem) {
      MemoryProblemOptions o;
      o.policy = &policy_;
      problem_ = BuildMemoryProblem(*program_->functions[0], liveness_, o);
      planning_.problem = &*problem_;
    }
  }

  absl::StatusOr<SpacePlan> Plan(PlacementStrategy strategy, int64_t start = 0,
                                 bool separate_layouts = false) {
    SpacePlanOptions o;
    o.strategy = strategy;
    o.policy = &policy_;
    o.separate_layouts = separate_layouts;
    return PlanSpace(ir::MemorySpace::kVec, roots_.roots(), start, planning_, o);
  }

  // Whether two roots that live at once share bytes in `plan`.
  bool Conflicts(const SpacePlan& plan) const {
    for (const ir::MemRefPtr& a : roots_.roots()) {
      for (const ir::MemRefPtr& b : roots_.roots()) {
        if (a.get() >= b.get()) continue;
        const auto la = life_.at(a.get()), lb = life_.at(b.get());
        const bool live_together = la.first < lb.second && lb.first < la.second;
        const int64_t x = plan.addr.at(a.get()), y = plan.addr.at(b.get());
        const bool overlap = x < y + roots_.slot(b.get()) && y < x + roots_.slot(a.get());
        if (live_together && overlap) return true;
      }
    }
    return false;
  }

  std::vector<uint64_t> Offsets(const SpacePlan& plan) const {
    std::vector<uint64_t> out;
    for (const ProblemBuffer& b : problem_->buffers) out.push_back(plan.addr.at(b.root));
    return out;
  }

  FunctionPlanning& planning() { return planning_; }
  const MemoryProblem& problem() const { return *problem_; }
  const RootSlots& roots() const { return roots_; }

 private:
  ir::ProgramPtr program_;
  Liveness liveness_;
  RootSlots roots_;
  absl::flat_hash_map<const ir::MemRef*, std::pair<int64_t, int64_t>> life_;
  policy::DefaultMemoryAllocatorPolicy policy_;
  std::optional<MemoryProblem> problem_;
  FunctionPlanning planning_;
};

TEST(SpacePlannerTest, EveryStrategyNameParsesBack) {
  for (PlacementStrategy s :
       {PlacementStrategy::kSequential, PlacementStrategy::kGreedy, PlacementStrategy::kSearch,
        PlacementStrategy::kConstrained, PlacementStrategy::kReplay}) {
    PlacementStrategy parsed = PlacementStrategy::kSequential;
    ASSERT_TRUE(ParsePlacementStrategy(PlacementStrategyName(s), &parsed));
    EXPECT_EQ(parsed, s);
  }
  PlacementStrategy unchanged = PlacementStrategy::kGreedy;
  EXPECT_FALSE(ParsePlacementStrategy("best", &unchanged));
  EXPECT_EQ(unchanged, PlacementStrategy::kGreedy);
}

TEST(SpacePlannerTest, RootSlotsAreTheRootsInDefinitionOrder) {
  Fixture f(kChain);
  ASSERT_EQ(f.roots().roots().size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(f.roots().roots()[i]->name(), "mem_vec_" + std::to_string(i));
    EXPECT_EQ(f.roots().slot(f.roots().roots()[i].get()), 1024);
  }
}

// Upstream's placement: one root after another from the start, whatever the lifetimes.
TEST(SpacePlannerTest, SequentialStacksRootsFromTheStart) {
  Fixture f(kChain);
  absl::StatusOr<SpacePlan> plan = f.Plan(PlacementStrategy::kSequential, 512);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->method, "sequential");
  EXPECT_EQ(plan->status, "heuristic");
  EXPECT_EQ(plan->end, 512 + 4 * 1024);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(plan->addr.at(f.roots().roots()[i].get()), 512 + 1024 * static_cast<int64_t>(i));
  }
}

// The lifetime planner shares the bytes of roots that never live together, never of two that
// do, and keeps every address above the start.
TEST(SpacePlannerTest, GreedySharesOnlyDisjointLifetimes) {
  Fixture f(kChain);
  absl::StatusOr<SpacePlan> plan = f.Plan(PlacementStrategy::kGreedy, 2048);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->method, "greedy");
  EXPECT_LT(plan->end, 2048 + 4 * 1024);
  EXPECT_FALSE(f.Conflicts(*plan));
  for (const auto& [root, a] : plan->addr) EXPECT_GE(a, 2048) << root->name();
}

// An address past the largest 64-bit one is an error naming the space, the root and its bytes.
TEST(SpacePlannerTest, AddressOverflowIsAnError) {
  Fixture f(kChain);
  absl::StatusOr<SpacePlan> plan =
      f.Plan(PlacementStrategy::kSequential, std::numeric_limits<int64_t>::max() - 2048);
  ASSERT_FALSE(plan.ok());
  EXPECT_TRUE(absl::StrContains(plan.status().message(), "Vec buffer 'mem_vec_")) << plan.status();
  EXPECT_TRUE(absl::StrContains(plan.status().message(), "ends past the largest 64-bit address"))
      << plan.status();
}

// Without the function's problem the constrained strategy has nothing to solve: upstream's plan.
TEST(SpacePlannerTest, ConstrainedWithoutAProblemKeepsTheSequentialPlan) {
  Fixture f(kChain);
  absl::StatusOr<SpacePlan> plan = f.Plan(PlacementStrategy::kConstrained);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->method, "sequential");
  EXPECT_EQ(plan->end, 4 * 1024);
}

// The constrained plan passes the independent validator (in-place rule included), is proven optimal
// here, and its reported cost is what the problem's penalties charge.
TEST(SpacePlannerTest, ConstrainedPlanIsValidAndProven) {
  Fixture f(kChain, /*with_problem=*/true);
  ASSERT_TRUE(PrepareFunctionPlanning(PlacementStrategy::kConstrained, absl::Seconds(1), nullptr,
                                      &f.planning())
                  .ok());
  absl::StatusOr<SpacePlan> plan = f.Plan(PlacementStrategy::kConstrained);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->status, "optimal");
  EXPECT_FALSE(f.Conflicts(*plan));
  const policy::DsaProblem& p = f.problem().document.problem;
  const std::vector<uint64_t> offsets = f.Offsets(*plan);
  std::vector<policy::DsaPlacement> placements;
  for (size_t i = 0; i < offsets.size(); ++i) {
    placements.push_back({p.buffers[i].id, p.buffers[i].allowed_pools[0], offsets[i]});
  }
  // The function's problem holds the in-place rule as exact_or_disjoint pairs.
  const policy::DsaSolutionCheck check = policy::CheckDsaSolution(p, placements);
  EXPECT_TRUE(check.ok()) << (check.errors.empty() ? "" : check.errors[0]);
  EXPECT_TRUE(ShiftedInPlace(f.problem(), offsets).empty());
  const uint32_t pool = static_cast<uint32_t>(ir::MemorySpace::kVec);
  EXPECT_EQ(plan->reuse_cost, policy::DsaPoolReuseCost(p, pool, offsets));
  EXPECT_LE(plan->reuse_lower_bound, plan->reuse_cost);
  EXPECT_LE(plan->end, 4 * 1024);
}

// Replays: a function without a solution and a solution that breaks the problem are refused
// before anything is placed.
TEST(SpacePlannerTest, ReplayRefusesMissingAndWrongSolutions) {
  Fixture f(kChain, /*with_problem=*/true);
  std::map<std::string, policy::DsaSolutionDocument> replay;
  absl::Status missing =
      PrepareFunctionPlanning(PlacementStrategy::kReplay, absl::Seconds(1), &replay, &f.planning());
  EXPECT_TRUE(
      absl::StrContains(missing.message(), "have none for this function (instance 'chain')"))
      << missing;
  policy::DsaSolutionDocument wrong;
  wrong.instance = "chain";
  wrong.profile = f.problem().document.profile;
  wrong.problem_fingerprint = policy::DsaProblemFingerprint(f.problem().document);
  // a at 0 and b, born where a dies, at 32: a partial overlap of an in-place pair.
  uint64_t offset = 0;
  for (const policy::DsaBuffer& b : f.problem().document.problem.buffers) {
    wrong.placements.push_back({b.id, b.allowed_pools[0], offset});
    offset = offset == 0 ? 32 : offset + 4096;
  }
  replay["chain"] = wrong;
  absl::Status refused =
      PrepareFunctionPlanning(PlacementStrategy::kReplay, absl::Seconds(1), &replay, &f.planning());
  EXPECT_TRUE(absl::StrContains(refused.message(), "does not solve the function's problem"))
      << refused;
}

// Storage layouts: the chain with a, c in ND (c states none) and b, d in NZ. Where the space
// keeps layouts apart, greedy and search plan the ND roots in one range and the NZ roots above
// it (a and c share 0, b and d share 1024); without the rule the lifetime planner may put an
// ND and an NZ root on one address.
TEST(SpacePlannerTest, LayoutClassesInRangesOfTheirOwn) {
  std::string text = kChain;
  auto state = [&](const std::string& value, const std::string& layout) {
    const std::string at = absl::StrCat("    ", value, ": Tile[[16, 16], FP32, memref=");
    const size_t p = text.find("]", text.find(at) + at.size());
    text.insert(p, layout);
  };
  state("a", ", layout=ND");
  state("b", ", layout=NZ");
  state("d", ", layout=NZ");
  Fixture f(text.c_str());
  const std::vector<ir::MemRefPtr>& roots = f.roots().roots();
  ASSERT_EQ(roots.size(), 4u);
  EXPECT_EQ(f.roots().layouts(roots[0].get()), 1);  // ND
  EXPECT_EQ(f.roots().layouts(roots[1].get()), 2);  // NZ
  EXPECT_EQ(f.roots().layouts(roots[2].get()), 1);  // none: ND
  EXPECT_EQ(f.roots().layouts(roots[3].get()), 2);
  auto apart = [&](const SpacePlan& plan) {
    for (int nd : {0, 2}) {
      for (int nz : {1, 3}) {
        const int64_t x = plan.addr.at(roots[nd].get()), y = plan.addr.at(roots[nz].get());
        if (x < y + 1024 && y < x + 1024) return false;
      }
    }
    return true;
  };
  for (PlacementStrategy st : {PlacementStrategy::kGreedy, PlacementStrategy::kSearch}) {
    absl::StatusOr<SpacePlan> plan = f.Plan(st, 0, /*separate_layouts=*/true);
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(plan->method, PlacementStrategyName(st));
    EXPECT_TRUE(apart(*plan));
    EXPECT_FALSE(f.Conflicts(*plan));
    EXPECT_EQ(plan->addr.at(roots[0].get()), 0);
    EXPECT_EQ(plan->addr.at(roots[2].get()), 0);
    EXPECT_EQ(plan->addr.at(roots[1].get()), 1024);
    EXPECT_EQ(plan->addr.at(roots[3].get()), 1024);
    EXPECT_EQ(plan->end, 2048);
  }
  absl::StatusOr<SpacePlan> mixed = f.Plan(PlacementStrategy::kGreedy);
  ASSERT_TRUE(mixed.ok());
  EXPECT_FALSE(apart(*mixed));  // the rule is what keeps them apart
}

}  // namespace
}  // namespace internal
}  // namespace passes
}  // namespace accelmem

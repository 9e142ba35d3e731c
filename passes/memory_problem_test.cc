#include "passes/memory_problem.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "backends/ascend/ascend.h"
#include "backends/backend.h"
#include "gtest/gtest.h"
#include "passes/pass_testing.h"
#include "policy/default_memory_allocator_policy.h"
#include "policy/dsa_problem.h"
#include "policy/dsa_validator.h"

namespace accelmem {
namespace passes {
namespace {

// a (loaded by MTE2) dies in b = exp(a); b is stored (MTE3); c (loaded again by MTE2) dies in
// d = add(c, c), stored. A slice view of d shares d's root.
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
    e: Tile[[8, 16], FP32, memref=mem_vec_3] = tile.slice(d, [8, 16], [0, 0])
    r: Tensor[[16, 16], FP32] = tile.store(e, [0, 0], o)
    return r
)";

struct Built {
  ir::ProgramPtr program;
  std::unique_ptr<Liveness> liveness;
  MemoryProblem problem;
};

Built Build(const char* text, const backends::Backend* backend,
            std::vector<policy::DsaAddressRange> reserved = {}) {
  Built b;
  b.program = testing::ParseOrDie(text);
  b.liveness = std::make_unique<Liveness>(*b.program->functions[0]);
  policy::DefaultMemoryAllocatorPolicy pol;
  MemoryProblemOptions o;
  o.policy = &pol;
  o.backend = backend;
  o.reserved = std::move(reserved);
  b.problem = BuildMemoryProblem(*b.program->functions[0], *b.liveness, o);
  return b;
}

std::set<std::pair<std::string, std::string>> Penalties(const MemoryProblem& m) {
  std::set<std::pair<std::string, std::string>> out;
  const policy::DsaProblem& p = m.document.problem;
  if (!p.cost_model) return out;
  for (const policy::DsaReusePenalty& e : p.cost_model->reuse_penalties) {
    EXPECT_EQ(e.cost, 1u);
    EXPECT_EQ(e.reason, policy::DsaPenaltyReason::kCrossPipe);
    out.insert({m.buffers[e.first].first_value, m.buffers[e.second].first_value});
  }
  return out;
}

// One pool (Vec, id 1) with the backend's capacity, one buffer per root with its slot (the view
// does not enlarge d's root), 32-byte alignment, lifetimes that follow program order.
TEST(MemoryProblemTest, PoolsBuffersAndLifetimes) {
  backends::BackendPtr b910 = backends::MakeAscendBackend(backends::Ascend910b());
  Built b = Build(kChain, b910.get());
  const policy::DsaProblem& p = b.problem.document.problem;
  EXPECT_TRUE(policy::ValidateDsaProblem(p).empty());
  ASSERT_EQ(p.pools.size(), 1u);
  EXPECT_EQ(p.pools[0].id, static_cast<uint32_t>(ir::MemorySpace::kVec));
  EXPECT_EQ(p.pools[0].name, "Vec");
  ASSERT_TRUE(p.pools[0].capacity.has_value());
  EXPECT_EQ(*p.pools[0].capacity, 188416u);
  ASSERT_EQ(p.buffers.size(), 4u);
  const char* names[] = {"a", "b", "c", "d"};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(b.problem.buffers[i].first_value, names[i]);
    EXPECT_EQ(p.buffers[i].alignment, 32u);
    ASSERT_EQ(p.buffers[i].live_intervals.size(), 1u);
    if (i > 0) {
      EXPECT_LE(p.buffers[i - 1].live_intervals[0].lower, p.buffers[i].live_intervals[0].lower);
    }
  }
  EXPECT_EQ(p.buffers[3].size, 1024u);
  EXPECT_EQ(b.problem.document.instance, "chain");
  // d and its view e form an alias class.
  ASSERT_TRUE(p.pypto_structure.has_value());
  ASSERT_EQ(p.pypto_structure->alias_classes.size(), 1u);
  EXPECT_EQ(p.pypto_structure->alias_classes[0].buffer, 3u);
  EXPECT_EQ(p.pypto_structure->alias_classes[0].members, (std::vector<std::string>{"d", "e"}));
  // Without a backend the pool is unbounded.
  Built none = Build(kChain, nullptr);
  EXPECT_FALSE(none.problem.document.problem.pools[0].capacity.has_value());
}

// Pipes: a (last read by the vector exp) -> c (written by MTE2), b (last read by the MTE3
// store) -> c (MTE2) and b -> d (vector add); a -> b and c -> d hand over on the vector pipe,
// a -> d too: no penalty. The in-place pairs (a dies where b is born, c where d is) are
// exact_or_disjoint pairs, and there is no separation.
TEST(MemoryProblemTest, CrossPipePenaltiesAndInPlacePairs) {
  Built b = Build(kChain, nullptr);
  const std::set<std::pair<std::string, std::string>> expected = {
      {"a", "c"}, {"b", "c"}, {"b", "d"}};
  EXPECT_EQ(Penalties(b.problem), expected);
  const policy::DsaProblem& p = b.problem.document.problem;
  ASSERT_EQ(b.problem.in_place.size(), 2u);
  EXPECT_TRUE(p.constraints.separations.empty());
  EXPECT_EQ(p.extensions.exact_or_disjoint.size(), 2u);
  std::set<std::pair<std::string, std::string>> pairs;
  for (const policy::DsaPair& e : p.extensions.exact_or_disjoint) {
    pairs.insert({b.problem.buffers[e.first].first_value, b.problem.buffers[e.second].first_value});
  }
  EXPECT_EQ(pairs, (std::set<std::pair<std::string, std::string>>{{"a", "b"}, {"c", "d"}}));
  // The validator holds the pairs to the rule: the same base, or apart; never a partial overlap.
  auto valid = [&](std::vector<uint64_t> offsets) {
    std::vector<policy::DsaPlacement> placements;
    for (uint32_t i = 0; i < offsets.size(); ++i) {
      placements.push_back({i, p.buffers[i].allowed_pools[0], offsets[i]});
    }
    return policy::CheckDsaSolution(p, placements).ok();
  };
  EXPECT_TRUE(valid({0, 0, 1024, 1024}));
  EXPECT_TRUE(valid({0, 1024, 2048, 3072}));
  EXPECT_FALSE(valid({0, 32, 2048, 4096}));
  // Sharing at the same offset keeps the in-place rule; a shifted overlap breaks it.
  EXPECT_TRUE(ShiftedInPlace(b.problem, {0, 0, 1024, 1024}).empty());
  const std::vector<policy::DsaPair> shifted = ShiftedInPlace(b.problem, {0, 32, 2048, 4096});
  ASSERT_EQ(shifted.size(), 1u);
  EXPECT_EQ(shifted[0].first, 0u);
  EXPECT_EQ(shifted[0].second, 1u);
  // b may take a's bytes in place, at a's offset.
  std::vector<policy::DsaPlacement> same = {{0, 1, 0}, {1, 1, 0}, {2, 1, 1024}, {3, 1, 2048}};
  EXPECT_TRUE(policy::CheckDsaSolution(p, same).ok());
  std::vector<policy::DsaPlacement> apart = {{0, 1, 0}, {1, 1, 1024}, {2, 1, 0}, {3, 1, 1024}};
  const policy::DsaSolutionCheck check = policy::CheckDsaSolution(p, apart);
  EXPECT_TRUE(check.ok()) << (check.errors.empty() ? "" : check.errors[0]);
  EXPECT_EQ(check.reuse_cost, 2u);  // a-c and b-d overlap
}

// The peak: LOAD with the reserved bytes, the statement and line of its point, the live buffers
// largest first.
TEST(MemoryProblemTest, PeakDiagnosis) {
  backends::BackendPtr b910 = backends::MakeAscendBackend(backends::Ascend910b());
  Built b = Build(kChain, b910.get(), {{0, 4096}});
  const PoolPeak peak = ComputePoolPeak(b.problem, 1);
  EXPECT_EQ(peak.reserved, 4096u);
  EXPECT_EQ(peak.load, 4096u + 1024u);  // each tile dies where the next is born
  ASSERT_EQ(peak.live.size(), 1u);
  const std::string text = DescribePoolPeak(b.problem, 1);
  EXPECT_TRUE(absl::StrContains(text,
                                "LOAD 5120 bytes (4096 of them reserved) against a "
                                "capacity of 188416"))
      << text;
  EXPECT_TRUE(absl::StrContains(text, "the peak is at statement ")) << text;
  EXPECT_TRUE(absl::StrContains(text, "(line ")) << text;
  EXPECT_TRUE(absl::StrContains(text, "largest live buffers: 'mem_vec_")) << text;
}

// Storage layouts on the 950: every ND/NZ pair of Vec buffers is a separation (reason
// target_hazard), whatever the lifetimes.
// 'c' states no layout (ND). On the 910B there are none.
TEST(MemoryProblemTest, LayoutSeparations) {
  constexpr char kText[] = R"(@function(type=AIV)
def lay(x: Tensor[[16, 16], FP16]) -> Tensor[[16, 16], FP16]:
    mem_vec_0: MemRefType = tile.alloc(Vec, -1, 512, 0)
    mem_vec_1: MemRefType = tile.alloc(Vec, -1, 512, 1)
    mem_vec_2: MemRefType = tile.alloc(Vec, -1, 512, 2)
    a: Tile[[16, 16], FP16, memref=mem_vec_0, layout=ND] = tile.load(x, [0, 0], [16, 16])
    o: Tensor[[16, 16], FP16] = tile.store(a, [0, 0], x)
    b: Tile[[16, 16], FP16, memref=mem_vec_1, layout=NZ] = tile.load(o, [0, 0], [16, 16])
    c: Tile[[16, 16], FP16, memref=mem_vec_2] = tile.move(b, Vec)
    r: Tensor[[16, 16], FP16] = tile.store(c, [0, 0], o)
    return r
)";
  backends::BackendPtr b950 = backends::MakeAscendBackend(backends::Ascend950());
  Built b = Build(kText, b950.get());
  const policy::DsaProblem& p = b.problem.document.problem;
  EXPECT_TRUE(policy::ValidateDsaProblem(p).empty());
  EXPECT_EQ(b.problem.buffers[0].layout, ir::TileLayout::kND);
  EXPECT_EQ(b.problem.buffers[1].layout, ir::TileLayout::kNZ);
  EXPECT_EQ(b.problem.buffers[2].layout, ir::TileLayout::kND);
  ASSERT_EQ(b.problem.layout_pairs.size(), 2u);
  std::set<std::pair<std::string, std::string>> seps;
  for (size_t i = 0; i < b.problem.layout_pairs.size(); ++i) {
    const policy::DsaSeparation& s = p.constraints.separations[i];
    seps.insert({b.problem.buffers[s.first].first_value, b.problem.buffers[s.second].first_value});
    EXPECT_EQ(s.reasons,
              std::vector<policy::DsaSeparationReason>{policy::DsaSeparationReason::kTargetHazard});
  }
  EXPECT_EQ(seps, (std::set<std::pair<std::string, std::string>>{{"a", "b"}, {"b", "c"}}));
  EXPECT_EQ(p.constraints.separations.size(), b.problem.layout_pairs.size());
  // a and b have disjoint lifetimes, yet may not share bytes; a and c may.
  std::vector<policy::DsaPlacement> shared = {{0, 1, 0}, {1, 1, 0}, {2, 1, 512}};
  EXPECT_FALSE(policy::CheckDsaSolution(p, shared).ok());
  std::vector<policy::DsaPlacement> apart = {{0, 1, 0}, {1, 1, 512}, {2, 1, 0}};
  const policy::DsaSolutionCheck check = policy::CheckDsaSolution(p, apart);
  EXPECT_TRUE(check.ok()) << (check.errors.empty() ? "" : check.errors[0]);
  // The 910B keeps no layouts apart.
  backends::BackendPtr b910 = backends::MakeAscendBackend(backends::Ascend910b());
  Built n = Build(kText, b910.get());
  EXPECT_TRUE(n.problem.layout_pairs.empty());
  EXPECT_EQ(n.problem.buffers[1].layout, std::nullopt);
  EXPECT_TRUE(n.problem.document.problem.constraints.separations.empty());
}

// A declared allocation is separated from every other buffer of its pool (reason
// semantic_no_alias), whatever the lifetimes, and takes part in no in-place pair; a plan that
// puts a later buffer on its bytes is rejected by the schema's checker.
TEST(MemoryProblemTest, DeclaredAllocationSeparations) {
  constexpr char kText[] = R"(@function(type=AIV)
def closed(x: Tensor[[16, 16], FP16]) -> Tensor[[16, 16], FP16]:
    stash: MemRefType = tile.alloc(Vec, -1, 512, 0, declared=1)
    mem_vec_1: MemRefType = tile.alloc(Vec, -1, 512, 1)
    mem_vec_2: MemRefType = tile.alloc(Vec, -1, 512, 2)
    a: Tile[[16, 16], FP16, memref=stash] = tile.load(x, [0, 0], [16, 16])
    b: Tile[[16, 16], FP16, memref=mem_vec_1] = tile.exp(a)
    c: Tile[[16, 16], FP16, memref=mem_vec_2] = tile.exp(b)
    r: Tensor[[16, 16], FP16] = tile.store(c, [0, 0], x)
    return r
)";
  backends::BackendPtr b910 = backends::MakeAscendBackend(backends::Ascend910b());
  Built b = Build(kText, b910.get());
  const policy::DsaProblem& p = b.problem.document.problem;
  EXPECT_TRUE(policy::ValidateDsaProblem(p).empty());
  ASSERT_EQ(b.problem.declared_pairs.size(), 2u);
  std::set<std::pair<std::string, std::string>> seps;
  for (const policy::DsaSeparation& s : p.constraints.separations) {
    seps.insert({b.problem.buffers[s.first].first_value, b.problem.buffers[s.second].first_value});
    EXPECT_EQ(s.reasons, std::vector<policy::DsaSeparationReason>{
                             policy::DsaSeparationReason::kSemanticNoAlias});
  }
  EXPECT_EQ(seps, (std::set<std::pair<std::string, std::string>>{{"a", "b"}, {"a", "c"}}));
  // b dies where c is born: their in-place pair stays; a's with b does not.
  ASSERT_EQ(b.problem.in_place.size(), 1u);
  EXPECT_EQ(b.problem.buffers[b.problem.in_place[0].first].first_value, "b");
  // c may take b's base, never a's bytes.
  std::vector<policy::DsaPlacement> on_a = {{0, 1, 0}, {1, 1, 512}, {2, 1, 0}};
  EXPECT_FALSE(policy::CheckDsaSolution(p, on_a).ok());
  std::vector<policy::DsaPlacement> on_b = {{0, 1, 0}, {1, 1, 512}, {2, 1, 512}};
  const policy::DsaSolutionCheck check = policy::CheckDsaSolution(p, on_b);
  EXPECT_TRUE(check.ok()) << (check.errors.empty() ? "" : check.errors[0]);
}

// A pipelined loop's slotted roots are pipeline groups: one per root, its block the one member,
// depth from the loop, effective depth its slots, slot size the block over its slots. The
// problem stays valid, and a plain root is in no group.
TEST(MemoryProblemTest, PipelineGroups) {
  const Built b = Build(R"(@function(type=AIV)
def f(x: Tensor[[8, 64], FP32], out: Tensor[[8, 64], FP32]) -> Tensor[[8, 64], FP32]:
    mem_vec_0: MemRefType = tile.alloc(Vec, -1, 6144, 0, slots=3)
    mem_vec_1: MemRefType = tile.alloc(Vec, -1, 6144, 1, slots=3)
    mem_vec_2: MemRefType = tile.alloc(Vec, -1, 2048, 2)
    for i in range(0, 6, 1, pipeline=3):
        a: Tile[[8, 64], FP32, memref=mem_vec_0[0]] = tile.load(x, [0, 0], [8, 64])
        e: Tile[[8, 64], FP32, memref=mem_vec_1[0]] = tile.exp(a)
        o: Tensor[[8, 64], FP32] = tile.store(e, [0, 0], out)
    c: Tile[[8, 64], FP32, memref=mem_vec_2] = tile.load(x, [0, 0], [8, 64])
    r: Tensor[[8, 64], FP32] = tile.store(c, [0, 0], out)
    return r
)",
                        nullptr);
  const policy::DsaProblem& p = b.problem.document.problem;
  EXPECT_TRUE(policy::ValidateDsaProblem(p).empty());
  ASSERT_TRUE(p.pypto_structure.has_value());
  ASSERT_EQ(p.pypto_structure->pipeline_groups.size(), 2u);
  for (size_t g = 0; g < 2; ++g) {
    const policy::DsaPipelineGroup& group = p.pypto_structure->pipeline_groups[g];
    EXPECT_EQ(group.group, g);
    EXPECT_EQ(group.pool, static_cast<uint32_t>(ir::MemorySpace::kVec));
    EXPECT_EQ(group.depth, 3u);
    EXPECT_EQ(group.effective_depth, 3u);
    EXPECT_EQ(group.slot_size, 2048u);
    ASSERT_EQ(group.members.size(), 1u);
    EXPECT_EQ(p.buffers[group.members[0].buffer].name, g == 0 ? "mem_vec_0" : "mem_vec_1");
    EXPECT_EQ(p.buffers[group.members[0].buffer].size, 6144u);
    EXPECT_EQ(group.members[0].stage, 0u);
    EXPECT_EQ(group.members[0].residue, 0u);
  }
  // The slots are busy over the whole loop: the two blocks overlap in time, c comes after.
  const policy::DsaBuffer& a = p.buffers[0];
  const policy::DsaBuffer& e = p.buffers[1];
  EXPECT_EQ(a.live_intervals[0].lower, e.live_intervals[0].lower);
  EXPECT_EQ(a.live_intervals[0].upper, e.live_intervals[0].upper);
  EXPECT_GE(p.buffers[2].live_intervals[0].lower, a.live_intervals[0].upper);
}

}  // namespace
}  // namespace passes
}  // namespace accelmem

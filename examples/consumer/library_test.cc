// A downstream test that links single accelmem library targets: the tile IR parser and printer,
// and the lifetime placement planner with its checker.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "policy/lifetime_planner.h"
#include "policy/placement_checker.h"
#include "runtime/sparse_runtime.h"
#include "sparse_runtime/snode_tree.h"

namespace {

constexpr char kProgram[] = R"(@function(type=InCore)
def main(in_a: Tensor[[64, 64], FP32], out: Tensor[[64, 64], FP32]) -> Tensor[[64, 64], FP32]:
    a: Tile[[64, 64], FP32, Vec] = tile.load(in_a, [0, 0], [64, 64])
    b: Tile[[64, 64], FP32, Vec] = tile.add(a, a)
    r: Tensor[[64, 64], FP32] = tile.store(b, [0, 0], out)
    return r
)";

// @accelmem//ir:parser and :printer: a program parses, verifies and prints as a fixed point.
TEST(ConsumerLibraryTest, ParseAndPrintTileProgram) {
  auto program = accelmem::ir::ParseAndVerifyProgram(kProgram, "consumer.tile");
  ASSERT_TRUE(program.ok()) << program.status();
  std::string printed = accelmem::ir::PrintProgram(**program);
  auto reparsed = accelmem::ir::ParseProgram(printed, "printed.tile");
  ASSERT_TRUE(reparsed.ok()) << reparsed.status();
  EXPECT_EQ(accelmem::ir::PrintProgram(**reparsed), printed);
  auto bad = accelmem::ir::ParseProgram("def f(:\n", "bad.tile");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("bad.tile:1:"), std::string::npos);
}

// @accelmem//policy:lifetime_planner places buffers that the checker accepts, at LOAD here.
TEST(ConsumerLibraryTest, PlannerPlacementPassesChecker) {
  std::vector<accelmem::policy::PlacementBuffer> buffers = {
      {"a", 0, 4, 64}, {"b", 2, 6, 32}, {"c", 4, 8, 64}, {"d", 6, 10, 32}};
  accelmem::policy::PlannerOptions options;
  options.alignment = 32;
  auto plan = accelmem::policy::PlanPlacement(buffers, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  accelmem::policy::PlacementLimits limits;
  limits.alignment = 32;
  EXPECT_TRUE(accelmem::policy::CheckPlacement(buffers, plan->offsets, limits).ok());
  EXPECT_EQ(plan->load, 96);
  EXPECT_EQ(plan->height, 96);
}

// @accelmem//runtime:sparse_runtime: a pointer SNode activates on write, reads 0 when
// inactive, and reuses a deactivated cell after the runtime's own garbage collection.
TEST(ConsumerLibraryTest, SparseRuntimeWriteDeactivateReuse) {
  using accelmem::sparse_runtime::Axis;
  accelmem::sparse_runtime::SNodeTree tree;
  tree.root().pointer(Axis(0), 16).dense(Axis(0), 4).place<float>("x");
  ASSERT_TRUE(tree.Finalize().ok());
  auto rt = accelmem::runtime::SparseRuntime::Create(tree);
  ASSERT_TRUE(rt.ok()) << rt.status();
  const auto& x = *tree.FindPlace("x");
  const auto& ptr = *x.parent()->parent();
  EXPECT_EQ((*rt)->Read<float>(x, {9}).value(), 0.0f);
  ASSERT_TRUE((*rt)->Write<float>(x, {9}, 2.5f).ok());
  EXPECT_EQ((*rt)->Read<float>(x, {9}).value(), 2.5f);
  ASSERT_TRUE((*rt)->Deactivate(ptr, {2}).ok());
  EXPECT_EQ((*rt)->Read<float>(x, {9}).value(), 0.0f);
  EXPECT_EQ((*rt)->Stats(ptr).cells_free, 1);
  EXPECT_TRUE((*rt)->CheckInvariants().ok());
}

}  // namespace

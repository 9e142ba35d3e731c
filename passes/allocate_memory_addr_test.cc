#include "passes/allocate_memory_addr.h"

#include <memory>
#include <string>
#include <vector>

#include "backends/ascend910b/ascend910b.h"
#include "backends/backend.h"
#include "gtest/gtest.h"
#include "passes/test_util.h"
#include "passes/verify_memory_plan.h"
#include "policy/default_memory_allocator_policy.h"

namespace accelmem {
namespace passes {
namespace {

using testing::Canonical;
using testing::RunToText;

constexpr char kSeedBefore[] = R"(@function(type=InCore)
def seed(x: Tensor[[64, 64], FP32], y: Tensor[[64, 64], FP32]) -> Tensor[[64, 64], FP32]:
    mem_vec_0: MemRefType = tile.alloc(Vec, -1, 16384, 0)
    mem_vec_1: MemRefType = tile.alloc(Vec, -1, 16384, 1)
    tile_a: Tile[[64, 64], FP32, memref=mem_vec_0] = tile.load(x, [0, 0], [64, 64])
    tile_b: Tile[[64, 64], FP32, memref=mem_vec_1] = tile.add(tile_a, tile_a)
    r: Tensor[[64, 64], FP32] = tile.store(tile_b, [0, 0], y)
    return r
)";

constexpr char kSeedAfter[] = R"(@function(type=InCore)
def seed(x: Tensor[[64, 64], FP32], y: Tensor[[64, 64], FP32]) -> Tensor[[64, 64], FP32]:
    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 16384, 0)
    mem_vec_1: MemRefType = tile.alloc(Vec, 16384, 16384, 1)
    tile_a: Tile[[64, 64], FP32, memref=mem_vec_0] = tile.load(x, [0, 0], [64, 64])
    tile_b: Tile[[64, 64], FP32, memref=mem_vec_1] = tile.add(tile_a, tile_a)
    r: Tensor[[64, 64], FP32] = tile.store(tile_b, [0, 0], y)
    return r
)";

// The seed's first example: two 16 KiB Vec roots go to 0 and 16384, in place in the allocs.
TEST(AllocateMemoryAddrTest, SeedSequentialVec) {
  backends::BackendConfig::Reset();
  absl::StatusOr<std::string> out = RunToText(kSeedBefore, "allocate-memory-addr");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, Canonical(kSeedAfter));
}

// Running the pass on its own output changes nothing (idempotent).
TEST(AllocateMemoryAddrTest, PlannedFunctionUnchanged) {
  absl::StatusOr<ProgramResult> r = testing::RunOnText(kSeedAfter, "allocate-memory-addr");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->changed);
}

}  // namespace
}  // namespace passes
}  // namespace accelmem

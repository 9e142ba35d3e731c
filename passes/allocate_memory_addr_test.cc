#include "passes/allocate_memory_addr.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "backends/ascend/ascend.h"
#include "backends/backend.h"
#include "gtest/gtest.h"
#include "passes/pass_testing.h"
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

// The upstream pass's first example: two 16 KiB Vec roots go to 0 and 16384, in place in the
// allocs.
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

// The upstream documentation's MyCustomPolicy: 256-byte alignment, roots in descending id order.
class MyCustomPolicy final : public policy::MemoryAllocatorPolicy {
 public:
  bool ShouldAllocate(ir::MemorySpace space) const override {
    return space != ir::MemorySpace::kDDR;
  }
  uint64_t AlignAddress(uint64_t addr, ir::MemorySpace) const override {
    return policy::AlignUp(addr, 256);
  }
  void OrderMemRefs(std::vector<ir::MemRefPtr>& refs) const override {
    policy::OrderMemRefsById(&refs);
    std::reverse(refs.begin(), refs.end());
  }
};

// The upstream documentation's MyBackend: overrides only CreateMemoryAllocatorPolicy.
class MyBackend : public backends::Backend {
 public:
  std::string Name() const override { return "my"; }
  policy::MemoryAllocatorPolicyPtr CreateMemoryAllocatorPolicy() const override {
    return std::make_unique<MyCustomPolicy>();
  }
};

constexpr char kThree[] = R"(@function(type=AIV)
def three(x: Tensor[[3, 5], FP32]) -> Tensor[[3, 5], FP32]:
    mem_vec_0: MemRefType = tile.alloc(Vec, -1, 60, 0)
    mem_vec_1: MemRefType = tile.alloc(Vec, -1, 60, 1)
    mem_vec_2: MemRefType = tile.alloc(Vec, -1, 60, 2)
    a: Tile[[3, 5], FP32, memref=mem_vec_0] = tile.load(x, [0, 0], [3, 5])
    b: Tile[[3, 5], FP32, memref=mem_vec_1] = tile.exp(a)
    c: Tile[[3, 5], FP32, memref=mem_vec_2] = tile.add(a, b)
    o: Tensor[[3, 5], FP32] = tile.store(c, [0, 0], x)
    return o
)";

// A configured custom backend's policy decides order and alignment; without it, the default.
TEST(AllocateMemoryAddrTest, CustomBackendPolicyOverridesDefault) {
  {
    backends::ScopedBackend scoped(std::make_shared<MyBackend>());
    absl::StatusOr<std::string> out = RunToText(kThree, "allocate-memory-addr");
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_TRUE(absl::StrContains(*out, "tile.alloc(Vec, 512, 60, 0)")) << *out;
    EXPECT_TRUE(absl::StrContains(*out, "tile.alloc(Vec, 256, 60, 1)")) << *out;
    EXPECT_TRUE(absl::StrContains(*out, "tile.alloc(Vec, 0, 60, 2)")) << *out;
    MyCustomPolicy policy;
    MemoryPlanOptions opts;
    opts.policy = &policy;
    absl::StatusOr<ProgramResult> r = testing::RunOnText(*out, "allocate-memory-addr");
    ASSERT_TRUE(r.ok());
    EXPECT_FALSE(r->changed);  // idempotent under the custom policy too
    EXPECT_TRUE(VerifyMemoryPlan(*r->program, opts).ok());
    // The default policy's checker rejects nothing here either (256 is a multiple of 32) ...
    EXPECT_TRUE(VerifyMemoryPlan(*r->program).ok());
  }
  backends::BackendConfig::Reset();
  absl::StatusOr<std::string> out = RunToText(kThree, "allocate-memory-addr");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(absl::StrContains(*out, "tile.alloc(Vec, 0, 60, 0)")) << *out;
  EXPECT_TRUE(absl::StrContains(*out, "tile.alloc(Vec, 64, 60, 1)")) << *out;
  EXPECT_TRUE(absl::StrContains(*out, "tile.alloc(Vec, 128, 60, 2)")) << *out;
  // ... but a 32-byte plan fails the custom policy's alignment.
  MyCustomPolicy policy;
  MemoryPlanOptions opts;
  opts.policy = &policy;
  EXPECT_FALSE(VerifyMemoryPlan(*testing::ParseOrDie(*out), opts).ok());
}

// The pass plans with the backend it is given (policy and capacity), whatever backend is
// configured globally.
TEST(AllocateMemoryAddrTest, UsesItsOwnBackendNotTheConfiguredOne) {
  ir::ProgramPtr p = testing::ParseOrDie(R"(@function(type=AIV)
def f(x: Tensor[[512, 512], FP32]) -> Tensor[[512, 512], FP32]:
    mem_vec_0: MemRefType = tile.alloc(Vec, -1, 1048576, 0)
    a: Tile[[512, 512], FP32, memref=mem_vec_0] = tile.load(x, [0, 0], [512, 512])
    r: Tensor[[512, 512], FP32] = tile.store(a, [0, 0], x)
    return r
)");
  {
    // 1 MiB of Vec exceeds the 910B capacity, but the pass is given no backend.
    backends::ScopedBackend configured(backends::MakeAscendBackend(backends::Ascend910b()));
    EXPECT_TRUE(AllocateMemoryAddrPass().RunOnFunction(p->functions[0]).ok());
  }
  backends::BackendConfig::Reset();
  AllocateMemoryAddrOptions with;
  with.backend = backends::MakeAscendBackend(backends::Ascend910b());
  absl::StatusOr<FunctionResult> r = AllocateMemoryAddrPass(with).RunOnFunction(p->functions[0]);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::StrContains(r.status().message(), "exceeds platform limit")) << r.status();
}

// The pass reports its kebab-case name and the reserve space follows the function type.
TEST(AllocateMemoryAddrTest, NameAndReserveSpace) {
  EXPECT_EQ(CreateAllocateMemoryAddrPass()->Name(), "allocate-memory-addr");
  EXPECT_EQ(ReserveSpace(ir::FunctionType::kAIC), ir::MemorySpace::kMat);
  EXPECT_EQ(ReserveSpace(ir::FunctionType::kAIV), ir::MemorySpace::kVec);
  EXPECT_EQ(ReserveSpace(ir::FunctionType::kInCore), ir::MemorySpace::kVec);
}

}  // namespace
}  // namespace passes
}  // namespace accelmem

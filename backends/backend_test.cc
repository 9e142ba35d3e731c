#include "backends/backend.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "policy/default_memory_allocator_policy.h"

namespace accelmem {
namespace backends {
namespace {

using ir::DType;
using ir::MemorySpace;
using policy::MemoryAllocatorPolicyPtr;

// A custom policy as a downstream backend would write one: plans every space including DDR,
// 256-byte alignment, reversed ids.
class MyCustomPolicy final : public policy::MemoryAllocatorPolicy {
 public:
  bool ShouldAllocate(MemorySpace) const override { return true; }
  uint64_t AlignAddress(uint64_t addr, MemorySpace) const override {
    return policy::AlignUp(addr, 256);
  }
  void OrderMemRefs(std::vector<ir::MemRefPtr>& refs) const override {
    policy::OrderMemRefsById(&refs);
    std::reverse(refs.begin(), refs.end());
  }
};

// A custom backend that overrides only CreateMemoryAllocatorPolicy.
class MyBackend : public Backend {
 public:
  std::string Name() const override { return "my"; }
  MemoryAllocatorPolicyPtr CreateMemoryAllocatorPolicy() const override {
    return std::make_unique<MyCustomPolicy>();
  }
};

class PlainBackend : public Backend {
 public:
  std::string Name() const override { return "plain"; }
};

// Without a configured backend the passes get the default policy, default sizes, no capacity.
TEST(BackendConfigTest, FallsBackToDefaultWhenNoneConfigured) {
  BackendConfig::Reset();
  EXPECT_FALSE(BackendConfig::IsConfigured());
  EXPECT_EQ(BackendConfig::Get(), nullptr);
  MemoryAllocatorPolicyPtr p = CreateActivePolicy();
  ASSERT_NE(p, nullptr);
  EXPECT_NE(dynamic_cast<policy::DefaultMemoryAllocatorPolicy*>(p.get()), nullptr);
  EXPECT_EQ(ActiveMemSize(MemorySpace::kVec), 0);
  ir::TileType acc(ir::StaticShape({17, 16}), DType::kFP32, MemorySpace::kAcc);
  EXPECT_EQ(ActiveTileBytes(acc), 17 * 16 * 4);
}

// Set makes IsConfigured true and Reset undoes it.
TEST(BackendConfigTest, SetAndReset) {
  BackendConfig::Set(std::make_shared<PlainBackend>());
  EXPECT_TRUE(BackendConfig::IsConfigured());
  EXPECT_EQ(BackendConfig::Get()->Name(), "plain");
  BackendConfig::Reset();
  EXPECT_FALSE(BackendConfig::IsConfigured());
}

// A custom backend's policy (the custom backend above) is what the passes get while it is
// configured, and ScopedBackend restores the previous selection.
TEST(BackendConfigTest, CustomBackendOverridesPolicy) {
  BackendConfig::Reset();
  {
    ScopedBackend scoped(std::make_shared<MyBackend>());
    MemoryAllocatorPolicyPtr p = CreateActivePolicy();
    EXPECT_NE(dynamic_cast<MyCustomPolicy*>(p.get()), nullptr);
    EXPECT_TRUE(p->ShouldAllocate(MemorySpace::kDDR));
    EXPECT_EQ(p->AlignAddress(1, MemorySpace::kVec), 256u);
  }
  EXPECT_FALSE(BackendConfig::IsConfigured());
}

// A backend that overrides nothing uses the default policy, the contract's sizes, no capacities.
TEST(BackendTest, BaseDefaults) {
  PlainBackend b;
  MemoryAllocatorPolicyPtr p = b.CreateMemoryAllocatorPolicy();
  EXPECT_EQ(p->AlignAddress(33, MemorySpace::kMat), 64u);
  EXPECT_FALSE(p->ShouldAllocate(MemorySpace::kDDR));
  EXPECT_EQ(b.GetMemSize(MemorySpace::kVec), 0);
  ir::TileType t(ir::StaticShape({3, 5}), DType::kINT4, MemorySpace::kVec);
  EXPECT_EQ(b.TileBytes(t), 8);  // ceil(15 * 4 / 8)
  EXPECT_EQ(b.tile_byte_sizer().Bytes(t), 8);
  ir::TileType dyn({ir::Dim::Symbol("n"), ir::Dim::Static(4)}, DType::kFP32, MemorySpace::kVec);
  EXPECT_EQ(b.TileBytes(dyn), std::nullopt);
  EXPECT_FALSE(b.SeparatesLayouts(MemorySpace::kVec));  // no layout rule by default
  EXPECT_EQ(SeparatedLayout(&b, t), std::nullopt);
}

// Acc row padding rounds the penultimate dimension up and multiplies the batch dimensions.

// The registry creates backends by name and rejects unknown and duplicate names.
TEST(BackendRegistryTest, RegisterCreateAndErrors) {
  BackendRegistry& r = BackendRegistry::Global();
  ASSERT_TRUE(r.Register("test-my", [] { return std::make_shared<MyBackend>(); }).ok());
  EXPECT_EQ(r.Register("test-my", [] { return std::make_shared<MyBackend>(); }).code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(r.Register("", [] { return std::make_shared<MyBackend>(); }).code(),
            absl::StatusCode::kInvalidArgument);
  absl::StatusOr<BackendPtr> b = r.Create("test-my");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ((*b)->Name(), "my");
  absl::StatusOr<BackendPtr> missing = r.Create("nope");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(std::string(missing.status().message()).find("unknown backend 'nope'"),
            std::string::npos);
  EXPECT_NE(std::string(missing.status().message()).find("test-my"), std::string::npos);

  ASSERT_TRUE(BackendConfig::SetByName("test-my").ok());
  EXPECT_TRUE(BackendConfig::IsConfigured());
  ASSERT_TRUE(BackendConfig::SetByName("none").ok());
  EXPECT_FALSE(BackendConfig::IsConfigured());
  EXPECT_FALSE(BackendConfig::SetByName("nope").ok());
}

}  // namespace
}  // namespace backends
}  // namespace accelmem

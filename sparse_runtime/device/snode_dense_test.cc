#include "sparse_runtime/device/snode_dense.h"

#include "gtest/gtest.h"
#include "sparse_runtime/snode_testing.h"

namespace accelmem {
namespace sparse_runtime {
namespace {

// Dense cells are back to back with stride element_size and always active.
TEST(SNodeDenseTest, CellsAreStridedAndAlwaysActive) {
  SNodeTestContext ctx;
  DenseMeta meta;
  ctx.FillMeta(&meta.base, 1, 12, 7);
  Ptr m = reinterpret_cast<Ptr>(&meta);
  EXPECT_EQ(Dense_get_num_elements(m, ctx.root()), 7);
  for (int i = 0; i < 7; ++i) {
    EXPECT_TRUE(Dense_is_active(m, ctx.root(), i));
    EXPECT_EQ(Dense_lookup_element(m, ctx.root(), i), ctx.root() + 12 * i);
  }
}

// The inline form over a compile-time meta returns the entry point's cells.
TEST(SNodeDenseTest, InlineFormMatchesEntryPoint) {
  SNodeTestContext ctx;
  DenseMeta meta;
  ctx.FillMeta(&meta.base, 1, 12, 7);
  Ptr m = reinterpret_cast<Ptr>(&meta);
  const StaticMeta<7, 12> sm{m};
  ASSERT_TRUE(sm.matches());
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(Dense_lookup_element_inline(sm, ctx.root(), i), ctx.root() + 12 * i);
    EXPECT_EQ(Dense_lookup_element_inline(RuntimeMeta{m}, ctx.root(), i), ctx.root() + 12 * i);
    EXPECT_TRUE(Dense_is_active_inline(sm, ctx.root(), i));
  }
}

// The meta's first member is the common prefix (lookup through the generic function pointer).
TEST(SNodeDenseTest, MetaStartsWithStructMeta) {
  SNodeTestContext ctx;
  DenseMeta meta;
  ctx.FillMeta(&meta.base, 1, 8, 4);
  meta.base.lookup_element = &Dense_lookup_element;
  StructMeta* base = as_struct_meta(reinterpret_cast<Ptr>(&meta));
  EXPECT_EQ(base->lookup_element(reinterpret_cast<Ptr>(&meta), ctx.root(), 3), ctx.root() + 24);
}

}  // namespace
}  // namespace sparse_runtime
}  // namespace accelmem

#include "sparse_runtime/device/snode_root.h"

#include "gtest/gtest.h"
#include "sparse_runtime/snode_testing.h"

namespace accelmem {
namespace sparse_runtime {
namespace {

// The root container is one always-active cell located at the node itself.
TEST(SNodeRootTest, OneActiveCellAtTheNode) {
  SNodeTestContext ctx;
  RootMeta meta;
  ctx.FillMeta(&meta.base, 0, 64, 1);
  Ptr m = reinterpret_cast<Ptr>(&meta);
  EXPECT_EQ(Root_get_num_elements(m, ctx.root()), 1);
  EXPECT_TRUE(Root_is_active(m, ctx.root(), 0));
  Root_activate(m, ctx.root(), 0);
  EXPECT_EQ(Root_lookup_element(m, ctx.root(), 0), ctx.root());
}

}  // namespace
}  // namespace sparse_runtime
}  // namespace accelmem

#include "kernel_abi/kernel_abi.h"

#include <set>
#include <string>

#include "gc/device/gc_scratch.h"
#include "gtest/gtest.h"
#include "sparse_runtime/device/snode_pointer.h"
#include "sparse_runtime/snode_testing.h"

namespace accelmem {
namespace kernel_abi {
namespace {

// Taking the address of every listed entry point makes a declared function without a definition
// (a definition renamed or dropped in kernel_abi.cc) a link error of this test, so of the build.
struct Entry {
  const char* name;
  const void* address;
};
#define ACCELMEM_KERNEL_ABI_ENTRY(ret, name, params) {#name, reinterpret_cast<const void*>(&name)},
const Entry kEntries[] = {ACCELMEM_KERNEL_ENTRY_POINTS(ACCELMEM_KERNEL_ABI_ENTRY)};
#undef ACCELMEM_KERNEL_ABI_ENTRY

TEST(KernelAbiTest, EveryEntryPointIsDefinedOnceUnderItsOwnName) {
  std::set<std::string> names;
  std::set<const void*> addresses;
  for (const Entry& e : kEntries) {
    EXPECT_NE(e.address, nullptr) << e.name;
    EXPECT_EQ(std::string(e.name).rfind("accelmem_", 0), 0u) << e.name;
    EXPECT_TRUE(names.insert(e.name).second) << e.name << " listed twice";
    EXPECT_TRUE(addresses.insert(e.address).second) << e.name << " shares a definition";
  }
  EXPECT_EQ(names.size(), 27u) << "update this count with the list";
}

// The kinds' table generates the cell entries: accelmem_Kind_activate, _is_active and
// _lookup_element for every CELLS_CALLED row (bitmasked, pointer, dynamic), and the deactivate
// entry its column names; none for the inline kinds.
TEST(KernelAbiTest, KindTableGeneratesTheCellEntries) {
  std::set<std::string> names;
  for (const Entry& e : kEntries) names.insert(e.name);
  for (const char* kind : {"Bitmasked", "Pointer", "Dynamic"}) {
    for (const char* op : {"_activate", "_is_active", "_lookup_element", "_deactivate"}) {
      EXPECT_EQ(names.count(std::string("accelmem_") + kind + op), 1u) << kind << op;
    }
  }
  for (const char* kind : {"Root", "Dense", "Place"}) {
    EXPECT_EQ(names.count(std::string("accelmem_") + kind + "_activate"), 0u) << kind;
  }
}

TEST(KernelAbiTest, LayoutRecordMatchesTheHeader) {
  EXPECT_EQ(accelmem_abi_layout[kLayoutNodeCacheBytes], kNodeCacheBytes);
  EXPECT_EQ(accelmem_abi_layout[kLayoutNodeCacheAlign], kNodeCacheAlign);
  EXPECT_EQ(accelmem_abi_layout[kLayoutKernelContextBytes], sizeof(KernelContext));
  EXPECT_EQ(kNodeCacheAlign, 64u) << "a NodeCache is one cache line aligned";
}

// A pointer SNode driven only through the C entry points, then collected through them.
TEST(KernelAbiTest, PointerCellLivesAndIsCollectedThroughTheCAbi) {
  sparse_runtime::SNodeTestContext ctx;
  sparse_runtime::PointerMeta meta{};
  ctx.FillMeta(&meta.base, 1, 32, 8);
  sparse_runtime::NodeManager* nm = ctx.MakeAllocator(1, 32);
  sparse_runtime::Pointer_bind_cells(&meta, nm);
  alignas(8) u8 node[32] = {};

  EXPECT_EQ(accelmem_runtime_node_manager(ctx.rt(), 1), nm);
  u8* ambient = accelmem_Pointer_lookup_element(&meta, node, 5);
  EXPECT_FALSE(accelmem_Pointer_is_active(&meta, node, 5));
  accelmem_Pointer_activate(&meta, node, 5);
  ASSERT_TRUE(accelmem_Pointer_is_active(&meta, node, 5));
  u8* cell = accelmem_Pointer_lookup_element(&meta, node, 5);
  EXPECT_NE(cell, ambient);
  EXPECT_EQ(nm->num_in_use(), 1);

  const u64 origin = accelmem_Pointer_cells_origin(&meta);
  const u64 stride = accelmem_Pointer_cells_stride(&meta);
  u8* viewed = nullptr;
  EXPECT_TRUE(accelmem_Pointer_lookup_cell_view(&meta, node, 5, origin, stride, &viewed));
  EXPECT_EQ(viewed, cell);
  EXPECT_FALSE(accelmem_Pointer_lookup_cell_view(&meta, node, 6, origin, stride, &viewed));
  EXPECT_TRUE(accelmem_Pointer_activate_cell_view(&meta, node, 6, origin, stride, &viewed));
  EXPECT_EQ(viewed, accelmem_Pointer_lookup_element(&meta, node, 6));
  EXPECT_EQ(nm->num_in_use(), 2);

  EXPECT_TRUE(accelmem_Pointer_deactivate(&meta, node, 6));
  EXPECT_FALSE(accelmem_Pointer_deactivate(&meta, node, 6));
  alignas(64) u8 cache[kNodeCacheBytes];
  accelmem_Pointer_cache_init(&meta, cache);
  EXPECT_TRUE(accelmem_Pointer_deactivate_cached(&meta, node, 5, cache));
  accelmem_Pointer_cache_flush(cache);
  EXPECT_FALSE(accelmem_Pointer_is_active(&meta, node, 5));
  EXPECT_EQ(nm->num_in_use(), 0);
  EXPECT_EQ(nm->num_recycled(), 2);

  gc::GcScratch scratch{};
  ASSERT_TRUE(accelmem_gc_scratch_reserve(&scratch, nm, 1));
  ASSERT_TRUE(accelmem_gc_serial(nm, &scratch));
  EXPECT_EQ(nm->num_recycled(), 0);
  EXPECT_EQ(nm->num_free(), 2);
  EXPECT_EQ(ctx.error(), 0);
}

}  // namespace
}  // namespace kernel_abi
}  // namespace accelmem

#include "sparse_runtime/device/snode_bitmasked.h"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "sparse_runtime/snode_testing.h"

namespace accelmem {
namespace sparse_runtime {
namespace {

class SNodeBitmaskedTest : public ::testing::Test {
 protected:
  void Init(u64 element_size, i64 n) {
    ctx_.FillMeta(&meta_.base, 1, element_size, n);
    m_ = reinterpret_cast<Ptr>(&meta_);
  }
  SNodeTestContext ctx_;
  BitmaskedMeta meta_;
  Ptr m_ = nullptr;
};

// Bits start clear; activate sets exactly one bit; deactivate clears it.
TEST_F(SNodeBitmaskedTest, ActivateAndDeactivateOneBit) {
  Init(4, 70);
  Ptr node = ctx_.root();
  for (int i = 0; i < 70; ++i) EXPECT_FALSE(Bitmasked_is_active(m_, node, i));
  Bitmasked_activate(m_, node, 33);
  for (int i = 0; i < 70; ++i) EXPECT_EQ(Bitmasked_is_active(m_, node, i), i == 33) << i;
  EXPECT_FALSE(Bitmasked_deactivate(m_, node, 32));  // inactive: nothing to do
  EXPECT_TRUE(Bitmasked_deactivate(m_, node, 33));
  EXPECT_FALSE(Bitmasked_is_active(m_, node, 33));
  EXPECT_FALSE(Bitmasked_deactivate(m_, node, 33));
  EXPECT_EQ(Bitmasked_get_num_elements(m_, node), 70);
}

// Only a change of the active set marks the meta (the host's struct-for list cache reads it):
// activating an inactive cell and deactivating an active one, not the no-op forms.
TEST_F(SNodeBitmaskedTest, StructureChangesMarkTheMeta) {
  Init(4, 16);
  Ptr node = ctx_.root();
  EXPECT_EQ(meta_.base.structure_changed, 0u);
  Bitmasked_activate(m_, node, 3);
  EXPECT_EQ(meta_.base.structure_changed, 1u);
  meta_.base.structure_changed = 0;
  Bitmasked_activate(m_, node, 3);                  // already active
  EXPECT_FALSE(Bitmasked_deactivate(m_, node, 4));  // never active
  EXPECT_EQ(meta_.base.structure_changed, 0u);
  EXPECT_TRUE(Bitmasked_deactivate(m_, node, 3));
  EXPECT_EQ(meta_.base.structure_changed, 1u);
}

// The flags (one byte per cell) start at a 4-byte aligned offset even for 1-byte cells
// (upstream puts its mask at offset 3 for n = 3) and are padded to whole u32 words.
TEST_F(SNodeBitmaskedTest, FlagsAreBytesAtAnAlignedOffset) {
  EXPECT_EQ(Bitmasked_mask_offset(1, 3), 4u);
  EXPECT_EQ(Bitmasked_mask_offset(4, 3), 12u);
  EXPECT_EQ(Bitmasked_container_size(1, 3), 8u);
  EXPECT_EQ(Bitmasked_container_size(8, 33), 8u * 33 + 36);
  Init(1, 3);
  Bitmasked_activate(m_, ctx_.root(), 2);
  uint32_t word;
  std::memcpy(&word, ctx_.root() + 4, 4);
  EXPECT_EQ(word, 1u << 16);  // byte 2 of the flags
}

// Lookup is node + element_size * i (cells first).
TEST_F(SNodeBitmaskedTest, LookupIsStrided) {
  Init(16, 10);
  EXPECT_EQ(Bitmasked_lookup_element(m_, ctx_.root(), 7), ctx_.root() + 112);
}

// A deactivated cell reads 0 (upstream keeps stale data); neighbours keep theirs.
TEST_F(SNodeBitmaskedTest, DeactivatedCellReadsZero) {
  Init(8, 4);
  Ptr node = ctx_.root();
  for (int i = 0; i < 4; ++i) {
    Bitmasked_activate(m_, node, i);
    std::memset(Bitmasked_lookup_element(m_, node, i), 42, 8);
  }
  Bitmasked_deactivate(m_, node, 2);
  for (int b = 0; b < 8; ++b) EXPECT_EQ(Bitmasked_lookup_element(m_, node, 2)[b], 0);
  EXPECT_EQ(Bitmasked_lookup_element(m_, node, 1)[0], 42);
  EXPECT_EQ(Bitmasked_lookup_element(m_, node, 3)[7], 42);
  // Deactivating an inactive cell does not touch its bytes.
  std::memset(Bitmasked_lookup_element(m_, node, 2), 7, 8);
  Bitmasked_deactivate(m_, node, 2);
  EXPECT_EQ(Bitmasked_lookup_element(m_, node, 2)[0], 7);
}

// The inline forms over a compile-time meta (1-byte cells: the flag offset is rounded up to a
// word) set, test and clear the same flags as the entry points, and zero-fill on deactivation.
TEST_F(SNodeBitmaskedTest, InlineFormsMatchEntryPoints) {
  Init(1, 37);
  Ptr node = ctx_.root();
  const StaticMeta<37, 1> sm{m_};
  ASSERT_TRUE(sm.matches());
  EXPECT_EQ(Bitmasked_flag_of(sm, node, 33), node + 40 + 33);
  EXPECT_EQ(reinterpret_cast<Ptr>(Bitmasked_flag_word_of(sm, node, 33)), node + 40 + 32);
  Bitmasked_activate_inline(sm, node, 33);
  Bitmasked_activate_inline(sm, node, 33);
  Bitmasked_activate_inline(RuntimeMeta{m_}, node, 5);
  for (int i = 0; i < 37; ++i) {
    const bool on = i == 33 || i == 5;
    EXPECT_EQ(Bitmasked_is_active(m_, node, i), on) << i;
    EXPECT_EQ(Bitmasked_is_active_inline(sm, node, i), on) << i;
    EXPECT_EQ(Bitmasked_lookup_element_inline(sm, node, i), Bitmasked_lookup_element(m_, node, i));
  }
  *Bitmasked_lookup_element_inline(sm, node, 33) = 9;
  Bitmasked_deactivate_inline(sm, node, 33);
  EXPECT_FALSE(Bitmasked_is_active(m_, node, 33));
  EXPECT_TRUE(Bitmasked_is_active_inline(sm, node, 5));
  EXPECT_EQ(*Bitmasked_lookup_element(m_, node, 33), 0);
}

// Concurrent activation of different bits of one word loses none.
TEST_F(SNodeBitmaskedTest, ConcurrentActivationKeepsAllBits) {
  Init(4, 64);
  Ptr node = ctx_.root();
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      for (int i = t; i < 64; i += 2) Bitmasked_activate(m_, node, i);
    });
  }
  for (auto& th : threads) th.join();
  for (int i = 0; i < 64; ++i) EXPECT_TRUE(Bitmasked_is_active(m_, node, i)) << i;
}

// Two threads toggle different cells of the same u32 words (one thread the first byte of each
// word, the other the three others): neither thread ever sees one of its own cells in a state
// other than the one its last operation left (a deactivation's clear of its byte must not write
// back a neighbour's stale flag).
TEST_F(SNodeBitmaskedTest, ConcurrentTogglingKeepsNeighbourFlags) {
  Init(4, 64);
  Ptr node = ctx_.root();
  std::atomic<int> ready{0};
  std::atomic<int> wrong{0};
  auto churn = [&](bool first_byte) {
    ready.fetch_add(1);
    while (ready.load() < 2) {
    }
    for (int round = 0; round < 20000; ++round) {
      for (int i = 0; i < 64; ++i) {
        if (((i & 3) == 0) != first_byte) continue;
        Bitmasked_activate(m_, node, i);
        if (!Bitmasked_is_active(m_, node, i)) wrong.fetch_add(1);
        Bitmasked_deactivate(m_, node, i);
        if (Bitmasked_is_active(m_, node, i)) wrong.fetch_add(1);
      }
    }
  };
  std::thread a(churn, true);
  std::thread b(churn, false);
  a.join();
  b.join();
  EXPECT_EQ(wrong.load(), 0);
  for (int i = 0; i < 64; ++i) EXPECT_FALSE(Bitmasked_is_active(m_, node, i)) << i;
}

}  // namespace
}  // namespace sparse_runtime
}  // namespace accelmem

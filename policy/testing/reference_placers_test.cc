#include "policy/testing/reference_placers.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "policy/placement_checker.h"
#include "policy/testing/trace_generators.h"

namespace accelmem {
namespace policy_testing {
namespace {

using policy::PlacementBuffer;

PlacementBuffer B(std::string id, int64_t start, int64_t end, int64_t size) {
  return PlacementBuffer{std::move(id), start, end, size};
}

// Best fit takes the smallest gap that holds the buffer; first fit the lowest.
TEST(ReferencePlaceTest, BestFitAndFirstFitPickDifferentGaps) {
  // At step 5 the free gaps are [0,10) and [14,18); "late" (4 bytes) is placed last by size.
  const std::vector<PlacementBuffer> buffers = {B("big", 0, 6, 10), B("bar", 0, 10, 4),
                                                B("small", 0, 6, 4), B("bar2", 0, 10, 3),
                                                B("late", 6, 10, 3)};
  // By size: big@0, bar@10 (longer than small), small@14, bar2@18, late last.
  const std::vector<int64_t> best = ReferencePlace(buffers, ReferenceRule::kXlaSpatial);
  const std::vector<int64_t> first = ReferencePlace(buffers, ReferenceRule::kTfliteMicroFirstFit);
  EXPECT_EQ(best[0], 0);
  EXPECT_EQ(best[1], 10);
  EXPECT_EQ(best[2], 14);
  EXPECT_EQ(best[3], 18);
  // late (3 bytes) at steps 6..9: bar [10,14) and bar2 [18,21) are live; gaps [0,10) and
  // [14,18): best fit takes the 4-byte gap, first fit the lowest.
  EXPECT_EQ(best[4], 14);
  EXPECT_EQ(first[4], 0);
}

// TFLite's arena places buffers live over the whole trace first, whatever their size; XLA's
// spatial order places the larger buffer first.
TEST(ReferencePlaceTest, TfliteArenaPlacesWholeTraceBuffersFirst) {
  const std::vector<PlacementBuffer> buffers = {B("temp", 2, 4, 100), B("weight", 0, 8, 10),
                                                B("other", 0, 7, 50)};
  const std::vector<int64_t> tflite = ReferencePlace(buffers, ReferenceRule::kTfliteArena);
  EXPECT_EQ(tflite[1], 0);    // weight first
  EXPECT_EQ(tflite[0], 10);   // then temp (largest)
  EXPECT_EQ(tflite[2], 110);  // then other
  const std::vector<int64_t> xla = ReferencePlace(buffers, ReferenceRule::kXlaSpatial);
  EXPECT_EQ(xla[0], 0);
  EXPECT_EQ(xla[2], 100);
  EXPECT_EQ(xla[1], 150);
}

// Ties follow each rule's documented keys: XLA spatial breaks equal sizes by longer lifetime,
// then index; XLA temporal sorts by lifetime first; area by size * lifetime.
TEST(ReferencePlaceTest, TieBreaks) {
  const std::vector<PlacementBuffer> buffers = {B("short", 0, 2, 8), B("long", 0, 4, 8),
                                                B("wide", 1, 2, 12)};
  EXPECT_EQ(ReferencePlace(buffers, ReferenceRule::kXlaSpatial),
            (std::vector<int64_t>{20, 12, 0}));  // wide, long, short
  EXPECT_EQ(ReferencePlace(buffers, ReferenceRule::kXlaTemporal),
            (std::vector<int64_t>{8, 0, 16}));  // long, short, wide
  EXPECT_EQ(ReferencePlace(buffers, ReferenceRule::kArea),
            (std::vector<int64_t>{8, 0, 16}));  // long (32), short (16), wide (12)
  EXPECT_EQ(ReferencePlace(buffers, ReferenceRule::kStart),
            (std::vector<int64_t>{8, 0, 16}));  // long, short (start 0, size tie), wide
}

// Buffers that take no space get offset 0 and never move other buffers.
TEST(ReferencePlaceTest, ZeroSizeAndEmptyLifetimes) {
  const std::vector<PlacementBuffer> buffers = {B("a", 0, 4, 8), B("zero", 0, 4, 0),
                                                B("empty", 2, 2, 50), B("b", 1, 3, 8)};
  for (ReferenceRule rule : AllReferenceRules()) {
    const std::vector<int64_t> offsets = ReferencePlace(buffers, rule);
    EXPECT_EQ(offsets[1], 0) << ReferenceRuleName(rule);
    EXPECT_EQ(offsets[2], 0) << ReferenceRuleName(rule);
    EXPECT_EQ(policy::PlacementHeight(buffers, offsets), 16) << ReferenceRuleName(rule);
  }
}

// Every rule gives valid placements on every generated family, and the two independent checks
// (the O(n^2) FindOverlap and the sweep of policy::CheckPlacement) agree.
TEST(ReferencePlaceTest, ValidOnGeneratedTraces) {
  for (const TraceFamily& family : TraceFamilies()) {
    for (uint64_t seed = 1; seed <= 5; ++seed) {
      const std::vector<PlacementBuffer> buffers = family.generate(seed, 150);
      for (ReferenceRule rule : AllReferenceRules()) {
        const std::vector<int64_t> offsets = ReferencePlace(buffers, rule);
        EXPECT_EQ(FindOverlap(buffers, offsets), "")
            << family.name << " " << ReferenceRuleName(rule);
        EXPECT_TRUE(policy::CheckPlacement(buffers, offsets).ok())
            << family.name << " " << ReferenceRuleName(rule);
        EXPECT_GE(policy::PlacementHeight(buffers, offsets), policy::ComputeLoad(buffers));
      }
      EXPECT_EQ(BestReference(buffers).height,
                policy::PlacementHeight(buffers, BestReference(buffers).offsets));
    }
  }
}

// FindOverlap reports the first pair that shares a step and an address.
TEST(FindOverlapTest, ReportsOverlappingPair) {
  const std::vector<PlacementBuffer> buffers = {B("a", 0, 4, 8), B("b", 4, 6, 8), B("c", 3, 5, 8)};
  EXPECT_EQ(FindOverlap(buffers, {0, 0, 8}), "");
  EXPECT_EQ(FindOverlap(buffers, {0, 0, 4}), "0,2");
  EXPECT_EQ(FindOverlap(buffers, {0, 0, -1}), "2,2");
}

}  // namespace
}  // namespace policy_testing
}  // namespace accelmem

#include "tools/memory_map_svg.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

namespace accelmem {
namespace tools {
namespace {

int Count(const std::string& hay, const std::string& needle) {
  int n = 0;
  for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

// One panel per space, one labelled rectangle per buffer, a capacity line where one is known.
TEST(MemoryMapSvgTest, PanelsBuffersCapacity) {
  passes::MemoryPlanReport r;
  r.function = "f<1>";
  r.num_statements = 10;
  r.spaces = {{ir::MemorySpace::kVec, 4096, 2048, 8192}, {ir::MemorySpace::kAcc, 512, 512, 0}};
  passes::PlannedBuffer a;
  a.name = "a";
  a.space = ir::MemorySpace::kVec;
  a.first_stmt = 1;
  a.last_stmt = 3;
  a.start = 4;
  a.end = 10;
  a.addr = 0;
  a.size = 2048;
  passes::PlannedBuffer b = a;
  b.name = "b";
  b.addr = 2048;
  passes::PlannedBuffer c = a;
  c.name = "c";
  c.space = ir::MemorySpace::kAcc;
  c.size = 512;
  r.buffers = {a, b, c};
  const std::string svg = RenderMemoryMapSvg(r);
  EXPECT_TRUE(absl::StartsWith(svg, "<svg "));
  EXPECT_TRUE(absl::EndsWith(svg, "</svg>\n"));
  EXPECT_EQ(Count(svg, "class=\"space\""), 2);
  EXPECT_EQ(Count(svg, "class=\"buffer"), 3);
  EXPECT_EQ(Count(svg, "class=\"capacity\""), 1);     // Acc has no known capacity
  EXPECT_TRUE(absl::StrContains(svg, "f&lt;1&gt;"));  // names are escaped
  EXPECT_TRUE(absl::StrContains(svg, ">b [2048, 4096) 2048 bytes, statements 1..3<"));
  // x runs over statements: [4/3, 10/3) of 10 statements in a 640-pixel panel from x = 80.
  EXPECT_TRUE(absl::StrContains(svg, "x=\"165.3\" y=")) << svg;
}

// The peak of each space is marked (a line at its statement) and the five largest buffers live
// there are drawn apart; a buffer live elsewhere is not.
TEST(MemoryMapSvgTest, MarksThePeakAndItsLargestBuffers) {
  passes::MemoryPlanReport r;
  r.function = "f";
  r.num_statements = 20;
  r.spaces = {{ir::MemorySpace::kVec, 65536, 7168, 0}};
  for (int i = 0; i < 7; ++i) {
    passes::PlannedBuffer b;
    b.name = "big" + std::to_string(i);
    b.space = ir::MemorySpace::kVec;
    b.start = 30;
    b.end = 40;
    b.addr = 1024 * i;
    b.size = 1024 - 32 * i;  // big0 is the largest, big6 the smallest
    r.buffers.push_back(b);
  }
  passes::PlannedBuffer early;
  early.name = "early";
  early.space = ir::MemorySpace::kVec;
  early.start = 3;
  early.end = 12;
  early.addr = 0;
  early.size = 4096;
  r.buffers.push_back(early);
  const std::string svg = RenderMemoryMapSvg(r);
  EXPECT_EQ(Count(svg, "class=\"peak\""), 1);
  EXPECT_TRUE(absl::StrContains(svg, "peak: 6496 bytes live at statement 10")) << svg;
  EXPECT_EQ(Count(svg, "class=\"buffer peak-buffer\""), 5);
  EXPECT_EQ(Count(svg, "class=\"buffer\""), 3);  // big5, big6 and early
  for (const char* marked : {"big0 [", "big4 ["}) {
    const size_t at = svg.find(marked);
    ASSERT_NE(at, std::string::npos) << marked;
    const size_t rect = svg.rfind("<rect class=", at);
    ASSERT_NE(rect, std::string::npos) << marked;
    EXPECT_EQ(svg.compare(rect, 35, "<rect class=\"buffer peak-buffer\" x="), 0) << marked;
  }
}

double Attr(const std::string& svg, size_t at, const std::string& name) {
  const size_t p = svg.find(" " + name + "=\"", at);
  return p == std::string::npos ? -1 : std::stod(svg.substr(p + name.size() + 3));
}

// A kernel using 256 bytes of a 188,416-byte space: the address axis is scaled to the high-water
// mark, so the tile is drawn at a readable height, and the capacity is written off the scale.
// Both axes are labelled, the legend explains the colours, the peak carries its bytes.
TEST(MemoryMapSvgTest, SmallKernelIsScaledToItsHighWaterMark) {
  passes::MemoryPlanReport r;
  r.function = "small";
  r.num_statements = 4;
  r.spaces = {{ir::MemorySpace::kVec, 256, 256, 188416}};
  passes::PlannedBuffer t;
  t.name = "t";
  t.space = ir::MemorySpace::kVec;
  t.first_stmt = 0;
  t.last_stmt = 2;
  t.start = 1;
  t.end = 7;
  t.addr = 0;
  t.size = 256;
  r.buffers = {t};
  const std::string svg = RenderMemoryMapSvg(r);
  const size_t rect = svg.find("<rect class=\"buffer");
  ASSERT_NE(rect, std::string::npos) << svg;
  EXPECT_GE(Attr(svg, rect, "height"), 200.0) << svg;  // 256 of 300 bytes: 205 of 240 px
  EXPECT_TRUE(absl::StrContains(svg, "capacity off this scale: 0.1 % used")) << svg;
  EXPECT_EQ(Count(svg, "class=\"legend\""), 1);
  EXPECT_TRUE(absl::StrContains(svg, ">statement</text>")) << svg;
  EXPECT_EQ(Count(svg, "class=\"stmt-tick\""), 5);  // statements 0..4
  EXPECT_TRUE(absl::StrContains(svg, ">peak 256 bytes at statement 0</text>")) << svg;
}

// Where the capacity is close above the high-water mark it joins the scale as a dashed line, and
// the address ticks are quarters of a round top.
TEST(MemoryMapSvgTest, NearCapacityIsOnTheScale) {
  passes::MemoryPlanReport r;
  r.function = "f";
  r.num_statements = 2;
  r.spaces = {{ir::MemorySpace::kVec, 7000, 7000, 7900}};
  passes::PlannedBuffer b;
  b.name = "b";
  b.space = ir::MemorySpace::kVec;
  b.start = 0;
  b.end = 6;
  b.size = 7000;
  r.buffers = {b};
  const std::string svg = RenderMemoryMapSvg(r);
  EXPECT_TRUE(absl::StrContains(svg, "<line class=\"capacity\"")) << svg;
  EXPECT_FALSE(absl::StrContains(svg, "off this scale"));  // and no break mark
  for (const char* tick :
       {">0</text>", ">2000</text>", ">4000</text>", ">6000</text>", ">8000</text>"}) {
    EXPECT_TRUE(absl::StrContains(svg, tick)) << tick << "\n" << svg;
  }
}

// A pipelined loop's slotted MemRef is one block (verify_memory_plan merges the values rotating
// through it, PlannedBuffer::slots), drawn with its stages: a dashed line between each two slots.
TEST(MemoryMapSvgTest, SlotsOfAPipelinedLoopAreOneBlockWithItsStages) {
  passes::MemoryPlanReport r;
  r.function = "f";
  r.num_statements = 8;
  r.spaces = {{ir::MemorySpace::kVec, 128, 128, 0}};
  passes::PlannedBuffer block;
  block.name = "a (slots of mem_vec_0)";
  block.space = ir::MemorySpace::kVec;
  block.start = 6;
  block.end = 17;
  block.first_stmt = 2;
  block.last_stmt = 5;
  block.size = 96;
  block.slots = 3;
  passes::PlannedBuffer c = block;
  c.name = "c";
  c.start = 18;
  c.end = 22;
  c.addr = 96;
  c.size = 32;
  c.slots = 0;
  r.buffers = {block, c};
  const std::string svg = RenderMemoryMapSvg(r);
  EXPECT_EQ(Count(svg, "class=\"slot\""), 2) << svg;
  EXPECT_EQ(Count(svg, "class=\"buffer"), 2) << svg;
  EXPECT_NE(svg.find("a (slots of mem_vec_0): slot 2 of 3 (stage 2 of the pipelined loop)"),
            std::string::npos)
      << svg;
}

}  // namespace
}  // namespace tools
}  // namespace accelmem

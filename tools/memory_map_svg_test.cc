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
  EXPECT_EQ(Count(svg, "class=\"buffer\""), 3);
  EXPECT_EQ(Count(svg, "class=\"capacity\""), 1);     // Acc has no known capacity
  EXPECT_TRUE(absl::StrContains(svg, "f&lt;1&gt;"));  // names are escaped
  EXPECT_TRUE(absl::StrContains(svg, ">b [2048, 4096) statements 1..3<"));
  // x runs over statements: [4/3, 10/3) of 10 statements in a 640-pixel panel from x = 80.
  EXPECT_TRUE(absl::StrContains(svg, "x=\"165.3\" y=")) << svg;
}

}  // namespace
}  // namespace tools
}  // namespace accelmem

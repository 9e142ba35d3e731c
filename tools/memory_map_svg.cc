#include "tools/memory_map_svg.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace accelmem {
namespace tools {
namespace {

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace

std::string RenderMemoryMapSvg(const passes::MemoryPlanReport& report) {
  constexpr double kPanelW = 640, kPanelH = 240, kLeft = 80, kTop = 40, kGap = 60;
  const size_t panels = std::max<size_t>(report.spaces.size(), 1);
  const double width = kLeft + kPanelW + 20;
  const double height = kTop + panels * (kPanelH + kGap);
  std::string svg = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
      "font-family=\"monospace\" font-size=\"10\">\n",
      width, height);
  absl::StrAppend(&svg, "<title>memory map of ", Escape(report.function), "</title>\n");
  absl::StrAppend(&svg, "<text x=\"", kLeft, "\" y=\"20\" font-size=\"14\">function ",
                  Escape(report.function), "</text>\n");
  const double steps = std::max<int64_t>(report.num_statements, 1);
  for (size_t p = 0; p < report.spaces.size(); ++p) {
    const passes::SpaceUsage& u = report.spaces[p];
    const double y0 = kTop + p * (kPanelH + kGap);
    const double top = std::max<int64_t>({u.high_water, u.capacity, 1});
    auto ypos = [&](int64_t addr) { return y0 + kPanelH - kPanelH * addr / top; };
    auto xpos = [&](double stmt) { return kLeft + kPanelW * stmt / steps; };
    absl::StrAppend(&svg, "<g class=\"space\" id=\"", ir::MemorySpaceName(u.space), "\">\n");
    absl::StrAppend(&svg,
                    absl::StrFormat("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                                    "fill=\"none\" stroke=\"black\"/>\n",
                                    kLeft, y0, kPanelW, kPanelH));
    absl::StrAppend(
        &svg, absl::StrFormat("<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\">%s: high-water %d "
                              "bytes, LOAD %d bytes%s</text>\n",
                              kLeft, y0 - 6, ir::MemorySpaceName(u.space), u.high_water, u.load,
                              u.capacity > 0 ? absl::StrCat(", capacity ", u.capacity) : ""));
    absl::StrAppend(&svg, absl::StrFormat("<text x=\"4\" y=\"%.1f\">0</text>\n", y0 + kPanelH));
    absl::StrAppend(&svg, absl::StrFormat("<text x=\"4\" y=\"%.1f\">%.0f</text>\n", y0 + 10, top));
    for (const passes::PlannedBuffer& b : report.buffers) {
      if (b.space != u.space) continue;
      // Lifetimes are in thirds of a statement (reads at 3t, writes at 3t+1), so a buffer that
      // takes the place of one dying in the same statement abuts it instead of overlapping.
      const double x = xpos(b.start / 3.0);
      const double w = std::max(1.0, xpos(b.end / 3.0) - x);
      const double y = ypos(b.addr + b.size);
      const double h = std::max(1.0, ypos(b.addr) - y);
      absl::StrAppend(
          &svg, absl::StrFormat("<rect class=\"buffer\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                                "height=\"%.1f\" fill=\"#9ecae1\" stroke=\"#3182bd\">"
                                "<title>%s [%d, %d) statements %d..%d</title></rect>\n",
                                x, y, w, h, Escape(b.name), b.addr, b.addr + b.size, b.first_stmt,
                                b.last_stmt));
      absl::StrAppend(&svg, absl::StrFormat("<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", x + 2,
                                            y + std::min(h, 12.0) - 2, Escape(b.name)));
    }
    if (u.capacity > 0) {
      absl::StrAppend(
          &svg, absl::StrFormat("<line class=\"capacity\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                                "y2=\"%.1f\" stroke=\"red\" stroke-dasharray=\"6,3\"/>\n",
                                kLeft, ypos(u.capacity), kLeft + kPanelW, ypos(u.capacity)));
    }
    absl::StrAppend(&svg, "</g>\n");
  }
  absl::StrAppend(&svg, "</svg>\n");
  return svg;
}

}  // namespace tools
}  // namespace accelmem

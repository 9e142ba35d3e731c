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

// The first time at which the bytes live in `space` peak, and the five largest buffers live
// then (indices into report.buffers).
struct Peak {
  int64_t time = -1;
  int64_t bytes = 0;
  std::vector<size_t> largest;
};

Peak FindPeak(const passes::MemoryPlanReport& report, ir::MemorySpace space) {
  std::vector<std::pair<int64_t, int64_t>> events;  // ends before starts at equal times
  for (const passes::PlannedBuffer& b : report.buffers) {
    if (b.space != space) continue;
    events.push_back({b.start, b.size});
    events.push_back({b.end, -b.size});
  }
  std::sort(events.begin(), events.end());
  Peak peak;
  int64_t live = 0;
  for (const auto& [t, delta] : events) {
    live += delta;
    if (live > peak.bytes) {
      peak.bytes = live;
      peak.time = t;
    }
  }
  for (size_t i = 0; i < report.buffers.size(); ++i) {
    const passes::PlannedBuffer& b = report.buffers[i];
    if (b.space == space && b.start <= peak.time && peak.time < b.end) peak.largest.push_back(i);
  }
  std::stable_sort(peak.largest.begin(), peak.largest.end(), [&](size_t x, size_t y) {
    return report.buffers[x].size > report.buffers[y].size;
  });
  if (peak.largest.size() > 5) peak.largest.resize(5);
  return peak;
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
    const Peak peak = FindPeak(report, u.space);
    for (size_t bi = 0; bi < report.buffers.size(); ++bi) {
      const passes::PlannedBuffer& b = report.buffers[bi];
      if (b.space != u.space) continue;
      // The largest buffers live at the peak are drawn in orange: what to shrink first.
      const bool at_peak =
          std::find(peak.largest.begin(), peak.largest.end(), bi) != peak.largest.end();
      // Lifetimes are in thirds of a statement (reads at 3t, writes at 3t+1), so a buffer that
      // takes the place of one dying in the same statement abuts it instead of overlapping.
      const double x = xpos(b.start / 3.0);
      const double w = std::max(1.0, xpos(b.end / 3.0) - x);
      const double y = ypos(b.addr + b.size);
      const double h = std::max(1.0, ypos(b.addr) - y);
      absl::StrAppend(
          &svg,
          absl::StrFormat("<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                          "height=\"%.1f\" fill=\"%s\" stroke=\"%s\">"
                          "<title>%s [%d, %d) statements %d..%d</title></rect>\n",
                          at_peak ? "buffer peak-buffer" : "buffer", x, y, w, h,
                          at_peak ? "#fdae6b" : "#9ecae1", at_peak ? "#e6550d" : "#3182bd",
                          Escape(b.name), b.addr, b.addr + b.size, b.first_stmt, b.last_stmt));
      absl::StrAppend(&svg, absl::StrFormat("<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", x + 2,
                                            y + std::min(h, 12.0) - 2, Escape(b.name)));
    }
    if (peak.time >= 0) {
      const double px = xpos(peak.time / 3.0);
      absl::StrAppend(&svg,
                      absl::StrFormat("<line class=\"peak\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                                      "y2=\"%.1f\" stroke=\"#e6550d\" stroke-width=\"2\">"
                                      "<title>peak: %d bytes live at statement %d</title></line>\n",
                                      px, y0, px, y0 + kPanelH, peak.bytes, peak.time / 3));
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

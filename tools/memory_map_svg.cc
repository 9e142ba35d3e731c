#include "tools/memory_map_svg.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
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

// The smallest round number (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 times a power of ten) that is
// >= x (>= 1): the top of an address axis close above the high-water mark.
int64_t NiceCeil(int64_t x) {
  if (x <= 1) return 1;
  for (int64_t p = 1; p <= std::numeric_limits<int64_t>::max() / 1000; p *= 10) {
    for (int64_t m : {10, 12, 15, 20, 25, 30, 40, 50, 60, 80, 100}) {
      const int64_t v = (m * p + 9) / 10;
      if (v >= x) return v;
    }
  }
  return x;
}

// Geometry of one space's panel: x over statements, y over addresses up to `top`.
struct Panel {
  static constexpr double kLeft = 80, kWidth = 640, kHeight = 240;
  double y0 = 0;
  double steps = 1;
  int64_t top = 1;
  double X(double stmt) const { return kLeft + kWidth * stmt / steps; }
  double Y(int64_t addr) const { return y0 + kHeight - kHeight * static_cast<double>(addr) / top; }
};

// The legend under the title: what each colour and line means.
void AppendLegend(double y, std::string* svg) {
  struct Item {
    const char* fill;    // a swatch's fill; null for a line
    const char* stroke;  // its outline, or the line's colour
    bool dashed;
    const char* text;
  };
  const Item items[] = {
      {"#9ecae1", "#3182bd", false, "buffer (hover: name, bytes, statements)"},
      {"#fdae6b", "#e6550d", false, "largest live at the peak"},
      {nullptr, "#e6550d", false, "peak"},
      {nullptr, "red", true, "capacity"},
  };
  absl::StrAppend(svg, "<g class=\"legend\">\n");
  double x = Panel::kLeft;
  for (const Item& item : items) {
    if (item.fill != nullptr) {
      absl::StrAppend(svg, absl::StrFormat("<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"10\" "
                                           "fill=\"%s\" stroke=\"%s\"/>",
                                           x, y, item.fill, item.stroke));
    } else {
      absl::StrAppend(svg, absl::StrFormat("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                                           "stroke=\"%s\" stroke-width=\"2\"%s/>",
                                           x, y + 5, x + 14, y + 5, item.stroke,
                                           item.dashed ? " stroke-dasharray=\"6,3\"" : ""));
    }
    absl::StrAppend(
        svg, absl::StrFormat("<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", x + 18, y + 9, item.text));
    x += 24 + 6.2 * std::string(item.text).size();
  }
  absl::StrAppend(svg, "</g>\n");
}

// Ticks and labels of both axes: addresses at quarters of the scale, statements along time.
void AppendAxes(const Panel& p, int64_t num_statements, std::string* svg) {
  for (int q = 0; q <= 4; ++q) {
    const int64_t addr = p.top / 4 * q + (q == 4 ? p.top % 4 : 0);
    const double y = p.Y(addr);
    absl::StrAppend(svg, absl::StrFormat("<line class=\"tick\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                                         "y2=\"%.1f\" stroke=\"#bbbbbb\"/>\n",
                                         Panel::kLeft - 4, y, Panel::kLeft + Panel::kWidth, y));
    absl::StrAppend(svg,
                    absl::StrFormat("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%d</text>\n",
                                    Panel::kLeft - 6, y + 3, addr));
  }
  const int64_t n = std::max<int64_t>(num_statements, 1);
  const int64_t step = (n + 15) / 16;  // at most 17 labels
  const double base = p.y0 + Panel::kHeight;
  for (int64_t s = 0; s <= n; s += step) {
    absl::StrAppend(svg, absl::StrFormat("<line class=\"stmt-tick\" x1=\"%.1f\" y1=\"%.1f\" "
                                         "x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n",
                                         p.X(s), base, p.X(s), base + 4));
    absl::StrAppend(svg, absl::StrFormat("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%d"
                                         "</text>\n",
                                         p.X(s), base + 14, s));
  }
  absl::StrAppend(svg, absl::StrFormat("<text class=\"axis\" x=\"%.1f\" y=\"%.1f\" "
                                       "text-anchor=\"middle\">statement</text>\n",
                                       Panel::kLeft + Panel::kWidth / 2, base + 28));
  absl::StrAppend(svg, absl::StrFormat("<text class=\"axis\" x=\"12\" y=\"%.1f\" "
                                       "transform=\"rotate(-90 12 %.1f)\" text-anchor=\"middle\">"
                                       "address (bytes)</text>\n",
                                       p.y0 + Panel::kHeight / 2, p.y0 + Panel::kHeight / 2));
}

// The capacity: a dashed line where it is on the scale; above a scale of the high-water mark, a
// break mark at the top of the address axis and the capacity written beside it.
void AppendCapacity(const Panel& p, const passes::SpaceUsage& u, std::string* svg) {
  if (u.capacity <= 0) return;
  if (u.capacity <= p.top) {
    absl::StrAppend(svg,
                    absl::StrFormat("<line class=\"capacity\" x1=\"%.1f\" y1=\"%.1f\" "
                                    "x2=\"%.1f\" y2=\"%.1f\" stroke=\"red\" "
                                    "stroke-dasharray=\"6,3\"><title>capacity %d bytes"
                                    "</title></line>\n",
                                    Panel::kLeft, p.Y(u.capacity), Panel::kLeft + Panel::kWidth,
                                    p.Y(u.capacity), u.capacity));
    return;
  }
  const double x = Panel::kLeft, y = p.y0;
  absl::StrAppend(
      svg,
      absl::StrFormat("<g class=\"capacity\"><path d=\"M%.1f %.1f l-6 4 l12 4 l-6 4\" "
                      "fill=\"white\" stroke=\"red\" stroke-width=\"2\"/><text x=\"%.1f\" "
                      "y=\"%.1f\" fill=\"red\" text-anchor=\"end\">capacity off this scale: "
                      "%.1f %% used</text><title>capacity %d bytes; the address axis is scaled "
                      "to the high-water mark</title></g>\n",
                      x, y + 2, Panel::kLeft + Panel::kWidth, y - 8,
                      100.0 * static_cast<double>(u.high_water) / u.capacity, u.capacity));
}

}  // namespace

std::string RenderMemoryMapSvg(const passes::MemoryPlanReport& report) {
  constexpr double kTop = 70, kGap = 80;
  const size_t panels = std::max<size_t>(report.spaces.size(), 1);
  const double width = Panel::kLeft + Panel::kWidth + 20;
  const double height = kTop + panels * (Panel::kHeight + kGap);
  std::string svg = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
      "font-family=\"monospace\" font-size=\"10\">\n<rect width=\"100%%\" height=\"100%%\" "
      "fill=\"white\"/>\n",
      width, height);
  absl::StrAppend(&svg, "<title>memory map of ", Escape(report.function), "</title>\n");
  absl::StrAppend(&svg, "<text x=\"", Panel::kLeft, "\" y=\"20\" font-size=\"14\">function ",
                  Escape(report.function), "</text>\n");
  AppendLegend(30, &svg);
  for (size_t i = 0; i < report.spaces.size(); ++i) {
    const passes::SpaceUsage& u = report.spaces[i];
    Panel p;
    p.y0 = kTop + i * (Panel::kHeight + kGap);
    p.steps = std::max<int64_t>(report.num_statements, 1);
    // Scaled to the high-water mark, so a kernel using a few hundred bytes of a large space still
    // shows its tiles; the capacity joins the scale only when it is close above.
    p.top = NiceCeil(std::max<int64_t>(u.high_water, 1));
    if (u.capacity > 0 && u.capacity <= p.top + p.top / 2) p.top = NiceCeil(u.capacity);
    absl::StrAppend(&svg, "<g class=\"space\" id=\"", ir::MemorySpaceName(u.space), "\">\n");
    absl::StrAppend(
        &svg,
        absl::StrFormat("<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\">%s: high-water %d "
                        "bytes, LOAD %d bytes%s</text>\n",
                        Panel::kLeft, p.y0 - 8, ir::MemorySpaceName(u.space), u.high_water, u.load,
                        u.capacity > 0 ? absl::StrCat(", capacity ", u.capacity) : ""));
    AppendAxes(p, report.num_statements, &svg);
    absl::StrAppend(&svg, absl::StrFormat("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                                          "height=\"%.1f\" fill=\"none\" stroke=\"black\"/>\n",
                                          Panel::kLeft, p.y0, Panel::kWidth, Panel::kHeight));
    const Peak peak = FindPeak(report, u.space);
    for (size_t bi = 0; bi < report.buffers.size(); ++bi) {
      const passes::PlannedBuffer& b = report.buffers[bi];
      if (b.space != u.space) continue;
      // The largest buffers live at the peak are drawn in orange: what to shrink first.
      const bool at_peak =
          std::find(peak.largest.begin(), peak.largest.end(), bi) != peak.largest.end();
      // Lifetimes are in thirds of a statement (reads at 3t, writes at 3t+1), so a buffer that
      // takes the place of one dying in the same statement abuts it instead of overlapping.
      const double x = p.X(b.start / 3.0);
      const double w = std::max(1.0, p.X(b.end / 3.0) - x);
      const double y = p.Y(b.addr + b.size);
      const double h = std::max(1.0, p.Y(b.addr) - y);
      absl::StrAppend(
          &svg, absl::StrFormat("<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                                "height=\"%.1f\" fill=\"%s\" stroke=\"%s\">"
                                "<title>%s [%d, %d) %d bytes, statements %d..%d</title></rect>\n",
                                at_peak ? "buffer peak-buffer" : "buffer", x, y, w, h,
                                at_peak ? "#fdae6b" : "#9ecae1", at_peak ? "#e6550d" : "#3182bd",
                                Escape(b.name), b.addr, b.addr + b.size, b.size, b.first_stmt,
                                b.last_stmt));
      // The slots of a pipelined loop's block, one per stage, split by dashed lines.
      for (int64_t k = 1; k < b.slots; ++k) {
        const double sy = p.Y(b.addr + k * (b.size / b.slots));
        absl::StrAppend(&svg, absl::StrFormat("<line class=\"slot\" x1=\"%.1f\" y1=\"%.1f\" "
                                              "x2=\"%.1f\" y2=\"%.1f\" stroke=\"#3182bd\" "
                                              "stroke-dasharray=\"4,3\"><title>%s: slot %d of %d "
                                              "(stage %d of the pipelined loop)</title></line>\n",
                                              x, sy, x + w, sy, Escape(b.name), k, b.slots, k));
      }
      if (h >= 8) {
        absl::StrAppend(&svg, absl::StrFormat("<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", x + 2,
                                              y + std::min(h, 12.0) - 2, Escape(b.name)));
      }
    }
    if (peak.time >= 0) {
      const double px = p.X(peak.time / 3.0);
      absl::StrAppend(
          &svg, absl::StrFormat("<line class=\"peak\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                                "y2=\"%.1f\" stroke=\"#e6550d\" stroke-width=\"2\">"
                                "<title>peak: %d bytes live at statement %d</title></line>\n",
                                px, p.y0, px, p.y0 + Panel::kHeight, peak.bytes, peak.time / 3));
      // The label sits right of the line unless that runs off the panel.
      const bool left = px > Panel::kLeft + Panel::kWidth - 200;
      absl::StrAppend(&svg, absl::StrFormat("<text class=\"peak-label\" x=\"%.1f\" y=\"%.1f\" "
                                            "fill=\"#e6550d\" text-anchor=\"%s\">peak %d bytes at "
                                            "statement %d</text>\n",
                                            left ? px - 4 : px + 4, p.y0 + 12,
                                            left ? "end" : "start", peak.bytes, peak.time / 3));
    }
    AppendCapacity(p, u, &svg);
    absl::StrAppend(&svg, "</g>\n");
  }
  absl::StrAppend(&svg, "</svg>\n");
  return svg;
}

}  // namespace tools
}  // namespace accelmem

#pragma once
// Inline SVG plots, written as text: no script, no external resource. Every plotted point is
// one element of class "pt" inside a <g class="series" data-series="..."> group, with a
// <title> child that browsers show on hover (and screen readers read). Colours come from the
// colour-blind-safe palette and each series also differs by marker shape and dash pattern, so
// no information is carried by colour alone.
#include <optional>
#include <string>
#include <vector>

namespace fabscope::report {

struct PlotPoint {
  double x = 0;  // data units (bytes on a byte axis)
  double y = 0;
  std::string title;  // hover text
};

struct PlotSeries {
  std::string label;  // legend text and data-series attribute
  int colour = 0;     // palette index
  int marker = 0;     // 0 circle, 1 square, 2 triangle, 3 diamond
  bool dashed = false;
  std::vector<PlotPoint> points;
  bool markers_only = false;  // no line between points (values of separate sizes, not a curve)
};

struct RefLine {  // a horizontal reference line (a theoretical limit)
  double y = 0;
  std::string label;  // "NVLink limit 450 GB/s"
  int colour = 6;
};

struct LineChart {
  std::string id;            // element id of the <svg>
  std::string title;         // <title> of the svg (accessible name)
  std::string x_label, y_label;
  bool x_bytes_log2 = true;  // x: bytes on a log2 axis; else linear
  bool y_log10 = false;      // y: log10 axis (times); else linear
  bool y_from_zero = true;   // linear y starts at 0; false: the data's range (ratios around 1)
  std::vector<PlotSeries> series;
  std::vector<RefLine> ref_lines;
};

// The <svg> element (viewBox 760x400, scales to the page width).
std::string render_line_chart(const LineChart& c);
// The legend as an HTML list, matching markers and dashes of the chart.
std::string render_legend(const LineChart& c);

// "Nice" axis ticks covering [lo, hi] with about `target` steps (1, 2, 5 x 10^k).
std::vector<double> nice_ticks(double lo, double hi, int target);

}  // namespace fabscope::report

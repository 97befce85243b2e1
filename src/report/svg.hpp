#pragma once
// Inline SVG plots, written as text: no script, no external resource. Every plotted point is
// one element of class "pt" inside a <g class="series" data-series="..."> group, with a
// <title> child that browsers show on hover (and screen readers read). Colours come from the
// colour-blind-safe palette and each series also differs by marker shape and dash pattern, so
// no information is carried by colour alone.
#include <optional>
#include <string>
#include <utility>
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
  std::string runs;   // the runs it belongs to (data-runs); "" for a line of the axis itself
  std::optional<std::pair<double, double>> x_span;  // x data range it is drawn over; none: the whole axis
};

// One run's hardware limit (the path's busbw limit, the port's rate), to be drawn on an axis that
// may be shared with runs on other hardware.
struct RunLimit {
  std::string run;    // the run's label
  int colour = 0;     // the run's palette index
  double value = 0;
  std::string label;  // "NVLink limit 450 GB/s (18 links x 25 GB/s)"
  std::optional<std::pair<double, double>> x_span;  // the sizes the run measured (x data units)
};

// The limit lines of an axis holding `runs_on_axis` runs: a limit belongs to its runs, so when
// every run has the same limit it is one black line ("..., every run" when there are several);
// otherwise each limit is a line of its own, named after the runs that have it ("h200x2: NVLink
// limit 450 GB/s"), in their colour when it is one run's and drawn over the sizes they measured,
// and a run without a known limit has none.
std::vector<RefLine> limit_lines(const std::vector<RunLimit>& limits, std::size_t runs_on_axis);

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

// "Nice" axis ticks with about `target` steps of 1, 2 or 5 x 10^k: the first at or below lo, the last
// at or above hi, each a whole multiple of the step.
std::vector<double> nice_ticks(double lo, double hi, int target);

}  // namespace fabscope::report

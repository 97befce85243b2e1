// The line chart places only what it can: a value that is not a finite number, or one so large
// that the span of the axis overflows, never writes `inf` or `nan` into the SVG.
#include "report/svg.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <string>

namespace fabscope::report {

TEST(LineChart, ExtremeAndNonFiniteValuesNeverReachTheSvg) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  for (bool log_y : {false, true})
    for (bool from_zero : {false, true}) {
      LineChart c;
      c.id = "chart";
      c.title = "busbw";
      c.y_log10 = log_y;
      c.y_from_zero = from_zero;
      PlotSeries s;
      s.label = "run";
      s.points = {{8, 10, "a"}, {16, -1e308, "b"}, {32, 1e308, "c"}, {64, nan, "d"}, {0, 5, "e"}, {128, inf, "f"}};
      c.series.push_back(s);
      c.ref_lines.push_back({-inf, "limit", 6});
      const std::string svg = render_line_chart(c);
      EXPECT_EQ(svg.find("inf"), std::string::npos) << "log_y " << log_y << " from_zero " << from_zero;
      EXPECT_EQ(svg.find("nan"), std::string::npos) << "log_y " << log_y << " from_zero " << from_zero;
      EXPECT_NE(svg.find("points=\""), std::string::npos);  // the placeable points are drawn
    }
}

}  // namespace fabscope::report

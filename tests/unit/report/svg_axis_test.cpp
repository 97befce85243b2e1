// The line chart's axes: y ticks in steps of 1, 2 or 5 x 10^k that end at or above the highest
// point, every label written with the same decimals, the last size label inside the picture, and
// a run's limit line drawn for that run only.
#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <string>
#include <vector>

#include "report/html.hpp"
#include "report/svg.hpp"

namespace fabscope::report {

namespace {

struct Tick {
  double y;
  std::string label;
};

// The y axis' grid lines and labels, top to bottom as drawn (the first is the lowest value).
std::vector<Tick> y_ticks(const std::string& svg) {
  const auto a = svg.find("<g class=\"yaxis\">"), b = svg.find("</g>", a);
  const std::string axis = svg.substr(a, b - a);
  static const std::regex text(R"re(<text x="[^"]*" y="([^"]*)"[^>]*>([^<]*)</text>)re");
  std::vector<Tick> out;
  for (auto it = std::sregex_iterator(axis.begin(), axis.end(), text); it != std::sregex_iterator(); ++it)
    out.push_back({std::stod((*it)[1]) - 4, (*it)[2]});  // the label sits 4 px below its line
  return out;
}

std::vector<double> point_ys(const std::string& svg) {
  static const std::regex pt(R"re(class="pt" cx="[^"]*" cy="([^"]*)")re");
  std::vector<double> out;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), pt); it != std::sregex_iterator(); ++it)
    out.push_back(std::stod((*it)[1]));
  return out;
}

LineChart chart_of(const std::vector<std::pair<double, double>>& xy) {
  LineChart c;
  c.id = "chart";
  c.title = "bw";
  PlotSeries s;
  s.label = "run";
  for (auto [x, y] : xy) s.points.push_back({x, y, "p"});
  c.series.push_back(s);
  return c;
}

bool one_two_five(double step) {
  const double m = step / std::pow(10, std::floor(std::log10(step) + 1e-9));
  return std::fabs(m - 1) < 1e-6 || std::fabs(m - 2) < 1e-6 || std::fabs(m - 5) < 1e-6;
}

}  // namespace

TEST(NiceTicks, StepsOfOneTwoOrFiveCoverTheRange) {
  for (auto [lo, hi] : std::vector<std::pair<double, double>>{
           {0, 0.47}, {0, 0.4935}, {0, 332.3}, {0, 449.9}, {0.95, 1.08}, {0, 1}, {-3, 17}, {0, 7.3e9}, {1.0004, 1.0009}}) {
    auto t = nice_ticks(lo, hi, 6);
    ASSERT_GE(t.size(), 2u) << lo << " " << hi;
    const double step = t[1] - t[0];
    EXPECT_LE(t.front(), lo + step * 1e-9) << lo << " " << hi;
    EXPECT_GE(t.back(), hi - step * 1e-9) << lo << " " << hi;
    EXPECT_TRUE(one_two_five(step)) << "step " << step << " for " << lo << " " << hi;
    for (std::size_t i = 1; i < t.size(); ++i) EXPECT_NEAR(t[i] - t[i - 1], step, step * 1e-6);
  }
}

// The rdma plot of the soft-RoCE runs: 0.47 Gb/s at the top once sat above the last tick (0.4).
TEST(LineChart, YAxisEndsOnATickAtOrAboveTheHighestPoint) {
  for (double top : {0.47, 0.13, 0.2305, 3.3, 332.3, 449.9, 1.0, 7200.0}) {
    const std::string svg = render_line_chart(chart_of({{4096, top / 2}, {65536, top}}));
    const auto ticks = y_ticks(svg);
    ASSERT_GE(ticks.size(), 2u) << top;
    const double top_tick = std::stod(ticks.back().label);
    EXPECT_GE(top_tick, top) << "the last tick " << ticks.back().label << " is below the highest point " << top;
    for (double y : point_ys(svg)) EXPECT_GE(y, ticks.back().y - 0.05) << "a point is drawn above the axis' top tick";
    // Evenly spaced values, one step of 1, 2 or 5 x 10^k, every label with the same decimals.
    const double step = std::stod(ticks[1].label) - std::stod(ticks[0].label);
    EXPECT_TRUE(one_two_five(step)) << "step " << step << " for " << top;
    const auto dot = ticks[0].label.find('.');
    for (std::size_t i = 1; i < ticks.size(); ++i) {
      EXPECT_NEAR(std::stod(ticks[i].label) - std::stod(ticks[i - 1].label), step, step * 1e-6)
          << ticks[i - 1].label << " -> " << ticks[i].label;
      EXPECT_EQ(ticks[i].label.find('.') == std::string::npos ? 0 : ticks[i].label.size() - ticks[i].label.find('.'),
                dot == std::string::npos ? 0 : ticks[0].label.size() - dot)
          << "labels " << ticks[0].label << " and " << ticks[i].label << " have different decimals";
    }
  }
}

// Half the width of a size label at the plot's 12 px font is at most 3.5 px a character (DejaVu
// Sans' digits and capitals are about 7.6 px wide, "i" and the space less).
TEST(LineChart, TheLastSizeLabelIsNotCut) {
  const std::string svg = render_line_chart(chart_of({{4096, 1}, {131072, 2}}));
  const auto a = svg.find("<g class=\"xaxis\">"), b = svg.find("</g>", a);
  const std::string axis = svg.substr(a, b - a);
  static const std::regex text(R"re(<text x="([^"]*)"[^>]*>([^<]*)</text>)re");
  std::size_t n = 0;
  for (auto it = std::sregex_iterator(axis.begin(), axis.end(), text); it != std::sregex_iterator(); ++it, ++n) {
    const double x = std::stod((*it)[1]), half = 3.5 * (*it)[2].str().size();
    EXPECT_LE(x + half, 760) << "'" << (*it)[2] << "' at " << x << " runs past the right edge";
    EXPECT_GE(x - half, 0) << "'" << (*it)[2] << "' at " << x << " runs past the left edge";
  }
  EXPECT_NE(axis.find(">128 KiB</text>"), std::string::npos);
  EXPECT_GT(n, 2u);
}

TEST(LimitLines, OneRunsLimitIsNamedAfterItAndInItsColour) {
  auto lines = limit_lines({{"h200x2", 0, 450, "NVLink limit 450 GB/s"}}, 2);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].label, "h200x2: NVLink limit 450 GB/s");
  EXPECT_EQ(lines[0].runs, "h200x2");
  EXPECT_EQ(lines[0].colour, 0);
}

TEST(LimitLines, ALimitEveryRunSharesIsOneLine) {
  auto lines = limit_lines({{"a", 0, 450, "NVLink limit 450 GB/s"}, {"b", 1, 450, "NVLink limit 450 GB/s"}}, 2);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].label, "NVLink limit 450 GB/s, every run");
  EXPECT_EQ(lines[0].runs, "a, b");
  EXPECT_EQ(lines[0].colour, 6);
  auto alone = limit_lines({{"a", 0, 400, "port rate 400 Gb/s"}}, 1);
  ASSERT_EQ(alone.size(), 1u);
  EXPECT_EQ(alone[0].label, "port rate 400 Gb/s");
}

TEST(LimitLines, DifferentLimitsAreALineEach) {
  auto lines = limit_lines({{"a", 0, 450, "NVLink limit 450 GB/s"}, {"b", 1, 900, "NVLink limit 900 GB/s"}}, 2);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].label, "a: NVLink limit 450 GB/s");
  EXPECT_EQ(lines[1].label, "b: NVLink limit 900 GB/s");
  EXPECT_EQ(lines[1].colour, 1);
}

TEST(FormatSize, ExactInOneForm) {
  EXPECT_EQ(format_size(0), "0 B");
  EXPECT_EQ(format_size(8), "8 B");
  EXPECT_EQ(format_size(1024), "1 KiB");
  EXPECT_EQ(format_size(8193), "8 KiB + 1 B");
  EXPECT_EQ(format_size(524289), "512 KiB + 1 B");
  EXPECT_EQ(format_size(2097152), "2 MiB");
  EXPECT_EQ(format_size(1536), "1 KiB + 512 B");
  EXPECT_EQ(format_size(1000000), "976 KiB + 576 B");
  EXPECT_EQ(format_size(1000000000), "1,000,000,000 B");
  EXPECT_EQ(format_size(std::uint64_t{8} << 30), "8 GiB");
}

}  // namespace fabscope::report

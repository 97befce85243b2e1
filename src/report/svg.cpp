#include "report/svg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "report/html.hpp"

namespace fabscope::report {

namespace {

constexpr double kW = 760, kH = 400;
// kRight leaves room for half the widest size label centred on the last tick ("128 KiB", "512 MiB":
// 7 characters of the 12 px font, about 45 px), so the axis' last label is never cut.
constexpr double kLeft = 70, kRight = 36, kTop = 16, kBottom = 56;

std::string marker_svg(int marker, double x, double y, const char* colour, const std::string& extra) {
  const double r = 3.6;
  std::string fill = std::string(" fill=\"") + colour + "\"";
  switch (((marker % 4) + 4) % 4) {
    case 1:
      return "<rect class=\"pt\" x=\"" + coord(x - r) + "\" y=\"" + coord(y - r) + "\" width=\"" +
             coord(2 * r) + "\" height=\"" + coord(2 * r) + "\"" + fill + extra + ">";
    case 2:
      return "<polygon class=\"pt\" points=\"" + coord(x) + "," + coord(y - r - 1) + " " + coord(x - r - 1) +
             "," + coord(y + r) + " " + coord(x + r + 1) + "," + coord(y + r) + "\"" + fill + extra + ">";
    case 3:
      return "<polygon class=\"pt\" points=\"" + coord(x) + "," + coord(y - r - 1) + " " + coord(x + r + 1) +
             "," + coord(y) + " " + coord(x) + "," + coord(y + r + 1) + " " + coord(x - r - 1) + "," +
             coord(y) + "\"" + fill + extra + ">";
    default:
      return "<circle class=\"pt\" cx=\"" + coord(x) + "\" cy=\"" + coord(y) + "\" r=\"" + coord(r) + "\"" +
             fill + extra + ">";
  }
}

std::string marker_close(int marker) {
  switch (((marker % 4) + 4) % 4) {
    case 1: return "</rect>";
    case 2:
    case 3: return "</polygon>";
    default: return "</circle>";
  }
}

std::string time_label(double us) {
  if (us >= 1e6) return fmt(us / 1e6, us >= 1e7 ? 0 : 1) + " s";
  if (us >= 1e3) return fmt(us / 1e3, us >= 1e4 ? 0 : 1) + " ms";
  if (us >= 1) return fmt(us, 0) + " \xC2\xB5s";
  return fmt(us * 1e3, 0) + " ns";
}

}  // namespace

double nice_step(double lo, double hi, int target) {
  if (!(hi > lo) || target < 1) return 1;
  const double raw = (hi - lo) / target;
  const double mag = std::pow(10, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * mag >= raw * (1 - 1e-9)) return m * mag;
  return 10 * mag;
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  if (!(hi > lo) || target < 1) return {lo};
  const double step = nice_step(lo, hi, target);
  // Counted in whole steps from a multiple of the step, so the ticks are k x step exactly (no
  // drift from adding 0.1 ten times) and the first is at or below lo, the last at or above hi:
  // every value in [lo, hi] lies between two labelled ticks.
  const double first = std::floor(lo / step + 1e-9), last = std::ceil(hi / step - 1e-9);
  // A span tiny against its values (1e17 to 1e17 + 16) has step counts beyond a double's integers.
  if (!std::isfinite(first) || !std::isfinite(last) || std::fabs(first) > 1e12 || std::fabs(last) > 1e12 ||
      last - first > 1000)
    return {lo, hi};
  std::vector<double> out;
  for (double k = first; k <= last + 0.5; k += 1) out.push_back(k * step == 0 ? 0 : k * step);
  return out;
}

int tick_decimals(double step) {
  // Enough decimals to write every multiple of a 1, 2 or 5 x 10^k step exactly: 0.5 -> 1, 0.02 -> 2.
  if (!(step > 0) || step >= 1) return 0;
  return std::clamp(static_cast<int>(std::ceil(-std::log10(step) - 1e-9)), 0, 6);
}

std::vector<RefLine> limit_lines(const std::vector<RunLimit>& limits, std::size_t runs_on_axis) {
  struct Group {
    double value;
    std::string label;
    std::vector<const RunLimit*> runs;
  };
  std::vector<Group> groups;
  for (const auto& l : limits) {
    if (!std::isfinite(l.value)) continue;
    auto same = [&](const Group& g) {
      return g.label == l.label && std::fabs(g.value - l.value) <= 1e-9 * std::max(1.0, std::fabs(l.value));
    };
    auto it = std::find_if(groups.begin(), groups.end(), same);
    if (it == groups.end()) groups.push_back({l.value, l.label, {&l}});
    else if (std::none_of(it->runs.begin(), it->runs.end(), [&](const RunLimit* r) { return r->run == l.run; }))
      it->runs.push_back(&l);
  }
  std::vector<RefLine> out;
  for (const auto& g : groups) {
    std::string names;
    for (const auto* r : g.runs) names += (names.empty() ? "" : ", ") + r->run;
    RefLine line;
    line.y = g.value;
    line.runs = names;
    if (groups.size() == 1 && g.runs.size() >= runs_on_axis) {
      line.label = g.label + (runs_on_axis > 1 ? ", every run" : "");
      line.colour = 6;
    } else {
      line.label = names + ": " + g.label;
      line.colour = g.runs.size() == 1 ? g.runs.front()->colour : 6;
      if (std::all_of(g.runs.begin(), g.runs.end(), [](const RunLimit* r) { return r->x_span.has_value(); })) {
        line.x_span = g.runs.front()->x_span;
        for (const auto* r : g.runs)
          line.x_span = std::pair(std::min(line.x_span->first, r->x_span->first),
                                  std::max(line.x_span->second, r->x_span->second));
      }
    }
    out.push_back(std::move(line));
  }
  return out;
}

std::string render_line_chart(const LineChart& input) {
  // Values a plot can place: a point whose value is not a finite number, or a byte size that is
  // not positive, is left out; the rest are held within +-1e150, so the ranges and scales below
  // stay finite (a busbw of -1e308 once made the span overflow and wrote `inf` into the points).
  LineChart c = input;
  auto placeable = [&](double x, double y) {
    return std::isfinite(x) && std::isfinite(y) && (!c.x_bytes_log2 || x > 0);
  };
  for (auto& s : c.series) {
    std::erase_if(s.points, [&](const PlotPoint& p) { return !placeable(p.x, p.y); });
    for (auto& p : s.points) {
      p.x = std::clamp(p.x, -1e150, 1e150);
      p.y = std::clamp(p.y, -1e150, 1e150);
    }
  }
  std::erase_if(c.ref_lines, [](const RefLine& r) { return !std::isfinite(r.y); });
  for (auto& r : c.ref_lines) r.y = std::clamp(r.y, -1e150, 1e150);
  // Data ranges.
  double xmin = std::numeric_limits<double>::infinity(), xmax = -xmin;
  double ymin = xmin, ymax = -xmin;
  for (const auto& s : c.series)
    for (const auto& p : s.points) {
      double x = c.x_bytes_log2 ? std::log2(p.x) : p.x;
      xmin = std::min(xmin, x);
      xmax = std::max(xmax, x);
      ymin = std::min(ymin, p.y);
      ymax = std::max(ymax, p.y);
    }
  for (const auto& r : c.ref_lines) {
    ymax = std::max(ymax, r.y);
    ymin = std::min(ymin, r.y);
  }
  if (!std::isfinite(xmin)) xmin = 0, xmax = 1;
  if (!std::isfinite(ymin)) ymin = 0, ymax = 1;
  if (c.x_bytes_log2) {
    xmin = std::floor(xmin);
    xmax = std::ceil(xmax);
  }
  if (xmax <= xmin) xmin -= 1, xmax += 1;
  double ylo, yhi;
  std::vector<double> yticks;
  if (c.y_log10) {
    ymin = std::max(ymin, 1e-3);
    ylo = std::floor(std::log10(ymin));
    yhi = std::ceil(std::log10(std::max(ymax, ymin)));
    if (yhi <= ylo) yhi = ylo + 1;
    for (double d = ylo; d <= yhi + 1e-9; d += 1) yticks.push_back(d);
  } else if (c.y_from_zero) {
    // The axis ends on a labelled tick at or above the highest point (a point above the top tick
    // reads as off the scale).
    yticks = nice_ticks(0, ymax > 0 ? ymax : 1, 6);
    ylo = yticks.front();
    yhi = yticks.back();
  } else {
    double pad = std::max((ymax - ymin) * 0.1, std::max(std::fabs(ymax), 1e-9) * 0.01);
    yticks = nice_ticks(ymin - pad, ymax + pad, 6);
    ylo = yticks.front();
    yhi = yticks.back();
  }
  if (!(yhi > ylo)) yhi = ylo + 1;
  const double pw = kW - kLeft - kRight, ph = kH - kTop - kBottom;
  auto px = [&](double x) {
    double v = c.x_bytes_log2 ? std::log2(x) : x;
    return kLeft + (v - xmin) / (xmax - xmin) * pw;
  };
  auto py = [&](double y) {
    double v = c.y_log10 ? std::log10(std::max(y, 1e-3)) : y;
    return kTop + ph - (v - ylo) / (yhi - ylo) * ph;
  };

  std::string o;
  o += "<svg class=\"plot\" id=\"" + esc(c.id) + "\" viewBox=\"0 0 " + coord(kW) + " " + coord(kH) +
       "\" role=\"img\" xmlns=\"http://www.w3.org/2000/svg\"><title>" + esc(c.title) + "</title>";
  // Grid and ticks.
  o += "<g class=\"yaxis\">";
  // Decimals enough to tell neighbouring ticks apart (1.02, 1.04, ... on a ratio axis).
  int decimals = 0;
  if (!c.y_log10 && yticks.size() > 1) decimals = tick_decimals(yticks[1] - yticks[0]);
  for (double t : yticks) {
    double y = c.y_log10 ? kTop + ph - (t - ylo) / (yhi - ylo) * ph : py(t);
    o += "<line class=\"grid\" x1=\"" + coord(kLeft) + "\" x2=\"" + coord(kW - kRight) + "\" y1=\"" + coord(y) +
         "\" y2=\"" + coord(y) + "\"/>";
    std::string label = c.y_log10 ? time_label(std::pow(10, t)) : fmt(t, decimals);
    o += "<text x=\"" + coord(kLeft - 6) + "\" y=\"" + coord(y + 4) + "\" text-anchor=\"end\">" + esc(label) +
         "</text>";
  }
  o += "</g><g class=\"xaxis\">";
  if (c.x_bytes_log2) {
    // Steps of 1, 2, 5 or 10 powers of two, on exponents divisible by the step, so the labels
    // meet the powers of 1024 (1 KiB = 2^10, 1 MiB = 2^20, ...).
    int span = static_cast<int>(xmax - xmin);
    int step = 1;
    for (int s : {1, 2, 5, 10, 20}) {
      step = s;
      if (span / s <= 9) break;
    }
    for (int e = static_cast<int>(xmin); e <= static_cast<int>(xmax); ++e) {
      if (((e % step) + step) % step != 0) continue;
      double x = kLeft + (e - xmin) / (xmax - xmin) * pw;
      o += "<line class=\"grid\" x1=\"" + coord(x) + "\" x2=\"" + coord(x) + "\" y1=\"" + coord(kTop) +
           "\" y2=\"" + coord(kTop + ph) + "\"/>";
      std::string label = e >= 0 && e < 63 ? format_bytes(std::uint64_t{1} << e) : "2^" + std::to_string(e);
      o += "<text x=\"" + coord(x) + "\" y=\"" + coord(kTop + ph + 16) + "\" text-anchor=\"middle\">" +
           esc(label) + "</text>";
    }
  } else {
    const auto xticks = nice_ticks(xmin, xmax, 8);
    const int xdecimals = xticks.size() > 1 ? tick_decimals(xticks[1] - xticks[0]) : 0;
    for (double t : xticks) {
      if (t < xmin - 1e-9 * std::fabs(xmax - xmin) || t > xmax + 1e-9 * std::fabs(xmax - xmin)) continue;
      double x = px(t);
      o += "<line class=\"grid\" x1=\"" + coord(x) + "\" x2=\"" + coord(x) + "\" y1=\"" + coord(kTop) +
           "\" y2=\"" + coord(kTop + ph) + "\"/><text x=\"" + coord(x) + "\" y=\"" + coord(kTop + ph + 16) +
           "\" text-anchor=\"middle\">" + esc(fmt(t, xdecimals)) + "</text>";
    }
  }
  o += "</g>";
  o += "<line class=\"axis\" x1=\"" + coord(kLeft) + "\" x2=\"" + coord(kLeft) + "\" y1=\"" + coord(kTop) +
       "\" y2=\"" + coord(kTop + ph) + "\"/><line class=\"axis\" x1=\"" + coord(kLeft) + "\" x2=\"" +
       coord(kW - kRight) + "\" y1=\"" + coord(kTop + ph) + "\" y2=\"" + coord(kTop + ph) + "\"/>";
  o += "<text class=\"xlabel\" x=\"" + coord(kLeft + pw / 2) + "\" y=\"" + coord(kH - 12) +
       "\" text-anchor=\"middle\">" + esc(c.x_label) + "</text>";
  o += "<text class=\"ylabel\" transform=\"translate(16 " + coord(kTop + ph / 2) +
       ") rotate(-90)\" text-anchor=\"middle\">" + esc(c.y_label) + "</text>";
  // Reference lines.
  for (const auto& r : c.ref_lines) {
    double y = py(r.y);
    // A run's line spans the sizes that run measured (a placeable, ordered range), else the axis.
    double x1 = kLeft, x2 = kW - kRight;
    if (r.x_span && placeable(r.x_span->first, 0) && placeable(r.x_span->second, 0) &&
        r.x_span->first <= r.x_span->second) {
      x1 = std::clamp(px(r.x_span->first), kLeft, kW - kRight);
      x2 = std::clamp(px(r.x_span->second), kLeft, kW - kRight);
    }
    // The label ends at the line's right end, unless it would then run past the axis on the left
    // (about 6.5 px a character at 12 px): then it starts at the axis.
    const bool from_left = x2 - 4 - 6.5 * static_cast<double>(r.label.size()) < kLeft;
    o += "<g class=\"ref\" data-ref=\"" + esc(r.label) + "\"" +
         (r.runs.empty() ? std::string() : " data-runs=\"" + esc(r.runs) + "\"") + "><line class=\"limit\" x1=\"" + coord(x1) +
         "\" x2=\"" + coord(x2) + "\" y1=\"" + coord(y) + "\" y2=\"" + coord(y) + "\" stroke=\"" +
         palette(r.colour) + "\"><title>" + esc(r.label) + "</title></line><text x=\"" +
         coord(from_left ? kLeft + 4 : x2 - 4) + "\" y=\"" + coord(y - 5) + "\" text-anchor=\"" +
         (from_left ? "start" : "end") + "\">" + esc(r.label) + "</text></g>";
  }
  // Series.
  for (const auto& s : c.series) {
    const char* col = palette(s.colour);
    o += "<g class=\"series\" data-series=\"" + esc(s.label) + "\" data-points=\"" +
         std::to_string(s.points.size()) + "\">";
    if (s.points.size() > 1 && !s.markers_only) {
      o += "<polyline fill=\"none\" stroke=\"";
      o += col;
      o += "\" stroke-width=\"2\"";
      if (s.dashed) o += " stroke-dasharray=\"7 4\"";
      o += " points=\"";
      for (std::size_t i = 0; i < s.points.size(); ++i)
        o += (i ? " " : "") + coord(px(s.points[i].x)) + "," + coord(py(s.points[i].y));
      o += "\"/>";
    }
    for (const auto& p : s.points)
      o += marker_svg(s.marker, px(p.x), py(p.y), col, "") + "<title>" + esc(p.title) + "</title>" +
           marker_close(s.marker);
    o += "</g>";
  }
  o += "</svg>";
  return o;
}

std::string render_legend(const LineChart& c) {
  std::string o = "<ul class=\"legend\">";
  for (const auto& s : c.series) {
    const char* col = palette(s.colour);
    o += "<li><svg width=\"34\" height=\"12\" viewBox=\"0 0 34 12\" aria-hidden=\"true\">";
    if (!s.markers_only) {
      o += "<line x1=\"1\" x2=\"33\" y1=\"6\" y2=\"6\" stroke-width=\"2\" stroke=\"";
      o += col;
      o += "\"";
      if (s.dashed) o += " stroke-dasharray=\"7 4\"";
      o += "/>";
    }
    std::string m = marker_svg(s.marker, 17, 6, col, "");
    m.replace(m.find("class=\"pt\""), 10, "class=\"mk\"");
    o += m + marker_close(s.marker) + "</svg> " + esc(s.label) + "</li>";
  }
  for (const auto& r : c.ref_lines) {
    o += "<li><svg width=\"34\" height=\"12\" viewBox=\"0 0 34 12\" aria-hidden=\"true\"><line x1=\"1\" x2=\"33\" "
         "y1=\"6\" y2=\"6\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\" stroke=\"";
    o += palette(r.colour);
    o += "\"/></svg> " + esc(r.label) + "</li>";
  }
  o += "</ul>";
  return o;
}

}  // namespace fabscope::report

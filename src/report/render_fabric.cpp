// The fabric section: per `fabscope fabric` input, the topology picture (tiers from the hosts up,
// every switch and cable up to kMaxWholeSwitches switches, one box per tier beyond), the suspects
// of the cluster inputs localized on this fabric, and the cables that are not active, degraded
// or count errors. Layout and states are values from topology.hpp; this file only draws.
#include <algorithm>
#include <cmath>
#include <map>

#include "report/html.hpp"
#include "report/render.hpp"
#include "report/topology.hpp"

namespace fabscope::report {

namespace {

constexpr double kWidth = 1040;           // viewBox width: the page is at most 1100 px
constexpr double kTierLeft = 92;              // tier names
constexpr std::size_t kMaxProblemRows = 50;
constexpr std::size_t kMaxHoverLines = 8;  // lines of a list in a hover text

// Okabe-Ito: blue for a link at its tier's rate, orange degraded, vermillion not active,
// reddish purple for suspects; each also has its own dash pattern or shape.
const char* kActive = "#0072B2";
const char* kDegraded = "#E69F00";
const char* kNotActive = "#D55E00";
const char* kUnknown = "#999999";
const char* kSuspect = "#CC79A7";

const char* look_colour(LinkLook l) {
  switch (l) {
    case LinkLook::Active: return kActive;
    case LinkLook::Degraded: return kDegraded;
    case LinkLook::NotActive: return kNotActive;
    default: return kUnknown;
  }
}

const char* look_dash(LinkLook l) {
  switch (l) {
    case LinkLook::Degraded: return "8 3";
    case LinkLook::NotActive: return "2 3";
    case LinkLook::Unknown: return "1 4";
    default: return "";
  }
}

const char* look_words(LinkLook l) {
  switch (l) {
    case LinkLook::Active: return "active";
    case LinkLook::Degraded: return "DEGRADED";
    case LinkLook::NotActive: return "NOT ACTIVE";
    default: return "state unknown";
  }
}

std::string rate(int width, fabric::Speed speed) {
  return (width > 0 ? std::to_string(width) + "X" : std::string("?")) + " " + fabric::to_string(speed);
}

std::string numbers(const std::vector<int>& v) {
  std::string s;
  for (int k : v) s += (s.empty() ? "#" : " #") + std::to_string(k);
  return s;
}

std::string tier_name(const Topology& t, int tier) {
  if (tier == 0) return "HCAs";
  if (t.top_unreached && tier == static_cast<int>(t.tiers.size())) return "not reached";
  static const char* const names[] = {"", "leaf", "spine", "core"};
  return tier < 4 ? names[tier] : "tier " + std::to_string(tier);
}

std::string plural(std::size_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// A link's hover text: both ends, width and speed, state, error counters above zero, findings
// and suspects.
std::string link_title(const TopoLink& l) {
  std::string t = l.name + "\n" + look_words(l.look);
  if (l.look == LinkLook::NotActive || l.look == LinkLook::Unknown)
    t += " (ends " + l.lo_state + " / " + l.hi_state + ")";
  if (l.width > 0 || l.speed != fabric::Speed::Unknown) t += ", " + rate(l.width, l.speed);
  if (l.look == LinkLook::Degraded && l.tier_width > 0)
    t += " where the tier's links run at " + rate(l.tier_width, l.tier_speed);
  if (l.below_capability && l.could_width > 0)
    t += "; both ends support " + rate(l.could_width, l.could_speed);
  for (std::size_t i = 0; i < l.errors.size() && i < kMaxHoverLines; ++i) t += "\n" + l.errors[i];
  if (l.errors.size() > kMaxHoverLines) t += "\n... " + std::to_string(l.errors.size() - kMaxHoverLines) + " more counters";
  for (const auto& id : l.finding_ids) t += "\nfinding " + id;
  if (!l.suspects.empty()) t += "\nSUSPECT " + numbers(l.suspects) + " (the suspects table below)";
  return t;
}

std::string badge(double x, double y, const std::vector<int>& suspects) {
  const std::string text = numbers(suspects);
  const double w = 7.0 * static_cast<double>(text.size()) + 6;
  return "<g class=\"badge mark-suspect\" data-suspect=\"" + esc(text) + "\"><rect x=\"" + coord(x - w / 2) + "\" y=\"" +
         coord(y - 8) + "\" width=\"" + coord(w) + "\" height=\"16\" rx=\"3\" fill=\"" + kSuspect +
         "\" stroke=\"#000\" stroke-width=\"0.8\"/><text x=\"" + coord(x) + "\" y=\"" + coord(y + 4) +
         "\" font-size=\"11\" text-anchor=\"middle\">" + esc(text) + "</text></g>";
}

struct Box {
  double x = 0, y = 0, w = 0, h = 0;
  bool vertical = false;  // text drawn upwards
  double font = 11;
};

// A label that fits the box's long side: cut with an ellipsis, the whole name in <title>.
std::string fit(const std::string& name, double room, double font) {
  const std::size_t chars = static_cast<std::size_t>(std::max(2.0, room / (font * 0.62)));
  std::size_t n = 0;
  for (unsigned char ch : name) n += (ch & 0xC0) != 0x80;
  if (n <= chars) return name;
  std::string out;
  std::size_t k = 0;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if ((static_cast<unsigned char>(name[i]) & 0xC0) != 0x80 && ++k > chars - 1) break;
    out += name[i];
  }
  return out + "\xE2\x80\xA6";
}

std::string box_text(const Box& b, const std::string& text) {
  if (b.vertical)
    return "<text font-size=\"" + coord(b.font) + "\" text-anchor=\"middle\" transform=\"translate(" +
           coord(b.x + b.w / 2 + b.font * 0.35) + " " + coord(b.y + b.h / 2) + ") rotate(-90)\">" +
           esc(fit(text, b.h - 4, b.font)) + "</text>";
  return "<text font-size=\"" + coord(b.font) + "\" text-anchor=\"middle\" x=\"" + coord(b.x + b.w / 2) + "\" y=\"" +
         coord(b.y + b.h / 2 + b.font * 0.35) + "\">" + esc(fit(text, b.w - 4, b.font)) + "</text>";
}

std::string line(double x1, double y1, double x2, double y2) {
  return "x1=\"" + coord(x1) + "\" y1=\"" + coord(y1) + "\" x2=\"" + coord(x2) + "\" y2=\"" + coord(y2) + "\"";
}

std::string link_attrs(LinkLook look, double width) {
  std::string a = " stroke=\"" + std::string(look_colour(look)) + "\" stroke-width=\"" + coord(width) + "\"";
  if (*look_dash(look)) a += std::string(" stroke-dasharray=\"") + look_dash(look) + "\"";
  return a;
}

// Every switch and cable: tiers as rows, the top tier first, each leaf's HCAs as one box below it.
std::string whole_picture(const Input& in, int k, const Topology& t) {
  const auto& s = in.fabric.subnet;
  const int tiers = static_cast<int>(t.tiers.size());
  std::size_t widest = 1;
  for (const auto& row : t.tiers) widest = std::max(widest, row.size());
  const double slot = (kWidth - kTierLeft - 10) / static_cast<double>(widest);
  const double bw = std::min(120.0, slot * 0.84);
  const bool vertical = bw < 64;
  const double font = vertical ? std::clamp(bw * 0.55, 7.0, 11.0) : 11.0;
  const double bh = vertical ? 72 : 28;
  const double gap = 120;  // between tier rows: room for the cables
  const double host_h = vertical ? 56 : 24, host_gap = 34;
  const double top = 24;
  const double height = top + tiers * bh + (tiers - 1) * gap + host_gap + host_h + 16;
  std::vector<Box> boxes(t.switches.size());
  for (int tier = 1; tier <= tiers; ++tier) {
    const auto& row = t.tiers[static_cast<std::size_t>(tier - 1)];
    const double y = top + (tiers - tier) * (bh + gap);
    const double row_slot = (kWidth - kTierLeft - 10) / static_cast<double>(std::max<std::size_t>(row.size(), 1));
    for (std::size_t i = 0; i < row.size(); ++i) {
      Box& b = boxes[static_cast<std::size_t>(row[i])];
      b.w = bw, b.h = bh, b.vertical = vertical, b.font = font;
      b.x = kTierLeft + row_slot * (static_cast<double>(i) + 0.5) - bw / 2;
      b.y = y;
    }
  }
  auto centre = [&](int sw) { return boxes[static_cast<std::size_t>(sw)].x + boxes[static_cast<std::size_t>(sw)].w / 2; };
  // Where each cable meets a box: a switch's cables to higher tiers spread along its top edge,
  // those to lower tiers along its bottom, each side ordered by the other end's place (then the
  // port), so parallel cables are apart and few cross.
  std::map<std::pair<int, int>, double> end_x;  // (node, port) -> x
  std::vector<std::vector<std::pair<double, std::pair<int, int>>>> up(t.switches.size()), down(t.switches.size());
  for (const auto& l : t.links) {
    if (l.host_link) continue;
    const int a = t.switch_of_node[static_cast<std::size_t>(l.lo_node)];
    const int b = t.switch_of_node[static_cast<std::size_t>(l.hi_node)];
    if (t.switches[static_cast<std::size_t>(a)].tier == t.switches[static_cast<std::size_t>(b)].tier) {
      up[static_cast<std::size_t>(a)].push_back({centre(b) + l.hi_port * 1e-3, {l.lo_node, l.lo_port}});
      up[static_cast<std::size_t>(b)].push_back({centre(a) + l.lo_port * 1e-3, {l.hi_node, l.hi_port}});
    } else {
      up[static_cast<std::size_t>(a)].push_back({centre(b) + l.lo_port * 1e-3, {l.lo_node, l.lo_port}});
      down[static_cast<std::size_t>(b)].push_back({centre(a) + l.hi_port * 1e-3, {l.hi_node, l.hi_port}});
    }
  }
  for (std::size_t i = 0; i < t.switches.size(); ++i)
    for (auto* side : {&up[i], &down[i]}) {
      std::sort(side->begin(), side->end());
      const Box& b = boxes[i];
      for (std::size_t j = 0; j < side->size(); ++j)
        end_x[(*side)[j].second] = b.x + 2 + (b.w - 4) * (static_cast<double>(j) + 0.5) / static_cast<double>(side->size());
    }
  std::string o = "<svg class=\"topology\" id=\"topology-" + std::to_string(k) + "\" data-view=\"whole\" viewBox=\"0 0 " +
                  coord(kWidth) + " " + coord(height) + "\" role=\"img\" xmlns=\"http://www.w3.org/2000/svg\"><title>" +
                  esc(in.label + ": every switch and cable of the fabric, tiers from the HCAs up") + "</title>";
  // Tier names on the left.
  o += "<g class=\"tier-names\" font-size=\"12\">";
  for (int tier = 1; tier <= tiers; ++tier) {
    const double y = top + (tiers - tier) * (bh + gap) + bh / 2 + 4;
    o += "<text x=\"4\" y=\"" + coord(y) + "\">" + esc(tier_name(t, tier)) + " (" +
         std::to_string(t.tiers[static_cast<std::size_t>(tier - 1)].size()) + ")</text>";
  }
  const double host_y = top + tiers * bh + (tiers - 1) * gap + host_gap;
  if (t.hosts) o += "<text x=\"4\" y=\"" + coord(host_y + host_h / 2 + 4) + "\">HCAs (" + std::to_string(t.hosts) + ")</text>";
  o += "</g>";
  // Cables between switches; suspects get a wide halo under them.
  std::string halos, lines, marks;
  const double lw = t.links.size() > 400 ? 1.2 : 2;
  for (const auto& l : t.links) {
    if (l.host_link) continue;
    const int a = t.switch_of_node[static_cast<std::size_t>(l.lo_node)];
    const int b = t.switch_of_node[static_cast<std::size_t>(l.hi_node)];
    const Box& ba = boxes[static_cast<std::size_t>(a)];
    const Box& bb = boxes[static_cast<std::size_t>(b)];
    const double xa = end_x[{l.lo_node, l.lo_port}], xb = end_x[{l.hi_node, l.hi_port}];
    std::string geometry, tag;
    double mx, my;
    if (ba.y == bb.y) {  // same tier: an arc above the row
      const double lift = 30 + std::abs(xa - xb) * 0.08;
      geometry = "d=\"M" + coord(xa) + " " + coord(ba.y) + "Q" + coord((xa + xb) / 2) + " " + coord(ba.y - lift) + " " +
                 coord(xb) + " " + coord(bb.y) + "\" fill=\"none\"";
      tag = "path";
      mx = (xa + xb) / 2, my = ba.y - lift / 2;
    } else {
      geometry = line(xa, ba.y, xb, bb.y + bb.h);
      tag = "line";
      mx = (xa + xb) / 2, my = (ba.y + bb.y + bb.h) / 2;
    }
    const std::string data = " data-link=\"" + esc(l.name) + "\" data-look=\"" + to_string(l.look) + "\"" +
                             (l.erroring() ? " data-errors=\"" + std::to_string(l.error_total) + "\"" : "") +
                             (l.suspects.empty() ? "" : " data-suspect=\"" + esc(numbers(l.suspects)) + "\"");
    if (!l.suspects.empty())
      halos += "<" + tag + " class=\"suspect-halo\" " + geometry + " stroke=\"" + kSuspect +
               "\" stroke-width=\"9\" stroke-opacity=\"0.85\"/>";
    lines += "<" + tag + " class=\"link\"" + data + " " + geometry +
             link_attrs(l.look, l.look == LinkLook::Active ? lw : lw + 1.5) + "><title>" + esc(link_title(l)) +
             "</title></" + tag + ">";
    if (l.erroring())
      marks += "<circle class=\"mark-errors\" data-link=\"" + esc(l.name) + "\" cx=\"" + coord(mx) + "\" cy=\"" +
               coord(my) + "\" r=\"4.5\" fill=\"#000\" stroke=\"#fff\" stroke-width=\"1.5\"><title>" +
               esc(link_title(l)) + "</title></circle>";
    if (!l.suspects.empty()) marks += badge(mx, my - 12, l.suspects);
  }
  o += "<g class=\"halos\">" + halos + "</g><g class=\"links\" stroke-linecap=\"round\">" + lines + "</g>";
  // Switch boxes, and under each leaf its HCAs as one box.
  o += "<g class=\"switches\">";
  for (std::size_t i = 0; i < t.switches.size(); ++i) {
    const TopoSwitch& sw = t.switches[i];
    const Box& b = boxes[i];
    const auto& node = s.nodes[static_cast<std::size_t>(sw.node)];
    std::string tip = sw.name + " (" + tier_name(t, sw.tier) + ", " + fabric::guid_hex(node.guid) + ", LID " +
                      std::to_string(node.lid()) + ", " + std::to_string(node.num_ports) + " ports)";
    if (sw.hosts) tip += "\n" + plural(sw.hosts, "HCA", "HCAs");
    if (!sw.suspects.empty()) tip += "\nSUSPECT " + numbers(sw.suspects) + " (the suspects table below)";
    const bool sus = !sw.suspects.empty();
    o += "<g class=\"switch\" data-node=\"" + std::to_string(sw.node) + "\" data-name=\"" + esc(sw.name) + "\" data-tier=\"" +
         std::to_string(sw.tier) + "\"" + (sus ? " data-suspect=\"" + esc(numbers(sw.suspects)) + "\"" : "") +
         "><title>" + esc(tip) + "</title><rect x=\"" + coord(b.x) + "\" y=\"" + coord(b.y) + "\" width=\"" + coord(b.w) +
         "\" height=\"" + coord(b.h) + "\" rx=\"3\" fill=\"#f2f2f2\" stroke=\"" + (sus ? kSuspect : "#333") +
         "\" stroke-width=\"" + (sus ? "4" : "1") + "\"/>" + box_text(b, sw.name) + "</g>";
    if (sus) marks += badge(b.x + b.w / 2, b.y - 10, sw.suspects);
    if (!sw.hosts) continue;
    Box h = b;
    h.y = host_y, h.h = host_h;
    const bool bad = sw.host_problems > 0;
    const bool hsus = !sw.host_suspects.empty();
    std::string htip = sw.name + ": " + plural(sw.hosts, "HCA", "HCAs");
    std::size_t listed = 0;
    LinkLook worst = LinkLook::Active;
    for (const auto& l : t.links) {
      if (!l.host_link || l.hi_node != sw.node) continue;
      if (l.look == LinkLook::NotActive || (l.look != LinkLook::Active && worst == LinkLook::Active) ||
          (l.look == LinkLook::Degraded && worst == LinkLook::Unknown))
        worst = l.look;
      if (!l.problem() && l.suspects.empty()) continue;
      if (++listed > kMaxHoverLines) continue;
      htip += "\n" + link_title(l);
    }
    if (listed > kMaxHoverLines) htip += "\n... " + std::to_string(listed - kMaxHoverLines) + " more host links";
    o += "<line class=\"link hosts-link\" data-look=\"" + std::string(to_string(worst)) + "\" " +
         line(b.x + b.w / 2, b.y + b.h, b.x + b.w / 2, h.y) + link_attrs(worst, 2) + "><title>" + esc(htip) +
         "</title></line>";
    o += "<g class=\"hosts\" data-leaf=\"" + esc(sw.name) + "\" data-hosts=\"" + std::to_string(sw.hosts) + "\"" +
         (bad ? " data-problems=\"" + std::to_string(sw.host_problems) + "\"" : "") +
         (hsus ? " data-suspect=\"" + esc(numbers(sw.host_suspects)) + "\"" : "") + "><title>" + esc(htip) +
         "</title><rect x=\"" + coord(h.x) + "\" y=\"" + coord(h.y) + "\" width=\"" + coord(h.w) + "\" height=\"" +
         coord(h.h) + "\" rx=\"3\" fill=\"" + (bad ? "#fde3cf" : "#fff") + "\" stroke=\"" +
         (hsus ? kSuspect : bad ? kNotActive : "#777") + "\" stroke-width=\"" + (hsus ? "4" : bad ? "2" : "1") +
         "\" stroke-dasharray=\"" + (bad ? "4 2" : "") + "\"/>" +
         box_text(h, (bad ? "! " : "") + std::to_string(sw.hosts) + (vertical ? "" : sw.hosts == 1 ? " HCA" : " HCAs")) +
         "</g>";
    if (hsus) marks += badge(h.x + h.w / 2, h.y + h.h + 10, sw.host_suspects);
  }
  o += "</g><g class=\"marks\">" + marks + "</g></svg>";
  return o;
}

// Past kMaxWholeSwitches: one box per tier with its counts, the cables between two tiers as one
// line with theirs.
std::string tier_picture(const Input& in, int k, const Topology& t) {
  const int tiers = static_cast<int>(t.tiers.size());
  const double bw = 420, bh = 44, gap = 96, top = 24;
  const double x = kTierLeft + (kWidth - kTierLeft - bw) / 2 - 60;
  const double height = top + (tiers + (t.hosts ? 1 : 0)) * (bh + gap) - gap + 16;
  auto row_y = [&](int tier) { return top + (tiers - tier) * (bh + gap); };  // tier 0: the HCAs
  std::string o = "<svg class=\"topology\" id=\"topology-" + std::to_string(k) + "\" data-view=\"tiers\" viewBox=\"0 0 " +
                  coord(kWidth) + " " + coord(height) + "\" role=\"img\" xmlns=\"http://www.w3.org/2000/svg\"><title>" +
                  esc(in.label + ": the fabric by tier (" + std::to_string(t.switches.size()) +
                      " switches, too many to draw each)") +
                  "</title>";
  std::string marks;
  // The cables between tiers: adjacent tiers straight down the middle, the others on the side.
  const auto groups = tier_links(t);
  int side = 0;
  o += "<g class=\"links\">";
  for (const auto& g : groups) {
    LinkLook look = g.not_active ? LinkLook::NotActive : g.degraded ? LinkLook::Degraded
                                                                    : g.unknown ? LinkLook::Unknown : LinkLook::Active;
    std::string text = plural(g.links, "cable", "cables");
    if (g.degraded) text += ", " + std::to_string(g.degraded) + " degraded";
    if (g.not_active) text += ", " + std::to_string(g.not_active) + " not active";
    if (g.unknown) text += ", " + std::to_string(g.unknown) + " state unknown";
    if (g.erroring) text += ", " + std::to_string(g.erroring) + " with errors";
    const std::string title = tier_name(t, g.lo_tier) + " \xE2\x80\x93 " + tier_name(t, g.hi_tier) + ": " + text +
                              (g.suspects.empty() ? "" : "\nSUSPECT " + numbers(g.suspects));
    const double width = std::clamp(std::log2(static_cast<double>(g.links) + 1) * 1.5, 2.0, 14.0);
    double x1, y1, x2, y2, mx, my;
    std::string shape;
    const double ylo = row_y(g.lo_tier), yhi = row_y(g.hi_tier);
    if (g.hi_tier == g.lo_tier + 1) {
      x1 = x2 = x + bw / 2, y1 = ylo, y2 = yhi + bh;
      shape = "<line " + line(x1, y1, x2, y2);
      mx = x1, my = (y1 + y2) / 2;
    } else {
      const double off = 30 + 24 * side++;
      x1 = x + bw, y1 = ylo + bh / 2, x2 = x + bw, y2 = yhi + bh / 2;
      shape = "<path d=\"M" + coord(x1) + " " + coord(y1) + "C" + coord(x1 + off) + " " + coord(y1) + " " + coord(x2 + off) +
              " " + coord(y2) + " " + coord(x2) + " " + coord(y2) + "\" fill=\"none\"";
      mx = x + bw + off * 0.75, my = (y1 + y2) / 2;
    }
    o += shape + " class=\"link tier-link\" data-tiers=\"" + std::to_string(g.lo_tier) + "-" + std::to_string(g.hi_tier) +
         "\" data-links=\"" + std::to_string(g.links) + "\" data-degraded=\"" + std::to_string(g.degraded) +
         "\" data-not-active=\"" + std::to_string(g.not_active) + "\" data-errors=\"" + std::to_string(g.erroring) + "\"" +
         (g.suspects.empty() ? "" : " data-suspect=\"" + esc(numbers(g.suspects)) + "\"") + link_attrs(look, width) +
         "><title>" + esc(title) + "</title>" + (shape[1] == 'l' ? "</line>" : "</path>");
    marks += "<text class=\"tier-link-label\" x=\"" + coord(mx + 12) + "\" y=\"" + coord(my + 4) + "\" font-size=\"12\">" +
             esc(text) + "</text>";
    if (g.erroring)
      marks += "<circle class=\"mark-errors\" cx=\"" + coord(mx) + "\" cy=\"" + coord(my) +
               "\" r=\"5\" fill=\"#000\" stroke=\"#fff\" stroke-width=\"1.5\"><title>" + esc(title) + "</title></circle>";
    if (!g.suspects.empty()) marks += badge(mx - 30, my, g.suspects);
  }
  o += "</g><g class=\"tiers\">";
  for (int tier = tiers; tier >= 0; --tier) {
    if (tier == 0 && !t.hosts) continue;
    std::vector<int> sus;
    std::size_t problems = 0, leaves_with = 0;
    std::string text;
    if (tier == 0) {
      for (const auto& sw : t.switches) {
        sus.insert(sus.end(), sw.host_suspects.begin(), sw.host_suspects.end());
        problems += sw.host_problems;
        leaves_with += sw.hosts > 0;
      }
      text = plural(t.hosts, "HCA", "HCAs") + " on " + plural(leaves_with, "leaf", "leaves");
    } else {
      const auto& row = t.tiers[static_cast<std::size_t>(tier - 1)];
      for (int i : row) {
        const auto& sw = t.switches[static_cast<std::size_t>(i)];
        sus.insert(sus.end(), sw.suspects.begin(), sw.suspects.end());
      }
      text = tier_name(t, tier) + ": " + plural(row.size(), "switch", "switches");
    }
    std::sort(sus.begin(), sus.end());
    std::string title = text;
    if (tier == 0 && problems) title += "\n" + std::to_string(problems) + " host cables not active, degraded or with errors";
    if (tier > 0) {
      std::string names;
      const auto& row = t.tiers[static_cast<std::size_t>(tier - 1)];
      for (std::size_t i = 0; i < row.size() && i < kMaxHoverLines; ++i)
        names += (i ? ", " : "") + t.switches[static_cast<std::size_t>(row[i])].name;
      if (row.size() > kMaxHoverLines) names += ", ...";
      title += "\n" + names;
    }
    if (!sus.empty()) title += "\nSUSPECT " + numbers(sus);
    const double y = row_y(tier);
    o += "<g class=\"tier\" data-tier=\"" + std::to_string(tier) + "\"" +
         (sus.empty() ? "" : " data-suspect=\"" + esc(numbers(sus)) + "\"") + "><title>" + esc(title) +
         "</title><rect x=\"" + coord(x) + "\" y=\"" + coord(y) + "\" width=\"" + coord(bw) + "\" height=\"" + coord(bh) +
         "\" rx=\"4\" fill=\"" + (tier == 0 ? (problems ? "#fde3cf" : "#fff") : "#f2f2f2") + "\" stroke=\"" +
         (sus.empty() ? "#333" : kSuspect) + "\" stroke-width=\"" + (sus.empty() ? "1" : "4") + "\"/><text x=\"" +
         coord(x + bw / 2) + "\" y=\"" + coord(y + bh / 2 + 5) + "\" font-size=\"14\" text-anchor=\"middle\">" +
         esc((tier == 0 && problems ? "! " : "") + text) + "</text></g>";
    if (!sus.empty()) marks += badge(x - 24, y + bh / 2, sus);
  }
  o += "</g><g class=\"marks\">" + marks + "</g></svg>";
  return o;
}

std::string legend(bool whole) {
  auto sample = [](LinkLook l) {
    return "<svg width=\"30\" height=\"14\" viewBox=\"0 0 30 14\" aria-hidden=\"true\"><line x1=\"2\" y1=\"7\" x2=\"28\" "
           "y2=\"7\"" +
           link_attrs(l, 3) + "/></svg> ";
  };
  std::string o = "<ul class=\"legend topology-legend\"><li>" + sample(LinkLook::Active) +
                  "active at its tier's width and speed</li><li>" + sample(LinkLook::Degraded) +
                  "degraded: narrower or slower than its tier</li><li>" + sample(LinkLook::NotActive) +
                  "not active (an end Down, Init or Armed)</li><li>" + sample(LinkLook::Unknown) +
                  "state not read</li><li><svg width=\"14\" height=\"14\" viewBox=\"0 0 14 14\" aria-hidden=\"true\">"
                  "<circle cx=\"7\" cy=\"7\" r=\"4.5\" fill=\"#000\" stroke=\"#fff\" stroke-width=\"1.5\"/></svg> "
                  "error counters above zero" +
                  std::string(whole ? "" : " (in the group)") +
                  "</li><li><svg width=\"30\" height=\"16\" viewBox=\"0 0 30 16\" aria-hidden=\"true\"><rect x=\"1\" "
                  "y=\"1\" width=\"28\" height=\"14\" rx=\"3\" fill=\"" +
                  kSuspect + "\"/><text x=\"15\" y=\"12\" font-size=\"10\" text-anchor=\"middle\" fill=\"#fff\">#1"
                             "</text></svg> suspect of a cluster run, numbered as in the table</li>";
  if (whole) o += "<li>! a leaf with a host cable not active, degraded or with errors</li>";
  return o + "</ul>";
}

std::string problem_table(const Topology& t) {
  std::size_t total = 0;
  const auto rows = problem_links(t, kMaxProblemRows, &total);
  if (rows.empty()) return "<p>Every cable is active at its tier's width and speed, with no error counted.</p>";
  std::string o = "<h4>Cables not active, degraded or counting errors</h4><div class=\"scroll\"><table "
                  "class=\"fabric-links\"><thead><tr><th>cable</th><th>state</th><th>width, speed</th><th>tier "
                  "usual</th><th>errors</th><th>suspect</th></tr></thead><tbody>";
  for (int i : rows) {
    const TopoLink& l = t.links[static_cast<std::size_t>(i)];
    std::string errors;
    for (const auto& e : l.errors) errors += (errors.empty() ? "" : "; ") + e;
    for (const auto& id : l.finding_ids) errors += (errors.empty() ? "" : "; ") + id;
    o += "<tr class=\"fabric-link\" data-look=\"" + std::string(to_string(l.look)) + "\"><td class=\"mono\">" +
         esc(l.name) + "</td><td>" + esc(look_words(l.look)) +
         (l.look == LinkLook::NotActive || l.look == LinkLook::Unknown ? " (" + esc(l.lo_state + " / " + l.hi_state) + ")"
                                                                       : std::string()) +
         "</td><td>" + esc(l.width || l.speed != fabric::Speed::Unknown ? rate(l.width, l.speed) : "") + "</td><td>" +
         esc(l.tier_width ? rate(l.tier_width, l.tier_speed) : "") + "</td><td class=\"mono\">" + esc(errors) +
         "</td><td>" + esc(numbers(l.suspects)) + "</td></tr>";
  }
  o += "</tbody></table></div>";
  if (total > rows.size())
    o += "<p class=\"muted\">" + std::to_string(total - rows.size()) +
         " more not listed here (the worst first); <code>fabscope fabric --from FILE</code> lists every one.</p>";
  return o;
}

std::string fabric_heading(const Input& in, const Topology& t) {
  std::size_t degraded = 0, not_active = 0, erroring = 0;
  for (const auto& l : t.links) {
    degraded += l.look == LinkLook::Degraded;
    not_active += l.look == LinkLook::NotActive;
    erroring += l.erroring();
  }
  const auto& s = in.fabric.subnet;
  std::string o = "<h3>" + esc(in.label) + ": " + plural(t.switches.size(), "switch", "switches") + " in " +
                  plural(t.tiers.size(), "tier", "tiers") + ", " + plural(t.hosts, "HCA", "HCAs") + ", " +
                  plural(t.links.size(), "cable", "cables") + "</h3><p>Swept from " +
                  esc(s.source.empty() ? "?" : s.source) + (s.swept_at.empty() ? "" : " at " + esc(s.swept_at)) + ": " +
                  std::to_string(degraded) + " degraded, " + std::to_string(not_active) + " not active, " +
                  std::to_string(erroring) + " with errors" +
                  (in.fabric.judged ? "; its findings are in the findings table." : " (a --save file: not judged).") +
                  "</p>";
  if (t.hosts_alone)
    o += "<p class=\"muted\">" + plural(t.hosts_alone, "HCA is", "HCAs are") + " cabled to no switch (not drawn).</p>";
  return o;
}

}  // namespace

std::string suspects_table(const cluster::SavedResult& c, const std::string& label, int first) {
  const cluster::SavedLocalization& l = c.localization;
  std::string o = "<p>Suspects of " + esc(label) + ": " + std::to_string(l.observations) + " pair directions routed (" +
                  std::to_string(l.slow) + " slow, " + std::to_string(l.fast) + " fast, " +
                  std::to_string(l.unrouted) + " not routed), " + std::to_string(l.unexplained) +
                  " slow ones no suspect explains.</p>";
  if (l.suspects.empty()) return o + "<p>No cable or switch is shared by enough slow directions to be named.</p>";
  o += "<div class=\"scroll\"><table class=\"suspects\"><thead><tr><th>#</th><th>kind</th><th>suspect</th><th>slow "
       "directions explained</th><th>crossing it: slow, fast</th><th>not told apart from</th><th>slow examples</th>"
       "</tr></thead><tbody>";
  for (std::size_t k = 0; k < l.suspects.size(); ++k) {
    const cluster::SavedSuspect& x = l.suspects[k];
    std::string alts, ex;
    for (const auto& a : x.alternatives) alts += (alts.empty() ? "" : "; ") + a;
    for (const auto& e : x.examples) {
      const std::string from = e.from_name.empty() ? c.names[static_cast<std::size_t>(e.from)] : e.from_name;
      const std::string to = e.to_name.empty() ? c.names[static_cast<std::size_t>(e.to)] : e.to_name;
      ex += (ex.empty() ? "" : "; ") + from + " \xE2\x86\x92 " + to;
    }
    std::string kind = x.kind == "host_cable" ? "host cable" : x.kind;
    if (x.host_rank >= 0) kind += " of " + c.names[static_cast<std::size_t>(x.host_rank)];
    o += "<tr class=\"suspect\" data-suspect=\"" + std::to_string(first + static_cast<int>(k)) + "\" data-kind=\"" +
         esc(x.kind) + "\"><td class=\"num\">#" + std::to_string(first + static_cast<int>(k)) + "</td><td>" + esc(kind) +
         "</td><td class=\"mono\">" + esc(x.name) + "</td><td class=\"num\">" + std::to_string(x.explained) +
         "</td><td class=\"num\">" + std::to_string(x.slow_crossing) + ", " + std::to_string(x.fast_crossing) +
         "</td><td class=\"mono\">" + esc(alts) + "</td><td>" + esc(ex) + "</td></tr>";
  }
  return o + "</tbody></table></div>";
}

const Input* fabric_for_cluster(const Report& r, const cluster::SavedResult& c, std::vector<HeatGroup>* groups,
                                std::string* why) {
  std::string first_why;
  for (int pass = 0; pass < 2; ++pass)
    for (const auto& in : r.inputs) {
      if (in.kind != InputKind::Fabric) continue;
      const auto& s = in.fabric.subnet;
      // First the fabric the localization was made on, then any that places the nodes.
      if (pass == 0 && (!c.localization.attempted || !localization_mismatch(s, c.localization).empty())) continue;
      std::string w;
      const Topology t = build_topology(s, {});
      auto g = leaf_groups(c, s, t, &w);
      if (!g.empty()) {
        if (groups) *groups = std::move(g);
        return &in;
      }
      if (first_why.empty()) first_why = in.label + ": " + w;
    }
  if (why) *why = first_why;
  return nullptr;
}

std::string render_fabric(const Report& r) {
  std::string o;
  int k = 0;
  for (const auto& in : r.inputs) {
    if (in.kind != InputKind::Fabric) continue;
    if (o.empty())
      o = "<section id=\"fabric\"><h2>Fabric</h2><p class=\"muted\">The InfiniBand subnet as <code>fabscope fabric</code> swept "
          "it: switches in tiers from the HCAs up (leaves hold HCAs, spines link leaves, ...), every cable coloured "
          "by its state. Hover a cable for both ends, its width and speed and its error counters.</p>";
    ++k;
    Topology t = build_topology(in.fabric.subnet, in.fabric.findings);
    // The clusters localized on this fabric: their suspects are marked, numbered in input order.
    std::string suspects, notes;
    int next = 1;
    for (const auto& c : r.inputs) {
      if (c.kind != InputKind::Cluster || !c.cluster.localization.attempted) continue;
      const std::string why = localization_mismatch(in.fabric.subnet, c.cluster.localization);
      if (!why.empty()) {
        notes += "<li>" + esc(c.label) + ": not drawn here, " + esc(why) + "</li>";
        continue;
      }
      mark_suspects(t, c.cluster.localization.suspects, next);
      suspects += suspects_table(c.cluster, c.label, next);
      next += static_cast<int>(c.cluster.localization.suspects.size());
    }
    const bool whole = !t.aggregated();
    o += "<div class=\"fabric\" id=\"fabric-" + std::to_string(k) + "\" data-switches=\"" +
         std::to_string(t.switches.size()) + "\" data-view=\"" + (whole ? "whole" : "tiers") + "\">" +
         fabric_heading(in, t);
    if (t.switches.empty()) {
      o += "<p>No switch in this sweep: nothing to draw.</p>";
    } else {
      o += "<figure>" + (whole ? whole_picture(in, k, t) : tier_picture(in, k, t)) + "<figcaption>" + legend(whole);
      if (!whole)
        o += std::to_string(t.switches.size()) + " switches are more than the " + std::to_string(kMaxWholeSwitches) +
             " drawn one by one: one box per tier, the cables between two tiers as one line with their counts "
             "(hover for the names). The table below lists the cables that need a look.";
      o += "</figcaption></figure>";
    }
    if (!suspects.empty()) o += "<h4>Suspects: where the slow pairs of a cluster run meet</h4>" + suspects;
    if (!notes.empty())
      o += "<p class=\"muted\">Cluster runs localized on another fabric (their suspects' node numbers would name other "
           "switches here):</p><ul class=\"muted\">" + notes + "</ul>";
    o += problem_table(t) + "</div>";
  }
  if (!o.empty()) o += "</section>";
  return o;
}

}  // namespace fabscope::report

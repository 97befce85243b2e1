#include "cluster/render.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "checks/render.hpp"
#include "core/strings.hpp"
#include "core/table.hpp"

namespace fabscope::cluster {

namespace {

std::string cut(const std::string& s, std::size_t w) {
  if (s.size() <= w) return s;
  if (w <= 1) return s.substr(0, w);
  return s.substr(0, w - 1) + "~";
}

// "rdma 8, tcp 2" (pairs per engine that ran), "none" when nothing ran.
std::string engine_counts(const ClusterInput& in) {
  std::vector<std::pair<std::string, std::size_t>> n;
  for (const auto& p : in.pair_results) {
    const std::string e = p.engine.empty() ? "not measured" : p.engine;
    auto it = std::find_if(n.begin(), n.end(), [&](const auto& x) { return x.first == e; });
    if (it == n.end()) n.push_back({e, 1});
    else ++it->second;
  }
  std::string out;
  for (const auto& [e, c] : n) out += (out.empty() ? "" : ", ") + e + " " + std::to_string(c);
  return out.empty() ? "none" : out;
}

}  // namespace

std::string render_consistency(const Consistency& c, std::size_t width) {
  std::ostringstream os;
  std::vector<const AttributeView*> differing;
  std::vector<std::string> same;
  for (const auto& a : c.attributes) {
    if (!a.odd.empty()) differing.push_back(&a);
    else if (!a.reference.empty() && a.key.rfind("env.", 0) != 0) same.push_back(a.title);
  }
  std::size_t env_same = 0;
  for (const auto& a : c.attributes)
    if (a.odd.empty() && a.key.rfind("env.", 0) == 0) ++env_same;
  if (differing.empty()) {
    os << "consistency: every compared attribute is the same on all " << c.nodes.size() << " nodes\n";
  } else {
    std::vector<bool> odd_node(c.nodes.size(), false);
    for (const auto* a : differing)
      for (std::size_t i : a->odd) odd_node[i] = true;
    std::vector<std::string> headers{"NODE"};
    for (const auto* a : differing) headers.push_back(a->key);
    core::Table t(headers);
    std::vector<std::string> ref{"(majority)"};
    for (const auto* a : differing) ref.push_back(a->reference.empty() ? "-" : a->reference);
    t.add(ref);
    std::size_t shown = 0, odd_total = 0;
    const std::size_t kMaxRows = 40;
    for (std::size_t i = 0; i < c.nodes.size(); ++i) {
      if (!odd_node[i]) continue;
      ++odd_total;
      if (shown == kMaxRows) continue;
      ++shown;
      std::vector<std::string> row{c.nodes[i]};
      for (const auto* a : differing) {
        const std::string& v = a->values[i];
        const bool odd = std::find(a->odd.begin(), a->odd.end(), i) != a->odd.end();
        row.push_back(odd ? "*" + v : (v.empty() ? "?" : "="));
      }
      t.add(row);
    }
    os << "consistency: " << differing.size() << " attribute(s) differ ('*' another value than the majority's, "
       << "'=' the majority's)\n";
    os << t.render(width);
    if (odd_total > shown)
      os << "... and " << (odd_total - shown) << " more node(s) with odd values (--json lists them all)\n";
    os << (c.nodes.size() - odd_total) << " other node(s) hold the majority value in every column\n";
  }
  if (!same.empty()) {
    std::string line = "same on every node: ";
    for (std::size_t i = 0; i < same.size(); ++i) line += (i ? ", " : "") + same[i];
    if (env_same) line += ", " + std::to_string(env_same) + " planned NCCL variable(s)";
    for (const auto& l : checks::wrap_lines(line, width)) os << l << "\n";
  }
  return os.str();
}

std::string render_matrix(int n, const std::vector<PairResult>& pairs, const std::vector<std::string>& names,
                          double median_gbps, std::size_t width) {
  std::ostringstream os;
  if (n < 2 || pairs.empty()) return "";
  const std::size_t N = static_cast<std::size_t>(n);
  auto name = [&](std::size_t i) { return i < names.size() ? names[i] : "rank" + std::to_string(i); };
  if (N <= 10) {
    // Numbers: row = sender, column = receiver, Gb/s.
    std::vector<std::vector<std::string>> cell(N, std::vector<std::string>(N, "."));
    for (std::size_t i = 0; i < N; ++i) cell[i][i] = "-";
    auto fmt = [](const std::optional<double>& v) { return v ? core::format_double(*v, 1) : std::string("x"); };
    for (const auto& p : pairs) {
      if (p.a < 0 || p.b < 0 || static_cast<std::size_t>(p.a) >= N || static_cast<std::size_t>(p.b) >= N) continue;
      cell[static_cast<std::size_t>(p.a)][static_cast<std::size_t>(p.b)] = fmt(p.a_to_b_gbps);
      cell[static_cast<std::size_t>(p.b)][static_cast<std::size_t>(p.a)] = fmt(p.b_to_a_gbps);
    }
    std::vector<std::string> headers{"FROM \\ TO"};
    for (std::size_t j = 0; j < N; ++j) headers.push_back(cut(name(j), 8));
    core::Table t(headers);
    for (std::size_t j = 1; j <= N; ++j) t.align_right(j);
    for (std::size_t i = 0; i < N; ++i) {
      std::vector<std::string> row{cut(name(i), 16)};
      for (std::size_t j = 0; j < N; ++j) row.push_back(cell[i][j]);
      t.add(row);
    }
    os << "pairwise bandwidth, Gb/s (row sends to column; '.' not measured, 'x' failed):\n" << t.render(width);
    return os.str();
  }
  // Heat map: each cell the slowest pair between two blocks of nodes, relative to the median.
  const std::size_t label_w = 14;
  const std::size_t cells_max = width > label_w + 4 ? width - label_w - 2 : 1;
  const std::size_t block = (N + cells_max - 1) / cells_max;
  const std::size_t cells = (N + block - 1) / block;
  std::vector<double> worst(cells * cells, std::numeric_limits<double>::infinity());
  std::vector<bool> failed(cells * cells, false);
  for (const auto& p : pairs) {
    if (p.a < 0 || p.b < 0 || static_cast<std::size_t>(p.a) >= N || static_cast<std::size_t>(p.b) >= N) continue;
    const std::size_t a = static_cast<std::size_t>(p.a) / block, b = static_cast<std::size_t>(p.b) / block;
    auto v = p.value_gbps();
    for (auto [x, y] : {std::pair{a, b}, std::pair{b, a}}) {
      if (!p.error.empty()) failed[x * cells + y] = true;
      else if (v) worst[x * cells + y] = std::min(worst[x * cells + y], *v);
    }
  }
  auto glyph = [&](std::size_t x, std::size_t y) {
    if (failed[x * cells + y]) return 'x';
    const double w = worst[x * cells + y];
    if (!std::isfinite(w)) return x == y && block == 1 ? ' ' : '.';
    const double ratio = median_gbps > 0 ? w / median_gbps : 1.0;
    if (ratio >= 0.90) return '#';
    if (ratio >= 0.75) return '+';
    if (ratio >= 0.50) return '-';
    return '!';
  };
  os << "pairwise bandwidth, slower direction against the median pair (" << format_gbps(median_gbps)
     << " Gb/s):\n  '#' >= 90%, '+' >= 75%, '-' >= 50%, '!' below, 'x' failed, '.' not measured";
  if (block > 1) os << "\n  one cell: a block of " << block << " nodes, its slowest pair";
  os << "\n";
  for (std::size_t x = 0; x < cells; ++x) {
    std::string label = block == 1 ? cut(name(x), label_w - 1)
                                   : std::to_string(x * block) + "-" + std::to_string(std::min(N, (x + 1) * block) - 1);
    label.resize(label_w, ' ');
    std::string row = label;
    for (std::size_t y = 0; y < cells; ++y) row += glyph(x, y);
    // Trailing blanks would make a line look shorter than it is to a reader but not to a width test.
    while (!row.empty() && row.back() == ' ') row.pop_back();
    os << row << "\n";
  }
  return os.str();
}

std::string render_localization(const Localization& l, const std::vector<std::string>& names, std::size_t width) {
  std::ostringstream os;
  os << "\nwhere the slow pairs meet (routes from " << l.fabric_source << "):\n";
  if (!l.attempted) {
    for (const auto& line : checks::wrap_lines("  not located: " + l.why_not, width)) os << line << "\n";
    return os.str();
  }
  os << "  " << l.observations << " pair direction(s) routed: " << l.slow << " slow, " << l.fast << " fast";
  if (l.unrouted) os << ", " << l.unrouted << " not routed";
  os << "\n";
  auto rank = [&](int r) {
    return r >= 0 && static_cast<std::size_t>(r) < names.size() ? names[static_cast<std::size_t>(r)] : "rank" + std::to_string(r);
  };
  if (l.suspects.empty()) {
    os << (l.slow ? "  no cable or switch is shared by most slow directions and few fast ones\n"
                  : "  no slow direction to locate\n");
  } else {
    core::Table t({"#", "KIND", "COMPONENT", "SLOW", "FAST"});
    t.align_right(0);
    t.align_right(3);
    t.align_right(4);
    std::size_t k = 0;
    for (const auto& sp : l.suspects) {
      std::string kind = sp.kind == SuspectKind::HostCable ? "host" : to_string(sp.kind);
      std::string what = sp.name;
      if (sp.kind == SuspectKind::HostCable) what = rank(sp.host_rank) + " (NIC or cable): " + sp.name;
      t.add({std::to_string(++k), kind, cut(what, width > 40 ? width - 32 : 8),
             std::to_string(sp.slow_crossing) + "/" + std::to_string(l.slow),
             std::to_string(sp.fast_crossing) + "/" + std::to_string(l.fast)});
    }
    os << t.render(width);
    os << "  SLOW/FAST: slow and fast pair directions crossing it, of all routed\n";
    for (std::size_t i = 0; i < l.suspects.size(); ++i)
      if (!l.suspects[i].alternatives.empty()) {
        std::string alt = "  #" + std::to_string(i + 1) + " is crossed by exactly the same pairs as: ";
        for (std::size_t j = 0; j < l.suspects[i].alternatives.size(); ++j)
          alt += (j ? ", " : "") + l.suspects[i].alternatives[j];
        for (const auto& line : checks::wrap_lines(alt, width)) os << line << "\n";
      }
    if (l.unexplained) os << "  " << l.unexplained << " slow direction(s) explained by none of these\n";
  }
  for (const auto& n : l.notes) os << cut("  note: " + n, width) << "\n";
  return os.str();
}

std::string render_text(const ClusterResult& r, bool drain_ran, std::size_t width) {
  std::ostringstream os;
  const auto& in = r.input;
  os << "cluster: " << in.nodes.size() << " of " << in.world << " node(s) reported (launcher " << in.launcher << ")";
  if (!in.missing.empty()) {
    std::vector<std::string> names;
    for (const auto& m : in.missing) names.push_back(m.name);
    os << ", missing: " << name_list(names, 5);
  }
  os << "\n\n" << render_consistency(r.consistency, width);
  if (in.pairs.mode != PairsMode::None) {
    os << "\npairs " << pairs_name(in.pairs) << ": " << in.rounds << " round(s), " << in.pair_results.size()
       << " pair(s), engine " << (in.engine_mode.empty() ? "" : in.engine_mode + ": ") << engine_counts(in)
       << (in.engine.empty() ? "" : "; judged over " + in.engine) << "\n";
    // Why pairs did not run over the judged engine, one line per distinct reason.
    std::vector<std::pair<std::string, std::size_t>> reasons;
    for (const auto& p : in.pair_results) {
      if (p.engine == in.engine || p.engine_reason.empty()) continue;
      const std::string key = (p.engine.empty() ? "not measured" : p.engine) + ": " + p.engine_reason;
      auto it = std::find_if(reasons.begin(), reasons.end(), [&](const auto& x) { return x.first == key; });
      if (it == reasons.end()) reasons.push_back({key, 1});
      else ++it->second;
    }
    for (const auto& [why, count] : reasons) os << cut("  " + std::to_string(count) + " pair(s) " + why, width) << "\n";
    std::vector<std::string> names(static_cast<std::size_t>(std::max(in.world, 0)));
    for (std::size_t i = 0; i < names.size(); ++i) names[i] = "rank" + std::to_string(i);
    for (const auto& n : in.nodes)
      if (n.rank >= 0 && static_cast<std::size_t>(n.rank) < names.size()) names[static_cast<std::size_t>(n.rank)] = n.name;
    if (r.outliers.judged) {
      os << render_matrix(in.world, in.pair_results, names, r.outliers.median_gbps, width);
      os << "median pair " << format_gbps(r.outliers.median_gbps) << " Gb/s, MAD "
         << format_gbps(r.outliers.mad_gbps) << ", slow below "
         << format_gbps(r.outliers.threshold_gbps) << " Gb/s: " << r.outliers.slow_nodes.size()
         << " slow node(s), " << r.outliers.slow_links.size() << " slow link(s)\n";
    } else {
      os << render_matrix(in.world, in.pair_results, names, 0, width);
      os << "only " << r.outliers.measured << " pair(s) measured: too few to tell slow nodes or links apart\n";
    }
    if (in.fabric || !in.fabric_error.empty() || r.localization.attempted) os << render_localization(r.localization, names, width);
  }
  os << "\n";
  if (r.findings.empty()) os << "no findings\n";
  else os << checks::render_findings(r.findings, width, true);
  if (!r.drain.empty()) {
    os << "\n" << (drain_ran ? "drained:" : "to drain (fabscope cluster --drain runs these):") << "\n";
    // A long reason is continued with a backslash, the next line starting at column 0: the
    // shell drops backslash-newline inside double quotes too, so the line pastes as it was.
    for (const auto& c : drain_commands(r)) {
      std::string line = "  ";
      std::size_t pos = 0;
      while (pos < c.size()) {
        std::size_t sp = c.find(' ', pos);
        std::string word = c.substr(pos, sp == std::string::npos ? std::string::npos : sp - pos + 1);
        pos = sp == std::string::npos ? c.size() : sp + 1;
        if (line.size() + word.size() + 1 > width && line.find_first_not_of(' ') != std::string::npos) {
          os << line << "\\\n";
          line.clear();
        }
        line += word;
      }
      os << line << "\n";
    }
  }
  std::size_t fail = 0, warn = 0;
  for (const auto& f : r.findings) fail += f.severity == Severity::Fail, warn += f.severity == Severity::Warn;
  os << "\n" << r.findings.size() << " finding(s): " << fail << " fail, " << warn << " warn; exit code " << exit_code(r)
     << "\n";
  // Peer names, evidence and reasons come from other machines: printable at print time.
  return core::printable_lines(os.str());
}

}  // namespace fabscope::cluster

#include "report/mesh.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "core/strings.hpp"
#include "report/topology.hpp"

namespace fabscope::report {

std::optional<double> histogram_quantile(double q, std::vector<std::pair<double, double>> b) {
  if (std::isnan(q)) return std::nullopt;
  if (q < 0) return -INFINITY;
  if (q > 1) return INFINITY;
  std::sort(b.begin(), b.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  if (b.empty() || !(std::isinf(b.back().first) && b.back().first > 0)) return std::nullopt;
  // Equal bounds are one bucket; counts read at slightly different times may dip, and a
  // cumulative count never does: each is raised to the one before it.
  std::vector<std::pair<double, double>> c;
  for (const auto& x : b) {
    if (!c.empty() && c.back().first == x.first) c.back().second += x.second;
    else c.push_back(x);
  }
  for (std::size_t i = 1; i < c.size(); ++i) c[i].second = std::max(c[i].second, c[i - 1].second);
  if (c.size() < 2) return std::nullopt;
  const double total = c.back().second;
  if (!(total > 0)) return std::nullopt;
  double rank = q * total;
  std::size_t k = 0;  // the first finite bucket holding the rank-th observation; else the +Inf one
  while (k + 1 < c.size() && c[k].second < rank) ++k;
  if (k + 1 == c.size()) return c[c.size() - 2].first;
  if (k == 0 && c[0].first <= 0) return c[0].first;
  double start = 0, end = c[k].first, count = c[k].second;
  if (k > 0) {
    start = c[k - 1].first;
    count -= c[k - 1].second;
    rank -= c[k - 1].second;
  }
  return start + (end - start) * (rank / count);
}

std::optional<double> mesh_rtt_bound_seconds(const std::string& transport) {
  if (transport == "rdma_ib") return 5e-6;
  if (transport == "rdma_roce") return 10e-6;
  if (transport == "tcp") return 1e-3;
  return std::nullopt;
}

MeshPair judge_mesh_series(const MeshSeries& s) {
  MeshPair p;
  p.peer_label = s.peer;
  p.transport = s.transport;
  if (!s.buckets.empty()) p.rtt_count = s.buckets.back().second;
  else if (s.rtt_count) p.rtt_count = *s.rtt_count;
  if (!s.buckets.empty()) {
    p.p50_s = histogram_quantile(0.5, s.buckets);
    p.p99_s = histogram_quantile(0.99, s.buckets);
  }
  p.sent = s.sent.value_or(0);
  p.answered = s.answered.value_or(p.rtt_count);
  if (!s.errors.empty()) {
    for (const auto& [reason, n] : s.errors) p.lost += n;
    if (p.answered + p.lost > 0) p.loss = p.lost / (p.answered + p.lost);
  } else if (s.sent && *s.sent > 0) {
    p.lost = std::max(0.0, *s.sent - p.answered);
    p.loss = p.lost / *s.sent;
  }
  p.up = s.up;
  p.bound_s = mesh_rtt_bound_seconds(s.transport);
  p.slow = p.bound_s && p.p99_s && *p.p99_s > *p.bound_s;
  p.lossy = p.loss && *p.loss > kMeshLossBound;
  p.no_answer = !p.p99_s && p.answered == 0 && (p.sent > 0 || p.lost > 0);
  return p;
}

namespace {

std::string without_port(const std::string& label) {
  if (!label.empty() && label.front() == '[') {  // "[fd00::7]:9418"
    auto close = label.find(']');
    return close == std::string::npos ? label : label.substr(1, close - 1);
  }
  auto colon = label.find(':');
  if (colon == std::string::npos || label.find(':', colon + 1) != std::string::npos) return label;  // a bare IPv6
  const std::string port = label.substr(colon + 1);
  if (port.empty() || !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; })) return label;
  return label.substr(0, colon);
}

bool is_address(const std::string& host) {
  return host.find(':') != std::string::npos ||
         std::all_of(host.begin(), host.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
}

std::string short_name(const std::string& host) {
  if (is_address(host)) return host;
  return host.substr(0, host.find('.'));
}

}  // namespace

MeshGrid build_mesh_grid(const std::vector<const Input*>& inputs, std::size_t max_blocks) {
  MeshGrid g;
  max_blocks = std::max<std::size_t>(max_blocks, 1);
  // The probers, first snapshot of a name kept.
  std::vector<const Input*> kept;
  std::map<std::string, const Input*> by_name;
  for (const Input* in : inputs) {
    auto [it, fresh] = by_name.emplace(in->mesh.node, in);
    if (!fresh) {
      g.notes.push_back(in->file + ": a second snapshot of node " + in->mesh.node + " (the first: " + it->second->file +
                        "), left out");
      continue;
    }
    kept.push_back(in);
  }
  g.snapshots = kept.size();
  // Each peer label to a name: a prober's, else the label itself.
  std::map<std::string, std::size_t> exact, host, shortn;  // -> index into kept; shortn: SIZE_MAX when shared
  for (std::size_t i = 0; i < kept.size(); ++i) {
    const std::string& n = kept[i]->mesh.node;
    exact.emplace(n, i);
    host.emplace(without_port(n), i);
    auto [it, fresh] = shortn.emplace(short_name(without_port(n)), i);
    if (!fresh && it->second != i) it->second = SIZE_MAX;
  }
  auto resolve = [&](const std::string& label) -> std::string {
    if (auto it = exact.find(label); it != exact.end()) return kept[it->second]->mesh.node;
    const std::string h = without_port(label);
    if (auto it = host.find(h); it != host.end()) return kept[it->second]->mesh.node;
    if (!is_address(h))
      if (auto it = shortn.find(short_name(h)); it != shortn.end() && it->second != SIZE_MAX)
        return kept[it->second]->mesh.node;
    return label;
  };
  std::vector<std::string> names;
  for (const Input* in : kept) names.push_back(in->mesh.node);
  for (const Input* in : kept)
    for (const auto& s : in->mesh.series)
      if (s.peer != "_other") names.push_back(resolve(s.peer));
      else g.other = true;
  std::sort(names.begin(), names.end(), natural_less);
  names.erase(std::unique(names.begin(), names.end()), names.end());
  g.names = names;
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < names.size(); ++i) index.emplace(names[i], i);
  g.snapshot_of.assign(names.size(), -1);
  for (std::size_t i = 0; i < kept.size(); ++i) g.snapshot_of[index[kept[i]->mesh.node]] = static_cast<int>(i);

  // Blocks of consecutive names.
  const std::size_t n = names.size();
  g.block = n <= max_blocks ? 1 : (n + max_blocks - 1) / max_blocks;
  std::vector<std::size_t> block_of(n);
  for (std::size_t i = 0; i < n; i += g.block) {
    MeshBlock b;
    for (std::size_t k = i; k < std::min(n, i + g.block); ++k) {
      b.names.push_back(k);
      b.snapshot = b.snapshot || g.snapshot_of[k] >= 0;
      block_of[k] = g.blocks.size();
    }
    g.blocks.push_back(std::move(b));
  }
  const std::size_t cols = g.blocks.size() + (g.other ? 1 : 0);
  std::vector<MeshCell> cells(g.blocks.size() * cols);
  for (const Input* in : kept) {
    const std::size_t prober = index[in->mesh.node];
    for (const auto& s : in->mesh.series) {
      MeshPair p = judge_mesh_series(s);
      p.prober = prober;
      p.peer = s.peer == "_other" ? n : index[resolve(s.peer)];
      const std::size_t col = p.peer == n ? g.blocks.size() : block_of[p.peer];
      MeshCell& c = cells[block_of[prober] * cols + col];
      c.pairs.push_back(g.pairs.size());
      g.pairs.push_back(std::move(p));
    }
  }
  for (std::size_t i = 0; i < cells.size(); ++i) {
    MeshCell& c = cells[i];
    if (c.pairs.empty()) continue;
    c.row = i / cols;
    c.col = i % cols;
    c.no_answer = true;
    auto worst = [](std::optional<double>& into, const std::optional<double>& v) {
      if (v && (!into || *v > *into)) into = v;
    };
    for (std::size_t k : c.pairs) {
      const MeshPair& p = g.pairs[k];
      worst(c.p50_s, p.p50_s);
      worst(c.p99_s, p.p99_s);
      worst(c.loss, p.loss);
      c.rtt_count += p.rtt_count;
      c.sent += p.sent;
      c.answered += p.answered;
      c.lost += p.lost;
      c.slow = c.slow || p.slow;
      c.lossy = c.lossy || p.lossy;
      c.no_answer = c.no_answer && !p.p99_s;
    }
    g.cells.push_back(std::move(c));
  }
  return g;
}

const std::vector<double>& mesh_scale_edges_seconds() {
  static const std::vector<double> e = {5e-6, 10e-6, 20e-6, 50e-6, 100e-6, 200e-6, 1e-3, 10e-3};
  return e;
}

int mesh_bin(double seconds) {
  const auto& e = mesh_scale_edges_seconds();
  int b = 0;
  while (b < static_cast<int>(e.size()) && seconds > e[static_cast<std::size_t>(b)]) ++b;
  return b;
}

std::string format_seconds(double s) {
  if (std::isnan(s)) return "NaN";
  if (std::isinf(s)) return s > 0 ? "+Inf s" : "-Inf s";
  const char* unit = "s";
  double v = s;
  if (std::fabs(s) < 1e-3) v = s * 1e6, unit = "\xC2\xB5s";
  else if (std::fabs(s) < 1) v = s * 1e3, unit = "ms";
  return core::format_double("%.3g ", v) + unit;
}

}  // namespace fabscope::report

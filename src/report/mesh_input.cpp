// One node's probe mesh snapshot: its /metrics text (Prometheus exposition, read by
// exposition.cpp) or the same series in the `exporter --once --json` layout (fabscope.metrics, histogram samples named
// by family + "suffix"). Only the per-peer fabscope_mesh_* series are read; the rest of the file
// is checked for syntax (text) or skipped (JSON).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/strings.hpp"
#include "report/exposition.hpp"
#include "core/fields.hpp"
#include "report/load.hpp"
#include "report/metric_samples.hpp"

namespace fabscope::report {

namespace {

constexpr std::size_t kMaxSeries = 4096;   // (peer, transport) per node; the exporter labels 64 at most
constexpr std::size_t kMaxMeshBuckets = 256;   // per histogram; the exporter writes 33
constexpr std::size_t kMaxMeshSamples = 200000;

constexpr std::string_view kMeshPrefix = "fabscope_mesh_";

bool is_mesh(std::string_view name) { return name.starts_with(kMeshPrefix); }

using Raw = MetricSample;

[[noreturn]] void fail(const Raw& r, const std::string& what) { sample_fail(r, what); }
const std::string& need(const Raw& r, std::string_view key) { return need_label(r, key); }
double count(const Raw& r) { return count_value(r); }

MeshDoc mesh_from_samples(const std::string& file, const std::string& node, const std::vector<Raw>& raw,
                          const std::string& format) {
  if (raw.empty())
    throw Error(file + ": no fabscope_mesh_* series: not a snapshot of `fabscope exporter --mesh` (was it started "
                       "with --mesh?)");
  MeshDoc d;
  d.node = node;
  d.format = format;
  std::map<std::pair<std::string, std::string>, MeshSeries> series;
  std::map<std::pair<std::string, std::string>, std::map<double, double>> buckets;
  auto of = [&](const Raw& r) -> MeshSeries& {
    auto key = std::make_pair(need(r, "peer"), need(r, "transport"));
    auto it = series.find(key);
    if (it == series.end()) {
      if (series.size() >= kMaxSeries)
        fail(r, "more than " + std::to_string(kMaxSeries) + " (peer, transport) series in one snapshot");
      it = series.emplace(key, MeshSeries{key.first, key.second, {}, {}, {}, {}, {}, {}, {}}).first;
    }
    return it->second;
  };
  auto once = [&](const Raw& r, std::optional<double>& into) {
    if (into) fail(r, "the series is there twice (one node's snapshot has each series once)");
    into = count(r);
  };
  for (const Raw& r : raw) {
    const std::string& n = r.name;
    if (n == "fabscope_mesh_rtt_seconds_bucket") {
      MeshSeries& s = of(r);
      const std::string& le = need(r, "le");
      double bound = 0;
      if (!parse_expo_value(le, bound) || std::isnan(bound)) fail(r, "label 'le' \"" + core::printable(le) + "\" is not a number");
      auto& b = buckets[{s.peer, s.transport}];
      if (b.size() >= kMaxMeshBuckets) fail(r, "more than " + std::to_string(kMaxMeshBuckets) + " buckets in one histogram");
      if (!b.emplace(bound, count(r)).second) fail(r, "bucket le=\"" + core::printable(le) + "\" is there twice");
    } else if (n == "fabscope_mesh_rtt_seconds_count") {
      once(r, of(r).rtt_count);
    } else if (n == "fabscope_mesh_rtt_seconds_sum") {
      once(r, of(r).rtt_sum_seconds);
    } else if (n == "fabscope_mesh_probes_sent_total") {
      once(r, of(r).sent);
    } else if (n == "fabscope_mesh_probes_answered_total") {
      once(r, of(r).answered);
    } else if (n == "fabscope_mesh_probe_errors_total") {
      MeshSeries& s = of(r);
      const std::string& reason = need(r, "reason");
      if (!s.errors.emplace(reason, count(r)).second) fail(r, "reason \"" + core::printable(reason) + "\" is there twice");
    } else if (n == "fabscope_mesh_peer_up") {
      MeshSeries& s = of(r);
      if (s.up) fail(r, "the series is there twice (one node's snapshot has each series once)");
      if (r.value != 0 && r.value != 1) fail(r, "value is not 0 or 1");
      s.up = r.value;
    } else if (n == "fabscope_mesh_peers") {
      if (const std::string* st = r.label("state"); st && *st == "listed") d.peers_listed = count(r);
    } else if (n == "fabscope_mesh_peer_label_limit") {
      d.peer_label_limit = count(r);
    }
  }
  for (auto& [key, s] : series) {
    auto it = buckets.find(key);
    if (it != buckets.end()) {
      if (!std::isinf(it->second.rbegin()->first) || it->second.rbegin()->first < 0)
        throw Error(file + ": fabscope_mesh_rtt_seconds of peer \"" + core::printable(key.first) + "\" transport \"" +
                    core::printable(key.second) + "\" has no le=\"+Inf\" bucket");
      // Buckets are cumulative: a count below the one of a lower bound is not a histogram.
      double below = 0, below_le = 0;
      bool first = true;
      for (const auto& [le, n] : it->second) {
        if (!first && n < below)
          throw Error(file + ": fabscope_mesh_rtt_seconds of peer \"" + core::printable(key.first) + "\" transport \"" +
                      core::printable(key.second) + "\": bucket le=\"" + core::format_double("%g", le) + "\" counts " +
                      core::format_double("%g", n) + ", fewer than le=\"" + core::format_double("%g", below_le) + "\" (" +
                      core::format_double("%g", below) + "); buckets are cumulative");
        below = n;
        below_le = le;
        first = false;
      }
      s.buckets.assign(it->second.begin(), it->second.end());
    }
    d.series.push_back(std::move(s));
  }
  return d;
}

}  // namespace

MeshDoc mesh_from_exposition(const std::string& file, const std::string& node, std::string_view text) {
  auto raw = samples_from_exposition(file, text, is_mesh, kMaxMeshSamples);
  return mesh_from_samples(file, checked_node_name(file, node), raw, "text");
}

MeshDoc mesh_from_json(const std::string& file, const std::string& node, const json& doc) {
  auto raw = samples_from_metrics_json(file, doc, is_mesh, kMaxMeshSamples, "mesh");
  return mesh_from_samples(file, checked_node_name(file, node), raw, "json");
}

Input input_from_mesh_text(const std::string& file, const std::string& node, std::string_view text) {
  Input in = metrics_input(file, node, text, InputKind::Mesh, "a mesh snapshot");
  if (in.schema == "prometheus-text") in.mesh = mesh_from_exposition(file, node, text);
  else in.mesh.node = checked_node_name(file, node);
  return in;
}

std::vector<Input> load_mesh_file(const std::string& arg) {
  auto [node, path] = named_file("--mesh", arg);
  std::vector<Input> out;
  out.push_back(input_from_mesh_text(path, node, core::read_input(path, kMaxInputBytes)));
  return out;
}

}  // namespace fabscope::report

// fabscope.cluster (docs/formats.md) read back through core::Fields: every error names the file
// and the field. Keys added to version 1 after its first release read as "not reported" when
// absent (docs/formats.md lists them); a key that is present is checked.
#include "cluster/saved_result.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/fields.hpp"

namespace fabscope::cluster {

namespace {

using core::Fields;

int rank_field(const Fields& f, const std::string& key, int world) {
  std::int64_t r = f.integer(key);
  if (r < 0 || r >= world)
    f.fail(key, "rank " + std::to_string(r) + " outside the job's " + std::to_string(world) + " ranks");
  return static_cast<int>(r);
}

std::optional<double> gbps_field(const Fields& f, const std::string& key) {
  auto v = f.opt_num(key);
  if (v && *v < 0) f.fail(key, "negative bandwidth " + std::to_string(*v));
  return v;
}

std::size_t count(const Fields& f, const std::string& key) {
  const std::int64_t v = f.opt_int(key).value_or(0);
  if (v < 0) f.fail(key, "expected a count, got " + std::to_string(v));
  return static_cast<std::size_t>(v);
}

int node_index(const Fields& f, const std::string& key) {
  const std::int64_t v = f.integer(key);
  if (v < 0 || v > (1 << 20)) f.fail(key, "expected a node index from 0, got " + std::to_string(v));
  return static_cast<int>(v);
}

int port_number(const Fields& f, const std::string& key) {
  const std::int64_t v = f.integer(key);
  if (v < 0 || v > 255) f.fail(key, "expected a port number from 0 to 255, got " + std::to_string(v));
  return static_cast<int>(v);
}

std::string severity_word(const Fields& f, const std::string& key) {
  std::string w = f.str(key);
  if (w != "ok" && w != "info" && w != "warn" && w != "fail")
    f.fail(key, "expected ok, info, warn or fail, got \"" + w + "\"");
  return w;
}

SavedLocalization localization_from(const Fields& l, int world) {
  SavedLocalization x;
  x.attempted = l.boolean_or("attempted", false);
  x.why_not = l.str_or("why_not", "");
  x.fabric_source = l.str_or("fabric_source", "");
  x.threshold_gbps = gbps_field(l, "threshold_gbps");
  x.observations = count(l, "observations");
  x.slow = count(l, "slow");
  x.fast = count(l, "fast");
  x.unrouted = count(l, "unrouted");
  x.unexplained = count(l, "unexplained");
  x.notes = l.strings("notes");
  if (!l.has("suspects")) return x;
  for (const auto& s : l.array("suspects")) {
    SavedSuspect y;
    y.kind = s.str("kind");
    y.name = s.str("name");
    // Node indexes point into the fabric file of an InfiniBand run; a suspect placed by LLDP
    // neighbours (RoCE: a top-of-rack switch, its uplinks, a host's cable) has none.
    if (y.kind == "switch") {
      if (s.has("node_index")) y.a_node = node_index(s, "node_index");
    } else if (y.kind == "cable" || y.kind == "host_cable" || y.kind == "uplinks") {
      if (s.has("a") || s.has("b")) {
        Fields a = s.object("a"), b = s.object("b");
        y.a_node = node_index(a, "node_index");
        y.a_port = port_number(a, "port");
        y.b_node = node_index(b, "node_index");
        y.b_port = port_number(b, "port");
      }
      y.both_directions = s.boolean_or("both_directions", false);
    } else {
      s.fail("kind", "expected cable, host_cable, switch or uplinks, got \"" + y.kind.substr(0, 40) + "\"");
    }
    if (s.has("host_rank")) y.host_rank = rank_field(s, "host_rank", world);
    y.explained = count(s, "explained");
    y.slow_crossing = count(s, "slow_crossing");
    y.fast_crossing = count(s, "fast_crossing");
    y.alternatives = s.strings("alternatives");
    if (s.has("examples"))
      for (const auto& e : s.array("examples"))
        y.examples.push_back({rank_field(e, "from", world), rank_field(e, "to", world), e.str_or("from_name", ""),
                              e.str_or("to_name", "")});
    x.suspects.push_back(std::move(y));
  }
  return x;
}

SavedNode node_from(const Fields& n) {
  SavedNode x;
  std::int64_t r = n.integer("rank");
  if (r < 0 || r >= kMaxSavedRanks) n.fail("rank", "out of range: " + std::to_string(r));
  x.rank = static_cast<int>(r);
  x.name = n.str_or("name", "");
  x.fabscope_version = n.str_or("fabscope_version", "");
  x.error = n.str_or("error", "");
  if (n.has("findings")) x.findings = n.array("findings").size();
  // Every key below was added to version 1 after its first release (docs/formats.md): absent in
  // a file of an earlier fabscope, each reads as "not reported" (no RDMA endpoint, no switch
  // port, no InfiniBand port), never as a value.
  if (n.has("ib_ports")) {
    const auto ports = n.array("ib_ports");
    if (ports.size() > kMaxIbPorts) n.fail("ib_ports", "more than " + std::to_string(kMaxIbPorts) + " ports");
    for (const auto& p : ports) {
      IbPortFact ip;
      ip.port = p.str("port");
      const std::int64_t lid = p.integer("lid");
      if (lid < 0 || lid > 0xffff) p.fail("lid", "expected 0 to 65535, got " + std::to_string(lid));
      ip.lid = static_cast<std::uint32_t>(lid);
      ip.node_guid = p.str_or("node_guid", "");
      ip.state = p.str_or("state", "");
      x.ib_ports.push_back(std::move(ip));
    }
  }
  x.rdma_address = n.str_or("rdma_address", "");
  x.rdma_note = n.str_or("rdma_note", "");
  x.tor_reported = n.raw().contains("tor_switch");
  x.tor_switch = n.str_or("tor_switch", "");
  x.tor_port = n.str_or("tor_port", "");
  return x;
}

}  // namespace

SavedResult saved_result_from_json(const std::string& file, const json& doc) {
  if (!doc.is_object()) throw Error(file + ": not a JSON object (expected the output of fabscope cluster --json)");
  Fields top(file, doc);
  if (top.str_or("schema", "") != "fabscope.cluster")
    top.fail("schema", "not fabscope.cluster (a `fabscope cluster --json` result)");
  const std::int64_t version = top.integer("schema_version");
  if (version < 1 || version > kClusterSchemaVersion)
    top.fail("schema_version", "this fabscope reads versions 1 to " + std::to_string(kClusterSchemaVersion) +
                                   ", got " + std::to_string(version));
  SavedResult c;
  c.launcher = top.str_or("launcher", "");
  const std::int64_t world = top.integer("world");
  if (world < 0 || world > kMaxSavedRanks)
    top.fail("world", "expected 0 to " + std::to_string(kMaxSavedRanks) + " ranks, got " + std::to_string(world));
  c.world_written = c.world = static_cast<int>(world);

  for (const auto& n : top.array("nodes")) {
    c.nodes.push_back(node_from(n));
    // A rank at or past `world` can only come from a job that grew the world: widen it.
    c.world = std::max(c.world, c.nodes.back().rank + 1);
  }
  c.names.resize(static_cast<std::size_t>(c.world));
  for (std::size_t i = 0; i < c.names.size(); ++i) c.names[i] = "rank" + std::to_string(i);
  for (const auto& n : c.nodes)
    if (!n.name.empty()) c.names[static_cast<std::size_t>(n.rank)] = n.name;

  if (top.has("missing"))
    for (const auto& m : top.array("missing")) c.missing.emplace_back(m.str("name"), m.str_or("reason", ""));

  // attributes, findings, summary and pairwise.slow_nodes/slow_links: present in every file
  // fabscope writes; a result put together by another program for `cluster --from` may leave
  // them out (the report needs them and says so: report/cluster_input.cpp).
  if (top.has("attributes")) {
    for (const auto& a : top.array("attributes")) {
      SavedAttribute x;
      x.key = a.str("key");
      x.title = a.str_or("title", x.key);
      x.finding_id = a.str_or("finding_id", "");
      x.reference = a.str_or("reference", "");
      x.reference_count = static_cast<int>(a.opt_int("reference_count").value_or(0));
      x.tie = a.boolean_or("tie", false);
      x.values = a.strings("values");
      if (x.values.size() != c.nodes.size())
        a.fail("values", "holds " + std::to_string(x.values.size()) + " values for " +
                             std::to_string(c.nodes.size()) + " nodes");
      x.odd = a.strings("odd");
      c.attributes.push_back(std::move(x));
    }
  }

  Fields pw = top.object("pairwise");
  c.pairs_mode = pw.str_or("mode", "");
  c.engine = pw.str_or("engine", "");
  c.rounds = static_cast<std::size_t>(pw.opt_int("rounds").value_or(0));
  c.seconds_per_direction = pw.opt_num("seconds_per_direction").value_or(0);
  for (const auto& p : pw.array("pairs")) {
    PairResult x;
    x.a = rank_field(p, "a", c.world);
    x.b = rank_field(p, "b", c.world);
    if (x.a == x.b) p.fail("b", "a pair of rank " + std::to_string(x.a) + " with itself");
    x.a_to_b_gbps = gbps_field(p, "a_to_b_gbps");
    x.b_to_a_gbps = gbps_field(p, "b_to_a_gbps");
    x.error = p.str_or("error", "");
    x.engine = p.str_or("engine", "");  // newer writers name the engine per pair, and why
    x.engine_reason = p.str_or("engine_reason", "");
    c.pairs.push_back(std::move(x));
  }
  c.measured = static_cast<std::size_t>(pw.opt_int("measured").value_or(0));
  c.judged = pw.boolean_or("judged", false);
  c.median_gbps = gbps_field(pw, "median_gbps");
  c.mad_gbps = gbps_field(pw, "mad_gbps");
  c.threshold_gbps = pw.opt_num("threshold_gbps");
  if (pw.has("slow_nodes")) {
    for (const auto& s : pw.array("slow_nodes")) {
      SavedSlowNode x;
      x.rank = rank_field(s, "rank", c.world);
      x.pairs = static_cast<std::size_t>(s.opt_int("pairs").value_or(0));
      x.slow_pairs = static_cast<std::size_t>(s.opt_int("slow_pairs").value_or(0));
      x.median_gbps = gbps_field(s, "median_gbps");
      c.slow_nodes.push_back(x);
    }
  }
  if (pw.has("slow_links")) {
    for (const auto& s : pw.array("slow_links")) {
      SavedSlowLink x;
      x.a = rank_field(s, "a", c.world);
      x.b = rank_field(s, "b", c.world);
      x.gbps = gbps_field(s, "gbps");
      x.a_median_gbps = gbps_field(s, "a_median_gbps");
      x.b_median_gbps = gbps_field(s, "b_median_gbps");
      c.slow_links.push_back(x);
    }
  }

  if (auto l = top.optional_object("localization")) c.localization = localization_from(*l, c.world);

  if (top.has("findings")) c.findings = core::findings_from(top, "findings");
  if (top.has("drain"))
    for (const auto& d : top.array("drain")) c.drain.push_back(d.str("command"));
  if (!top.has("summary")) {  // counted from the findings, as the writer counts them
    const SeverityCounts n = count_severities(c.findings);
    c.fail = n.fail;
    c.warn = n.warn;
    c.info = n.info;
    c.worst = to_string(worst(c.findings));
    return c;
  }
  Fields s = top.object("summary");
  c.fail = static_cast<int>(s.integer("fail"));
  c.warn = static_cast<int>(s.integer("warn"));
  c.info = static_cast<int>(s.integer("info"));
  c.worst = severity_word(s, "worst");
  return c;
}

}  // namespace fabscope::cluster

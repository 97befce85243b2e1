// fabscope.cluster (docs/formats.md) -> ClusterDoc. Ranks are checked against `world` here, so
// rendering can index by rank without a bounds question; a pair or outlier naming a rank
// outside the job is an error naming the field, not a cell drawn somewhere else.
#include <algorithm>

#include "core/fields.hpp"
#include "report/load.hpp"

namespace fabscope::report {

namespace {

// A cluster of more than this many ranks is not a fabscope output (and would make the dense
// matrix of the heat map unreasonably large).
constexpr std::int64_t kMaxWorld = 65536;

int rank_field(const core::Fields& f, const std::string& key, int world) {
  std::int64_t r = f.integer(key);
  if (r < 0 || r >= world)
    f.fail(key, "rank " + std::to_string(r) + " outside the job's " + std::to_string(world) + " ranks");
  return static_cast<int>(r);
}

std::optional<double> gbps_field(const core::Fields& f, const std::string& key) {
  auto v = f.opt_num(key);
  if (v && *v < 0) f.fail(key, "negative bandwidth " + std::to_string(*v));
  return v;
}

std::size_t count(const core::Fields& f, const std::string& key) {
  const std::int64_t v = f.opt_int(key).value_or(0);
  if (v < 0) f.fail(key, "expected a count, got " + std::to_string(v));
  return static_cast<std::size_t>(v);
}

int node_index(const core::Fields& f, const std::string& key) {
  const std::int64_t v = f.integer(key);
  if (v < 0 || v > (1 << 20)) f.fail(key, "expected a node index from 0, got " + std::to_string(v));
  return static_cast<int>(v);
}

int port_number(const core::Fields& f, const std::string& key) {
  const std::int64_t v = f.integer(key);
  if (v < 0 || v > 255) f.fail(key, "expected a port number from 0 to 255, got " + std::to_string(v));
  return static_cast<int>(v);
}

// The node indexes are checked against a fabric input later (topology.hpp): here only their form.
ClusterLocalization localization_from(const core::Fields& l, int world) {
  ClusterLocalization x;
  if (l.has("attempted")) {
    if (!l.raw()["attempted"].is_boolean())
      l.fail("attempted", "expected true or false, got " + core::describe(l.raw()["attempted"]));
    x.attempted = l.raw()["attempted"].get<bool>();
  }
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
    ClusterSuspect y;
    y.kind = s.str("kind");
    y.name = s.str("name");
    if (y.kind == "switch") {
      y.a_node = node_index(s, "node_index");
    } else if (y.kind == "cable" || y.kind == "host_cable") {
      core::Fields a = s.object("a"), b = s.object("b");
      y.a_node = node_index(a, "node_index");
      y.a_port = port_number(a, "port");
      y.b_node = node_index(b, "node_index");
      y.b_port = port_number(b, "port");
      if (s.has("both_directions")) {
        if (!s.raw()["both_directions"].is_boolean())
          s.fail("both_directions", "expected true or false, got " + core::describe(s.raw()["both_directions"]));
        y.both_directions = s.raw()["both_directions"].get<bool>();
      }
    } else {
      s.fail("kind", "expected cable, host_cable or switch, got \"" + y.kind.substr(0, 40) + "\"");
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

}  // namespace

ClusterDoc cluster_from_json(const std::string& file, const json& doc) {
  core::Fields top(file, doc);
  ClusterDoc c;
  c.launcher = top.str_or("launcher", "");
  std::int64_t world = top.integer("world");
  if (world < 0 || world > kMaxWorld)
    top.fail("world", "expected 0 to " + std::to_string(kMaxWorld) + " ranks, got " + std::to_string(world));
  c.world = static_cast<int>(world);

  for (const auto& n : top.array("nodes")) {
    ClusterNode x;
    std::int64_t r = n.integer("rank");
    // A rank at or past `world` can only come from a job that grew the world: widen it.
    if (r < 0 || r >= kMaxWorld) n.fail("rank", "out of range: " + std::to_string(r));
    x.rank = static_cast<int>(r);
    x.name = n.str_or("name", "");
    x.fabscope_version = n.str_or("fabscope_version", "");
    x.error = n.str_or("error", "");
    if (n.has("findings")) x.findings = n.array("findings").size();
    if (n.has("ib_ports"))  // added to version 1 with cluster --fabric; absent: none reported
      for (const auto& p : n.array("ib_ports")) {
        ClusterIbPort ip;
        ip.port = p.str("port");
        const std::int64_t lid = p.integer("lid");
        if (lid < 0 || lid > 0xffff) p.fail("lid", "expected 0 to 65535, got " + std::to_string(lid));
        ip.lid = static_cast<std::uint32_t>(lid);
        ip.node_guid = p.str_or("node_guid", "");
        ip.state = p.str_or("state", "");
        x.ib_ports.push_back(std::move(ip));
      }
    x.tor_switch = n.str_or("tor_switch", "");  // added to version 1 with the LLDP grouping
    c.world = std::max(c.world, x.rank + 1);
    c.nodes.push_back(std::move(x));
  }
  c.names.resize(static_cast<std::size_t>(c.world));
  for (std::size_t i = 0; i < c.names.size(); ++i) c.names[i] = "rank" + std::to_string(i);
  for (const auto& n : c.nodes)
    if (!n.name.empty()) c.names[static_cast<std::size_t>(n.rank)] = n.name;

  if (top.has("missing"))
    for (const auto& m : top.array("missing")) c.missing.emplace_back(m.str("name"), m.str_or("reason", ""));

  for (const auto& a : top.array("attributes")) {
    ClusterAttribute x;
    x.key = a.str("key");
    x.title = a.str_or("title", x.key);
    x.finding_id = a.str_or("finding_id", "");
    x.reference = a.str_or("reference", "");
    x.reference_count = static_cast<int>(a.opt_int("reference_count").value_or(0));
    if (a.has("tie")) {
      if (!a.raw()["tie"].is_boolean()) a.fail("tie", "expected true or false, got " + core::describe(a.raw()["tie"]));
      x.tie = a.raw()["tie"].get<bool>();
    }
    x.values = a.strings("values");
    if (x.values.size() != c.nodes.size())
      a.fail("values", "holds " + std::to_string(x.values.size()) + " values for " +
                           std::to_string(c.nodes.size()) + " nodes");
    x.odd = a.strings("odd");
    c.attributes.push_back(std::move(x));
  }

  core::Fields pw = top.object("pairwise");
  c.pairs_mode = pw.str_or("mode", "");
  c.engine = pw.str_or("engine", "");
  c.rounds = static_cast<std::size_t>(pw.opt_int("rounds").value_or(0));
  c.seconds_per_direction = pw.opt_num("seconds_per_direction").value_or(0);
  for (const auto& p : pw.array("pairs")) {
    ClusterPair x;
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
  if (pw.has("judged")) {
    if (!pw.raw()["judged"].is_boolean()) pw.fail("judged", "expected true or false, got " + core::describe(pw.raw()["judged"]));
    c.judged = pw.raw()["judged"].get<bool>();
  }
  c.median_gbps = gbps_field(pw, "median_gbps");
  c.mad_gbps = gbps_field(pw, "mad_gbps");
  c.threshold_gbps = pw.opt_num("threshold_gbps");
  for (const auto& s : pw.array("slow_nodes")) {
    ClusterSlowNode x;
    x.rank = rank_field(s, "rank", c.world);
    x.pairs = static_cast<std::size_t>(s.opt_int("pairs").value_or(0));
    x.slow_pairs = static_cast<std::size_t>(s.opt_int("slow_pairs").value_or(0));
    x.median_gbps = gbps_field(s, "median_gbps");
    c.slow_nodes.push_back(x);
  }
  for (const auto& s : pw.array("slow_links")) {
    ClusterSlowLink x;
    x.a = rank_field(s, "a", c.world);
    x.b = rank_field(s, "b", c.world);
    x.gbps = gbps_field(s, "gbps");
    x.a_median_gbps = gbps_field(s, "a_median_gbps");
    x.b_median_gbps = gbps_field(s, "b_median_gbps");
    c.slow_links.push_back(x);
  }

  if (auto l = top.optional_object("localization")) c.localization = localization_from(*l, c.world);

  c.findings = findings_from(top, "findings");
  if (top.has("drain"))
    for (const auto& d : top.array("drain")) c.drain.push_back(d.str("command"));
  core::Fields s = top.object("summary");
  c.fail = static_cast<int>(s.integer("fail"));
  c.warn = static_cast<int>(s.integer("warn"));
  c.info = static_cast<int>(s.integer("info"));
  c.worst = s.str("worst");
  if (c.worst != "ok" && c.worst != "info" && c.worst != "warn" && c.worst != "fail")
    s.fail("worst", "expected ok, info, warn or fail, got \"" + c.worst + "\"");
  return c;
}

}  // namespace fabscope::report

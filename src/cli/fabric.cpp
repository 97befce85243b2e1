#include <cctype>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <thread>

#include "cli/commands.hpp"
#include "cli/fabric_topology.hpp"
#include "core/args.hpp"
#include "core/progress.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/json.hpp"
#include "core/strings.hpp"
#include "core/terminal.hpp"
#include "fabric/judge.hpp"
#include "fabric/render.hpp"
#include "fabric/route_checks.hpp"
#include "fabric/routes.hpp"
#include "fabric/sweep.hpp"
#include "fabric/thresholds.hpp"

namespace fabscope::cli {

namespace {

using namespace fabscope::fabric;

void sweep_flags(core::ArgParser& args) {
  args.option("--ca", "NAME", "sweep from this InfiniBand device (default: the first with an active port)")
      .option("--port", "N", "sweep from this port of the device (default: its first active port)")
      .option("--from", "FILE", "use a sweep saved by --save or --json instead of sweeping ('-' stdin)")
      .option("--max-smps", "N", "SMPs in flight during discovery (1-256)", "16")
      .option("--max-inflight", "N", "counter MADs in flight (1-256)", "64")
      .option("--timeout-ms", "N", "timeout of one MAD in milliseconds (1-60000)", "100")
      .option("--retries", "N", "retries of one MAD (0-20)", "3");
}

SweepOptions sweep_options(const core::ArgParser& a) {
  SweepOptions o;
  o.ca = a.get("ca");
  if (a.has("port")) o.port = static_cast<int>(a.get_int("port", 1, 254));
  o.max_smps = static_cast<int>(a.get_int("max-smps", 1, kMaxMadsInFlight));
  // 1-256: the MAD engine keeps at most kMaxMadsInFlight outstanding; a larger value was once
  // accepted and silently taken as 256 (issue 45).
  o.max_inflight = static_cast<int>(a.get_int("max-inflight", 1, kMaxMadsInFlight));
  o.timeout_ms = static_cast<int>(a.get_int("timeout-ms", 1, 60000));
  o.retries = static_cast<int>(a.get_int("retries", 0, 20));
  return o;
}

const char* const kAccessHelp =
    "\nNo fabric access (no management library, no InfiniBand port, no permission on\n"
    "/dev/infiniband/umad*) exits 3 with what to do; --from FILE judges a saved sweep anywhere.";

// What to do when the fabric cannot be reached at all.
int access_failed(const std::string& cmd, const AccessError& e) {
  std::cerr << "fabscope " << cmd << ": " << core::printable_lines(e.what()) << "\n";
  switch (e.kind) {
    case AccessError::Kind::NoLibrary:
      std::cerr << "  install rdma-core's management library (Debian/Ubuntu: libibumad3), or judge a "
                   "saved sweep with --from FILE\n";
      break;
    case AccessError::Kind::NoDevice:
      std::cerr << "  the fabric is swept from a local InfiniBand port (RoCE has no subnet manager to ask); "
                   "run it on a node of the fabric, or use --from FILE\n";
      break;
    case AccessError::Kind::NoPermission:
      std::cerr << "  sending MADs needs read/write access to /dev/infiniband/umad* (root, or a udev rule for "
                   "a group); or use --from FILE\n";
      break;
    case AccessError::Kind::Failed: break;
  }
  return kExitUsage;
}

// SRC/DST of a route: a node, and where the value names one, the port (a port GUID, or a LID an
// HCA port holds) and its LID.
struct End {
  int node = -1;
  int port = 0;             // 0: the node (its first Active port, a switch itself)
  std::uint16_t lid = 0;    // 0: the node's own
};

// A node GUID or port GUID (0x...), a LID (digits), or a node description (whole, or its first
// word: "hca1" for "hca1 mlx5_0").
End resolve(const Subnet& s, const std::string& what, const std::string& value) {
  const int count = static_cast<int>(s.nodes.size());
  if (value.size() > 2 && value[0] == '0' && (value[1] == 'x' || value[1] == 'X')) {
    std::uint64_t g = 0;
    bool ok = value.size() <= 18;
    for (std::size_t i = 2; ok && i < value.size(); ++i) ok = std::isxdigit(static_cast<unsigned char>(value[i]));
    if (!ok) throw UsageError("fabric route: " + what + " '" + value + "' is not a GUID (0x and up to 16 hex digits)");
    g = std::stoull(value.substr(2), nullptr, 16);
    for (int n = 0; n < count; ++n)
      if (s.nodes[n].guid == g) return {n, 0, 0};
    for (int n = 0; n < count; ++n)
      for (const auto& p : s.nodes[n].ports)
        if (p.guid == g) {
          if (s.nodes[n].type == NodeType::Switch) return {n, 0, 0};
          return {n, p.number, p.info ? p.info->lid : std::uint16_t{0}};
        }
    throw UsageError("fabric route: " + what + " '" + value + "': no node or port has this GUID in the sweep");
  }
  if (!value.empty() && value.find_first_not_of("0123456789") == std::string::npos) {
    const long long lid = value.size() <= 5 ? std::stoll(value) : 0;
    if (lid < 1 || lid > 0xbfff) throw UsageError("fabric route: " + what + " '" + value + "' is not a unicast LID (1-49151)");
    const int n = s.find_lid(static_cast<std::uint16_t>(lid));
    if (n < 0) throw UsageError("fabric route: " + what + " LID " + value + " is held by no port in the sweep");
    End e{n, 0, static_cast<std::uint16_t>(lid)};
    if (s.nodes[n].type != NodeType::Switch)
      for (const auto& p : s.nodes[n].ports)
        if (p.info && p.info->lid && lid >= p.info->lid && lid < p.info->lid + (1LL << p.info->lmc)) e.port = p.number;
    return e;
  }
  std::vector<int> exact, first_word;
  for (int n = 0; n < count; ++n) {
    const std::string& d = s.nodes[n].description;
    if (d == value) exact.push_back(n);
    else if (d.compare(0, d.find(' '), value) == 0 && d.find(' ') == value.size()) first_word.push_back(n);
  }
  const auto& found = exact.empty() ? first_word : exact;
  if (found.size() == 1) return {found.front(), 0, 0};
  if (found.empty())
    throw UsageError("fabric route: " + what + " '" + value +
                     "' names no node of the sweep (give a node description, a GUID 0x... or a LID)");
  std::string list;
  for (std::size_t i = 0; i < found.size() && i < 5; ++i) {
    list += (i ? ", " : "") + s.name(found[i]) + " (" + fabric::guid_hex(s.nodes[found[i]].guid) + ")";
  }
  throw UsageError("fabric route: " + what + " '" + value + "' is ambiguous: " + list + (found.size() > 5 ? ", ..." : "") +
                   "; give the GUID or the LID");
}

Subnet load_or_sweep(const core::ArgParser& args, const SweepOptions& o) {
  if (args.has("from")) {
    if (args.has("ca") || args.has("port"))
      throw UsageError("fabric: --from judges a saved sweep; --ca and --port choose where to sweep from");
    return load_subnet(args.get("from"));
  }
  return sweep(o);
}

int cmd_fabric_route(int argc, char** argv) {
  core::ArgParser args("fabric route",
                       "The path a packet takes from SRC to DST through the switches' forwarding tables, "
                       "hop by hop\n(like ibtracert): each switch with the ports in and out and the link it "
                       "leaves by. SRC and DST\nare node descriptions (or their first word), GUIDs (0x...) or "
                       "LIDs of the swept subnet.");
  args.positional("SRC", "where the route starts: description, GUID 0x... or LID", false, true)
      .positional("DST", "where it ends: description, GUID 0x... or LID", false, true)
      .flag("--json", "print the hops as JSON (schema fabscope.fabric.route, docs/formats.md)");
  sweep_flags(args);
  args.example("fabscope fabric route gpu01 gpu17", "the switches between two hosts' HCAs")
      .example("fabscope fabric route 0x0002c90300a1b2c3 42", "from a port GUID to LID 42")
      .example("fabscope fabric route --from fabric.json gpu01 gpu17",
               "computed from the forwarding tables the file saved (fabric --routes --save), no fabric; "
               "from a file without them, names resolve there and the tables are read from the fabric")
      .footer("Exit codes: 0 the route was printed, 3 usage error (an unknown or ambiguous SRC/DST names the\n"
              "value), no fabric access, or a route that breaks (the switch where it breaks is named)." +
              std::string(kAccessHelp));
  if (!args.parse(argc, argv, std::cout)) return 0;
  if (args.positionals().size() != 2)
    throw UsageError("fabric route: give SRC and DST (see fabscope fabric route --help)");
  const SweepOptions o = sweep_options(args);
  try {
    const Subnet s = load_or_sweep(args, o);
    const End src = resolve(s, "SRC", args.positionals()[0]);
    const End dst = resolve(s, "DST", args.positionals()[1]);
    const std::uint16_t lid = dst.lid ? dst.lid : s.nodes[dst.node].lid();
    if (lid == 0) throw UsageError("fabric route: DST " + s.name(dst.node) + " has no LID in the sweep");
    // A saved sweep with every switch's table needs no fabric; otherwise the tables are read live.
    const auto hops = args.has("from") && has_routes(s) ? route_from_lfts(s, src.node, src.port, lid)
                                                        : trace_route(s, src.node, lid, o, src.port);
    if (args.has("json")) std::cout << dump_json(route_json(s, hops)) << "\n";
    else std::cout << core::printable_lines(render_route(s, hops));  // names come from the fabric
    return 0;
  } catch (const AccessError& e) {
    return access_failed("fabric route", e);
  }
}

}  // namespace

int cmd_fabric(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "route") return cmd_fabric_route(argc - 1, argv + 1);
  core::ArgParser args("fabric",
                       "Sweep the InfiniBand fabric from a local port (switches, HCAs, cables, subnet "
                       "managers) and\njudge it: links narrower or slower than their ends or their tier, "
                       "ports stuck in Init, low MTUs,\nerror counters (ibqueryerrors' thresholds; rates with "
                       "--interval), subnet manager redundancy,\nduplicate GUIDs and LIDs, firmware drift, "
                       "and changes against a saved topology. Counters are\nnever reset. Each finding names "
                       "the cable by both ends; ids are in docs/checks.md.");
  sweep_flags(args);
  args.flag("--json", "print the sweep and the findings as JSON (schema fabscope.fabric, docs/formats.md)")
      .option("--save", "FILE", "also write the sweep to FILE (for --expect and --from later)")
      .option("--expect", "FILE", "compare with a topology saved earlier: missing, new and moved nodes and links")
      .option("--plan", "FILE", "compare with the intended cabling: NODE:PORT,NODE:PORT lines or ibnetdiscover's "
                                "topology output (docs/fabric.md); cables missing, miswired or not planned")
      .option("--save-plan", "FILE", "also write the cabling found as a plan (CSV) for --plan later")
      .option("--thresholds", "FILE", "error-counter thresholds, ibqueryerrors' format (Counter=value lines)")
      .option("--interval", "SEC", "read the counters again after SEC seconds (0.1-3600) and judge their growth")
      .flag("--wide", "lines as long as their content (no wrapping); otherwise the terminal's width, or 100 "
                      "columns when not a terminal")
      .flag("--routes", "also read every switch's forwarding table (LFT), kept by --save and --json: routes "
                        "computed from the file later (fabric route --from FILE) without the fabric")
      .subcommand("route");
  topology_flags(args);
  args.example("fabscope fabric", "sweep from the first active InfiniBand port and judge the fabric")
      .example("fabscope fabric --save fabric-ok.json", "judge, and keep the topology as the reference")
      .example("fabscope fabric --expect fabric-ok.json", "what changed since: cables missing or moved")
      .example("fabscope fabric --plan cabling.csv", "cables missing, on the wrong port or switch, or not in the plan")
      .example("fabscope fabric --interval 30 --thresholds /etc/infiniband-diags/error_thresholds",
               "error rates over 30 seconds, above ibqueryerrors' thresholds")
      .example("fabscope fabric --from fabric.json --json", "judge a saved sweep on any machine")
      .example("fabscope fabric --routes --save fabric.json", "keep the forwarding tables for offline routes")
      .example("fabscope fabric route gpu01 gpu17", "the path between two HCAs (see fabric route --help)")
      .example("fabscope fabric --slurm-topology tree -o /etc/slurm/topology.conf --nodes gpu[001-128]",
               "Slurm's topology/tree file from the sweep: each leaf with its hosts, each switch above")
      .example("fabscope fabric --from fabric.json --check /etc/slurm/topology.conf",
               "hosts the file puts under another leaf than their cable, missing or unknown ones")
      .example("fabscope fabric --k8s-labels script -o label-nodes.sh --name-map ib-node-name-map",
               "kubectl label commands with topograph's network.topology.nvidia.com/* keys")
      .footer(std::string(core::kExitCodesHelp) +
              "\nAn unreadable or malformed --from, --expect, --plan, --thresholds, --check or --name-map file exits 3\n"
              "naming the file and the field or line." +
              kAccessHelp);
  if (!args.parse(argc, argv, std::cout)) return 0;
  if (!args.positionals().empty())
    throw UsageError("fabric: unexpected argument '" + args.positionals().front() + "' (see fabscope fabric --help)");
  SweepOptions o = sweep_options(args);
  check_topology_flags(args);
  if (topology_requested(args)) {
    try {
      Subnet s;
      {
        core::Busy busy(args.has("from") ? "fabric: reading " + args.get("from") : std::string("fabric: sweeping the subnet"));
        s = load_or_sweep(args, o);
      }
      return fabric_topology(args, s);
    } catch (const AccessError& e) {
      return access_failed("fabric", e);
    }
  }
  if (args.has("routes")) {
    if (args.has("from"))
      throw UsageError("fabric: --routes reads the forwarding tables from the fabric; a --from file has them when it "
                       "was saved with --routes");
    o.routes = true;
  }
  JudgeOptions jo;
  if (args.has("thresholds")) jo.thresholds = load_thresholds(args.get("thresholds"));
  if (args.has("expect")) jo.expected = load_subnet(args.get("expect"));
  if (args.has("plan")) jo.plan = load_plan(args.get("plan"));
  double interval = 0;
  if (args.has("interval")) {
    if (args.has("from")) throw UsageError("fabric: --interval reads the counters twice; a --from file cannot");
    interval = args.get_double("interval", 0.1, 3600);
  }
  Subnet now;
  try {
    {
      core::Busy busy(args.has("from") ? "fabric: reading " + args.get("from") : std::string("fabric: sweeping the subnet"));
      now = load_or_sweep(args, o);
    }
    if (interval > 0) {
      // Counters are only read, never cleared: growth is the difference of two readings.
      core::Busy busy("fabric: reading every port's counters again after " + core::format_double("%g", interval) + " s",
                      interval);
      jo.before = now;
      const auto t0 = std::chrono::steady_clock::now();
      std::this_thread::sleep_for(std::chrono::duration<double>(interval));
      read_counters(now, o);
      jo.interval_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
  } catch (const AccessError& e) {
    return access_failed("fabric", e);
  }
  if (args.has("save")) {
    std::ostringstream text;  // the file is written whole (core::write_output), the nodes streamed into it
    write_json(text, now, to_json_without_nodes(now));
    text << "\n";
    core::write_output(args.get("save"), text.str());
  }
  if (args.has("save-plan")) core::write_output(args.get("save-plan"), plan_csv(now));
  if (has_routes(now)) jo.routes = check_routes(now);  // once, for the findings and the output
  const auto findings = judge(now, jo);
  const auto facts = link_facts(now);
  const RouteCheck* routes = jo.routes ? &*jo.routes : nullptr;
  if (args.has("json")) {
    write_fabric_json(std::cout, now, facts, findings, routes);
    std::cout << "\n";
  }
  else  // names come from the fabric
    std::cout << core::printable_lines(
        render_text(now, facts, findings, core::output_width(args.has("wide")), args.has("expect")) +
        (routes ? "\n" + render_route_check(now, *routes) : std::string()));
  return exit_code_for(findings);
}

}  // namespace fabscope::cli

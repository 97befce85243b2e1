// Drives the subnet collector (src/fabric/sweep.hpp) and prints one fact per line, for the
// integration tests that compare it with rdma-core's diag tools on a simulated fabric and for the
// scale benchmark. Not part of fabscope: the `fabscope fabric` command is the user's interface.
//
//   fabric_driver sweep [options]              the whole sweep, every fact
//   fabric_driver route SRC_LID DST_LID...     discovery, then the route from the node owning
//                                              SRC_LID to each DST_LID
//   fabric_driver pause [options]              discovery without counters, prints "ready", waits
//                                              for a line on stdin, then reads the counters
//   fabric_driver save FILE [options]          the sweep written to FILE (fabscope.fabric; with
//                                              --routes every switch's forwarding table)
//   fabric_driver offline-route FILE SRC_LID DST_LID...
//                                              routes computed from FILE's saved forwarding tables
//                                              (route_from_lfts), no fabric; lines as `route`
//   fabric_driver offline-all FILE             every HCA port's route to every other HCA's LID
//                                              from FILE: an error line per failure, a summary
// options: --ca NAME --port N --max-smps N --max-inflight N --max-per-dest N --timeout-ms N --retries N
//          --no-counters --routes (read every switch's forwarding table) --quiet (only the summary line)
// Lines: node GUID TYPE LID "DESC" |
//        port GUID N PORTGUID STATE PHYS WIDTHx SPEED WIDTHS_ENABLED WIDTHS_SUPPORTED SPEEDS_ENABLED
//             SPEEDS_SUPPORTED MTU |
//        link GUID PORT GUID PORT | counter GUID PORT NAME VALUE | sm GUID LID PRIORITY STATE |
//        hop GUID IN OUT "DESC" | lft GUID ENTRIES | note TEXT | portnote GUID N TEXT |
//        summary nodes N links N ports N sms N seconds S |
//        summary routes N errors N hops N (offline-all)
// Exit: 0 done, 1 fabscope::Error, 2 AccessError (its kind is printed), 3 usage.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "fabric/routes.hpp"
#include "fabric/sweep.hpp"

using namespace fabscope::fabric;

namespace {

std::string hex(std::uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%016llx", static_cast<unsigned long long>(v));
  return b;
}

std::string widths(WidthMask m) {
  std::string s;
  for (int lanes : {1, 2, 4, 8, 12})
    if (m & width_bit(lanes)) s += (s.empty() ? "" : ",") + std::to_string(lanes) + "x";
  return s.empty() ? "-" : s;
}

std::string speeds(SpeedMask m) {
  std::string s;
  for (int i = 1; i <= static_cast<int>(Speed::XDR); ++i)
    if (m & speed_bit(static_cast<Speed>(i))) s += (s.empty() ? "" : ",") + std::string(to_string(static_cast<Speed>(i)));
  return s.empty() ? "-" : s;
}

void print_counters(const Subnet& s) {
  for (const auto& n : s.nodes)
    for (const auto& p : n.ports) {
      if (!p.counters) continue;
      for (int c = 0; c < kCounterCount; ++c) {
        const auto& v = (*p.counters)[static_cast<Counter>(c)];
        if (v) std::printf("counter %s %d %s %llu\n", hex(n.guid).c_str(), p.number, counter_name(static_cast<Counter>(c)),
                           static_cast<unsigned long long>(*v));
      }
    }
}

void print_notes(const Subnet& s) {
  for (const auto& t : s.notes) std::printf("note %s\n", t.c_str());
  for (const auto& n : s.nodes)
    for (const auto& p : n.ports)
      if (!p.note.empty()) std::printf("portnote %s %d %s\n", hex(n.guid).c_str(), p.number, p.note.c_str());
}

void print(const Subnet& s, bool quiet) {
  int ports = 0;
  for (const auto& n : s.nodes) ports += static_cast<int>(n.ports.size());
  if (!quiet) {
    for (const auto& n : s.nodes) {
      std::printf("node %s %s %u \"%s\"\n", hex(n.guid).c_str(), to_string(n.type), n.lid(), n.description.c_str());
      for (const auto& p : n.ports) {
        if (!p.info) continue;
        const auto& i = *p.info;
        std::printf("port %s %d %s %s %s %dx %s %s %s %s %s %d\n", hex(n.guid).c_str(), p.number,
                    hex(p.guid).c_str(), to_string(i.state),
                    to_string(i.phys_state), i.width_active, to_string(i.speed_active), widths(i.width_enabled).c_str(),
                    widths(i.width_supported).c_str(), speeds(i.speed_enabled).c_str(),
                    speeds(i.speed_supported).c_str(), i.mtu_active);
      }
    }
    for (const auto& l : s.links)
      std::printf("link %s %d %s %d\n", hex(s.nodes[l.a_node].guid).c_str(), l.a_port, hex(s.nodes[l.b_node].guid).c_str(),
                  l.b_port);
    for (const auto& sm : s.sms)
      std::printf("sm %s %u %d %s\n", hex(sm.guid).c_str(), sm.lid, sm.priority, to_string(sm.state));
    for (const auto& n : s.nodes)
      if (!n.lft.empty()) std::printf("lft %s %zu\n", hex(n.guid).c_str(), n.lft.size());
    print_counters(s);
    print_notes(s);
  }
  std::printf("summary nodes %zu links %zu ports %d sms %zu seconds %.3f\n", s.nodes.size(), s.links.size(), ports,
              s.sms.size(), s.sweep_s);
}

int usage() {
  std::fprintf(stderr,
               "usage: fabric_driver sweep|pause [options] | route SRC_LID DST_LID... [options] | save FILE [options] |\n"
               "       offline-route FILE SRC_LID DST_LID... | offline-all FILE\n");
  return 3;
}

// The port of node n that holds lid (LMC range included); 0 for a switch or none.
int port_holding(const Subnet& s, int n, int lid) {
  if (s.nodes[n].type == NodeType::Switch) return 0;
  for (const auto& p : s.nodes[n].ports)
    if (p.info && p.info->lid && lid >= p.info->lid && lid < p.info->lid + (1 << p.info->lmc)) return p.number;
  return 0;
}

void print_hops(const Subnet& s, const std::vector<Hop>& hops) {
  for (const auto& h : hops)
    std::printf("hop %s %d %d \"%s\"\n", hex(s.nodes[h.node].guid).c_str(), h.in_port, h.out_port,
                s.nodes[h.node].description.c_str());
}

// Routes between every pair of HCA ports (by LID) computed from the saved tables.
int offline_all(const Subnet& s) {
  std::vector<std::pair<int, int>> ends;  // node, port
  for (int n = 0; n < static_cast<int>(s.nodes.size()); ++n)
    if (s.nodes[n].type == NodeType::Hca)
      for (const auto& p : s.nodes[n].ports)
        if (p.info && p.info->lid) ends.emplace_back(n, p.number);
  long routes = 0, errors = 0, hops = 0;
  for (const auto& [a, pa] : ends)
    for (const auto& [b, pb] : ends) {
      if (a == b) continue;
      ++routes;
      try {
        hops += static_cast<long>(route_from_lfts(s, a, pa, s.nodes[b].port(pb)->info->lid).size());
      } catch (const fabscope::Error& e) {
        if (++errors <= 20) std::printf("error %s\n", e.what());
      }
    }
  std::printf("summary routes %ld errors %ld hops %ld\n", routes, errors, hops);
  return errors ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  std::string mode = argv[1];
  SweepOptions opt;
  bool quiet = false;
  std::vector<int> lids;
  std::string file;
  const bool with_file = mode == "save" || mode == "offline-route" || mode == "offline-all";
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) std::exit(usage());
      return argv[++i];
    };
    if (a == "--ca") opt.ca = next();
    else if (a == "--port") opt.port = std::atoi(next().c_str());
    else if (a == "--max-smps") opt.max_smps = std::atoi(next().c_str());
    else if (a == "--max-inflight") opt.max_inflight = std::atoi(next().c_str());
    else if (a == "--max-per-dest") opt.max_per_dest = std::atoi(next().c_str());
    else if (a == "--timeout-ms") opt.timeout_ms = std::atoi(next().c_str());
    else if (a == "--retries") opt.retries = std::atoi(next().c_str());
    else if (a == "--no-counters") opt.counters = false;
    else if (a == "--routes") opt.routes = true;
    else if (a == "--quiet") quiet = true;
    else if (with_file && file.empty() && !a.empty() && a[0] != '-') file = a;
    else if (!a.empty() && a[0] != '-') lids.push_back(std::atoi(a.c_str()));
    else return usage();
  }
  try {
    if (mode == "sweep") {
      print(sweep(opt), quiet);
    } else if (mode == "pause") {
      opt.counters = false;
      Subnet s = sweep(opt);
      std::printf("ready nodes %zu\n", s.nodes.size());
      std::fflush(stdout);
      std::string line;
      std::getline(std::cin, line);
      read_counters(s, opt);
      print_counters(s);
      print_notes(s);
      std::printf("done\n");
    } else if (mode == "route") {
      if (lids.size() < 2) return usage();
      opt.counters = false;
      Subnet s = sweep(opt);
      int src = s.find_lid(static_cast<std::uint16_t>(lids[0]));
      if (src < 0) {
        std::fprintf(stderr, "no node owns LID %d\n", lids[0]);
        return 1;
      }
      for (std::size_t k = 1; k < lids.size(); ++k) {
        std::printf("route %d %d\n", lids[0], lids[k]);
        print_hops(s, trace_route(s, src, static_cast<std::uint16_t>(lids[k]), opt, port_holding(s, src, lids[0])));
      }
    } else if (mode == "save") {
      if (file.empty() || !lids.empty()) return usage();
      Subnet s = sweep(opt);
      std::ofstream out(file);
      write_json(out, s, to_json_without_nodes(s));
      out << "\n";
      out.close();
      if (!out) {
        std::printf("error cannot write %s\n", file.c_str());
        return 1;
      }
      print(s, true);
    } else if (mode == "offline-route") {
      if (file.empty() || lids.size() < 2) return usage();
      const Subnet s = load_subnet(file);
      int src = s.find_lid(static_cast<std::uint16_t>(lids[0]));
      if (src < 0) {
        std::fprintf(stderr, "no node owns LID %d\n", lids[0]);
        return 1;
      }
      for (std::size_t k = 1; k < lids.size(); ++k) {
        std::printf("route %d %d\n", lids[0], lids[k]);
        print_hops(s, route_from_lfts(s, src, port_holding(s, src, lids[0]), static_cast<std::uint16_t>(lids[k])));
      }
    } else if (mode == "offline-all") {
      if (file.empty() || !lids.empty()) return usage();
      return offline_all(load_subnet(file));
    } else {
      return usage();
    }
  } catch (const AccessError& e) {
    static const char* kinds[] = {"NoLibrary", "NoDevice", "NoPermission", "Failed"};
    std::printf("access-error %s %s\n", kinds[static_cast<int>(e.kind)], e.what());
    return 2;
  } catch (const fabscope::Error& e) {
    std::printf("error %s\n", e.what());
    return 1;
  }
  std::fflush(stdout);
  return 0;
}

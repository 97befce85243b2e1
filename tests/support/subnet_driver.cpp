// Drives the subnet collector (src/subnet/sweep.hpp) and prints one fact per line, for the
// integration tests that compare it with rdma-core's diag tools on a simulated fabric and for the
// scale benchmark. Not part of fabscope: the `fabscope fabric` command is the user's interface.
//
//   subnet_driver sweep [options]              the whole sweep, every fact
//   subnet_driver route SRC_LID DST_LID...     discovery, then the route from the node owning
//                                              SRC_LID to each DST_LID
//   subnet_driver pause [options]              discovery without counters, prints "ready", waits
//                                              for a line on stdin, then reads the counters
// options: --ca NAME --port N --max-smps N --max-inflight N --timeout-ms N --retries N
//          --no-counters --quiet (only the summary line)
// Lines: node GUID TYPE LID "DESC" |
//        port GUID N PORTGUID STATE PHYS WIDTHx SPEED WIDTHS_ENABLED WIDTHS_SUPPORTED SPEEDS_ENABLED
//             SPEEDS_SUPPORTED MTU |
//        link GUID PORT GUID PORT | counter GUID PORT NAME VALUE | sm GUID LID PRIORITY STATE |
//        hop GUID IN OUT "DESC" | note TEXT | portnote GUID N TEXT |
//        summary nodes N links N ports N sms N seconds S
// Exit: 0 done, 1 fabscope::Error, 2 AccessError (its kind is printed), 3 usage.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "subnet/sweep.hpp"

using namespace fabscope::subnet;

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
    print_counters(s);
    print_notes(s);
  }
  std::printf("summary nodes %zu links %zu ports %d sms %zu seconds %.3f\n", s.nodes.size(), s.links.size(), ports,
              s.sms.size(), s.sweep_s);
}

int usage() {
  std::fprintf(stderr, "usage: subnet_driver sweep|pause [options] | route SRC_LID DST_LID... [options]\n");
  return 3;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  std::string mode = argv[1];
  SweepOptions opt;
  bool quiet = false;
  std::vector<int> lids;
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
    else if (a == "--timeout-ms") opt.timeout_ms = std::atoi(next().c_str());
    else if (a == "--retries") opt.retries = std::atoi(next().c_str());
    else if (a == "--no-counters") opt.counters = false;
    else if (a == "--quiet") quiet = true;
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
        for (const auto& h : trace_route(s, src, static_cast<std::uint16_t>(lids[k]), opt))
          std::printf("hop %s %d %d \"%s\"\n", hex(s.nodes[h.node].guid).c_str(), h.in_port, h.out_port,
                      s.nodes[h.node].description.c_str());
      }
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

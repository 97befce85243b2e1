#include "job/locate.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "core/error.hpp"
#include "core/strings.hpp"
#include "job/registry.hpp"
#include "fabric/routes.hpp"

namespace fabscope::job {

namespace {

// "gpu-07.example.org" -> "gpu-07"
std::string first_label(const std::string& host) { return core::lower(host.substr(0, host.find('.'))); }

// An HCA of the fabric as rdma-core names it: "gpu-07 mlx5_0" -> host "gpu-07", device "mlx5_0".
struct Hca {
  int node = -1;
  int port = 0;
  std::uint16_t lid = 0;
  std::string device;
};

std::map<std::string, std::vector<Hca>> hcas_by_host(const fabric::Subnet& s) {
  std::map<std::string, std::vector<Hca>> out;
  for (std::size_t i = 0; i < s.nodes.size(); ++i) {
    const auto& n = s.nodes[i];
    if (n.type != fabric::NodeType::Hca || n.description.empty()) continue;
    const auto sp = n.description.find(' ');
    const std::string host = first_label(n.description.substr(0, sp));
    std::string device = sp == std::string::npos ? "" : std::string(core::trim(n.description.substr(sp + 1)));
    for (const auto& p : n.ports) {
      if (!p.info || p.info->lid == 0 || p.info->state != fabric::PortState::Active) continue;
      out[host].push_back(Hca{static_cast<int>(i), p.number, p.info->lid, device});
      break;  // one port per HCA: the first ACTIVE one with a LID
    }
  }
  return out;
}

std::string rank_label(const RankStat& r) {
  std::string s = "rank " + std::to_string(r.rank) + " (" + (r.host.empty() ? "?" : r.host);
  if (r.gpu >= 0) s += ", GPU " + std::to_string(r.gpu);
  return s + ")";
}

}  // namespace

std::map<int, std::string> parse_rails(const std::string& text) {
  std::map<int, std::string> out;
  for (const auto& item : core::split(text, ',')) {
    const std::string e(core::trim(item));
    if (e.empty()) continue;
    const auto eq = e.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == e.size())
      throw Error("--rails: '" + e + "' is not GPU=HCA (e.g. 0=mlx5_0)");
    const std::string gpu = e.substr(0, eq), dev = e.substr(eq + 1);
    if (gpu.size() > 3 || !std::all_of(gpu.begin(), gpu.end(), [](unsigned char c) { return std::isdigit(c); }))
      throw Error("--rails: '" + gpu + "' in '" + e + "' is not a GPU index (0-999)");
    if (dev.size() > 64 || !std::all_of(dev.begin(), dev.end(), [](unsigned char c) {
          return std::isalnum(c) || c == '_' || c == '-' || c == '.';
        }))
      throw Error("--rails: '" + dev + "' in '" + e + "' is not an HCA name (letters, digits, _ - .)");
    if (!out.emplace(std::stoi(gpu), dev).second) throw Error("--rails: GPU " + gpu + " is named twice");
  }
  if (out.empty()) throw Error("--rails: empty (expected GPU=HCA,..., e.g. 0=mlx5_0,1=mlx5_1)");
  return out;
}

std::vector<LocatedComm> locate(const fabric::Subnet& fabric, const Analysis& analysis,
                                const std::map<int, std::string>& rails, const Options& opt) {
  std::vector<LocatedComm> out;
  const auto by_host = hcas_by_host(fabric);
  for (const auto& view : analysis.comms) {
    if (view.slow_from < 0 || view.nranks <= 0) continue;
    LocatedComm lc;
    lc.job_id = view.job_id;
    lc.comm = view.comm;
    lc.comm_name = view.comm_name;
    const auto n = static_cast<std::size_t>(view.nranks);
    lc.names.resize(n);
    for (std::size_t r = 0; r < n; ++r) lc.names[r] = "rank " + std::to_string(r) + " (not read)";
    std::vector<cluster::HostPort> hosts(n);
    std::vector<std::string> host_of(n);
    std::vector<std::string> notes;
    std::set<std::string> said;
    for (const auto& r : view.ranks) {
      if (r.rank < 0 || static_cast<std::size_t>(r.rank) >= n) continue;
      const auto idx = static_cast<std::size_t>(r.rank);
      lc.names[idx] = rank_label(r);
      host_of[idx] = first_label(r.host);
      auto it = by_host.find(first_label(r.host));
      if (it == by_host.end()) {
        if (said.insert(r.host).second)
          notes.push_back("host " + r.host + " has no HCA in the fabric (no NodeDescription starting with its name)");
        continue;
      }
      const auto& list = it->second;
      const Hca* pick = nullptr;
      if (list.size() == 1) {
        pick = &list[0];
      } else if (auto rail = rails.find(r.gpu); rail != rails.end()) {
        for (const auto& h : list)
          if (h.device == rail->second) pick = &h;
        if (!pick && said.insert(r.host + "/" + rail->second).second)
          notes.push_back("host " + r.host + " has no ACTIVE " + rail->second + " in the fabric (--rails)");
      } else if (said.insert(r.host).second) {
        std::string devs;
        for (const auto& h : list) devs += (devs.empty() ? "" : ",") + (h.device.empty() ? "?" : h.device);
        notes.push_back("host " + r.host + " has " + std::to_string(list.size()) + " HCAs in the fabric (" + devs +
                        "): which one a rank uses is not in its records; name them with --rails GPU=HCA,...");
      }
      if (pick) hosts[idx] = cluster::HostPort{pick->node, pick->port, pick->lid};
    }
    // Each connection is a direction of the pair (low rank, high rank); connections inside one
    // host never reach the fabric.
    std::map<std::pair<int, int>, cluster::PairResult> pairs;
    std::vector<double> rates;
    for (const auto& c : view.connections) {
      if (c.from < 0 || c.to < 0 || static_cast<std::size_t>(c.from) >= n || static_cast<std::size_t>(c.to) >= n ||
          c.from == c.to)
        continue;
      const auto& ha = host_of[static_cast<std::size_t>(c.from)];
      const auto& hb = host_of[static_cast<std::size_t>(c.to)];
      if (!ha.empty() && ha == hb) continue;
      rates.push_back(c.gbps);
      const int a = std::min(c.from, c.to), b = std::max(c.from, c.to);
      auto& p = pairs[{a, b}];
      p.a = a;
      p.b = b;
      p.engine = "job";
      // Two connections the same way (NCCL's several channels sum into one record): keep the slower.
      auto& slot = c.from == a ? p.a_to_b_gbps : p.b_to_a_gbps;
      slot = slot ? std::min(*slot, c.gbps) : c.gbps;
    }
    cluster::LocalizeOptions lo;
    lo.min_slow = 1;  // a job's ring may have one slow connection through a cable: still worth naming
    double threshold = 0;
    if (rates.size() >= 3) threshold = median_of(rates) / opt.slow_link_factor;
    std::vector<cluster::PairResult> list;
    for (auto& [k, p] : pairs) list.push_back(std::move(p));
    if (threshold > 0) {
      lc.localization = cluster::localize(fabric, hosts, list, threshold, lo);
    } else {
      lc.localization.fabric_source = fabric.source;
      lc.localization.why_not = "fewer than 3 connections between hosts: no median to judge by";
    }
    for (auto& note : notes)
      if (lc.localization.notes.size() < lo.max_notes) lc.localization.notes.insert(lc.localization.notes.begin(), note);
    out.push_back(std::move(lc));
  }
  return out;
}

std::vector<Finding> located_findings(const std::vector<LocatedComm>& located) {
  std::vector<Finding> out;
  for (const auto& lc : located) {
    const auto& l = lc.localization;
    std::string subject = "job " + lc.job_id + " comm " + lc.comm;
    if (!lc.comm_name.empty()) subject += " (" + lc.comm_name + ")";
    for (const auto& sp : l.suspects) {
      std::string what;
      if (sp.kind == cluster::SuspectKind::Switch)
        what = "the switch " + sp.name;
      else if (sp.kind == cluster::SuspectKind::HostCable)
        what = "the host cable " + sp.name + (sp.both_directions ? " (both directions)" : " (this direction)");
      else
        what = "the cable " + sp.name + (sp.both_directions ? " (both directions)" : " (this direction)");
      std::string ev = std::to_string(sp.slow_crossing) + " of " + std::to_string(l.slow) +
                       " slow connections cross it, " + std::to_string(sp.fast_crossing) + " of " +
                       std::to_string(l.fast) + " others do (slow: below " + core::format_double("%.3g", l.threshold_gbps) +
                       " Gb/s on the network, a third of the median)";
      if (!sp.examples.empty()) {
        ev += "; e.g.";
        for (const auto& [a, b] : sp.examples) {
          auto nm = [&](int r) {
            return r >= 0 && static_cast<std::size_t>(r) < lc.names.size() ? lc.names[static_cast<std::size_t>(r)]
                                                                           : "rank " + std::to_string(r);
          };
          ev += " " + nm(a) + " -> " + nm(b);
        }
      }
      if (!sp.alternatives.empty()) {
        ev += "; crossed by exactly the same connections, so not told apart: ";
        for (std::size_t i = 0; i < sp.alternatives.size(); ++i) ev += (i ? ", " : "") + sp.alternatives[i];
      }
      std::string remedy =
          sp.kind == cluster::SuspectKind::Switch
              ? "check the switch: `fabscope fabric --interval 10` (every port of " + sp.name +
                    ": errors, PortXmitWait, degraded links), its firmware and temperature; move traffic off it until fixed"
              : "check that cable: `fabscope fabric --interval 10` (its width and speed against what both ends support, "
                "error counters growing, PortXmitWait); reseat or replace the cable or transceiver, or disable the port "
                "so the subnet manager routes around it";
      out.push_back(registered_finding("job.slow_path", Severity::Warn, subject,
                                       "the slow connections share " + what, ev, remedy));
    }
  }
  return out;
}

json located_json(const std::vector<LocatedComm>& located) {
  json arr = json::array();
  for (const auto& lc : located)
    arr.push_back({{"job_id", lc.job_id},
                   {"comm", lc.comm},
                   {"comm_name", lc.comm_name},
                   {"localization", cluster::localization_json(lc.localization, lc.names)}});
  return arr;
}

}  // namespace fabscope::job

// How well `fabscope cluster --fabric` names the faulty cable or switch, over many random faults,
// on a saved sweep whose forwarding tables a real subnet manager programmed (bench/cluster-
// localize.sh: OpenSM on the simulated 2,048-HCA fat tree). Per trial: N hosts drawn at random
// from the fabric's HCAs, the schedule of --pairs, one fault (a switch-to-switch cable slowed in
// both directions, one direction of a cable, or a whole switch) on a component the measured
// routes cross; every direction whose route crosses the fault measured at a slow factor drawn
// from [0.3, 0.7] of 100 Gb/s, every direction with N(1, noise) noise; then the real outlier
// direction threshold (outliers.hpp) and localizer. Reported: trials, faults crossed by fewer than min_slow measured
// directions (undetectable by construction), the right component first in the suspect list,
// among the first suspect's alternatives (crossed by exactly the same directions: a leaf with one
// host of the job is that host's cable), anywhere in the list, and the list's precision (suspects that are the fault, of all named).
//
// usage: fabscope_localize_bench FABRIC.json NODES PAIRS FAULT TRIALS NOISE [SEED]
//   PAIRS: all | ring | K    FAULT: cable | fibre | switch
// Prints one line of results (and a CPU time line).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <random>
#include <set>
#include <string>

#include "cluster/localize.hpp"
#include "cluster/outliers.hpp"
#include "cluster/schedule.hpp"
#include "fabric/model.hpp"
#include "fabric/routes.hpp"

using namespace fabscope;
using namespace fabscope::cluster;

namespace {

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

struct Dir {
  int from, to;
  std::vector<fabric::Hop> hops;
};

bool is_switch(const fabric::Subnet& s, int n) { return s.nodes[n].type == fabric::NodeType::Switch; }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 7) {
    std::fprintf(stderr, "usage: %s FABRIC.json NODES PAIRS FAULT TRIALS NOISE [SEED]\n", argv[0]);
    return 3;
  }
  try {
    const fabric::Subnet s = fabric::load_subnet(argv[1]);
    const int n = std::stoi(argv[2]);
    const PairsSpec spec = parse_pairs(argv[3]);
    const std::string fault = argv[4];
    const int trials = std::stoi(argv[5]);
    const double noise = std::stod(argv[6]);
    const std::uint64_t seed = argc > 7 ? std::stoull(argv[7]) : 1;
    if (fault != "cable" && fault != "fibre" && fault != "switch") throw Error("FAULT: cable | fibre | switch");
    if (!fabric::has_routes(s)) throw Error(std::string(argv[1]) + ": no forwarding tables (fabscope fabric --routes)");
    std::vector<int> hcas;
    for (int i = 0; i < static_cast<int>(s.nodes.size()); ++i)
      if (!is_switch(s, i) && s.nodes[i].lid() != 0) hcas.push_back(i);
    if (static_cast<int>(hcas.size()) < n) throw Error("the fabric has " + std::to_string(hcas.size()) + " HCAs");

    std::mt19937_64 rng(seed);
    std::normal_distribution<double> jitter(1.0, noise);
    std::uniform_real_distribution<double> factor(0.3, 0.7);
    int undetectable = 0, first = 0, first_or_alt = 0, anywhere = 0, judged = 0;
    std::size_t named = 0, named_right = 0, dirs_total = 0;
    double cpu_localize = 0;
    for (int t = 0; t < trials; ++t) {
      std::vector<int> pick = hcas;
      std::shuffle(pick.begin(), pick.end(), rng);
      pick.resize(static_cast<std::size_t>(n));
      std::vector<HostPort> hosts;
      for (int h : pick) hosts.push_back({h, 0, s.nodes[h].lid()});
      std::vector<Dir> dirs;
      for (const auto& round : make_schedule(n, spec, rng()))
        for (auto [a, b] : round)
          for (auto [x, y] : {std::pair{a, b}, std::pair{b, a}})
            dirs.push_back({x, y, fabric::route_from_lfts(s, hosts[x].node, 0, hosts[y].lid)});
      dirs_total = dirs.size();
      // Candidate faults: components the measured routes cross (a cable's key is its sending
      // end, node * 256 + port; both directions of the cable for "cable").
      std::vector<long> cands;
      std::set<long> seen;
      for (const auto& d : dirs)
        for (std::size_t i = 0; i + 1 < d.hops.size(); ++i) {
          const auto& h = d.hops[i];
          if (fault == "switch") {
            if (is_switch(s, h.node) && seen.insert(h.node).second) cands.push_back(h.node);
          } else if (is_switch(s, h.node) && is_switch(s, d.hops[i + 1].node)) {
            long key = static_cast<long>(h.node) * 256 + h.out_port;
            if (fault == "cable") {  // one key per cable: the lower end
              const auto* p = s.nodes[h.node].port(h.out_port);
              key = std::min(key, static_cast<long>(p->remote_node) * 256 + p->remote_port);
            }
            if (seen.insert(key).second) cands.push_back(key);
          }
        }
      std::sort(cands.begin(), cands.end());
      const long truth = cands[std::uniform_int_distribution<std::size_t>(0, cands.size() - 1)(rng)];
      auto crosses = [&](const Dir& d) {
        for (std::size_t i = 0; i < d.hops.size(); ++i) {
          const auto& h = d.hops[i];
          if (fault == "switch") {
            if (h.node == truth) return true;
            continue;
          }
          if (h.out_port == 0) continue;
          const long key = static_cast<long>(h.node) * 256 + h.out_port;
          if (key == truth) return true;
          if (fault == "cable") {
            const auto* p = s.nodes[h.node].port(h.out_port);
            if (p && static_cast<long>(p->remote_node) * 256 + p->remote_port == truth) return true;
          }
        }
        return false;
      };
      const double slow = factor(rng);
      std::vector<PairResult> pairs;
      std::size_t slow_dirs = 0;
      for (std::size_t i = 0; i < dirs.size(); i += 2) {
        PairResult p;
        p.a = std::min(dirs[i].from, dirs[i].to), p.b = std::max(dirs[i].from, dirs[i].to), p.engine = "rdma";
        for (std::size_t k : {i, i + 1}) {
          const bool hit = crosses(dirs[k]);
          slow_dirs += hit;
          const double v = 100.0 * std::max(0.01, jitter(rng)) * (hit ? slow : 1.0);
          (dirs[k].from == p.a ? p.a_to_b_gbps : p.b_to_a_gbps) = v;
        }
        pairs.push_back(p);
      }
      if (slow_dirs < 2) {
        ++undetectable;
        continue;
      }
      const double threshold = direction_threshold(pairs);
      if (!std::isfinite(threshold)) continue;
      ++judged;
      const double t0 = cpu_seconds();
      const Localization l = localize(s, hosts, pairs, threshold);
      cpu_localize += cpu_seconds() - t0;
      auto is_truth = [&](const Suspect& sp) {
        if (fault == "switch") return sp.kind == SuspectKind::Switch && sp.a_node == truth;
        if (sp.kind != SuspectKind::Cable) return false;
        const long a = static_cast<long>(sp.a_node) * 256 + sp.a_port, b = static_cast<long>(sp.b_node) * 256 + sp.b_port;
        if (fault == "fibre") return a == truth;
        return a == truth || b == truth;
      };
      // The fault's names as the suspect list writes them, for the alternatives.
      std::set<std::string> truth_names;
      if (fault == "switch") {
        truth_names.insert(s.name(static_cast<int>(truth)));
      } else {
        const int tn = static_cast<int>(truth / 256), tp = static_cast<int>(truth % 256);
        const auto* p = s.nodes[tn].port(tp);
        const std::string a = s.name(tn) + ":" + std::to_string(tp);
        const std::string b = s.name(p->remote_node) + ":" + std::to_string(p->remote_port);
        truth_names.insert(a + " -> " + b);
        if (fault == "cable") {
          truth_names.insert(b + " -> " + a);
          truth_names.insert(a + " <-> " + b);
          truth_names.insert(b + " <-> " + a);
        }
      }
      if (!l.suspects.empty()) {
        bool alt = is_truth(l.suspects[0]);
        for (const auto& n : l.suspects[0].alternatives) alt |= truth_names.count(n) > 0;
        first_or_alt += alt;
      }
      bool found = false;
      for (std::size_t k = 0; k < l.suspects.size(); ++k) {
        const bool right = is_truth(l.suspects[k]);
        if (k == 0 && right) ++first;
        found |= right;
        if (l.suspects[k].kind != SuspectKind::HostCable) ++named, named_right += right;
      }
      anywhere += found;
    }
    std::printf("nodes %d pairs %s fault %s noise %.3f trials %d directions %zu undetectable %d judged %d "
                "first %d (%.1f%%) first_or_alternative %d (%.1f%%) anywhere %d (%.1f%%) precision %.3f "
                "cpu_ms_per_localize %.2f\n",
                n, pairs_name(spec).c_str(), fault.c_str(), noise, trials, dirs_total, undetectable, judged, first,
                judged ? 100.0 * first / judged : 0.0, first_or_alt, judged ? 100.0 * first_or_alt / judged : 0.0,
                anywhere, judged ? 100.0 * anywhere / judged : 0.0,
                named ? static_cast<double>(named_right) / static_cast<double>(named) : 1.0,
                judged ? 1000.0 * cpu_localize / judged : 0.0);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fabscope_localize_bench: %s\n", e.what());
    return 3;
  }
}

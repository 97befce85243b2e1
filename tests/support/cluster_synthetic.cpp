// Writes a SYNTHETIC fabscope.cluster JSON document of N nodes (no machine measured): every
// pair of `--pairs all` at 100 Gb/s with 2 % noise, as bench/cluster/synthetic.cpp models a
// fabric, with chosen faults, judged by the real cluster code (cluster::judge, cluster_json),
// so the slow nodes, slow links, findings and consistency table are what fabscope would write.
// The faults are fixed so tests can name them:
//   slow nodes  ranks N/3 and N-2, at 40 % of the rate on every pair;
//   slow links  (1, N/2) and (N/4, N/4+1), at 50 %;
//   one failed pair (0, N-1);
//   rank N/5 with net.rdma_mtu 1500 (the others 4096).
// The launcher is "synthetic" and every node is named synthetic-NNNN.
// Usage: fabscope_cluster_synthetic N [SEED [PAIRS]] > cluster.json   (PAIRS as --pairs: all, the
// default, ring or a number of random rounds)
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>

#include "cluster/result.hpp"
#include "cluster/schedule.hpp"

using namespace fabscope;
using namespace fabscope::cluster;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s N [SEED [PAIRS]]\n", argv[0]);
    return 3;
  }
  const int n = std::atoi(argv[1]);
  const std::uint64_t seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1;
  if (n < 8 || n > 8192) {
    std::fprintf(stderr, "N must be 8 to 8192\n");
    return 3;
  }
  const int slow_a = n / 3, slow_b = n - 2, odd_mtu = n / 5;
  const std::pair<int, int> link1{1, n / 2}, link2{n / 4, n / 4 + 1}, failed{0, n - 1};

  ClusterInput in;
  in.launcher = "synthetic";
  in.world = n;
  in.pairs = parse_pairs(argc > 3 ? argv[3] : "all");
  in.engine = "synthetic";
  in.pair_seconds = 1;
  for (int r = 0; r < n; ++r) {
    NodeSummary s;
    s.rank = r;
    char name[32];
    std::snprintf(name, sizeof name, "synthetic-%04d", r);
    s.name = name;
    s.fabscope_version = FABSCOPE_VERSION;
    s.attributes = {{"rdma.active_ports", "8"},       {"rdma.link_layer", "InfiniBand"},
                    {"rdma.rate", "400 Gb/s x8"},      {"rdma.active_mtu", "4096"},
                    {"net.rdma_mtu", r == odd_mtu ? "1500" : "4096"}, {"kernel.release", "6.8.0-synthetic"}};
    s.pair_address = std::string("10.0.0.1:") + std::to_string(20000 + r);
    in.nodes.push_back(std::move(s));
  }
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(1.0, 0.02);
  Schedule sched(n, in.pairs, seed);
  in.rounds = sched.size();
  for (std::size_t k = 0; k < sched.size(); ++k)
    for (auto [a, b] : sched.round(k)) {
      PairResult p;
      p.a = a;
      p.b = b;
      if (std::pair<int, int>{a, b} == failed) {
        p.error = "SYNTHETIC: connection refused";
        in.pair_results.push_back(p);
        continue;
      }
      double f = 1.0;
      if (a == slow_a || b == slow_a || a == slow_b || b == slow_b) f = 0.4;
      if (std::pair<int, int>{a, b} == link1 || std::pair<int, int>{a, b} == link2) f = 0.5;
      p.a_to_b_gbps = 100.0 * f * noise(rng);
      p.b_to_a_gbps = 100.0 * f * noise(rng);
      in.pair_results.push_back(p);
    }
  std::cout << cluster_json(judge(std::move(in))).dump() << "\n";
  return 0;
}

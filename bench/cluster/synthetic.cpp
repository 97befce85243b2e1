// Synthetic-scale benchmark of `fabscope cluster`'s scheduler and outlier detector: N nodes (1,024
// and 8,192), pair bandwidths around 100 Gb/s with 2 % noise, some nodes slowed on every pair and
// some links slowed on their one pair. Reports precision and recall of the slow-node and
// slow-link verdicts and the CPU time of the schedule and of the detection, for the median/MAD
// detector beside a mean/standard-deviation detector run on the same matrices (the textbook
// approach, which the outliers themselves pull). Also the bytes of one node summary for a real
// capture (the rank-0 memory estimate in docs/cluster.md).
// Build: cmake --build build --target fabscope_cluster_bench; run: build/bench/fabscope_cluster_bench
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <random>
#include <set>

#include "checks/checks.hpp"
#include "cluster/outliers.hpp"
#include "cluster/schedule.hpp"
#include "cluster/summary.hpp"
#include "core/root.hpp"
#include "probe/probe.hpp"

using namespace fabscope;
using namespace fabscope::cluster;

namespace {

long rss_kib() {  // current resident set, from /proc/self/statm
  long pages = 0, resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return resident * 4;
}

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

struct Score {
  std::size_t tp = 0, fp = 0, fn = 0;
  double precision() const { return tp + fp ? static_cast<double>(tp) / static_cast<double>(tp + fp) : 1.0; }
  double recall() const { return tp + fn ? static_cast<double>(tp) / static_cast<double>(tp + fn) : 1.0; }
};

template <typename T>
Score score(const std::set<T>& truth, const std::set<T>& found) {
  Score s;
  for (const auto& x : found) (truth.count(x) ? s.tp : s.fp)++;
  for (const auto& x : truth) s.fn += found.count(x) ? 0 : 1;
  return s;
}

// The naive detector: mean - 3 sigma over all pairs; a node slow when 75 % of its pairs are.
Outliers mean_sigma(int n, const std::vector<PairResult>& pairs) {
  double sum = 0, sq = 0;
  for (const auto& p : pairs) sum += *p.value_gbps(), sq += *p.value_gbps() * *p.value_gbps();
  const double mean = sum / static_cast<double>(pairs.size());
  const double sd = std::sqrt(std::max(0.0, sq / static_cast<double>(pairs.size()) - mean * mean));
  Outliers o;
  o.threshold_gbps = mean - 3 * sd;
  std::vector<std::size_t> cnt(static_cast<std::size_t>(n)), slow(static_cast<std::size_t>(n));
  for (const auto& p : pairs)
    for (int r : {p.a, p.b}) {
      ++cnt[static_cast<std::size_t>(r)];
      if (*p.value_gbps() < o.threshold_gbps) ++slow[static_cast<std::size_t>(r)];
    }
  std::vector<bool> is(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r)
    if (cnt[static_cast<std::size_t>(r)] >= 2 &&
        slow[static_cast<std::size_t>(r)] >= 0.75 * static_cast<double>(cnt[static_cast<std::size_t>(r)]))
      is[static_cast<std::size_t>(r)] = true, o.slow_nodes.push_back({r, 0, 0, 0});
  for (const auto& p : pairs)
    if (*p.value_gbps() < o.threshold_gbps && !is[static_cast<std::size_t>(p.a)] && !is[static_cast<std::size_t>(p.b)])
      o.slow_links.push_back({p.a, p.b, 0, 0, 0});
  return o;
}

void run(int n, const PairsSpec& spec, int slow_nodes, int slow_links, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  double t0 = cpu_seconds();
  Schedule sched(n, spec, seed);
  std::vector<Pair> all;
  for (std::size_t k = 0; k < sched.size(); ++k) {
    auto r = sched.round(k);
    all.insert(all.end(), r.begin(), r.end());
  }
  const double t_sched = cpu_seconds() - t0;

  // Truth: slow nodes at 30-70 % of the rate; slow links at 40-70 % on pairs of healthy nodes.
  std::set<int> bad_nodes;
  std::uniform_int_distribution<int> any(0, n - 1);
  while (static_cast<int>(bad_nodes.size()) < slow_nodes) bad_nodes.insert(any(rng));
  std::map<int, double> node_factor;
  std::uniform_real_distribution<double> nf(0.3, 0.7), lf(0.4, 0.7);
  for (int b : bad_nodes) node_factor[b] = nf(rng);
  std::set<Pair> bad_links;
  std::uniform_int_distribution<std::size_t> anyp(0, all.size() - 1);
  for (int tries = 0; static_cast<int>(bad_links.size()) < slow_links && tries < 100000; ++tries) {
    Pair p = all[anyp(rng)];
    if (!bad_nodes.count(p.first) && !bad_nodes.count(p.second)) bad_links.insert(p);
  }
  std::normal_distribution<double> noise(1.0, 0.02);
  std::vector<PairResult> pairs;
  pairs.reserve(all.size());
  for (auto [a, b] : all) {
    double f = 1.0;
    if (node_factor.count(a)) f = std::min(f, node_factor[a]);
    if (node_factor.count(b)) f = std::min(f, node_factor[b]);
    if (bad_links.count({a, b})) f = std::min(f, lf(rng));
    pairs.push_back({a, b, 100.0 * f * noise(rng), 100.0 * f * noise(rng), ""});
  }

  for (int which = 0; which < 2; ++which) {
    t0 = cpu_seconds();
    Outliers o = which == 0 ? detect_outliers(n, pairs) : mean_sigma(n, pairs);
    const double t_detect = cpu_seconds() - t0;
    std::set<int> found_nodes;
    for (const auto& s : o.slow_nodes) found_nodes.insert(s.rank);
    std::set<Pair> found_links;
    for (const auto& l : o.slow_links) found_links.insert({l.a, l.b});
    Score sn = score(bad_nodes, found_nodes), sl = score(bad_links, found_links);
    std::printf("| %d | %s | %zu | %zu | %s | %d/%d | %.3f / %.3f | %.3f / %.3f | %.4f | %.4f |\n", n,
                pairs_name(spec).c_str(), sched.size(), pairs.size(), which == 0 ? "median/MAD" : "mean/3sd",
                slow_nodes, slow_links, sn.precision(), sn.recall(), sl.precision(), sl.recall(), t_sched, t_detect);
  }
}

}  // namespace

int main(int argc, char** argv) {
  // One real node's summary: what each rank sends rank 0.
  const char* fixture = argc > 1 ? argv[1] : FABSCOPE_BENCH_FIXTURE;
  NodeInfo node = probe::collect(core::Root(fixture), probe::Options{false});
  auto plan = ncclenv::plan(node, {});
  NodeSummary s = summarize_node(0, node, &plan, checks::run(node));
  const std::string blob = json(s).dump();
  std::printf("node summary of %s: %zu bytes of JSON, %zu attributes, %zu findings\n", fixture, blob.size(),
              s.attributes.size(), s.findings.size());
  // What rank 0 holds for N nodes: the gathered blobs, then the parsed summaries.
  for (std::size_t n : {1000u, 10000u}) {
    const long before = rss_kib();
    std::vector<std::optional<std::string>> gathered(n, blob);
    std::vector<NodeSummary> parsed;
    for (const auto& g : gathered) parsed.push_back(summary_from_json(json::parse(*g)));
    std::printf("rank 0 with %zu summaries: %.1f MiB more resident (blobs and parsed)\n", n,
                static_cast<double>(rss_kib() - before) / 1024.0);
  }
  std::printf("\n");

  std::printf("| N | pairs | rounds | pairs measured | detector | slow nodes/links injected | nodes precision / recall "
              "| links precision / recall | schedule CPU s | detect CPU s |\n|---|---|---|---|---|---|---|---|---|---|\n");
  // 1 in 128 nodes slow, then 1 in 16 (a bad batch of cables or a firmware roll-out gone wrong):
  // with more outliers the mean and standard deviation move towards them, the median does not.
  for (int n : {1024, 8192}) {
    for (int frac : {128, 16}) {
      run(n, {PairsMode::Ring, 0}, n / frac, 0, 11);
      run(n, {PairsMode::Random, 4}, n / frac, n / 64, 12);
      run(n, {PairsMode::Random, 16}, n / frac, n / 64, 13);
      if (n <= 1024) run(n, {PairsMode::All, 0}, n / frac, n / 64, 14);
    }
  }
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  std::printf("\npeak RSS %ld MiB\n", ru.ru_maxrss / 1024);
  return 0;
}

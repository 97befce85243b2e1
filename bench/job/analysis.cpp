// The job analysis at scale: RANKS ranks (8 per host, clocks of each host apart) x COMMS
// communicators x 64 collectives each (the plugin's ring), one rank late in every collective of
// the first communicator. Times job::analyze alone, and the JSON read of the same records (what
// `fabscope job --nodes` parses), each the median of REPEAT runs. bench/RESULTS.md, "Running job".
//
//   fabscope_job_bench [RANKS] [COMMS] [REPEAT]      (default 4096 8 5)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "job/analysis.hpp"

using namespace fabscope::job;

int main(int argc, char** argv) {
  const int ranks = argc > 1 ? std::atoi(argv[1]) : 4096;
  const int comms = argc > 2 ? std::atoi(argv[2]) : 8;
  const int repeat = argc > 3 ? std::atoi(argv[3]) : 5;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> jit(0, 3e5);
  Snapshot snap;
  snap.source = "synthetic";
  const std::uint64_t t0 = 1'800'000'000'000'000'000ull;
  for (int c = 0; c < comms; c++) {
    std::vector<RankRecord> recs(static_cast<std::size_t>(ranks));
    for (int r = 0; r < ranks; r++) {
      auto& rec = recs[static_cast<std::size_t>(r)];
      rec.job_id = "bench";
      rec.host = "node" + std::to_string(r / 8);
      rec.pid = 1000 + r;
      rec.comm = "00000000000000" + std::to_string(10 + c);
      rec.rank = r;
      rec.nranks = ranks;
      rec.gpu = r % 8;
    }
    for (int i = 0; i < 64; i++) {
      std::vector<double> arrive(static_cast<std::size_t>(ranks));
      double last = 0;
      for (int r = 0; r < ranks; r++) {
        arrive[static_cast<std::size_t>(r)] = i * 50e6 + jit(rng) + (c == 0 && r == 1234 ? 5e6 : 0);
        last = std::max(last, arrive[static_cast<std::size_t>(r)]);
      }
      for (int r = 0; r < ranks; r++) {
        const std::uint64_t off = static_cast<std::uint64_t>(r / 8) * 1'000'000'000ull;
        const double a = arrive[static_cast<std::size_t>(r)];
        OpRecord o;
        o.seq = static_cast<std::uint64_t>(i);
        o.op = "AllReduce";
        o.bytes = 1 << 26;
        o.cpu_start_unix_ns = t0 + off + static_cast<std::uint64_t>(a);
        o.gpu_start_ns = t0 + off + static_cast<std::uint64_t>(a);
        o.gpu_stop_ns = t0 + off + static_cast<std::uint64_t>(last + 2e6);
        o.done_unix_ns = o.gpu_stop_ns + 10000;
        auto& rec = recs[static_cast<std::size_t>(r)];
        rec.ops.push_back(o);
        rec.started = rec.completed = static_cast<std::uint64_t>(i + 1);
        rec.last_done_unix_ns = o.done_unix_ns;
        rec.now_unix_ns = o.done_unix_ns + 1000000;
      }
    }
    for (auto& r : recs) snap.ranks.push_back(std::move(r));
  }
  auto median_ms = [&](auto fn) {
    std::vector<double> t;
    for (int i = 0; i < repeat; i++) {
      auto a = std::chrono::steady_clock::now();
      fn();
      t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  };
  Analysis last;
  const double analyze_ms = median_ms([&] { last = analyze(snap); });
  const std::string text = fabscope::dump_json(snapshot_to_json(snap), -1);
  Snapshot back;
  const double parse_ms = median_ms([&] { back = parse_snapshot(text, "bench"); });
  int named = -1;
  for (const auto& c : last.comms)
    if (c.straggler >= 0) named = c.straggler;
  std::printf("ranks %d comms %d records %zu: analyze %.1f ms (median of %d), JSON %.1f MB read in %.1f ms; "
              "straggler named: rank %d (injected 1234), %zu finding(s)\n",
              ranks, comms, snap.ranks.size(), analyze_ms, repeat, static_cast<double>(text.size()) / 1e6, parse_ms,
              named, last.findings.size());
  return named == 1234 && last.findings.size() == 1 ? 0 : 1;
}

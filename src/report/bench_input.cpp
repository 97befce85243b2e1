// fabscope.bench (docs/bench.md) -> BenchRun.
#include <algorithm>
#include <set>

#include "core/fields.hpp"
#include "report/load.hpp"

namespace fabscope::report {

namespace {

Placement placement(const core::Fields& p) {
  Placement x;
  x.time_us = p.num("time_us");
  x.algbw_gbytes_per_s = p.num("algbw_gbytes_per_s");
  x.busbw_gbytes_per_s = p.num("busbw_gbytes_per_s");
  if (x.time_us < 0) p.fail("time_us", "negative");
  if (x.busbw_gbytes_per_s < 0) p.fail("busbw_gbytes_per_s", "negative");
  x.wrong = p.opt_int("wrong");
  return x;
}

}  // namespace

BenchRun bench_from_json(const std::string& file, const json& doc) {
  core::Fields top(file, doc);
  BenchRun r;
  r.source = "fabscope bench";
  core::Fields settings = top.object("settings");
  r.collective = settings.str("collective");
  r.datatype = settings.str_or("datatype", "");
  r.op = settings.str_or("op", "");
  core::Fields env = top.object("environment");
  if (auto n = env.opt_int("nranks")) r.nranks = static_cast<int>(*n);
  r.nccl_version = env.str_or("nccl_version", "");
  r.cuda_driver = env.str_or("cuda_driver", "");
  r.nvidia_driver = env.str_or("nvidia_driver", "");
  r.tool_version = env.str_or("fabscope_version", "");
  r.date_utc = env.str_or("date_utc", "");
  if (auto topo = top.optional_object("topology"))
    if (auto n = topo->opt_int("nodes")) r.nodes = static_cast<int>(*n);
  std::vector<std::string> hosts;
  if (top.has("devices")) {
    for (const auto& d : top.array("devices")) {
      std::string h = d.str_or("host", "");
      if (!h.empty() && std::find(hosts.begin(), hosts.end(), h) == hosts.end()) hosts.push_back(h);
      if (r.gpu_name.empty()) r.gpu_name = d.str_or("name", "");
    }
  }
  if (hosts.empty()) hosts.push_back(env.str_or("hostname", ""));
  for (const auto& h : hosts) r.hosts += (r.hosts.empty() ? "" : ", ") + h;
  for (const auto& row : top.array("results")) {
    BenchRow b;
    if (auto c = row.opt_int("cycle")) {
      if (*c < 0 || *c > 1000000) row.fail("cycle", "out of range: " + std::to_string(*c));
      b.cycle = static_cast<int>(*c);
    }
    b.size_bytes = row.uint("size_bytes");
    b.count = row.uint("count");
    b.out_of_place = placement(row.object("out_of_place"));
    if (auto ip = row.optional_object("in_place")) b.in_place = placement(*ip);
    r.rows.push_back(b);
  }
  core::Fields sum = top.object("summary");
  r.limit_gbytes_per_s = sum.opt_num("limit_gbytes_per_s");
  if (r.limit_gbytes_per_s && *r.limit_gbytes_per_s <= 0)
    sum.fail("limit_gbytes_per_s", "expected a positive number or null");
  r.limit_path = sum.str_or("limit_path", "");
  r.limit_description = sum.str_or("limit_description", "");
  r.verdict_level = sum.str_or("verdict_level", "");
  r.verdict = sum.str_or("verdict", "");
  r.wrong_total = sum.opt_int("wrong_total");
  r.avg_busbw_gbytes_per_s = sum.opt_num("avg_busbw_gbytes_per_s").value_or(0);
  r.peak_busbw_gbytes_per_s = sum.opt_num("peak_busbw_gbytes_per_s");
  if (r.peak_busbw_gbytes_per_s && *r.peak_busbw_gbytes_per_s < 0)
    sum.fail("peak_busbw_gbytes_per_s", "expected a number >= 0 or null");
  if (auto at = sum.opt_int("peak_size_bytes")) {
    if (*at < 0) sum.fail("peak_size_bytes", "expected a size >= 0");
    r.peak_size_bytes = static_cast<std::uint64_t>(*at);
  }
  return r;
}

BenchPeak bench_peak(const BenchRun& b) {
  BenchPeak p;
  if (b.nranks && *b.nranks <= 1) return p;  // one rank: no link crossed, no peak
  if (b.peak_busbw_gbytes_per_s) {
    p.known = *b.peak_busbw_gbytes_per_s > 0;
    p.busbw_gbytes_per_s = *b.peak_busbw_gbytes_per_s;
    p.size_bytes = b.peak_size_bytes;
    return p;
  }
  for (const auto& row : b.rows)
    for (const Placement* pl : {&row.out_of_place, row.in_place ? &*row.in_place : nullptr})
      if (pl && pl->busbw_gbytes_per_s > p.busbw_gbytes_per_s) {
        p.busbw_gbytes_per_s = pl->busbw_gbytes_per_s;
        p.size_bytes = row.size_bytes;
        p.known = true;
      }
  return p;
}

}  // namespace fabscope::report

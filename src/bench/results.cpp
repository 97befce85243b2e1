#include "bench/results.hpp"

#include <algorithm>
#include <cmath>

namespace fabscope::bench {

IterStats iter_stats(std::vector<double> times_us, int skip) {
  IterStats s;
  s.skipped = std::max(0, skip);
  s.times_us = times_us;
  if (static_cast<std::size_t>(s.skipped) >= times_us.size()) return s;
  std::vector<double> v(times_us.begin() + s.skipped, times_us.end());
  std::sort(v.begin(), v.end());
  const int n = static_cast<int>(v.size());
  // nccl-tests' nearest-rank percentile: ceil(n * p / 100) - 1, at most the last sample.
  auto pct = [&](int p) { return v[std::min(n - 1, (n * p + 99) / 100 - 1)]; };
  s.min_us = v.front();
  s.max_us = v.back();
  s.p50_us = v[n / 2];
  s.p95_us = pct(95);
  s.p99_us = pct(99);
  double sum = 0;
  for (double x : v) sum += x;
  s.avg_us = sum / n;
  double var = 0;
  for (double x : v) var += (x - s.avg_us) * (x - s.avg_us);
  s.stdev_us = std::sqrt(var / n);
  s.cv_pct = s.avg_us > 0 ? s.stdev_us / s.avg_us * 100.0 : 0.0;
  return s;
}

Timing make_timing(const CollectiveDesc& d, int nranks, std::uint64_t bytes, double time_us) {
  Timing t;
  t.time_us = time_us;
  if (time_us > 0) {
    t.algbw_gbytes_per_s = static_cast<double>(bytes) / (time_us * 1e-6) / 1e9;
    t.busbw_gbytes_per_s = busbw_gbytes_per_s(d.id, t.algbw_gbytes_per_s, nranks);
  }
  return t;
}

void summarise(Report& r) {
  Summary& s = r.summary;
  s.wrong_total = 0;
  s.checked = r.options.check;
  double sum = 0;
  int n = 0;
  s.peak_busbw = 0;
  auto take = [&](const Timing& t, std::uint64_t bytes) {
    if (t.wrong) s.wrong_total += *t.wrong;
    sum += t.busbw_gbytes_per_s;
    ++n;
    // One rank moves nothing over a link: its busbw is a local copy at best, and an in-place
    // broadcast or reduce is no work at all (a launch time divided into the size), so one rank
    // has no peak (nccl-tests' average still counts every placement).
    if (r.env.nranks > 1 && t.busbw_gbytes_per_s > s.peak_busbw) {
      s.peak_busbw = t.busbw_gbytes_per_s;
      s.peak_bytes = bytes;
    }
  };
  for (const auto& res : r.results) {
    take(res.out_of_place, res.bytes);
    if (res.in_place) take(*res.in_place, res.bytes);
  }
  s.avg_busbw = n ? sum / n : 0;
}

void to_json(json& j, const IterStats& v) {
  j = json{{"skipped_iterations", v.skipped}, {"min_us", v.min_us}, {"max_us", v.max_us},
           {"avg_us", v.avg_us}, {"p50_us", v.p50_us}, {"p95_us", v.p95_us}, {"p99_us", v.p99_us},
           {"stdev_us", v.stdev_us}, {"cv_pct", v.cv_pct}, {"times_us", v.times_us}};
}

void to_json(json& j, const Timing& v) {
  j = json{{"time_us", v.time_us},
           {"cpu_time_us", v.cpu_time_us >= 0 ? json(v.cpu_time_us) : json(nullptr)},
           {"algbw_gbytes_per_s", v.algbw_gbytes_per_s},
           {"busbw_gbytes_per_s", v.busbw_gbytes_per_s},
           {"wrong", v.wrong},
           {"iterations", v.iterations},
           {"batches", v.batches},
           {"rel_ci95", v.rel_ci >= 0 ? json(v.rel_ci) : json(nullptr)},
           {"per_iteration", v.per_iter ? json(*v.per_iter) : json(nullptr)}};
}

void to_json(json& j, const SizeResult& v) {
  j = json{{"size_bytes", v.bytes}, {"count", v.count}, {"cycle", v.cycle}, {"out_of_place", v.out_of_place},
           {"in_place", v.in_place ? json(*v.in_place) : json(nullptr)}};
}

void to_json(json& j, const DeviceInfo& v) {
  j = json{{"rank", v.rank}, {"host", v.host}, {"pid", v.pid}, {"cuda_device", v.cuda_device},
           {"pci_bus_id", v.pci_bus_id}, {"name", v.name}};
}

void to_json(json& j, const Topology& v) {
  json nics = json::array();
  for (const auto& n : v.nics) nics.push_back({{"name", n.name}, {"rate_gbps", n.rate_gbps}});
  j = json{{"gpus", v.gpus},
           {"nvlink_active_per_gpu", v.nvlink_active},
           {"nvlink_link_gbytes_per_s", v.nvlink_link_gbytes_per_s},
           {"nvlink_rate_source", v.nvlink_rate_source},
           {"nics", nics},
           {"nodes", v.nodes}};
}

void to_json(json& j, const Environment& v) {
  j = json{{"hostname", v.hostname},
           {"launcher", v.launcher},
           {"launch_evidence", v.launch_evidence},
           {"nranks", v.nranks},
           {"processes", v.processes},
           {"nccl_version", v.nccl_version},
           {"cuda_driver", v.cuda_driver},
           {"cuda_runtime", v.cuda_runtime},
           {"nvidia_driver", v.nvidia_driver},
           {"fabscope_version", v.fabscope_version},
           {"nccl_env", v.nccl_env},
           {"date_utc", v.date_utc}};
}

void to_json(json& j, const Summary& v) {
  j = json{{"wrong_total", v.checked ? json(v.wrong_total) : json(nullptr)},
           {"avg_busbw_gbytes_per_s", v.avg_busbw},
           {"peak_busbw_gbytes_per_s", v.peak_busbw},
           {"peak_size_bytes", v.peak_bytes},
           {"limit_gbytes_per_s", v.limit.gbytes_per_s},
           {"limit_path", v.limit.path},
           {"limit_description", v.limit.description},
           {"efficiency", v.efficiency},
           {"verdict_level", v.verdict_level},
           {"verdict", v.verdict},
           {"sweep_s", v.sweep_s}};
}

json settings_json(const Options& o) {
  const auto& d = describe(o.collective);
  json sizes = json::array();
  for (auto b : sweep_sizes(o.sweep)) sizes.push_back(b);
  return json{{"collective", d.name},
              {"datatype", type_name(o.type)},
              {"op", d.has_op ? json(op_name(o.op)) : json(nullptr)},
              {"root", d.has_root ? json(o.root) : json(nullptr)},
              {"sizes_bytes", sizes},
              {"iterations", o.stop.adaptive ? "adaptive" : "fixed"},
              {"fixed_iters", o.stop.adaptive ? json(nullptr) : json(o.stop.fixed_iters)},
              {"warmup_iters", (o.warmup_explicit || !o.stop.adaptive) ? json(o.stop.fixed_warmup) : json(nullptr)},
              {"precision_rel_ci95", o.stop.adaptive ? json(o.stop.rel_precision) : json(nullptr)},
              {"max_time_s", o.stop.adaptive ? json(o.stop.max_time_s) : json(nullptr)},
              {"check", o.check},
              {"cuda_graphs", o.graphs},
              {"timeout_s", o.timeout_s},
              {"timer", timer_name(o.timer)},
              {"average", average_name(o.average)},
              {"report_cputime", o.report_cputime},
              {"run_cycles", o.cycles},
              {"registration", registration_name(o.registration)},
              {"per_iter_timing", o.per_iter},
              {"per_iter_skip", o.per_iter_skip}};
}

json report_json(const Report& r) {
  json results = json::array();
  for (const auto& s : r.results) results.push_back(s);
  json devices = json::array();
  for (const auto& d : r.devices) devices.push_back(d);
  return json{{"schema", "fabscope.bench"},
              {"schema_version", Report::kSchemaVersion},
              {"settings", settings_json(r.options)},
              {"environment", r.env},
              {"topology", r.topo},
              {"devices", devices},
              {"results", results},
              {"summary", r.summary}};
}

}  // namespace fabscope::bench

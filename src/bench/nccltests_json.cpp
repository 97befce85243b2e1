#include "bench/nccltests_json.hpp"

#include <cmath>
#include <cstdio>

#include "bench/sizes.hpp"
#include "core/strings.hpp"

namespace fabscope::bench {

namespace {

std::string num(double v) {
  if (std::isnan(v)) return "\"nan\"";
  return core::format_double("%lf", v);
}

std::string str(const std::string& s) { return "\"" + nccl_tests_json_string(s) + "\""; }
std::string boolean(bool b) { return b ? "\"true\"" : "\"false\""; }

// "0000:19:00.0" -> "0000:19:00": nccl-tests prints domain:bus:device.
std::string device_hex(const std::string& pci) {
  auto dot = pci.rfind('.');
  return dot == std::string::npos ? pci : pci.substr(0, dot);
}

std::string placement(const Options& o, const char* key, const Timing& t) {
  std::string s = ",\"" + std::string(key) + "\":{";
  double shown = o.report_cputime && t.cpu_time_us >= 0 ? t.cpu_time_us : t.time_us;
  s += std::string(o.report_cputime ? "\"cpu_time\":" : "\"time\":") + num(shown);
  s += ",\"alg_bw\":" + num(t.algbw_gbytes_per_s) + ",\"bus_bw\":" + num(t.busbw_gbytes_per_s);
  s += ",\"nwrong\":" + (t.wrong ? num(static_cast<double>(*t.wrong)) : std::string("null")) + "}";
  if (o.per_iter && t.per_iter) {
    const IterStats& st = *t.per_iter;
    s += ",\"" + std::string(key) + "_per_iter\":{\"skipped_iterations\":" + std::to_string(st.skipped);
    s += ",\"min_us\":" + num(st.min_us) + ",\"max_us\":" + num(st.max_us) + ",\"avg_us\":" + num(st.avg_us);
    s += ",\"p50_us\":" + num(st.p50_us) + ",\"p95_us\":" + num(st.p95_us) + ",\"p99_us\":" + num(st.p99_us);
    s += ",\"stdev_us\":" + num(st.stdev_us) + ",\"cv_pct\":" + num(st.cv_pct) + ",\"times_us\":[";
    for (std::size_t i = 0; i < st.times_us.size(); ++i) s += (i ? "," : "") + num(st.times_us[i]);
    s += "]}";
  }
  return s;
}

}  // namespace

std::string nccl_tests_json_string(const std::string& in) {
  std::string out;
  for (char c : in) {
    switch (c) {
      case '"': case '\\': case '/': out += '\\'; out += c; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      default:
        if (static_cast<unsigned char>(c) >= 0x7f || static_cast<unsigned char>(c) <= 0x1f) return out;
        out += c;
    }
  }
  return out;
}

std::string nccl_tests_json(const Report& r, const NcclTestsJsonContext& ctx) {
  const Options& o = r.options;
  const auto& d = describe(o.collective);
  auto sizes = sweep_sizes(o.sweep);
  std::string s = "{\"version\":3,\"start_time\":" + str(ctx.start_time) + ",\"args\":[";
  for (std::size_t i = 0; i < ctx.args.size(); ++i) s += (i ? "," : "") + str(ctx.args[i]);
  s += "],\"env\":[";
  for (std::size_t i = 0; i < ctx.env.size(); ++i) s += (i ? "," : "") + str(ctx.env[i]);
  s += "],\"nccl_version\":" + std::to_string(ctx.nccl_version_code);

  // config: one process thread; ngpus = GPUs this process drives.
  int ngpus = r.env.processes > 0 ? r.env.nranks / r.env.processes : 1;
  s += ",\"config\":{\"nthreads\":1,\"ngpus\":" + std::to_string(ngpus);
  s += ",\"minimum_bytes\":" + std::to_string(sizes.empty() ? 0 : sizes.front());
  s += ",\"maximum_bytes\":" + std::to_string(sizes.empty() ? 0 : sizes.back());
  if (o.sweep.list.empty() && !o.sweep.step_bytes)
    s += ",\"step_factor\":" + std::to_string(static_cast<unsigned long long>(o.sweep.step_factor));
  else
    s += ",\"step_bytes\":" + std::to_string(o.sweep.step_bytes);
  // Adaptive runs have no fixed count: iterations 0, the count of each row is actual_iterations.
  s += ",\"warmup_iters\":" + std::to_string(o.stop.adaptive && !o.warmup_explicit ? 0 : o.stop.fixed_warmup);
  s += ",\"iterations\":" + std::to_string(o.stop.adaptive ? 0 : o.stop.fixed_iters);
  s += ",\"aggregated_iterations\":1,\"validation\":" + std::to_string(o.check ? 1 : 0);
  s += ",\"graph\":" + std::to_string(o.graphs ? 1 : 0);
  s += ",\"blocking_collectives\":\"false\",\"per_iter_timing\":" + boolean(o.per_iter);
  s += ",\"per_iter_skip\":" + std::to_string(o.per_iter_skip) + ",\"parallel_init\":\"false\",\"devices\":[";
  for (std::size_t i = 0; i < r.devices.size(); ++i) {
    const DeviceInfo& dev = r.devices[i];
    s += std::string(i ? "," : "") + "{\"rank\":" + std::to_string(dev.rank) + ",\"group\":0,\"pid\":" +
         std::to_string(dev.pid) + ",\"hostname\":" + str(dev.host) + ",\"device\":" + std::to_string(dev.cuda_device) +
         ",\"device_hex\":" + str(device_hex(dev.pci_bus_id)) + ",\"device_info\":" + str(dev.name) + "}";
  }
  s += "]}";

  s += ",\"results\":[";
  int failed = 0;
  for (std::size_t i = 0; i < r.results.size(); ++i) {
    const SizeResult& res = r.results[i];
    char root[16];
    std::snprintf(root, sizeof root, "%6i", d.has_root ? o.root : -1);
    std::string redop = d.has_op ? std::string(op_name(o.op)) : std::string(d.redop_label);
    s += std::string(i ? "," : "") + "{\"size\":" + std::to_string(res.bytes) + ",\"count\":" + std::to_string(res.count) +
         ",\"type\":" + str(std::string(type_name(o.type))) + ",\"redop\":" + str(redop) + ",\"root\":" + str(root);
    s += placement(o, "out_of_place", res.out_of_place);
    if (res.out_of_place.wrong && *res.out_of_place.wrong > 0) ++failed;
    if (res.in_place) {
      s += placement(o, "in_place", *res.in_place);
      if (res.in_place->wrong && *res.in_place->wrong > 0) ++failed;
    }
    s += ",\"actual_iterations\":" + std::to_string(res.out_of_place.iterations) + ",\"experiment_name\":\"\"}";
  }
  // nccl-tests counts the (size, placement) checks that failed, not the wrong elements.
  s += "],\"out_of_bounds\":{\"count\":" + std::to_string(failed) + ",\"okay\":" + boolean(failed == 0) + "}";
  s += ",\"average_bus_bandwidth\":{\"bandwidth\":" + num(r.summary.avg_busbw) + ",\"okay\":\"unchecked\"}";
  s += ",\"errors\":[" + str(ctx.last_error) + "],\"end_time\":" + str(ctx.end_time) + "}";
  return s;
}

}  // namespace fabscope::bench

#include "bench/output.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "bench/sizes.hpp"
#include "core/strings.hpp"
#include "core/table.hpp"

namespace fabscope::bench {

namespace {

std::string pad_left(const std::string& s, std::size_t w) {
  return s.size() >= w ? s : std::string(w - s.size(), ' ') + s;
}

std::string cells(const Options& o, const std::optional<Timing>& t) {
  if (!t) {
    std::string out = "  " + pad_left("N/A", 7) + "  " + pad_left("N/A", 6) + "  " + pad_left("N/A", 6) + "  " + pad_left("N/A", 6);
    if (o.per_iter) out += "  " + pad_left("N/A", 7) + "  " + pad_left("N/A", 7) + "  " + pad_left("N/A", 7) + "  " + pad_left("N/A", 7);
    return out;
  }
  std::string wrong = t->wrong ? std::to_string(*t->wrong) : "N/A";
  double shown = o.report_cputime && t->cpu_time_us >= 0 ? t->cpu_time_us : t->time_us;
  std::string out = "  " + float_cell(shown, 7) + "  " + float_cell(t->algbw_gbytes_per_s, 6) + "  " +
                    float_cell(t->busbw_gbytes_per_s, 6) + "  " + pad_left(wrong, 6);
  if (o.per_iter) {
    IterStats st = t->per_iter ? *t->per_iter : IterStats{};
    out += "  " + float_cell(st.min_us, 7) + "  " + float_cell(st.max_us, 7) + "  " + float_cell(st.p99_us, 7) + "  " +
           float_cell(st.cv_pct, 7);
  }
  return out;
}

std::string redop_text(const Options& o) {
  const auto& d = describe(o.collective);
  return d.has_op ? std::string(op_name(o.op)) : std::string(d.redop_label);
}

std::string iterations_text(const Options& o) {
  if (!o.stop.adaptive) return std::to_string(o.stop.fixed_iters);
  std::ostringstream s;
  s << "adaptive(ci95<=" << o.stop.rel_precision * 100 << "%,max " << o.stop.max_time_s << "s)";
  return s.str();
}
}  // namespace

std::string format_time_us(double us) {
  std::string s = float_cell(us, 7);
  return s.substr(std::min(s.find_first_not_of(' '), s.size()));
}

std::string float_cell(double v, int width) {
  // nccl-tests' getFloatStr: two decimals, then one, then none, then an exponent, whichever fits.
  char buf[64];
  for (const char* f : {"%*.2f", "%*.1f", "%*.0f"}) {
    int n = std::snprintf(buf, sizeof buf, f, width, v);
    if (n <= width) return buf;
  }
  std::snprintf(buf, sizeof buf, width >= 7 ? "%*.1e" : "%*.0e", width, v);
  return buf;
}

std::string text_header(const Report& r) {
  const Options& o = r.options;
  const auto& d = describe(o.collective);
  auto sizes = sweep_sizes(o.sweep);
  std::ostringstream s;
  s << "# fabscope bench " << d.name << ": nranks " << r.env.nranks << " launcher " << r.env.launcher
    << " processes " << r.env.processes << " minBytes " << (sizes.empty() ? 0 : sizes.front())
    << " maxBytes " << (sizes.empty() ? 0 : sizes.back());
  if (!o.sweep.list.empty()) s << " step: list(" << sizes.size() << ")";
  else if (o.sweep.step_bytes) s << " step: " << o.sweep.step_bytes << "(bytes)";
  else s << " step: " << o.sweep.step_factor << "(factor)";
  s << " warmup iters: "
    << ((o.warmup_explicit || !o.stop.adaptive) ? std::to_string(o.stop.fixed_warmup) : std::string("auto"))
    << " iters: " << iterations_text(o) << " validation: " << (o.check ? 1 : 0)
    << " graph: " << (o.graphs ? 1 : 0) << " timer: " << timer_name(o.timer)
    << " average: " << average_name(o.average) << " registration: " << registration_name(o.registration);
  if (o.cycles > 1) s << " cycles: " << o.cycles;
  s << "\n";
  if (o.timer == Timer::Gpu)
    s << "# Timer gpu: CUDA events around each batch, launch cost hidden (not nccl-tests' time)\n";
  if (o.per_iter) {
    s << "# Per-iteration report: CUDA event timing; i_* uses the max over ranks";
    if (o.per_iter_skip) s << "; statistics skip the first " << o.per_iter_skip << " iterations";
    s << "\n";
  }
  s << "# NCCL " << (r.env.nccl_version.empty() ? "?" : r.env.nccl_version) << ", CUDA driver "
    << (r.env.cuda_driver.empty() ? "?" : r.env.cuda_driver) << ", runtime "
    << (r.env.cuda_runtime.empty() ? "?" : r.env.cuda_runtime) << ", fabscope " << r.env.fabscope_version << "\n";
  s << "#\n# Using devices\n";
  for (const auto& dev : r.devices) {
    char buf[512];
    std::snprintf(buf, sizeof buf, "#  Rank %2d Group  0 Pid %6d on %10s device %2d [%s] %s\n", dev.rank, dev.pid,
                  dev.host.c_str(), dev.cuda_device, dev.pci_bus_id.c_str(), dev.name.c_str());
    s << buf;
  }
  s << "#\n";
  const char* time = o.report_cputime ? "cputime" : "time";
  char line[512];
  if (o.per_iter) {
    std::snprintf(line, sizeof line,
                  "# %10s  %12s  %8s  %6s  %6s              out-of-place (+ per-iteration)"
                  "                                in-place (+ per-iteration)\n",
                  "", "", "", "", "");
    s << line;
    std::snprintf(line, sizeof line,
                  "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %7s  %7s  %7s  %7s  %6s  %6s  %6s  %7s  %7s  %7s  %7s\n",
                  "size", "count", "type", "redop", "root", time, "algbw", "busbw", "#wrong", "i_min", "i_max", "i_p99",
                  "i_cv%", time, "algbw", "busbw", "#wrong", "i_min", "i_max", "i_p99", "i_cv%");
    s << line;
    std::snprintf(line, sizeof line,
                  "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %7s  %7s  %7s  %7s  %6s  %6s  %6s  %7s  %7s  %7s  %7s\n",
                  "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(us)", "(us)", "(%)", "(us)",
                  "(GB/s)", "(GB/s)", "", "(us)", "(us)", "(us)", "(%)");
    s << line;
  } else {
    s << "#" << std::string(61, ' ') << "out-of-place" << std::string(22, ' ') << "in-place" << std::string(12, ' ') << "\n";
    std::snprintf(line, sizeof line, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n", "size",
                  "count", "type", "redop", "root", time, "algbw", "busbw", "#wrong", time, "algbw", "busbw", "#wrong");
    s << line;
    std::snprintf(line, sizeof line, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n", "(B)",
                  "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
    s << line;
  }
  return s.str();
}

std::string text_row(const Report& r, const SizeResult& res) {
  const Options& o = r.options;
  const auto& d = describe(o.collective);
  char buf[128];
  std::snprintf(buf, sizeof buf, "%12llu  %12llu  %8s  %6s  %6d", static_cast<unsigned long long>(res.bytes),
                static_cast<unsigned long long>(res.count), std::string(type_name(o.type)).c_str(),
                redop_text(o).c_str(), d.has_root ? o.root : -1);
  return std::string(buf) + cells(o, res.out_of_place) + cells(o, res.in_place) + "\n";
}

std::string text_summary(const Report& r) {
  const Summary& sm = r.summary;
  std::ostringstream s;
  s << "# Out of bounds values : " << sm.wrong_total << (sm.wrong_total ? " FAILED" : " OK") << "\n";
  s << "# Avg bus bandwidth    : " << core::format_double("%g", sm.avg_busbw) << " \n#\n";
  if (!sm.checked) s << "# Values were not checked (-c 0).\n";
  if (sm.limit.gbytes_per_s) {
    s << "# Path limit           : " << sm.limit.path << ", " << sm.limit.description << " = "
      << core::format_double("%.0f", *sm.limit.gbytes_per_s) << " GB/s per GPU and direction\n";
  } else {
    s << "# Path limit           : unknown" << (sm.limit.description.empty() ? "" : " (" + sm.limit.description + ")") << "\n";
  }
  if (sm.peak_busbw > 0) {  // one rank moves nothing over a link: every busbw is 0, no peak
    s << "# Peak bus bandwidth   : " << core::format_double("%.2f", sm.peak_busbw) << " GB/s at " << sm.peak_bytes << " B";
    if (sm.efficiency) s << ", " << core::format_double("%.0f", *sm.efficiency * 100) << "% of the limit";
    s << "\n";
  }
  // The verdict wraps to 100 columns; continuation lines stay comments for nccl-tests parsers.
  const std::string lead = "# Verdict              : ";
  std::string wrapped = core::wrap(sm.verdict, 100, "#" + std::string(lead.size() - 1, ' '));
  if (wrapped.size() >= lead.size()) wrapped.replace(0, lead.size(), lead);
  else wrapped = lead + "\n";
  s << wrapped;
  return s.str();
}

std::string render_text(const Report& r) {
  std::string out = text_header(r);
  for (const auto& res : r.results) out += text_row(r, res);
  return out + text_summary(r);
}

std::string csv_header() {
  return "collective,size_bytes,count,datatype,redop,root,placement,time_us,algbw_gbytes_per_s,"
         "busbw_gbytes_per_s,wrong,iterations,rel_ci95,nranks,nodes,launcher,graphs,nccl_version,"
         "cuda_driver,gpu_name,nvlink_active_per_gpu,nvlink_link_gbytes_per_s,host,timer,cpu_time_us,cycle,"
         "i_min_us,i_max_us,i_p50_us,i_p95_us,i_p99_us,i_cv_pct\n";
}

std::string csv_rows(const Report& r, const SizeResult& res) {
  const Options& o = r.options;
  const auto& d = describe(o.collective);
  std::string gpu = r.devices.empty() ? "" : r.devices.front().name;
  for (auto& c : gpu)
    if (c == ',' || c == '"') c = ' ';
  auto line = [&](const char* placement, const Timing& t) {
    std::ostringstream s;
    s << d.name << ',' << res.bytes << ',' << res.count << ',' << type_name(o.type) << ','
      << redop_text(o) << ',' << (d.has_root ? o.root : -1) << ','
      << placement << ',' << core::format_double("%.3f", t.time_us) << ',' << core::format_double("%.3f", t.algbw_gbytes_per_s) << ','
      << core::format_double("%.3f", t.busbw_gbytes_per_s) << ',' << (t.wrong ? std::to_string(*t.wrong) : "") << ','
      << t.iterations << ',' << (t.rel_ci >= 0 ? core::format_double("%.5f", t.rel_ci) : "") << ',' << r.env.nranks << ','
      << r.topo.nodes << ',' << r.env.launcher << ',' << (o.graphs ? 1 : 0) << ',' << r.env.nccl_version << ','
      << r.env.cuda_driver << ',' << gpu << ','
      << (r.topo.nvlink_active ? std::to_string(*r.topo.nvlink_active) : "") << ','
      << (r.topo.nvlink_link_gbytes_per_s ? core::format_double("%g", *r.topo.nvlink_link_gbytes_per_s) : "") << ','
      << r.env.hostname << ',' << timer_name(o.timer) << ','
      << (t.cpu_time_us >= 0 ? core::format_double("%.3f", t.cpu_time_us) : "") << ',' << res.cycle;
    if (t.per_iter) {
      const IterStats& st = *t.per_iter;
      for (double v : {st.min_us, st.max_us, st.p50_us, st.p95_us, st.p99_us, st.cv_pct}) s << ',' << core::format_double("%.3f", v);
    } else {
      s << ",,,,,,";
    }
    s << "\n";
    return s.str();
  };
  std::string out = line("out_of_place", res.out_of_place);
  if (res.in_place) out += line("in_place", *res.in_place);
  return out;
}

std::string render_csv(const Report& r) {
  std::string out = csv_header();
  for (const auto& res : r.results) out += csv_rows(r, res);
  return out;
}

}  // namespace fabscope::bench

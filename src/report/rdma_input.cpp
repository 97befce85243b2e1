// fabscope.rdma (docs/formats.md) -> RdmaDoc.
#include "core/fields.hpp"
#include "report/load.hpp"

namespace fabscope::report {

namespace {

bool boolean(const core::Fields& f, const std::string& key, bool def) {
  if (!f.has(key)) return def;
  const json& v = f.raw()[key];
  if (!v.is_boolean()) f.fail(key, "expected true or false, got " + core::describe(v));
  return v.get<bool>();
}

RdmaEnd end_from(const core::Fields& e) {
  RdmaEnd x;
  x.host = e.str_or("host", "");
  x.address = e.str_or("address", "");
  x.device = e.str_or("device", "");
  x.port = static_cast<int>(e.opt_int("port").value_or(0));
  x.link_layer = e.str_or("link_layer", "");
  x.netdev = e.str_or("netdev", "");
  x.gid = e.str_or("gid", "");
  if (auto g = e.opt_int("gid_index")) x.gid_index = static_cast<int>(*g);
  if (auto m = e.opt_int("active_mtu")) x.active_mtu = static_cast<int>(*m);
  x.rate_gbps = e.opt_num("rate_gbps");
  x.software = boolean(e, "software", false);
  return x;
}

double non_negative(const core::Fields& f, const std::string& key) {
  double v = f.num(key);
  if (v < 0) f.fail(key, "negative: " + std::to_string(v));
  return v;
}

}  // namespace

RdmaDoc rdma_from_json(const std::string& file, const json& doc) {
  core::Fields top(file, doc);
  RdmaDoc r;
  r.role = top.str("role");
  core::Fields o = top.object("options");
  r.test = o.str("test");
  if (r.test != "bw" && r.test != "lat") o.fail("test", "expected \"bw\" or \"lat\", got \"" + r.test + "\"");
  r.op = o.str_or("op", "");
  r.oob = o.str_or("oob", "");
  r.qps = static_cast<int>(o.opt_int("qps").value_or(1));
  r.bidirectional = boolean(o, "bidirectional", false);
  if (o.has("sizes_bytes")) r.sizes_asked = o.array("sizes_bytes").size();
  r.local = end_from(top.object("local"));
  r.remote = end_from(top.object("remote"));
  if (auto m = top.opt_int("path_mtu")) r.path_mtu = static_cast<int>(*m);
  for (const auto& s : top.array("sizes")) {
    RdmaSize x;
    x.bytes = s.uint("bytes");
    x.iterations = s.uint("iterations");
    x.total_bytes = s.uint("total_bytes");
    x.seconds = non_negative(s, "seconds");
    x.gbps = non_negative(s, "gbps");
    x.mib_per_s = s.opt_num("mib_per_s").value_or(0);
    x.msg_rate_mpps = s.opt_num("msg_rate_mpps").value_or(0);
    if (auto l = s.optional_object("latency")) {
      RdmaSize::Latency lat;
      lat.min_us = non_negative(*l, "min_us");
      lat.median_us = non_negative(*l, "median_us");
      lat.p99_us = non_negative(*l, "p99_us");
      lat.max_us = non_negative(*l, "max_us");
      lat.mean_us = l->opt_num("mean_us").value_or(0);
      if (!(lat.min_us <= lat.median_us && lat.median_us <= lat.p99_us && lat.p99_us <= lat.max_us))
        l->fail("min_us", "percentiles out of order: min " + std::to_string(lat.min_us) + ", median " +
                              std::to_string(lat.median_us) + ", p99 " + std::to_string(lat.p99_us) + ", max " +
                              std::to_string(lat.max_us));
      x.latency = lat;
    }
    if (s.has("data_verified")) x.data_verified = boolean(s, "data_verified", false);
    r.sizes.push_back(x);
  }
  r.efficiency = top.opt_num("efficiency");
  r.verdict = top.str_or("verdict", "");
  r.completed = boolean(top, "completed", false);
  r.findings = core::findings_from(top, "findings");
  return r;
}

}  // namespace fabscope::report

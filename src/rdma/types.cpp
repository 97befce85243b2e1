#include "rdma/types.hpp"

#include <cmath>

#include "core/error.hpp"
#include "core/fields.hpp"

namespace fabscope::rdma {

const char* to_string(Test t) { return t == Test::Bw ? "bw" : "lat"; }

const char* to_string(Op o) {
  switch (o) {
    case Op::Write: return "write";
    case Op::Read: return "read";
    case Op::Send: return "send";
  }
  return "?";
}

const char* to_string(Oob o) { return o == Oob::Cm ? "cm" : "tcp"; }

Test test_from_string(const std::string& s) {
  if (s == "bw") return Test::Bw;
  if (s == "lat") return Test::Lat;
  throw UsageError("rdma: unknown test '" + s + "' (expected bw or lat)");
}

Op op_from_string(const std::string& s) {
  if (s == "write") return Op::Write;
  if (s == "read") return Op::Read;
  if (s == "send") return Op::Send;
  throw UsageError("rdma: unknown operation '" + s + "' (expected write, read or send)");
}

Oob oob_from_string(const std::string& s) {
  if (s == "cm") return Oob::Cm;
  if (s == "tcp") return Oob::Tcp;
  throw UsageError("rdma: unknown --oob '" + s + "' (expected cm or tcp)");
}

std::uint64_t parse_size(const std::string& text) {
  std::size_t i = 0;
  std::uint64_t v = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9' && i < 12) v = v * 10 + static_cast<unsigned>(text[i++] - '0');
  if (i == 0) throw UsageError("rdma: size '" + text + "' is not a number of bytes (e.g. 65536, 64K, 8M)");
  std::string unit = text.substr(i);
  std::uint64_t mul = 1;
  if (unit.empty() || unit == "B") mul = 1;
  else if (unit == "K" || unit == "k" || unit == "KiB" || unit == "KB") mul = 1ull << 10;
  else if (unit == "M" || unit == "MiB" || unit == "MB") mul = 1ull << 20;
  else if (unit == "G" || unit == "GiB" || unit == "GB") mul = 1ull << 30;
  else throw UsageError("rdma: size '" + text + "' has an unknown unit (B, K, M, G)");
  if (v > (1ull << 40)) throw UsageError("rdma: size '" + text + "' is too large");
  return v * mul;
}

std::pair<std::string, std::optional<int>> parse_device(const std::string& text) {
  auto colon = text.find(':');
  std::string dev = text.substr(0, colon);
  if (dev.empty() || dev.size() > 64) throw UsageError("rdma: --device '" + text + "' names no device");
  if (colon == std::string::npos) return {dev, std::nullopt};
  std::string port = text.substr(colon + 1);
  if (port.empty() || port.size() > 3 || port.find_first_not_of("0123456789") != std::string::npos)
    throw UsageError("rdma: --device '" + text + "': port '" + port + "' is not a number");
  return {dev, std::stoi(port)};
}

std::vector<std::uint64_t> all_sizes() {
  std::vector<std::uint64_t> v;
  for (std::uint64_t s = 2; s <= (8ull << 20); s *= 2) v.push_back(s);
  return v;
}

namespace {
constexpr std::uint64_t kMaxSize = 1ull << 30;  // 1 GiB per message, per QP buffer
constexpr int kMaxQps = 64;
constexpr int kMaxTxDepth = 8192;
}  // namespace

Options normalized(Options o) {
  const bool bw = o.test == Test::Bw;
  if (o.sizes_bytes.empty()) o.sizes_bytes = {bw ? 65536u : 2u};
  for (auto s : o.sizes_bytes)
    if (s < 1 || s > kMaxSize)
      throw UsageError("rdma: message size " + std::to_string(s) + " out of range (1 B .. 1 GiB)");
  if (o.iterations == 0) o.iterations = bw ? 5000 : 1000;
  if (o.iterations > 1'000'000'000ull)
    throw UsageError("rdma: --iters " + std::to_string(o.iterations) + " out of range (1 .. 1e9)");
  if (o.duration_s && (!std::isfinite(*o.duration_s) || *o.duration_s <= 0 || *o.duration_s > 3600))
    throw UsageError("rdma: --duration " + std::to_string(*o.duration_s) + " out of range (0 .. 3600 s)");
  if (o.qps < 1 || o.qps > kMaxQps)
    throw UsageError("rdma: --qps " + std::to_string(o.qps) + " out of range (1 .. 64)");
  if (o.tx_depth == 0) o.tx_depth = bw ? 128 : 1;
  if (o.tx_depth < 1 || o.tx_depth > kMaxTxDepth)
    throw UsageError("rdma: --tx-depth " + std::to_string(o.tx_depth) + " out of range (1 .. 8192)");
  if (o.bidirectional && !bw) throw UsageError("rdma: --bidirectional applies to the bw test only");
  // Latency keeps every sample (8 B each) for the percentiles.
  if (!bw && o.iterations > 10'000'000ull)
    throw UsageError("rdma: --iters " + std::to_string(o.iterations) + " out of range for lat (1 .. 1e7)");
  if (!bw && o.qps != 1) throw UsageError("rdma: the lat test runs on one QP (--qps " + std::to_string(o.qps) + ")");
  if (o.tcp_port < 0 || o.tcp_port > 65535)
    throw UsageError("rdma: --port " + std::to_string(o.tcp_port) + " out of range (1 .. 65535)");
  if (!std::isfinite(o.timeout_s) || o.timeout_s < 0.1 || o.timeout_s > 3600)
    throw UsageError("rdma: --timeout " + std::to_string(o.timeout_s) + " out of range (0.1 .. 3600 s)");
  if (o.gid_index && (*o.gid_index < 0 || *o.gid_index > 1023))
    throw UsageError("rdma: --gid-index " + std::to_string(*o.gid_index) + " out of range (0 .. 1023)");
  if (o.ib_port && (*o.ib_port < 1 || *o.ib_port > 255))
    throw UsageError("rdma: port " + std::to_string(*o.ib_port) + " in --device out of range (1 .. 255)");
  return o;
}

void to_json(json& j, const Options& v) {
  j = json{{"test", to_string(v.test)},
           {"op", to_string(v.op)},
           {"sizes_bytes", v.sizes_bytes},
           {"iterations", v.iterations},
           {"duration_s", v.duration_s},
           {"qps", v.qps},
           {"tx_depth", v.tx_depth},
           {"bidirectional", v.bidirectional},
           {"oob", to_string(v.oob)},
           {"tcp_port", v.tcp_port},
           {"timeout_s", v.timeout_s}};
}

void from_json(const json& j, Options& v) {
  v.test = test_from_string(j.at("test").get<std::string>());
  v.op = op_from_string(j.at("op").get<std::string>());
  v.sizes_bytes.clear();
  for (const auto& s : j.at("sizes_bytes")) v.sizes_bytes.push_back(int_value<std::uint64_t>(s, "sizes_bytes"));
  v.iterations = int_at<std::uint64_t>(j, "iterations");
  v.duration_s = j.value("duration_s", std::optional<double>{});
  v.qps = int_at<int>(j, "qps");
  v.tx_depth = int_at<int>(j, "tx_depth");
  v.bidirectional = j.value("bidirectional", false);
  v.oob = oob_from_string(j.value("oob", std::string("cm")));
  v.tcp_port = int_or<int>(j, "tcp_port", 18515);
  v.timeout_s = j.value("timeout_s", 10.0);
}

// Written out rather than with NLOHMANN_DEFINE_TYPE_*: those define inline functions, which
// other translation units (the engine, the cluster mode) could not link against.
void to_json(json& j, const Choice& v) { j = json{{"what", v.what}, {"value", v.value}, {"reason", v.reason}}; }
void from_json(const json& j, Choice& v) {
  v.what = j.value("what", "");
  v.value = j.value("value", "");
  v.reason = j.value("reason", "");
}

void to_json(json& j, const Endpoint& v) {
  j = json{{"host", v.host},           {"address", v.address},       {"device", v.device},
           {"port", v.port},           {"link_layer", v.link_layer}, {"netdev", v.netdev},
           {"gid_index", v.gid_index}, {"gid", v.gid},               {"lid", v.lid},
           {"active_mtu", v.active_mtu}, {"rate_gbps", v.rate_gbps}, {"software", v.software}};
}
void from_json(const json& j, Endpoint& v) {
  v.host = j.value("host", "");
  v.address = j.value("address", "");
  v.device = j.value("device", "");
  v.port = int_or<int>(j, "port", 1);
  v.link_layer = j.value("link_layer", "");
  v.netdev = j.value("netdev", "");
  v.gid_index = int_opt<int>(j, "gid_index");
  v.gid = j.value("gid", "");
  v.lid = int_opt<std::uint32_t>(j, "lid");
  v.active_mtu = int_opt<int>(j, "active_mtu");
  v.rate_gbps = j.value("rate_gbps", std::optional<double>{});
  v.software = j.value("software", false);
}

void to_json(json& j, const LatencyStats& v) {
  j = json{{"min_us", v.min_us}, {"median_us", v.median_us}, {"p99_us", v.p99_us},
           {"max_us", v.max_us}, {"mean_us", v.mean_us}};
}
void from_json(const json& j, LatencyStats& v) {
  v.min_us = j.value("min_us", 0.0);
  v.median_us = j.value("median_us", 0.0);
  v.p99_us = j.value("p99_us", 0.0);
  v.max_us = j.value("max_us", 0.0);
  v.mean_us = j.value("mean_us", 0.0);
}

void to_json(json& j, const SizeResult& v) {
  j = json{{"bytes", v.bytes},
           {"iterations", v.iterations},
           {"total_bytes", v.total_bytes},
           {"seconds", v.seconds},
           {"gbps", v.gbps},
           {"mib_per_s", v.mib_per_s},
           {"msg_rate_mpps", v.msg_rate_mpps},
           {"latency", v.latency},
           {"peer_total_bytes", v.peer_total_bytes},
           {"data_verified", v.data_verified}};
}
void from_json(const json& j, SizeResult& v) {
  v.bytes = int_or<std::uint64_t>(j, "bytes", 0);
  v.iterations = int_or<std::uint64_t>(j, "iterations", 0);
  v.total_bytes = int_or<std::uint64_t>(j, "total_bytes", 0);
  v.seconds = j.value("seconds", 0.0);
  v.gbps = j.value("gbps", 0.0);
  v.mib_per_s = j.value("mib_per_s", 0.0);
  v.msg_rate_mpps = j.value("msg_rate_mpps", 0.0);
  v.latency = j.value("latency", std::optional<LatencyStats>{});
  v.peer_total_bytes = int_opt<std::uint64_t>(j, "peer_total_bytes");
  v.data_verified = j.value("data_verified", std::optional<bool>{});
}

void to_json(json& j, const Result& v) {
  j = json{{"schema", "fabscope.rdma"},
           {"schema_version", Result::kSchemaVersion},
           {"role", v.role},
           {"options", v.options},
           {"local", v.local},
           {"remote", v.remote},
           {"choices", v.choices},
           {"path_mtu", v.path_mtu},
           {"sizes", v.sizes},
           {"efficiency", v.efficiency},
           {"verdict", v.verdict},
           {"completed", v.completed},
           {"findings", v.findings}};
}

namespace {

double non_negative(const core::Fields& f, const std::string& key) {
  const double v = f.num(key);
  if (v < 0) f.fail(key, "negative: " + std::to_string(v));
  return v;
}

template <typename T>
std::optional<T> opt_in_range(const core::Fields& f, const std::string& key) {
  const auto v = f.opt_int(key);
  if (!v) return std::nullopt;
  if (*v < static_cast<std::int64_t>(std::numeric_limits<T>::min()) ||
      static_cast<std::uint64_t>(*v) > static_cast<std::uint64_t>(std::numeric_limits<T>::max()))
    f.fail(key, "out of range: " + std::to_string(*v));
  return static_cast<T>(*v);
}

Options options_from(const core::Fields& o) {
  Options x;
  const std::string test = o.str("test");
  if (test != "bw" && test != "lat") o.fail("test", "expected \"bw\" or \"lat\", got \"" + test + "\"");
  x.test = test_from_string(test);
  const std::string op = o.str_or("op", "write");
  if (op != "write" && op != "read" && op != "send")
    o.fail("op", "expected \"write\", \"read\" or \"send\", got \"" + op + "\"");
  x.op = op_from_string(op);
  if (o.has("sizes_bytes"))
    for (const auto& s : o.array("sizes_bytes")) {
      const json& v = s.raw();
      if (!v.is_number_integer() || (v.is_number_integer() && !v.is_number_unsigned() && v.get<std::int64_t>() < 0))
        o.fail("sizes_bytes", "expected an array of byte counts, found " + core::describe(v));
      x.sizes_bytes.push_back(v.get<std::uint64_t>());
    }
  x.iterations = o.has("iterations") ? o.uint("iterations") : 0;
  x.duration_s = o.opt_num("duration_s");
  x.qps = opt_in_range<int>(o, "qps").value_or(1);
  x.tx_depth = opt_in_range<int>(o, "tx_depth").value_or(0);
  x.bidirectional = o.boolean_or("bidirectional", false);
  const std::string oob = o.str_or("oob", "cm");
  if (oob != "cm" && oob != "tcp") o.fail("oob", "expected \"cm\" or \"tcp\", got \"" + oob + "\"");
  x.oob = oob_from_string(oob);
  x.tcp_port = opt_in_range<int>(o, "tcp_port").value_or(18515);
  x.timeout_s = o.opt_num("timeout_s").value_or(10.0);
  return x;
}

Endpoint endpoint_from(const core::Fields& e) {
  Endpoint x;
  x.host = e.str_or("host", "");
  x.address = e.str_or("address", "");
  x.device = e.str_or("device", "");
  x.port = opt_in_range<int>(e, "port").value_or(1);
  x.link_layer = e.str_or("link_layer", "");
  x.netdev = e.str_or("netdev", "");
  x.gid_index = opt_in_range<int>(e, "gid_index");
  x.gid = e.str_or("gid", "");
  x.lid = opt_in_range<std::uint32_t>(e, "lid");
  x.active_mtu = opt_in_range<int>(e, "active_mtu");
  x.rate_gbps = e.opt_num("rate_gbps");
  x.software = e.boolean_or("software", false);
  return x;
}

SizeResult size_from(const core::Fields& s) {
  SizeResult x;
  x.bytes = s.uint("bytes");
  x.iterations = s.uint("iterations");
  x.total_bytes = s.uint("total_bytes");
  x.seconds = non_negative(s, "seconds");
  x.gbps = non_negative(s, "gbps");
  x.mib_per_s = s.opt_num("mib_per_s").value_or(0);
  x.msg_rate_mpps = s.opt_num("msg_rate_mpps").value_or(0);
  if (auto l = s.optional_object("latency")) {
    LatencyStats lat;
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
  if (s.has("peer_total_bytes")) x.peer_total_bytes = s.uint("peer_total_bytes");
  if (s.has("data_verified")) x.data_verified = s.boolean_or("data_verified", false);
  return x;
}

}  // namespace

Result result_from_json(const std::string& file, const json& doc) {
  const core::Fields top(file, doc);
  if (top.str_or("schema", "") != "fabscope.rdma")
    top.fail("schema", "not fabscope.rdma (a `fabscope rdma --json` result), got " +
                           (top.has("schema") ? core::describe(doc["schema"]) : std::string("none")));
  const std::int64_t version = top.integer("schema_version");
  if (version < 1 || version > Result::kSchemaVersion)
    top.fail("schema_version", "this fabscope reads versions 1 to " + std::to_string(Result::kSchemaVersion) +
                                   ", got " + std::to_string(version));
  Result r;
  r.role = top.str("role");
  r.options = options_from(top.object("options"));
  r.local = endpoint_from(top.object("local"));
  r.remote = endpoint_from(top.object("remote"));
  if (top.has("choices"))
    for (const auto& c : top.array("choices"))
      r.choices.push_back({c.str_or("what", ""), c.str_or("value", ""), c.str_or("reason", "")});
  r.path_mtu = opt_in_range<int>(top, "path_mtu");
  for (const auto& s : top.array("sizes")) r.sizes.push_back(size_from(s));
  r.efficiency = top.opt_num("efficiency");
  r.verdict = top.str_or("verdict", "");
  r.completed = top.boolean_or("completed", false);
  r.findings = core::findings_from(top, "findings");
  return r;
}

void from_json(const json& j, Result& v) { v = result_from_json("", j); }

}  // namespace fabscope::rdma

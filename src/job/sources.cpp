#include "job/sources.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <future>

#include "core/error.hpp"
#include "core/json.hpp"
#include "core/socket.hpp"
#include "core/strings.hpp"

namespace fabscope::job {

namespace {

std::string url_encode(std::string_view s) {
  static const char* hex = "0123456789ABCDEF";
  std::string o;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      o += static_cast<char>(c);
    } else {
      o += '%';
      o += hex[c >> 4];
      o += hex[c & 15];
    }
  }
  return o;
}

}  // namespace

HttpTarget parse_http_url(const std::string& url, int default_port) {
  std::string rest = url;
  if (core::starts_with(rest, "https://"))
    throw UsageError("'" + url + "': https is not supported; use http:// (or a local proxy)");
  if (core::starts_with(rest, "http://")) rest = rest.substr(7);
  HttpTarget t;
  t.port = default_port;
  auto slash = rest.find('/');
  if (slash != std::string::npos) {
    t.path_prefix = rest.substr(slash);
    while (!t.path_prefix.empty() && t.path_prefix.back() == '/') t.path_prefix.pop_back();
    rest = rest.substr(0, slash);
  }
  std::string port_text;
  if (!rest.empty() && rest[0] == '[') {
    auto close = rest.find(']');
    if (close == std::string::npos) throw UsageError("'" + url + "': an IPv6 address needs its closing ']'");
    t.host = rest.substr(1, close - 1);
    if (close + 1 < rest.size()) {
      if (rest[close + 1] != ':') throw UsageError("'" + url + "': expected ':PORT' after ']'");
      port_text = rest.substr(close + 2);
    }
  } else {
    auto colon = rest.rfind(':');
    if (colon != std::string::npos) {
      t.host = rest.substr(0, colon);
      port_text = rest.substr(colon + 1);
    } else {
      t.host = rest;
    }
  }
  if (!port_text.empty()) {
    auto p = core::parse_int(port_text);
    if (!p || *p < 1 || *p > 65535) throw UsageError("'" + url + "': port '" + port_text + "' is not 1-65535");
    t.port = static_cast<int>(*p);
  }
  if (t.host.empty() || t.host.size() > 253) throw UsageError("'" + url + "': no host name");
  for (char c : t.host)
    if (static_cast<unsigned char>(c) <= ' ' || c == '/' || c == '?' || c == '#')
      throw UsageError("'" + url + "': the host name has a character that is not allowed");
  return t;
}

std::string http_get(const HttpTarget& t, const std::string& path, std::chrono::milliseconds timeout,
                     std::size_t max_bytes) {
  const std::string where = (t.host.find(':') != std::string::npos ? "[" + t.host + "]" : t.host) + ":" +
                            std::to_string(t.port);
  const auto deadline = net::after(timeout);
  std::string why;
  net::Fd fd = net::connect_tcp(t.host, t.port, deadline, why);
  if (!fd) throw Error(where + ": " + why);
  const std::string req = "GET " + t.path_prefix + path + " HTTP/1.0\r\nHost: " + t.host +
                          "\r\nAccept: application/json, text/plain\r\nUser-Agent: fabscope-job\r\n\r\n";
  if (auto err = net::send_all(fd.get(), req, deadline); !err.empty()) throw Error(where + ": " + err);
  std::string in;
  char buf[65536];
  for (;;) {
    pollfd p{fd.get(), POLLIN, 0};
    int ms = net::ms_left(deadline);
    if (ms <= 0) throw Error(where + ": timed out after " + std::to_string(in.size()) + " bytes");
    int n = ::poll(&p, 1, ms);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(where + ": poll: " + std::strerror(errno));
    if (n == 0) continue;
    ssize_t r = ::recv(fd.get(), buf, sizeof buf, 0);
    if (r < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (r < 0) throw Error(where + ": " + std::strerror(errno));
    if (r == 0) break;
    in.append(buf, static_cast<std::size_t>(r));
    if (in.size() > max_bytes + 65536)
      throw Error(where + ": the answer is over " + std::to_string(max_bytes) + " bytes; refused");
  }
  auto head_end = in.find("\r\n\r\n");
  if (head_end == std::string::npos) {
    std::string first = in.substr(0, std::min<std::size_t>(in.find('\n'), 80));
    throw Error(where + ": not an HTTP answer: \"" + core::printable(first) + "\"");
  }
  std::string status_line = in.substr(0, in.find("\r\n"));
  auto parts = core::split(status_line, ' ');
  if (parts.size() < 2 || !core::starts_with(parts[0], "HTTP/"))
    throw Error(where + ": not an HTTP answer: \"" + core::printable(status_line.substr(0, 80)) + "\"");
  std::string body = in.substr(head_end + 4);
  if (parts[1] != "200") {
    std::string first = body.substr(0, std::min<std::size_t>(body.find('\n'), 160));
    throw Error(where + ": " + core::printable(status_line.substr(0, 80)) + (first.empty() ? "" : ": " + core::printable(first)));
  }
  std::string head = core::lower(in.substr(0, head_end));
  if (head.find("\r\ntransfer-encoding: chunked") != std::string::npos)
    throw Error(where + ": the answer is chunked, which an HTTP/1.0 request does not allow");
  if (body.size() > max_bytes) throw Error(where + ": the answer is over " + std::to_string(max_bytes) + " bytes; refused");
  return body;
}

Snapshot fetch_nodes(const std::vector<std::string>& nodes, int default_port, std::chrono::milliseconds timeout) {
  Snapshot all;
  all.source = "nodes " + core::join(nodes, ",", 8);
  const std::size_t batch = 64;
  for (std::size_t at = 0; at < nodes.size(); at += batch) {
    std::vector<std::future<std::pair<std::string, Snapshot>>> futs;
    for (std::size_t i = at; i < std::min(nodes.size(), at + batch); i++) {
      futs.push_back(std::async(std::launch::async, [&, i]() -> std::pair<std::string, Snapshot> {
        try {
          auto t = parse_http_url(nodes[i], default_port);
          auto body = http_get(t, "/jobs", timeout, 256u << 20);
          return {"", parse_snapshot(body, nodes[i] + "/jobs")};
        } catch (const std::exception& e) {
          return {e.what(), {}};
        }
      }));
    }
    for (auto& f : futs) {
      auto [err, snap] = f.get();
      if (!err.empty()) all.errors.push_back(err);
      else merge(all, std::move(snap));
    }
  }
  all.source = "nodes " + core::join(nodes, ",", 8);
  return all;
}

std::map<std::string, std::string> prometheus_queries(const std::string& window) {
  const std::string by = "job_id, comm, rank, host, gpu";
  return {
      {"busy", "sum by (" + by + ") (rate(fabscope_job_operation_seconds_sum[" + window + "]))"},
      {"info", "max by (" + by + ", comm_name, nranks, pid, cuda_device) (fabscope_job_comm_info{state=\"active\"})"},
      {"started", "max by (" + by + ") (fabscope_job_started_operations_total)"},
      {"completed", "max by (" + by + ") (fabscope_job_completed_operations_total)"},
      {"oldest", "max by (" + by + ") (fabscope_job_oldest_in_flight_start_timestamp_seconds)"},
      {"progress", "max by (" + by + ") (fabscope_job_last_progress_timestamp_seconds)"},
      {"ended", "max by (job_id, host, pid) (fabscope_job_process_info{state=\"ended\"})"},
      {"stopped", "max by (job_id, host, pid) (fabscope_job_process_info{state=\"stopped\"})"},
      {"now", "time()"},
  };
}

namespace {

struct PromSample {
  std::map<std::string, std::string> labels;
  double value = NAN;
};

std::vector<PromSample> prom_vector_checked(const std::string& body, const std::string& what);

// A query's answer as samples; any shape but Prometheus's is an Error naming the query.
std::vector<PromSample> prom_vector(const std::string& body, const std::string& what) {
  try {
    return prom_vector_checked(body, what);
  } catch (const json::exception& e) {
    throw Error("query '" + what + "': not a Prometheus answer: " + std::string(e.what()).substr(0, 120));
  }
}

std::vector<PromSample> prom_vector_checked(const std::string& body, const std::string& what) {
  json j;
  try {
    j = parse_input_json(body);
  } catch (const std::exception& e) {
    throw Error("query '" + what + "': not JSON: " + std::string(e.what()).substr(0, 120));
  }
  if (!j.is_object() || j.value("status", "") != "success") {
    std::string err = j.is_object() && j.contains("error") && j["error"].is_string() ? j["error"].get<std::string>() : "";
    throw Error("query '" + what + "': the server said " + (err.empty() ? "no success" : core::printable(err.substr(0, 200))));
  }
  const auto& data = j.at("data");
  std::vector<PromSample> out;
  auto value_of = [&](const json& v) {
    if (!v.is_array() || v.size() != 2 || !v[1].is_string()) throw Error("query '" + what + "': a value is not [time, \"number\"]");
    auto d = core::parse_double(v[1].get<std::string>());
    return d ? *d : NAN;
  };
  if (data.value("resultType", "") == "scalar") {
    out.push_back({{}, value_of(data.at("result"))});
    return out;
  }
  if (data.value("resultType", "") != "vector" || !data.at("result").is_array())
    throw Error("query '" + what + "': expected a vector result");
  for (const auto& r : data.at("result")) {
    PromSample s;
    if (r.contains("metric") && r["metric"].is_object())
      for (auto it = r["metric"].begin(); it != r["metric"].end(); ++it)
        if (it->is_string()) s.labels[it.key()] = it->get<std::string>().substr(0, 256);
    s.value = value_of(r.at("value"));
    out.push_back(std::move(s));
  }
  return out;
}

std::string label(const PromSample& s, const char* k) {
  auto it = s.labels.find(k);
  return it == s.labels.end() ? "" : it->second;
}

}  // namespace

Snapshot prometheus_snapshot(const std::map<std::string, std::string>& answers, std::string_view source) {
  Snapshot snap;
  snap.source = std::string(source);
  auto get = [&](const char* name) {
    auto it = answers.find(name);
    if (it == answers.end()) throw Error(std::string(source) + ": no answer to the query '" + name + "'");
    try {
      return prom_vector(it->second, name);
    } catch (const Error& e) {
      throw Error(std::string(source) + ": " + e.what());
    }
  };
  double now = NAN;
  for (const auto& s : get("now")) now = s.value;
  if (!std::isfinite(now) || now <= 0) throw Error(std::string(source) + ": time() did not answer a time");
  using Key = std::tuple<std::string, std::string, std::string, std::string>;  // job_id, comm, rank, host
  std::map<Key, RankRecord> recs;
  auto key_of = [](const PromSample& s) { return Key{label(s, "job_id"), label(s, "comm"), label(s, "rank"), label(s, "host")}; };
  auto to_ns = [](double seconds) {
    return std::isfinite(seconds) && seconds > 0 && seconds < 1e11 ? static_cast<std::uint64_t>(seconds * 1e9) : 0ull;
  };
  for (const auto& s : get("info")) {
    RankRecord r;
    r.job_id = label(s, "job_id");
    r.comm = label(s, "comm");
    r.host = label(s, "host");
    r.bus_id = label(s, "gpu");
    r.comm_name = label(s, "comm_name");
    auto rank = core::parse_int(label(s, "rank"));
    auto nranks = core::parse_int(label(s, "nranks"));
    if (!rank || !nranks || *nranks < 1 || *rank < 0 || *rank >= *nranks || *nranks > (1 << 24)) continue;
    r.rank = static_cast<int>(*rank);
    r.nranks = static_cast<int>(*nranks);
    if (auto p = core::parse_int(label(s, "pid")); p && *p > 0 && *p < (1 << 30)) r.pid = static_cast<int>(*p);
    if (auto d = core::parse_int(label(s, "cuda_device")); d && *d >= 0 && *d < 4096) r.gpu = static_cast<int>(*d);
    r.now_unix_ns = to_ns(now);
    recs[key_of(s)] = std::move(r);
  }
  for (const auto& s : get("busy"))
    if (auto it = recs.find(key_of(s)); it != recs.end() && std::isfinite(s.value) && s.value >= 0)
      it->second.busy_fraction = std::min(s.value, 1.5);
  auto counter = [](double v) {
    return std::isfinite(v) && v >= 0 && v < 1.8e19 ? static_cast<std::uint64_t>(v) : 0ull;
  };
  for (const auto& s : get("started"))
    if (auto it = recs.find(key_of(s)); it != recs.end()) it->second.started = counter(s.value);
  for (const auto& s : get("completed"))
    if (auto it = recs.find(key_of(s)); it != recs.end()) it->second.completed = counter(s.value);
  for (const auto& s : get("oldest"))
    if (auto it = recs.find(key_of(s)); it != recs.end()) it->second.oldest_in_flight_unix_ns = to_ns(s.value);
  for (const auto& s : get("progress"))
    if (auto it = recs.find(key_of(s)); it != recs.end()) it->second.last_done_unix_ns = to_ns(s.value);
  for (const auto& s : get("ended"))
    for (auto& [k, r] : recs)
      if (r.job_id == label(s, "job_id") && r.host == label(s, "host") && std::to_string(r.pid) == label(s, "pid"))
        r.alive = false;
  // (answers gathered before the exporter said "stopped" have no such query)
  if (answers.count("stopped"))
    for (const auto& s : get("stopped"))
      for (auto& [k, r] : recs)
        if (r.alive && r.job_id == label(s, "job_id") && r.host == label(s, "host") && std::to_string(r.pid) == label(s, "pid"))
          r.process_state = "stopped";
  for (auto& [k, r] : recs) snap.ranks.push_back(std::move(r));
  return snap;
}

Snapshot fetch_prometheus(const std::string& url, const std::string& window, std::chrono::milliseconds timeout) {
  auto t = parse_http_url(url, 9090);
  std::map<std::string, std::string> answers;
  for (const auto& [name, q] : prometheus_queries(window))
    answers[name] = http_get(t, "/api/v1/query?query=" + url_encode(q), timeout, 256u << 20);
  return prometheus_snapshot(answers, "prometheus " + url);
}

}  // namespace fabscope::job

// One node's running jobs: its /metrics text as `fabscope exporter --jobs` serves it (Prometheus
// exposition, read by exposition.cpp) or the same series in the fabscope.metrics layout. Only the
// fabscope_job_* series of a communicator's rank are read (labels job_id, host, comm, rank, gpu;
// aggregates add op and size, network series peer and direction); the rest of the file is checked
// for syntax (text) or skipped (JSON).
#include <charconv>
#include <cmath>
#include <cstdint>
#include <map>
#include <tuple>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/strings.hpp"
#include "report/exposition.hpp"
#include "report/load.hpp"
#include "report/metric_samples.hpp"

namespace fabscope::report {

namespace {

constexpr std::size_t kMaxSamples = 200000;  // job samples a file; the exporter's default --jobs-max-series
                                             // (4,096 aggregates) writes about 90,000
constexpr std::size_t kMaxRanks = 4096;      // (job_id, comm, rank) a file; the plugin records 16 comms a process
constexpr std::size_t kMaxAggs = 4096;       // (op, size) a rank; the plugin keeps 48 a communicator
constexpr std::size_t kMaxPeers = 4096;      // (peer, direction) a rank; the plugin keeps 32
constexpr std::size_t kMaxBuckets = 256;     // a histogram; the exporter writes 14

constexpr std::string_view kPrefix = "fabscope_job_";

// The families read; every other fabscope_job_* family (process info, drops, overflows, the
// exporter's own counts) is a job series too but says nothing about a rank's collectives.
enum class Fam {
  Info, Started, Completed, InFlight, Progress, Oldest,           // per rank
  Ops, Bytes, BusBytes, Bucket, Sum, Count,                       // per (op, size)
  NetSteps, NetBytes, NetStepSeconds, NetWaitSeconds,             // per (peer, direction)
};

const std::map<std::string_view, Fam>& families() {
  static const std::map<std::string_view, Fam> m = {
      {"fabscope_job_comm_info", Fam::Info},
      {"fabscope_job_started_operations_total", Fam::Started},
      {"fabscope_job_completed_operations_total", Fam::Completed},
      {"fabscope_job_operations_in_flight", Fam::InFlight},
      {"fabscope_job_last_progress_timestamp_seconds", Fam::Progress},
      {"fabscope_job_oldest_in_flight_start_timestamp_seconds", Fam::Oldest},
      {"fabscope_job_operations_total", Fam::Ops},
      {"fabscope_job_bytes_total", Fam::Bytes},
      {"fabscope_job_bus_bytes_total", Fam::BusBytes},
      {"fabscope_job_operation_seconds_bucket", Fam::Bucket},
      {"fabscope_job_operation_seconds_sum", Fam::Sum},
      {"fabscope_job_operation_seconds_count", Fam::Count},
      {"fabscope_job_network_steps_total", Fam::NetSteps},
      {"fabscope_job_network_bytes_total", Fam::NetBytes},
      {"fabscope_job_network_step_seconds_total", Fam::NetStepSeconds},
      {"fabscope_job_network_wait_seconds_total", Fam::NetWaitSeconds},
  };
  return m;
}

// A non-negative integer label below `limit`.
long long integer_label(const MetricSample& s, std::string_view key, long long limit) {
  const std::string& v = need_label(s, key);
  long long n = -1;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || p != v.data() + v.size() || n < 0 || n >= limit)
    sample_fail(s, "label '" + std::string(key) + "' \"" + core::printable(v.substr(0, 60)) +
                       "\" is not an integer from 0 to " + std::to_string(limit - 1));
  return n;
}

std::uint64_t size_label(const MetricSample& s) {
  const std::string& v = need_label(s, "size");
  std::uint64_t n = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || p != v.data() + v.size() || (n & (n - 1)) != 0)
    sample_fail(s, "label 'size' \"" + core::printable(v.substr(0, 60)) +
                       "\" is not a size class's lower bound in bytes (0 or a power of 2)");
  return n;
}

const std::string& comm_label(const MetricSample& s) {
  const std::string& v = need_label(s, "comm");
  bool hex = v.size() <= 16;
  for (char c : v) hex = hex && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'));
  if (!hex) sample_fail(s, "label 'comm' \"" + core::printable(v.substr(0, 60)) + "\" is not a communicator hash (1 to 16 hex digits)");
  return v;
}

std::string optional_label(const MetricSample& s, std::string_view key) {
  const std::string* v = s.label(key);
  if (!v) return "";
  if (v->size() > 256) sample_fail(s, "label '" + std::string(key) + "' is longer than 256 characters");
  return *v;
}

void once(const MetricSample& s, std::optional<double>& into, double v) {
  if (into) sample_fail(s, "the series is there twice (one node's snapshot has each series once)");
  into = v;
}

struct AggKey {
  std::string op;
  std::uint64_t size = 0;
  auto operator<=>(const AggKey&) const = default;
};

struct RankAcc {
  JobRank rank;
  std::map<AggKey, JobAggSeries> aggs;
  std::map<AggKey, std::map<double, double>> buckets;
  std::map<std::pair<int, std::string>, JobNetSeries> net;
};

JobDoc job_from_samples(const std::string& file, const std::string& node, const std::vector<MetricSample>& raw,
                        bool any_job, const std::string& format) {
  if (!any_job)
    throw Error(file + ": no fabscope_job_* series: not a snapshot of `fabscope exporter --jobs` (was it started "
                       "with --jobs?)");
  using Key = std::tuple<std::string, std::string, int>;  // job_id, comm, rank
  std::map<Key, RankAcc> ranks;
  for (const MetricSample& s : raw) {
    const Fam fam = families().at(s.name);
    Key key{need_label(s, "job_id"), comm_label(s), static_cast<int>(integer_label(s, "rank", 1ll << 31))};
    auto it = ranks.find(key);
    if (it == ranks.end()) {
      if (ranks.size() >= kMaxRanks)
        sample_fail(s, "more than " + std::to_string(kMaxRanks) + " (job_id, comm, rank) series in one snapshot");
      it = ranks.emplace(key, RankAcc{}).first;
      JobRank& r = it->second.rank;
      r.job = std::get<0>(key);
      r.comm = std::get<1>(key);
      r.rank = std::get<2>(key);
      r.host = optional_label(s, "host");
      r.gpu = optional_label(s, "gpu");
      r.where = s.where;
    }
    RankAcc& acc = it->second;
    JobRank& r = acc.rank;
    for (auto [label, have] : {std::pair{"host", &r.host}, std::pair{"gpu", &r.gpu}}) {
      const std::string v = optional_label(s, label);
      if (v != *have)
        sample_fail(s, "rank " + std::to_string(r.rank) + " of comm " + r.comm + " has " + label + " \"" +
                           core::printable(v) + "\" here and \"" + core::printable(*have) + "\" at " + r.where);
    }
    switch (fam) {
      case Fam::Info: {
        if (r.info) sample_fail(s, "the series is there twice (one node's snapshot has each series once)");
        r.info = true;
        r.comm_name = optional_label(s, "comm_name");
        r.state = optional_label(s, "state");
        r.nranks = static_cast<int>(integer_label(s, "nranks", 1ll << 31));
        if (*r.nranks < 1) sample_fail(s, "label 'nranks' is 0");
        if (r.rank >= *r.nranks)
          sample_fail(s, "rank " + std::to_string(r.rank) + " is not below nranks " + std::to_string(*r.nranks));
        if (s.label("pid")) r.pid = integer_label(s, "pid", 1ll << 32);
        break;
      }
      case Fam::Started: once(s, r.started, count_value(s)); break;
      case Fam::Completed: once(s, r.completed, count_value(s)); break;
      case Fam::InFlight: once(s, r.in_flight, count_value(s)); break;
      case Fam::Progress: once(s, r.last_progress_unix_s, count_value(s)); break;
      case Fam::Oldest: once(s, r.oldest_in_flight_unix_s, count_value(s)); break;
      case Fam::Ops:
      case Fam::Bytes:
      case Fam::BusBytes:
      case Fam::Bucket:
      case Fam::Sum:
      case Fam::Count: {
        AggKey k{need_label(s, "op"), size_label(s)};
        auto a = acc.aggs.find(k);
        if (a == acc.aggs.end()) {
          if (acc.aggs.size() >= kMaxAggs)
            sample_fail(s, "more than " + std::to_string(kMaxAggs) + " (op, size) series of one rank");
          a = acc.aggs.emplace(k, JobAggSeries{k.op, k.size, {}, {}, {}, {}, {}, {}}).first;
        }
        JobAggSeries& g = a->second;
        const double v = count_value(s);
        if (fam == Fam::Ops) once(s, g.operations, v);
        else if (fam == Fam::Bytes) once(s, g.bytes, v);
        else if (fam == Fam::BusBytes) once(s, g.bus_bytes, v);
        else if (fam == Fam::Sum) once(s, g.seconds_sum, v);
        else if (fam == Fam::Count) once(s, g.seconds_count, v);
        else {
          const std::string& le = need_label(s, "le");
          double bound = 0;
          if (!parse_expo_value(le, bound) || std::isnan(bound))
            sample_fail(s, "label 'le' \"" + core::printable(le) + "\" is not a number");
          auto& b = acc.buckets[k];
          if (b.size() >= kMaxBuckets)
            sample_fail(s, "more than " + std::to_string(kMaxBuckets) + " buckets in one histogram");
          if (!b.emplace(bound, v).second) sample_fail(s, "bucket le=\"" + core::printable(le) + "\" is there twice");
        }
        break;
      }
      case Fam::NetSteps:
      case Fam::NetBytes:
      case Fam::NetStepSeconds:
      case Fam::NetWaitSeconds: {
        const int peer = static_cast<int>(integer_label(s, "peer", 1ll << 31));
        const std::string& dir = need_label(s, "direction");
        if (dir != "send" && dir != "recv")
          sample_fail(s, "label 'direction' \"" + core::printable(dir.substr(0, 60)) + "\" is not send or recv");
        auto n = acc.net.find({peer, dir});
        if (n == acc.net.end()) {
          if (acc.net.size() >= kMaxPeers)
            sample_fail(s, "more than " + std::to_string(kMaxPeers) + " (peer, direction) series of one rank");
          n = acc.net.emplace(std::pair{peer, dir}, JobNetSeries{peer, dir, {}, {}, {}, {}}).first;
        }
        JobNetSeries& e = n->second;
        const double v = count_value(s);
        if (fam == Fam::NetSteps) once(s, e.steps, v);
        else if (fam == Fam::NetBytes) once(s, e.bytes, v);
        else if (fam == Fam::NetStepSeconds) once(s, e.step_seconds, v);
        else once(s, e.wait_seconds, v);
        break;
      }
    }
  }
  if (ranks.empty())
    throw Error(file + ": no communicator in it: its fabscope_job_* series are the exporter's own (no process "
                       "with the profiler plugin ran on the node when it was saved)");
  JobDoc d;
  d.node = node;
  d.format = format;
  for (auto& [key, acc] : ranks) {
    for (auto& [k, g] : acc.aggs) {
      auto b = acc.buckets.find(k);
      if (b != acc.buckets.end()) {
        if (!std::isinf(b->second.rbegin()->first) || b->second.rbegin()->first < 0)
          throw Error(file + ": fabscope_job_operation_seconds of job_id \"" + core::printable(acc.rank.job) + "\" comm " +
                      acc.rank.comm + " rank " + std::to_string(acc.rank.rank) + " op " + core::printable(k.op) +
                      " size " + std::to_string(k.size) + " has no le=\"+Inf\" bucket");
        g.buckets.assign(b->second.begin(), b->second.end());
      }
      acc.rank.aggs.push_back(std::move(g));
    }
    for (auto& [k, e] : acc.net) acc.rank.net.push_back(std::move(e));
    d.ranks.push_back(std::move(acc.rank));
  }
  return d;
}

// Keeps the families read; notes whether the file had any fabscope_job_* series at all.
struct Keep {
  bool* any;
  bool operator()(std::string_view name) const {
    if (!name.starts_with(kPrefix)) return false;
    *any = true;
    return families().count(name) > 0;
  }
};

}  // namespace

JobDoc job_from_exposition(const std::string& file, const std::string& node, std::string_view text) {
  bool any = false;
  auto raw = samples_from_exposition(file, text, Keep{&any}, kMaxSamples);
  return job_from_samples(file, checked_node_name(file, node), raw, any, "text");
}

JobDoc job_from_json(const std::string& file, const std::string& node, const json& doc) {
  bool any = false;
  // A histogram's samples are one family in JSON, named by family + suffix: keep the family.
  auto keep = [&](std::string_view name) {
    if (name == "fabscope_job_operation_seconds") return Keep{&any}("fabscope_job_operation_seconds_sum");
    return Keep{&any}(name);
  };
  auto raw = samples_from_metrics_json(file, doc, keep, kMaxSamples, "job");
  for (const MetricSample& s : raw)
    if (families().count(s.name) == 0)
      sample_fail(s, "not a sample of its family (a histogram's samples have the suffix _bucket, _sum or _count; "
                     "other families none)");
  return job_from_samples(file, checked_node_name(file, node), raw, any, "json");
}

Input input_from_job_text(const std::string& file, const std::string& node, std::string_view text) {
  Input in = metrics_input(file, node, text, InputKind::Job, "a snapshot of running jobs");
  if (in.schema == "prometheus-text") in.job = job_from_exposition(file, node, text);
  else in.job.node = checked_node_name(file, node);
  return in;
}

std::vector<Input> load_job_file(const std::string& arg) {
  auto [node, path] = named_file("--job", arg);
  std::vector<Input> out;
  out.push_back(input_from_job_text(path, node, core::read_input(path, kMaxInputBytes)));
  return out;
}

}  // namespace fabscope::report

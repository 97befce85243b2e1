#include "exporter/job_families.hpp"

#include <algorithm>
#include <charconv>

#include "bench/collectives.hpp"

namespace fabscope::exporter {

namespace {

MetricFamily family(const char* name, MetricType type, const char* help) {
  MetricFamily f;
  f.name = name;
  f.type = type;
  f.help = help;
  return f;
}

std::string label_job(const JobSegment& s) { return s.job_id.empty() ? "pid-" + std::to_string(s.pid) : s.job_id; }

Labels comm_labels(const JobSegment& s, const JobComm& c) {
  return {{"job_id", label_job(s)}, {"host", s.host}, {"comm", c.hash_hex()}, {"rank", std::to_string(c.rank)},
          {"gpu", c.bus_id}};
}

double seconds(std::uint64_t ns) { return static_cast<double>(ns) / 1e9; }

}  // namespace

const std::vector<double>& job_duration_bounds() {
  static const std::vector<double> bounds = [] {
    std::vector<double> b;
    for (int k = 0; k <= 12; k++) b.push_back(static_cast<double>(1ull << (2 * k)) * 1e-6);
    return b;
  }();
  return bounds;
}

const char* job_process_state_word(char state) {
  switch (state) {
    case 'R': case 'S': case 'I': case 'W': case 'P': case 'K': return "running";
    case 'T': return "stopped";
    case 't': return "traced";
    case 'D': return "uninterruptible";
    case 'Z': case 'X': case 'x': return "zombie";
    default: return "";
  }
}

double job_busbw_factor(unsigned op, int nranks) {
  using bench::Collective;
  Collective c;
  switch (op) {
    case 1: c = Collective::AllReduce; break;
    case 2: c = Collective::AllGather; break;
    case 3: c = Collective::ReduceScatter; break;
    case 4: c = Collective::Broadcast; break;
    case 5: c = Collective::Reduce; break;
    case 6:
    case 7: c = Collective::SendRecv; break;
    case 8: c = Collective::AlltoAll; break;
    case 9: c = Collective::Gather; break;
    case 10: c = Collective::Scatter; break;
    default: return 0;
  }
  return bench::busbw_gbytes_per_s(c, 1.0, nranks);
}

namespace {

// The families in the order they are rendered.
enum Fam {
  kProc, kInfo, kOps, kBytes, kBus, kGpuTimed, kHist, kRecent, kLastSeq, kStarted, kCompleted, kInflight,
  kProgress, kOldest, kNetSteps, kNetBytes, kNetStepS, kNetWaitS, kDropped, kInvalid, kCommOver, kAggOver,
  kNprocs, kSkipped, kRemoved, kSeriesDropped, kFamCount
};

struct FamDef {
  const char* name;
  MetricType type;
  const char* help;
};

const FamDef kFams[kFamCount] = {
    {"fabscope_job_process_info", MetricType::Gauge,
     "A process of a running job that loaded the profiler plugin (value 1; ended: its series are kept for the grace "
     "period)"},
    {"fabscope_job_comm_info", MetricType::Gauge,
     "A communicator of a running job's process, from its profiler segment (value 1)"},
    {"fabscope_job_operations_total", MetricType::Counter,
     "Operations completed, per communicator, op and message size class"},
    {"fabscope_job_bytes_total", MetricType::Counter,
     "Message bytes of the completed operations (nccl-tests' size definition)"},
    {"fabscope_job_bus_bytes_total", MetricType::Counter,
     "Message bytes of the timed operations times the op's bus-bandwidth factor: rate(this)/rate(..._seconds_sum) "
     "is busbw"},
    {"fabscope_job_gpu_timed_operations_total", MetricType::Counter,
     "Completed operations timed by the GPU's clock (the rest by the proxy thread's)"},
    {"fabscope_job_operation_seconds", MetricType::Histogram,
     "Time inside each operation: first channel's start to last channel's stop"},
    {"fabscope_job_recent_busbw_bytes_per_second", MetricType::Gauge,
     "Bus bandwidth of the communicator's last completed operations (at most 64) per op and size, in bytes "
     "per second"},
    {"fabscope_job_last_seq", MetricType::Gauge,
     "The highest sequence number completed, per op (NCCL's count of that op)"},
    {"fabscope_job_started_operations_total", MetricType::Counter, "Operations started on the host, every op and size"},
    {"fabscope_job_completed_operations_total", MetricType::Counter, "Operations completed, every op and size"},
    {"fabscope_job_operations_in_flight", MetricType::Gauge, "Operations started and not completed"},
    {"fabscope_job_last_progress_timestamp_seconds", MetricType::Gauge,
     "Unix time of the communicator's last completed operation (0: none yet)"},
    {"fabscope_job_oldest_in_flight_start_timestamp_seconds", MetricType::Gauge,
     "Unix time the oldest operation still in flight started (absent: none in flight)"},
    {"fabscope_job_network_steps_total", MetricType::Counter,
     "Network transfer steps to or from a peer rank (FABSCOPE_PROFILER_PROXY=1)"},
    {"fabscope_job_network_bytes_total", MetricType::Counter, "Bytes of those steps as NCCL reported them"},
    {"fabscope_job_network_step_seconds_total", MetricType::Counter, "Time of those steps, start to stop"},
    {"fabscope_job_network_wait_seconds_total", MetricType::Counter,
     "Time of those steps spent waiting on the network (send: SendWait; recv: RecvWait)"},
    {"fabscope_job_events_dropped_total", MetricType::Counter,
     "Events the plugin could not record: an event pool was full"},
    {"fabscope_job_events_invalid_total", MetricType::Counter,
     "Events NCCL gave that the plugin could not use (stopped twice, no parent)"},
    {"fabscope_job_comms_not_recorded_total", MetricType::Counter,
     "Communicators of the process not recorded: every slot of its segment was taken"},
    {"fabscope_job_aggregates_overflow_total", MetricType::Counter,
     "Operations not aggregated: the communicator's table of (op, size) pairs was full"},
    {"fabscope_job_processes", MetricType::Gauge, "Processes with a profiler segment on this node, live or ended"},
    {"fabscope_job_segments_skipped_total", MetricType::Counter,
     "Segments not read, by reason (unreadable, not_regular, foreign, size, format, stale, limit)"},
    {"fabscope_job_segments_removed_total", MetricType::Counter,
     "Segments of ended processes removed after the grace period"},
    {"fabscope_job_series_dropped", MetricType::Gauge,
     "(communicator, op, size) aggregates not rendered this scrape: over --jobs-max-series"},
};

using Extra = std::initializer_list<std::pair<const char*, std::string_view>>;

// A set of base labels, kept both as values and as their rendered text (escaped once).
struct Base {
  Labels labels;
  std::string text;  // k="v",k="v" (no braces)
  explicit Base(Labels l) : labels(std::move(l)) {
    for (const auto& [k, v] : labels) {
      if (!text.empty()) text += ',';
      text.append(k).append("=\"").append(escape_label_value(v)).append("\"");
    }
  }
};

// Where samples go: the metric model (job_families) or the exposition text (job_text). Both are
// fed by one walk (emit_all), so they cannot disagree.
class Sink {
 public:
  virtual ~Sink() = default;
  virtual void u64(Fam f, const Base& base, Extra extra, std::uint64_t v, const char* suffix = "") = 0;
  virtual void dbl(Fam f, const Base& base, Extra extra, double v, const char* suffix = "") = 0;
  void histogram(Fam f, const Base& base, Extra extra, const Histogram& h) {
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i <= h.bounds.size(); ++i) {
      cumulative += h.counts[i];
      std::string le = i < h.bounds.size() ? format_value(h.bounds[i]) : "+Inf";
      bucket(f, base, extra, le, cumulative);
    }
    dbl(f, base, extra, h.sum, "_sum");
    u64(f, base, extra, h.count, "_count");
  }

 protected:
  virtual void bucket(Fam f, const Base& base, Extra extra, const std::string& le, std::uint64_t v) = 0;
};

class ModelSink : public Sink {
 public:
  ModelSink() {
    for (int i = 0; i < kFamCount; i++) fams_[i] = family(kFams[i].name, kFams[i].type, kFams[i].help);
  }
  void u64(Fam f, const Base& base, Extra extra, std::uint64_t v, const char* suffix) override {
    auto s = Sample::of_u64(labels(base, extra), v);
    s.suffix = suffix;
    fams_[f].samples.push_back(std::move(s));
  }
  void dbl(Fam f, const Base& base, Extra extra, double v, const char* suffix) override {
    auto s = Sample::of(labels(base, extra), v);
    s.suffix = suffix;
    fams_[f].samples.push_back(std::move(s));
  }
  std::vector<MetricFamily> take() {
    std::vector<MetricFamily> out;
    for (auto& f : fams_) out.push_back(std::move(f));
    return out;
  }

 protected:
  void bucket(Fam f, const Base& base, Extra extra, const std::string& le, std::uint64_t v) override {
    Labels l = labels(base, extra);
    l.emplace_back("le", le);
    auto s = Sample::of_u64(std::move(l), v);
    s.suffix = "_bucket";
    fams_[f].samples.push_back(std::move(s));
  }

 private:
  static Labels labels(const Base& base, Extra extra) {
    Labels l = base.labels;
    for (const auto& [k, v] : extra) l.emplace_back(k, std::string(v));
    return l;
  }
  MetricFamily fams_[kFamCount];
};

class TextSink : public Sink {
 public:
  void u64(Fam f, const Base& base, Extra extra, std::uint64_t v, const char* suffix) override {
    std::string& o = head(f, base, extra, suffix);
    o += '}';
    end_u64(o, v);
  }
  void dbl(Fam f, const Base& base, Extra extra, double v, const char* suffix) override {
    std::string& o = head(f, base, extra, suffix);
    o += '}';
    no_empty_braces(o);
    o += ' ';
    o += format_value(v);
    o += '\n';
  }
  void render(std::string& out) {
    for (int i = 0; i < kFamCount; i++) {
      if (body_[i].empty()) continue;
      out.append("# HELP ").append(kFams[i].name).append(" ").append(escape_help(kFams[i].help)).append("\n");
      out.append("# TYPE ").append(kFams[i].name).append(" ").append(to_string(kFams[i].type)).append("\n");
      out += body_[i];
    }
  }

 protected:
  void bucket(Fam f, const Base& base, Extra extra, const std::string& le, std::uint64_t v) override {
    std::string& o = head(f, base, extra, "_bucket");
    o.append(o.back() == '{' ? "le=\"" : ",le=\"").append(le).append("\"}");
    end_u64(o, v);
  }

 private:
  // name{base,extra  (no closing brace; a sample without any label gets "{}" removed by end)
  std::string& head(Fam f, const Base& base, Extra extra, const char* suffix) {
    std::string& o = body_[f];
    o.append(kFams[f].name).append(suffix);
    o += '{';
    o += base.text;
    bool first = base.text.empty();
    for (const auto& [k, v] : extra) {
      if (!first) o += ',';
      first = false;
      o.append(k).append("=\"").append(escape_label_value(v)).append("\"");
    }
    return o;
  }
  static void no_empty_braces(std::string& o) {
    if (o.size() >= 2 && o[o.size() - 2] == '{' && o.back() == '}') o.resize(o.size() - 2);  // no labels
  }
  static void end_u64(std::string& o, std::uint64_t v) {
    no_empty_braces(o);
    char num[24];
    auto r = std::to_chars(num, num + sizeof num, v);
    o += ' ';
    o.append(num, r.ptr);
    o += '\n';
  }
  std::string body_[kFamCount];
};

void emit_all(Sink& out, const std::vector<JobProcess>& processes, const JobScrapeStats& stats,
              std::size_t max_aggregates) {
  std::size_t rendered = 0, left_out = 0;
  std::uint64_t live = 0, ended = 0;
  for (const auto& p : processes) {
    const JobSegment& s = p.segment;
    (p.alive ? live : ended)++;
    const Base pl({{"job_id", label_job(s)}, {"host", s.host}, {"pid", std::to_string(s.pid)}});
    out.u64(kProc, pl,
            {{"job_source", s.job_source}, {"state", !p.alive ? "ended" : p.stopped() ? "stopped" : "running"},
             {"api_version", std::to_string(s.api_version)}, {"plugin_version", s.plugin_version},
             {"proxy", s.proxy ? "1" : "0"}},
            1);
    out.u64(kDropped, pl, {}, s.events_dropped);
    out.u64(kInvalid, pl, {}, s.events_invalid);
    out.u64(kCommOver, pl, {}, s.comms_overflow);
    out.u64(kAggOver, pl, {}, s.aggs_overflow);
    for (const auto& c : s.comms) {
      const Base cl(comm_labels(s, c));
      out.u64(kInfo, cl,
              {{"comm_name", c.name}, {"nranks", std::to_string(c.nranks)}, {"nnodes", std::to_string(c.nnodes)},
               {"pid", std::to_string(s.pid)}, {"cuda_device", std::to_string(c.cuda_device)},
               {"state", c.finalized ? "finalized" : "active"}},
              1);
      out.u64(kStarted, cl, {}, c.started);
      out.u64(kCompleted, cl, {}, c.completed);
      out.u64(kInflight, cl, {}, c.started >= c.completed ? c.started - c.completed : 0);
      out.dbl(kProgress, cl, {}, seconds(c.last_done_unix_ns));
      std::uint64_t oldest_ns = 0;
      for (const auto& o : c.ring)
        if (o.in_flight() && o.cpu_start_unix_ns && (oldest_ns == 0 || o.cpu_start_unix_ns < oldest_ns))
          oldest_ns = o.cpu_start_unix_ns;
      if (oldest_ns && c.started > c.completed) out.dbl(kOldest, cl, {}, seconds(oldest_ns));
      for (unsigned op = 0; op < 16; op++)
        if (c.op_done_seq[op]) out.u64(kLastSeq, cl, {{"op", job_op_name(op)}}, c.op_done_seq[op] - 1);

      // recent busbw per (op, size class) from the ring's completed, GPU-timed operations
      std::map<std::pair<unsigned, unsigned>, std::pair<double, std::uint64_t>> recent_sum;  // bus bytes, ns
      for (const auto& o : c.ring) {
        if (o.in_flight() || o.gpu_ns() == 0) continue;
        unsigned sc = o.bytes == 0 ? 0 : 64u - static_cast<unsigned>(__builtin_clzll(o.bytes));
        auto& acc = recent_sum[{o.op, sc}];
        acc.first += static_cast<double>(o.bytes) * job_busbw_factor(o.op, c.nranks);
        acc.second += o.gpu_ns();
      }
      std::vector<JobAgg> aggs = c.aggs;
      std::sort(aggs.begin(), aggs.end(), [](const JobAgg& a, const JobAgg& b) {
        return a.op != b.op ? a.op < b.op : a.size_class < b.size_class;
      });
      for (const auto& a : aggs) {
        if (rendered >= max_aggregates) {
          left_out++;
          continue;
        }
        rendered++;
        const std::string size = std::to_string(a.size_lower_bytes());
        const Extra al = {{"op", job_op_name(a.op)}, {"size", size}};
        out.u64(kOps, cl, al, a.count);
        out.u64(kBytes, cl, al, a.bytes);
        // the timed operations' bytes only: over the time of those same operations (sampling and
        // FABSCOPE_PROFILER_KERNEL=0 count operations that have no time)
        out.dbl(kBus, cl, al, static_cast<double>(a.timed_bytes) * job_busbw_factor(a.op, c.nranks));
        out.u64(kGpuTimed, cl, al, a.gpu_timed);
        // the segment's buckets are powers of 2 µs; the exposition's are powers of 4 (every second one)
        Histogram h(job_duration_bounds());
        for (int b = 0; b < kJobHistBuckets; b++) {
          // bucket b holds durations < 2^b µs (and >= 2^(b-1)): its upper bound 2^b µs falls into
          // exposition bucket ceil(b / 2) (upper bound 4^ceil(b/2) µs), past the last bound: +Inf
          std::size_t k = static_cast<std::size_t>((b + 1) / 2);
          h.counts[std::min(k, h.bounds.size())] += a.hist[b];
        }
        h.count = 0;  // the timed operations (FABSCOPE_PROFILER_KERNEL=0 counts operations without a time)
        for (auto n : h.counts) h.count += n;
        h.sum = seconds(a.time_ns_sum);
        out.histogram(kHist, cl, al, h);
        auto it = recent_sum.find({a.op, a.size_class});
        if (it != recent_sum.end() && it->second.second > 0)
          out.dbl(kRecent, cl, al, it->second.first * 1e9 / static_cast<double>(it->second.second));
      }
      for (const auto& e : c.peers) {
        const std::string peer = std::to_string(e.peer);
        const Extra nl = {{"peer", peer}, {"direction", e.send ? "send" : "recv"}};
        out.u64(kNetSteps, cl, nl, e.steps);
        out.u64(kNetBytes, cl, nl, e.bytes);
        out.dbl(kNetStepS, cl, nl, seconds(e.step_ns_sum));
        out.dbl(kNetWaitS, cl, nl, seconds(e.wait_ns_sum));
      }
    }
  }
  const Base none({});
  out.u64(kNprocs, none, {{"state", "running"}}, live);
  out.u64(kNprocs, none, {{"state", "ended"}}, ended);
  for (const char* reason : {"unreadable", "not_regular", "foreign", "size", "format", "stale", "limit"}) {
    auto it = stats.skipped_total.find(reason);
    out.u64(kSkipped, none, {{"reason", reason}}, it == stats.skipped_total.end() ? 0 : it->second);
  }
  out.u64(kRemoved, none, {}, stats.removed_total);
  out.u64(kSeriesDropped, none, {}, left_out);
}

}  // namespace

std::vector<MetricFamily> job_families(const std::vector<JobProcess>& processes, const JobScrapeStats& stats,
                                       std::size_t max_aggregates) {
  ModelSink sink;
  emit_all(sink, processes, stats, max_aggregates);
  return sink.take();
}

void job_text(const std::vector<JobProcess>& processes, const JobScrapeStats& stats, std::size_t max_aggregates,
              std::string& out) {
  TextSink sink;
  emit_all(sink, processes, stats, max_aggregates);
  sink.render(out);
}

}  // namespace fabscope::exporter

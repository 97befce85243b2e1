#include "exporter/job_families.hpp"

#include <algorithm>

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

Labels with(Labels l, std::initializer_list<std::pair<std::string, std::string>> more) {
  for (const auto& p : more) l.push_back(p);
  return l;
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

std::vector<MetricFamily> job_families(const std::vector<JobProcess>& processes, const JobScrapeStats& stats,
                                       std::size_t max_aggregates) {
  auto info = family("fabscope_job_comm_info", MetricType::Gauge,
                     "A communicator of a running job's process, from its profiler segment (value 1)");
  auto ops = family("fabscope_job_operations_total", MetricType::Counter,
                    "Operations completed, per communicator, op and message size class");
  auto bytes = family("fabscope_job_bytes_total", MetricType::Counter,
                      "Message bytes of the completed operations (nccl-tests' size definition)");
  auto bus = family("fabscope_job_bus_bytes_total", MetricType::Counter,
                    "Message bytes times the op's bus-bandwidth factor: rate(this)/rate(..._seconds_sum) is busbw");
  auto gpu_timed = family("fabscope_job_gpu_timed_operations_total", MetricType::Counter,
                          "Completed operations timed by the GPU's clock (the rest by the proxy thread's)");
  auto hist = family("fabscope_job_operation_seconds", MetricType::Histogram,
                     "Time inside each operation: first channel's start to last channel's stop");
  auto recent = family("fabscope_job_recent_busbw_gbytes_per_second", MetricType::Gauge,
                       "Bus bandwidth of the communicator's last completed operations (at most 64) per op and size");
  auto last_seq = family("fabscope_job_last_seq", MetricType::Gauge,
                         "The highest sequence number completed, per op (NCCL's count of that op)");
  auto started = family("fabscope_job_started_operations_total", MetricType::Counter,
                        "Operations started on the host, every op and size");
  auto completed = family("fabscope_job_completed_operations_total", MetricType::Counter,
                          "Operations completed, every op and size");
  auto inflight = family("fabscope_job_operations_in_flight", MetricType::Gauge,
                         "Operations started and not completed");
  auto progress = family("fabscope_job_last_progress_timestamp_seconds", MetricType::Gauge,
                         "Unix time of the communicator's last completed operation (0: none yet)");
  auto oldest = family("fabscope_job_oldest_in_flight_start_timestamp_seconds", MetricType::Gauge,
                       "Unix time the oldest operation still in flight started (absent: none in flight)");
  auto net_steps = family("fabscope_job_network_steps_total", MetricType::Counter,
                          "Network transfer steps to or from a peer rank (FABSCOPE_PROFILER_PROXY=1)");
  auto net_bytes = family("fabscope_job_network_bytes_total", MetricType::Counter,
                          "Bytes of those steps as NCCL reported them");
  auto net_step_s = family("fabscope_job_network_step_seconds_total", MetricType::Counter,
                           "Time of those steps, start to stop");
  auto net_wait_s = family("fabscope_job_network_wait_seconds_total", MetricType::Counter,
                           "Time of those steps spent waiting on the network (send: SendWait; recv: RecvWait)");
  auto proc = family("fabscope_job_process_info", MetricType::Gauge,
                     "A process of a running job that loaded the profiler plugin (value 1; ended: its series are "
                     "kept for the grace period)");
  auto dropped = family("fabscope_job_events_dropped_total", MetricType::Counter,
                        "Events the plugin could not record: an event pool was full");
  auto invalid = family("fabscope_job_events_invalid_total", MetricType::Counter,
                        "Events NCCL gave that the plugin could not use (stopped twice, no parent)");
  auto comm_over = family("fabscope_job_comms_not_recorded_total", MetricType::Counter,
                          "Communicators of the process not recorded: every slot of its segment was taken");
  auto agg_over = family("fabscope_job_aggregates_overflow_total", MetricType::Counter,
                         "Operations not aggregated: the communicator's table of (op, size) pairs was full");
  auto nprocs = family("fabscope_job_processes", MetricType::Gauge,
                          "Processes with a profiler segment on this node, live or ended");
  auto skipped = family("fabscope_job_segments_skipped_total", MetricType::Counter,
                        "Segments not read, by reason (unreadable, not_regular, foreign, size, format, stale, limit)");
  auto removed = family("fabscope_job_segments_removed_total", MetricType::Counter,
                        "Segments of ended processes removed after the grace period");
  auto series_dropped = family("fabscope_job_series_dropped", MetricType::Gauge,
                               "(communicator, op, size) aggregates not rendered this scrape: over --jobs-max-series");

  std::size_t rendered = 0, left_out = 0;
  std::uint64_t live = 0, ended = 0;
  for (const auto& p : processes) {
    const JobSegment& s = p.segment;
    (p.alive ? live : ended)++;
    Labels pl{{"job_id", label_job(s)}, {"host", s.host}, {"pid", std::to_string(s.pid)}};
    proc.samples.push_back(Sample::of(with(pl, {{"job_source", s.job_source},
                                                {"state", p.alive ? "running" : "ended"},
                                                {"api_version", std::to_string(s.api_version)},
                                                {"plugin_version", s.plugin_version},
                                                {"proxy", s.proxy ? "1" : "0"}}),
                                      1));
    dropped.samples.push_back(Sample::of_u64(pl, s.events_dropped));
    invalid.samples.push_back(Sample::of_u64(pl, s.events_invalid));
    comm_over.samples.push_back(Sample::of_u64(pl, s.comms_overflow));
    agg_over.samples.push_back(Sample::of_u64(pl, s.aggs_overflow));
    for (const auto& c : s.comms) {
      const Labels cl = comm_labels(s, c);
      info.samples.push_back(Sample::of(with(cl, {{"comm_name", c.name},
                                                  {"nranks", std::to_string(c.nranks)},
                                                  {"nnodes", std::to_string(c.nnodes)},
                                                  {"pid", std::to_string(s.pid)},
                                                  {"cuda_device", std::to_string(c.cuda_device)},
                                                  {"state", c.finalized ? "finalized" : "active"}}),
                                        1));
      started.samples.push_back(Sample::of_u64(cl, c.started));
      completed.samples.push_back(Sample::of_u64(cl, c.completed));
      inflight.samples.push_back(Sample::of_u64(cl, c.started >= c.completed ? c.started - c.completed : 0));
      progress.samples.push_back(Sample::of(cl, seconds(c.last_done_unix_ns)));
      std::uint64_t oldest_ns = 0;
      for (const auto& o : c.ring)
        if (o.in_flight() && o.cpu_start_unix_ns && (oldest_ns == 0 || o.cpu_start_unix_ns < oldest_ns))
          oldest_ns = o.cpu_start_unix_ns;
      if (oldest_ns && c.started > c.completed) oldest.samples.push_back(Sample::of(cl, seconds(oldest_ns)));
      for (unsigned op = 0; op < 16; op++)
        if (c.op_done_seq[op]) last_seq.samples.push_back(Sample::of_u64(with(cl, {{"op", job_op_name(op)}}), c.op_done_seq[op] - 1));

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
        const Labels al = with(cl, {{"op", job_op_name(a.op)}, {"size", std::to_string(a.size_lower_bytes())}});
        ops.samples.push_back(Sample::of_u64(al, a.count));
        bytes.samples.push_back(Sample::of_u64(al, a.bytes));
        bus.samples.push_back(Sample::of(al, static_cast<double>(a.bytes) * job_busbw_factor(a.op, c.nranks)));
        gpu_timed.samples.push_back(Sample::of_u64(al, a.gpu_timed));
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
        add_histogram(hist, al, h);
        auto it = recent_sum.find({a.op, a.size_class});
        if (it != recent_sum.end() && it->second.second > 0)
          recent.samples.push_back(Sample::of(al, it->second.first / static_cast<double>(it->second.second)));
      }
      for (const auto& e : c.peers) {
        const Labels nl = with(cl, {{"peer", std::to_string(e.peer)}, {"direction", e.send ? "send" : "recv"}});
        net_steps.samples.push_back(Sample::of_u64(nl, e.steps));
        net_bytes.samples.push_back(Sample::of_u64(nl, e.bytes));
        net_step_s.samples.push_back(Sample::of(nl, seconds(e.step_ns_sum)));
        net_wait_s.samples.push_back(Sample::of(nl, seconds(e.wait_ns_sum)));
      }
    }
  }
  nprocs.samples.push_back(Sample::of_u64({{"state", "running"}}, live));
  nprocs.samples.push_back(Sample::of_u64({{"state", "ended"}}, ended));
  for (const char* reason : {"unreadable", "not_regular", "foreign", "size", "format", "stale", "limit"}) {
    auto it = stats.skipped_total.find(reason);
    skipped.samples.push_back(Sample::of_u64({{"reason", reason}}, it == stats.skipped_total.end() ? 0 : it->second));
  }
  removed.samples.push_back(Sample::of_u64({}, stats.removed_total));
  series_dropped.samples.push_back(Sample::of_u64({}, left_out));

  std::vector<MetricFamily> out;
  for (auto* f : {&proc, &info, &ops, &bytes, &bus, &gpu_timed, &hist, &recent, &last_seq, &started, &completed,
                  &inflight, &progress, &oldest, &net_steps, &net_bytes, &net_step_s, &net_wait_s, &dropped,
                  &invalid, &comm_over, &agg_over, &nprocs, &skipped, &removed, &series_dropped})
    out.push_back(std::move(*f));
  return out;
}

}  // namespace fabscope::exporter

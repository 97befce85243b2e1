#include "job/analysis.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "core/strings.hpp"
#include "job/registry.hpp"

namespace fabscope::job {

using core::format_double;
using core::join;

namespace {

std::string ms(double ns) {
  if (ns >= 1e9) return format_double("%.2f s", ns / 1e9);
  if (ns >= 1e6) return format_double("%.1f ms", ns / 1e6);
  return format_double("%.0f us", ns / 1e3);
}
std::string pct(double f) { return format_double("%.1f%%", 100 * f); }

std::string who(const RankStat& r) {
  std::string s = "rank " + std::to_string(r.rank) + " (host " + (r.host.empty() ? "?" : r.host);
  if (r.gpu >= 0) s += ", GPU " + std::to_string(r.gpu);
  if (!r.bus_id.empty()) s += " " + r.bus_id;
  if (r.pid) s += ", pid " + std::to_string(r.pid);
  return s + ")";
}

std::string subject_of(const CommView& c) {
  std::string s = "job " + c.job_id + " comm " + c.comm;
  if (!c.comm_name.empty()) s += " (" + c.comm_name + ")";
  return s;
}

// One collective's key: the op's name (a small number) and NCCL's sequence number of that op.
struct Key {
  std::uint32_t op;
  std::uint64_t seq;
  bool operator<(const Key& o) const { return op != o.op ? op < o.op : seq < o.seq; }
  bool operator==(const Key& o) const { return op == o.op && seq == o.seq; }
};

struct Entry {
  Key key;
  const OpRecord* op;
};

struct Group {
  std::vector<const RankRecord*> ranks;  // by rank, one each
};

void judge_straggler(CommView& view, const Group& g, const Options& opt, std::map<std::string, std::uint32_t>& op_ids) {
  const std::size_t k = g.ranks.size();
  if (k < 2) return;
  // Every rank's completed, timed operations, sorted by key.
  std::vector<std::vector<Entry>> done(k);
  for (std::size_t i = 0; i < k; i++) {
    for (const auto& o : g.ranks[i]->ops) {
      if (o.in_flight() || !o.duration_ns()) continue;
      auto [it, _] = op_ids.emplace(o.op, static_cast<std::uint32_t>(op_ids.size()));
      done[i].push_back({{it->second, o.seq}, &o});
    }
  }
  // The reference order: the rank with the fewest, in its ring's order (oldest first).
  std::size_t ref = 0;
  for (std::size_t i = 1; i < k; i++)
    if (done[i].size() < done[ref].size()) ref = i;
  std::vector<Entry> order = done[ref];
  for (auto& d : done) std::sort(d.begin(), d.end(), [](const Entry& a, const Entry& b) { return a.key < b.key; });
  // Keys every rank has, the last `window` of them in the reference's order.
  std::vector<std::vector<const OpRecord*>> rows;  // rows[n][i]: collective n on rank i
  for (auto it = order.rbegin(); it != order.rend() && rows.size() < opt.window; ++it) {
    std::vector<const OpRecord*> row(k);
    bool all = true;
    for (std::size_t i = 0; i < k && all; i++) {
      auto f = std::lower_bound(done[i].begin(), done[i].end(), it->key,
                                [](const Entry& a, const Key& b) { return a.key < b; });
      if (f == done[i].end() || !(f->key == it->key)) all = false;
      else row[i] = f->op;
    }
    if (all) rows.push_back(std::move(row));
  }
  std::reverse(rows.begin(), rows.end());
  view.compared = rows.size();
  if (rows.empty()) return;

  std::vector<double> d(k), others;
  std::vector<std::vector<double>> per_rank(k);
  std::vector<double> biggest(k, 0);  // per rank: its largest single margin
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < k; i++) d[i] = static_cast<double>(row[i]->duration_ns());
    std::size_t m = 0;
    for (std::size_t i = 1; i < k; i++)
      if (d[i] < d[m]) m = i;
    others.clear();
    for (std::size_t i = 0; i < k; i++) {
      per_rank[i].push_back(d[i]);
      if (i != m) others.push_back(d[i]);
    }
    double margin = median_of(others) - d[m];
    if (margin > 0) {
      view.ranks[m].least++;
      view.ranks[m].wait_ns += margin;
      biggest[m] = std::max(biggest[m], margin);
    }
  }
  std::vector<double> spans;
  for (std::size_t i = 0; i < k; i++) {
    view.ranks[i].median_ns = median_of(per_rank[i]);
    const auto* first = rows.front()[i];
    const auto* last = rows.back()[i];
    if (first->cpu_start_unix_ns && last->done_unix_ns > first->cpu_start_unix_ns)
      spans.push_back(static_cast<double>(last->done_unix_ns - first->cpu_start_unix_ns));
  }
  view.window_s = median_of(spans) / 1e9;

  // Ranks sharing a host: how late each GPU started, against the host's other ranks.
  std::map<std::string, std::vector<std::size_t>> by_host;
  for (std::size_t i = 0; i < k; i++) by_host[g.ranks[i]->host].push_back(i);
  for (const auto& [host, members] : by_host) {
    if (members.size() < 2) continue;
    std::vector<std::vector<double>> skews(members.size());
    bool usable = true;
    for (const auto& row : rows) {
      for (std::size_t a = 0; a < members.size() && usable; a++) {
        if (!row[members[a]]->gpu_start_ns) usable = false;
      }
      if (!usable) break;
      for (std::size_t a = 0; a < members.size(); a++) {
        others.clear();
        for (std::size_t b = 0; b < members.size(); b++)
          if (b != a) others.push_back(static_cast<double>(row[members[b]]->gpu_start_ns));
        skews[a].push_back(static_cast<double>(row[members[a]]->gpu_start_ns) - median_of(others));
      }
    }
    if (!usable) continue;
    for (std::size_t a = 0; a < members.size(); a++) {
      view.ranks[members[a]].has_skew = true;
      view.ranks[members[a]].skew_ns = median_of(skews[a]);
    }
  }

  std::size_t best = 0;
  for (std::size_t i = 1; i < k; i++)
    if (view.ranks[i].least > view.ranks[best].least) best = i;
  const auto& b = view.ranks[best];
  const std::size_t n = rows.size();
  view.straggler_p = binomial_tail(b.least, n, 1.0 / static_cast<double>(k));
  view.wait_share = view.window_s > 0 ? std::min(1.0, b.wait_ns / (view.window_s * 1e9)) : 0;
  if (n >= opt.min_ops && static_cast<double>(b.least) >= opt.min_win_share * static_cast<double>(n) &&
      view.straggler_p * static_cast<double>(k) <= opt.max_p && view.wait_share >= opt.min_wait_share) {
    view.straggler = b.rank;
    return;
  }
  // Time-weighted: the rank the others waited for, when nearly all of the waiting was for it, and
  // not in one collective alone (one stall is not a straggler: no single collective may hold half
  // of its wait).
  std::size_t heavy = 0;
  double total_wait = 0;
  for (std::size_t i = 0; i < k; i++) {
    total_wait += view.ranks[i].wait_ns;
    if (view.ranks[i].wait_ns > view.ranks[heavy].wait_ns) heavy = i;
  }
  const auto& h = view.ranks[heavy];
  const double heavy_share = view.window_s > 0 ? std::min(1.0, h.wait_ns / (view.window_s * 1e9)) : 0;
  if (n >= opt.min_ops && total_wait > 0 && h.wait_ns >= opt.min_wait_dominance * total_wait &&
      heavy_share >= opt.min_wait_share && biggest[heavy] <= 0.5 * h.wait_ns) {
    view.straggler = h.rank;
    view.straggler_p = binomial_tail(h.least, n, 1.0 / static_cast<double>(k));
    view.wait_share = heavy_share;
  }
}

// From a Prometheus server: no per-operation times, only each rank's share of the window inside
// the communicator's operations. The rank the others wait for spends the least.
void judge_busy(CommView& view, const Options& opt) {
  std::vector<double> f;
  for (const auto& r : view.ranks)
    if (r.busy_fraction >= 0) f.push_back(r.busy_fraction);
  if (f.size() < 2 || f.size() != view.ranks.size()) return;
  std::size_t best = 0;
  for (std::size_t i = 1; i < view.ranks.size(); i++)
    if (view.ranks[i].busy_fraction < view.ranks[best].busy_fraction) best = i;
  std::vector<double> others;
  double second = 2;
  for (std::size_t i = 0; i < view.ranks.size(); i++)
    if (i != best) {
      others.push_back(view.ranks[i].busy_fraction);
      second = std::min(second, view.ranks[i].busy_fraction);
    }
  double gap = median_of(others) - view.ranks[best].busy_fraction;
  view.wait_share = gap;
  // Named when the others' extra time inside is worth naming and the rank stands apart: the
  // next-lowest rank is closer to the others than to it.
  if (gap >= opt.min_wait_share && second - view.ranks[best].busy_fraction >= gap / 2) view.straggler = view.ranks[best].rank;
}

void judge_hang(CommView& view, Analysis& out, const Options& opt) {
  double max_in_flight = -1, min_idle = 1e300;
  std::uint64_t max_started = 0;
  bool any_alive = false;
  for (const auto& r : view.ranks) {
    max_in_flight = std::max(max_in_flight, r.in_flight_s);
    min_idle = std::min(min_idle, r.idle_s < 0 ? 1e300 : r.idle_s);
    max_started = std::max(max_started, r.started);
    any_alive = any_alive || r.alive;
  }
  // Processes that ended while the others of the communicator run.
  for (const auto& r : view.ranks) {
    if (r.alive || !any_alive) continue;
    out.findings.push_back(registered_finding(
        "job.process_ended", Severity::Fail, subject_of(view),
        "the process of " + who(r) + " ended while the communicator's other ranks run",
        "rank " + std::to_string(r.rank) + ": started " + std::to_string(r.started) + ", completed " +
            std::to_string(r.completed) + "; its segment's lock is gone",
        "read why it ended on host " + r.host + ": the job's log of rank " + std::to_string(r.rank) +
            " (an exception, the OOM killer: `journalctl -k | grep -i oom`), `dmesg` for GPU Xid errors; the others "
            "will wait in their next collective until NCCL's or the framework's timeout"));
  }
  // Processes stopped while the others run; all of them stopped: the job was suspended.
  std::vector<const RankStat*> stopped;
  std::size_t live = 0;
  for (const auto& r : view.ranks) {
    live += r.alive;
    if (r.stopped) stopped.push_back(&r);
  }
  if (!stopped.empty() && stopped.size() == live) {
    view.suspended = true;
    view.verdict = "SUSPENDED: every live rank read is stopped";
    out.findings.push_back(registered_finding(
        "job.suspended", Severity::Info, subject_of(view),
        "every live rank read (" + std::to_string(live) + ") is stopped: the job was suspended as a whole",
        "rank(s) " + std::to_string(stopped.front()->rank) + (live > 1 ? " ... " + std::to_string(stopped.back()->rank) : "") +
            ": process state " + stopped.front()->process_state,
        "nothing holds the job back but the suspension: `scontrol resume JOBID` (Slurm's suspend), or `kill -CONT` "
        "the job's processes; no hang is judged while it lasts"));
    return;
  }
  for (const auto* r : stopped) {
    view.stopped.push_back(r->rank);
    const std::string pid = std::to_string(r->pid);
    out.findings.push_back(registered_finding(
        "job.process_stopped", Severity::Fail, subject_of(view),
        "the process of " + who(*r) + " is " +
            (r->process_state == "traced" ? "held by a debugger or tracer" : "stopped") +
            "; the other ranks of the communicator wait for it in their next collective",
        "rank " + std::to_string(r->rank) + ": process state " + r->process_state + " (/proc/" + pid +
            "/stat on host " + r->host + "), started " + std::to_string(r->started) + ", completed " +
            std::to_string(r->completed),
        "on host " + r->host + ": `grep -E '^(State|TracerPid)' /proc/" + pid +
            "/status` says whether a debugger holds it (TracerPid: that process; py-spy and gdb stop it while they "
            "read it); a process stopped by a signal (Ctrl-Z, `kill -STOP`, a tool that pauses GPU jobs) resumes "
            "with `kill -CONT " + pid + "`"));
  }
  if (max_in_flight < opt.hang_after_s || min_idle < opt.hang_after_s) {
    if (!stopped.empty())
      view.verdict = "STOPPED: " + who(*stopped.front()) + " is " + stopped.front()->process_state + "; the others will wait for it";
    return;
  }
  view.hung = true;
  std::vector<const RankStat*> behind, waiting;
  for (const auto* r : stopped) {  // named first: a stopped rank is why the others wait
    behind.push_back(r);
    view.behind.push_back(r->rank);
  }
  for (const auto& r : view.ranks) {
    if ((r.started < max_started || !r.alive) && !r.stopped) {
      behind.push_back(&r);
      view.behind.push_back(r.rank);
    }
    if (r.in_flight_s >= 0) waiting.push_back(&r);
  }
  std::string evidence;
  for (const auto& r : view.ranks) {
    if (!evidence.empty()) evidence += "; ";
    evidence += "rank " + std::to_string(r.rank) + ": started " + std::to_string(r.started) + ", completed " +
                std::to_string(r.completed) +
                (r.in_flight_s >= 0 ? ", in flight for " + format_double("%.1f s", r.in_flight_s) : ", nothing in flight") +
                (r.alive ? "" : ", process ended") + (r.process_state.empty() || !r.alive ? "" : ", " + r.process_state);
    if (evidence.size() > 600) {
      evidence += "; ...";
      break;
    }
  }
  std::string msg = "no rank completed an operation for " + format_double("%.0f s", min_idle >= 1e299 ? max_in_flight : min_idle) +
                    "; " + std::to_string(waiting.size()) + " of " + std::to_string(view.ranks.size()) +
                    " rank(s) read wait in an operation";
  std::string remedy;
  if (!behind.empty()) {
    std::vector<std::string> names;
    for (const auto* r : behind) {
      if (names.size() == 8) {
        names.push_back("...");
        break;
      }
      names.push_back(who(*r) + " at " + std::to_string(r->started) + " started" + (r->alive ? "" : ", ended") +
                      (r->stopped ? ", " + r->process_state : ""));
    }
    msg += "; behind: " + join(names, ", ") + " (the others started " + std::to_string(max_started) + ")";
    const auto* r = behind.front();
    view.verdict = r->stopped ? "HANG: " + who(*r) + " is " + r->process_state + "; the others wait for it"
                              : "HANG: " + who(*r) + " never started the operation the others wait in";
    remedy = "look at rank " + std::to_string(r->rank) + " on host " + r->host + " first: `py-spy dump --pid " +
             std::to_string(r->pid) + "` (where its Python is), `gdb -p " + std::to_string(r->pid) +
             " -batch -ex 'thread apply all bt'`, its state in `ps -o stat= -p " + std::to_string(r->pid) +
             "` (T: stopped), `nvidia-smi` and `dmesg` for Xid errors; the other ranks only wait for it";
  } else if (!view.missing.empty()) {
    std::vector<std::string> m;
    for (int r : view.missing) m.push_back(std::to_string(r));
    msg += "; every rank read started as many; not read: rank(s) " + join(m, ",", 16);
    view.verdict = "HANG: every rank read waits; rank(s) not read may be behind: " + join(m, ",", 8);
    remedy = "read the ranks that have no record (run the exporter with --jobs on their nodes, or load the plugin "
             "there), or ask NCCL's RAS: `fabscope job status --ras`";
  } else {
    msg += "; every rank started as many operations: the operation itself does not complete";
    view.verdict = "HANG: every rank waits inside the same operation";
    remedy = "no rank is behind: the transfer does not complete. Check the links the communicator uses "
             "(`fabscope check` on its nodes, `fabscope fabric` for cables with errors), NCCL_DEBUG=INFO logs "
             "(`fabscope log`), and NCCL's RAS view (`fabscope job status --ras`)";
  }
  out.findings.push_back(registered_finding("job.hang", Severity::Fail, subject_of(view), msg, evidence, remedy));
}

void judge_links(CommView& view, const Group& g, Analysis& out, const Options& opt) {
  auto& conns = view.connections;
  for (const auto* r : g.ranks)
    for (const auto& p : r->peers)
      if (p.send && p.steps >= opt.slow_link_min_steps && p.wait_ns_sum) {
        Connection c;
        c.from = r->rank;
        c.to = p.peer;
        c.steps = p.steps;
        c.bytes = p.bytes;
        c.per_step_ns = static_cast<double>(p.wait_ns_sum) / static_cast<double>(p.steps);
        c.gbps = 8.0 * static_cast<double>(p.bytes) / static_cast<double>(p.wait_ns_sum);
        conns.push_back(c);
      }
  if (conns.size() < 3) return;
  std::vector<double> v;
  for (const auto& c : conns) v.push_back(c.per_step_ns);
  double med = median_of(v);
  view.connection_median_ns = med;
  auto worst = std::max_element(conns.begin(), conns.end(), [](const Connection& a, const Connection& b) {
    return a.per_step_ns < b.per_step_ns;
  });
  if (med <= 0 || worst->per_step_ns < opt.slow_link_factor * med) return;
  view.slow_from = worst->from;
  view.slow_to = worst->to;
  auto name = [&](int rank) -> std::string {
    for (const auto& r : view.ranks)
      if (r.rank == rank) return who(r);
    return "rank " + std::to_string(rank) + " (not read)";
  };
  std::string from_host, to_host;
  for (const auto& r : view.ranks) {
    if (r.rank == worst->from) from_host = r.host;
    if (r.rank == worst->to) to_host = r.host;
  }
  out.findings.push_back(registered_finding(
      "job.slow_link", Severity::Warn, subject_of(view),
      "the connection " + name(worst->from) + " -> " + name(worst->to) + " takes " + ms(worst->per_step_ns) +
          " per network step, " + format_double("%.1fx", worst->per_step_ns / med) + " the communicator's median " +
          ms(med),
      std::to_string(conns.size()) + " sending connections with at least " + std::to_string(opt.slow_link_min_steps) +
          " steps; this one: " + std::to_string(worst->steps) + " steps",
      "name the cable or switch: the same command with --fabric FILE (a sweep saved by `fabscope fabric --routes "
      "--save`); test the two hosts' path alone: `fabscope rdma` between " +
          (from_host.empty() ? "?" : from_host) + " and " + (to_host.empty() ? "?" : to_host) +
          "; read both ports' error counters (`fabscope check`, `fabscope fabric`)"));
}

}  // namespace

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  double m = *mid;
  if (v.size() % 2 == 0) m = (m + *std::max_element(v.begin(), mid)) / 2;
  return m;
}

double binomial_tail(std::size_t k, std::size_t n, double p) {
  if (k == 0) return 1;
  if (k > n) return 0;
  if (p <= 0) return 0;
  if (p >= 1) return 1;
  double sum = 0;
  const double lp = std::log(p), lq = std::log1p(-p);
  for (std::size_t i = k; i <= n; i++) {
    double lc = std::lgamma(static_cast<double>(n) + 1) - std::lgamma(static_cast<double>(i) + 1) -
                std::lgamma(static_cast<double>(n - i) + 1);
    sum += std::exp(lc + static_cast<double>(i) * lp + static_cast<double>(n - i) * lq);
  }
  return std::min(1.0, sum);
}

Analysis analyze(const Snapshot& snapshot, const Options& opt) {
  Analysis out;
  // Communicators by (job, hash); one record per rank (a second of the same rank — the same
  // node read twice — is left out, the newer read kept).
  std::map<std::pair<std::string, std::string>, std::map<int, const RankRecord*>> comms;
  for (const auto& r : snapshot.ranks) {
    auto& slot = comms[{r.job_id, r.comm}][r.rank];
    if (!slot || r.now_unix_ns > slot->now_unix_ns) slot = &r;
  }
  for (const auto& e : snapshot.errors)
    out.findings.push_back(registered_finding("job.source_error", Severity::Warn, "source", "could not read: " + e, e,
                                              "check that `fabscope exporter --jobs` runs on that node and its port "
                                              "is reachable from here (or the Prometheus URL is right)"));
  std::map<std::string, std::uint32_t> op_ids;
  for (const auto& [key, by_rank] : comms) {
    CommView view;
    view.job_id = key.first;
    view.comm = key.second;
    Group g;
    for (const auto& [rank, rec] : by_rank) {
      g.ranks.push_back(rec);
      view.nranks = std::max(view.nranks, rec->nranks);
      if (view.comm_name.empty()) view.comm_name = rec->comm_name;
      RankStat s;
      s.rank = rank;
      s.host = rec->host;
      s.bus_id = rec->bus_id;
      s.gpu = rec->gpu;
      s.pid = rec->pid;
      s.alive = rec->alive;
      s.process_state = rec->process_state;
      s.stopped = rec->stopped();
      s.started = rec->started;
      s.completed = rec->completed;
      s.busy_fraction = rec->busy_fraction;
      auto oldest = rec->oldest_in_flight_start();
      if (oldest && rec->now_unix_ns >= oldest) s.in_flight_s = static_cast<double>(rec->now_unix_ns - oldest) / 1e9;
      else if (oldest) s.in_flight_s = 0;
      if (rec->last_done_unix_ns && rec->now_unix_ns >= rec->last_done_unix_ns)
        s.idle_s = static_cast<double>(rec->now_unix_ns - rec->last_done_unix_ns) / 1e9;
      view.ranks.push_back(std::move(s));
    }
    for (int r = 0, n = 0; r < view.nranks && n < 64; r++)
      if (!by_rank.count(r)) {
        view.missing.push_back(r);
        n++;
      }
    judge_straggler(view, g, opt, op_ids);
    if (view.compared == 0) judge_busy(view, opt);
    judge_hang(view, out, opt);
    if (view.hung || view.suspended || !view.stopped.empty()) view.straggler = -1;  // the hang (or stop) is the verdict
    if (!view.hung) judge_links(view, g, out, opt);
    if (view.straggler >= 0 && !view.hung) {
      const RankStat* s = nullptr;
      for (const auto& r : view.ranks)
        if (r.rank == view.straggler) s = &r;
      std::string evidence, msg;
      if (view.compared) {
        msg = who(*s) + " holds the others back: it spent the least time inside " + std::to_string(s->least) + " of the last " +
              std::to_string(view.compared) + " collectives (chance: " + format_double("%.2g", view.straggler_p) +
              "); the others waited for it " + ms(s->least ? s->wait_ns / static_cast<double>(s->least) : 0) +
              " each, " + pct(view.wait_share) + " of " + format_double("%.1f s", view.window_s);
        for (const auto& r : view.ranks) {
          if (evidence.size() > 500) {
            evidence += "; ...";
            break;
          }
          if (!evidence.empty()) evidence += "; ";
          evidence += "rank " + std::to_string(r.rank) + ": least in " + std::to_string(r.least) + ", median inside " +
                      ms(r.median_ns);
          if (r.has_skew) evidence += ", GPU start " + std::string(r.skew_ns >= 0 ? "+" : "-") + ms(std::abs(r.skew_ns)) + " vs its host";
        }
      } else {
        msg = who(*s) + " holds the others back: it spends " + pct(s->busy_fraction) +
              " of the time inside the communicator's operations, the others " + pct(s->busy_fraction + view.wait_share) +
              " (median)";
        for (const auto& r : view.ranks) {
          if (evidence.size() > 500) {
            evidence += "; ...";
            break;
          }
          if (!evidence.empty()) evidence += "; ";
          evidence += "rank " + std::to_string(r.rank) + ": " + pct(r.busy_fraction) + " inside";
        }
      }
      view.verdict = "STRAGGLER: " + who(*s) + ", others wait " + pct(view.wait_share) + " of the time";
      out.findings.push_back(registered_finding(
          "job.straggler", Severity::Warn, subject_of(view), msg, evidence,
          "look at what rank " + std::to_string(s->rank) + " does between collectives on host " + s->host +
              ": its GPU (`nvidia-smi -q -d PERFORMANCE,CLOCK,TEMPERATURE` for throttling, `dmesg` for Xid), its "
              "CPU (another process on its cores, `top -H -p " + std::to_string(s->pid) +
              "`), its data loading; if the node is at fault, drain it (`fabscope job status --drain`)"));
    }
    if (!view.missing.empty()) {
      std::vector<std::string> m;
      for (int r : view.missing) m.push_back(std::to_string(r));
      out.findings.push_back(registered_finding(
          "job.ranks_missing", Severity::Info, subject_of(view),
          std::to_string(view.nranks - static_cast<int>(view.ranks.size())) + " of " + std::to_string(view.nranks) +
              " rank(s) have no record here: their nodes were not read or their process has not loaded the plugin",
          "not read: rank(s) " + join(m, ",", 32),
          "read every node of the job: `fabscope job status --nodes LIST` with the job's nodes (or a Prometheus that "
          "scrapes all their exporters), with NCCL_PROFILER_PLUGIN set in every rank's environment"));
    }
    if (view.verdict.empty()) {
      if (view.compared < opt.min_ops && view.compared == 0 && view.ranks.size() >= 2 && view.ranks.front().busy_fraction < 0)
        view.verdict = "no collective completed by every rank read yet";
      else if (view.ranks.size() < 2)
        view.verdict = "one rank read: nothing to compare";
      else if (view.compared && view.compared < opt.min_ops)
        view.verdict = "waiting: " + std::to_string(view.compared) + " collectives compared, " + std::to_string(opt.min_ops) +
                       " needed";
      else
        view.verdict = "ok: no rank holds the others back";
    }
    out.comms.push_back(std::move(view));
  }
  std::stable_sort(out.findings.begin(), out.findings.end(),
                   [](const Finding& a, const Finding& b) { return a.severity > b.severity; });
  return out;
}

json analysis_to_json(const Analysis& a, const Snapshot& snapshot, const Options& opt) {
  json comms = json::array();
  for (const auto& c : a.comms) {
    json ranks = json::array();
    for (const auto& r : c.ranks) {
      json jr = {{"rank", r.rank}, {"host", r.host}, {"gpu", r.gpu}, {"bus_id", r.bus_id}, {"pid", r.pid},
                 {"alive", r.alive},
                 {"process_state", r.process_state.empty() ? json(nullptr) : json(r.process_state)},
                 {"least", r.least}, {"wait_seconds", r.wait_ns / 1e9},
                 {"median_seconds", r.median_ns / 1e9}, {"started", r.started}, {"completed", r.completed},
                 {"in_flight_seconds", r.in_flight_s >= 0 ? json(r.in_flight_s) : json(nullptr)},
                 {"idle_seconds", r.idle_s >= 0 ? json(r.idle_s) : json(nullptr)},
                 {"gpu_start_skew_seconds", r.has_skew ? json(r.skew_ns / 1e9) : json(nullptr)},
                 {"busy_fraction", r.busy_fraction >= 0 ? json(r.busy_fraction) : json(nullptr)}};
      ranks.push_back(std::move(jr));
    }
    comms.push_back({{"job_id", c.job_id}, {"comm", c.comm}, {"comm_name", c.comm_name}, {"nranks", c.nranks},
                     {"ranks_read", c.ranks.size()}, {"missing", c.missing}, {"compared", c.compared},
                     {"window_seconds", c.window_s},
                     {"straggler", c.straggler >= 0 ? json(c.straggler) : json(nullptr)},
                     {"straggler_p", c.straggler_p}, {"wait_share", c.wait_share}, {"hung", c.hung},
                     {"suspended", c.suspended}, {"stopped", c.stopped}, {"behind", c.behind},
                     {"verdict", c.verdict}, {"connections", c.connections.size()},
                     {"slow_connection", c.slow_from >= 0 ? json{{"from", c.slow_from}, {"to", c.slow_to}} : json(nullptr)},
                     {"ranks", std::move(ranks)}});
  }
  json findings = json::array();
  for (const auto& f : a.findings) findings.push_back(f);
  return {{"schema", kAnalysisSchema},
          {"schema_version", kAnalysisSchemaVersion},
          {"source", snapshot.source},
          {"options",
           {{"window", opt.window}, {"min_ops", opt.min_ops}, {"min_win_share", opt.min_win_share},
            {"max_p", opt.max_p}, {"min_wait_share", opt.min_wait_share},
            {"min_wait_dominance", opt.min_wait_dominance}, {"hang_after_seconds", opt.hang_after_s}}},
          {"read_errors", snapshot.errors},
          {"comms", std::move(comms)},
          {"findings", std::move(findings)}};
}

}  // namespace fabscope::job

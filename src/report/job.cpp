#include "report/job.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "report/mesh.hpp"
#include "report/topology.hpp"

namespace fabscope::report {

std::optional<double> job_median(std::vector<double> v) {
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string rank_ranges(const std::vector<int>& ranks) {
  std::string o;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    o += (o.empty() ? "" : ", ") + std::to_string(ranks[i]) + (j > i ? "-" + std::to_string(ranks[j]) : "");
    i = j + 1;
  }
  return o;
}

namespace {

JobOpView op_view(const std::string& op, const std::vector<JobRankRef>& ranks) {
  JobOpView v;
  v.op = op;
  std::set<std::uint64_t> sizes;
  for (const auto& r : ranks)
    for (const auto& a : r.rank->aggs)
      if (a.op == op) sizes.insert(a.size_bytes);
  v.sizes.assign(sizes.begin(), sizes.end());
  v.cells.assign(ranks.size(), std::vector<JobCell>(v.sizes.size()));
  for (std::size_t i = 0; i < ranks.size(); ++i)
    for (const auto& a : ranks[i].rank->aggs) {
      if (a.op != op) continue;
      const auto col = static_cast<std::size_t>(std::lower_bound(v.sizes.begin(), v.sizes.end(), a.size_bytes) - v.sizes.begin());
      JobCell& c = v.cells[i][col];
      c.present = true;
      c.operations = a.operations.value_or(a.seconds_count.value_or(0));
      v.operations += c.operations;
      if (a.bus_bytes && *a.bus_bytes > 0) v.busbw = true;
      c.timed = a.seconds_count;
      if (a.size_bytes > 0 && a.bus_bytes && a.seconds_sum && *a.seconds_sum > 0) {
        // the exporter's bus bytes are the timed operations' only, as the seconds are
        c.busbw_gbps = *a.bus_bytes / *a.seconds_sum / 1e9;
      }
      if (!a.buckets.empty()) {
        c.p50_s = histogram_quantile(0.5, a.buckets);
        c.p99_s = histogram_quantile(0.99, a.buckets);
      }
    }
  v.median_gbps.resize(v.sizes.size());
  std::vector<std::size_t> marks(ranks.size(), 0);
  for (std::size_t col = 0; col < v.sizes.size(); ++col) {
    std::vector<double> values;
    for (const auto& row : v.cells)
      if (row[col].busbw_gbps) values.push_back(*row[col].busbw_gbps);
    v.median_gbps[col] = job_median(values);
    if (!v.median_gbps[col] || !(*v.median_gbps[col] > 0)) continue;
    for (std::size_t i = 0; i < v.cells.size(); ++i) {
      JobCell& c = v.cells[i][col];
      if (!c.busbw_gbps) continue;
      c.ratio = *c.busbw_gbps / *v.median_gbps[col];
      c.below = *c.ratio < kJobBelowMedian;
      if (c.below) ++v.below, ++marks[i];
    }
  }
  for (std::size_t i = 0; i < marks.size(); ++i)
    if (marks[i]) v.below_rows.push_back(i);
  std::stable_sort(v.below_rows.begin(), v.below_rows.end(),
                   [&](std::size_t a, std::size_t b) { return marks[a] > marks[b]; });
  return v;
}

JobCommView comm_view(const std::string& job, const std::string& comm, std::vector<JobRankRef> ranks) {
  JobCommView c;
  c.job = job;
  c.comm = comm;
  std::sort(ranks.begin(), ranks.end(), [](const JobRankRef& a, const JobRankRef& b) { return a.rank->rank < b.rank->rank; });
  c.ranks = std::move(ranks);
  std::set<int> nranks;
  std::set<std::string> names, hosts, ops;
  bool first = true;
  for (const auto& ref : c.ranks) {
    const JobRank& r = *ref.rank;
    if (r.nranks) nranks.insert(*r.nranks);
    if (r.info) names.insert(r.comm_name);
    if (!r.host.empty()) hosts.insert(r.host);
    const double done = r.completed.value_or(0);
    c.completed_min = first ? done : std::min(c.completed_min, done);
    c.completed_max = first ? done : std::max(c.completed_max, done);
    first = false;
    c.in_flight += r.in_flight.value_or(0);
    if (!r.last_progress_unix_s || *r.last_progress_unix_s <= 0) {
      ++c.no_progress;
    } else if (!c.progress_oldest_unix_s || *r.last_progress_unix_s < *c.progress_oldest_unix_s) {
      c.progress_oldest_unix_s = r.last_progress_unix_s;
      c.laggard = r.rank;
    }
    for (const auto& a : r.aggs) ops.insert(a.op);
    c.network = c.network || !r.net.empty();
  }
  if (!nranks.empty()) c.nranks = *nranks.rbegin();
  if (nranks.size() > 1) {
    std::string list;
    for (int n : nranks) list += (list.empty() ? "" : ", ") + std::to_string(n);
    c.notes.push_back("its ranks give different nranks (" + list + "); the largest is used");
  }
  if (!names.empty()) c.comm_name = *names.begin();
  if (names.size() > 1) {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "\"" : ", \"") + n + "\"";
    c.notes.push_back("its ranks give different names (" + list + ")");
  }
  c.hosts.assign(hosts.begin(), hosts.end());
  std::sort(c.hosts.begin(), c.hosts.end(), natural_less);
  if (c.nranks) {
    std::size_t k = 0;
    for (int r = 0; r < *c.nranks; ++r) {
      while (k < c.ranks.size() && c.ranks[k].rank->rank < r) ++k;
      if (k == c.ranks.size() || c.ranks[k].rank->rank != r) c.missing.push_back(r);
    }
  }
  for (const auto& op : ops) c.ops.push_back(op_view(op, c.ranks));
  return c;
}

}  // namespace

JobSection build_job_section(const std::vector<const Input*>& inputs) {
  JobSection s;
  s.files = inputs.size();
  using Key = std::tuple<std::string, std::string, int>;
  std::map<Key, const Input*> seen;
  std::map<std::string, std::map<std::string, std::vector<JobRankRef>>> by_job;  // job -> comm -> ranks
  for (const Input* in : inputs)
    for (const JobRank& r : in->job.ranks) {
      auto [it, fresh] = seen.emplace(Key{r.job, r.comm, r.rank}, in);
      if (!fresh) {
        s.notes.push_back(in->file + ": rank " + std::to_string(r.rank) + " of comm " + r.comm + " (job " + r.job +
                          ") is in " + it->second->file + " too; that one is kept");
        continue;
      }
      ++s.ranks;
      by_job[r.job][r.comm].push_back({&r, in});
      if (r.last_progress_unix_s && *r.last_progress_unix_s > 0 &&
          (!s.newest_progress_unix_s || *r.last_progress_unix_s > *s.newest_progress_unix_s))
        s.newest_progress_unix_s = r.last_progress_unix_s;
    }
  std::vector<std::string> jobs;
  for (const auto& [job, comms] : by_job) jobs.push_back(job);
  std::sort(jobs.begin(), jobs.end(), natural_less);
  for (const auto& job : jobs) {
    JobView v;
    v.job = job;
    for (auto& [comm, ranks] : by_job[job]) v.comms.push_back(comm_view(job, comm, std::move(ranks)));
    s.jobs.push_back(std::move(v));
  }
  return s;
}

std::vector<JobBlock> job_blocks(const JobOpView& op, std::size_t max_rows) {
  max_rows = std::max<std::size_t>(max_rows, 1);
  const std::size_t n = op.cells.size();
  const std::size_t per = n <= max_rows ? 1 : (n + max_rows - 1) / max_rows;
  std::vector<JobBlock> out;
  for (std::size_t i = 0; i < n; i += per) {
    JobBlock b;
    b.first = i;
    b.last = std::min(n, i + per) - 1;
    b.cells.resize(op.sizes.size());
    for (std::size_t col = 0; col < op.sizes.size(); ++col) {
      JobBlockCell& c = b.cells[col];
      for (std::size_t r = b.first; r <= b.last; ++r) {
        const JobCell& x = op.cells[r][col];
        if (!x.present) continue;
        ++c.present;
        c.below += x.below;
        if (x.busbw_gbps && (!c.busbw_gbps || *x.busbw_gbps < *c.busbw_gbps)) c.busbw_gbps = x.busbw_gbps;
        if (x.p50_s && (!c.p50_s || *x.p50_s > *c.p50_s)) c.p50_s = x.p50_s;
        if (x.p99_s && (!c.p99_s || *x.p99_s > *c.p99_s)) c.p99_s = x.p99_s;
      }
    }
    out.push_back(std::move(b));
  }
  return out;
}

}  // namespace fabscope::report

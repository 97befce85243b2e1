// The job section: from one /metrics snapshot per node of `fabscope exporter --jobs`, per job and
// communicator a summary (ranks seen and missing, operations, progress), per op the bus bandwidth
// against message size with one line per rank (a slow rank's line lies below the rest), the
// rank x size tables of busbw (cells more than 10% below their column's median marked) and of the
// p50/p99 operation time, and the network wait per rank and peer.
#include <algorithm>
#include <cmath>
#include <ctime>
#include <set>

#include "report/html.hpp"
#include "report/job.hpp"
#include "report/mesh.hpp"
#include "report/render.hpp"
#include "report/svg.hpp"

namespace fabscope::report {

namespace {

constexpr std::size_t kMaxRankTableRows = 64;        // rank rows of a table; past it, blocks of consecutive ranks
constexpr std::size_t kMaxLines = 16;       // ranks drawn one line each; past it, median, lowest and marked ranks
constexpr std::size_t kMaxMarkedLines = 8;  // marked ranks drawn past kMaxLines
constexpr std::size_t kMaxRankRows = 32;    // the ranks table, least recent progress first
constexpr std::size_t kMaxNetRows = 32;     // the network table, most wait first

const char* const kDash = "\xE2\x80\x94";


std::string rate_text(double v) { return fmt(v, v >= 100 ? 1 : v >= 1 ? 2 : 3); }

std::string utc(double unix_s) {
  std::time_t t = static_cast<std::time_t>(unix_s);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string ago(const JobSection& s, std::optional<double> unix_s) {
  if (!unix_s || *unix_s <= 0 || !s.newest_progress_unix_s) return kDash;
  return fmt(std::max(0.0, *s.newest_progress_unix_s - *unix_s), 1) + " s";
}


std::string rank_where(const JobRank& r) {
  std::string w = r.host.empty() ? "" : r.host;
  if (!r.gpu.empty()) w += (w.empty() ? "GPU " : ", GPU ") + r.gpu;
  return w;
}

std::string comm_title(const JobCommView& c) {
  return "comm " + c.comm + (c.comm_name.empty() ? "" : " \"" + c.comm_name + "\"");
}

std::string size_class(std::uint64_t s) {
  return s == 0 ? "0 B" : format_bytes(s) + " to " + format_bytes(s * 2) + " (excl.)";
}

std::string cell_title(const JobCommView& c, const JobOpView& op, std::size_t row, std::size_t col) {
  const JobRank& r = *c.ranks[row].rank;
  const JobCell& x = op.cells[row][col];
  std::string t = "rank " + std::to_string(r.rank) + " (" + rank_where(r) + "), " + op.op + " " +
                  format_bytes(op.sizes[col]) + " (messages of " + size_class(op.sizes[col]) + "): ";
  if (!x.present) return t + "no operation of this size";
  t += count_text(x.operations) + " operations";
  if (x.timed && *x.timed < x.operations) t += " (" + count_text(*x.timed) + " of them timed)";
  if (x.busbw_gbps) {
    t += ", busbw " + rate_text(*x.busbw_gbps) + " GB/s";
    if (x.ratio)
      t += " (" + fmt(*x.ratio * 100, 0) + "% of the median " + rate_text(*op.median_gbps[col]) + " GB/s" +
           (x.below ? ", more than 10% below it" : "") + ")";
  }
  if (x.p50_s) t += ", p50 " + format_seconds(*x.p50_s) + ", p99 " + format_seconds(*x.p99_s);
  return t;
}

LineChart op_chart(const JobCommView& c, const JobOpView& op, const std::string& id) {
  LineChart ch;
  ch.id = id;
  ch.title = op.op + " of " + comm_title(c) + ": bus bandwidth against message size, one line per rank";
  ch.x_label = "message size (size class's lower bound, bytes, log scale)";
  ch.y_label = "bus bandwidth (GB/s)";
  auto rank_series = [&](std::size_t row, std::size_t k) {
    PlotSeries s;
    const JobRank& r = *c.ranks[row].rank;
    s.label = "rank " + std::to_string(r.rank) + (r.host.empty() ? "" : " (" + r.host + ")");
    s.colour = static_cast<int>(k % 6);
    s.marker = static_cast<int>((k / 6) % 4);
    for (std::size_t col = 0; col < op.sizes.size(); ++col)
      if (op.cells[row][col].busbw_gbps && op.sizes[col] > 0)
        s.points.push_back({static_cast<double>(op.sizes[col]), *op.cells[row][col].busbw_gbps, cell_title(c, op, row, col)});
    if (!s.points.empty()) ch.series.push_back(std::move(s));
  };
  if (c.ranks.size() <= kMaxLines) {
    for (std::size_t row = 0; row < c.ranks.size(); ++row) rank_series(row, row);
    return ch;
  }
  // Many ranks: the median and the lowest of each size, and the marked ranks (most marks first).
  PlotSeries median, lowest;
  median.label = "median of " + std::to_string(c.ranks.size()) + " ranks";
  median.colour = 6;
  lowest.label = "lowest rank of each size";
  lowest.colour = 6;
  lowest.marker = 1;
  lowest.dashed = true;
  for (std::size_t col = 0; col < op.sizes.size(); ++col) {
    if (!op.median_gbps[col] || op.sizes[col] == 0) continue;
    const double x = static_cast<double>(op.sizes[col]);
    median.points.push_back({x, *op.median_gbps[col], "median of the ranks' busbw at " + format_bytes(op.sizes[col]) +
                                                          ": " + rate_text(*op.median_gbps[col]) + " GB/s"});
    std::size_t low = SIZE_MAX;
    for (std::size_t row = 0; row < c.ranks.size(); ++row)
      if (op.cells[row][col].busbw_gbps && (low == SIZE_MAX || *op.cells[row][col].busbw_gbps < *op.cells[low][col].busbw_gbps))
        low = row;
    lowest.points.push_back({x, *op.cells[low][col].busbw_gbps, "lowest: " + cell_title(c, op, low, col)});
  }
  if (!median.points.empty()) ch.series.push_back(std::move(median));
  if (!lowest.points.empty()) ch.series.push_back(std::move(lowest));
  for (std::size_t k = 0; k < op.below_rows.size() && k < kMaxMarkedLines; ++k) rank_series(op.below_rows[k], k);
  return ch;
}

std::string row_label(const JobCommView& c, const JobBlock& b) {
  const JobRank& first = *c.ranks[b.first].rank;
  if (b.first == b.last) return std::to_string(first.rank);
  return std::to_string(first.rank) + "\xE2\x80\x93" + std::to_string(c.ranks[b.last].rank->rank) + " (" +
         std::to_string(b.last - b.first + 1) + " ranks)";
}

std::string row_host(const JobCommView& c, const JobBlock& b) {
  std::set<std::string> hosts;
  for (std::size_t i = b.first; i <= b.last; ++i) hosts.insert(c.ranks[i].rank->host);
  if (hosts.size() == 1) return *hosts.begin();
  return std::to_string(hosts.size()) + " hosts";
}

std::string size_header(const JobOpView& op) {
  std::string o;
  for (auto s : op.sizes) o += "<th class=\"num\" data-size=\"" + std::to_string(s) + "\">" + esc(format_size(s)) + "</th>";
  return o;
}

// The rank x size table of busbw: a cell more than 10% below its column's median is marked.
std::string busbw_table(const JobCommView& c, const JobOpView& op, const std::vector<JobBlock>& blocks) {
  std::string o = "<div class=\"scroll\"><table class=\"job-grid job-busbw\" data-op=\"" + esc(op.op) +
                  "\"><thead><tr><th>rank</th><th>host</th>" + size_header(op) + "</tr></thead><tbody>";
  const bool one = blocks.size() == c.ranks.size();
  for (const auto& b : blocks) {
    std::size_t marked = 0;
    for (const auto& x : b.cells) marked += x.below;
    o += "<tr class=\"job-rank" + std::string(marked ? " has-below" : "") + "\" data-rank=\"" +
         esc(row_label(c, b)) + "\" data-below=\"" + std::to_string(marked) + "\"><td>" + esc(row_label(c, b)) +
         "</td><td>" + esc(row_host(c, b)) + "</td>";
    for (std::size_t col = 0; col < op.sizes.size(); ++col) {
      const JobBlockCell& x = b.cells[col];
      std::string title;
      if (one) {
        title = cell_title(c, op, b.first, col);
      } else {
        title = "ranks " + row_label(c, b) + ", " + format_bytes(op.sizes[col]) + ": " + std::to_string(x.present) +
                " ranks with this size" + (x.busbw_gbps ? ", lowest busbw " + rate_text(*x.busbw_gbps) + " GB/s" : "") +
                (op.median_gbps[col] ? " (median of all ranks " + rate_text(*op.median_gbps[col]) + " GB/s)" : "") + ", " +
                std::to_string(x.below) + " more than 10% below the median";
      }
      if (!x.busbw_gbps) {
        o += "<td class=\"num\" title=\"" + esc(title) + "\">" + kDash + "</td>";
        continue;
      }
      o += "<td class=\"num" + std::string(x.below ? " below" : "") + "\" title=\"" + esc(title) + "\">" +
           (x.below ? "\xE2\x96\xBC " : "") + rate_text(*x.busbw_gbps) + "</td>";
    }
    o += "</tr>";
  }
  o += "<tr class=\"job-median\"><td>median</td><td></td>";
  for (const auto& m : op.median_gbps) o += "<td class=\"num\">" + (m ? rate_text(*m) : std::string(kDash)) + "</td>";
  o += "</tr></tbody></table></div>";
  return o;
}

std::string times_table(const JobCommView& c, const JobOpView& op, const std::vector<JobBlock>& blocks) {
  std::string o = "<div class=\"scroll\"><table class=\"job-grid job-times\" data-op=\"" + esc(op.op) +
                  "\"><thead><tr><th>rank</th><th>host</th>" + size_header(op) + "</tr></thead><tbody>";
  const bool one = blocks.size() == c.ranks.size();
  for (const auto& b : blocks) {
    o += "<tr class=\"job-rank\" data-rank=\"" + esc(row_label(c, b)) + "\"><td>" + esc(row_label(c, b)) + "</td><td>" +
         esc(row_host(c, b)) + "</td>";
    for (std::size_t col = 0; col < op.sizes.size(); ++col) {
      const JobBlockCell& x = b.cells[col];
      if (!x.p50_s) {
        o += "<td class=\"num\">" + std::string(kDash) + "</td>";
        continue;
      }
      const std::string title = one ? cell_title(c, op, b.first, col)
                                    : "ranks " + row_label(c, b) + ", " + format_bytes(op.sizes[col]) +
                                          ": the highest p50 and p99 of the block";
      o += "<td class=\"num\" title=\"" + esc(title) + "\">" + esc(format_seconds(*x.p50_s)) + " / " +
           esc(format_seconds(*x.p99_s)) + "</td>";
    }
    o += "</tr>";
  }
  o += "</tbody></table></div>";
  return o;
}

std::string ranks_table(const JobSection& s, const JobCommView& c) {
  std::vector<std::size_t> order(c.ranks.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto progress = [&](std::size_t i) {
    const auto& p = c.ranks[i].rank->last_progress_unix_s;
    return p && *p > 0 ? *p : -1.0;  // none yet first
  };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return progress(a) < progress(b); });
  std::string o = "<details><summary>Ranks, least recent progress first (" + std::to_string(c.ranks.size()) +
                  ")</summary><div class=\"scroll\"><table class=\"job-ranks\"><thead><tr><th>rank</th><th>host</th>"
                  "<th>GPU</th><th>pid</th><th>state</th><th>completed</th><th>in flight</th>"
                  "<th>since last progress</th><th>oldest in flight since</th><th>snapshot</th></tr></thead><tbody>";
  for (std::size_t k = 0; k < order.size() && k < kMaxRankRows; ++k) {
    const JobRankRef& ref = c.ranks[order[k]];
    const JobRank& r = *ref.rank;
    o += "<tr class=\"job-rank-state\" data-rank=\"" + std::to_string(r.rank) + "\"><td class=\"num\">" +
         std::to_string(r.rank) + "</td><td>" + esc(r.host) + "</td><td class=\"mono\">" + esc(r.gpu) +
         "</td><td class=\"num\">" + (r.pid ? std::to_string(*r.pid) : std::string(kDash)) + "</td><td>" +
         esc(r.state.empty() ? kDash : r.state) + "</td><td class=\"num\">" +
         (r.completed ? count_text(*r.completed) : std::string(kDash)) + "</td><td class=\"num\">" +
         (r.in_flight ? count_text(*r.in_flight) : std::string(kDash)) + "</td><td class=\"num\">" +
         (r.last_progress_unix_s && *r.last_progress_unix_s == 0 ? std::string("none yet") : ago(s, r.last_progress_unix_s)) +
         "</td><td class=\"num\">" + ago(s, r.oldest_in_flight_unix_s) + "</td><td>" + esc(ref.input->job.node) +
         "</td></tr>";
  }
  o += "</tbody></table></div>";
  if (order.size() > kMaxRankRows)
    o += "<p class=\"muted\">" + std::to_string(order.size() - kMaxRankRows) + " more ranks not listed.</p>";
  o += "</details>";
  return o;
}

std::string network_table(const JobCommView& c) {
  struct Row {
    const JobRank* r;
    const JobNetSeries* e;
  };
  std::vector<Row> rows;
  for (const auto& ref : c.ranks)
    for (const auto& e : ref.rank->net) rows.push_back({ref.rank, &e});
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return a.e->wait_seconds.value_or(0) > b.e->wait_seconds.value_or(0);
  });
  std::string o = "<h4>Network wait per rank and peer</h4><p class=\"muted\">The proxy thread's network steps to or "
                  "from each peer rank (<code>FABSCOPE_PROFILER_PROXY=1</code>), most wait first: a rank that waits "
                  "long on one peer points at that peer or the path between them (send: SendWait; recv: RecvWait).</p>"
                  "<div class=\"scroll\"><table class=\"job-network\"><thead><tr><th>rank</th><th>host</th><th>peer</th>"
                  "<th>direction</th><th>wait</th><th>step time</th><th>wait share</th><th>bytes</th><th>steps</th>"
                  "</tr></thead><tbody>";
  for (std::size_t k = 0; k < rows.size() && k < kMaxNetRows; ++k) {
    const JobNetSeries& e = *rows[k].e;
    std::string share = kDash;
    if (e.wait_seconds && e.step_seconds && *e.step_seconds > 0) share = fmt(*e.wait_seconds / *e.step_seconds * 100, 0) + "%";
    o += "<tr class=\"job-net\" data-rank=\"" + std::to_string(rows[k].r->rank) + "\" data-peer=\"" +
         std::to_string(e.peer) + "\" data-direction=\"" + esc(e.direction) + "\"><td class=\"num\">" +
         std::to_string(rows[k].r->rank) + "</td><td>" + esc(rows[k].r->host) + "</td><td class=\"num\">" +
         std::to_string(e.peer) + "</td><td>" + esc(e.direction) + "</td><td class=\"num\">" +
         (e.wait_seconds ? fmt(*e.wait_seconds, 3) + " s" : std::string(kDash)) + "</td><td class=\"num\">" +
         (e.step_seconds ? fmt(*e.step_seconds, 3) + " s" : std::string(kDash)) + "</td><td class=\"num\">" + share +
         "</td><td class=\"num\">" + (e.bytes ? esc(format_bytes(static_cast<std::uint64_t>(*e.bytes))) : std::string(kDash)) +
         "</td><td class=\"num\">" + (e.steps ? count_text(*e.steps) : std::string(kDash)) + "</td></tr>";
  }
  o += "</tbody></table></div>";
  if (rows.size() > kMaxNetRows)
    o += "<p class=\"muted\">" + std::to_string(rows.size() - kMaxNetRows) + " more (rank, peer) series not listed.</p>";
  return o;
}

std::string comm_summary_row(const JobSection& s, const JobCommView& c, const std::string& anchor) {
  std::string hosts;
  for (std::size_t i = 0; i < c.hosts.size() && i < 4; ++i) hosts += (hosts.empty() ? "" : ", ") + c.hosts[i];
  if (c.hosts.size() > 4) hosts += ", \xE2\x80\xA6 (" + std::to_string(c.hosts.size()) + ")";
  std::string ops = count_text(c.completed_min);
  if (c.completed_max != c.completed_min) ops += "\xE2\x80\x93" + count_text(c.completed_max);
  std::string since = kDash;
  if (c.progress_oldest_unix_s && s.newest_progress_unix_s)
    since = fmt(std::max(0.0, *s.newest_progress_unix_s - *c.progress_oldest_unix_s), 1) + " s (rank " +
            std::to_string(c.laggard) + ")";
  if (c.no_progress) since += (since == kDash ? "" : "; ") + std::to_string(c.no_progress) + " ranks none yet";
  std::string seen = std::to_string(c.ranks.size());
  if (!c.missing.empty()) seen += ", " + std::to_string(c.missing.size()) + " missing";
  return "<tr class=\"job-comm-row\" data-comm=\"" + esc(c.comm) + "\" data-ranks=\"" + std::to_string(c.ranks.size()) +
         "\" data-missing=\"" + std::to_string(c.missing.size()) + "\"><td class=\"mono\"><a href=\"#" + anchor + "\">" +
         esc(c.comm) + "</a></td><td>" + esc(c.comm_name.empty() ? kDash : c.comm_name) + "</td><td class=\"num\">" +
         (c.nranks ? std::to_string(*c.nranks) : std::string("?")) + "</td><td class=\"num\">" + esc(seen) +
         "</td><td>" + esc(hosts) + "</td><td class=\"num\">" + ops + "</td><td class=\"num\">" + count_text(c.in_flight) +
         "</td><td class=\"num\">" + esc(since) + "</td></tr>";
}

std::string op_block(const JobCommView& c, const JobOpView& op, const std::string& id) {
  std::string o = "<div class=\"job-op\" data-op=\"" + esc(op.op) + "\" data-below=\"" + std::to_string(op.below) +
                  "\"><h4>" + esc(op.op) + "</h4>";
  const auto blocks = job_blocks(op, kMaxRankTableRows);
  const bool many = c.ranks.size() > kMaxLines;
  if (op.busbw) {
    LineChart ch = op_chart(c, op, "plot-" + id + "-" + slug(op.op));
    std::string caption = many ? "Past " + std::to_string(kMaxLines) +
                                     " ranks: the median of the ranks and the lowest rank at each size, and the ranks "
                                     "with marked cells (most first, at most " +
                                     std::to_string(kMaxMarkedLines) + ")."
                               : "One line per rank: a rank whose line lies below the others is the slow one.";
    o += "<figure>" + render_line_chart(ch) + "<figcaption>" + render_legend(ch) + esc(caption) +
         " Totals since each process started: bus bytes \xC3\xB7 operation seconds.</figcaption></figure>";
    const std::size_t n = op.below_rows.size();
    std::string sentence = op.below ? std::to_string(op.below) + (op.below == 1 ? " cell" : " cells") +
                                          " more than 10% below the column's median (\xE2\x96\xBC), in " +
                                          std::to_string(n) + (n == 1 ? " rank" : " ranks")
                                    : "No cell more than 10% below its column's median";
    o += "<p class=\"job-below\">" + esc(sentence) + ".</p>";
    o += busbw_table(c, op, blocks);
  } else {
    o += "<p class=\"muted\">No bus bandwidth: the exporter gives " + esc(op.op) +
         " no bus-bandwidth factor (its bus bytes are 0); the times below still hold.</p>";
  }
  o += "<p class=\"muted\">Operation time p50 / p99 per rank and size, interpolated in the histogram's buckets as "
       "Prometheus' <code>histogram_quantile</code> does (the buckets are 4<sup>k</sup> \xC2\xB5s wide apart, so a "
       "quantile is coarse).</p>" +
       times_table(c, op, blocks);
  o += "</div>";
  return o;
}

}  // namespace

std::string render_job(const Report& r) {
  std::vector<const Input*> inputs;
  for (const auto& in : r.inputs)
    if (in.kind == InputKind::Job) inputs.push_back(&in);
  if (inputs.empty()) return "";
  const JobSection s = build_job_section(inputs);
  std::size_t comms = 0;
  for (const auto& j : s.jobs) comms += j.comms.size();
  std::string o =
      "<section id=\"job\"><h2>Job</h2><p class=\"muted\">The collectives of running jobs as the NCCL profiler plugin "
      "recorded them, from one <code>/metrics</code> snapshot per node of <code>fabscope exporter --jobs</code>. The "
      "values are totals since each process started. Bus bandwidth is bus bytes \xC3\xB7 operation seconds (nccl-tests' "
      "busbw, GB/s = 10<sup>9</sup> bytes/s); a size is its size class's lower bound (the class holds messages up to "
      "twice it). Progress is timed against the newest progress of any rank in the files, the files' own "
      "instant being unknown.</p>";
  o += "<p class=\"job-overview\" data-files=\"" + std::to_string(s.files) + "\" data-ranks=\"" + std::to_string(s.ranks) +
       "\">" + std::to_string(s.files) + (s.files == 1 ? " snapshot, " : " snapshots, ") + std::to_string(s.jobs.size()) +
       (s.jobs.size() == 1 ? " job, " : " jobs, ") + std::to_string(comms) + (comms == 1 ? " communicator, " : " communicators, ") +
       std::to_string(s.ranks) + " ranks" +
       (s.newest_progress_unix_s ? "; newest progress " + utc(*s.newest_progress_unix_s) : std::string()) + ".</p>";
  for (const auto& n : s.notes) o += "<p class=\"muted job-note\">" + esc(n) + "</p>";
  for (std::size_t j = 0; j < s.jobs.size(); ++j) {
    const JobView& v = s.jobs[j];
    const std::string jid = "job-" + std::to_string(j + 1);
    o += "<div class=\"job\" id=\"" + jid + "\" data-job=\"" + esc(v.job) + "\"><h3>Job " + esc(v.job) + "</h3>";
    o += "<div class=\"scroll\"><table class=\"job-comms\"><thead><tr><th>comm</th><th>name</th><th>nranks</th>"
         "<th>ranks seen</th><th>hosts</th><th>completed per rank</th><th>in flight</th>"
         "<th>since last progress</th></tr></thead><tbody>";
    for (std::size_t k = 0; k < v.comms.size(); ++k)
      o += comm_summary_row(s, v.comms[k], jid + "-" + std::to_string(k + 1));
    o += "</tbody></table></div>";
    for (std::size_t k = 0; k < v.comms.size(); ++k) {
      const JobCommView& c = v.comms[k];
      const std::string cid = jid + "-" + std::to_string(k + 1);
      o += "<div class=\"job-comm\" id=\"" + cid + "\" data-comm=\"" + esc(c.comm) + "\"><h4>" + esc(comm_title(c)) +
           (c.nranks ? ", " + std::to_string(*c.nranks) + " ranks" : std::string()) + "</h4>";
      if (!c.missing.empty())
        o += "<p class=\"job-missing\" data-missing=\"" + esc(rank_ranges(c.missing)) + "\"><b>Ranks missing from the "
             "files</b> (" + std::to_string(c.missing.size()) + " of " + std::to_string(*c.nranks) + "): " +
             esc(rank_ranges(c.missing)) + ". Their nodes' snapshots were not given, or their processes published "
             "nothing.</p>";
      for (const auto& n : c.notes) o += "<p class=\"muted job-note\">" + esc(comm_title(c) + ": " + n) + "</p>";
      o += ranks_table(s, c);
      for (const auto& op : c.ops) o += op_block(c, op, cid);
      if (c.network) o += network_table(c);
      o += "</div>";
    }
    o += "</div>";
  }
  o += "</section>";
  return o;
}

}  // namespace fabscope::report

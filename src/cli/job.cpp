#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include "checks/render.hpp"
#include "cli/commands.hpp"
#include "core/args.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/hostlist.hpp"
#include "core/json.hpp"
#include "core/regular_file.hpp"
#include "core/strings.hpp"
#include "core/table.hpp"
#include "exporter/job_records.hpp"
#include "exporter/job_source.hpp"
#include "job/analysis.hpp"
#if FABSCOPE_HAVE_JOB_LOCATE
#include "job/locate.hpp"
#endif
#include "job/ras.hpp"
#include "job/sources.hpp"
#include "probe/run_tool.hpp"
#if FABSCOPE_HAVE_JOB_LOCATE
#include "fabric/model.hpp"
#include "fabric/routes.hpp"
#endif

namespace fabscope::cli {

namespace {

std::atomic<bool> g_job_stop{false};
void on_job_signal(int) { g_job_stop.store(true); }

const char* const kJobSummary =
    "Name what holds a running NCCL job back, while it runs: the straggling rank (the one every\n"
    "other rank waits for), the hung rank (the one that never entered the collective the others\n"
    "wait in), a rank whose process ended, a slow rank-to-rank connection; with host, GPU and pid.\n"
    "Reads the profiler plugin's records (docs/job.md) from this node's segments (--dir), from\n"
    "every node's exporter (--nodes, --hostfile: fabscope exporter --jobs serves /jobs), from a\n"
    "Prometheus server (--prometheus), or a saved file (--from).";

const char* const kJobFooter =
    "Exit codes: 0 nothing to name, 1 a straggler or a slow connection (warn), 2 a hang or an ended\n"
    "process (fail), 3 usage or error (also: no source could be read). `watch` exits with the last\n"
    "refresh's code after --count refreshes, 0 on Ctrl-C.";

void define(core::ArgParser& a, bool watch) {
  a.option("--dir", "DIR", "read this node's segments in DIR (the plugin's FABSCOPE_PROFILER_DIR); the default source",
           "/dev/shm")
      .option("--nodes", "LIST", "read every node's exporter /jobs: a Slurm host list (gpu[01-16]), host or host:port")
      .option("--hostfile", "FILE", "the nodes, one per line (an MPI hostfile: the first word counts)")
      .option("--port", "N", "the exporters' port for --nodes and --hostfile", "9417")
      .option("--prometheus", "URL", "read the fabscope_job_* series of a Prometheus server (http://host:9090)")
      .option("--prometheus-window", "DURATION", "with --prometheus: the rate window (PromQL duration)", "1m")
      .option("--from", "FILE", "read records saved by --save (schema fabscope.job-records)")
      .option("--save", "FILE", "also write the records read to FILE (for --from, a problem report)")
      .option("--job", "ID", "only this job (its job_id: Slurm job id, torchrun run id, FABSCOPE_JOB_ID)")
      .option("--window", "N", "the last N collectives compared per communicator (2-4096)", "64")
      .option("--min-ops", "N", "collectives compared before a straggler can be named (2-4096)", "16")
      .option("--min-wait-share", "FRACTION", "name a straggler when the others' wait is this share of the time", "0.05")
      .option("--min-wait-dominance", "FRACTION",
              "or when this share of all the waiting was for it (time-weighted; few ranks)", "0.8")
      .option("--hang-after", "SECONDS", "an operation in flight this long and no progress: a hang", "10")
      .option("--timeout-ms", "MS", "per node or query", "3000")
      .option("--fabric", "FILE", "locate slow connections in a saved fabric sweep (fabscope fabric --routes --save): "
                                  "the cable or switch they share")
      .option("--rails", "GPU=HCA,...", "with --fabric, for hosts with several HCAs: the HCA each GPU uses "
                                        "(0=mlx5_0,1=mlx5_1,...)")
      .flag("--drain", "drain a straggler's or a hung rank's node in Slurm (scontrol update ... State=DRAIN)")
      .flag("--json", watch ? "one JSON document per refresh, one per line (schema fabscope.job)"
                            : "machine-readable output (schema fabscope.job, docs/formats.md)");
  if (watch)
    a.option("--interval", "SECONDS", "between refreshes (0.2-3600)", "2")
        .option("--count", "N", "stop after N refreshes (0: until interrupted)", "0");
  else
    a.option("--ras", "ADDR", "ask NCCL's own RAS service instead (NCCL 2.24+; NCCL_RAS_ADDR, e.g. localhost:28028)")
        .flag("--ras-verbose", "with --ras: VERBOSE STATUS (more of the ranks that stand out)");
}

std::vector<std::string> node_list(const core::ArgParser& a) {
  std::vector<std::string> nodes;
  if (a.has("nodes")) {
    try {
      for (const auto& part : core::split(a.get("nodes"), ','))
        for (auto& h : core::expand_hostlist(part)) nodes.push_back(std::move(h));
    } catch (const Error& e) {
      throw UsageError(std::string("job: --nodes: ") + e.what());
    }
  }
  if (a.has("hostfile")) {
    const std::string path = a.get("hostfile");
    for (const auto& line : core::split(core::read_regular_file(path, 16u << 20), '\n')) {
      auto t = core::trim(line);
      if (t.empty() || t[0] == '#') continue;
      nodes.push_back(core::split_ws(t).front());
    }
    if (nodes.empty()) throw UsageError("job: --hostfile " + path + ": no host in it");
  }
  return nodes;
}

struct Reader {
  std::string kind;
  std::vector<std::string> nodes;
  int port = 9417;
  std::chrono::milliseconds timeout{3000};
  std::string url, window, from;
  std::unique_ptr<exporter::JobSource> dir;
  std::string dir_path;

  job::Snapshot read() {
    if (kind == "nodes") return job::fetch_nodes(nodes, port, timeout);
    if (kind == "prometheus") return job::fetch_prometheus(url, window, timeout);
    if (kind == "from") return job::parse_snapshot(core::read_regular_file(from, 512u << 20), from);
    return dir->records("dir " + dir_path);
  }
};

Reader make_reader(const core::ArgParser& a) {
  Reader r;
  int sources = (a.has("nodes") || a.has("hostfile")) + a.has("prometheus") + a.has("from") + a.has("dir");
  if (sources > 1) throw UsageError("job: give one source: --dir, --nodes/--hostfile, --prometheus or --from");
  r.timeout = std::chrono::milliseconds(a.get_int("timeout-ms", 10, 600000));
  if (a.has("nodes") || a.has("hostfile")) {
    r.kind = "nodes";
    r.nodes = node_list(a);
    r.port = static_cast<int>(a.get_int("port", 1, 65535));
  } else if (a.has("prometheus")) {
    r.kind = "prometheus";
    r.url = a.get("prometheus");
    try {
      job::parse_http_url(r.url, 9090);  // a bad URL is a usage error now, not at the first refresh
    } catch (const UsageError& e) {
      throw UsageError(std::string("job: --prometheus ") + e.what());
    }
    r.window = a.get("prometheus-window");
    for (char c : r.window)
      if (!std::isalnum(static_cast<unsigned char>(c)))
        throw UsageError("job: --prometheus-window '" + r.window + "': a PromQL duration such as 1m or 30s");
  } else if (a.has("from")) {
    r.kind = "from";
    r.from = a.get("from");
  } else {
    r.kind = "dir";
    r.dir_path = a.get("dir");
    struct stat st {};
    if (::stat(r.dir_path.c_str(), &st) != 0)
      throw Error("--dir " + r.dir_path + ": " + std::strerror(errno) + " (the plugin's FABSCOPE_PROFILER_DIR)");
    if (!S_ISDIR(st.st_mode)) throw Error("--dir " + r.dir_path + ": not a directory");
    exporter::JobSourceOptions o;
    o.dir = r.dir_path;
    o.grace_seconds = 1e12;  // reading only: removing ended segments is the exporter's job
    r.dir = std::make_unique<exporter::JobSource>(o);
  }
  return r;
}

job::Options analysis_options(const core::ArgParser& a) {
  job::Options o;
  o.window = static_cast<std::size_t>(a.get_int("window", 2, 4096));
  o.min_ops = static_cast<std::size_t>(a.get_int("min-ops", 2, 4096));
  o.min_wait_share = a.get_double("min-wait-share", 0, 1);
  o.min_wait_dominance = a.get_double("min-wait-dominance", 0.5, 1);
  o.hang_after_s = a.get_double("hang-after", 0.1, 86400 * 7);
  return o;
}

void keep_job(job::Snapshot& s, const std::string& id) {
  if (id.empty()) return;
  std::erase_if(s.ranks, [&](const job::RankRecord& r) { return r.job_id != id; });
}

std::string clock_text() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%H:%M:%S", std::localtime(&t));
  return buf;
}

std::string render(const job::Analysis& an, const job::Snapshot& snap, std::size_t width) {
  std::string o = "fabscope job: " + std::to_string(snap.ranks.size()) + " rank record(s) in " +
                  std::to_string(an.comms.size()) + " communicator(s), read at " + clock_text() + "\n" +
                  core::wrap("from " + snap.source, width, "");
  if (o.back() != '\n') o += "\n";
  if (an.comms.empty())
    o += "no running job found: no process has loaded the profiler plugin (NCCL_PROFILER_PLUGIN, docs/job.md)\n";
  for (const auto& c : an.comms) {
    o += "\njob " + c.job_id + "  comm " + c.comm + (c.comm_name.empty() ? "" : " (" + c.comm_name + ")") + "  " +
         std::to_string(c.ranks.size()) + "/" + std::to_string(c.nranks) + " ranks";
    if (c.compared) o += ", " + std::to_string(c.compared) + " collectives compared over " + core::format_double("%.1f s", c.window_s);
    o += "\n  " + c.verdict + "\n";
    // The ranks worth a look first: the named one, then those least often inside the longest.
    std::vector<const job::RankStat*> rows;
    for (const auto& r : c.ranks) rows.push_back(&r);
    std::stable_sort(rows.begin(), rows.end(), [&](const job::RankStat* a, const job::RankStat* b) {
      if ((a->rank == c.straggler) != (b->rank == c.straggler)) return a->rank == c.straggler;
      if (a->least != b->least) return a->least > b->least;
      return a->rank < b->rank;
    });
    const std::size_t shown = std::min<std::size_t>(rows.size(), 16);
    if (shown > 0 && shown < rows.size()) std::sort(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(shown), [](auto* a, auto* b) { return a->rank < b->rank; });
    else std::sort(rows.begin(), rows.end(), [](auto* a, auto* b) { return a->rank < b->rank; });
    core::Table t({"rank", "host", "GPU", "pid", "least", "wait each", "median in", "GPU skew", "started", "in flight"});
    for (std::size_t i : {0u, 2u, 3u, 4u, 5u, 6u, 7u, 8u}) t.align_right(i);
    auto dur = [](double ns) {
      if (ns == 0) return std::string("0");
      return std::abs(ns) >= 1e6 ? core::format_double("%.1f ms", ns / 1e6) : core::format_double("%.0f us", ns / 1e3);
    };
    for (std::size_t i = 0; i < shown; i++) {
      const auto& r = *rows[i];
      t.add({std::to_string(r.rank) + (r.rank == c.straggler ? "*" : ""), r.host, r.gpu >= 0 ? std::to_string(r.gpu) : "-",
             std::to_string(r.pid) + (r.alive ? "" : " ended"), c.compared ? std::to_string(r.least) : "-",
             r.least ? dur(r.wait_ns / static_cast<double>(r.least)) : "-",
             c.compared ? dur(r.median_ns) : (r.busy_fraction >= 0 ? core::format_double("%.1f%%", 100 * r.busy_fraction) : "-"),
             r.has_skew ? (r.skew_ns >= 0 ? "+" : "-") + dur(std::abs(r.skew_ns)) : "-", std::to_string(r.started),
             r.in_flight_s >= 0 ? core::format_double("%.1f s", r.in_flight_s) : "-"});
    }
    std::string table = t.render(width);
    for (const auto& line : core::split(table, '\n')) o += "  " + line + "\n";
    if (shown < rows.size()) o += "  (" + std::to_string(rows.size() - shown) + " more ranks: --json has them all)\n";
  }
  if (!an.findings.empty()) o += "\n" + checks::render_findings(an.findings, width, true);
  return o;
}

// The hosts to drain, with the finding id that names each: every rank that ended and the first
// rank behind in a hang (failures first), then every straggler.
void drain(const job::Analysis& an, std::set<std::string>& drained) {
  std::vector<std::pair<std::string, const char*>> todo;
  auto host_of = [](const job::CommView& c, int rank) -> std::string {
    for (const auto& r : c.ranks)
      if (r.rank == rank) return r.host;
    return "";
  };
  for (const auto& c : an.comms) {
    const bool any_alive = std::any_of(c.ranks.begin(), c.ranks.end(), [](const job::RankStat& r) { return r.alive; });
    for (const auto& r : c.ranks)
      if (!r.alive && any_alive) todo.emplace_back(r.host, "job.process_ended");
    if (c.hung && !c.behind.empty()) todo.emplace_back(host_of(c, c.behind.front()), "job.hang");
  }
  for (const auto& c : an.comms)
    if (c.straggler >= 0) todo.emplace_back(host_of(c, c.straggler), "job.straggler");
  for (auto [host, id] : todo) {
    if (auto dot = host.find('.'); dot != std::string::npos) host = host.substr(0, dot);  // Slurm's short name
    if (host.empty() || !drained.insert(host).second) continue;
    std::cerr << "fabscope job: draining " << host << " (" << id << ")\n";
    const auto r = probe::run_tool({"scontrol", "update", "NodeName=" + host, "State=DRAIN",
                                    std::string("Reason=fabscope job: ") + id},
                                   30000);
    if (r.status != probe::ToolResult::Status::Ran || r.exit_code != 0)
      std::cerr << "fabscope job: scontrol update NodeName=" << host << " failed ("
                << (r.status == probe::ToolResult::Status::Ran ? "exit " + std::to_string(r.exit_code) : r.error) << ")\n";
  }
}

std::size_t out_width() { return 100; }

// --ras: NCCL's own view, for jobs without the plugin (docs/job.md, "NCCL's RAS view").
int run_ras(const core::ArgParser& args) {
  if (args.has("nodes") || args.has("hostfile") || args.has("prometheus") || args.has("from") || args.has("dir"))
    throw UsageError("job: --ras is a source of its own: not with --dir, --nodes, --hostfile, --prometheus or --from");
  job::RasQueryOptions o;
  o.address = args.get("ras");
  job::parse_ras_address(o.address);  // a bad address is a usage error
  o.verbose = args.has("ras-verbose");
  if (args.has("timeout-ms")) o.timeout_s = static_cast<double>(args.get_int("timeout-ms", 10, 600000)) / 1e3;
  const std::string text = job::ras_fetch(o);
  const job::RasReport report = job::parse_ras_report(text, o.address);
  auto findings = job::ras_findings(report);
  if (args.has("json")) {
    std::cout << dump_json(job::ras_report_to_json(report)) << "\n";  // with its findings
  } else {
    std::string o2 = "fabscope job: NCCL's RAS at " + o.address + "\n" + job::ras_summary(report) + "\n";
    o2 += findings.empty() ? "no rank missing, no operation count apart, no error\n"
                           : "\n" + checks::render_findings(findings, out_width(), true);
    std::cout << core::printable_lines(o2);
  }
  return exit_code_for(findings);
}

int run(const core::ArgParser& args, bool watch) {
  if (!watch && args.has("ras")) {
    if (args.has("fabric") || args.has("rails")) throw UsageError("job status: --fabric reads the plugin's records, not --ras");
    return run_ras(args);
  }
  Reader reader = make_reader(args);
  const job::Options opt = analysis_options(args);
  const std::string only = args.get("job");
  const bool as_json = args.has("json");
  const double interval = watch ? args.get_double("interval", 0.2, 3600) : 0;
  const long long count = watch ? args.get_int("count", 0, 1LL << 40) : 1;
  std::set<std::string> drained;
#if FABSCOPE_HAVE_JOB_LOCATE
  // The sweep is read once, before the first read of the job: a bad file is said at once.
  std::unique_ptr<fabric::Subnet> fabric;
  std::map<int, std::string> rails;
  if (args.has("rails") && !args.has("fabric")) throw UsageError("job: --rails goes with --fabric");
  if (args.has("fabric")) {
    fabric = std::make_unique<fabric::Subnet>(fabric::load_subnet(args.get("fabric")));
    if (!fabric::has_routes(*fabric))
      throw Error("--fabric " + args.get("fabric") +
                  ": no forwarding tables (save it with `fabscope fabric --routes --save`): connections cannot be "
                  "routed");
    if (args.has("rails")) {
      try {
        rails = job::parse_rails(args.get("rails"));
      } catch (const Error& e) {
        throw UsageError(e.what());
      }
    }
  }
#else
  if (args.has("fabric") || args.has("rails")) throw UsageError("job: --fabric needs a build with the cluster and subnet code");
#endif
  if (watch) {
    std::signal(SIGINT, on_job_signal);
    std::signal(SIGTERM, on_job_signal);
  }
  const bool tty = ::isatty(STDOUT_FILENO) && !as_json;
  int code = 0;
  for (long long n = 0; (count == 0 || n < count) && !g_job_stop.load(); n++) {
    if (n > 0) {
      auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(interval);
      while (std::chrono::steady_clock::now() < until && !g_job_stop.load())
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      if (g_job_stop.load()) break;
    }
    job::Snapshot snap;
    try {
      snap = reader.read();
    } catch (const UsageError&) {
      throw;
    } catch (const Error& e) {
      if (!watch) throw;
      snap.source = reader.kind;
      snap.errors.push_back(e.what());
    }
    keep_job(snap, only);
    if (args.has("save") && !watch) core::write_output(args.get("save"), dump_json(job::snapshot_to_json(snap)) + "\n");
    if (!watch && reader.kind == "nodes" && snap.ranks.empty() && !snap.errors.empty() &&
        snap.errors.size() == reader.nodes.size())
      throw Error("no node could be read: " + snap.errors.front());
    job::Analysis an = job::analyze(snap, opt);
    json located_j;
    std::string located_text;
#if FABSCOPE_HAVE_JOB_LOCATE
    if (fabric) {
      const auto located = job::locate(*fabric, an, rails, opt);
      for (auto& f : job::located_findings(located)) an.findings.push_back(std::move(f));
      located_j = job::located_json(located);
      if (located.empty()) located_text = "fabric (" + args.get("fabric") + "): no slow connection to locate\n";
      for (const auto& lc : located) {
        const auto& l = lc.localization;
        located_text += "fabric (" + args.get("fabric") + "), comm " + lc.comm + ": ";
        if (!l.attempted)
          located_text += "not located: " + l.why_not + "\n";
        else
          located_text += std::to_string(l.slow) + " slow and " + std::to_string(l.fast) + " other connection(s) routed, " +
                          std::to_string(l.unrouted) + " not, " + std::to_string(l.suspects.size()) + " suspect(s)\n";
        for (const auto& note : l.notes) located_text += "  note: " + note + "\n";
      }
    }
#endif
    code = exit_code_for(an.findings);
    if (args.has("drain")) drain(an, drained);
    if (as_json) {
      auto j = job::analysis_to_json(an, snap, opt);
      if (!located_j.is_null()) j["located"] = std::move(located_j);
      j["time_unix"] = static_cast<double>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                               std::chrono::system_clock::now().time_since_epoch())
                                               .count()) /
                       1e3;
      std::cout << (watch ? dump_json(j, -1) : dump_json(j)) << "\n" << std::flush;
    } else {
      if (tty && watch) std::cout << "\033[H\033[2J";
      else if (watch && n > 0) std::cout << "\n";
      std::cout << core::printable_lines(render(an, snap, out_width()) + located_text) << std::flush;
    }
  }
  if (watch && g_job_stop.load()) return 0;
  return code;
}

}  // namespace

int cmd_job(int argc, char** argv) {
  const std::string mode = argc >= 2 ? argv[1] : "";
  if (mode == "status" || mode == "watch") {
    const bool watch = mode == "watch";
    core::ArgParser args(watch ? "job watch" : "job status",
                         std::string(kJobSummary) + (watch ? "\n`watch` reads again every --interval seconds and prints the view afresh."
                                                           : "\n`status` reads once and prints the verdict."));
    define(args, watch);
    if (watch) {
      args.example("fabscope job watch", "this node's ranks, refreshed every 2 s")
          .example("fabscope job watch --nodes gpu[01-16] --job 4242", "every node of Slurm job 4242")
          .example("fabscope job watch --json --count 30 > job.jsonl", "one JSON line per refresh, 30 refreshes");
    } else {
      args.example("fabscope job status", "this node's ranks, once")
          .example("fabscope job status --nodes \"$SLURM_JOB_NODELIST\"", "every node of the job (run inside it)")
          .example("fabscope job status --prometheus http://prom:9090", "from the series Prometheus scraped")
          .example("fabscope job status --hostfile hosts --save job.json", "read and keep what was read")
          .example("fabscope job status --from job.json --json", "a saved read, judged again")
          .example("fabscope job status --ras localhost:28028", "NCCL's own RAS view (no plugin needed)")
          .example("fabscope job status --nodes gpu[01-16] --fabric fabric.json", "also the cable slow connections share");
    }
    args.footer(kJobFooter);
    if (!args.parse(argc - 1, argv + 1, std::cout)) return 0;
    if (!args.positionals().empty()) throw UsageError("job " + mode + ": unexpected argument '" + args.positionals()[0] + "'");
    return run(args, watch);
  }
  core::ArgParser args("job", std::string(kJobSummary) + "\n\nModes: `fabscope job status` (once), `fabscope job watch` (live).");
  args.example("fabscope job status", "this node's ranks: the straggler, a hang")
      .example("fabscope job watch --nodes gpu[01-16]", "every node's exporter, live")
      .example("fabscope job status --help", "the options of a mode")
      .subcommand("status")
      .subcommand("watch")
      .footer(kJobFooter);
  if (!args.parse(argc, argv, std::cout)) return 0;
  throw UsageError(mode.empty() ? "job: which mode? `fabscope job status` or `fabscope job watch` (--help)"
                                : "job: unknown mode '" + mode + "': status or watch");
}

}  // namespace fabscope::cli

#include <csignal>
#include <iostream>

#include "cli/commands.hpp"
#include "core/args.hpp"
#include "core/error.hpp"
#include "core/json.hpp"
#include "core/root.hpp"
#include "exporter/exporter.hpp"
#include "exporter/http.hpp"

namespace fabscope::cli {

namespace {
std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop.store(true); }
}  // namespace

int cmd_exporter(int argc, char** argv) {
  core::ArgParser args("exporter",
                       "Serve RDMA port counters, RoCE congestion counters, node facts and check "
                       "verdicts to Prometheus over HTTP (/metrics, /healthz, /). Every scrape reads "
                       "sysfs afresh; the full probe and checks run on their own interval.");
  args.option("--listen", "ADDR:PORT", "address to serve on: HOST:PORT, :PORT (all IPv4), [V6]:PORT", ":9417")
      .option("--root", "DIR", "read sys/ and proc/ under DIR instead of / (env FABSCOPE_ROOT)")
      .flag("--once", "print one exposition to stdout and exit (no server)")
      .flag("--json", "with --once: print the metrics as JSON (schema fabscope.metrics)")
      .option("--checks-interval", "SECONDS", "run the full probe and checks this often; 0 never", "60")
      .option("--max-connections", "N", "open connections at most; beyond, the oldest idle one is closed", "256")
      .example("fabscope exporter", "serve on every IPv4 interface, port 9417")
      .example("fabscope exporter --listen 127.0.0.1:9417 --checks-interval 300",
               "loopback only, checks every 5 minutes")
      .example("fabscope exporter --once --root /tmp/capture | promtool check metrics",
               "lint one exposition of a captured sysfs tree")
      .footer(
          "Metrics: docs/metrics.md. Alerts: docs/alerts.md. Exit codes: 0 stopped by SIGINT/SIGTERM "
          "or --once printed, 3 usage or error (e.g. the address is in use).");
  if (!args.parse(argc, argv, std::cout)) return 0;
  auto root = core::Root::from_option(args.get("root"));
  exporter::ExporterOptions opts;
  opts.checks_interval_seconds = args.get_double("checks-interval", 0, 7 * 24 * 3600);
  opts.version = FABSCOPE_VERSION;
  exporter::ServerOptions sopts;
  sopts.listen = exporter::parse_listen_address(args.get("listen"));
  sopts.max_connections = static_cast<std::size_t>(args.get_int("max-connections", 1, 65536));
  if (args.has("json") && !args.has("once")) throw UsageError("exporter: --json needs --once");

  exporter::Exporter ex(root, opts);
  if (opts.checks_interval_seconds > 0) ex.refresh_checks();
  if (args.has("once")) {
    auto fams = ex.scrape({});
    if (args.has("json")) std::cout << exporter::families_to_json(fams).dump(2) << "\n";
    else std::cout << exporter::render_text(fams);
    return 0;
  }

  exporter::HttpServer* server_ptr = nullptr;
  exporter::HttpServer server(sopts, [&](const exporter::HttpRequest& req, std::uint64_t batch) {
    return ex.handle(req, batch, server_ptr->stats());
  });
  server_ptr = &server;
  server.bind();
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  std::cerr << "fabscope exporter: serving /metrics on " << args.get("listen") << " (port " << server.port()
            << "), root " << root.dir().string() << "\n";
  ex.start_background_checks();
  server.run(g_stop);
  ex.stop_background_checks();
  return 0;
}

}  // namespace fabscope::cli

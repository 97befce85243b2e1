#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <iostream>

#include "cli/commands.hpp"
#include "core/args.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/hostlist.hpp"
#include "core/strings.hpp"
#include "core/json.hpp"
#include "core/regular_file.hpp"
#include "core/root.hpp"
#include "exporter/exporter.hpp"
#include "exporter/http.hpp"
#include "mesh/mesh_wire.hpp"
#include "fabric/thresholds.hpp"

namespace fabscope::cli {

namespace {
std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop.store(true); }

const char* const kMeshFlags[] = {"mesh-listen", "mesh-peers", "mesh-dns", "mesh-slurm", "mesh-peer-port",
                                  "mesh-token-file", "mesh-self", "mesh-switch", "mesh-sample", "mesh-neighbours",
                                  "mesh-rotation", "mesh-rate", "mesh-timeout-ms", "mesh-peer-limit",
                                  "mesh-transport", "mesh-rdma-device", "mesh-rdma-gid-index"};

mesh::MeshOptions mesh_options(const core::ArgParser& args) {
  mesh::MeshOptions mo;
  auto listen = exporter::parse_listen_address(args.get("mesh-listen"));
  mo.listen_host = listen.host;
  mo.listen_port = listen.port;
  if (args.has("mesh-token-file")) {
    const std::string path = args.get("mesh-token-file");
    mo.token = std::string(core::trim(core::read_regular_file(path, 4096)));
    mesh::check_mesh_token(mo.token, path);
  } else {
    const char* t = std::getenv("FABSCOPE_MESH_TOKEN");
    if (!t || !*t)
      throw UsageError("exporter: --mesh needs the mesh's shared token: --mesh-token-file FILE or FABSCOPE_MESH_TOKEN");
    mo.token = t;
    mesh::check_mesh_token(mo.token, "FABSCOPE_MESH_TOKEN");
  }
  mo.peers_file = args.get("mesh-peers");
  mo.dns_name = args.get("mesh-dns");
  if (args.has("mesh-slurm")) {
    const char* list = std::getenv("SLURM_JOB_NODELIST");
    if (!list || !*list) throw UsageError("exporter: --mesh-slurm: SLURM_JOB_NODELIST is not set");
    try {
      mo.hosts = core::expand_hostlist(list);
    } catch (const Error& e) {
      throw UsageError(std::string("exporter: --mesh-slurm: SLURM_JOB_NODELIST: ") + e.what());
    }
  }
  if (args.has("mesh-peer-port")) mo.peer_port = static_cast<int>(args.get_int("mesh-peer-port", 1, 65535));
  if (args.has("mesh-self")) {
    mo.self_names.push_back(args.get("mesh-self"));
  } else {
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) == 0 && host[0]) {
      std::string h = host;
      mo.self_names.push_back(h);
      if (auto dot = h.find('.'); dot != std::string::npos) mo.self_names.push_back(h.substr(0, dot));
    }
  }
  mo.self_switch = args.get("mesh-switch");
  mo.select.sample = static_cast<std::size_t>(args.get_int("mesh-sample", 1, 64));
  mo.select.max_neighbours = static_cast<std::size_t>(args.get_int("mesh-neighbours", 0, 64));
  mo.rotation_seconds = args.get_double("mesh-rotation", 1, 86400);
  mo.probes_per_second = args.get_double("mesh-rate", 0.1, 1000);
  mo.probe_timeout = std::chrono::milliseconds(args.get_int("mesh-timeout-ms", 1, 10000));
  mo.peer_label_limit = static_cast<std::size_t>(args.get_int("mesh-peer-limit", 1, 10000));
  const std::string transport = args.get("mesh-transport");
  if (transport != "auto" && transport != "tcp")
    throw UsageError("exporter: --mesh-transport '" + transport + "': auto or tcp");
  mo.rdma = transport == "auto";
  if (args.has("mesh-rdma-device")) {
    const std::string d = args.get("mesh-rdma-device");
    const auto colon = d.find(':');
    mo.rdma_device = d.substr(0, colon);
    if (mo.rdma_device.empty()) throw UsageError("exporter: --mesh-rdma-device '" + d + "': DEVICE or DEVICE:PORT");
    if (colon != std::string::npos) {
      const auto port = core::parse_int(d.substr(colon + 1));
      if (!port || *port < 1 || *port > 255)
        throw UsageError("exporter: --mesh-rdma-device '" + d + "': the port is a number from 1 to 255");
      mo.rdma_port = static_cast<int>(*port);
    }
  }
  if (args.has("mesh-rdma-gid-index"))
    mo.rdma_gid_index = static_cast<int>(args.get_int("mesh-rdma-gid-index", 0, 4095));
  return mo;
}
}  // namespace

int cmd_exporter(int argc, char** argv) {
  core::ArgParser args("exporter",
                       "Serve RDMA port counters, RoCE congestion counters, node facts and check "
                       "verdicts to Prometheus over HTTP (/metrics, /healthz, /). Every scrape reads "
                       "sysfs afresh; the full probe and checks run on their own interval. With --fabric, "
                       "also the InfiniBand subnet, collected in the background and served from memory.");
  args.option("--listen", "ADDR:PORT", "address to serve on: HOST:PORT, :PORT (all IPv4), [V6]:PORT", ":9417")
      .option("--root", "DIR", "read sys/ and proc/ under DIR instead of / (env FABSCOPE_ROOT)")
      .flag("--once", "print one exposition to stdout and exit (no server)")
      .flag("--json", "with --once: print the metrics as JSON (schema fabscope.metrics)")
      .option("--checks-interval", "SECONDS", "run the full probe and checks this often; 0 never", "60")
      .option("--max-connections", "N", "open connections at most; beyond, the one longest idle (else the response "
                                        "longest without progress) is closed", "256")
      .flag("--fabric", "also serve the InfiniBand subnet seen from a local port: every port's counters, every "
                        "link, the subnet managers, the fabric.* checks (collected in the background)")
      .option("--fabric-interval", "SECONDS", "with --fabric: read every port's counters this often (1-86400)", "30")
      .option("--fabric-discovery-interval", "SECONDS",
              "with --fabric: discover the topology again this often (1-604800)", "300")
      .option("--fabric-ca", "NAME", "with --fabric: sweep from this InfiniBand device (default: the first with an "
                                     "active port)")
      .option("--fabric-port", "N", "with --fabric: sweep from this port of the device (default: its first active port)")
      .option("--fabric-timeout-ms", "N", "with --fabric: timeout of one MAD in milliseconds (1-60000)", "100")
      .option("--fabric-retries", "N", "with --fabric: retries of one MAD (0-20)", "3")
      .option("--fabric-thresholds", "FILE",
              "with --fabric: error-counter thresholds, ibqueryerrors' format (Counter=value lines)")
      .option("--fabric-xmit-wait-tick-ns", "NS",
              "with --fabric: length of one PortXmitWait tick of your devices; exported so alerts can judge "
              "the time spent waiting (0 unknown)", "0")
      .flag("--mesh", "also probe other nodes and answer their probes (RTT and loss per peer, over RDMA where both "
                      "ends can, else TCP; needs the mesh token: --mesh-token-file or FABSCOPE_MESH_TOKEN)")
      .option("--mesh-listen", "ADDR:PORT", "with --mesh: where the probe responder listens", ":9418")
      .option("--mesh-peers", "FILE", "with --mesh: peers, one HOST[:PORT] [switch=NAME] a line; reread when it "
                                      "changes")
      .option("--mesh-dns", "NAME", "with --mesh: peers are every address NAME resolves to (a Kubernetes headless "
                                    "service); resolved again every rotation")
      .flag("--mesh-slurm", "with --mesh: peers are the nodes of SLURM_JOB_NODELIST")
      .option("--mesh-peer-port", "N", "with --mesh: port of peers listed without one (default: --mesh-listen's)")
      .option("--mesh-token-file", "FILE", "with --mesh: file holding the mesh's shared token (16-256 characters; "
                                           "default env FABSCOPE_MESH_TOKEN)")
      .option("--mesh-self", "NAME", "with --mesh: this node's name in the peer list (default: the host name; its own "
                                     "addresses always count)")
      .option("--mesh-switch", "NAME", "with --mesh: the switch this node is cabled to (default: switch= of its own line)")
      .option("--mesh-sample", "K", "with --mesh: peers probed beyond the own switch, changed every rotation (1-64)", "4")
      .option("--mesh-neighbours", "N", "with --mesh: peers under the own switch probed at once (0-64)", "8")
      .option("--mesh-rotation", "SECONDS", "with --mesh: how long one selection of peers is kept (1-86400)", "60")
      .option("--mesh-rate", "N", "with --mesh: probes per second this node sends, all peers together (0.1-1000)",
              "10")
      .option("--mesh-timeout-ms", "N", "with --mesh: a probe without a reply after this long is lost (1-10000)", "200")
      .option("--mesh-peer-limit", "N", "with --mesh: peers with series of their own; the rest are summed as "
                                        "peer=\"_other\" (1-10000)", "64")
      .option("--mesh-transport", "auto|tcp", "with --mesh: auto probes over RDMA (UD datagrams) where both ends have "
                                              "an endpoint on the same link layer, else TCP; tcp never opens RDMA",
              "auto")
      .option("--mesh-rdma-device", "DEV[:PORT]", "with --mesh: the RDMA device for the probes (default: the one "
                                                  "holding the address of the first connection)")
      .option("--mesh-rdma-gid-index", "N", "with --mesh: the GID index on RoCE (default: the RoCE v2 GID of that "
                                            "address)")
      .flag("--jobs", "also serve the running jobs of this node: what each process that loaded "
                      "libnccl-profiler-fabscope.so publishes (fabscope_job_*; docs/job.md)")
      .option("--jobs-dir", "DIR", "with --jobs: where the plugin writes its segments (its FABSCOPE_PROFILER_DIR)",
              "/dev/shm")
      .option("--jobs-grace", "SECONDS", "with --jobs: an ended process's series stay this long, then its segment "
                                         "is removed (0-86400)", "60")
      .option("--jobs-max-series", "N", "with --jobs: (communicator, op, size) series of the node at most; the rest "
                                        "are counted in fabscope_job_series_dropped (1-1000000)", "4096")
      .example("fabscope exporter", "serve on every IPv4 interface, port 9417")
      .example("fabscope exporter --listen 127.0.0.1:9417 --checks-interval 300",
               "loopback only, checks every 5 minutes")
      .example("fabscope exporter --fabric --fabric-ca mlx5_0",
               "also the whole InfiniBand fabric: counters every 30 s, topology every 5 minutes")
      .example("FABSCOPE_MESH_TOKEN=$(cat /etc/fabscope/mesh.token) fabscope exporter --mesh --mesh-slurm",
               "also probe the job's nodes: 10 probes/s in all, 4 peers per minute beyond the own switch")
      .example("fabscope exporter --jobs", "also the collectives of every job that runs with "
               "NCCL_PROFILER_PLUGIN=fabscope")
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

  std::shared_ptr<exporter::FabricCollector> fabric;
  if (args.has("fabric")) {
    exporter::FabricOptions fo;
    fo.sweep.ca = args.get("fabric-ca");
    if (args.has("fabric-port")) fo.sweep.port = static_cast<int>(args.get_int("fabric-port", 1, 254));
    fo.sweep.timeout_ms = static_cast<int>(args.get_int("fabric-timeout-ms", 1, 60000));
    fo.sweep.retries = static_cast<int>(args.get_int("fabric-retries", 0, 20));
    fo.counters_interval_seconds = args.get_double("fabric-interval", 1, 86400);
    fo.discovery_interval_seconds = args.get_double("fabric-discovery-interval", 1, 7 * 24 * 3600);
    fo.xmit_wait_tick_ns = args.get_double("fabric-xmit-wait-tick-ns", 0, 1e9);
    if (args.has("fabric-thresholds")) fo.thresholds = fabric::load_thresholds(args.get("fabric-thresholds"));
    fabric = std::make_shared<exporter::FabricCollector>(std::move(fo));
  } else {
    for (const char* f : {"fabric-interval", "fabric-discovery-interval", "fabric-ca", "fabric-port",
                          "fabric-timeout-ms", "fabric-retries", "fabric-thresholds", "fabric-xmit-wait-tick-ns"})
      if (args.has(f)) throw UsageError(std::string("exporter: --") + f + " needs --fabric");
  }

  std::shared_ptr<mesh::Mesh> mesh;
  if (args.has("mesh")) {
    if (args.has("once")) throw UsageError("exporter: --mesh measures over time and does not go with --once");
    // Binds the responder's port now: an address in use is an error before anything is served.
    mesh = std::make_shared<mesh::Mesh>(mesh_options(args));
  } else {
    for (const char* f : kMeshFlags)
      if (args.has(f)) throw UsageError(std::string("exporter: --") + f + " needs --mesh");
  }

  std::shared_ptr<exporter::JobSource> jobs;
  if (args.has("jobs")) {
    exporter::JobSourceOptions jo;
    jo.dir = args.get("jobs-dir");
    jo.grace_seconds = args.get_double("jobs-grace", 0, 86400);
    jo.max_aggregates = static_cast<std::size_t>(args.get_int("jobs-max-series", 1, 1000000));
    jobs = std::make_shared<exporter::JobSource>(std::move(jo));
  } else {
    for (const char* f : {"jobs-dir", "jobs-grace", "jobs-max-series"})
      if (args.has(f)) throw UsageError(std::string("exporter: --") + f + " needs --jobs");
  }

  exporter::Exporter ex(root, opts);
  if (mesh) ex.set_mesh(mesh);
  if (jobs) ex.set_jobs(jobs);
  if (opts.checks_interval_seconds > 0) ex.refresh_checks();
  if (fabric) {
    // The first discovery before serving: a scrape then has the fabric from the start (a failure
    // is counted in fabscope_fabric_collection_errors_total and retried in the background).
    fabric->collect();
    ex.set_fabric(fabric);
  }
  if (args.has("once")) {
    auto fams = ex.scrape({});
    if (args.has("json")) std::cout << exporter::families_to_json(fams).dump(2) << "\n";
    else std::cout << render_text(fams);
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
  if (fabric) fabric->start();
  if (mesh) {
    std::cerr << "fabscope exporter: mesh: answering probes on port " << mesh->port() << "\n";
    mesh->start();
  }
  server.run(g_stop);
  if (mesh) mesh->stop();
  if (fabric) fabric->stop();
  ex.stop_background_checks();
  return 0;
}

}  // namespace fabscope::cli

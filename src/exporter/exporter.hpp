#pragma once
// The exporter: reads the RDMA counters afresh on every scrape and renders them with the node
// facts and check verdicts of the last full probe, which runs on its own slower interval (the
// configuration it judges changes rarely, and a full probe walks the PCI tree).
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/json.hpp"
#include "core/root.hpp"
#include "exporter/counter_watch.hpp"
#include "exporter/fabric_collector.hpp"
#include "exporter/families.hpp"
#include "exporter/http.hpp"
#include "exporter/job_source.hpp"
#include "mesh/mesh.hpp"
#include "exporter/periodic.hpp"
#include "exporter/port_reader.hpp"

namespace fabscope::exporter {

struct ExporterOptions {
  double checks_interval_seconds = 60;  // 0: never run the full probe and checks
  // How long the port layout (devices, ports, file names, info labels) is reused; values are
  // read on every scrape regardless. 0: walk sys/class/infiniband on every scrape.
  double layout_max_age_seconds = 30;
  std::string version = "unknown";
};

class Exporter {
 public:
  Exporter(core::Root root, ExporterOptions opts);
  ~Exporter();
  Exporter(const Exporter&) = delete;
  Exporter& operator=(const Exporter&) = delete;

  // Every family of one scrape: reads sys/class/infiniband and the netdev MTUs now. Never throws
  // for what it reads: problems are counted in fabscope_scrape_errors_total.
  std::vector<MetricFamily> scrape(const ServerStats& http);
  // The exposition of scrape(), with the fabric's families as its snapshot rendered them.
  std::string scrape_text(const ServerStats& http);
  // scrape_text in two parts: the node's exposition, then the fabric snapshot's text (null
  // without --fabric), which is shared, not copied.
  struct ScrapeParts {
    std::string node;                              // the node's families, rendered now
    std::shared_ptr<const FabricSnapshot> fabric;  // the fabric's last collection (its text), or null
  };
  ScrapeParts scrape_parts(const ServerStats& http);

  // Full probe and checks, now, on the calling thread.
  void refresh_checks();
  // Runs refresh_checks() every checks_interval_seconds on a background thread.
  void start_background_checks();
  void stop_background_checks();

  // HTTP routes: /metrics, /healthz, /. Requests of one batch share one scrape.
  HttpResponse handle(const HttpRequest& req, std::uint64_t batch, const ServerStats& http);

  std::uint64_t errors(const std::string& reason) const;

  // Fabric mode: every scrape also renders the collector's last collection (fabscope_fabric_*),
  // and its fabric.* findings join fabscope_check_status.
  void set_fabric(std::shared_ptr<FabricCollector> fabric) { fabric_ = std::move(fabric); }
  // Mesh mode: every scrape also renders the mesh's counters (fabscope_mesh_*).
  void set_mesh(std::shared_ptr<mesh::Mesh> mesh) { mesh_ = std::move(mesh); }
  // Job mode: every scrape also reads the profiler segments of the node's running jobs (fabscope_job_*).
  void set_jobs(std::shared_ptr<JobSource> jobs) { jobs_ = std::move(jobs); }

 private:
  void count_notes(const std::vector<probe::Note>& notes);
  // Every family but the fabric's own (fabscope_fabric_*), which the snapshot holds.
  // jobs: include the running jobs' families (the model path; scrapes render them straight to text).
  std::vector<MetricFamily> scrape_families(const ServerStats& http, const FabricSnapshot* fabric, bool jobs = true);

  core::Root root_;
  ExporterOptions opts_;
  PortReader ports_;
  CounterWatch watch_;
  std::map<std::string, std::uint64_t> errors_;
  std::map<std::string, std::uint64_t> read_problems_;  // probe note kind -> count
  std::set<std::string> logged_notes_;  // each distinct note goes to stderr once

  mutable std::mutex facts_mu_;  // guards facts_, checks_, checks_errors_
  NodeFacts facts_;
  std::shared_ptr<const CheckResults> checks_;
  std::uint64_t checks_errors_ = 0;

  std::shared_ptr<FabricCollector> fabric_;
  std::shared_ptr<mesh::Mesh> mesh_;
  std::shared_ptr<JobSource> jobs_;

  std::uint64_t cached_batch_ = 0;
  // The batch's response: the node part (and gzipped, made on the first request that asks), the
  // fabric's snapshot whose text (or gzipped text) follows it.
  std::shared_ptr<const std::string> cached_body_, cached_body_gzip_;
  std::shared_ptr<const FabricSnapshot> cached_fabric_;

  Periodic bg_;  // last member: its thread stops before the rest is destroyed
};

// Families as JSON (schema "fabscope.metrics", version 1), for `fabscope exporter --once --json`.
json families_to_json(const std::vector<MetricFamily>& families);

}  // namespace fabscope::exporter

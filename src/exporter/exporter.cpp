#include "exporter/exporter.hpp"

#include "exporter/gzip.hpp"

#include <chrono>
#include <iostream>

#include "core/clock.hpp"
#include "core/finding_registry.hpp"
#include "probe/probe.hpp"
#include "probe/rdma.hpp"
#include "fabric/judge.hpp"
#if FABSCOPE_EXPORTER_WITH_CHECKS
#include "checks/checks.hpp"
#endif

namespace fabscope::exporter {

namespace {

constexpr std::size_t kMaxLoggedNotes = 256;

const char* const kIndexPage =
    "<!DOCTYPE html>\n<html><head><title>fabscope exporter</title></head><body>\n"
    "<h1>fabscope exporter</h1>\n<p>RDMA port counters, RoCE congestion counters and node health "
    "checks for Prometheus.</p>\n<ul><li><a href=\"/metrics\">/metrics</a> (Prometheus text format "
    "0.0.4)</li>\n<li><a href=\"/healthz\">/healthz</a></li></ul>\n</body></html>\n";

// The ids fabscope_check_status has a series for: those of the node's checks once they ran, of
// the fabric's judge once it swept, each module's table joined in one registry.
const FindingRegistry& exporter_judged_ids(bool node_checks, bool fabric) {
  auto join = [](bool node, bool fab) {
    FindingRegistry r;
#if FABSCOPE_EXPORTER_WITH_CHECKS
    if (node) r.add(checks::registry());
#else
    (void)node;
#endif
    if (fab) r.add(fabric::fabric_checks());
    return r;
  };
  static const FindingRegistry none, node_only = join(true, false), fabric_only = join(false, true),
                               both = join(true, true);
  return node_checks ? (fabric ? both : node_only) : (fabric ? fabric_only : none);
}

}  // namespace

Exporter::Exporter(core::Root root, ExporterOptions opts)
    : root_(std::move(root)),
      opts_(std::move(opts)),
      ports_(root_, std::chrono::milliseconds(static_cast<long long>(opts_.layout_max_age_seconds * 1000))) {}

Exporter::~Exporter() { stop_background_checks(); }

void Exporter::count_notes(const std::vector<probe::Note>& notes) {
  // Counted: what is news (a file that vanished while being read, a value that could not be read
  // and was not already unread). A value that stays unread (a static empty fw_ver) is
  // fabscope_values_unread, not an error again at every scrape or walk.
  const auto& news = ports_.news();
  errors_[kErrorRead] += news.size();
  for (const auto& n : news) ++read_problems_[probe::to_string(n.kind)];
  for (const auto& n : notes) {
    std::string text = n.text();
    if (logged_notes_.size() >= kMaxLoggedNotes || !logged_notes_.insert(text).second) continue;
    std::cerr << "fabscope exporter: " << text << "\n";
  }
}

std::vector<MetricFamily> Exporter::scrape(const ServerStats& http) {
  std::shared_ptr<const FabricSnapshot> fabric;
  if (fabric_) fabric = fabric_->snapshot();
  auto fams = scrape_families(http, fabric.get());
  if (fabric)
    for (auto& f : fabric_families(fabric->view)) fams.push_back(std::move(f));
  return fams;
}

std::string Exporter::scrape_text(const ServerStats& http) {
  auto parts = scrape_parts(http);
  if (parts.fabric && parts.fabric->text) parts.node += *parts.fabric->text;
  return std::move(parts.node);
}

Exporter::ScrapeParts Exporter::scrape_parts(const ServerStats& http) {
  std::shared_ptr<const FabricSnapshot> fabric;
  if (fabric_) fabric = fabric_->snapshot();
  std::string node = render_text(scrape_families(http, fabric.get(), /*jobs=*/false));
  if (jobs_) jobs_->text(node);  // thousands of samples: written straight, no metric model
  return {std::move(node), std::move(fabric)};
}

std::vector<MetricFamily> Exporter::scrape_families(const ServerStats& http, const FabricSnapshot* fabric, bool jobs) {
  auto t0 = std::chrono::steady_clock::now();
  std::vector<probe::Note> notes;
  const auto& devices = ports_.read(notes);
  if (auto back = watch_.observe(devices)) errors_[kErrorCounterBackwards] += back;
  count_notes(notes);

  auto fams = port_families(devices);
  fams.push_back(netdev_mtu_family(ports_.netdev_mtus()));
  std::shared_ptr<const CheckResults> checks;
  {
    std::lock_guard<std::mutex> lock(facts_mu_);
    for (auto& f : node_families(facts_)) fams.push_back(std::move(f));
    checks = checks_;
    errors_[kErrorChecks] = checks_errors_;
  }
  if (fabric && fabric->view.subnet) {
    // One fabscope_check_status family for the node's checks and the fabric's. Before the first
    // complete collection the fabric's ids have no series: nothing was judged, nothing is ok.
    auto merged = checks ? std::make_shared<CheckResults>(*checks) : std::make_shared<CheckResults>();
    merged->ids = exporter_judged_ids(checks != nullptr, true).ids();
    merged->findings.insert(merged->findings.end(), fabric->findings.begin(), fabric->findings.end());
    checks = std::move(merged);
  }
  if (checks)
    for (auto& f : check_families(*checks)) fams.push_back(std::move(f));
  if (mesh_)
    for (auto& f : mesh_->families()) fams.push_back(std::move(f));
  if (jobs_ && jobs)
    for (auto& f : jobs_->families()) fams.push_back(std::move(f));

  SelfStats self;
  self.scrape_errors_total = errors_;
  self.read_problems_total = read_problems_;
  for (const auto& [file, n] : ports_.unread()) ++self.values_unread[probe::to_string(n.kind)];
  self.http_requests_total = http.requests_ok;
  self.http_rejected_total = http.rejected;
  self.http_connections_evicted_total = http.evicted;
  self.http_connections_open = http.open;
  self.version = opts_.version;
  self.scrape_duration_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (auto& f : self_families(self)) fams.push_back(std::move(f));
  return fams;
}


void Exporter::refresh_checks() {
  auto t0 = std::chrono::steady_clock::now();
  try {
    NodeInfo node = probe::collect(root_);
    NodeFacts facts;
    facts.gpus = static_cast<int>(node.gpus.size());
    if (!node.kernel.modules.empty())
      facts.peermem_loaded = node.has_module("nvidia_peermem") || node.has_module("nv_peer_mem");
    for (const auto& g : node.gpus)
      if (!g.nvlinks.empty()) facts.gpu_links.push_back(g);
    facts.gpu_topology = node.gpu_topology;
    auto results = std::make_shared<CheckResults>();
#if FABSCOPE_EXPORTER_WITH_CHECKS
    results->ids = exporter_judged_ids(true, false).ids();
    results->findings = checks::run(node);
#endif
    results->duration_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    results->timestamp_seconds = core::unix_seconds();
    std::lock_guard<std::mutex> lock(facts_mu_);
    facts_ = facts;
#if FABSCOPE_EXPORTER_WITH_CHECKS
    checks_ = std::move(results);
#endif
  } catch (const std::exception& e) {
    std::cerr << "fabscope exporter: full probe or checks failed: " << e.what() << "\n";
    std::lock_guard<std::mutex> lock(facts_mu_);
    ++checks_errors_;
  }
}

void Exporter::start_background_checks() {
  if (opts_.checks_interval_seconds <= 0) return;
  bg_.start(std::chrono::duration<double>(opts_.checks_interval_seconds), [this] { refresh_checks(); });
}

void Exporter::stop_background_checks() { bg_.stop(); }

std::uint64_t Exporter::errors(const std::string& reason) const {
  auto it = errors_.find(reason);
  return it == errors_.end() ? 0 : it->second;
}

HttpResponse Exporter::handle(const HttpRequest& req, std::uint64_t batch, const ServerStats& http) {
  HttpResponse r;
  bool known = req.path == "/metrics" || req.path == "/healthz" || req.path == "/" || req.path == "/jobs";
  if (!known) {
    r.status = 404;
    r.body = std::make_shared<const std::string>("404 Not Found: try /metrics\n");
    return r;
  }
  if (req.method != "GET" && req.method != "HEAD") {
    r.status = 405;
    r.headers.emplace_back("Allow", "GET, HEAD");
    r.body = std::make_shared<const std::string>("405 Method Not Allowed: only GET and HEAD\n");
    return r;
  }
  if (req.path == "/healthz") {
    r.body = std::make_shared<const std::string>("ok\n");
  } else if (req.path == "/jobs") {
    // The running jobs' per-rank records for `fabscope job --nodes` (docs/job.md).
    if (!jobs_) {
      r.status = 404;
      r.body = std::make_shared<const std::string>("404 Not Found: job mode is off (start the exporter with --jobs)\n");
    } else {
      r.content_type = "application/json";
      r.body = std::make_shared<const std::string>(jobs_->records_json());
    }
  } else if (req.path == "/") {
    r.content_type = "text/html; charset=utf-8";
    r.body = std::make_shared<const std::string>(kIndexPage);
  } else {
    // Requests answered in the same event-loop iteration arrived together: one collection
    // serves them all, so a burst of clients costs one sysfs walk, not one each.
    if (!cached_body_ || cached_batch_ != batch) {
      // The fabric's part is the snapshot's own text, sent after the node's without a copy.
      auto parts = scrape_parts(http);
      cached_body_ = std::make_shared<const std::string>(std::move(parts.node));
      cached_body_gzip_.reset();
      cached_fabric_ = std::move(parts.fabric);
      cached_batch_ = batch;
    }
    r.content_type = kTextContentType;
    r.body = cached_body_;
    r.tail = cached_fabric_ ? cached_fabric_->text : nullptr;
    // gzip only with the fabric (node mode stays as it was: no zlib, no compression): the
    // snapshot's gzipped text was made once by the collector; the small node part is gzipped
    // here, once per batch, as the first member of the stream.
    if (req.accepts_gzip && cached_fabric_ && cached_fabric_->text_gzip) {
      if (!cached_body_gzip_)
        if (auto gz = gzip_member(*cached_body_)) cached_body_gzip_ = std::make_shared<const std::string>(std::move(*gz));
      if (cached_body_gzip_) {
        r.body = cached_body_gzip_;
        r.tail = cached_fabric_->text_gzip;
        r.headers.emplace_back("Content-Encoding", "gzip");
      }
    }
    if (cached_fabric_) r.headers.emplace_back("Vary", "Accept-Encoding");
  }
  return r;
}

json families_to_json(const std::vector<MetricFamily>& families) {
  json fams = json::array();
  for (const auto& f : families) {
    if (f.samples.empty()) continue;
    json samples = json::array();
    for (const auto& s : f.samples) {
      json labels = json::object();
      for (const auto& [k, v] : s.labels) labels[k] = v;
      json value = s.is_integer ? json(s.integer) : json(s.value);
      json sample = {{"labels", labels}, {"value", value}};
      if (!s.suffix.empty()) sample["suffix"] = s.suffix;  // a histogram's _bucket, _sum, _count
      samples.push_back(std::move(sample));
    }
    fams.push_back({{"name", f.name}, {"type", to_string(f.type)}, {"help", f.help}, {"samples", samples}});
  }
  return {{"schema", "fabscope.metrics"}, {"schema_version", 1}, {"families", fams}};
}

}  // namespace fabscope::exporter

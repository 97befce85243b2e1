#include "exporter/fabric_collector.hpp"

#include "exporter/gzip.hpp"

#include <malloc.h>

#include <algorithm>
#include <iostream>

#include "core/clock.hpp"
#include "core/strings.hpp"
#include "core/metrics.hpp"
#include "fabric/judge.hpp"

namespace fabscope::exporter {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void render(FabricSnapshot& snap, bool gzip) {
  snap.text = std::make_shared<const std::string>(render_text(fabric_families(snap.view)));
  if (gzip)
    if (auto gz = gzip_member(*snap.text)) snap.text_gzip = std::make_shared<const std::string>(std::move(*gz));
  // The families behind the text (a sample with its labels each: about 75 MB for 188,000
  // samples) were freed in this thread's malloc arena, which keeps them: hand them back, or the
  // exporter stays at its peak between collections.
  malloc_trim(0);
}

}  // namespace

FabricCollector::FabricCollector(FabricOptions opts) : opts_(std::move(opts)) {
  discovery_.interval_seconds = opts_.discovery_interval_seconds;
  counters_.interval_seconds = opts_.counters_interval_seconds;
  auto snap = std::make_shared<FabricSnapshot>();
  snap->view.discovery = discovery_;
  snap->view.counters = counters_;
  snap->view.xmit_wait_tick_ns = opts_.xmit_wait_tick_ns;
  render(*snap, opts_.gzip);
  snapshot_ = std::move(snap);
}

FabricCollector::~FabricCollector() { stop(); }

std::shared_ptr<const FabricSnapshot> FabricCollector::snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return snapshot_;
}

void FabricCollector::publish(fabric::Subnet s, std::chrono::steady_clock::time_point now) {
  auto snap = std::make_shared<FabricSnapshot>();
  fabric::JudgeOptions jo;
  jo.thresholds = opts_.thresholds;
  jo.xmit_wait_tick_ns = opts_.xmit_wait_tick_ns;
  if (previous_) {
    jo.before = *previous_;
    jo.interval_s = std::chrono::duration<double>(now - previous_at_).count();
  }
  snap->findings = fabric::judge(s, jo);
  auto current = std::make_shared<const fabric::Subnet>(std::move(s));
  const auto keys = link_keys(*current);
  for (const auto& k : known_links_)
    if (!std::binary_search(keys.begin(), keys.end(), k)) snap->view.missing_links.push_back(k);
  snap->view.subnet = current;
  snap->view.discovery = discovery_;
  snap->view.counters = counters_;
  snap->view.xmit_wait_tick_ns = opts_.xmit_wait_tick_ns;
  previous_ = current;
  previous_at_ = now;
  render(*snap, opts_.gzip);  // outside the lock: scrapes keep the previous snapshot meanwhile
  std::lock_guard<std::mutex> lock(mu_);
  snapshot_ = std::move(snap);
}

void FabricCollector::failed(CollectionStats& st, const char* kind, const std::exception& e) {
  ++st.errors_total;
  std::string text = core::printable_lines(e.what());
  if (text != last_error_) std::cerr << "fabscope exporter: fabric " << kind << " failed: " << text << "\n";
  last_error_ = text;
  // The last complete collection stays; only the collector's own numbers change. Only this
  // thread replaces the snapshot, so it is copied, changed and rendered outside the lock.
  auto snap = std::make_shared<FabricSnapshot>(*snapshot());
  snap->view.discovery = discovery_;
  snap->view.counters = counters_;
  render(*snap, opts_.gzip);
  std::lock_guard<std::mutex> lock(mu_);
  snapshot_ = std::move(snap);
}

void FabricCollector::discover() {
  const auto t0 = std::chrono::steady_clock::now();
  ++discovery_.runs_total;
  try {
    fabric::SweepOptions o = opts_.sweep;
    o.counters = true;
    fabric::Subnet s = opts_.sweep_fn(o);
    discovery_.last_duration_seconds = seconds_since(t0);
    discovery_.last_success_timestamp_seconds = core::unix_seconds();
    discovery_.mads_sent_total += s.mads_sent;
    discovery_.mad_timeouts_total += s.mads_timed_out;
    // A discovery reads the counters too: it is also a counters collection.
    counters_.last_success_timestamp_seconds = discovery_.last_success_timestamp_seconds;
    for (const auto& k : link_keys(s)) known_links_.insert(k);
    base_ = std::make_shared<const fabric::Subnet>(s);
    discovered_at_ = t0;
    last_error_.clear();
    publish(std::move(s), t0);
  } catch (const std::exception& e) {
    discovery_.last_duration_seconds = seconds_since(t0);
    failed(discovery_, "discovery", e);
  }
}

void FabricCollector::read_counters() {
  if (!base_) return discover();
  const auto t0 = std::chrono::steady_clock::now();
  ++counters_.runs_total;
  try {
    // A fresh copy of the discovered subnet each time: read_counters appends its notes, and they
    // must describe this collection, not pile up.
    fabric::Subnet s = *base_;
    opts_.counters_fn(s, opts_.sweep);
    counters_.last_duration_seconds = seconds_since(t0);
    counters_.last_success_timestamp_seconds = core::unix_seconds();
    counters_.mads_sent_total += s.mads_sent;
    counters_.mad_timeouts_total += s.mads_timed_out;
    last_error_.clear();
    publish(std::move(s), t0);
  } catch (const std::exception& e) {
    counters_.last_duration_seconds = seconds_since(t0);
    failed(counters_, "counters", e);
  }
}

void FabricCollector::collect() {
  const bool due = !base_ || seconds_since(discovered_at_) >= opts_.discovery_interval_seconds;
  if (due) discover();
  else read_counters();
}

void FabricCollector::start() {
  bg_.start(std::chrono::duration<double>(std::max(0.01, opts_.counters_interval_seconds)), [this] { collect(); });
}

void FabricCollector::stop() { bg_.stop(); }

}  // namespace fabscope::exporter

#pragma once
// The exporter's fabric mode: a background thread sweeps the InfiniBand subnet with the subnet
// library, the topology every discovery interval and every port's counters every (shorter)
// counters interval, and keeps the last complete collection in memory. A scrape renders that
// copy (fabric_families) and never waits on the fabric. Counters are only read, never cleared.
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/finding.hpp"
#include "exporter/fabric_families.hpp"
#include "exporter/periodic.hpp"
#include "fabric/sweep.hpp"
#include "fabric/thresholds.hpp"

namespace fabscope::exporter {

struct FabricOptions {
  fabric::SweepOptions sweep;
  bool gzip = true;                     // also keep each snapshot's text gzipped (gzip.hpp)
  double counters_interval_seconds = 30;
  double discovery_interval_seconds = 300;
  fabric::Thresholds thresholds;        // for the fabric.* error-counter findings
  double xmit_wait_tick_ns = 0;         // 0: unknown
  // The I/O, replaceable in tests: a full sweep, and a counters-only re-read of a subnet.
  std::function<fabric::Subnet(const fabric::SweepOptions&)> sweep_fn = fabric::sweep;
  std::function<void(fabric::Subnet&, const fabric::SweepOptions&)> counters_fn = fabric::read_counters;
};

// What a scrape renders: the view for fabric_families and the findings of judge() on it (error
// counters judged by their growth since the previous collection).
struct FabricSnapshot {
  FabricView view;
  std::vector<Finding> findings;
  // fabric_families(view) as exposition text, rendered once when the snapshot is made: a large
  // fabric has hundreds of thousands of series (2,144 nodes: about 240 ms to build and render),
  // which every scrape would otherwise pay. Exporter::scrape_text appends it.
  std::shared_ptr<const std::string> text;
  // The same text as one gzip member, made with it (null: gzip off or zlib not loadable): a
  // scrape that accepts gzip sends it after its own gzipped node part, compressing nothing large.
  std::shared_ptr<const std::string> text_gzip;
};

class FabricCollector {
 public:
  explicit FabricCollector(FabricOptions opts);
  ~FabricCollector();
  FabricCollector(const FabricCollector&) = delete;
  FabricCollector& operator=(const FabricCollector&) = delete;

  // One collection now, on the calling thread: a discovery when none succeeded yet or one is
  // due, else a counters re-read. Never throws: a failure is counted and logged (once per
  // distinct message) and the previous collection stays served.
  void collect();
  void discover();
  void read_counters();

  // collect() on a background thread every counters interval (the first after one interval: call
  // collect() before for a collection at once); a discovery when its own interval has passed.
  void start();
  void stop();

  std::shared_ptr<const FabricSnapshot> snapshot() const;

 private:
  void publish(fabric::Subnet s, std::chrono::steady_clock::time_point now);
  void failed(CollectionStats& st, const char* kind, const std::exception& e);

  FabricOptions opts_;
  // Owned by the collecting thread (collect() is not called concurrently).
  std::shared_ptr<const fabric::Subnet> base_;           // the last discovery
  std::shared_ptr<const fabric::Subnet> previous_;       // the last collection, for growth
  std::chrono::steady_clock::time_point previous_at_{};
  std::chrono::steady_clock::time_point discovered_at_{};
  std::set<LinkKey> known_links_;
  CollectionStats discovery_, counters_;
  std::string last_error_;

  mutable std::mutex mu_;  // guards snapshot_
  std::shared_ptr<const FabricSnapshot> snapshot_;

  Periodic bg_;  // last member: its thread stops before the rest is destroyed
};

}  // namespace fabscope::exporter

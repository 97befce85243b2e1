#pragma once
// Where `fabscope job` reads a running job from:
//   the node exporters' /jobs (fabscope exporter --jobs), every node at once, each bounded in time
//   and bytes; a node that does not answer is an error of the snapshot, not of the command;
//   a Prometheus server's query API (the series of fabscope_job_*: no per-operation times, so the
//   straggler is judged from each rank's share of the window inside the communicator's operations).
// The parsers (prometheus_snapshot) are pure; the fetches are plain HTTP/1.0 GETs.
#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "job/records.hpp"

namespace fabscope::job {

struct HttpTarget {
  std::string host;
  int port = 80;
  std::string path_prefix;  // "" or "/prom" (a server behind a path)
};
// "http://host:port/prefix", "host:port", "[v6]:port"; https is refused with a clear error.
HttpTarget parse_http_url(const std::string& url, int default_port);

// GET path from the target; the body of a 200 answer. Throws fabscope::Error "host:port: <why>"
// (refused, timed out after N bytes, over max_bytes, HTTP status and the answer's first line).
std::string http_get(const HttpTarget& t, const std::string& path, std::chrono::milliseconds timeout,
                     std::size_t max_bytes);

// Every node's /jobs, in parallel (at most 64 at once); nodes are "host" or "host:port".
Snapshot fetch_nodes(const std::vector<std::string>& nodes, int default_port, std::chrono::milliseconds timeout);

// The queries fetch_prometheus asks (name -> PromQL), for a window like "1m".
std::map<std::string, std::string> prometheus_queries(const std::string& window);
// The answers of those queries (name -> the body of /api/v1/query) into records, pure.
Snapshot prometheus_snapshot(const std::map<std::string, std::string>& answers, std::string_view source);
Snapshot fetch_prometheus(const std::string& url, const std::string& window, std::chrono::milliseconds timeout);

}  // namespace fabscope::job
